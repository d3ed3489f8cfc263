"""TextPane does no wrapping work before it has a size, and wraps at its real width once it has one."""

from __future__ import annotations

from textual.app import App, ComposeResult

from replay_tui.tui.widgets.text_pane import TextPane, _word_wrap


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        pane = TextPane("text", id="pane")
        pane.display = False  # not laid out: no width yet
        yield pane


async def test_a_pane_without_width_wraps_nothing_until_it_is_shown() -> None:
    app = _Host()
    async with app.run_test(size=(60, 20)) as pilot:
        pane = app.query_one(TextPane)
        text = "word " * 40_000  # 200 KB on one line
        pane.set_text(text)
        assert pane._wrap is None  # no pass at width 1 (a row per character)
        pane.display = True
        await pilot.pause()
        width = pane.scrollable_content_region.width
        assert width > 10 and pane._wrap_width == width
        assert pane._wrap is not None
        assert pane._wrap.rows == len(_word_wrap(text, width)) < len(text) // 10
