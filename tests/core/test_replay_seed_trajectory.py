"""A seed demo file replays from its Trajectory (issue 29, step 2): ``replay_steps`` of the
webshop-demos reader's Trajectory gives the steps (decisions, item-page actions when asked) and the
``recorded_step`` dicts its fast reading gives, with the seed's keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replay_tui.env import ReplayStep, replay_steps
from replay_tui.examples import example_path
from replay_tui.formats.webshop_demos import from_webshop_episode, synth
from replay_tui.formats.webshop_demos.fast import fast_trajectory
from replay_tui.policies import StubPolicy
from replay_tui.sources import open_sources
from tests.conftest import episode, search_step, write_json


def facts(step: ReplayStep) -> dict[str, Any]:
    return {
        "index": step.index,
        "step_number": step.step_number,
        "label": step.label,
        "kind": step.kind,
        "state": step.state,
        "available_actions": step.available_actions,
        "observation": step.observation,
        "observation_after": step.observation_after,
        "expected": step.expected,
        "reward": step.reward,
        "done": step.done,
        "trajectory_index": step.trajectory_index,
        "warnings": list(step.warnings),
        "call": step.call,
        "schema": step.schema,
        "llm_prompt": step.llm_prompt,
        "webshop_call": step.webshop_call,
        "recorded": step.recorded,
        "stub": StubPolicy(fallback_to_recorded=True).predict_from_step(step),
    }


def compare(path: Path) -> int:
    demos = open_sources([path])
    steps = 0
    for ref in demos:
        trajectory = from_webshop_episode(demos.episode(ref.session_id))
        assert demos.trajectory(ref.session_id) == trajectory  # what the engines read
        fast = demos.files[0].read_fast(ref)
        for items in (False, True):
            ours = [facts(s) for s in replay_steps(trajectory, include_item_steps=items)]
            if fast is not None:  # the fast reading replays the same, and so does its Trajectory
                theirs = [facts(s) for s in replay_steps(fast, include_item_steps=items)]
                assert ours == theirs, (path.name, ref.session_id, items)
                again = [facts(s) for s in replay_steps(fast_trajectory(fast), include_item_steps=items)]
                assert again == ours
            steps += len(ours)
    return steps


def test_the_bundled_example_replays_the_same_from_its_trajectory() -> None:
    assert compare(example_path()) > 431  # every decision, and the item-page actions


@pytest.mark.parametrize("quirk_rate", [0.0, 0.6])
def test_synthetic_files_replay_the_same_from_their_trajectories(tmp_path: Path, quirk_rate: float) -> None:
    path = tmp_path / "synth.json"
    synth.write_demo_file(path, start=0, count=80, seed=5, quirk_rate=quirk_rate)
    assert compare(path) > 0


def test_a_seed_step_that_says_it_is_a_tool_call_is_judged_as_one_from_its_trajectory(tmp_path: Path) -> None:
    odd = [
        search_step(0, llm_action_name="Nonsense", action_executed_in_env="click[x]"),
        search_step(1, tool_call=True, step_label="1a", action_executed_in_env='Search({"keywords": "z"})'),
    ]
    path = write_json(tmp_path / "odd.json", [episode(900, odd)])
    assert compare(path) == 4
    (step,) = [s for s in replay_steps(open_sources([path]).trajectory(900)) if s.call]
    assert step.label == "1a" and step.recorded["tool_call"] is True
