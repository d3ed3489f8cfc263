"""Tags and notes on any row of the stepper, and the episode note on screen (issue 34, item 2).

On a tau2 run the agent's failure is often in a reply ("step 10", a message row with no recorded
call): it can be tagged and noted like a replayed step. The episode note has a line of its own
under the instruction; the test reads the screen, not the stored text.
"""

from __future__ import annotations

from pathlib import Path

from replay_tui.tui.replay.stepper import StepperScreen
from tests.tui.conftest import SIZE

TAU2 = (
    Path(__file__).resolve().parents[1]
    / "data/formats/tau2/2025-10-05T22-50-14.083933_airline_grok-3__slice_tasks_0_13_19.json"
)


def _screen(app) -> str:
    return app.export_screenshot().replace("&#160;", " ")


async def test_a_reply_row_takes_a_tag_and_a_note_and_the_episode_note_shows(build, tmp_path):
    app = build([str(TAU2)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        row = screen.current_row()
        assert row is not None and row.step is None  # step 0: the agent's greeting, no call
        await pilot.press("t")
        await pilot.pause()
        await pilot.press("1", "enter")  # the first label of the dialog
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("n", *"greets before reading the policy", "ctrl+s")
        await pilot.pause()
        shown = _screen(app)
        assert "only steps can be tagged" not in shown
        assert "greets before reading the policy" in shown  # in the row's detail
        assert "⚑" in shown and "✎" in shown  # the row's marks in the list
        await pilot.press("N", *"the user asked twice for the refund", "ctrl+s")
        await pilot.pause()
        assert "the user asked twice for the refund" in _screen(app)
    saved = app.workspace.annotations
    assert saved.get(0, "0") is not None and saved.get(0, "0").note == "greets before reading the policy"


async def test_a_seed_sub_event_row_takes_a_note_under_its_entry(build):
    app = build()  # the bundled WebShop demonstrations: item-page sub-events between the steps
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        position = next(n for n, row in enumerate(screen.source.rows) if row.step is None)
        for _ in range(position):
            await pilot.press("j")
        await pilot.pause()
        row = screen.current_row()
        assert row is not None and row.step is None
        await pilot.press("n", *"reads the sizes", "ctrl+s")
        await pilot.pause()
        assert "reads the sizes" in _screen(app)
        note = app.workspace.annotations.get(screen.session_id, f"entry {row.position}")
    assert note is not None and note.note == "reads the sizes"


async def test_the_episode_note_is_on_screen_under_a_long_instruction(build):
    app = build([str(TAU2)])  # the instruction is longer than a line at this width
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("N", *"refund asked twice", "ctrl+s")
        await pilot.pause()
        assert "refund asked twice" in _screen(app)
