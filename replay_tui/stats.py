"""The statistics reports and comparisons state: intervals and tests for accuracies of replays.

Run-to-run noise in agent evaluation is large, so a figure without its interval misleads:

- :func:`wilson` — the Wilson score interval of a proportion (well behaved at 0 %, 100 % and small n,
  unlike the normal approximation);
- :func:`mcnemar_exact` — the exact McNemar test of two paired runs: only the discordant steps
  (right in one run, wrong in the other) carry information, and under "no difference" each is
  equally likely to go either way, so the p-value is a two-sided binomial test at 1/2;
- :func:`paired_bootstrap` — the interval of the difference of two paired accuracies, resampling
  the pairs (or whole clusters of them, e.g. an episode's steps, which are not independent) with a
  fixed seed so reports stay deterministic;
- :class:`PairedStats` — all three for two runs on the same items, what every comparison states (replay
  runs on aligned steps and episodes, two agents' logs on paired tasks).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

MAX_DRAWS = 20_000_000
"""Items drawn over all resamples at most (about a tenth of a second); past it fewer resamples are
drawn, never fewer than 1,000: with that many clusters (20,000 episodes at 1,000 resamples) the
interval is narrow and its Monte-Carlo error a small part of it, while 10,000 resamples of 20,000
clusters took seconds per figure (a comparison states five)."""
RESAMPLES = 10_000
"""Bootstrap resamples of a comparison's figures unless asked otherwise."""
Z95 = 1.959963984540054
"""The two-sided 95 % normal quantile."""


def wilson(successes: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``successes / total``; ``(0.0, 1.0)`` when ``total`` is 0."""
    if total <= 0:
        return 0.0, 1.0
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= total else min(1.0, centre + half)
    return low, high


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` pairs right only in A and ``c`` right only in B.

    The binomial test of ``min(b, c)`` successes in ``b + c`` trials at 1/2: the distribution is
    symmetric, so the two-sided p-value (every outcome no likelier than the one seen) is twice the
    lower tail, at most 1. The tail is summed in floating point from its largest term down (each
    term the previous times ``i / (n - i + 1)``), so a million discordant pairs cost milliseconds
    and no scipy import (it equals ``scipy.stats.binomtest``'s to ~1e-12, tested)."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    n, low = b + c, min(b, c)
    if n == 0 or 2 * low == n:
        return 1.0
    # log of the largest tail term, P(X = low), then the terms below it by their ratios
    log_term = math.lgamma(n + 1) - math.lgamma(low + 1) - math.lgamma(n - low + 1) - n * math.log(2)
    total, term = 1.0, 1.0
    for i in range(low, 0, -1):
        term *= i / (n - i + 1)
        total += term
        if term < total * 1e-17:
            break
    return min(1.0, 2.0 * math.exp(log_term) * total)


@dataclass(frozen=True)
class PairedDifference:
    """B's accuracy minus A's on the same items, with a bootstrap interval."""

    difference: float
    low: float
    high: float
    resamples: int
    clusters: int


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """The difference ``mean(b) - mean(a)`` over paired items (booleans: right/wrong, or scores) and
    its percentile bootstrap interval.

    With ``clusters`` (one key per item, e.g. the episode of each step) whole clusters are
    resampled, so correlated items are not counted as independent evidence. Deterministic for a
    given ``seed``. ``resamples`` is lowered (never below 1,000) when the items are so many that
    drawing them all would take more than about a second."""
    return paired_bootstraps([(a, b, clusters)], resamples=resamples, confidence=confidence, seed=seed)[0]


def paired_bootstraps(
    samples: Sequence[tuple[Sequence[float], Sequence[float], Sequence[Hashable] | None]],
    *,
    resamples: int | Sequence[int] = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[PairedDifference]:
    """:func:`paired_bootstrap` of each ``(a, b, clusters)`` (``resamples``: one for all, or one per
    sample), each exactly as alone: samples with as many clusters and resamples draw the same indices
    from the seed, so those are drawn once for all of them (a comparison's steps by episode, its
    episodes and a state every episode has: one draw instead of three)."""
    import numpy as np  # here, not at the top: the app imports this module at launch for wilson()

    wanted = [resamples] * len(samples) if isinstance(resamples, int) else list(resamples)
    if len(wanted) != len(samples):
        raise ValueError("one resample count per sample")
    found: list[PairedDifference | None] = [None] * len(samples)
    groups: dict[tuple[int, int], list[tuple[int, Any, Any]]] = {}
    for position, ((a, b, clusters), asked) in enumerate(zip(samples, wanted, strict=True)):
        if len(a) != len(b):
            raise ValueError("paired samples must have the same length")
        n = len(a)
        if n == 0:
            found[position] = PairedDifference(0.0, 0.0, 0.0, 0, 0)
            continue
        delta = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
        keys = list(clusters) if clusters is not None else list(range(n))
        if len(keys) != n:
            raise ValueError("one cluster key per item")
        index: dict[Hashable, int] = {key: i for i, key in enumerate(dict.fromkeys(keys))}  # first-seen order
        ids = np.fromiter(map(index.__getitem__, keys), dtype=np.int64, count=n)
        k = len(index)
        sums = np.bincount(ids, weights=delta, minlength=k)
        sizes = None if k == n else np.bincount(ids, minlength=k).astype(np.float64)  # None: every size 1
        drawn = min(asked, max(1_000, MAX_DRAWS // k))  # huge uncounted sets: fewer, still plenty
        groups.setdefault((k, drawn), []).append((position, sums, sizes))
    alpha = (1 - confidence) / 2
    for (k, drawn), members in groups.items():
        rng = np.random.default_rng(seed)
        estimates = [np.empty(drawn) for _ in members]
        chunk = max(1, 4_000_000 // k)  # resamples drawn at once: memory stays a few tens of MB
        for start in range(0, drawn, chunk):
            stop = min(drawn, start + chunk)
            picks = rng.integers(0, k, size=(stop - start, k))
            for out, (_, sums, sizes) in zip(estimates, members, strict=True):
                # every cluster one item: each resample's size is k (exactly the sum of k ones)
                out[start:stop] = sums[picks].sum(axis=1) / (k if sizes is None else sizes[picks].sum(axis=1))
        for out, (position, sums, sizes) in zip(estimates, members, strict=True):
            observed = float(sums.sum() / (len(sums) if sizes is None else sizes.sum()))
            low, high = np.quantile(out, [alpha, 1 - alpha])
            found[position] = PairedDifference(observed, float(low), float(high), drawn, k)
    return [difference for difference in found if difference is not None]


class Rate(BaseModel):
    """``right`` of ``total`` with its Wilson 95 % interval."""

    right: int
    total: int
    rate: float
    low: float
    high: float

    @classmethod
    def of(cls, right: int, total: int) -> Rate:
        low, high = wilson(right, total)
        return cls(right=right, total=total, rate=right / total if total else 0.0, low=low, high=high)


class PairedStats(BaseModel):
    """A and B on the same items: their rates, the difference B − A with a paired bootstrap interval,
    and the exact McNemar test on the discordant items (right in one run only)."""

    n: int
    a: Rate
    b: Rate
    difference: float
    low: float
    high: float
    resamples: int
    clusters: int
    a_only: int
    """Right in A only (the regressions)."""
    b_only: int
    """Right in B only (the fixes)."""
    mcnemar_p: float


def paired_stats(
    a: Sequence[bool],
    b: Sequence[bool],
    clusters: Sequence[Hashable] | None = None,
    *,
    scores: tuple[Sequence[float], Sequence[float]] | None = None,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> PairedStats:
    """:class:`PairedStats` of paired right/wrong outcomes (``clusters``: one key per item, resampled
    whole). ``scores``: A's and B's score of each item (a log's reward), whose difference is bootstrapped
    in place of right/wrong's; the rates and McNemar's test stay on right/wrong."""
    return paired_stats_many([(a, b, clusters)], scores=[scores], resamples=resamples, seed=seed)[0]


def paired_stats_many(
    samples: Sequence[tuple[Sequence[bool], Sequence[bool], Sequence[Hashable] | None]],
    *,
    scores: Sequence[tuple[Sequence[float], Sequence[float]] | None] | None = None,
    resamples: int | Sequence[int] = RESAMPLES,
    seed: int = 0,
) -> list[PairedStats]:
    """:func:`paired_stats` of each ``(a, b, clusters)`` (with its ``scores``, one or None per sample),
    each as alone, their bootstraps drawn together (:func:`paired_bootstraps`)."""
    scored = list(scores) if scores is not None else [None] * len(samples)
    differences = paired_bootstraps(
        [
            (a, b, clusters) if given is None else (given[0], given[1], clusters)
            for (a, b, clusters), given in zip(samples, scored, strict=True)
        ],
        resamples=resamples,
        seed=seed,
    )
    found = []
    for (a, b, _), diff in zip(samples, differences, strict=True):
        n = len(a)
        if len(b) != n:
            raise ValueError("paired samples must have the same length")
        a_only = sum(map(operator.gt, map(bool, a), map(bool, b)))  # right in A, wrong in B
        b_only = sum(map(operator.lt, map(bool, a), map(bool, b)))
        found.append(
            PairedStats(
                n=n,
                a=Rate.of(sum(a), n),
                b=Rate.of(sum(b), n),
                difference=diff.difference,
                low=diff.low,
                high=diff.high,
                resamples=diff.resamples,
                clusters=diff.clusters,
                a_only=a_only,
                b_only=b_only,
                mcnemar_p=mcnemar_exact(a_only, b_only),
            )
        )
    return found
