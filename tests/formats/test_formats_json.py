"""``replay-tui formats --json``: every bundled sample's counts against an independent count of the
file written from its format's spec (the walks of each reader's own test module, never the reader)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
    + [("otel-genai", DATA / "otel_genai" / name, test_otel_genai.spec_counts) for name in test_otel_genai.RUNS]
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
