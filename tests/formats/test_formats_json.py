"""``replay-tui formats --json``: every bundled sample's counts against an independent count of the
file written from its format's spec (the walks of each reader's own test module, never the reader)."""

from __future__ import annotations

import gzip
import json
import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import yaml

try:  # inspect_ai writes zstd members; Python 3.14's zipfile reads them itself
    from backports.zstd import zipfile as zstd_zipfile
except ImportError:  # pragma: no cover
    import zipfile as zstd_zipfile  # type: ignore[no-redef]

from replay_tui.cli import main
from tests.formats import test_atif, test_claude_code, test_codex, test_openhands, test_otel_genai

DATA = Path(__file__).parent.parent / "data" / "formats"
KEYS = ("episodes", "calls", "results", "subagents")


def formats_json(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, list[dict[str, Any]]]:
    code = main(["formats", "--json", *map(str, paths)])
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def samples(folder: str) -> list[Path]:
    return sorted(p for p in (DATA / folder).iterdir() if p.name != "PROVENANCE.md")


def claude_code(path: Path) -> dict[str, int]:
    found = test_claude_code.spec_count(path)
    return {**found, "episodes": found["sessions"] + found["subagents"]}


def codex(path: Path) -> dict[str, int]:
    found = test_codex.spec_count(path)
    return {**found, "episodes": found["sessions"]}


def openhands(path: Path) -> dict[str, int]:
    return {**test_openhands.spec_counts(path), "subagents": 0}


CASES = (
    [("atif", p, test_atif.spec_counts) for p in samples("atif")]
    + [("claude-code", p, claude_code) for p in samples("claude_code")]
    + [("codex", p, codex) for p in samples("codex")]
    + [("openhands", p, openhands) for p in samples("openhands")]
    + [
        ("otel-genai", DATA / "otel_genai" / name, test_otel_genai.spec_counts)
        for name in [*test_otel_genai.RUNS, "SCHEMA_EXAMPLE__opentelemetry-proto__examples_trace.json"]
    ]
)


@pytest.mark.parametrize(("fmt", "path", "spec"), CASES, ids=[f"{c[0]}:{c[1].name}" for c in CASES])
def test_counts_equal_an_independent_count_of_the_file(fmt: str, path: Path, spec: Any, capsys) -> None:
    code, (found,) = formats_json(capsys, path)
    assert code == 0 and found["format"] == fmt and found["problems"] == []
    expected = spec(path)
    assert {key: found[key] for key in KEYS} == {key: expected[key] for key in KEYS}
    episodes = found["episode_list"]
    assert len(episodes) == found["episodes"]
    assert sum(e["calls"] for e in episodes) == found["calls"] and sum(e["steps"] for e in episodes) == found["steps"]
    assert sum(e["subagent_of"] is not None for e in episodes) == found["subagents"]


TAU2 = sorted(p for p in (DATA / "tau2").glob("20*_grok-*.json"))


def tau2(path: Path) -> dict[str, Any]:
    """tau2-bench's Results model read by hand: a simulation is an episode, the assistant's tool calls
    are its calls, ``reward_info.reward`` its score."""
    runs = json.loads(path.read_text(encoding="utf-8"))["simulations"]
    return {
        "episodes": len(runs),
        "calls": sum(
            len(m.get("tool_calls") or []) for run in runs for m in run["messages"] if m["role"] == "assistant"
        ),
        "scores": [run["reward_info"]["reward"] for run in runs],
    }


@pytest.mark.parametrize("path", TAU2, ids=lambda p: p.name)
def test_each_episode_carries_the_outcome_the_log_records(path: Path, capsys) -> None:
    code, (found,) = formats_json(capsys, path)
    expected = tau2(path)
    assert code == 0 and found["episodes"] == expected["episodes"] and found["calls"] == expected["calls"]
    assert [e["outcome"]["score"] for e in found["episode_list"]] == expected["scores"]
    for episode in found["episode_list"]:
        outcome = episode["outcome"]
        assert set(outcome) >= {"success", "score", "status", "reason"}
        assert outcome["success"] == (outcome["score"] >= 1.0)


def test_an_unrecognised_file_is_format_null_with_its_problem_and_exit_2(capsys, tmp_path: Path) -> None:
    strange = tmp_path / "strange.json"
    strange.write_text('{"hello": "world"}', encoding="utf-8")
    session = DATA / "claude_code" / "big3__logs_chat__cc2.0.49.jsonl"
    code, (unknown, known) = formats_json(capsys, strange, session)
    assert code == 2
    assert unknown["file"] == str(strange) and unknown["format"] is None and unknown["episodes"] == 0
    (problem,) = unknown["problems"]
    assert problem["file"] == "strange.json" and "no reader recognises this file" in problem["message"]
    assert known["format"] == "claude-code" and known["episodes"] == 1


def test_a_folder_of_logs_is_one_object_of_its_files_counts(capsys) -> None:
    folder = DATA / "codex"
    code, (found,) = formats_json(capsys, folder)
    expected = [codex(path) for path in samples("codex")]
    assert code == 0 and found["file"] == str(folder) and found["format"] == "codex" and found["problems"] == []
    assert {key: found[key] for key in KEYS} == {key: sum(e[key] for e in expected) for key in KEYS}
    assert len(found["episode_list"]) == found["episodes"]


def test_a_mixed_folder_names_its_unreadable_file_and_counts_the_rest(capsys, tmp_path: Path) -> None:
    atif = DATA / "atif" / "terminus_2__hello-world.trajectory__ATIF-v1.3.json"
    session = DATA / "claude_code" / "big3__logs_chat__cc2.0.49.jsonl"
    for path in (atif, session):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "strange.json").write_text('{"hello": "world"}', encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a log", encoding="utf-8")
    code, (found,) = formats_json(capsys, tmp_path)
    expected = [test_atif.spec_counts(atif), claude_code(session)]
    assert code == 0 and found["format"] == "mixed"
    assert {key: found[key] for key in KEYS} == {key: sum(e[key] for e in expected) for key in KEYS}
    (problem,) = found["problems"]
    assert problem["file"] == "strange.json" and "no reader recognises this file" in problem["message"]


def test_a_folder_with_no_log_file_is_format_null_and_exit_2(capsys, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a log", encoding="utf-8")
    code, (found,) = formats_json(capsys, tmp_path)
    assert code == 2 and found["format"] is None and found["episodes"] == 0
    (problem,) = found["problems"]
    assert "holds no log files" in problem["message"]


def test_a_bad_record_is_a_problem_naming_file_episode_and_field_and_the_rest_counts(capsys, tmp_path: Path) -> None:
    doc = json.loads((DATA / "atif" / "terminus_2__hello-world-timeout.trajectory.json").read_text())
    doc["steps"][1]["tool_calls"][0]["function_name"] = 7
    bad = tmp_path / "trajectory.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    good = DATA / "atif" / "terminus_2__hello-world.trajectory__ATIF-v1.3.json"
    code, (broken, fine) = formats_json(capsys, bad, good)
    assert code == 2 and broken["episodes"] == 0 and fine["episodes"] == 1
    (problem,) = broken["problems"]
    assert problem["file"] == "trajectory.json" and problem["episode"] == doc["session_id"]
    assert problem["field"] == "steps[1].tool_calls[0].function_name" and problem["severity"] == "error"


BASH_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n")


def tau_bench(path: Path) -> dict[str, int]:
    """tau-bench v1 results (a result or a list of them, the conversation in ``traj``) and bare message
    lists: a result is an episode, an assistant message's ``tool_calls`` its calls."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict) and "traj" in data:
        runs = [data["traj"]]
    elif isinstance(data, list) and data and isinstance(data[0], dict) and "traj" in data[0]:
        runs = [run["traj"] for run in data]
    else:
        runs = [data if isinstance(data, list) else data["messages"]]
    return {"episodes": len(runs), "calls": sum(assistant_calls(run) for run in runs)}


def assistant_calls(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")


def inspect_ai(path: Path) -> dict[str, int]:
    """inspect_ai's EvalLog: a sample (one per epoch) is an episode, the assistant messages' tool calls
    its calls; an ``.eval`` is a zip of ``samples/*.json`` members (zstd ones read by backports.zstd)."""
    if path.suffix == ".json":
        samples = json.loads(path.read_text(encoding="utf-8")).get("samples") or []
    else:
        with zstd_zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.startswith("samples/")]
            samples = [json.loads(archive.read(name)) for name in names]
    return {"episodes": len(samples), "calls": sum(assistant_calls(s.get("messages", [])) for s in samples)}


def swe_agent(path: Path) -> dict[str, int]:
    """SWE-agent ``.traj``: one action per ``trajectory`` entry (else the history's tool calls);
    mini-swe-agent: an assistant turn is a call when it holds tool calls or exactly one bash block
    (mini runs a turn only then)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict) and "trajectory" in data:
        calls = sum(1 for entry in data["trajectory"] if entry.get("action"))
    elif isinstance(data, dict) and "history" in data:
        calls = assistant_calls(data["history"])
    else:
        messages = data if isinstance(data, list) else data["messages"]
        calls = 0
        for message in messages:
            if message.get("role") != "assistant":
                continue
            text = message.get("content") if isinstance(message.get("content"), str) else ""
            calls += len(message["tool_calls"]) if message.get("tool_calls") else len(BASH_BLOCK.findall(text)) == 1
    return {"episodes": 1, "calls": calls}


def webshop_human(path: Path) -> dict[str, int]:
    """WebShop's page log: one session, an action per change of page (a page served twice is a reload)."""
    pages = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {
        "episodes": 1,
        "calls": sum(1 for a, b in pairwise(pages) if (a["page"], a["url"]) != (b["page"], b["url"])),
    }


OLDER = (
    [
        ("openai-chat", DATA / "openai_chat" / name, tau_bench)
        for name in (
            "docent__samples__tb_airline.json",
            "tau_bench_gpt-4o-airline_excerpt.json",
            "tau_bench_crashed_run.json",
            "synthetic_message_list.json",
        )
    ]
    + [("inspect-ai", p, inspect_ai) for p in samples("inspect_ai") if p.suffix in (".json", ".eval")]
    + [("swe-agent", p, swe_agent) for p in samples("swe_agent")]
    + [("webshop-human", p, webshop_human) for p in samples("webshop_human")]
)


@pytest.mark.parametrize(("fmt", "path", "spec"), OLDER, ids=[f"{c[0]}:{c[1].name}" for c in OLDER])
def test_older_formats_count_their_episodes_and_calls(fmt: str, path: Path, spec: Any, capsys) -> None:
    code, (found,) = formats_json(capsys, path)
    expected = spec(path)
    assert found["format"] == fmt and (found["episodes"], found["calls"]) == (expected["episodes"], expected["calls"])
    assert code == (0 if expected["episodes"] else 2)


BROWSERGYM = samples("browsergym")


@pytest.mark.parametrize("path", BROWSERGYM, ids=lambda p: p.name)
def test_browsergym_counts_the_steps_its_summary_records(path: Path, capsys) -> None:
    """AgentLab's ``summary_info.json`` says how many actions the agent took (``n_steps``); each is a
    step file (``step_<n>.pkl.gz``, the last one the final state) unless the files were pruned."""
    code = main(["formats", "--json", "--allow-pickle", str(path)])
    (found,) = json.loads(capsys.readouterr().out)
    summary = json.loads((path / "summary_info.json").read_text(encoding="utf-8"))
    kept = sorted(path.glob("step_*.pkl.gz"))
    assert code == 0 and found["format"] == "browsergym" and found["episodes"] == 1
    assert found["calls"] == (summary["n_steps"] if kept else 0) and found["steps"] == len(kept)
    assert found["episode_list"][0]["outcome"]["score"] == summary["cum_reward"]


CASSETTES = sorted((DATA / "openai_chat").glob("*.yaml"))


def cassette(path: Path) -> dict[str, int]:
    """A VCR cassette: each chat-completions response is an episode, its calls the tool calls of its
    message (a streamed response's chunks: one call per ``index`` of the deltas)."""
    episodes = calls = 0
    for interaction in yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]:
        if not interaction["request"]["uri"].endswith("/chat/completions"):
            continue
        body = interaction["response"]["body"]["string"]
        raw = body if isinstance(body, bytes) else body.encode()
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()
        episodes += 1
        if text.lstrip().startswith("{"):
            calls += sum(len(c["message"].get("tool_calls") or []) for c in json.loads(text)["choices"])
            continue
        seen = set()
        for line in text.splitlines():
            if line.startswith("data: {"):
                for choice in json.loads(line[6:])["choices"]:
                    seen |= {(choice["index"], d["index"]) for d in choice["delta"].get("tool_calls") or []}
        calls += len(seen)
    return {"episodes": episodes, "calls": calls}


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.name)
def test_cassettes_count_their_responses_and_calls(path: Path, capsys) -> None:
    code, (found,) = formats_json(capsys, path)
    expected = cassette(path)
    assert code == 0 and found["format"] == "openai-chat"
    assert (found["episodes"], found["calls"]) == (expected["episodes"], expected["calls"])
