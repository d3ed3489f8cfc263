"""What a screen's opening costs, asserted as behaviour (issue 28): its widgets are styled for the
terminal's height from the start, the browser's list has the keys from its first frame, and a table
given its width asks for no second layout. Each was a second styling or a second whole-screen layout
and frame on every app start and every screen opened (every Pilot test pays them too)."""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.widgets.lazy_table import LazyTable
from tests.tui.conftest import SIZE


async def test_screens_mount_with_the_breakpoint_class_of_the_terminal_height(build, monkeypatch):
    mounted: list[tuple[str, set[str]]] = []

    def recorded(original):
        def on_mount(self) -> None:
            mounted.append((type(self).__name__, {"-short", "-tall"} & set(self.classes)))
            original(self)

        return on_mount

    for screen_class in (BrowserScreen, StepperScreen):
        monkeypatch.setattr(screen_class, "on_mount", recorded(screen_class.on_mount))
    for size, expected in ((SIZE, {"-tall"}), ((80, 24), {"-short"})):
        mounted.clear()
        app = build()
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, StepperScreen)
        assert mounted == [("BrowserScreen", expected), ("StepperScreen", expected)]


async def test_the_browser_list_has_the_focus_from_the_start_and_the_filter_box_never(build, monkeypatch):
    focused: list[str | None] = []
    original = Input._on_focus

    def on_focus(self, event: events.Focus) -> None:
        focused.append(self.id)
        original(self, event)

    monkeypatch.setattr(Input, "_on_focus", on_focus)
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        assert screen.focused is screen.query_one("#episodes", LazyTable)
        assert focused == []
        await pilot.press("slash")  # the filter box still takes the focus when asked
        await pilot.pause()
        assert screen.focused is screen.query_one("#filter", Input)


async def test_a_table_given_a_new_width_asks_for_no_layout(build, monkeypatch):
    """Its first width comes after the first layout (the screen's), so this was a second one on every screen."""
    asked: list[bool] = []
    original_resize, original_refresh = LazyTable.on_resize, LazyTable.refresh

    def on_resize(self, event: events.Resize) -> None:
        asked.append(False)
        original_resize(self, event)

    def refresh(self, *regions, layout: bool = False, **kwargs):
        if layout and asked:
            asked[-1] = True
        return original_refresh(self, *regions, layout=layout, **kwargs)

    monkeypatch.setattr(LazyTable, "on_resize", on_resize)
    monkeypatch.setattr(LazyTable, "refresh", refresh)
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.resize_terminal(SIZE[0] + 20, SIZE[1])
        await pilot.pause()
        table = app.screen.query_one("#episodes", LazyTable)
        assert table.virtual_size == (table.scrollable_content_region.width, len(table.source) + 1)
        assert table.size.width == SIZE[0] + 20
    assert asked and not any(asked)


async def test_the_apps_of_a_worker_share_one_parse_of_each_stylesheet(build):
    """tests/tui/conftest.py's _stylesheets_parsed_once_a_worker: the same rules, not equal ones parsed again."""
    rules = []
    for _ in range(2):
        app = build()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            rules.append(list(app.stylesheet.rules))  # kept: their ids are not reused
    first, second = rules
    assert first and len(first) == len(second) and all(a is b for a, b in zip(first, second, strict=True))


async def test_moving_the_cursor_redraws_the_two_rows_it_changes(build, monkeypatch):
    """Not every visible row (the SVG snapshots, which move cursors, check that no row is left stale)."""
    drawn: list[int] = []
    render_line = LazyTable.render_line

    def recording(self, y: int):
        drawn.append(y)
        return render_line(self, y)

    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#episodes", LazyTable)
        monkeypatch.setattr(LazyTable, "render_line", recording)
        await pilot.press("j")
        await pilot.pause()
        assert table.cursor == 1
        assert sorted(drawn) == [1, 2]  # rows 0 and 1, under the header
        assert not table.render_line(1).text.startswith(LazyTable.MARKER)
        assert table.render_line(2).text.startswith(LazyTable.MARKER)
        drawn.clear()
        await pilot.press("G")  # off the screen: the scroll redraws every row
        await pilot.pause()
        assert len(set(drawn)) == table.scrollable_content_region.height
