"""OpenHands V0 and V1 logs: counts against a walk written from the event models, detection, damage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import detect, reader_for

DATA = Path(__file__).parent.parent / "data" / "formats" / "openhands"
SAMPLES = sorted(p for p in DATA.iterdir() if p.name != "PROVENANCE.md")
V0_NOT_CALLS = {"system", "message", "recall", "change_agent_state", "null", "condensation"}


def load(path: Path) -> tuple[list[Trajectory], list[LoadProblem]]:
    items = list(reader_for("openhands").read(path))
    return [i for i in items if isinstance(i, Trajectory)], [i for i in items if isinstance(i, LoadProblem)]


def v0_counts(events: list[dict[str, Any]], counts: dict[str, int]) -> None:
    """V0 (openhands/events/serialization): a call is an agent action other than the prompts; the
    actions of one model_response are one LLM message; an observation whose tool_call_metadata or
    cause names a call is its result; state changes are no message."""
    calls: set[Any] = set()
    responses: set[Any] = set()
    flat_pending = 0
    for event in events:
        action = event.get("action")
        if action is not None:
            if action in ("system", "message"):
                counts["messages"] += 1
            elif action not in V0_NOT_CALLS and event.get("source", "agent") == "agent":
                counts["calls"] += 1
                calls.add(event.get("id"))
                flat_pending += "id" not in event
                meta = event.get("tool_call_metadata") or {}
                response = (meta.get("model_response") or {}).get("id")
                if response is None or response not in responses:
                    counts["messages"] += 1
                responses.add(response)
            continue
        if event.get("observation") in ("agent_state_changed", "null", "user_rejected", None):
            continue
        counts["messages"] += 1
        if event.get("tool_call_metadata") or event.get("cause") in calls:
            counts["results"] += 1
        elif "id" not in event and flat_pending:
            flat_pending -= 1
            counts["results"] += 1


def v1_counts(events: list[dict[str, Any]], counts: dict[str, int]) -> None:
    """V1 (openhands-sdk event models): every MessageEvent and system prompt is a message, the
    ActionEvents of one llm_response_id one message, every observation-like event with a
    tool_call_id a result; a SystemPromptUpdateEvent replaces the system prompt (no new message)."""
    previous = None
    for event in events:
        kind = event.get("kind")
        if kind == "MessageEvent" or (kind == "SystemPromptEvent" and "system_prompt" in event):
            counts["messages"] += 1
        elif kind == "ActionEvent":
            counts["calls"] += 1
            if event.get("llm_response_id") is None or event.get("llm_response_id") != previous:
                counts["messages"] += 1
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            counts["messages"] += 1
            counts["results"] += event.get("tool_call_id") is not None
        previous = event.get("llm_response_id") if kind == "ActionEvent" else None


def spec_counts(path: Path) -> dict[str, int]:
    counts = {"episodes": 0, "messages": 0, "calls": 0, "results": 0}
    if path.is_dir():
        files = sorted((path / "events").glob("event-*.json"))
        counts["episodes"] = 1
        v1_counts([json.loads(f.read_text()) for f in files], counts)
    elif path.suffix == ".jsonl":
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        if "history" in records[0]:
            for record in records:
                counts["episodes"] += 1
                v0_counts(record["history"], counts)
        else:
            counts["episodes"] = 1
            v1_counts(records, counts)
    else:
        counts["episodes"] = 1
        v0_counts(json.loads(path.read_text()), counts)
    return counts


def reader_counts(trajectories: list[Trajectory]) -> dict[str, int]:
    return {
        "episodes": len(trajectories),
        "messages": sum(t.metadata["messages"] for t in trajectories),
        "calls": sum(len(s.extra.get("tool_calls", [])) or s.action is not None for t in trajectories for s in t.steps),
        "results": sum(t.metadata["results"] for t in trajectories),
    }


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_counts_equal_an_independent_walk_of_the_event_models(path: Path) -> None:
    trajectories, problems = load(path)
    assert problems == []
    assert reader_counts(trajectories) == spec_counts(path)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_is_detected_as_openhands(path: Path) -> None:
    assert detect(path)[0].name == "openhands"


def test_v1_conversation_prompt_calls_results_and_outcome() -> None:
    (trajectory,), _ = load(DATA / "sdk-v1__conv_cd945624_terminal-action")
    first, finish, reply = trajectory.steps
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.action is not None and first.action.name == "terminal"
    assert first.action.arguments["command"] == "pwd > tool_output.txt"
    assert finish.messages[-1].role == "tool" and finish.messages[-1].tool_call_id == first.action.id
    assert finish.action is not None and finish.action.name == "finish" and finish.tool_result
    assert reply.action is None and reply.content.startswith("I executed the `pwd` command")
    assert trajectory.outcome.status == "finished" and trajectory.metadata["model"] == "openai/gpt-4o-mini"
    assert trajectory.task.startswith("Use the terminal tool to run `pwd`")


def test_v0_arguments_come_from_the_models_own_tool_call() -> None:
    (trajectory,), _ = load(DATA / "harbor-rfc__openhands_trajectory.json")
    run = trajectory.steps[0]
    assert run.action is not None and run.action.name == "execute_bash"
    assert run.action.arguments["security_risk"] == "MEDIUM" and run.action.arguments["timeout"] == 120
    assert run.tool_result and run.tool_result.startswith("Created /app/hello.txt")


def test_eval_output_lines_keep_instance_ids_and_errors() -> None:
    trajectories, _ = load(DATA / "multi_swe_bench__examples__output.jsonl")
    assert [t.id for t in trajectories] == ["ponylang__ponyc-4595", "ponylang__ponyc-4593", "ponylang__ponyc-4588"]
    assert trajectories[2].outcome.status == "error" and "maximum iteration" in trajectories[2].outcome.scores["error"]
    assert "git_patch" in trajectories[0].outcome.scores["test_result"]


def test_a_broken_event_file_is_a_named_problem_and_the_rest_loads(tmp_path: Path) -> None:
    copy = tmp_path / "conv"
    shutil.copytree(DATA / "sdk-v1__conv_cd945624_terminal-action", copy)
    victim = sorted((copy / "events").glob("event-00006-*.json"))[0]
    victim.write_text('{"kind": "MessageEv')
    trajectories, problems = load(copy)
    assert len(trajectories) == 1 and len(problems) == 1
    assert problems[0].file == f"conv/events/{victim.name}"


def test_a_truncated_jsonl_line_is_a_problem_naming_its_line(tmp_path: Path) -> None:
    lines = (DATA / "sdk-v1__goal-fixture__events.jsonl").read_text().splitlines()
    target = tmp_path / "events.jsonl"
    target.write_text("\n".join([*lines[:-1], lines[-1][:40]]))
    trajectories, problems = load(target)
    assert len(trajectories) == 1 and problems[0].message.startswith(f"line {len(lines)}: not valid JSON")


def test_a_v1_conversation_folder_replays_whole_from_the_command_line(capsys) -> None:
    """A folder a reader takes whole is one log, not a folder of logs (its base_state.json is no episode)."""
    from replay_tui.cli import main

    code = main(["replay", "--demos", str(DATA / "sdk-v1__conv_cd945624_terminal-action"), "--mode", "stub", "-q"])
    out = capsys.readouterr().out
    assert code == 0 and "1 episodes, 2 steps, 2 matched (100.0%)" in out


@pytest.mark.parametrize("cut", [0.0, 0.2, 0.5, 0.9])
def test_a_damaged_conversation_folder_never_raises(tmp_path: Path, cut: float) -> None:
    for folder in sorted(p for p in DATA.iterdir() if p.is_dir()):
        copy = tmp_path / folder.name
        shutil.copytree(folder, copy)
        for path in [copy / "base_state.json", *sorted((copy / "events").iterdir())]:
            data = path.read_bytes()
            path.write_bytes(data[: int(len(data) * cut)])
        items = list(reader_for("openhands").read(copy))
        assert items and all(isinstance(i, Trajectory | LoadProblem) for i in items)


def test_a_folder_of_conversations_is_one_episode_per_conversation(tmp_path: Path) -> None:
    folders = sorted(p for p in DATA.iterdir() if p.is_dir())
    for folder in folders:
        shutil.copytree(folder, tmp_path / "conversations" / folder.name)
    assert detect(tmp_path / "conversations")[0].name == "openhands"
    trajectories, problems = load(tmp_path / "conversations")
    assert problems == [] and len(trajectories) == len(folders)
    assert [t.id for t in trajectories] == [load(f)[0][0].id for f in folders]


# -- outcome (issue 30): each value checked against the file ------------------------------------


def test_eval_lines_carry_their_patch_error_and_the_resolver_s_explanation() -> None:
    path = DATA / "multi_swe_bench__examples__output.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    trajectories, _ = load(path)
    for line, trajectory in zip(lines, trajectories, strict=True):
        assert trajectory.outcome.answer == line["test_result"]["git_patch"]
        assert trajectory.outcome.error == (line["error"] or None)
    assert trajectories[2].outcome.kind == "errored" and trajectories[2].outcome.reason == lines[2]["error"]
    path = DATA / "resolver__mock_output__output.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for line, trajectory in zip(lines, load(path)[0], strict=True):
        outcome = trajectory.outcome
        assert outcome.explanation == line["result_explanation"] and outcome.answer == line["git_patch"]
        assert outcome.success is line["success"] and outcome.kind == "succeeded"


def test_a_swe_bench_report_in_test_result_decides_success(tmp_path: Path) -> None:
    """``eval_infer.py`` adds ``test_result.report`` (resolved, failed_apply_patch, error_eval...)."""
    line = json.loads((DATA / "multi_swe_bench__examples__output.jsonl").read_text().splitlines()[0])
    line["test_result"]["report"] = {"empty_generation": False, "resolved": False, "failed_apply_patch": True}
    (tmp_path / "output.jsonl").write_text(json.dumps(line) + "\n")
    [trajectory], _ = load(tmp_path / "output.jsonl")
    assert trajectory.outcome.success is False and trajectory.outcome.reason == "failed_apply_patch: failed apply patch"


def test_the_finish_call_s_message_is_the_answer() -> None:
    folder = DATA / "sdk-v1__conv_cd945624_terminal-action"
    finish = next(
        event
        for event in (json.loads(p.read_text()) for p in sorted((folder / "events").glob("*.json")))
        if event.get("kind") == "ActionEvent" and _kind(event) == "FinishAction"
    )
    (trajectory,), _ = load(folder)
    assert trajectory.outcome.answer == finish["action"]["message"] and trajectory.outcome.status == "finished"
    events = json.loads((DATA / "basic_interactions.json").read_text())
    said = [e for e in events if e.get("action") == "finish"][-1]
    (v0,), _ = load(DATA / "basic_interactions.json")
    assert v0.outcome.answer == (said["args"].get("final_thought") or said["message"])


def _kind(event: dict[str, Any]) -> Any:
    return event["action"].get("kind") if isinstance(event.get("action"), dict) else None


def test_an_error_state_names_its_reason(tmp_path: Path) -> None:
    events = json.loads((DATA / "basic_gui_mode.json").read_text())
    events.append(
        {
            "id": 99,
            "source": "environment",
            "message": "",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "error", "reason": "RuntimeError: the sandbox stopped"},
        }
    )
    (tmp_path / "events.json").write_text(json.dumps(events))
    (trajectory,), _ = load(tmp_path / "events.json")
    assert trajectory.outcome.kind == "errored" and trajectory.outcome.reason == "RuntimeError: the sandbox stopped"
