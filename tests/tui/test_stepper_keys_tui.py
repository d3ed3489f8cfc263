"""A stepper key that cannot act says why (issue 34, item 6): ``i`` on an episode without screenshots."""

from __future__ import annotations

from pathlib import Path

from replay_tui.tui.screens.stepper import StepperScreen
from tests.tui.conftest import SIZE

TAU2 = Path(__file__).resolve().parents[1] / (
    "data/formats/tau2/2025-10-05T22-50-14.083933_airline_grok-3__slice_tasks_0_13_19.json"
)


async def test_i_without_screenshots_says_so(build):
    app = build([str(TAU2)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen) and not app.screen.has_screenshots
        await pilot.press("i")
        await pilot.pause()
        toasts = [str(n.message) for n in app._notifications]
    assert toasts == ["no screenshot recorded in this episode"]
