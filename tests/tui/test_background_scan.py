"""The app opens demo files with ``defer_scan``: an episode nested past MAX_DEPTH is browsable
at first and shows as a problem once the background validation reads it; the others open."""

from __future__ import annotations

from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.stepper import StepperScreen
from tests.conftest import episode, good_episode, search_step, write_json
from tests.tui.conftest import SIZE
from tests.tui.test_background_validation import _rows, _validated


async def test_an_episode_nested_too_deep_becomes_a_problem_and_the_rest_open(build, tmp_path):
    nested: object = "bottom"
    for _ in range(100):
        nested = {"n": nested}
    path = write_json(tmp_path / "deep.json", [good_episode(1), episode(2, [search_step(0)], extra=nested)])
    app = build([path])
    async with app.run_test(size=SIZE) as pilot:
        await _validated(app, pilot)
        rows = _rows(app)
        assert [(row[0], row[6]) for row in rows] == [("1", "—"), ("2", "problem")]
        assert any("nested more than 64 levels deep" in p.message for p in app.workspace.demos.problems)
        await pilot.press("enter")  # session 1 opens
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
