"""A step's reward that is no number (NaN, infinite: a stdlib-JSON log may hold one) is read as
missing and said, so the step loads and replays with the others and no report carries a NaN."""

from __future__ import annotations

import math

import pytest

from replay_tui.env import replay_steps
from replay_tui.episodes.model import ToolCall, Trajectory, TrajectoryStep


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_reward_that_is_no_number_is_missing_and_said(value: float) -> None:
    step = TrajectoryStep(index=0, reward=value)
    assert step.reward is None
    assert step.warnings == [f"reward {value!r} is not a number; read as missing"]
    assert TrajectoryStep(index=1, reward=0.5).reward == 0.5 and TrajectoryStep(index=1, reward=0.5).warnings == []


def test_the_step_replays_with_the_others_and_says_why() -> None:
    calls = [ToolCall(name="f", arguments={"a": n}) for n in range(3)]
    trajectory = Trajectory(
        id="t1",
        format="openai-chat",
        steps=[
            TrajectoryStep(index=n, action=call, reward=math.nan if n == 1 else 1.0) for n, call in enumerate(calls)
        ],
    )
    steps = replay_steps(trajectory)
    assert len(steps) == 3
    assert [step.reward for step in steps] == [1.0, 0.0, 1.0]
    assert "reward nan is not a number; read as missing" in steps[1].warnings
    assert not any("reward" in warning for warning in steps[0].warnings + steps[2].warnings)
