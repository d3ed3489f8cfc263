"""TextPane: a scrollable, searchable text view that renders only its visible lines.

Observations can be hundreds of kilobytes. The pane wraps lines once per (text, width) and keeps
the result (a :class:`Wrap`: where each logical line's rows start, and the spans of the few lines
that wrap; no object per row), so stepping back to a step or moving a find match costs nothing.
It draws only what is on screen through the Line API, and highlights find matches itself, because
a virtualised view cannot be searched by the terminal. Text is always literal: it never goes
through Rich markup, and terminal control characters are stripped before display.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.markup import escape
from textual.scroll_view import ScrollView
from textual.strip import Strip

from replay_tui.sanitize import in_line, strip_control, unsafe_in_line


@dataclass(frozen=True)
class PaneLine:
    """One logical line and the style it is drawn with (e.g. a role header). Its text is often a
    log's: whatever a terminal would act on (a sequence, a tab, a newline) is removed as it is made."""

    text: str
    style: str = ""

    def __post_init__(self) -> None:
        if not self.text.isprintable() and unsafe_in_line(self.text):  # isprintable: the fast no
            object.__setattr__(self, "text", in_line(self.text))


def lines_from_text(text: str, style: str = "") -> list[PaneLine]:
    """Split untrusted text into display lines: control characters stripped, tabs expanded."""
    clean = strip_control((text or "").replace("\r\n", "\n")).expandtabs(4)
    return [PaneLine(line, style) for line in clean.split("\n")]


def _word_wrap(text: str, width: int) -> list[tuple[int, int]]:
    """(start, end) spans of an ASCII line wrapped at spaces, hard-cut when a word is too long."""
    spans = []
    start, length = 0, len(text)
    while length - start > width:
        cut = text.rfind(" ", start + 1, start + width + 1)
        end = cut + 1 if cut > start else start + width
        spans.append((start, end))
        start = end
    spans.append((start, length))
    return spans


class Wrap:
    """``lines`` wrapped at ``width``: row ``starts[i]`` is the first of logical line ``i`` (one more
    entry than lines: the last is the row count), and ``spans[i]`` the (start, end) of each row of
    a line that takes more than one. A line that fits takes one row and no entry."""

    __slots__ = ("spans", "starts", "width")

    def __init__(self, lines: Sequence[PaneLine], width: int):
        starts = [0]
        spans: dict[int, list[tuple[int, int]]] = {}
        total = 0
        for index, line in enumerate(lines):
            text = line.text
            if len(text) <= width and text.isascii():
                total += 1
            else:
                wrapped = _word_wrap(text, width) if text.isascii() else _unicode_wrap(text, width)
                if len(wrapped) > 1:
                    spans[index] = wrapped
                total += len(wrapped)
            starts.append(total)
        self.width = width
        self.starts = starts
        self.spans = spans

    @property
    def rows(self) -> int:
        return self.starts[-1]

    def row(self, number: int) -> tuple[int, int, int | None]:
        """(logical line, start, end) of row ``number`` (end None: to the end of the line)."""
        line = bisect_right(self.starts, number) - 1
        wrapped = self.spans.get(line)
        if wrapped is None:
            return line, 0, None
        start, end = wrapped[number - self.starts[line]]
        return line, start, end

    def row_of(self, line: int, offset: int) -> int:
        """The row showing character ``offset`` of logical line ``line``."""
        wrapped = self.spans.get(line)
        first = self.starts[line]
        if wrapped is None:
            return first
        for number, (start, end) in enumerate(wrapped):
            if start <= offset < max(end, start + 1):
                return first + number
        return first + len(wrapped) - 1


_WORDS = re.compile(r"[^ ]+ *| +")


def _unicode_wrap(text: str, width: int) -> list[tuple[int, int]]:
    """(start, end) spans of a line with non-ASCII characters wrapped at spaces by terminal cells
    (wide characters take two, combining ones none), as Rich wraps; a word wider than the pane is
    cut at ``width`` cells. Trailing spaces may run past the edge (they are cropped when drawn)."""
    if cell_len(text) <= width:
        return [(0, len(text))]
    spans: list[tuple[int, int]] = []
    start = used = 0
    for match in _WORDS.finditer(text):
        begin, word = match.start(), match.group()
        word_cells = cell_len(word.rstrip(" "))
        if used + word_cells <= width:
            used += cell_len(word)
            continue
        if begin > start:  # the word starts a new row
            spans.append((start, begin))
            start, used = begin, 0
        if word_cells <= width:
            used = cell_len(word)
            continue
        bare = word.rstrip(" ")
        chunks = chop_cells(bare, width)  # too wide for any row: cut it at the edge
        for chunk in chunks[:-1]:
            spans.append((start, start + len(chunk)))
            start += len(chunk)
        used = cell_len(chunks[-1]) + len(word) - len(bare)
    spans.append((start, len(text)))
    return spans


class TextPane(ScrollView, can_focus=True):
    """A read-only text pane with soft wrapping and find highlights."""

    ALLOW_MAXIMIZE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down", "scroll_down", "Scroll down", show=False, id="pane.down"),
        Binding("up", "scroll_up", "Scroll up", show=False, id="pane.up"),
        Binding("pagedown,space", "page_down", "Page down", show=False, id="pane.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="pane.page_up"),
        Binding("home", "scroll_home", "Top", show=False, id="pane.top"),
        Binding("end", "scroll_end", "Bottom", show=False, id="pane.bottom"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {"text-pane--match", "text-pane--current", "text-pane--empty"}
    DEFAULT_CSS = """
    TextPane {
        border: round $foreground-muted; padding: 0 1; background: $background; color: $foreground;
        border-title-color: $foreground;
    }
    TextPane:focus { border: heavy $border; border-title-color: $foreground; border-title-style: bold; }
    TextPane > .text-pane--match { background: $warning 40%; }
    TextPane > .text-pane--current { background: $warning; color: $background; text-style: bold; }
    TextPane > .text-pane--empty { color: $text-muted; text-style: italic; }
    """

    def __init__(self, title: str = "", *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.border_title = title
        self._lines: Sequence[PaneLine] = []
        self._wrap: Wrap | None = None  # self._lines wrapped at the current width (None: not yet)
        self._wraps: OrderedDict[tuple[int, int], tuple[Sequence[PaneLine], Wrap]] = OrderedDict()
        self._placeholder = ""
        self.matches: list[tuple[int, int, int]] = []  # (line, start, end)
        self._by_line: dict[int, list[int]] = {}
        self.current_match = -1
        self._query = ""
        self._anchor: int | None = None  # a logical line kept at the top until the user moves
        self._title_set: tuple[str, str | None] | None = None  # (title given, border_title then)
        self.size_hint: Size | None = None
        """The content size the pane expects from its first layout (a screen opened again): the
        text is wrapped for it and the scrollbar set before that layout, so the first frame is
        complete. Dropped at the first resize; a wrong hint only costs the re-wrap it avoids."""
        self._drawn_for: tuple[Size, bool] | None = None  # (size, scrollbar) render_line last checked
        self._draw_width = 0

    WRAPS_KEPT: ClassVar[int] = 8
    """Wrapped texts a pane keeps (per text and width), so stepping back to a step re-wraps nothing."""

    # -- content ----------------------------------------------------------------------------
    def set_title(self, title: str) -> None:
        """Set the border title: assigning ``border_title`` redraws the whole pane, even to the
        same title, so this assigns only when the title changes."""
        if self._title_set is not None and self._title_set == (title, self.border_title):
            return
        # titles carry the log's own words (an event's type): shown as written, never as markup
        self.border_title = escape(strip_control(title))
        self._title_set = (title, self.border_title)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self._lines)

    @property
    def _wrap_width(self) -> int:
        """The width the text is wrapped at (-1: not wrapped yet)."""
        return self._wrap.width if self._wrap is not None else -1

    def set_lines(self, lines: Iterable[PaneLine], *, placeholder: str = "", top_line: int | None = None) -> None:
        """Show ``lines``, scrolled to the top, or with logical line ``top_line`` at the top (kept
        there when the pane is re-wrapped, until a find match is shown). A list is kept as given
        (not copied): passing the same list again reuses its wrapped rows."""
        before = self._screen_rows()
        self._lines = lines if isinstance(lines, list) else list(lines)
        self._placeholder = placeholder
        self._wrap = None
        self._drawn_for = None
        self._anchor = top_line or None
        self.scroll_to(0, 0, animate=False, immediate=True)
        self._search(self._query)
        self._rewrap(refresh=False)
        self._refresh_changed(before)

    def set_text(self, text: str | None, *, placeholder: str = "") -> None:
        self.set_lines(lines_from_text(text) if text else [], placeholder=placeholder)

    def _wrapped(self, width: int) -> Wrap:
        """The lines wrapped at ``width``: from the cache when this list was wrapped at it before."""
        key = (id(self._lines), width)
        cached = self._wraps.get(key)
        if cached is not None and cached[0] is self._lines:
            self._wraps.move_to_end(key)
            return cached[1]
        wrap = Wrap(self._lines, width)
        self._wraps[key] = (self._lines, wrap)  # the list is held, so its id is not reused
        while len(self._wraps) > self.WRAPS_KEPT:
            self._wraps.popitem(last=False)
        return wrap

    def _target_width(self) -> int:
        """The width to wrap at: the content width, less the vertical scrollbar when the wrapped
        text will need one. Decided here, before the layout, so showing or hiding the scrollbar
        never re-wraps the text (and repaints) a second time."""
        region = self.content_region.size
        if region.width <= 0:
            if self.size_hint is None:
                return 0
            region = self.size_hint
        full = region.width
        if full <= 0:
            return 0
        styles = self.styles
        bar = styles.scrollbar_size_vertical
        if styles.overflow_y == "hidden" or not bar:
            return full
        narrow = max(1, full - bar)
        if styles.overflow_y == "scroll" or len(self._lines) > region.height:
            return narrow
        return full if self._wrapped(full).rows <= region.height else narrow

    def _screen_rows(self) -> tuple[tuple[int, int], list[object]] | None:
        """What the pane shows now: (wrap width, top row) and a key per row on screen (its text,
        style and find highlights); None when it is not wrapped or not laid out yet."""
        wrap = self._wrap
        height = self.scrollable_content_region.height
        if wrap is None or height <= 0:
            return None
        top = round(self.scroll_offset.y)
        rows: list[object] = []
        if not self._lines:
            rows.append(self._placeholder)
        for index in range(top, min(top + height, wrap.rows)):
            number, start, end = wrap.row(index)
            line = self._lines[number]
            numbers = self._by_line.get(number, ())
            highlights = tuple((self.matches[n][1], self.matches[n][2], n == self.current_match) for n in numbers)
            rows.append((line.text[start:end], line.style, highlights))
        rows.extend([None] * (height - len(rows)))
        return (wrap.width, top), rows

    def _refresh_changed(self, before: tuple[tuple[int, int], list[object]] | None) -> None:
        """Redraw the rows on screen that differ from ``before`` (all of them when the width or the
        scroll position changed): stepping between texts that share their first screen (a system
        prompt, a page header) redraws only what changed."""
        after = self._screen_rows()
        if before is None or after is None or before[0] != after[0] or len(before[1]) != len(after[1]):
            self.refresh()
            return
        width = self.size.width
        for y, (old, new) in enumerate(zip(before[1], after[1], strict=True)):
            if old != new:
                self.refresh(Region(0, y, width, 1))

    def _rewrap(self, *, refresh: bool = True) -> None:
        width = self._target_width()
        if width <= 0:
            # not laid out yet: wrapping at width 1 would cost a row per character of a 200 KB
            # observation for nothing; the first resize (or render) wraps at the real width
            return
        if self._wrap is not None and self._wrap.width == width:
            return
        wrap = self._wrap = self._wrapped(width)
        size = Size(width, wrap.rows)
        if self.container_size:
            # Show or hide the scrollbar and size its thumb now, with the new text, so they are in
            # the same frame; the layout a new virtual size asks for would do the same a frame
            # later. A layout is asked for only when the scrollbar comes or goes (the text was
            # wrapped for that: see _target_width), not for every text.
            self.set_reactive(ScrollView.virtual_size, size)
            self._scroll_update(size)
        else:
            self.virtual_size = size
            if self.size_hint is not None:  # arranged with (or without) its scrollbar from the start
                self.show_vertical_scrollbar = width < self.size_hint.width
        if self._anchor is not None:
            top = wrap.starts[self._anchor] if self._anchor < len(self._lines) else 0
            self.scroll_to(y=top, animate=False, immediate=True)
        if refresh:
            self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self.size_hint = None
        self._drawn_for = None
        self._rewrap()

    # -- find -------------------------------------------------------------------------------
    def find(self, query: str) -> int:
        """Highlight every case-insensitive occurrence of ``query``; returns the count."""
        count = self._search(query)
        self.refresh()
        return count

    def _search(self, query: str) -> int:
        self._query = query
        self.matches = []
        self._by_line = {}
        self.current_match = -1
        if query:
            pattern = re.compile(re.escape(query), re.IGNORECASE)
            for index, line in enumerate(self._lines):
                for match in pattern.finditer(line.text):
                    self._by_line.setdefault(index, []).append(len(self.matches))
                    self.matches.append((index, match.start(), match.end()))
        return len(self.matches)

    def show_match(self, number: int) -> None:
        """Make match ``number`` current and scroll it into view (-1 clears the current one)."""
        self.current_match = number
        if 0 <= number < len(self.matches):
            self._anchor = None
            self._rewrap()
            if self._wrap is not None:
                line, start, _ = self.matches[number]
                row = self._wrap.row_of(line, start)
                height = self.scrollable_content_region.height
                self.scroll_to(y=max(0, row - height // 2), animate=False, immediate=True)
        self.refresh()

    # -- rendering --------------------------------------------------------------------------
    def _line_width(self) -> int:
        """The width lines are drawn at; re-wraps first if the size or the scrollbar changed (the
        resize event comes after the frame that first draws at the new size)."""
        drawn_for = (self.outer_size, self.show_vertical_scrollbar)
        if drawn_for != self._drawn_for:
            self._rewrap()
            self._draw_width = self.scrollable_content_region.width
            self._drawn_for = (self.outer_size, self.show_vertical_scrollbar)
        return self._draw_width

    def render_line(self, y: int) -> Strip:
        width = self._line_width()
        base = self.visual_style.rich_style  # theme colours: no terminal-default (SGR 39/49) cells
        index = round(self.scroll_offset.y) + y
        if not self._lines and self._placeholder and y == 0:
            text = Text(self._placeholder, style=self.get_component_rich_style("text-pane--empty"))
            return Strip(list(text.render(self.app.console))).crop_extend(0, width, None).apply_style(base)
        wrap = self._wrap
        if wrap is None or index >= wrap.rows:
            return Strip([Segment(" " * width, base)])
        number, start, end = wrap.row(index)
        line = self._lines[number]
        if end is None:
            end = len(line.text)
        chunk = line.text[start:end]
        numbers = self._by_line.get(number)
        if not numbers:
            # what Text(chunk, style=...).render() yields for a text without spans: one segment
            line_style = base + Style.parse(line.style) if line.style else base
            return Strip([Segment(chunk, line_style)], cell_len(chunk)).crop_extend(0, width, None).apply_style(base)
        text = Text(chunk, style=line.style, no_wrap=True, end="")
        match_style = self.get_component_rich_style("text-pane--match")
        current_style = self.get_component_rich_style("text-pane--current")
        for match_number in numbers:
            _, m_start, m_end = self.matches[match_number]
            if m_end <= start or m_start >= end:
                continue
            style: Style = current_style if match_number == self.current_match else match_style
            text.stylize(style, max(0, m_start - start), min(end, m_end) - start)
        strip = Strip(list(text.render(self.app.console)), cell_len(text.plain))
        return strip.crop_extend(0, width, None).apply_style(base)
