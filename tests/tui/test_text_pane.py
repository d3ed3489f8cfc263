"""TextPane does no wrapping work before it has a size, and wraps at its real width once it has one."""

from __future__ import annotations

from textual.app import App, ComposeResult

from replay_tui.tui.widgets.text_pane import PaneLine, TextPane, _word_wrap, lines_from_text


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


class _Shown(App[None]):
    def compose(self) -> ComposeResult:
        yield TextPane("text", id="pane")


def _on_screen(pane: TextPane) -> list[str]:
    """The pane's rows as drawn (render_line), without trailing padding."""
    return [pane.render_line(y).text.rstrip() for y in range(pane.scrollable_content_region.height)]


async def test_wrapped_rows_are_kept_per_text_and_reused_when_only_the_selection_changes() -> None:
    app = _Shown()
    async with app.run_test(size=(60, 20)) as pilot:
        pane = app.query_one(TextPane)
        first = lines_from_text("alpha beta gamma " * 300)
        second = lines_from_text("delta " * 500)
        pane.set_lines(first)
        await pilot.pause()
        wrap = pane._wrap
        assert wrap is not None and wrap.width == pane.scrollable_content_region.width
        assert pane.find("gamma") == 300
        for number in (0, 150, 299):  # moving the current match re-wraps nothing
            pane.show_match(number)
            assert pane._wrap is wrap
        pane.set_lines(second)
        await pilot.pause()
        assert pane._wrap is not wrap
        pane.set_lines(first)  # the same text again (the stepper passes the same list): no new wrap
        assert pane._wrap is wrap


async def test_find_scrolls_to_a_match_in_the_middle_of_a_wrapped_line() -> None:
    app = _Shown()
    async with app.run_test(size=(60, 20)) as pilot:
        pane = app.query_one(TextPane)
        words = [f"w{n:04d}" for n in range(3000)]
        words[2222] = "NEEDLE"
        pane.set_lines(lines_from_text("head\n" + " ".join(words) + "\ntail"))
        await pilot.pause()
        assert pane.find("needle") == 1
        pane.show_match(0)
        await pilot.pause()
        assert pane.scroll_offset.y > 100  # deep inside the one long line
        shown = _on_screen(pane)
        assert any("NEEDLE" in row for row in shown)
        middle = pane.scrollable_content_region.height // 2
        assert "NEEDLE" in shown[middle]


async def test_a_resized_pane_rewraps_at_its_new_width_and_decides_its_scrollbar_with_the_wrap() -> None:
    app = _Shown()
    async with app.run_test(size=(60, 20)) as pilot:
        pane = app.query_one(TextPane)
        text = "word " * 2000
        pane.set_text(text)
        await pilot.pause()
        assert pane.show_vertical_scrollbar
        assert pane._wrap is not None and pane._wrap.width == pane.scrollable_content_region.width
        assert pane._wrap.rows == len(_word_wrap(text.rstrip("\n"), pane._wrap.width))
        await pilot.resize_terminal(100, 20)
        await pilot.pause()
        width = pane.scrollable_content_region.width
        assert width > 60 and pane._wrap.width == width
        assert pane._wrap.rows == len(_word_wrap(text, width))
        pane.set_text("short")  # fits: no scrollbar, wrapped at the full width straight away
        await pilot.pause()
        assert not pane.show_vertical_scrollbar
        assert pane._wrap.width == pane.scrollable_content_region.width == pane.content_region.width
        assert _on_screen(pane)[0] == "short"


async def test_redrawing_only_changed_rows_shows_what_a_full_redraw_shows() -> None:
    app = _Shown()
    async with app.run_test(size=(60, 20)) as pilot:
        pane = app.query_one(TextPane)
        header = "\n".join(f"shared line {n}" for n in range(8))
        texts = [lines_from_text(f"{header}\nstep {n} " + "x " * (40 * n)) for n in range(4)]
        pane.find("line 3")
        for lines in [*texts, texts[1], texts[0]]:
            pane.set_lines(lines)
            await pilot.pause()
            partial = app.export_screenshot()
            pane.refresh()
            await pilot.pause()
            assert app.export_screenshot() == partial


def test_non_ascii_lines_wrap_at_spaces_by_cells_like_ascii_ones() -> None:
    from rich.cells import cell_len

    from replay_tui.tui.widgets.text_pane import Wrap

    lines = [
        "Hi, I’m having an issue with my upcoming flight. I believe I added insurance to my booking.",
        "café " * 12 + "naïve",  # combining and precomposed accents
        "日本語の説明 " * 6,  # wide characters: two cells each
        "ü" * 50,  # one word wider than the pane: cut at the edge
    ]
    wrap = Wrap([PaneLine(text) for text in lines], 20)
    for number, text in enumerate(lines):
        rows = [text[start:end] for start, end in wrap.spans[number]]
        assert "".join(rows) == text
        assert all(cell_len(row.rstrip(" ")) <= 20 for row in rows)
        if number < 3:  # every row but the last ends at a space: no word is cut
            assert all(row.endswith(" ") for row in rows[:-1]), rows
    assert [len(row) for row in (lines[3][a:b] for a, b in wrap.spans[3])] == [20, 20, 10]
