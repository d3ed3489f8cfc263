"""``replay-tui compare ... --tui``: a comparison in the debugger, without a replay session.

Two logs (an :class:`~replay_tui.compare.logs.OutcomeComparison`) open in
:class:`~replay_tui.tui.compare.logs.LogCompareScreen`; two replay runs (a
:class:`~replay_tui.compare.Comparison`) in the app's own compare view. Either is the same the CLI
prints and exports. ``q`` quits; ``esc`` goes back, and quits from the list.
"""

from __future__ import annotations

from pathlib import Path

from textual.screen import Screen

from replay_tui.compare import Comparison, OutcomeComparison
from replay_tui.tui.app_base import ToolApp
from replay_tui.tui.compare.logs import LogCompareScreen
from replay_tui.tui.compare.runs import CompareScreen


class _RunsCompareScreen(CompareScreen):
    def action_back(self) -> None:  # the list is the app's first screen: back is quitting
        self.app.exit()


class CompareApp(ToolApp):
    TITLE = "replay-tui compare"

    def __init__(
        self,
        comparison: OutcomeComparison | Comparison,
        *,
        export_dir: Path | None = None,
        out_dir: Path | None = None,
    ):
        super().__init__()
        self.comparison = comparison
        self.export_dir = export_dir
        self.out_dir = out_dir

    def root_screen(self) -> Screen:
        if isinstance(self.comparison, OutcomeComparison):
            return LogCompareScreen(self.comparison, self.export_dir, out_dir=self.out_dir)
        return _RunsCompareScreen(self.comparison, self.export_dir, out_dir=self.out_dir)

    def on_mount(self) -> None:
        self.push_screen(self.root_screen())
