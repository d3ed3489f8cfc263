"""Two generated versions of the same pages, scored against the same references: which is better?

A visual batch (``replay-tui visual --ref-dir R --pred-dir DIR``) scores each generated page with
the Design2Code metrics. Two batches over the same references (model A's pages and model B's) pair
up by page name; for every score the comparison gives each pair's delta (B − A), the mean delta
with a paired bootstrap interval (:func:`replay_tui.stats.paired_bootstrap`: pages are the
resampled unit), and how many pages got better, worse or stayed the same. Pages only one batch
scored are left out and counted.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from replay_tui.stats import paired_bootstrap
from replay_tui.visual.models import SCORE_COLUMNS, BatchReport

TIE = 1e-9
"""Deltas smaller than this are ties (scores are floats computed the same way on both sides)."""


class VisualCompareError(ValueError):
    """Two batches that cannot be compared; the message is one line."""


class ScoreDelta(BaseModel):
    """One score over the shared pages: A's and B's means, B − A with its interval, wins and losses."""

    score: str
    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    better: int
    """Pages where B scored higher."""
    worse: int
    same: int


class PairDelta(BaseModel):
    """One page: each score in A and B (None when that side lacks it, e.g. CLIP without weights)."""

    name: str
    status_a: str
    status_b: str
    a: dict[str, float | None]
    b: dict[str, float | None]

    def delta(self, score: str) -> float | None:
        first, second = self.a.get(score), self.b.get(score)
        return None if first is None or second is None else second - first


class VisualComparison(BaseModel):
    """Batch B against batch A (the baseline) on the pages both scored."""

    ref_dir_a: str
    ref_dir_b: str
    pred_dir_a: str
    pred_dir_b: str
    pages: int
    only_a: list[str] = Field(default_factory=list)
    only_b: list[str] = Field(default_factory=list)
    scores: list[ScoreDelta] = Field(default_factory=list)
    """Every score both batches have on every shared page (CLIP only when both computed it)."""
    pairs: list[PairDelta] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    resamples: int = 0
    seed: int = 0

    def score(self, name: str) -> ScoreDelta | None:
        return next((s for s in self.scores if s.score == name), None)


def compare_batches(a: BatchReport, b: BatchReport, *, resamples: int = 10_000, seed: int = 0) -> VisualComparison:
    """B's pages against A's on the pages both batches scored (see the module docstring).

    Raises VisualCompareError when no page is shared. Batches scored against different reference
    folders are compared by page name with a warning (the same pages may live in two copies)."""
    rows_a = {row.name: row for row in a.rows}
    rows_b = {row.name: row for row in b.rows}
    shared = [name for name in rows_a if name in rows_b]
    if not shared:
        raise VisualCompareError(f"no page in common between {a.pred_dir} and {b.pred_dir}")
    warnings = []
    if a.ref_dir != b.ref_dir:
        warnings.append(f"reference folders differ ({a.ref_dir} vs {b.ref_dir}): pages paired by name")
    if a.mode != b.mode:
        warnings.append(f"scored in different modes ({a.mode} vs {b.mode})")
    pairs = [
        PairDelta(
            name=name,
            status_a=rows_a[name].status,
            status_b=rows_b[name].status,
            a={score: getattr(rows_a[name], score) for score in SCORE_COLUMNS},
            b={score: getattr(rows_b[name], score) for score in SCORE_COLUMNS},
        )
        for name in shared
    ]
    scores = []
    for score in SCORE_COLUMNS:
        deltas = [pair.delta(score) for pair in pairs]
        if any(delta is None for delta in deltas):
            continue  # a side without this score (CLIP without weights): no paired figure
        first = [float(pair.a[score]) for pair in pairs]  # type: ignore[arg-type]
        second = [float(pair.b[score]) for pair in pairs]  # type: ignore[arg-type]
        interval = paired_bootstrap(first, second, resamples=resamples, seed=seed)
        scores.append(
            ScoreDelta(
                score=score,
                mean_a=sum(first) / len(first),
                mean_b=sum(second) / len(second),
                difference=interval.difference,
                low=interval.low,
                high=interval.high,
                better=sum(1 for d in deltas if d is not None and d > TIE),
                worse=sum(1 for d in deltas if d is not None and d < -TIE),
                same=sum(1 for d in deltas if d is not None and abs(d) <= TIE),
            )
        )
    return VisualComparison(
        ref_dir_a=a.ref_dir,
        ref_dir_b=b.ref_dir,
        pred_dir_a=a.pred_dir,
        pred_dir_b=b.pred_dir,
        pages=len(shared),
        only_a=sorted(set(rows_a) - set(rows_b)),
        only_b=sorted(set(rows_b) - set(rows_a)),
        scores=scores,
        pairs=pairs,
        warnings=warnings,
        resamples=resamples,
        seed=seed,
    )
