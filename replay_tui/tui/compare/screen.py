"""The one compare view: what two runs share, row by row, whichever stack compared them.

:class:`ComparisonScreen` is the list both comparisons open on: a replay comparison's episodes
(:class:`~replay_tui.tui.compare.runs.CompareScreen`, its per-step verdict columns) or two logs' tasks
(:class:`~replay_tui.tui.compare.logs.LogCompareScreen`), with A, B and Δ, the figures above them, the
filters, ``]``/``[`` to the next row that changed, and ``e`` exporting the comparison in every report
format through the one writer of comparisons (:func:`replay_tui.export.comparison.write_comparison`).
A subclass says how its rows are listed (``make_source``), which changed (``changed``), and draws its
title and figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from replay_tui.export import FORMATS
from replay_tui.export.comparison import write_comparison
from replay_tui.tui.screens.modals import FORMAT_SUFFIX, ExportChoice, ExportModal
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import LazyTable

if TYPE_CHECKING:
    from replay_tui.compare import Comparison, OutcomeComparison

COMPARE_FORMAT_HELP = {
    "json": "JSON — the whole comparison, deterministic",
    "md": "Markdown — a pull-request comment: summary + regressions",
    "csv": "CSV — one row per aligned step, and the figures",
    "html": "HTML — one self-contained file with diffs",
    "junit": "JUnit XML — one failing test case per regression",
}


class CompareExportModal(ExportModal):
    """The export dialog with the comparison's formats (the same choice of format and path)."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Export the comparison", style="bold"))
            yield OptionList(*(Option(COMPARE_FORMAT_HELP[f], id=f) for f in FORMATS), id="export-format")
            yield Input(str(self.default_dir / f"compare-report{FORMAT_SUFFIX[self.fmt]}"), id="export-path")
            yield Label(Text("↑/↓ format · enter exports · esc cancels", style="dim"))


Compared = TypeVar("Compared", bound="Comparison | OutcomeComparison")


class ExportsComparison(Generic[Compared]):
    """``e`` on a compare screen (of replay runs or of logs): the comparison in any report format, via
    the export dialog and the one writer of comparisons."""

    comparison: Compared
    export_dir: Path
    out_dir: Path | None
    """The one folder an export may go to (a served app's ``--out-dir``), or None."""

    def action_export(self) -> None:
        def apply(choice: ExportChoice | None) -> None:
            if choice is None:
                return
            fmt, path = choice.fmt, choice.path
            try:
                written = write_comparison(path, self.comparison, fmt)
            except (OSError, ValueError) as exc:
                self.notify(f"export failed: {exc}", severity="error", markup=False)  # type: ignore[attr-defined]
                return
            regressions = self.comparison.regression_count
            self.notify(  # type: ignore[attr-defined]
                f"exported the comparison ({regressions} regressions) to {written}", timeout=3, markup=False
            )

        self.app.push_screen(CompareExportModal(self.export_dir, out_dir=self.out_dir), apply)  # type: ignore[attr-defined]


Row = TypeVar("Row")


class ComparisonScreen(ExportsComparison[Compared], Screen, Generic[Compared, Row]):
    """The rows two runs share with their figures; see the module's docstring."""

    PREFIX: ClassVar[str]
    """The ids of the title, figures and status lines: ``{PREFIX}-title``, ``-stats``, ``-status``."""
    TABLE_ID: ClassVar[str]
    NO_FURTHER: ClassVar[str]
    """The notice when ``]``/``[`` finds no further row that changed."""

    def __init__(
        self, comparison: Compared, export_dir: Path | None = None, *, out_dir: Path | None = None, id: str
    ) -> None:
        super().__init__(id=id)
        self.comparison = comparison
        self.export_dir = export_dir or Path.cwd()
        self.out_dir = out_dir
        self.filter_name = "all"
        self.source = self.make_source()

    def make_source(self) -> Any:
        """The rows under the current filter (a LazyTable source with ``rows``)."""
        raise NotImplementedError

    def changed(self, row: Row) -> bool:
        """A row ``]``/``[`` stops at."""
        raise NotImplementedError

    def update_title(self) -> None:
        raise NotImplementedError

    def stats_text(self) -> Text:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        yield Static(id=f"{self.PREFIX}-title")
        yield Static(id=f"{self.PREFIX}-stats")
        yield LazyTable(id=self.TABLE_ID)
        yield Static(id=f"{self.PREFIX}-status")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.table.set_source(self.source, cursor=0)
        self.table.focus()
        self.query_one(f"#{self.PREFIX}-stats", Static).update(self.stats_text())
        self.update_title()

    @property
    def table(self) -> LazyTable:
        return self.query_one(f"#{self.TABLE_ID}", LazyTable)

    def current_row(self) -> Row | None:
        rows: list[Row] = self.source.rows
        return rows[self.table.cursor] if rows else None

    def reload(self, keep: Row | None) -> None:
        """The rows listed again (a filter or group changed), the cursor kept on ``keep`` when still listed."""
        self.source = self.make_source()
        index = next((i for i, row in enumerate(self.source.rows) if row is keep), 0)
        self.table.set_source(self.source, cursor=index)
        self.update_title()

    # -- actions ----------------------------------------------------------------------------
    def action_filter(self, name: str) -> None:
        self.filter_name = "all" if self.filter_name == name else name
        self.reload(self.current_row())

    def action_next_change(self, direction: int) -> None:
        """Move to the next (previous) row that changed from A to B."""
        cursor = self.table.cursor
        rows = self.source.rows
        order = range(cursor + 1, len(rows)) if direction > 0 else range(cursor - 1, -1, -1)
        for index in order:
            if self.changed(rows[index]):
                self.table.set_cursor(index)
                return
        self.notify(self.NO_FURTHER, severity="warning", timeout=2)
