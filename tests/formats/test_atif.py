"""Harbor ATIF trajectories: counts against a walk written from the RFC, sub-agents, detection."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import detect, read_trajectories, reader_for

DATA = Path(__file__).parent.parent / "data" / "formats" / "atif"
SAMPLES = sorted(DATA.glob("*.json"))


def load(path: Path) -> tuple[list[Trajectory], list[LoadProblem]]:
    items = list(reader_for("atif").read(path))
    return [i for i in items if isinstance(i, Trajectory)], [i for i in items if isinstance(i, LoadProblem)]


def spec_counts(path: Path) -> dict[str, int]:
    """RFC 0001 read by hand: every step is a message and every observation result one more; tool
    calls and results counted per step; each subagent_trajectory_ref with a file beside is an episode."""
    counts = {"episodes": 0, "messages": 0, "calls": 0, "results": 0, "subagents": 0}

    def walk(doc: dict[str, Any], name: str) -> None:
        counts["episodes"] += 1
        for step in doc["steps"]:
            counts["messages"] += 1
            counts["calls"] += len(step.get("tool_calls") or [])
            for result in (step.get("observation") or {}).get("results", []):
                counts["messages"] += 1
                counts["results"] += 1
                refs = result.get("subagent_trajectory_ref") or []
                for ref in [refs] if isinstance(refs, dict) else refs:
                    child = path.parent / (name.split("trajectory")[0] + ref["trajectory_path"])
                    if child.is_file():
                        counts["subagents"] += 1
                        walk(json.loads(child.read_text()), child.name)

    walk(json.loads(path.read_text()), path.name)
    return counts


def reader_counts(trajectories: list[Trajectory]) -> dict[str, int]:
    calls = sum(len(s.extra.get("tool_calls", [])) or (s.action is not None) for t in trajectories for s in t.steps)
    return {
        "episodes": len(trajectories),
        "messages": sum(t.metadata["messages"] for t in trajectories),
        "calls": calls,
        "results": sum(t.metadata["results"] for t in trajectories),
        "subagents": sum(t.parent is not None for t in trajectories),
    }


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_counts_equal_an_independent_walk_of_the_spec(path: Path) -> None:
    trajectories, problems = load(path)
    assert problems == []
    assert reader_counts(trajectories) == spec_counts(path)


def test_atif_is_not_taken_for_a_webshop_demo_file() -> None:
    """Issue 31 bug 4: a weak ``session_id`` match (webshop-demos) took ATIF files and failed."""
    for path in SAMPLES:
        reader, found = detect(path)
        assert reader.name == "atif", (path.name, found.reason)


def test_steps_prompt_results_and_subagents() -> None:
    trajectories, _ = load(DATA / "terminus_2__hello-world-context-summarization.trajectory.json")
    parent, *children = trajectories
    assert [c.parent.episode if c.parent else None for c in children] == [parent.id] * 3
    assert children[0].id.endswith("summarization-1-summary")
    first = parent.steps[0]
    assert [m.role for m in first.messages] == ["user"] and first.action is not None
    assert first.tool_result and parent.steps[1].messages[-1].role == "tool"
    assert parent.steps[1].messages[-1].tool_call_id == first.action.id
    assert parent.task.startswith(first.messages[0].content[:20])
    assert parent.outcome.scores["final_metrics"]["total_prompt_tokens"] == 7802
    assert first.tools and first.tools[0]["function"]["name"] == first.action.name  # inferred


def test_reasoning_is_thinking_and_tool_definitions_are_the_tools(tmp_path: Path) -> None:
    doc = json.loads((DATA / "terminus_2__hello-world.trajectory__ATIF-v1.3.json").read_text())
    tool = {"type": "function", "function": {"name": "bash_command", "parameters": {"type": "object"}}}
    doc["agent"]["tool_definitions"] = [tool]
    target = tmp_path / "trajectory.json"
    target.write_text(json.dumps(doc))
    (trajectory,), _ = load(target)
    assert trajectory.steps[0].tools == [tool]
    assert trajectory.steps[0].thinking == doc["steps"][1]["reasoning_content"]


def test_a_missing_subagent_file_is_a_named_warning_and_the_parent_loads(tmp_path: Path) -> None:
    source = DATA / "terminus_2__hello-world-context-summarization.trajectory.json"
    shutil.copy(source, tmp_path / source.name)
    trajectories, problems = load(tmp_path / source.name)
    assert len(trajectories) == 1 and len(problems) == 3
    assert all(p.severity == "warning" and "summarization-1" in p.message for p in problems)
    assert problems[0].field and problems[0].field.startswith("steps[4].observation.results[0]")


def test_inline_subagents_and_a_trial_reward(tmp_path: Path) -> None:
    child = json.loads((DATA / "terminus_2__hello-world-timeout.trajectory.json").read_text())
    child["trajectory_id"] = "sub-1"
    doc = json.loads((DATA / "terminus_2__hello-world.trajectory__ATIF-v1.2.json").read_text())
    doc["schema_version"] = "ATIF-v1.7"
    doc["subagent_trajectories"] = [child]
    doc["steps"][2]["observation"]["results"].append({"subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]})
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "trajectory.json").write_text(json.dumps(doc))
    (tmp_path / "result.json").write_text(json.dumps({"verifier_result": {"rewards": {"reward": 1.0}}}))
    (parent, sub), problems = load(tmp_path / "agent" / "trajectory.json")
    assert (
        problems == [] and sub.id == f"{parent.id}/sub-1" and sub.parent is not None and sub.parent.episode == parent.id
    )
    assert parent.outcome.reward == 1.0 and parent.outcome.success is True


@pytest.mark.parametrize("cut", [0.0, 0.3, 0.99])
def test_invalid_or_truncated_json_is_one_named_problem(tmp_path: Path, cut: float) -> None:
    data = (DATA / "terminus_2__hello-world-timeout.trajectory.json").read_bytes()
    target = tmp_path / "trajectory.json"
    target.write_bytes(data[: int(len(data) * cut)] + (b"" if cut else b"{"))
    items = list(read_trajectories(target, "atif"))
    assert len(items) == 1 and isinstance(items[0], LoadProblem)
    assert items[0].file == "trajectory.json" and "not valid JSON" in items[0].message


def test_other_json_is_not_atif(tmp_path: Path) -> None:
    other = tmp_path / "x.json"
    other.write_text('{"session_id": "a", "steps": []}')
    assert reader_for("atif").sniff(other, other.read_bytes()).score == 0


def test_a_continuation_file_is_read_after_the_trajectory_it_continues(tmp_path: Path) -> None:
    first = json.loads((DATA / "terminus_2__hello-world.trajectory__ATIF-v1.2.json").read_text())
    first["continued_trajectory_ref"] = "trajectory.cont-1.json"
    (tmp_path / "trajectory.json").write_text(json.dumps(first))
    continuation = (DATA / "terminus_2__hello-world-timeout.trajectory.json").read_text()
    (tmp_path / "trajectory.cont-1.json").write_text(continuation)
    (head, tail), problems = load(tmp_path / "trajectory.json")
    assert problems == [] and tail.metadata["continues"] == head.id and "parent" not in tail.metadata


def test_a_harbor_job_folder_is_read_trial_by_trial(tmp_path: Path) -> None:
    """``jobs/<job>/<trial>/agent/trajectory.json`` beside ``<trial>/result.json``: open the job or a trial."""
    for trial, reward in (("hello__a", 1.0), ("hello__b", 0.0)):
        (tmp_path / trial / "agent").mkdir(parents=True)
        shutil.copy(
            DATA / "terminus_2__hello-world.trajectory__ATIF-v1.2.json", tmp_path / trial / "agent" / "trajectory.json"
        )
        (tmp_path / trial / "result.json").write_text(json.dumps({"verifier_result": {"rewards": {"reward": reward}}}))
    (tmp_path / "config.json").write_text("{}")
    assert detect(tmp_path)[0].name == "atif" and detect(tmp_path / "hello__b")[0].name == "atif"
    trajectories = [i for i in read_trajectories(tmp_path) if isinstance(i, Trajectory)]
    assert [t.outcome.reward for t in trajectories] == [1.0, 0.0]
    assert [t.outcome.success for t in trajectories] == [True, False]


# -- outcome (issue 30): a Harbor trial's verdict beside the trajectory --------------------------


def _trial(tmp_path: Path, result: dict[str, object] | None = None) -> Path:
    (tmp_path / "trial" / "agent").mkdir(parents=True)
    target = tmp_path / "trial" / "agent" / "trajectory.json"
    shutil.copy(DATA / "terminus_2__hello-world-timeout.trajectory.json", target)
    if result is not None:
        (tmp_path / "trial" / "result.json").write_text(json.dumps(result))
    return target


def test_a_trial_that_timed_out_shows_harbor_s_exception(tmp_path: Path) -> None:
    """``exception_info`` as Harbor's TrialResult writes it (type, message, traceback, occurred_at)."""
    info = {
        "exception_type": "AgentTimeoutError",
        "exception_message": "Agent execution timed out after 10.0 seconds",
        "exception_traceback": "Traceback (most recent call last):\n  ...\nAgentTimeoutError: timed out",
        "occurred_at": "2025-11-07T17:50:40",
    }
    path = _trial(tmp_path, {"verifier_result": None, "exception_info": info})
    [trajectory], _ = load(path)
    outcome = trajectory.outcome
    assert outcome.status == info["exception_type"] and outcome.kind == "errored"
    assert outcome.reason == f"{info['exception_type']}: {info['exception_message']}"
    assert outcome.error is not None and info["exception_traceback"] in outcome.error
    assert outcome.reward is None and outcome.scores["exception_info"] == info
    final = json.loads(path.read_text())["final_metrics"]
    assert outcome.scores["final_metrics"] == final


def test_several_named_rewards_are_checks_and_reward_json_is_read(tmp_path: Path) -> None:
    rewards = {"reward": 0.5, "tests_passed": 0.5, "style": 1}
    path = _trial(tmp_path, {"verifier_result": {"rewards": rewards}})
    outcome = load(path)[0][0].outcome
    assert outcome.reward == 0.5 and outcome.success is False and outcome.kind == "failed"
    assert [(c.name, c.value) for c in outcome.checks] == list(rewards.items())
    (tmp_path / "trial" / "result.json").unlink()
    (tmp_path / "trial" / "verifier").mkdir()
    (tmp_path / "trial" / "verifier" / "reward.json").write_text(json.dumps({"reward": 1.0}))
    assert load(path)[0][0].outcome.kind == "succeeded"
