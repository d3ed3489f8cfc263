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
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


@dataclass(frozen=True)
class Column:
    """A column: ``width`` cells, or the remaining width when ``flex``.

    When the table is too narrow for every column and ``min_width`` of each flex column, fixed
    columns shrink to their ``min_width`` (None: never), then those with a ``drop`` rank hide,
    highest rank first (0: never hidden): the flex column (an instruction) keeps readable width.
    """

    key: str
    label: str
    width: int = 10
    flex: bool = False
    justify: str = "left"
    min_width: int | None = None
    drop: int = 0


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
    LazyTable { height: 1fr; overflow-x: hidden; background: $background; color: $foreground; }
    LazyTable > .lazy-table--header { text-style: bold; background: $panel; color: $foreground; }
    LazyTable > .lazy-table--cursor { background: $accent 60%; text-style: bold; }
    LazyTable > .lazy-table--cursor-blurred { background: $accent 25%; }
    """
    MARKER = "▶ "
    """The cursor row's gutter when ``marker`` is on: the cursor is not shown by colour alone."""

    cursor = reactive(0, init=False, repaint=False)  # watch_cursor redraws the two rows it changes

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
        marker: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ):
        super().__init__(name=name, id=id, classes=classes)
        self.source: TableSource = source or EmptySource()
        self.show_header = header
        self.marker = marker
        """A ``▶`` gutter on the cursor row (for monochrome terminals and colour-blind users)."""
        self._columns_layout: tuple[tuple[int, int], list[tuple[int, int]]] | None = None

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
        size = Size(self._width, self.row_count + (1 if self.show_header else 0))
        if size.height != self.virtual_size.height:
            self.virtual_size = size
        else:
            # Only the width, which never scrolls (overflow-x: hidden) nor sizes the table: set without
            # the layout (a whole screen laid out and drawn again) a new virtual size asks for, which every
            # screen with a table paid once more after its first frame.
            self.set_reactive(LazyTable.virtual_size, size)

    # -- cursor -----------------------------------------------------------------------------
    def set_cursor(self, index: int, *, force: bool = False) -> None:
        index = max(0, min(index, self.row_count - 1)) if self.row_count else 0
        if index != self.cursor:
            self.cursor = index
        elif force:
            self.post_message(self.Highlighted(self, index))
        self.scroll_to_cursor()

    def watch_cursor(self, old: int, new: int) -> None:
        # the two rows the cursor left and reached, not the whole table (every visible row drawn again on
        # each j/k); a cursor that leaves the screen scrolls it, and the scroll redraws the rest
        self._refresh_row(old)
        self._refresh_row(new)
        self.post_message(self.Highlighted(self, new))

    def _refresh_row(self, index: int) -> None:
        y = index - round(self.scroll_offset.y) + (1 if self.show_header else 0)
        if (1 if self.show_header else 0) <= y < self.scrollable_content_region.height:
            self.refresh(Region(0, y, self.scrollable_content_region.width, 1))

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
    def _gutter(self) -> int:
        return len(self.MARKER) if self.marker else 0

    def _widths(self) -> list[tuple[int, int]]:
        """(column index, width) of the columns shown at the current width (see :class:`Column`)."""
        columns = self.source.columns
        width = self._width - self._gutter()
        key = (width, id(columns))
        if self._columns_layout is not None and self._columns_layout[0] == key:
            return self._columns_layout[1]
        shown = list(range(len(columns)))
        sizes = {index: column.width for index, column in enumerate(columns) if not column.flex}
        flex = [index for index in shown if columns[index].flex]
        wanted = sum(columns[index].min_width or 4 for index in flex)

        def spare() -> int:
            return width - sum(sizes[index] for index in shown if index in sizes) - max(0, len(shown) - 1) - wanted

        for index in shown:
            column = columns[index]
            if spare() < 0 and not column.flex and column.min_width is not None:
                sizes[index] = max(column.min_width, sizes[index] + spare())
        for index in sorted((i for i in shown if columns[i].drop), key=lambda i: -columns[i].drop):
            if spare() >= 0:
                break
            shown.remove(index)
        rest = width - sum(sizes[index] for index in shown if index in sizes) - max(0, len(shown) - 1)
        each = max(4, rest // max(1, len(flex)))
        layout = [(index, each if columns[index].flex else sizes[index]) for index in shown]
        self._columns_layout = (key, layout)
        return layout

    def shown_columns(self) -> list[str]:
        """The keys of the columns shown at the current width."""
        return [self.source.columns[index].key for index, _ in self._widths()]

    def _column_at(self, x: int) -> int:
        position = self._gutter()
        layout = self._widths()
        for index, width in layout:
            position += width + 1
            if x < position:
                return index
        return layout[-1][0] if layout else 0

    def _line(self, cells: Sequence[Text], style: Style, gutter: str = "") -> Strip:
        columns = self.source.columns
        layout = self._widths()
        line = Text(gutter, no_wrap=True, end="")
        for position, (index, width) in enumerate(layout):
            cell = cells[index].copy() if index < len(cells) else Text("")
            cell.no_wrap = True
            cell.truncate(width, overflow="ellipsis")
            if columns[index].justify == "right":
                cell.pad_left(width - cell.cell_len)
            else:
                cell.pad_right(width - cell.cell_len)
            line.append_text(cell)
            if position < len(layout) - 1:
                line.append(" ")
        segments = list(line.render(self.app.console))
        strip = Strip(segments).crop_extend(0, self._width, None)
        # theme colours under every cell: no terminal-default (SGR 39/49) islands on a light theme
        return strip.apply_style(self.visual_style.rich_style + style)

    def render_line(self, y: int) -> Strip:
        if self.show_header:
            if y == 0:
                header = self.get_component_rich_style("lazy-table--header")
                return self._line([Text(c.label) for c in self.source.columns], header, " " * self._gutter())
            y -= 1
        index = round(self.scroll_offset.y) + y
        if index >= self.row_count:
            return Strip([Segment(" " * self._width, self.visual_style.rich_style)])
        style = Style.parse(self.source.row_style(index) or "none")
        gutter = " " * self._gutter()
        if index == self.cursor:
            cursor = "lazy-table--cursor" if self.has_focus else "lazy-table--cursor-blurred"
            style = style + self.get_component_rich_style(cursor)
            gutter = self.MARKER if self.marker else ""
        return self._line(self.source.cells(index), style, gutter)
