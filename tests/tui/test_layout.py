"""The layout at 80x24 and up, driven with keys: the step list sized to its content and collapsible,
panes as tabs on narrow screens, zoom from the step list, the browser's instruction column, the
cursor marker, the footer's essential keys, dialogs whose buttons stay on screen, theme colours."""

from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.widgets import Static

from replay_tui.tui.replay.browser import INSTRUCTION_MIN
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.screens.help import HelpScreen
from replay_tui.tui.screens.modals import SettingsModal
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import LazyTable
from replay_tui.tui.widgets.text_pane import TextPane
from tests.conftest import DATA

SMALL = (80, 24)
LARGE = (200, 60)


def shown(screen, name: str) -> bool:
    """The pane is part of the layout (displayed and given some room)."""
    widget = screen.query_one(f"#{name}")
    return widget.display and widget.region.width > 0


async def open_stepper(pilot) -> StepperScreen:
    await pilot.press("enter")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, StepperScreen)
    return screen


async def test_step_list_is_sized_to_its_content_and_collapses(build):
    app = build()
    async with app.run_test(size=LARGE) as pilot:
        screen = await open_stepper(pilot)
        steps = screen.query_one("#steps", LazyTable)
        assert 44 < steps.outer_size.width <= 70  # was 44 at any width, cutting actions short
        first = steps.render_line(1).text
        assert "search[02navy volleyball shorts" in first
    async with build().run_test(size=SMALL) as pilot:
        screen = await open_stepper(pilot)
        steps = screen.query_one("#steps", LazyTable)
        assert 24 <= steps.outer_size.width <= 28
        before = screen.query_one("#stepper-right").outer_size.width
        await pilot.press("backslash")
        await pilot.pause()
        assert not steps.display
        assert screen.query_one("#stepper-right").outer_size.width == 80 > before
        await pilot.press("j")  # stepping goes on without the list
        await pilot.pause()
        assert steps.cursor == 1
        await pilot.press("backslash")
        await pilot.pause()
        assert steps.display and steps.has_focus


async def test_panes_are_tabs_at_80_columns_and_side_by_side_at_200(build):
    async with build().run_test(size=SMALL) as pilot:
        screen = await open_stepper(pilot)
        tabs = screen.query_one("#pane-tabs", Static)
        assert tabs.display and "observation" in str(tabs.render())
        assert shown(screen, "observation") and not shown(screen, "prompt") and not shown(screen, "thinking")
        # one pane gets the width: no word of the observation is cut ("Curren / t observ / ation:")
        assert screen.query_one("#observation").outer_size.width >= 40
        await pilot.press("2")
        await pilot.pause()
        assert shown(screen, "prompt") and not shown(screen, "observation")
        assert screen.query_one("#prompt").has_focus
        await pilot.press("w")
        await pilot.pause()
        assert shown(screen, "thinking") and not shown(screen, "prompt")
        await pilot.press("W", "W")
        await pilot.pause()
        assert shown(screen, "observation")
    async with build().run_test(size=LARGE) as pilot:
        screen = await open_stepper(pilot)
        assert not screen.query_one("#pane-tabs").display
        assert all(shown(screen, name) for name in ("observation", "prompt", "thinking"))


async def test_find_shows_the_tab_of_a_match(build):
    async with build().run_test(size=SMALL) as pilot:
        screen = await open_stepper(pilot)
        await pilot.press("ctrl+f", *"meticulous")  # only in the prompt (its system message)
        await pilot.pause()
        assert shown(screen, "prompt") and not shown(screen, "observation")


async def test_zoom_from_the_step_list_at_80x24(build):
    async with build().run_test(size=SMALL) as pilot:
        screen = await open_stepper(pilot)
        assert screen.query_one("#steps").has_focus
        await pilot.press("z")
        await pilot.pause()
        observation = screen.query_one("#observation", TextPane)
        assert screen.maximized is observation  # the step list used to be zoomed instead
        assert observation.outer_size.width == 80
        await pilot.press("j")  # still steps while zoomed
        await pilot.pause()
        assert screen.steps_table.cursor == 1
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None


async def test_browser_gives_the_instruction_the_width_at_80_columns(build):
    app = build()
    async with app.run_test(size=SMALL) as pilot:
        table = app.screen.query_one("#episodes", LazyTable)
        instruction = app.workspace.demos.refs[0].task
        assert instruction[:INSTRUCTION_MIN] in table.render_line(1).text  # was cut at 14 characters
        assert "backup" not in table.shown_columns()
        assert {"instruction", "verdict", "reward"} <= set(table.shown_columns())
    async with build().run_test(size=LARGE) as pilot:
        table = pilot.app.screen.query_one("#episodes", LazyTable)
        assert {"backup", "verdict", "tags"} <= set(table.shown_columns())


async def test_browser_cursor_row_has_a_marker(build):
    app = build()
    async with app.run_test(size=SMALL) as pilot:
        table = app.screen.query_one("#episodes", LazyTable)
        assert table.render_line(1).text.startswith("▶")
        assert not table.render_line(2).text.startswith("▶")
        await pilot.press("down")
        await pilot.pause()
        assert table.render_line(2).text.startswith("▶") and not table.render_line(1).text.startswith("▶")


async def test_footer_keeps_the_essential_keys_at_80_columns(build):
    app = build()
    async with app.run_test(size=SMALL) as pilot:
        for keys in ((), ("enter",)):
            await pilot.press(*keys)
            await pilot.pause()
            footer = app.screen.query_one(KeysFooter)
            line = footer.render_line(0).text
            keys_end = footer.placed[-1].start  # the command palette's key, on the right
            visible = {
                key.key
                for key in footer.placed[:-1]
                if key.end <= keys_end and line[key.start : key.end].startswith(key.display)
            }
            assert {"question_mark", "p", "e", "v", "q"} <= visible, (keys, visible, line)


async def test_a_footer_key_clicked_does_what_its_key_does(build):
    app = build()
    async with app.run_test(size=LARGE) as pilot:
        footer = app.screen.query_one(KeysFooter)
        help_key = next(key for key in footer.placed if key.key == "question_mark")
        assert footer.render_line(0).text[help_key.start : help_key.end] == " ? Help "
        failures = next(key for key in footer.placed if key.key == "f")
        await pilot.hover(KeysFooter, offset=(failures.start, 0))
        await pilot.pause()
        assert footer.tooltip == failures.tooltip and failures.tooltip.startswith("failed, then errored")
        hovered = footer.render_line(0)
        assert hovered.crop(failures.start, failures.end).text == " f Failures "
        assert {seg.style.bgcolor for seg in hovered.crop(failures.start, failures.end)} != {
            seg.style.bgcolor for seg in hovered.crop(help_key.start, help_key.end)
        }  # the key under the mouse is lit, as Textual's footer keys are
        await pilot.click(KeysFooter, offset=(help_key.start + 2, 0))
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_policy_dialog_buttons_are_reachable_at_80x24(build):
    app = build()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, SettingsModal)
        apply = app.screen.query_one("#apply")
        assert apply.region.bottom <= SMALL[1]
        await pilot.click("#apply")  # Pilot refuses a click outside the screen
        await pilot.pause()
        assert not isinstance(app.screen, SettingsModal)


def _luminance(color: Color) -> float:
    def channel(value: int) -> float:
        value_ = value / 255
        return value_ / 12.92 if value_ <= 0.03928 else ((value_ + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(a: Color, b: Color) -> float:
    """The WCAG 2 contrast ratio of two opaque colours."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


async def test_panes_and_tables_draw_in_theme_colours(build):
    """No terminal-default (SGR 39/49) cells: on a light theme they showed as white islands."""
    app = build()
    async with app.run_test(size=(120, 40)) as pilot:
        app.theme = "textual-light"
        screen = await open_stepper(pilot)
        await pilot.pause()
        pane = screen.query_one("#observation", TextPane)
        table = screen.query_one("#steps", LazyTable)
        for strip in (pane.render_line(0), pane.render_line(30), table.render_line(1), table.render_line(30)):
            segments: list[Segment] = list(strip)
            assert all(s.style is not None and s.style.bgcolor and s.style.color for s in segments), segments
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await pilot.pause()
            background = pane.background_colors[1]
            assert contrast(background + pane.styles.border_title_color, background) >= 4.5
            assert contrast(background + pane.styles.border_left[1], background) >= 3  # the pane's frame


async def test_another_formats_four_panes_are_tabs_at_80x24(build):
    """A 2x2 grid in 24 rows left each pane four lines: tabs, the action pane as the fourth."""
    app = build([str(DATA / "formats" / "openai_chat" / "synthetic_shapes.jsonl")])
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("down")
        screen = await open_stepper(pilot)
        assert "4 action" in str(screen.query_one("#pane-tabs", Static).render())
        await pilot.press("4")
        await pilot.pause()
        assert shown(screen, "action") and not shown(screen, "observation")
        assert screen.query_one("#action").outer_size.height >= 10


async def test_the_next_episode_keeps_the_hidden_list_and_the_tab(build):
    async with build().run_test(size=SMALL) as pilot:
        screen = await open_stepper(pilot)
        await pilot.press("backslash", "3", "escape")
        await pilot.pause()
        await pilot.press("down")
        screen = await open_stepper(pilot)
        assert screen.session_id == 1
        assert not screen.query_one("#steps").display
        assert shown(screen, "thinking") and screen.query_one("#thinking").has_focus
        await pilot.press("backslash")
        await pilot.pause()
        assert screen.query_one("#steps").display
