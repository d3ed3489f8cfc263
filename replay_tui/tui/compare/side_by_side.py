"""The one side-by-side screen: A and B at the same position, whichever stack compared them.

A replay comparison's steps of one episode (:class:`~replay_tui.tui.compare.runs.CompareStepperScreen`)
and two logs' aligned calls of one task (:class:`~replay_tui.tui.compare.logs.LogPairScreen`) are
the same view: a title, the rows both runs share, a line saying where the cursor is and how the two
differ there, and A's and B's panes side by side. ``]``/``[`` go through the sorted positions where
the runs diverge (flips, divergent calls); ``escape`` goes back. A subclass fills the title, the rows,
the position line and the panes, and says where the divergences are.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Static

from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import LazyTable
from replay_tui.tui.widgets.text_pane import TextPane

Position = tuple[int, int]
"""Where a row is among every row ``]``/``[`` can reach: (group, row), e.g. (episode, step)."""


@dataclass(frozen=True)
class SideIds:
    """The widget ids a side-by-side screen keeps (the ids its tests and styles know it by)."""

    title: str
    rows: str
    where: str
    a: str
    b: str


class SideBySideScreen(Screen):
    """Rows A and B share, the position line, A's and B's panes; see the module's docstring."""

    DEFAULT_CSS = """
    SideBySideScreen .sbs-title { height: auto; padding: 0 1; border-bottom: hkey $panel; }
    SideBySideScreen .sbs-rows { height: 1fr; }
    SideBySideScreen .sbs-where { height: auto; max-height: 8; padding: 0 1; background: $panel; }
    SideBySideScreen .sbs-sides { height: 1fr; }
    SideBySideScreen .sbs-sides TextPane { width: 1fr; }
    """
    IDS: ClassVar[SideIds]
    DIVERGENCE: ClassVar[str] = "divergence"
    """What a divergence is called in the notices (a replay comparison's are flips)."""
    NO_DIVERGENCE: ClassVar[str] = "the runs do not diverge"

    source: Any
    """The shown rows: a LazyTable source."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.landed = False
        """Whether the cursor was put on a divergence (on opening or by ``]``/``[``): until then
        ``]`` on a divergent row stays there, so the first ``]`` lands on the first divergence."""

    def compose(self) -> ComposeResult:
        ids = self.IDS
        yield Static(id=ids.title, classes="sbs-title")
        yield LazyTable(id=ids.rows, classes="sbs-rows")
        yield Static(id=ids.where, classes="sbs-where")
        with Horizontal(classes="sbs-sides"):
            yield TextPane("A", id=ids.a)
            yield TextPane("B", id=ids.b)
        yield KeysFooter()

    @property
    def rows_table(self) -> LazyTable:
        return self.query_one(f"#{self.IDS.rows}", LazyTable)

    @property
    def where(self) -> Static:
        return self.query_one(f"#{self.IDS.where}", Static)

    @property
    def panes(self) -> tuple[TextPane, TextPane]:
        return self.query_one(f"#{self.IDS.a}", TextPane), self.query_one(f"#{self.IDS.b}", TextPane)

    # -- what a subclass fills ----------------------------------------------------------------
    def divergences(self) -> list[Position]:
        """Every divergent position, sorted."""
        raise NotImplementedError

    def position(self) -> Position:
        """The cursor's position (one group of rows unless a subclass has several)."""
        return (0, self.rows_table.cursor)

    def go_to(self, position: Position) -> None:
        """Put the cursor at ``position`` (a subclass with several groups loads another one)."""
        self.rows_table.set_cursor(position[1])

    def show_row(self) -> None:
        """The position line and both panes for the row under the cursor."""
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------------
    @on(LazyTable.Highlighted)
    def _highlighted(self) -> None:
        self.show_row()

    def divergence_number(self) -> int | None:
        """The cursor's divergence, counted from 0 in :meth:`divergences`; None off them."""
        here, found = self.position(), self.divergences()
        index = bisect_left(found, here)
        return index if index < len(found) and found[index] == here else None

    def action_next_divergence(self, direction: int) -> None:
        """Go to the next (previous) divergent position."""
        found = self.divergences()
        if not found:
            self.notify(self.NO_DIVERGENCE, severity="warning", timeout=2)
            return
        here = self.position()
        if direction > 0:
            target = bisect_left(found, here) if not self.landed else bisect_right(found, here)
        else:
            target = bisect_left(found, here) - 1
        self.landed = True
        if not 0 <= target < len(found):
            self.notify(
                f"no {'further' if direction > 0 else 'earlier'} {self.DIVERGENCE}", severity="warning", timeout=2
            )
            return
        self.go_to(found[target])

    def action_back(self) -> None:
        self.app.pop_screen()
