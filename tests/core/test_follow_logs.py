"""``--follow`` on logs of other formats (sources.FollowedLog): JSON Lines logs of every format grow
in the EpisodeSet as lines are appended, episodes keep their session ids, a truncated file stops with
one problem, logs of formats that are not JSON Lines are read once with a warning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.formats import read_trajectories
from replay_tui.sources import FollowedLog, open_sources
from tests.conftest import DATA

FORMATS = DATA / "formats"
REREAD = [
    FORMATS / "otel_genai" / "openai-v2__agent_loop.otlp.jsonl",
    FORMATS / "openhands" / "sdk-v1__goal-fixture__events.jsonl",
    FORMATS / "openai_chat" / "synthetic_shapes.jsonl",
    FORMATS / "webshop_human" / "20220427_1_13.jsonl",
]
CODEX = FORMATS / "codex" / "MoonMind__rollout-2025-11-13T18-21-11-019a802a-aab1-7c31-9831-d2510c7a74a2.jsonl"
CLAUDE = FORMATS / "claude_code" / "attio-mcp-server__logs_chat__cc1.0.70.jsonl"


def whole(path: Path) -> dict[str, Trajectory]:
    return {t.id: t for t in read_trajectories(path) if isinstance(t, Trajectory)}


def shown(demos) -> dict[str, Trajectory]:
    return {demos.trajectory(ref.session_id).id: demos.trajectory(ref.session_id) for ref in demos}


@pytest.mark.parametrize("sample", [*REREAD, CODEX, CLAUDE], ids=lambda p: p.parent.name)
def test_a_growing_json_lines_log_ends_as_the_whole_file(sample: Path, tmp_path: Path) -> None:
    lines = sample.read_bytes().splitlines(keepends=True)
    live = tmp_path / sample.name
    live.write_bytes(b"".join(lines[: max(1, len(lines) // 2)]))
    demos = open_sources([live], follow=True)
    assert demos.following and isinstance(demos.files[0], FollowedLog)
    ids = {ref.episode_id: ref.session_id for ref in demos}
    first_steps = {ref.session_id: ref.decision_steps + ref.sub_events for ref in demos}
    assert demos.read_new() == ([], []) and demos.changed == []  # nothing new: nothing read again
    with live.open("ab") as handle:
        handle.write(b"".join(lines[max(1, len(lines) // 2) :]))
    added, _ = demos.read_new()
    assert shown(demos) == whole(sample.parent / sample.name)
    for ref in demos:  # episodes known before keep their session ids; the new ones come after
        if ref.episode_id in ids:
            assert ref.session_id == ids[ref.episode_id]
        else:
            assert ref in added and ref.session_id > max(ids.values())
    grown = [
        sid for sid, steps in first_steps.items() if demos.ref(sid).decision_steps + demos.ref(sid).sub_events > steps
    ]
    assert (grown or added) and set(grown) <= set(demos.changed)  # a line per episode: only added


def test_a_truncated_log_is_one_problem_and_its_episodes_stay(tmp_path: Path) -> None:
    live = tmp_path / CODEX.name
    shutil.copyfile(CODEX, live)
    demos = open_sources([live], follow=True)
    steps = demos.ref(0).decision_steps
    live.write_bytes(CODEX.read_bytes()[:100])
    added, problems = demos.read_new()
    assert added == [] and len(problems) == 1 and "truncated" in problems[0].one_line()
    assert not demos.following and demos.ref(0).decision_steps == steps and demos.trajectory(0).steps


def test_a_log_that_is_not_json_lines_is_read_once_with_a_warning(tmp_path: Path) -> None:
    atif = next((FORMATS / "atif").glob("*hello-world.trajectory__ATIF-v1.3.json"))
    demos = open_sources([atif], follow=True)
    assert not demos.following and len(demos) == 1
    assert [p.severity for p in demos.problems] == ["warning"] and "read once" in demos.problems[0].message


def test_a_line_cut_at_open_is_a_problem_until_its_end_is_written(tmp_path: Path) -> None:
    """Opened while its last line is being written, a log another reader reads whole says so; when
    the line is whole the file is read again and the problem goes from the EpisodeSet."""
    lines = REREAD[1].read_bytes().splitlines(keepends=True)
    live = tmp_path / REREAD[1].name
    live.write_bytes(b"".join(lines[:4]) + lines[4][:30])
    demos = open_sources([live], follow=True)
    assert [p.message.split(":")[0] for p in demos.problems] == ["line 5"]
    with live.open("ab") as handle:
        handle.write(lines[4][30:])
    added, problems = demos.read_new()
    assert added == [] and problems == [] and demos.problems == [] and demos.changed == [0]
    assert list(shown(demos).values()) == list(whole(live).values())


def test_a_rollout_new_in_a_followed_codex_sessions_folder_is_a_new_episode(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    day = sessions / "2025" / "11" / "13"
    day.mkdir(parents=True)
    first, second = sorted((FORMATS / "codex").glob("ocodex__rollout-*.jsonl"))[:2]
    shutil.copyfile(first, day / first.name.split("__", 1)[1])
    demos = open_sources([sessions], follow=True)
    assert len(demos) == 1 and demos.following
    assert demos.read_new() == ([], []) and demos.changed == []
    later = sessions / "2025" / "11" / "14"
    later.mkdir()
    shutil.copyfile(second, later / second.name.split("__", 1)[1])
    added, problems = demos.read_new()
    assert problems == [] and [ref.session_id for ref in added] == [1]
    assert demos.trajectory(1) == whole(second)[added[0].episode_id]


def test_a_reader_that_fails_on_a_grown_log_is_a_problem_not_a_crash(tmp_path: Path, monkeypatch) -> None:
    from replay_tui.formats import codex

    lines = CODEX.read_bytes().splitlines(keepends=True)
    live = tmp_path / CODEX.name
    live.write_bytes(b"".join(lines[:10]))
    demos = open_sources([live], follow=True)

    def broken(self):
        raise ValueError("an unforeseen shape")

    monkeypatch.setattr(codex._Rollout, "trajectory", broken)
    with live.open("ab") as handle:
        handle.write(b"".join(lines[10:]))
    added, problems = demos.read_new()
    assert added == [] and "codex reader failed: an unforeseen shape" in problems[0].one_line()
    assert not demos.following and demos.trajectory(0).steps  # what was read stays
