"""Claude Code, Codex, OTel GenAI and SWE-agent/mini-swe-agent logs indexed (summaries without steps, one
episode loaded when opened): the index equals the whole read on every sample, and an episode loaded alone
equals the whole read's."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import EpisodeLoadError, LoadProblem
from replay_tui.formats import EpisodeSummary, IndexingReader, reader_for
from replay_tui.sources import open_sources

DATA = Path(__file__).parent.parent / "data" / "formats"
CLAUDE = sorted((DATA / "claude_code").glob("*.jsonl"))
CODEX = sorted((DATA / "codex").glob("*.jsonl"))
OTEL = sorted(p for p in (DATA / "otel_genai").iterdir() if p.name != "PROVENANCE.md")
SWE_AGENT = sorted(p for d in DATA.glob("swe_agent*") for p in d.iterdir() if p.name != "PROVENANCE.md")


def summary_of(item: EpisodeSummary) -> tuple[Any, ...]:
    return (item.id, item.task, item.steps, item.turns, item.reward, item.success, item.outcome)


def steps_of(trajectory: Trajectory) -> list[tuple[Any, ...]]:
    return [
        (s.action_text, s.tool_result, s.content, s.thinking, s.observation, len(s.messages), dict(s.extra))
        for s in trajectory.steps
    ]


def check_index_equals_read(fmt: str, path: Path) -> int:
    reader = reader_for(fmt)
    assert isinstance(reader, IndexingReader)
    whole = list(reader.read(path))
    episodes = [item for item in whole if isinstance(item, Trajectory)]
    indexed = list(reader.index(path))
    summaries = [item for item in indexed if isinstance(item, EpisodeSummary)]
    assert [summary_of(s) for s in summaries] == [summary_of(EpisodeSummary.of(t, 0)) for t in episodes]
    assert [p for p in indexed if isinstance(p, LoadProblem)] == [p for p in whole if isinstance(p, LoadProblem)]
    for summary, episode in zip(summaries, episodes, strict=True):
        loaded = reader.load(path, summary)
        assert isinstance(loaded, Trajectory), loaded
        assert loaded.id == episode.id and loaded.task == episode.task
        assert loaded.outcome == episode.outcome and loaded.metadata == episode.metadata
        assert steps_of(loaded) == steps_of(episode)
    return len(summaries)


@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.name)
def test_claude_code_index_equals_the_whole_read(path: Path) -> None:
    assert check_index_equals_read("claude-code", path) >= 1


def test_a_claude_code_project_folder_indexes_one_session_file_at_a_time(tmp_path: Path) -> None:
    folder = tmp_path / "-home-user-project"
    folder.mkdir()
    for sample in CLAUDE:
        shutil.copy(sample, folder / sample.name)
    (folder / "broken.jsonl").write_bytes(b'{"type": "user", "sessionId": "x"\n')
    assert check_index_equals_read("claude-code", folder) > len(CLAUDE)


def test_the_app_opens_a_claude_code_folder_by_its_index(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    for sample in CLAUDE:
        shutil.copy(sample, folder / sample.name)
    demos = open_sources([folder])
    whole = [t for t in reader_for("claude-code").read(folder) if isinstance(t, Trajectory)]
    refs = list(demos)
    assert [ref.episode_id for ref in refs] == [t.id for t in whole]
    last = demos.trajectory(refs[-1].session_id)
    assert len(last.steps) == len(whole[-1].steps)
    # nothing was held: an episode is read from its session file when opened
    first_file = sorted(folder.glob("*.jsonl"))[0]
    first_file.write_bytes(b"")
    with pytest.raises(EpisodeLoadError, match=first_file.name):
        demos.trajectory(refs[0].session_id)
    assert len(demos.trajectory(refs[-1].session_id).steps) == len(whole[-1].steps)


def test_formats_json_counts_a_claude_code_log_from_bare_steps_as_from_the_whole_read(tmp_path: Path) -> None:
    """``formats --json`` counts a Claude Code log through the reader's counting read (no prompt or
    usage built: an index's cost): every count, problem and episode entry equals the whole read's."""
    from replay_tui.formats.census import census

    reader = reader_for("claude-code")
    folder = tmp_path / "project"
    folder.mkdir()
    for sample in CLAUDE:
        shutil.copy(sample, folder / sample.name)
    (folder / "broken.jsonl").write_bytes(b'{"type": "user", "sessionId": "x"\n{"type": "assistant", "mess')
    for path in [*CLAUDE, folder]:
        assert census(path, reader) == census(path, reader, counting=False), path.name
    assert census(folder, reader)["subagents"] > 0


@pytest.mark.parametrize("path", CODEX, ids=lambda p: p.name)
def test_codex_index_equals_the_whole_read(path: Path) -> None:
    assert check_index_equals_read("codex", path) == 1


def test_a_codex_sessions_folder_indexes_one_rollout_at_a_time(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "03" / "12"
    day.mkdir(parents=True)
    for sample in CODEX:
        shutil.copy(sample, day / sample.name.split("__", 1)[1])
    (day / "rollout-2026-03-12T00-00-00-broken.jsonl").write_bytes(b'{"type": "session_meta", "payload"\n')
    folder = tmp_path / "sessions"
    assert check_index_equals_read("codex", folder) == len(CODEX)
    demos = open_sources([folder])
    refs = list(demos)
    assert len(refs) == len(CODEX)
    # nothing was held: a rollout is read from its file when opened
    first = sorted(day.glob("rollout-*.jsonl"))[0]
    first.write_bytes(b"")
    with pytest.raises(EpisodeLoadError, match=first.name):
        demos.trajectory(refs[0].session_id)


@pytest.mark.parametrize("path", OTEL, ids=lambda p: p.name)
def test_otel_index_equals_the_whole_read(path: Path) -> None:
    assert check_index_equals_read("otel-genai", path) >= 1


def test_otel_json_lines_of_many_traces_index_trace_by_trace(tmp_path: Path) -> None:
    """Traces whose spans are spread over several lines, interleaved, with a bad line between."""
    source = DATA / "otel_genai" / "openai-v2__agent_loop.otlp.jsonl"
    lines = source.read_bytes().splitlines()
    trace = re.search(rb'"traceId":"([0-9a-f]{32})"', lines[0])
    assert trace is not None
    other = [line.replace(trace.group(1), b"f" * 32) for line in lines]
    mixed = [line for pair in zip(lines, other, strict=True) for line in pair]
    path = tmp_path / "mixed.otlp.jsonl"
    path.write_bytes(b"\n".join([*mixed[:5], b"{not json", b"", *mixed[5:]]) + b"\n")
    assert check_index_equals_read("otel-genai", path) >= 2
    openllmetry = DATA / "otel_genai" / "openllmetry__agent_loop.otlp.jsonl"
    both = tmp_path / "both.otlp.jsonl"
    both.write_bytes(source.read_bytes() + b"\n[1, 2]\n" + openllmetry.read_bytes())
    assert check_index_equals_read("otel-genai", both) >= 2


def test_otel_lines_that_only_a_full_parse_finds_bad_are_named_as_read_names_them(tmp_path: Path) -> None:
    """The index's first pass reads an export line for its trace ids alone, skipping the rest: a
    line whose skipped part is no JSON (bytes that are no UTF-8 in an attribute) is still the same
    problem, named with its line in line order, and the other traces are read."""
    lines = (DATA / "otel_genai" / "openai-v2__agent_loop.otlp.jsonl").read_bytes().splitlines()
    assert b'"attributes":[' in lines[1]
    bad_utf8 = lines[1].replace(b'"attributes":[', b'"attributes":[{"key":"x","value":{"stringValue":"\xff"}},', 1)
    path = tmp_path / "bad.otlp.jsonl"
    path.write_bytes(b"\n".join([lines[0], bad_utf8, b"{not json", *lines[2:], b"[1,]"]) + b"\n")
    problems = [item for item in reader_for("otel-genai").index(path) if isinstance(item, LoadProblem)]
    named = [p.message.split(": not valid JSON")[0] for p in problems]
    assert named == ["line 2", "line 3", f"line {len(lines) + 2}"]
    check_index_equals_read("otel-genai", path)


def test_an_otlp_line_cut_inside_a_string_is_named_as_read_names_it(tmp_path: Path) -> None:
    """A writer stopped mid-line (then restarted on a new line), in a file with ``\n`` or ``\r\n``
    line ends: the index parses a line without its line end, as the whole read does, so the problem
    is the same (it said "unexpected control character in string" for the line end it kept)."""
    lines = (DATA / "otel_genai" / "openai-v2__agent_loop.otlp.jsonl").read_bytes().splitlines()
    cut = lines[3][: lines[3].index(b'"traceId":"') + 20]
    for ending in (b"\n", b"\r\n"):
        path = tmp_path / "cut.otlp.jsonl"
        path.write_bytes(ending.join([*lines[:3], cut, *lines[3:]]) + ending)
        problems = [item for item in reader_for("otel-genai").index(path) if isinstance(item, LoadProblem)]
        assert [p.message for p in problems] == [
            f"line 4: not valid JSON: unexpected end of data: line 1 column {len(cut) + 1} (char {len(cut)})"
        ]
        check_index_equals_read("otel-genai", path)


def test_a_session_file_with_sub_agents_is_read_once_for_all_its_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its sub-agents are episodes of the same file: opening each (or the app's validation of
    every one) must not read the whole file again per episode; a changed file is read again."""
    from replay_tui.formats import claude_code

    sample = tmp_path / "session.jsonl"
    shutil.copy(DATA / "claude_code" / "attio-mcp-server__logs_chat__cc1.0.70.jsonl", sample)
    reads: list[Path] = []
    real = claude_code._read_file

    def counted(path: Path, counting: bool = False) -> Any:
        reads.append(path)
        return real(path, counting)

    monkeypatch.setattr(claude_code, "_read_file", counted)
    demos = open_sources([sample])
    refs = list(demos)
    assert len(refs) == 8
    reads.clear()
    assert demos.validate_all() == []
    first = demos.trajectory(refs[0].session_id)
    assert reads == [sample]
    with sample.open("ab") as handle:  # the file grows: what was read is no longer the file
        handle.write(b"\n")
    again = open_sources([sample])
    reads.clear()
    assert len(again.trajectory(next(iter(again)).session_id).steps) == len(first.steps)
    assert reads == [sample]


@pytest.mark.parametrize("path", SWE_AGENT, ids=lambda p: p.name)
def test_swe_agent_index_equals_the_whole_read(path: Path) -> None:
    assert check_index_equals_read("swe-agent", path) == 1
    reader = reader_for("swe-agent")
    assert isinstance(reader, IndexingReader)
    whole = [t for t in reader.read(path) if isinstance(t, Trajectory)]
    for summary in (s for s in reader.index(path) if isinstance(s, EpisodeSummary)):
        assert reader.load(path, summary) == whole[0]  # the episode itself, every field


def test_a_swe_agent_index_counts_without_building_steps(tmp_path: Path) -> None:
    """A long mini-swe-agent run (the shape mini's ``save`` writes) is counted from bare steps: no
    prompt, observation or telemetry is built for the list, and the episode loaded equals the read."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {
            "role": "user",
            "content": "<pr_description>\nConsider the following PR description:\nfix it\n</pr_description>",
        },
    ]
    for n in range(300):
        call = {"id": f"call_{n}", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
        messages.append(
            {"role": "assistant", "content": f"THOUGHT: step {n}", "tool_calls": [call], "extra": {"cost": 0.01}}
        )
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": f"<returncode>0</returncode> {n}"})
    messages.append(
        {"role": "assistant", "content": "two\n```mswea_bash_command\nls\n```\n```mswea_bash_command\npwd\n```"}
    )
    path = tmp_path / "long.traj.json"
    path.write_bytes(
        orjson.dumps(
            {
                "info": {"mini_version": "1.17.0", "exit_status": "Submitted", "submission": "diff"},
                "messages": messages,
                "trajectory_format": "mini-swe-agent-1.1",
            }
        )
    )
    assert check_index_equals_read("swe-agent", path) == 1
    summary = next(s for s in reader_for("swe-agent").index(path) if isinstance(s, EpisodeSummary))
    assert (summary.steps, summary.turns) == (300, 301)
    demos = open_sources([path])
    ref = next(iter(demos))
    assert isinstance(ref.raw, EpisodeSummary)  # indexed, nothing held
    assert not demos.files[0]._held
    episode = demos.trajectory(ref.session_id)
    assert len(episode.steps) == 301


def test_a_swe_agent_file_rewritten_after_its_index_is_read_again(tmp_path: Path) -> None:
    sample = DATA / "swe_agent" / "mini_v1_two_bash_blocks.traj.json"
    path = tmp_path / sample.name
    shutil.copy(sample, path)
    reader = reader_for("swe-agent")
    assert isinstance(reader, IndexingReader)
    summary = next(s for s in reader.index(path) if isinstance(s, EpisodeSummary))
    other = DATA / "swe_agent" / "synthetic_mini_reasoning.traj.json"
    path.write_bytes(other.read_bytes() + b"\n")  # another run in its place (not the document parsed)
    loaded = reader.load(path, summary)
    assert isinstance(loaded, LoadProblem) and "changed since it was indexed" in loaded.message
    shutil.copy(sample, path)
    summary = next(s for s in reader.index(path) if isinstance(s, EpisodeSummary))
    path.write_bytes(b"")
    loaded = reader.load(path, summary)
    assert isinstance(loaded, LoadProblem) and "empty file" in loaded.message


BAD_SWE_AGENT = {
    "broken.traj": b'{"trajectory": [{"action": "ls"',
    "number.traj": b"42",
    "empty.traj": b"",
    "other.json": b'{"hello": "world"}',
    "nan.traj": b'{"trajectory": [{"action": "ls", "observation": "", "thought": "", "response": ""}],'
    b' "info": {"model_stats": {"instance_cost": NaN}}}',
    "bad-fields.traj.json": orjson.dumps(
        {
            "info": {"exit_status": "Submitted"},
            "messages": [
                {"role": "user", "content": "task"},
                {"role": "assistant", "content": "no block here"},
                {"content": "no role"},
                5,
                {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "bash", "arguments": "{x"}}]},
                {"role": "assistant", "content": "", "tool_calls": "nope"},
                {"role": "assistant", "content": "```bash\nls\n```\n```bash\npwd\n```"},
            ],
            "trajectory_format": "mini-swe-agent-1.1",
        }
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_SWE_AGENT))
def test_a_malformed_swe_agent_file_indexes_to_the_read_s_problems(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(BAD_SWE_AGENT[name])
    episodes = check_index_equals_read("swe-agent", path)
    assert episodes == (1 if name in ("nan.traj", "bad-fields.traj.json") else 0)
