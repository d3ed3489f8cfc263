"""Block matching: difflib cost, context bonus, Jonker-Volgenant, greedy merge search - fast and exact.

Same numbers as the reference's ``find_possible_merge`` (feeds scipy bit-identical matrices in the same
orientation, so ties break the same way), but:

* every ``SequenceMatcher`` ratio is computed once per (pred text, ref text) pair, reusing one matcher per
  reference text (``set_seq1``; the reference text's junk/popular analysis does not depend on the other side);
* a merge trial replaces two rows (or columns) of the current similarity matrix with one new row instead of
  rebuilding all n*m cells, and never deep-copies blocks;
* the bonus-0 context adjustment is skipped (it is exactly a no-op) and the final 0.1 bonus is vectorised with
  the reference's summation order.
"""

from __future__ import annotations

import difflib
import time
from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from replay_tui.visual.blocks import Block
from replay_tui.visual.models import OutOfTime

MERGE_GAIN = 0.05
CONSECUTIVE_BONUS = 0.1
WINDOW = 1


class RatioCache:
    """``SequenceMatcher(None, pred, ref, autojunk).ratio()``, memoised; the prediction is always ``a``."""

    def __init__(self, autojunk: bool = True) -> None:
        self.autojunk = autojunk
        self._ratios: dict[tuple[str, str], float] = {}
        self._matchers: dict[str, difflib.SequenceMatcher] = {}
        self.computed = 0

    def __call__(self, pred: str, ref: str) -> float:
        key = (pred, ref)
        value = self._ratios.get(key)
        if value is None:
            matcher = self._matchers.get(ref)
            if matcher is None:
                matcher = difflib.SequenceMatcher(None, "", ref, autojunk=self.autojunk)
                self._matchers[ref] = matcher
            matcher.set_seq1(pred)
            value = matcher.ratio()
            self._ratios[key] = value
            self.computed += 1
        return value

    def row(self, pred: str, refs: Sequence[str]) -> np.ndarray:
        return np.array([-self(pred, ref) for ref in refs], dtype=np.float64)

    def col(self, preds: Sequence[str], ref: str) -> np.ndarray:
        return np.array([-self(pred, ref) for pred in preds], dtype=np.float64)

    def matrix(self, preds: Sequence[str], refs: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(preds), len(refs)))
        for i, pred in enumerate(preds):
            for j, ref in enumerate(refs):
                out[i, j] = -self(pred, ref)
        return out


def merge_pair(first: Block, second: Block) -> Block:
    """Text joined by a space, union rectangle from the (x, y, w, h) extents, colour ``(c1 + c2) // 2``."""
    x1, y1, w1, h1 = first.bbox
    x2, y2, w2, h2 = second.bbox
    x_min = min(x1, x2)
    y_min = min(y1, y2)
    x_max = max(x1 + w1, x2 + w2)
    y_max = max(y1 + h1, y2 + h2)
    (r1, g1, b1), (r2, g2, b2) = first.color, second.color
    colour = ((r1 + r2) // 2, (g1 + g2) // 2, (b1 + b2) // 2)
    return Block(
        first.text + " " + second.text,
        (x_min, y_min, x_max - x_min, y_max - y_min),
        colour,
        first.sources + second.sources,
    )


def merge_by_list(blocks: list[Block], candidates: list[list]) -> list[Block]:
    """Apply sorted merge candidates best first, dropping any that touch an index already used."""
    pops: list[int] = []
    remaining = list(candidates)
    while remaining:
        i, j = remaining[0][0], remaining[0][1]
        blocks[i] = merge_pair(blocks[i], blocks[j])
        pops.append(j)
        remaining = [c for c in remaining[1:] if c[0] != i and c[1] != i and c[0] != j and c[1] != j]
    for index in sorted(pops, reverse=True):
        if index < len(blocks):
            blocks.pop(index)
    return blocks


def difference_of_means(old: list[float], new: list[float]) -> float:
    """The reference's merge gain: multiset difference by exact float equality, Python ``sum`` order."""
    c1, c2 = Counter(old), Counter(new)
    for element in set(old) & set(new):
        common = min(c1[element], c2[element])
        c1[element] -= common
        c2[element] -= common
    left1 = list(c1.elements())
    left2 = list(c2.elements())
    mean1 = sum(left1) / len(left1) if left1 else 0
    mean2 = sum(left2) / len(left2) if left2 else 0
    if mean1 - mean2 > 0:
        return mean1 - mean2 if min(left1) > min(left2) else 0.0
    return mean1 - mean2


def assigned_costs(cost: np.ndarray) -> list[float]:
    rows, cols = linear_sum_assignment(cost)
    return cost[rows, cols].tolist()


def adjust_for_context(cost: np.ndarray, bonus: float = CONSECUTIVE_BONUS, window: int = WINDOW) -> np.ndarray:
    """The reference's context bonus, vectorised for window 1.

    For a cell below -0.5: ``cost + bonus * (s2 + s1)`` where s1 <= s2 are the two smallest of the (up to 8)
    neighbours read from the unadjusted matrix, summed as numpy sums a 2-element array (``0.0 + s2 + s1``).
    """
    if window <= 0:
        return cost
    if window != 1:
        return adjust_for_context_loop(cost, bonus, window)
    n, m = cost.shape
    padded = np.full((n + 2, m + 2), np.inf)
    padded[1:-1, 1:-1] = cost
    neighbours = np.stack(
        [
            padded[1 + di : 1 + di + n, 1 + dj : 1 + dj + m]
            for di in (-1, 0, 1)
            for dj in (-1, 0, 1)
            if (di, dj) != (0, 0)
        ],
        axis=-1,
    )
    neighbours.sort(axis=-1)
    smallest = neighbours[..., 0]
    second = neighbours[..., 1]
    smallest = np.where(np.isinf(smallest), 0.0, smallest)
    second = np.where(np.isinf(second), 0.0, second)
    total = (0.0 + second) + smallest
    adjusted = cost.copy()
    cells = cost < -0.5
    adjusted[cells] = cost[cells] + bonus * total[cells]
    return adjusted


def adjust_for_context_loop(cost: np.ndarray, bonus: float, window: int) -> np.ndarray:
    """Any window: the reference's per-cell neighbourhood sort (used for windows other than 1)."""
    if window <= 0:
        return cost
    n, m = cost.shape
    adjusted = np.copy(cost)
    for i in range(n):
        for j in range(m):
            if adjusted[i][j] >= -0.5:
                continue
            near = cost[max(0, i - window) : min(n, i + window + 1), max(0, j - window) : min(m, j + window + 1)]
            ordered = np.sort(near.flatten())[::-1]
            ordered = np.delete(ordered, np.where(ordered == cost[i, j])[0][0])
            adjusted[i][j] += bonus * np.sum(ordered[-window * 2 :])
    return adjusted


class MergeStats:
    def __init__(self) -> None:
        self.outer_iterations = 0
        self.trials = 0
        self.lsa_calls = 0


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise OutOfTime("the block matching ran past the pair's deadline")


def find_possible_merge(
    pred: list[Block],
    ref: list[Block],
    ratio: RatioCache,
    bonus: float = CONSECUTIVE_BONUS,
    window: int = WINDOW,
    stats: MergeStats | None = None,
    deadline: float | None = None,
) -> tuple[list[Block], list[Block], list[tuple[int, int]]]:
    """Greedy merging of neighbouring blocks on both sides, then the final context-bonus matching;
    :class:`OutOfTime` once ``deadline`` (``time.monotonic()``) has passed.

    ``pred`` is modified in place (the reference's quirk Q7: CLIP later masks the merged prediction boxes);
    callers that want the reference protected pass a copy, as the reference does with ``deepcopy``.
    """
    stats = stats or MergeStats()
    a, b = pred, ref
    while True:
        _check(deadline)
        stats.outer_iterations += 1
        a_changed = b_changed = False
        a_texts = [blk.text for blk in a]
        b_texts = [blk.text for blk in b]
        cost = ratio.matrix(a_texts, b_texts)
        current = assigned_costs(cost)
        stats.lsa_calls += 1
        if len(a) >= 2:
            candidates = []
            for i in range(len(a) - 1):
                if i % 32 == 0:
                    _check(deadline)
                row = ratio.row(a_texts[i] + " " + a_texts[i + 1], b_texts)
                trial = np.concatenate((cost[:i], row[None, :], cost[i + 2 :]), axis=0)
                gain = difference_of_means(current, assigned_costs(trial))
                stats.trials += 1
                stats.lsa_calls += 1
                if gain > MERGE_GAIN:
                    candidates.append([i, i + 1, gain])
            candidates.sort(key=lambda c: c[2], reverse=True)
            if candidates:
                a_changed = True
                a = merge_by_list(a, candidates)
                a_texts = [blk.text for blk in a]
                cost = ratio.matrix(a_texts, b_texts)
                current = assigned_costs(cost)
                stats.lsa_calls += 1
        if len(b) >= 2:
            candidates = []
            for j in range(len(b) - 1):
                if j % 32 == 0:
                    _check(deadline)
                col = ratio.col(a_texts, b_texts[j] + " " + b_texts[j + 1])
                trial = np.concatenate((cost[:, :j], col[:, None], cost[:, j + 2 :]), axis=1)
                gain = difference_of_means(current, assigned_costs(trial))
                stats.trials += 1
                stats.lsa_calls += 1
                if gain > MERGE_GAIN:
                    candidates.append([j, j + 1, gain])
            candidates.sort(key=lambda c: c[2], reverse=True)
            if candidates:
                b_changed = True
                b = merge_by_list(b, candidates)
                b_texts = [blk.text for blk in b]
                cost = ratio.matrix(a_texts, b_texts)
                current = assigned_costs(cost)
                stats.lsa_calls += 1
        if not a_changed and not b_changed:
            break
    cost = ratio.matrix([blk.text for blk in a], [blk.text for blk in b])
    adjusted = adjust_for_context(cost, bonus, window)
    rows, cols = linear_sum_assignment(adjusted)
    stats.lsa_calls += 1
    return a, b, [(int(i), int(j)) for i, j in zip(rows, cols, strict=True)]
