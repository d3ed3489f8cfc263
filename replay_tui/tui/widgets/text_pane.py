"""TextPane: a scrollable, searchable text view that renders only its visible lines.

Observations can be hundreds of kilobytes. The pane wraps lines once per width (cached), draws
only what is on screen through the Line API, and highlights find matches itself, because a
virtualised view cannot be searched by the terminal. Text is always literal: it never goes
through Rich markup, and terminal control characters are stripped before display.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from replay_tui.sanitize import strip_control


@dataclass(frozen=True)
class PaneLine:
    """One logical line and the style it is drawn with (e.g. a role header)."""

    text: str
    style: str = ""


@dataclass(frozen=True)
class _Row:
    line: int
    start: int
    end: int


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
    TextPane { border: round $panel; padding: 0 1; }
    TextPane:focus { border: round $accent; }
    TextPane > .text-pane--match { background: $warning 40%; }
    TextPane > .text-pane--current { background: $warning; color: $background; text-style: bold; }
    TextPane > .text-pane--empty { color: $text-muted; text-style: italic; }
    """

    def __init__(self, title: str = "", *, name: str | None = None, id: str | None = None, classes: str | None = None):
        super().__init__(name=name, id=id, classes=classes)
        self.border_title = title
        self._lines: list[PaneLine] = []
        self._rows: list[_Row] = []
        self._wrap_width = -1
        self._placeholder = ""
        self.matches: list[tuple[int, int, int]] = []  # (line, start, end)
        self._by_line: dict[int, list[int]] = {}
        self.current_match = -1
        self._query = ""
        self._anchor: int | None = None  # a logical line kept at the top until the user moves

    # -- content ----------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self._lines)

    def set_lines(self, lines: Iterable[PaneLine], *, placeholder: str = "", top_line: int | None = None) -> None:
        """Show ``lines``, scrolled to the top, or with logical line ``top_line`` at the top (kept
        there when the pane is re-wrapped, until a find match is shown)."""
        self._lines = list(lines)
        self._placeholder = placeholder
        self._wrap_width = -1
        self._anchor = top_line or None
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.find(self._query)
        self._rewrap()

    def set_text(self, text: str | None, *, placeholder: str = "") -> None:
        self.set_lines(lines_from_text(text) if text else [], placeholder=placeholder)

    def _rewrap(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:
            # not laid out yet: wrapping at width 1 would cost a row per character of a 200 KB
            # observation for nothing; the first resize (or render) wraps at the real width
            return
        if width == self._wrap_width:
            return
        rows: list[_Row] = []
        for index, line in enumerate(self._lines):
            text = line.text
            if not text:
                rows.append(_Row(index, 0, 0))
                continue
            if text.isascii():
                rows.extend(_Row(index, start, end) for start, end in _word_wrap(text, width))
                continue
            start = 0
            for chunk in chop_cells(text, width):
                rows.append(_Row(index, start, start + len(chunk)))
                start += len(chunk)
        self._rows = rows
        self._wrap_width = width
        self.virtual_size = Size(width, len(rows))
        if self._anchor is not None:
            top = next((number for number, row in enumerate(rows) if row.line >= self._anchor), 0)
            self.scroll_to(y=top, animate=False, immediate=True)
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._rewrap()

    # -- find -------------------------------------------------------------------------------
    def find(self, query: str) -> int:
        """Highlight every case-insensitive occurrence of ``query``; returns the count."""
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
        self.refresh()
        return len(self.matches)

    def show_match(self, number: int) -> None:
        """Make match ``number`` current and scroll it into view (-1 clears the current one)."""
        self.current_match = number
        if 0 <= number < len(self.matches):
            self._anchor = None
            self._rewrap()
            line, start, _ = self.matches[number]
            for row_index, row in enumerate(self._rows):
                if row.line == line and row.start <= start < max(row.end, row.start + 1):
                    height = self.scrollable_content_region.height
                    self.scroll_to(y=max(0, row_index - height // 2), animate=False, immediate=True)
                    break
        self.refresh()

    # -- rendering --------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        self._rewrap()
        width = self.scrollable_content_region.width
        index = round(self.scroll_offset.y) + y
        if not self._lines and self._placeholder and y == 0:
            text = Text(self._placeholder, style=self.get_component_rich_style("text-pane--empty"))
            return Strip(list(text.render(self.app.console))).crop_extend(0, width, None)
        if index >= len(self._rows):
            return Strip([Segment(" " * width)])
        row = self._rows[index]
        line = self._lines[row.line]
        text = Text(line.text[row.start : row.end], style=line.style, no_wrap=True, end="")
        numbers = self._by_line.get(row.line)
        if numbers:
            match_style = self.get_component_rich_style("text-pane--match")
            current_style = self.get_component_rich_style("text-pane--current")
            for number in numbers:
                _, m_start, m_end = self.matches[number]
                if m_end <= row.start or m_start >= row.end:
                    continue
                style = current_style if number == self.current_match else match_style
                text.stylize(style, max(0, m_start - row.start), min(row.end, m_end) - row.start)
        strip = Strip(list(text.render(self.app.console)), cell_len(text.plain))
        return strip.crop_extend(0, width, None)
