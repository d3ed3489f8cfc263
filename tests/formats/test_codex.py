"""Codex CLI rollouts: real rollouts (legacy shape to 0.114) read into trajectories whose counts match
an independent count of the items; sub-agents, resumed sessions, compaction and aborted turns."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from replay_tui.cli import main
from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import detect, read_trajectories, reader_for

DATA = Path(__file__).parent.parent / "data" / "formats" / "codex"
SAMPLES = sorted(DATA.glob("*.jsonl"))
READER = reader_for("codex")
PARENT = DATA / "ship__rollout-2026-03-12T16-36-47-019ce3fb-1087-7980-8f92-8d0171aaea6a.jsonl"
CHILDREN = sorted(DATA.glob("ship__rollout-2026-03-12T17-09-38-*.jsonl"))
RESUMED = DATA / "cpolar-connect__rollout-2025-09-16T14-12-31-613a9a68-8816-40b2-a2d4-041ade599da6.jsonl"
LEGACY = DATA / "ocodex__rollout-2025-08-23T16-52-59-84b6da18-7357-4ad0-89d6-64f637ddde0d.jsonl"
CUSTOM = DATA / "MoonMind__rollout-2025-11-13T18-21-11-019a802a-aab1-7c31-9831-d2510c7a74a2.jsonl"


def read(path: Path) -> tuple[list[Trajectory], list[LoadProblem]]:
    items = list(READER.read(path))
    return [i for i in items if isinstance(i, Trajectory)], [i for i in items if isinstance(i, LoadProblem)]


def spec_count(path: Path) -> dict[str, int]:
    """Counted from codex-rs's RolloutLine/ResponseItem, item by item (not with the reader's code)."""
    counts = dict(sessions=1, messages=0, calls=0, results=0, subagents=0)
    first_meta = True
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        item = record.get("payload") if "payload" in record else record
        if record.get("type") == "session_meta":
            source = item.get("source")
            if first_meta and isinstance(source, dict) and "subagent" in source:
                counts["subagents"] = 1
            first_meta = False
            continue
        if "payload" in record and record.get("type") != "response_item":
            continue
        kind = item.get("type")
        counts["messages"] += kind == "message"
        counts["calls"] += kind in ("function_call", "custom_tool_call", "local_shell_call")
        counts["results"] += kind in ("function_call_output", "custom_tool_call_output")
    return counts


def reader_count(trajectories: list[Trajectory]) -> dict[str, int]:
    return dict(
        sessions=len(trajectories),
        messages=sum(t.metadata["message_records"] for t in trajectories),
        calls=sum(t.recorded_calls for t in trajectories),
        results=sum(1 for t in trajectories for s in t.steps if s.tool_result is not None),
        subagents=sum(1 for t in trajectories if t.parent is not None),
    )


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_rollout_reads_with_the_counts_of_the_items(path: Path) -> None:
    trajectories, problems = read(path)
    assert problems == []
    assert reader_count(trajectories) == spec_count(path)
    assert detect(path)[0].name == "codex"


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_a_stub_replay_matches_every_recorded_call(path: Path, capsys) -> None:
    code = main(["replay", "--demos", str(path), "--mode", "stub"])
    out = capsys.readouterr().out
    calls = spec_count(path)["calls"]
    assert code == 0
    assert re.search(rf"\b{calls} steps, {calls} matched \(100\.0%\)", " ".join(out.split())), out[-400:]


def test_sub_agents_name_their_parent_and_the_parent_names_them() -> None:
    (parent,), _ = read(PARENT)
    spawns = {s.subagent: s for s in parent.steps if s.subagent}
    assert len(spawns) == 3 and all(s.action and s.action.name == "spawn_agent" for s in spawns.values())
    nicknames = []
    for path in CHILDREN:
        (child,), _ = read(path)
        assert child.parent is not None and child.parent.episode == parent.id and child.parent.source == "thread_spawn"
        assert spawns[child.id].action.id == child.parent.call_id  # type: ignore[union-attr]
        assert child.task == spawns[child.id].action.arguments["message"]  # type: ignore[union-attr]
        # the forked parent's session_meta follows the child's own
        assert [s["id"] for s in child.metadata["sessions"]] == [child.id, parent.id]
        nicknames.append(child.metadata["nickname"])
    assert sorted(nicknames) == ["Kepler", "Locke", "Wegener"]


def test_an_unanswered_call_compaction_and_aborted_turns_are_kept() -> None:
    (parent,), _ = read(PARENT)
    unanswered = [s for s in parent.steps if s.action is not None and s.tool_result is None]
    assert len(unanswered) == 1
    compactions = [s for s in parent.steps if s.extra.get("event") == "compaction"]
    assert len(compactions) == 2
    after = next(s for s in parent.steps[compactions[0].index :] if s.action is not None)
    before = next(s for s in reversed(parent.steps[: compactions[0].index]) if s.action is not None)
    # after a compaction the prompt is the replacement history, not the whole conversation before
    assert len(after.messages) < len(before.messages)
    aborted = [s for s in parent.steps if s.extra.get("event") == "turn_aborted"]
    assert [s.content for s in aborted] == ["turn aborted: interrupted"] * 2
    assert parent.outcome.scores["aborted_turns"] == 2


def test_a_resumed_session_is_one_episode_listing_both_sessions() -> None:
    (trajectory,), _ = read(RESUMED)
    assert trajectory.id == "613a9a68-8816-40b2-a2d4-041ade599da6"
    assert [s["id"] for s in trajectory.metadata["sessions"]] == [
        "613a9a68-8816-40b2-a2d4-041ade599da6",
        "9cd28a74-da7e-4458-a91a-fffec2be9d7a",
    ]
    assert trajectory.outcome.status == "aborted" and trajectory.metadata["cli_version"] == "0.36.0"


def test_the_legacy_shape_reasoning_and_the_prompt_before_each_call() -> None:
    (trajectory,), _ = read(LEGACY)
    assert trajectory.id == "84b6da18-7357-4ad0-89d6-64f637ddde0d" and trajectory.metadata["legacy"] is True
    assert trajectory.task == "what model are you?"
    calls = [s for s in trajectory.steps if s.action is not None]
    assert calls[0].action is not None and calls[0].action.name == "shell"
    assert calls[0].action.arguments["command"][:2] == ["bash", "-lc"]
    assert any(s.thinking for s in calls)
    first, second = calls[0], calls[1]
    assert all(a is b for a, b in zip(first.messages, second.messages, strict=False))  # one shared history
    assert [m.tool_call_id for m in second.messages if m.role == "tool"][-1] == first.action.id


def test_custom_tool_calls_keep_their_freeform_input() -> None:
    (trajectory,), _ = read(CUSTOM)
    patch = next(s for s in trajectory.steps if s.action is not None and s.action.name == "apply_patch")
    assert patch.action is not None and patch.action.arguments["input"].startswith("*** Begin Patch")
    assert patch.extra["custom_tool"] is True and "Success." in (patch.tool_result or "")


def test_a_sessions_folder_reads_one_episode_per_rollout(tmp_path: Path, capsys) -> None:
    day = tmp_path / "sessions" / "2026" / "03" / "12"
    day.mkdir(parents=True)
    for path in [PARENT, *CHILDREN]:
        shutil.copy(path, day / path.name.split("__", 1)[1])
    folder = tmp_path / "sessions"
    reader, found = detect(folder)
    assert reader.name == "codex" and found.score > 0
    trajectories = [t for t in read_trajectories(folder) if isinstance(t, Trajectory)]
    assert len(trajectories) == 4 and sum(bool(t.parent is not None) for t in trajectories) == 3
    code = main(["replay", "--demos", str(folder), "--mode", "stub"])  # the YYYY/MM/DD tree, walked
    calls = sum(spec_count(path)["calls"] for path in [PARENT, *CHILDREN])
    assert code == 0
    assert f"4 episodes, {calls} steps, {calls} matched (100.0%)" in " ".join(capsys.readouterr().out.split())


def test_bad_and_cut_lines_are_problems_and_the_rest_reads(tmp_path: Path) -> None:
    lines = LEGACY.read_text(encoding="utf-8").splitlines()
    damaged = tmp_path / "rollout.jsonl"
    damaged.write_text("\n".join([*lines[:5], "[1, 2", *lines[5:]]) + '\n{"type": "message", "ro', encoding="utf-8")
    (trajectory,), problems = read(damaged)
    assert trajectory.recorded_calls == 8
    assert [(p.field, p.severity) for p in problems] == [("line 6", "error"), (f"line {len(lines) + 2}", "warning")]


def test_a_rollout_whose_first_line_outgrows_the_head_is_still_detected(tmp_path: Path) -> None:
    lines = CUSTOM.read_text(encoding="utf-8").splitlines()
    meta = json.loads(lines[0])
    meta["payload"]["instructions"] = "x" * 100_000  # long AGENTS.md instructions
    lines[0] = json.dumps(meta, separators=(",", ":"))
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert detect(rollout)[0].name == "codex"


# -- outcome (issue 30): each value checked against the file ------------------------------------


def _events(path: Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [line["payload"] for line in lines if line.get("type") == "event_msg"]


@pytest.mark.parametrize("path", CHILDREN, ids=[p.name[-12:] for p in CHILDREN])
def test_a_completed_turn_s_last_agent_message_is_the_answer(path: Path) -> None:
    done = [event for event in _events(path) if event["type"] == "task_complete"][-1]
    outcome = read(path)[0][0].outcome
    assert outcome.status == "completed" and outcome.answer == done["last_agent_message"] and outcome.error is None


def test_an_error_event_is_the_outcome_s_error(tmp_path: Path) -> None:
    error = {"type": "error", "message": "stream disconnected before completion: Transport error"}
    line = {"timestamp": "2026-03-12T18:00:00.000Z", "type": "event_msg", "payload": error}
    path = tmp_path / CHILDREN[0].name
    path.write_text(CHILDREN[0].read_text() + json.dumps(line) + "\n")
    outcome = read(path)[0][0].outcome
    assert outcome.kind == "errored" and outcome.reason == error["message"]
