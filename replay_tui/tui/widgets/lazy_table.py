"""LazyTable: a keyboard-first table that renders only the rows on screen (Line API).

A DataTable materialises every row; a session browser over 100 000 episodes must not. The table
asks its source for the cells of visible rows only, so opening, sorting and filtering cost what
re-ordering a list of indices costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


@dataclass(frozen=True)
class Column:
    """A column: ``width`` cells, or the remaining width when ``flex``."""

    key: str
    label: str
    width: int = 10
    flex: bool = False
    justify: str = "left"


class TableSource(Protocol):
    """What a LazyTable displays: a row count and the cells (and style) of one row on demand."""

    columns: Sequence[Column]

    def __len__(self) -> int: ...

    def cells(self, index: int) -> Sequence[Text]: ...

    def row_style(self, index: int) -> str: ...


class EmptySource:
    columns: Sequence[Column] = ()

    def __len__(self) -> int:
        return 0

    def cells(self, index: int) -> Sequence[Text]:
        return ()

    def row_style(self, index: int) -> str:
        return ""


class SortActions:
    """For a screen over a sorted LazyTable: ``s`` cycles the sort key, ``S`` reverses, a header click
    sorts by that column (again: reversed). The screen lists ``SORT_KEYS`` and re-sorts in ``rebuild``."""

    SORT_KEYS: ClassVar[tuple[str, ...]] = ()
    sort_index: int = 0
    reverse: bool = False

    @property
    def sort_keys(self) -> tuple[str, ...]:
        """The keys ``s`` cycles through (``SORT_KEYS``; a screen whose columns vary overrides it)."""
        return self.SORT_KEYS

    @property
    def sort_key(self) -> str:
        return self.sort_keys[self.sort_index]

    def rebuild(self) -> None:
        raise NotImplementedError

    def after_sort(self) -> None:
        """Called once a new order is shown (a screen scrolls its table to the start here)."""

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(self.sort_keys)
        self.rebuild()
        self.after_sort()

    def action_reverse_sort(self) -> None:
        self.reverse = not self.reverse
        self.rebuild()
        self.after_sort()

    def sort_by(self, key: str) -> None:
        if key not in self.sort_keys:
            return
        index = self.sort_keys.index(key)
        if index == self.sort_index:
            self.reverse = not self.reverse
        self.sort_index = index
        self.rebuild()
        self.after_sort()


class LazyTable(ScrollView, can_focus=True):
    """A virtual table over a :class:`TableSource` with a row cursor."""

    ALLOW_MAXIMIZE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "cursor_down", "Down", show=False, id="table.down"),
        Binding("up,k", "cursor_up", "Up", show=False, id="table.up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="table.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="table.page_up"),
        Binding("home,g", "first", "First", show=False, id="table.first"),
        Binding("end,G", "last", "Last", show=False, id="table.last"),
        Binding("enter", "select", "Open", show=False, id="table.select"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "lazy-table--header",
        "lazy-table--cursor",
        "lazy-table--cursor-blurred",
    }
    DEFAULT_CSS = """
    LazyTable { height: 1fr; overflow-x: hidden; }
    LazyTable > .lazy-table--header { text-style: bold; background: $panel; }
    LazyTable > .lazy-table--cursor { background: $accent 60%; text-style: bold; }
    LazyTable > .lazy-table--cursor-blurred { background: $accent 25%; }
    """

    cursor = reactive(0, init=False)

    class RowMessage(Message):
        """A row event: ``index`` of ``table``."""

        def __init__(self, table: LazyTable, index: int):
            super().__init__()
            self.table = table
            self.index = index

        @property
        def control(self) -> LazyTable:
            return self.table

    class Highlighted(RowMessage):
        """The cursor moved to a row (or the rows were replaced)."""

    class Selected(RowMessage):
        """Enter (or a double click) on a row. Not a Highlighted: handlers dispatch along the message's
        class hierarchy, and opening a row must not redo the highlight's work."""

    class HeaderClicked(Message):
        def __init__(self, table: LazyTable, column: int):
            super().__init__()
            self.table = table
            self.column = column

        @property
        def control(self) -> LazyTable:
            return self.table

    def __init__(
        self,
        source: TableSource | None = None,
        *,
        header: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ):
        super().__init__(name=name, id=id, classes=classes)
        self.source: TableSource = source or EmptySource()
        self.show_header = header

    # -- data -------------------------------------------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self.source)

    def set_source(self, source: TableSource, *, cursor: int | None = None) -> None:
        """Show ``source``; keep the cursor (clamped) unless a new position is given."""
        self.source = source
        self._update_virtual_size()
        target = self.cursor if cursor is None else cursor
        self.set_cursor(max(0, min(target, self.row_count - 1)), force=True)
        self.refresh()

    def refresh_rows(self) -> None:
        """Redraw after the source's data changed in place (same rows)."""
        self._update_virtual_size()
        self.refresh()

    def visible_rows(self) -> range:
        """The indices of the rows on screen."""
        top = round(self.scroll_offset.y)
        return range(top, min(self.row_count, top + self._body_height))

    def _update_virtual_size(self) -> None:
        self.virtual_size = Size(self._width, self.row_count + (1 if self.show_header else 0))

    @property
    def _width(self) -> int:
        return self.scrollable_content_region.width

    def on_resize(self, event: events.Resize) -> None:
        self._update_virtual_size()

    # -- cursor -----------------------------------------------------------------------------
    def set_cursor(self, index: int, *, force: bool = False) -> None:
        index = max(0, min(index, self.row_count - 1)) if self.row_count else 0
        if index != self.cursor:
            self.cursor = index
        elif force:
            self.post_message(self.Highlighted(self, index))
        self.scroll_to_cursor()

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        self.post_message(self.Highlighted(self, new))

    @property
    def _body_height(self) -> int:
        # the content region, not the widget: borders and a scrollbar must not hide the cursor row
        return max(1, self.scrollable_content_region.height - (1 if self.show_header else 0))

    def show_start_and_cursor(self) -> None:
        """After a new order: the list's start on screen when the cursor fits on that first page,
        else the cursor on the last line (never left at the top, hiding the rows above it)."""
        self.scroll_to(y=0, animate=False, immediate=True)
        self.scroll_to_cursor()

    def scroll_to_cursor(self) -> None:
        top = round(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + self._body_height:
            self.scroll_to(y=self.cursor - self._body_height + 1, animate=False, immediate=True)

    def action_cursor_down(self) -> None:
        self.set_cursor(self.cursor + 1)

    def action_cursor_up(self) -> None:
        self.set_cursor(self.cursor - 1)

    def action_page_down(self) -> None:
        self.set_cursor(self.cursor + self._body_height)

    def action_page_up(self) -> None:
        self.set_cursor(self.cursor - self._body_height)

    def action_first(self) -> None:
        self.set_cursor(0)

    def action_last(self) -> None:
        self.set_cursor(self.row_count - 1)

    def action_select(self) -> None:
        if self.row_count:
            self.post_message(self.Selected(self, self.cursor))

    def on_click(self, event: events.Click) -> None:
        y = event.y
        if self.show_header and y == 0:
            self.post_message(self.HeaderClicked(self, self._column_at(event.x)))
            return
        index = round(self.scroll_offset.y) + y - (1 if self.show_header else 0)
        if 0 <= index < self.row_count:
            self.set_cursor(index)
            if event.chain >= 2:
                self.action_select()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # -- rendering --------------------------------------------------------------------------
    def _widths(self) -> list[int]:
        columns = self.source.columns
        width = self._width
        fixed = sum(c.width for c in columns if not c.flex) + max(0, len(columns) - 1)
        flex = [c for c in columns if c.flex]
        spare = max(4, width - fixed)
        return [c.width if not c.flex else max(4, spare // max(1, len(flex))) for c in columns]

    def _column_at(self, x: int) -> int:
        position = 0
        for index, width in enumerate(self._widths()):
            position += width + 1
            if x < position:
                return index
        return max(0, len(self.source.columns) - 1)

    def _line(self, cells: Sequence[Text], style: Style) -> Strip:
        widths = self._widths()
        line = Text(no_wrap=True, end="")
        for index, (column, width) in enumerate(zip(self.source.columns, widths, strict=False)):
            cell = cells[index].copy() if index < len(cells) else Text("")
            cell.no_wrap = True
            cell.truncate(width, overflow="ellipsis")
            if column.justify == "right":
                cell.pad_left(width - cell.cell_len)
            else:
                cell.pad_right(width - cell.cell_len)
            line.append_text(cell)
            if index < len(widths) - 1:
                line.append(" ")
        segments = list(line.render(self.app.console))
        strip = Strip(segments).crop_extend(0, self._width, None)
        return strip.apply_style(style) if style else strip

    def render_line(self, y: int) -> Strip:
        if self.show_header:
            if y == 0:
                header = self.get_component_rich_style("lazy-table--header")
                return self._line([Text(c.label) for c in self.source.columns], header)
            y -= 1
        index = round(self.scroll_offset.y) + y
        if index >= self.row_count:
            return Strip([Segment(" " * self._width)])
        style = Style.parse(self.source.row_style(index) or "none")
        if index == self.cursor:
            cursor = "lazy-table--cursor" if self.has_focus else "lazy-table--cursor-blurred"
            style = style + self.get_component_rich_style(cursor)
        return self._line(self.source.cells(index), style)
