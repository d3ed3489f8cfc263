"""The find box on its own: keys typed into it become messages to its screen, which owns the search."""

from __future__ import annotations

from textual import on
from textual.app import App, ComposeResult
from textual.message import Message

from replay_tui.tui.widgets.find_bar import FindBar


class _Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.heard: list[tuple[str, object]] = []

    def compose(self) -> ComposeResult:
        yield FindBar(id="find")

    def on_mount(self) -> None:
        self.query_one(FindBar).open()

    @on(FindBar.Search)
    @on(FindBar.Step)
    @on(FindBar.Close)
    def _heard(self, event: Message) -> None:
        value = getattr(event, "query", getattr(event, "direction", None))
        self.heard.append((type(event).__name__, value))


async def test_keys_become_search_step_and_close_messages() -> None:
    app = _Host()
    async with app.run_test() as pilot:
        bar = app.query_one(FindBar)
        assert bar.display and bar.has_focus
        await pilot.press("a", "b", "enter", "down", "up", "escape")
        await pilot.pause()
        assert app.heard == [
            ("Search", "a"),
            ("Search", "ab"),
            ("Step", 1),
            ("Step", 1),
            ("Step", -1),
            ("Close", None),
        ]
        bar.close()
        await pilot.pause()
        assert not bar.display and bar.value == "" and app.heard[-1] == ("Search", "")


async def test_hidden_until_opened() -> None:
    app = App[None]()
    async with app.run_test():
        bar = FindBar(id="find")
        await app.mount(bar)
        assert not bar.display
