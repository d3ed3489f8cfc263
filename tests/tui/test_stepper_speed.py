"""What makes a step change cheap in the stepper (issue 14), asserted as behaviour: the panes
follow the cursor in the same call, a step shown again reuses its lines and wrapped rows, the
footer is built once, and the GC's frozen view of the heap lasts exactly as long as the screen."""

from __future__ import annotations

import gc

from textual.widgets._footer import FooterKey

from replay_tui.tui.app import ReplayApp
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.widgets.footer import KeysFooter, shown_bindings
from replay_tui.tui.widgets.text_pane import TextPane, lines_from_text
from tests.tui.conftest import SIZE


async def _open(app, pilot) -> StepperScreen:
    await pilot.press("enter")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, StepperScreen)
    return screen


async def test_the_panes_follow_the_cursor_in_the_same_call(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        index = next(n for n, row in enumerate(screen.source.rows) if n and row.decision)
        screen.steps_table.cursor = index  # no message hop, no await: the panes are already there
        entry = screen.source.rows[index].entry
        observation = screen.query_one("#observation", TextPane)
        assert observation.text == "\n".join(line.text for line in lines_from_text(entry.observation))
        assert screen.query_one("#thinking", TextPane).text == entry.thinking.replace("\r\n", "\n")
        assert f"step {screen.source.rows[index].label}" in str(screen.query_one("#step-detail").render())


async def test_a_step_shown_again_reuses_its_lines_and_wrapped_rows(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        panes = [screen.query_one(f"#{name}", TextPane) for name in ("observation", "prompt", "thinking")]
        first = [(pane._lines, pane._wrap) for pane in panes]
        assert all(wrap is not None for _, wrap in first)
        await pilot.press("j")
        await pilot.pause()
        assert [pane._lines for pane in panes] != [lines for lines, _ in first]
        await pilot.press("k")
        await pilot.pause()
        for pane, (lines, wrap) in zip(panes, first, strict=True):
            assert pane._lines is lines and pane._wrap is wrap


async def test_the_footer_shows_its_keys_at_once_and_is_not_rebuilt_for_the_same_keys(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        footer = screen.query_one(KeysFooter)
        keys = footer.placed
        assert {key.description for key in keys} >= {"Replay", "Zoom", "Find", "Back"}
        assert all(key.display in footer.render_line(0).text for key in keys)
        assert footer._shown == shown_bindings(screen)
        await pilot.press("tab", "tab")  # focus moves: the bindings are published again, the same keys
        await pilot.pause()
        assert footer.placed == keys and footer.placed[0] is keys[0]  # not laid out again


async def test_the_footer_is_one_widget_styled_once(build, monkeypatch):
    """The footer draws its keys itself: Textual's Footer mounted and styled a FooterKey per binding (~30),
    and its compact watcher restyled each twice more, a third of a screen's first frame."""
    restyled: list[object] = []
    update_styles = ReplayApp.update_styles

    def spy(app, node, animate: bool = True) -> None:
        if isinstance(node, FooterKey) or any(isinstance(up, KeysFooter) for up in node.ancestors):
            restyled.append(node)
        update_styles(app, node, animate)

    monkeypatch.setattr(ReplayApp, "update_styles", spy)
    for size in (SIZE, (80, 24)):  # not compact, then compact
        app = build()
        async with app.run_test(size=size) as pilot:
            screen = await _open(app, pilot)
            footer = screen.query_one(KeysFooter)
            assert not footer.children and not list(app.query(FooterKey).results())
            assert footer.compact == (size != SIZE)
            first = footer.placed[0]
            assert footer.render_line(0).text.startswith(
                f"{first.display} {first.description} " if footer.compact else f" {first.display} {first.description} "
            )
        assert restyled == [], size


async def test_the_gc_view_is_frozen_while_the_stepper_is_open_and_unfrozen_after(build):
    app = build()
    before = gc.get_freeze_count()
    async with app.run_test(size=SIZE) as pilot:
        await _open(app, pilot)
        assert gc.get_freeze_count() > before
        await pilot.press("escape")
        await pilot.pause()
        assert gc.get_freeze_count() == 0


async def test_a_reopened_stepper_has_its_status_and_pane_sizes_from_the_start(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        status = str(app.screen_stack[-2].query_one("#status").render())
        assert status.strip()
        await pilot.press("escape")
        await pilot.pause()
        sizes = StepperScreen._pane_sizes[(app.size, False, False)]
        assert set(sizes) == {"observation", "prompt", "thinking"}
        again = StepperScreen(0, app)
        await app.push_screen(again)
        assert str(again.query_one("#status").render()) == status  # composed with it, before the App's refresh
        await pilot.pause()
        for name, size in sizes.items():
            pane = again.query_one(f"#{name}", TextPane)
            assert pane.content_region.size == size and pane.size_hint is None  # dropped at the first resize
            assert pane._wrap is not None and pane._wrap.width == pane.scrollable_content_region.width
        assert screen is not again


async def test_stepping_keeps_the_panes_in_place_and_costs_no_layout_once_every_height_was_seen(build, monkeypatch):
    """The detail keeps the rows a taller step needed while stepping (the panes below do not jump),
    so going over steps already seen lays nothing out again (a layout re-renders the whole screen);
    a verdict or note arriving fits the detail to its content again."""
    from textual.screen import Screen

    app = build()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        await pilot.pause(0.5)  # the replay's verdicts are in
        detail = screen.query_one("#step-detail")
        panes = screen.query_one("#panes")

        def needed() -> int:
            width = detail.content_region.width
            return min(9, detail.get_content_height(detail.container_size, screen.size, width))

        steps = len(screen.source.rows)
        tops, heights, needs = [], [], []
        for _ in range(steps - 1):
            await pilot.press("j")
            await pilot.pause()
            tops.append(panes.region.y)
            heights.append(detail.content_region.height)
            needs.append(needed())
        assert needs != sorted(needs)  # some step needs fewer rows than one before it...
        assert tops == sorted(tops) and heights == sorted(heights)  # ...yet nothing moves up while stepping
        assert all(height >= need for height, need in zip(heights, needs, strict=True))
        layouts: list[int] = []
        original = Screen._refresh_layout

        def counted(self, *args, **kwargs):
            layouts.append(1)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        for key in "k" * (steps - 1) + "j" * (steps - 1):
            await pilot.press(key)
            await pilot.pause()
        assert layouts == []
        screen.show_detail()  # not stepping (a verdict or note arrived): the detail fits its content
        await pilot.pause()
        assert detail.content_region.height == needed() < heights[-1]
