"""Tagging in one visit (issue 16): several labels and a new one in the dialog, marks in the step
list, the episode note in the stepper, and a multi-line note keeping its lines in the Markdown export."""

from __future__ import annotations

from replay_tui.annotations import AnnotationStore
from replay_tui.tui.replay.stepper import StepperScreen
from tests.tui.conftest import SIZE, wait_replay


def _step_rows(screen: StepperScreen) -> list[str]:
    return [" ".join(cell.plain for cell in screen.source.cells(i)) for i in range(len(screen.source))]


async def test_tag_several_labels_and_a_new_one_mark_steps_and_show_the_episode_note(build, tmp_path):
    sidecar = tmp_path / "notes.annotations.json"
    app = build(mode="heuristic")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        assert not any(mark in row for row in _step_rows(screen) for mark in "⚑✎")
        await pilot.press("t")
        await pilot.pause()
        await pilot.press("1", "3", "3", "3")  # two labels; a third toggle press undoes and redoes
        await pilot.press("tab", *"slow page", "enter")  # a new label, set at once
        await pilot.pause()
        await pilot.press("enter")  # saves and closes
        await pilot.pause()
        assert app.screen is screen
        store = app.workspace.annotations
        assert store.get(0, "0").tags == ["policy-bug", "normalization", "slow-page"]
        assert "slow-page" in store.labels
        rows = _step_rows(screen)
        assert "⚑" in rows[0] and "✎" not in rows[0] and "⚑" not in rows[1]
        await pilot.press("j", "n", *"reads the wrong page", "ctrl+s")  # a note on step 1
        await pilot.pause()
        assert "✎" in _step_rows(screen)[1]
        await pilot.press("t")
        await pilot.pause()
        await pilot.press("escape")  # cancel: nothing changes
        await pilot.pause()
        assert store.get(0, "1").tags == []
        await pilot.press("N", *"first line", "enter", *"- second line", "ctrl+s")  # a multi-line episode note
        await pilot.pause()
        title = screen.query_one("#episode-title").render().plain
        assert "✎ first line ⏎ - second line" in title
        await pilot.press("r")
        await wait_replay(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("e", "home", "down", "enter")  # Markdown
        await pilot.pause()
    saved = AnnotationStore.load(sidecar)
    assert saved.get(0, "0").tags == ["policy-bug", "normalization", "slow-page"]
    assert saved.get(0, None).note == "first line\n- second line"
    report = (tmp_path / "replay-report.md").read_text()
    assert "— first line\\\n  \\- second line" in report  # a hard break, the list marker escaped
