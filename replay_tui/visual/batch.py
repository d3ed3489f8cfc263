"""Batches of page pairs: where they come from, the one loop that scores them, and what a batch writes.

Pairs come from Design2Code's folder layout (:func:`discover_pairs`), the bundled pages
(:func:`bundled_pairs`) or a saved batch report (:func:`pairs_from_report`). :func:`score_pairs` scores
them with one scorer (one Chromium), one pair at a time or ``jobs`` at once, results in pair order;
``replay-tui visual --ref-dir --pred-dir [--jobs N]`` and the app's visual batch screen both run it.
Textual-free.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from replay_tui.sanitize import strip_control
from replay_tui.visual.models import (
    SCORE_COLUMNS,
    BatchReport,
    BatchRow,
    PairReport,
    as_mode,
    batch_means,
    renormalised_mean,
)
from replay_tui.visual.scores import RENORMALISED

if TYPE_CHECKING:
    from replay_tui.visual.pipeline import PairResult, VisualScorer

LABELS = {"final": "Final", "block": "Block", "text": "Text", "position": "Position", "color": "Color", "clip": "CLIP"}


@dataclass
class BatchPair:
    """One page pair of the batch and, once scored, its report and screenshots."""

    label: str
    ref: Path
    pred: Path
    status: str = "queued"  # queued | scoring | a models.Status
    report: PairReport | None = None
    shots: tuple[Path, Path] | None = None
    error: str | None = None

    def value(self, key: str) -> float | None:
        if self.report is None:
            return None
        return getattr(self.report.result.scores, key)

    def batch_row(self) -> BatchRow | None:
        if self.report is None:
            return None
        return BatchRow.from_report(self.label, self.report)


def page_names(ref_dir: Path) -> list[str]:
    """The reference pages of a Design2Code folder: its ``*.html`` files (hidden ones aside), by name."""
    return sorted(p.name for p in Path(ref_dir).glob("*.html") if not p.name.startswith("."))


def discover_pairs(ref_dir: Path, pred_dirs: Sequence[Path]) -> tuple[list[BatchPair], list[str]]:
    """Design2Code's layout: ``ref_dir/<name>.html`` against ``pred_dir/<name>.html`` for each pred dir.

    Returns the pairs and the ``pred_dir/name`` entries with no generated page."""
    names = page_names(ref_dir)
    pairs: list[BatchPair] = []
    missing: list[str] = []
    for pred_dir in pred_dirs:
        prefix = f"{Path(pred_dir).name}/" if len(pred_dirs) > 1 else ""
        for name in names:
            pred = Path(pred_dir) / name
            if pred.is_file():
                pairs.append(BatchPair(f"{prefix}{Path(name).stem}", Path(ref_dir) / name, pred))
            else:
                missing.append(f"{Path(pred_dir).name}/{name}")
    return pairs, missing


def bundled_pairs() -> list[BatchPair]:
    """The bundled Design2Code pages against each of their generated variants."""
    from replay_tui.visual.examples import EXAMPLES_DIR, VARIANTS

    return discover_pairs(EXAMPLES_DIR / "ref", [EXAMPLES_DIR / v for v in VARIANTS])[0]


def pairs_from_report(report: BatchReport) -> list[BatchPair]:
    """Rows of a saved batch report (``replay-tui visual --ref-dir --pred-dir --json`` or the batch screen's export).

    Rows and pairs are written in the same order; a report without pairs is scored again."""
    if len(report.pairs) == len(report.rows):
        return [
            BatchPair(
                Path(row.name).stem if row.name.endswith(".html") else row.name,
                Path(saved.ref),
                Path(saved.pred),
                status=saved.result.status,
                report=saved,
            )
            for row, saved in zip(report.rows, report.pairs, strict=True)
        ]
    return [
        BatchPair(Path(row.name).stem, Path(report.ref_dir) / row.name, Path(report.pred_dir) / row.name)
        for row in report.rows
    ]


def score_pairs(
    scorer: VisualScorer,
    pairs: Sequence[BatchPair],
    mode: str,
    *,
    indices: Iterable[int] | None = None,
    cancel: threading.Event | None = None,
    on_start: Callable[[int], object] | None = None,
    on_scored: Callable[[int, PairReport, PairResult], object] | None = None,
    on_error: Callable[[int, Exception], object] | None = None,
    jobs: int = 1,
) -> None:
    """Score ``pairs`` (or those at ``indices``) with ``scorer``, ``jobs`` pairs at a time.

    ``on_start(index)`` runs before a pair is scored, ``on_scored(index, report, result)`` after. With
    ``on_error``, a pair that raises (``on_scored`` included) is reported there and the batch goes on;
    without it the exception ends the batch. A set ``cancel`` event starts no further pair (the pairs
    already under way finish and are reported). The pairs themselves are not changed: the caller owns
    them (the batch screen changes them on its own thread).

    A reference page that several of the pairs share is rendered once for all of them (its renders are kept
    until its last pair is done: :class:`~replay_tui.visual.pipeline.SharedRenders`).

    With ``jobs`` > 1, up to ``jobs`` pairs are scored at once on worker threads that share the scorer:
    while one pair waits for Chromium (whose renderer and compositor processes run on every core), the
    next is planned, and another's blocks are extracted and matched. One shared browser, not one per
    worker: measured side by side (issue 14, interleaved runs of the 16 bundled pairs), a browser per
    worker cost 15-20 % more CPU (a second Chromium and driver) for the same wall time. Every callback still runs on the
    calling thread and in pair order (``on_start`` when a pair is handed to a worker, ``on_scored`` /
    ``on_error`` as soon as it and every pair before it are done), so reports are the sequential run's.
    """
    from replay_tui.visual.pipeline import SharedRenders
    from replay_tui.visual.report import score_and_report

    order = list(range(len(pairs)) if indices is None else indices)
    last_use = {_page_key(pairs[index].ref): index for index in order}
    shared = SharedRenders() if len(last_use) < len(order) else None

    def release(index: int) -> None:
        key = _page_key(pairs[index].ref)
        if shared is not None and last_use[key] == index:
            shared.release(key)

    if jobs <= 1:
        for index in order:
            if cancel is not None and cancel.is_set():
                break
            pair = pairs[index]
            if on_start is not None:
                on_start(index)
            try:
                report, result = score_and_report(scorer, pair.ref, pair.pred, mode, shared)
                release(index)
                if on_scored is not None:
                    on_scored(index, report, result)
            except Exception as exc:  # one bad page must not stop the batch
                release(index)
                if on_error is None:
                    raise
                on_error(index, exc)
        return

    def finish(index: int, future: Future) -> None:
        try:
            report, result = future.result()
            release(index)
            if on_scored is not None:
                on_scored(index, report, result)
        except Exception as exc:
            release(index)
            if on_error is None:
                raise
            on_error(index, exc)

    def running() -> list[Future]:
        return [future for _, future in pending if not future.done()]

    # A worker takes the next pair as soon as it is free, not when the oldest pair is done (a slow
    # pair held the other worker idle); what is done is reported in pair order, from the front, and
    # at most ``ahead`` pairs wait for a slower one before them (their results hold page renders).
    ahead = 4 * jobs
    pending: deque[tuple[int, Future]] = deque()
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="replay-tui-visual") as pool:
        try:
            for index in order:
                if cancel is not None and cancel.is_set():
                    break
                while True:
                    while pending and pending[0][1].done():
                        finish(*pending.popleft())
                    busy = running()
                    if len(busy) < jobs and len(pending) < ahead:
                        break
                    wait(busy if len(pending) < ahead else [pending[0][1]], return_when=FIRST_COMPLETED)
                if cancel is not None and cancel.is_set():
                    break
                pair = pairs[index]
                if on_start is not None:
                    on_start(index)
                pending.append((index, pool.submit(score_and_report, scorer, pair.ref, pair.pred, mode, shared)))
            while pending:
                finish(*pending.popleft())
        finally:
            for _, future in pending:  # an exception ended the batch: start nothing more
                future.cancel()


def _page_key(path: Path) -> str:
    return str(Path(path).resolve())


def batch_report(pairs: Sequence[BatchPair], mode: str, missing: Sequence[str] = ()) -> BatchReport:
    """The scored pairs as the document ``replay-tui visual --ref-dir --pred-dir --json`` writes."""
    rows = [row for row in (p.batch_row() for p in pairs) if row is not None]
    ref_dirs = sorted({str(p.ref.parent) for p in pairs})
    pred_dirs = sorted({str(p.pred.parent) for p in pairs})
    return BatchReport(
        ref_dir=", ".join(ref_dirs),
        pred_dir=", ".join(pred_dirs),
        mode=as_mode(mode),
        rows=rows,
        means=batch_means(rows),
        missing=list(missing),
        pairs=[p.report for p in pairs if p.report is not None],
        sandbox=next((p.report.sandbox for p in pairs if p.report is not None), []),
    )


def batch_markdown(pairs: Sequence[BatchPair], order: Iterable[int], report: BatchReport, sort_key: str) -> str:
    """A Markdown table of the scored pairs in ``order`` (indices into ``pairs``), with the means; without CLIP
    also "Final (4 metrics, renormalised)", and why a pair ended with its status when it is not ok."""
    renormalised = renormalised_mean(report.rows)
    extra = [RENORMALISED] if renormalised is not None else []
    reasons = any(row.reason for row in report.rows)
    why = (" why |", " --- |") if reasons else ("", "")
    lines = [
        "## Visual batch",
        "",
        f"{len(report.rows)} pairs, {report.mode} mode, sorted by {sort_key}",
        "",
        "| pair | status | " + " | ".join([*(LABELS[k] for k in SCORE_COLUMNS), *extra]) + " |" + why[0],
        "| --- | --- | " + " | ".join("---:" for _ in [*SCORE_COLUMNS, *extra]) + " |" + why[1],
    ]
    for index in order:
        pair = pairs[index]
        if pair.report is None:
            continue
        cells = ["n/a" if pair.value(k) is None else f"{pair.value(k):.4f}" for k in SCORE_COLUMNS]
        scores = pair.report.result.scores
        if extra:
            cells.append("n/a" if scores.final_renormalised is None else f"{scores.final_renormalised:.4f}")
        if reasons:
            cells.append(_cell(pair.report.result.reason or ""))
        lines.append(f"| {_cell(pair.label)} | {pair.status} | " + " | ".join(cells) + " |")
    mean_cells = ["n/a" if report.means[k] is None else f"{report.means[k]:.4f}" for k in SCORE_COLUMNS]
    if renormalised is not None:
        mean_cells.append(f"{renormalised:.4f}")
    lines.append("| **mean** | | " + " | ".join(mean_cells) + " |" + (" |" if reasons else ""))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(strip_control(text).split()).replace("|", "\\|")
