"""The visual batch screen: every page pair of a batch with its five scores and final, sortable by each.

With pairs from exactly two generated folders (A, the first, and B) the screen also compares them
(:func:`replay_tui.visual.compare.compare_batches`): a Δ final column on each B row (B − A of that
page's final score) and, once scoring is done, a summary under the table with each score's A and B
means, B − A with its 95 % paired bootstrap interval, and how many pages got better, worse or stayed.

Pairs are scored in a thread worker with one Chromium for the whole batch, one at a time or ``jobs``
at once (``--jobs N``); rows fill in, in pair order, as results arrive. Each pair's screenshots are
kept as PNGs in a temp folder so opening a pair in the inspector (enter) is instant and shows
exactly what was scored. The pairs and the scoring loop are :mod:`replay_tui.visual.batch`'s,
shared with ``replay-tui visual --ref-dir --pred-dir``.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from replay_tui.fileio import atomic_write_text
from replay_tui.sanitize import one_line, strip_control
from replay_tui.tui.app_base import STYLES, ToolApp
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import Column, LazyTable, SortActions
from replay_tui.visual.batch import LABELS, BatchPair, batch_markdown, batch_report, score_pairs
from replay_tui.visual.compare import VisualCompareError, VisualComparison, compare_batches
from replay_tui.visual.explain import screenshots
from replay_tui.visual.models import SCORE_COLUMNS, BatchReport, BatchRow, PairReport, batch_means, renormalised_mean
from replay_tui.visual.scores import RENORMALISED

if TYPE_CHECKING:
    from replay_tui.visual.pipeline import PairResult

SCORES = SCORE_COLUMNS
SORTABLE = ("pair", *SCORES)


class PairStarted(Message):
    def __init__(self, index: int):
        super().__init__()
        self.index = index


class PairScored(Message):
    def __init__(
        self, index: int, report: PairReport | None, shots: tuple[Path, Path] | None, error: str | None = None
    ):
        super().__init__()
        self.index = index
        self.report = report
        self.shots = shots
        self.error = error


class BatchDone(Message):
    def __init__(self, error: str | None = None):
        super().__init__()
        self.error = error


def _fmt(value: float | None) -> Text:
    if value is None:
        return Text("—", style="dim")
    return Text(f"{value:.3f}", style="bold red" if value < 0.5 else "")


def _fmt_delta(value: float | None) -> Text:
    if value is None:
        return Text("")
    return Text(f"{value:+.3f}", style="green" if value > 0 else "red" if value < 0 else "dim")


DELTA_COLUMN = Column("delta", "Δ final", 8, justify="right")


def page_key(pair: BatchPair) -> str:
    """The page a pair is about, the same in every generated folder (its file name without .html)."""
    return pair.pred.stem


class BatchSource:
    """LazyTable rows: the pairs in display order."""

    columns: Sequence[Column] = (
        Column("pair", "pair", flex=True),
        Column("status", "status", 11),
        *(Column(key, LABELS[key], 8, justify="right") for key in SCORES),
    )

    def __init__(self, pairs: list[BatchPair], order: list[int], deltas: dict[int, float | None] | None = None):
        self.pairs = pairs
        self.order = order
        self.deltas = deltas
        """With two generated folders: B − A of the final score by pair index (B's pairs only)."""
        if deltas is not None:
            self.columns = (*self.columns, DELTA_COLUMN)

    def __len__(self) -> int:
        return len(self.order)

    def pair(self, index: int) -> BatchPair:
        return self.pairs[self.order[index]]

    def row_style(self, index: int) -> str:
        status = self.pair(index).status
        return "" if status in ("ok", "queued", "scoring") else "yellow"

    def cells(self, index: int) -> Sequence[Text]:
        pair = self.pair(index)
        status = Text(
            pair.status, style={"ok": "green", "scoring": "italic", "queued": "dim"}.get(pair.status, "yellow")
        )
        cells = [Text(strip_control(pair.label)), status, *(_fmt(pair.value(key)) for key in SCORES)]
        if self.deltas is not None:
            cells.append(_fmt_delta(self.deltas.get(self.order[index])))
        return cells


class VisualBatchScreen(SortActions, Screen):
    """Page pairs of a batch with the five scores and the final score; enter opens the inspector."""

    SORT_KEYS = SORTABLE
    CSS_PATH = STYLES / "batch.tcss"
    DEFAULT_CSS = """
    VisualBatchScreen #batch-delta { height: auto; padding: 0 1; border-top: solid $panel; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort", "Sort", id="visual.sort"),
        Binding("S", "reverse_sort", "Reverse", show=False, id="visual.reverse_sort"),
        Binding("r", "rescore", "Score again", id="visual.rescore"),
        Binding("e", "export", "Export", id="visual.export"),
        Binding("ctrl+x", "cancel", "Cancel scoring", show=False, id="visual.cancel"),
        Binding("escape", "close", "Back", id="visual.close"),
    ]

    def __init__(
        self,
        pairs: list[BatchPair],
        *,
        mode: str = "compat",
        export_dir: Path | None = None,
        timeout_ms: int = 30_000,
        clip_scorer: object | None = None,
        missing: Sequence[str] = (),
        quit_on_close: bool = False,
        jobs: int = 1,
    ):
        super().__init__(id="visual-batch")
        self.jobs = max(1, jobs)
        self.pairs = pairs
        self.mode = mode
        self.export_dir = export_dir or Path.cwd()
        self.timeout_ms = timeout_ms
        self.clip_scorer = clip_scorer
        self.missing = list(missing)
        self.quit_on_close = quit_on_close
        self.scoring = False
        self.cancel_event = threading.Event()
        self._cache = Path(tempfile.mkdtemp(prefix="replay-tui-visual-"))
        folders = list(dict.fromkeys(pair.pred.parent for pair in pairs))
        self.folders: list[Path] | None = folders if len(folders) == 2 else None
        """The two generated folders (A, then B) when the pairs come from exactly two; else None."""
        self.comparison: VisualComparison | None = None
        self.comparison_error: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="batch-title")
        yield LazyTable(id="batch-pairs")
        if self.folders is not None:
            yield Static(id="batch-delta")
        yield Static(id="batch-failed")  # why the whole batch stopped (no Chromium), until it is scored again
        yield Static(id="batch-status")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.rebuild()
        self.query_one("#batch-pairs", LazyTable).focus()
        if self.missing:
            self.notify(
                f"{len(self.missing)} reference page(s) without a generated page: " + ", ".join(self.missing[:5]),
                severity="warning",
                markup=False,
            )
        self.start_scoring([i for i, p in enumerate(self.pairs) if p.report is None])
        if not self.scoring:  # everything was scored already (a saved batch): compare at once
            self.update_comparison()

    def on_unmount(self) -> None:
        self.cancel_event.set()
        shutil.rmtree(self._cache, ignore_errors=True)

    # -- rows ---------------------------------------------------------------------------------
    @property
    def table(self) -> LazyTable:
        return self.query_one("#batch-pairs", LazyTable)

    def order(self) -> list[int]:
        key = self.sort_key
        indices = list(range(len(self.pairs)))
        if key == "pair":
            indices.sort(key=lambda i: self.pairs[i].label, reverse=self.reverse)
            return indices
        scored = [i for i in indices if self.pairs[i].value(key) is not None]
        unscored = [i for i in indices if self.pairs[i].value(key) is None]
        scored.sort(key=lambda i: (self.pairs[i].value(key), self.pairs[i].label), reverse=self.reverse)
        return scored + unscored  # worst first; pairs without the score at the end either way

    def selected(self) -> BatchPair | None:
        source = self.table.source
        if not isinstance(source, BatchSource) or not len(source):
            return None
        return source.pair(self.table.cursor)

    def rebuild(self) -> None:
        """Re-sort, keeping the cursor on the same pair."""
        current = self.selected()
        order = self.order()
        cursor = 0
        if current is not None:
            cursor = order.index(self.pairs.index(current))
        self.table.set_source(BatchSource(self.pairs, order, self.pair_deltas()), cursor=cursor)
        self.update_title()
        self.update_delta_summary()

    def update_title(self) -> None:
        scored = [p for p in self.pairs if p.report is not None]
        text = Text()
        text.append("Visual batch", style="bold")
        arrow = "↓" if self.reverse else "↑"
        text.append(
            f"  {len(self.pairs)} pairs · {len(scored)} scored · {self.mode} mode · sort: {self.sort_key} {arrow}",
            style="dim",
        )
        text.append("\nmean ", style="dim")
        means = batch_means([row for row in (p.batch_row() for p in scored) if row is not None])
        for key in SCORES:
            mean = means[key]
            text.append(f"{LABELS[key]} ", style="dim")
            text.append("—    " if mean is None else f"{mean:.4f}  ", style="bold")
        renormalised = renormalised_mean([row for row in (p.batch_row() for p in scored) if row is not None])
        if renormalised is not None:
            text.append(f"{RENORMALISED} ", style="dim")
            text.append(f"{renormalised:.4f}", style="bold")
        self.query_one("#batch-title", Static).update(text)
        self.update_status()

    def update_status(self) -> None:
        """Scoring progress; else why the selected pair ended as it did (when not ok); else the keys."""
        pair = self.selected()
        reason = None if pair is None else (pair.report.result.reason if pair.report else pair.error)
        if self.scoring:
            scored = sum(p.report is not None for p in self.pairs)
            status = Text(f"scoring {scored}/{len(self.pairs)} in headless Chromium · ctrl+x cancels")
        elif pair is not None and reason:
            status = Text(f"why {pair.status}: ", style="bold")
            status.append(strip_control(one_line(reason)))
        else:
            status = Text("enter opens a pair in the inspector · s sorts · e exports")
        self.query_one("#batch-status", Static).update(status)

    @on(LazyTable.Highlighted, "#batch-pairs")
    def _highlighted(self) -> None:
        self.update_status()

    # -- two folders: B − A -------------------------------------------------------------------
    def folder_reports(self) -> tuple[BatchReport, BatchReport] | None:
        """Folder A's and folder B's scored pairs as two batch reports, rows named by page (not
        ``folder/page``) so :func:`compare_batches` pairs them up; None without exactly two folders."""
        if self.folders is None:
            return None
        reports = []
        for folder in self.folders:
            mine = [pair for pair in self.pairs if pair.pred.parent == folder]
            report = batch_report(mine, self.mode)
            rows = [BatchRow.from_report(page_key(p), p.report) for p in mine if p.report is not None]
            reports.append(report.model_copy(update={"rows": rows, "means": batch_means(rows)}))
        return reports[0], reports[1]

    def pair_deltas(self) -> dict[int, float | None] | None:
        """B − A of the final score for each of folder B's pairs (by index), None when a side is unscored."""
        if self.folders is None:
            return None
        folder_a, folder_b = self.folders
        finals_a = {page_key(p): p.value("final") for p in self.pairs if p.pred.parent == folder_a}
        deltas: dict[int, float | None] = {}
        for index, pair in enumerate(self.pairs):
            if pair.pred.parent != folder_b:
                continue
            first, second = finals_a.get(page_key(pair)), pair.value("final")
            deltas[index] = None if first is None or second is None else second - first
        return deltas

    def update_comparison(self) -> None:
        """Compare folder B with folder A on the scored pages (after scoring; fast for tens of pages)."""
        reports = self.folder_reports()
        if reports is None:
            return
        try:
            self.comparison, self.comparison_error = compare_batches(*reports), None
        except VisualCompareError as exc:
            self.comparison, self.comparison_error = None, str(exc)
        self.update_delta_summary()

    def update_delta_summary(self) -> None:
        if self.folders is None:
            return
        folder_a, folder_b = (strip_control(folder.name) for folder in self.folders)
        text = Text()
        text.append("B − A", style="bold")
        text.append(f"  B = {folder_b} · A = {folder_a}", style="dim")
        comparison = self.comparison
        if comparison is None:
            waiting = self.comparison_error or "waiting for both folders to be scored"
            text.append(f" · {strip_control(waiting)}", style="yellow" if self.comparison_error else "dim")
            self.query_one("#batch-delta", Static).update(text)
            return
        text.append(f" · {comparison.pages} pages · 95 % paired bootstrap interval", style="dim")
        if self.scoring:
            text.append(" · scoring again…", style="italic")
        for line in (
            comparison.warnings
            + ([f"only in A: {', '.join(comparison.only_a[:5])}"] if comparison.only_a else [])
            + ([f"only in B: {', '.join(comparison.only_b[:5])}"] if comparison.only_b else [])
        ):
            text.append(f"\n{strip_control(line)}", style="yellow")
        for score in comparison.scores:
            style = "green" if score.low > 0 else "red" if score.high < 0 else ""
            text.append(f"\n{LABELS[score.score]:<9}", style="bold")
            text.append(f"A {score.mean_a:.4f}  B {score.mean_b:.4f}  ")
            text.append(f"B − A {score.difference:+.4f} [{score.low:+.4f}, {score.high:+.4f}]", style=style)
            text.append(f"  better {score.better} · worse {score.worse} · same {score.same}", style="dim")
        self.query_one("#batch-delta", Static).update(text)

    # -- scoring ------------------------------------------------------------------------------
    def start_scoring(self, indices: list[int]) -> None:
        if not indices:
            return
        if self.scoring:
            self.notify("scoring is already running (ctrl+x cancels it)", severity="warning")
            return
        for index in indices:
            self.pairs[index].status = "queued"
        self.query_one("#batch-failed", Static).display = False
        self.cancel_event = threading.Event()
        self.scoring = True
        self._score_worker(indices, self.cancel_event)
        self.update_title()
        self.update_delta_summary()

    @work(thread=True, exclusive=True, exit_on_error=False, group="visual-batch")
    def _score_worker(self, indices: list[int], cancel: threading.Event) -> None:
        from replay_tui.visual.pipeline import VisualScorer

        def scored(index: int, report: PairReport, result: PairResult) -> None:
            shots = []
            for side, image in zip(("ref", "pred"), screenshots(result), strict=True):
                path = self._cache / f"{index}.{side}.png"
                image.save(path, compress_level=1)
                shots.append(path)
            self.post_message(PairScored(index, report, (shots[0], shots[1])))

        try:
            with VisualScorer(timeout_ms=self.timeout_ms, clip_scorer=self.clip_scorer) as scorer:
                score_pairs(
                    scorer,
                    self.pairs,
                    self.mode,
                    indices=indices,
                    cancel=cancel,
                    on_start=lambda index: self.post_message(PairStarted(index)),
                    on_scored=scored,
                    on_error=lambda index, exc: self.post_message(
                        PairScored(index, None, None, f"{type(exc).__name__}: {exc}")
                    ),
                    jobs=self.jobs,
                )
        except Exception as exc:  # Chromium did not start
            self.post_message(BatchDone(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(BatchDone())

    @on(PairStarted)
    def _pair_started(self, message: PairStarted) -> None:
        self.pairs[message.index].status = "scoring"
        self.table.refresh_rows()

    @on(PairScored)
    def _pair_scored(self, message: PairScored) -> None:
        pair = self.pairs[message.index]
        if message.error or message.report is None:
            pair.status, pair.error = "error", message.error
            self.notify(f"{pair.label}: {strip_control(message.error or 'failed')}", severity="error", markup=False)
        else:
            pair.report, pair.shots, pair.error = message.report, message.shots, None
            pair.status = message.report.result.status
        self.rebuild()

    @on(BatchDone)
    def _batch_done(self, message: BatchDone) -> None:
        self.scoring = False
        reason = strip_control(one_line(message.error)) if message.error else None
        for pair in self.pairs:
            if pair.status in ("queued", "scoring"):
                # the batch stopped (Chromium did not start): each pair left says so, none waits for good
                pair.status, pair.error = ("error", reason) if reason else ("queued", pair.error)
        if reason:
            banner = self.query_one("#batch-failed", Static)
            banner.update(Text(f"⚠ scoring failed: {reason} · r scores the selected pair again", style="bold red"))
            banner.display = True
            self.notify(reason, title="Scoring failed", severity="error", markup=False)
        elif self.cancel_event.is_set():
            self.notify("scoring cancelled", severity="warning")
        self.rebuild()
        self.update_comparison()

    # -- actions ------------------------------------------------------------------------------
    @on(LazyTable.HeaderClicked, "#batch-pairs")
    def _header_clicked(self, event: LazyTable.HeaderClicked) -> None:
        self.sort_by(self.table.source.columns[event.column].key)

    def action_cancel(self) -> None:
        if self.scoring:
            self.cancel_event.set()
            self.notify("cancelling after the current pair…", timeout=2)

    def action_rescore(self) -> None:
        pair = self.selected()
        if pair is not None:
            self.start_scoring([self.pairs.index(pair)])
            self.table.refresh_rows()

    def action_close(self) -> None:
        if self.quit_on_close:
            # The first screen of a standalone app: esc goes back, and there is nowhere to go; q quits.
            self.notify("this is the first screen: q quits", timeout=2)
        else:
            self.app.pop_screen()

    @on(LazyTable.Selected, "#batch-pairs")
    def _open(self) -> None:
        from replay_tui.tui.visual.inspector import InspectorScreen, InspectTarget

        pair = self.selected()
        if pair is None:
            return
        target = InspectTarget(
            str(pair.ref),
            str(pair.pred),
            mode=self.mode,
            report=pair.report,
            shots=pair.shots,
            timeout_ms=self.timeout_ms,
            clip_scorer=self.clip_scorer,
            export_dir=self.export_dir,
        )
        self.app.push_screen(InspectorScreen(target))

    def batch_report(self) -> BatchReport:
        return batch_report(self.pairs, self.mode, self.missing)

    def action_export(self) -> None:
        """The batch as ``visual --json`` writes it, and a Markdown table in the current order."""
        report = self.batch_report()
        if not report.rows:
            self.notify("nothing scored yet", severity="warning")
            return
        markdown = batch_markdown(self.pairs, self.order(), report, self.sort_key)
        try:
            atomic_write_text(self.export_dir / "visual-batch.json", report.model_dump_json(by_alias=True, indent=2))
            atomic_write_text(self.export_dir / "visual-batch.md", markdown)
        except OSError as exc:
            self.notify(f"export failed: {exc}", severity="error", markup=False)
            return
        self.notify(f"exported visual-batch.json and .md to {self.export_dir}", timeout=3, markup=False)


class VisualBatchApp(ToolApp):
    """``replay-tui visual --ref-dir A --pred-dir B --tui`` and ``replay-tui inspect BATCH.json``."""

    TITLE = "replay-tui visual batch"

    def __init__(
        self,
        pairs: list[BatchPair],
        *,
        mode: str = "compat",
        export_dir: Path | None = None,
        timeout_ms: int = 30_000,
        clip_scorer: object | None = None,
        missing: Sequence[str] = (),
        jobs: int = 1,
    ):
        super().__init__()
        self.batch = VisualBatchScreen(
            pairs,
            mode=mode,
            export_dir=export_dir,
            timeout_ms=timeout_ms,
            clip_scorer=clip_scorer,
            missing=missing,
            quit_on_close=True,
            jobs=jobs,
        )

    def on_mount(self) -> None:
        self.push_screen(self.batch)
