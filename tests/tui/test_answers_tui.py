"""The app on an inspect_ai log without tool calls (multiple choice): each sample's reply is one
decision, shown as the step's action, and a stub replay in the app judges it (a ✓, not nothing)."""

from __future__ import annotations

from replay_tui.tui.screens.stepper import StepperScreen
from tests.conftest import DATA
from tests.tui.conftest import SIZE, wait_replay
from tests.tui.test_formats_tui import assert_shown, browser_rows, header

CHOICE = DATA / "formats" / "inspect_ai" / "answers_choice.eval"


async def test_a_multiple_choice_sample_is_one_judged_decision_in_the_app(build):
    app = build([str(CHOICE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        calls = header(app).index("calls")
        assert [row[calls] for row in browser_rows(app)] == ["1", "1"]  # the answer is what a replay judges
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        assert_shown(app, "action", "ANSWER: B")
        await pilot.press("r")
        await wait_replay(app, pilot)
        (verdict,) = app.step_results[0].values()
        assert verdict.match and verdict.state == "answer" and verdict.expected == "ANSWER: B"
        assert screen.source.cells(0)[0].plain == "✓"
