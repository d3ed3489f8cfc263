"""Sub-scores from matched blocks, with the reference's order of operations (so the floats agree).

Block-Match = sum(matched areas) / sum([unmatched total] + matched areas) (numpy sums over Python lists, so a
perfect copy gives 0.9999999999999998 as in the reference); Text = mean difflib ratio of kept pairs; Position =
mean ``1 - max(|dcx|, |dcy|)`` of box centres in each page's own normalised coordinates; Color = mean
``max(0, 1 - dE00/100)``. Pairs whose raw ratio is below 0.5 are dropped and count as unmatched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from replay_tui.visual.blocks import Block
from replay_tui.visual.color import color_similarity

MIN_TEXT_SIMILARITY = 0.5


@dataclass
class PairScore:
    pred: int
    ref: int
    text: float
    position: float
    color: float
    area: float


@dataclass
class SubScores:
    block: float = 0.0
    text: float = 0.0
    position: float = 0.0
    color: float = 0.0
    pairs: list[PairScore] = field(default_factory=list)
    dropped: list[tuple[int, int, float]] = field(default_factory=list)  # assigned but below 0.5
    sum_areas: float = 0.0

    @property
    def matched(self) -> bool:
        return bool(self.pairs)


def area(block: Block) -> float:
    return block.bbox[2] * block.bbox[3]


def position_similarity(pred: Block, ref: Block) -> float:
    x1 = pred.bbox[0] + pred.bbox[2] / 2
    y1 = pred.bbox[1] + pred.bbox[3] / 2
    x2 = ref.bbox[0] + ref.bbox[2] / 2
    y2 = ref.bbox[1] + ref.bbox[3] / 2
    return 1 - max(abs(x2 - x1), abs(y2 - y1))


def _unmatched_area(blocks: list[Block], used: set[int]) -> float:
    """Left-to-right ``+=`` from 0.0 over the blocks not in ``used`` (the reference's float order)."""
    total = 0.0
    for k, block in enumerate(blocks):
        if k not in used:
            total += area(block)
    return total


def sub_scores(
    pred: list[Block],
    ref: list[Block],
    matching: list[tuple[int, int]],
    ratio: Callable[[str, str], float],
    color_formula: str = "colormath",
) -> SubScores:
    kept: list[tuple[int, int, float]] = []
    dropped: list[tuple[int, int, float]] = []
    for i, j in matching:
        similarity = ratio(pred[i].text, ref[j].text)
        (dropped if similarity < MIN_TEXT_SIMILARITY else kept).append((i, j, similarity))
    used_pred = {i for i, _, _ in kept}
    used_ref = {j for _, j, _ in kept}
    sum_areas = [_unmatched_area(pred, used_pred) + _unmatched_area(ref, used_ref)]
    matched_areas: list[float] = []
    pairs: list[PairScore] = []
    for i, j, similarity in kept:
        pair_area = area(pred[i]) + area(ref[j])
        pos = position_similarity(pred[i], ref[j])
        col = color_similarity(tuple(pred[i].color), tuple(ref[j].color), color_formula)
        sum_areas.append(pair_area)
        matched_areas.append(pair_area)
        pairs.append(PairScore(i, j, similarity, pos, col, pair_area))
    total_area = np.sum(sum_areas)
    out = SubScores(pairs=pairs, dropped=dropped, sum_areas=float(total_area))
    if matched_areas:
        out.block = float(np.sum(matched_areas) / total_area)
        out.text = float(np.mean([p.text for p in pairs]))
        out.position = float(np.mean([p.position for p in pairs]))
        out.color = float(np.mean([p.color for p in pairs]))
    return out


def final_score(block: float, text: float, position: float, color: float, clip: float | None) -> float:
    """``0.2 * (block + text + position + color + clip)``; without CLIP the sum of the other four (partial)."""
    return 0.2 * (block + text + position + color + (clip if clip is not None else 0.0))


RENORMALISED = "Final (4 metrics, renormalised)"


def final_renormalised(block: float, text: float, position: float, color: float, clip: float | None) -> float | None:
    """Without CLIP, the mean of the four other scores (:data:`RENORMALISED`): the compat final counts CLIP as 0,
    so a perfect pair tops out at 0.8; None when CLIP is there (the final is then the paper's number)."""
    return None if clip is not None else (block + text + position + color) / 4
