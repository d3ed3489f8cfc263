"""Matching: the fast merge search equals the straightforward re-implementation exactly."""

from __future__ import annotations

import random

import numpy as np
import pytest

from replay_tui.visual.blocks import Block
from replay_tui.visual.match import (
    RatioCache,
    adjust_for_context,
    adjust_for_context_loop,
    difference_of_means,
    find_possible_merge,
    merge_by_list,
    merge_pair,
)
from replay_tui.visual.scores import sub_scores
from tests.visual import reference_impl as reference

WORDS = (
    "home about contact news read more services team blog price login cart shop sale new "
    "the a of and to in for with our your"
).split()


def _block(text, k, page_rows=40, colour=None):
    rng = random.Random(hash((text, k)) & 0xFFFF)
    y = k / page_rows
    return Block(
        text,
        (rng.randint(0, 50) / 100, y, rng.randint(5, 40) / 100, 0.02),
        colour or (float(rng.randint(0, 255)), float(rng.randint(0, 255)), float(rng.randint(0, 255))),
        [k],
    )


def synthetic_pair(n, seed, split=0.1, join=0.1, noise=0.1):
    rng = random.Random(seed)
    ref_texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8))) for _ in range(n)]
    pred_texts: list[str] = []
    for text in ref_texts:
        r = rng.random()
        words = text.split()
        if r < split and len(words) >= 2:
            cut = rng.randint(1, len(words) - 1)
            pred_texts += [" ".join(words[:cut]), " ".join(words[cut:])]
        elif r < split + join and pred_texts:
            pred_texts[-1] += " " + text
        else:
            if rng.random() < noise:
                words[rng.randrange(len(words))] = rng.choice(WORDS)
            pred_texts.append(" ".join(words))
    ref = [_block(t, k) for k, t in enumerate(ref_texts)]
    pred = [_block(t, k) for k, t in enumerate(pred_texts)]
    return pred, ref


def as_dicts(blocks):
    return [{"text": b.text, "bbox": b.bbox, "color": b.color} for b in blocks]


def fast_scores(pred, ref, autojunk=True):
    from replay_tui.visual.blocks import merge_blocks_by_bbox

    ratio = RatioCache(autojunk)
    ref_m = merge_blocks_by_bbox(ref)
    pred_m0 = merge_blocks_by_bbox(pred)
    a, b, matching = find_possible_merge(pred_m0, [x.copy() for x in ref_m], ratio)
    return a, b, matching, sub_scores(a, b, matching, ratio)


def assert_same(pred, ref):
    expected = reference.score_blocks(as_dicts(pred), as_dicts(ref))
    a, b, _matching, got = fast_scores(pred, ref)
    assert [x.text for x in a] == [x["text"] for x in expected["pred"]]
    assert [x.bbox for x in b] == [tuple(x["bbox"]) for x in expected["ref"]]
    assert [(p.pred, p.ref) for p in got.pairs] == [(p[0], p[1]) for p in expected["pairs"]]
    for key in ("block", "text", "position", "color"):
        assert abs(getattr(got, key) - expected[key]) <= 1e-12, key
    return got


@pytest.mark.parametrize("seed", range(6))
def test_merge_search_equals_reference_on_synthetic_pages(seed):
    pred, ref = synthetic_pair(10 + seed * 2, seed)
    assert_same(pred, ref)


def test_ties_repeated_texts_break_like_reference():
    ref = [_block("read more", k) for k in range(5)] + [_block("contact us", 5)]
    pred = [_block("read more", k + 2) for k in range(4)] + [_block("contact us", 9)]
    got = assert_same(pred, ref)
    assert len(got.pairs) == 5


def test_autojunk_quirk_is_kept():
    base = "".join(random.Random(3).choice("abcdefghij ") for _ in range(300))
    changed = base[:150] + ("x" if base[150] != "x" else "y") + base[151:]
    ratio = RatioCache(autojunk=True)
    assert ratio(changed, base) < 0.6  # the reference's popular-character pathology
    assert RatioCache(autojunk=False)(changed, base) > 0.99
    assert_same([_block(changed, 0)], [_block(base, 0)])


def test_hand_computable_merge():
    # The prediction split one reference line in two: merging them gains more than 0.05.
    ref = [_block("welcome to our shop", 0), _block("contact", 1)]
    pred = [_block("welcome to", 0), _block("our shop", 1), _block("contact", 2)]
    a, _b, matching, scores = fast_scores(pred, ref)
    assert [x.text for x in a] == ["welcome to our shop", "contact"]
    assert matching == [(0, 0), (1, 1)]
    assert scores.text == 1.0
    x1, y1, w1, h1 = pred[0].bbox
    x2, y2, w2, h2 = pred[1].bbox
    assert a[0].bbox == (
        min(x1, x2),
        min(y1, y2),
        max(x1 + w1, x2 + w2) - min(x1, x2),
        max(y1 + h1, y2 + h2) - min(y1, y2),
    )
    assert a[0].color == tuple((c1 + c2) // 2 for c1, c2 in zip(pred[0].color, pred[1].color, strict=True))
    assert_same(pred, ref)


def test_merge_by_list_drops_conflicting_candidates():
    blocks = [_block(t, k) for k, t in enumerate("a b c d e".split())]
    out = merge_by_list(blocks, [[1, 2, 0.9], [0, 1, 0.8], [2, 3, 0.7], [3, 4, 0.6]])
    assert [b.text for b in out] == ["a", "b c", "d e"]


def test_difference_of_means_rules():
    assert difference_of_means([-1.0, -0.5], [-1.0, -0.9]) == pytest.approx(-0.5 - -0.9)
    assert difference_of_means([-1.0, -0.5], [-1.0, -0.2]) < 0
    assert difference_of_means([-0.9, -0.1], [-0.7, -0.6]) == 0.0  # better mean, but best changed pair worse
    assert difference_of_means([], []) == 0


def test_context_adjustment_vectorised_equals_loop():
    rng = np.random.default_rng(5)
    for shape in [(1, 1), (1, 4), (4, 1), (2, 2), (7, 5), (12, 12)]:
        cost = -rng.choice([0.0, 0.2, 0.55, 0.6, 0.75, 1.0, 0.9], size=shape)
        assert np.array_equal(adjust_for_context(cost, 0.1, 1), adjust_for_context_loop(cost, 0.1, 1))
        assert np.array_equal(adjust_for_context(cost, 0.1, 1), reference.adjust_cost_for_context(cost, 0.1, 1))
        assert np.array_equal(adjust_for_context(cost, 0.0, 1), cost)


def test_hand_computable_context_bonus():
    cost = np.array([[-1.0, -0.2], [-0.3, -0.8]])
    adjusted = adjust_for_context(cost, 0.1, 1)
    assert adjusted[0, 0] == -1.0 + 0.1 * (-0.3 + -0.8)  # two most similar neighbours
    assert adjusted[1, 1] == -0.8 + 0.1 * (-0.3 + -1.0)
    assert adjusted[0, 1] == -0.2  # not below -0.5: unchanged


def test_merge_pair_and_ratio_cache_orientation():
    ratio = RatioCache()
    assert ratio("abc", "abd") == pytest.approx(2 / 3)
    assert ratio.computed == 1 and ratio("abc", "abd") == pytest.approx(2 / 3) and ratio.computed == 1
    merged = merge_pair(
        Block("a", (0.1, 0.2, 0.1, 0.1), (1.0, 3.0, 5.0)), Block("b", (0.3, 0.1, 0.1, 0.05), (2.0, 4.0, 7.0))
    )
    assert merged.text == "a b" and merged.color == (1.0, 3.0, 6.0)
    assert merged.bbox == (0.1, 0.1, pytest.approx(0.3), pytest.approx(0.2))


def test_many_blocks_fast():
    import time

    pred, ref = synthetic_pair(60, 11)
    started = time.perf_counter()
    fast_scores(pred, ref)
    assert time.perf_counter() - started < 10
