"""The replay reads a log's Trajectory (issue 29, step 2): the steps it judges and the
``recorded_step`` a policy receives come from the Trajectory's steps, typed, with the keys the
decision-step shape has always had."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay_tui.env import replay_steps
from replay_tui.sources import RECORDED_KEYS, is_decision, open_sources

FORMATS = Path(__file__).parents[1] / "data" / "formats"
SAMPLES = sorted(
    path for folder in FORMATS.iterdir() if folder.is_dir() for path in folder.iterdir() if path.name != "PROVENANCE.md"
)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_log_replays_from_its_trajectory_with_the_recorded_step_of_its_episode(path: Path) -> None:
    try:
        demos = open_sources([path], skip_unreadable=True)
    except Exception:  # a sample only a folder reader takes (read by its folder's own test)
        pytest.skip("not openable alone")
    checked = 0
    for session_id in demos.session_ids[:5]:
        trajectory = demos.trajectory(session_id)
        from_trajectory = replay_steps(trajectory)
        decisions = [step for step in trajectory.steps if is_decision(step)]
        assert len(decisions) == len(from_trajectory)
        for step, entry in zip(from_trajectory, decisions, strict=True):
            assert step.source.step is entry is trajectory.steps[step.trajectory_index]  # the Trajectory's own step
            recorded = dict(step.recorded)
            messages = recorded.pop("messages", None)
            # the decision-step shape the policies always received, its prompt the step's messages
            assert tuple(recorded) == RECORDED_KEYS and recorded["format"] == trajectory.format
            assert recorded["step_label"] == entry.label and recorded["step_number"] == entry.index
            assert (recorded["llm_prompt"] is None) == (not entry.messages) and (messages is None) == (not step.call)
            # what the replay infers (a WebShop page's state and actions) is what the policy is told
            assert (recorded["state"], recorded["available_actions"]) == (step.state, step.available_actions)
            assert recorded["action_executed_in_env"] == step.expected
            checked += 1
    # a log with no decision among its first episodes was still compared above (both replays empty); a log
    # with no episode at all says why
    assert checked or demos.session_ids or demos.problems


def test_a_policy_changing_its_recorded_step_changes_no_other_step(tmp_path: Path) -> None:
    path = FORMATS / "openai_chat" / "tau_bench_gpt-4o-airline_excerpt.json"
    demos = open_sources([path])
    trajectory = demos.trajectory(demos.session_ids[0])
    first = replay_steps(trajectory)[0]
    first.recorded["llm_action_arguments"]["injected"] = 1
    again = replay_steps(trajectory)[0]
    assert "injected" not in again.recorded["llm_action_arguments"]
    assert trajectory.steps[first.trajectory_index].action.arguments.get("injected") is None
