"""The stepper's tab bar on its own: numbered tabs, the active one marked, the hint only where it fits."""

from __future__ import annotations

from textual.app import App, ComposeResult

from replay_tui.tui.widgets.pane_tabs import HINTS, PaneTabs


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield PaneTabs(id="pane-tabs")


async def test_tabs_mark_the_active_pane_and_fit_the_hint() -> None:
    app = _Host()
    async with app.run_test(size=(120, 5)):
        tabs = app.query_one(PaneTabs)
        tabs.show_tabs(["observation", "prompt", "thinking"], 1, room=100)
        text = str(tabs.render())
        assert text.startswith(" 1 observation ▶2 prompt  3 thinking ")
        assert text.endswith(HINTS[0])
        tabs.show_tabs(["observation", "prompt", "thinking"], 0, room=48)
        assert str(tabs.render()).endswith(HINTS[1])
        tabs.show_tabs(["observation", "prompt", "thinking"], 2, room=20)
        assert "▶3 thinking" in str(tabs.render()) and "1-4" not in str(tabs.render())
