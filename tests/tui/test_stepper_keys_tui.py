"""A stepper key that cannot act says why (issue 34, item 6): ``i`` on an episode without screenshots."""

from __future__ import annotations

from pathlib import Path

from replay_tui.tui.replay.stepper import StepperScreen
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


WEBSHOP_HUMAN = Path(__file__).resolve().parents[1] / "data/formats/webshop_human"


async def test_a_warning_every_step_carries_is_said_once_per_file(build, tmp_path):
    # human sessions record no available actions: every step infers them from the page
    log = tmp_path / "two_sessions.jsonl"
    log.write_bytes(b"".join(path.read_bytes() for path in sorted(WEBSHOP_HUMAN.glob("*.jsonl"))[:2]))
    app = build([str(log)], mode="heuristic")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        assert len([r for r in screen.rows if r.step is not None]) > 1
        detail = str(screen.query_one("#step-detail").render())
        assert "available_actions missing" not in detail
        await pilot.press("escape", "j", "enter")  # the other session of the same file
        await pilot.pause()
        await pilot.press("j")
        await pilot.pause()
        toasts = [str(n.message) for n in app._notifications]
    said = [t for t in toasts if "available_actions missing; inferred from the observation" in t]
    assert said == ["two_sessions.jsonl: every step: available_actions missing; inferred from the observation"]
