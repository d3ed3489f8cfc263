"""Sub-scores by hand, and the colour formula against python-colormath's recorded outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from replay_tui.visual.blocks import Block
from replay_tui.visual.color import color_similarity, delta_e_colormath, delta_e_sharma, srgb_to_lab
from replay_tui.visual.match import RatioCache
from replay_tui.visual.scores import final_score, position_similarity, sub_scores
from tests.visual import reference_impl as reference

GOLDEN = json.loads((Path(__file__).parent / "data" / "colormath_golden.json").read_text())


def test_colormath_port_matches_recorded_outputs_exactly():
    for case in GOLDEN["pairs"]:
        assert list(srgb_to_lab(tuple(case["pred"]))) == case["lab_pred"]
        got = delta_e_colormath(srgb_to_lab(tuple(case["pred"])), srgb_to_lab(tuple(case["ref"])))
        assert got == case["delta_e"] or abs(got - case["delta_e"]) < 1e-12


def test_sharma_differs_from_colormath_somewhere_but_slightly():
    diffs = [
        abs(delta_e_sharma(srgb_to_lab(tuple(c["pred"])), srgb_to_lab(tuple(c["ref"]))) - c["delta_e"])
        for c in GOLDEN["pairs"]
    ]
    assert max(diffs) > 1e-9 and max(diffs) < 0.01
    # Sharma et al. (2005) test data, pair 1: dE00 = 2.0425
    assert delta_e_sharma((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485)) == pytest.approx(2.0425, abs=1e-4)


def test_colour_similarity_bounds():
    assert color_similarity((10.0, 20.0, 30.0), (10.0, 20.0, 30.0)) == 1.0
    assert color_similarity((0.0, 0.0, 0.0), (255.0, 255.0, 255.0)) < 1e-6  # dE just under 100
    assert 0 < color_similarity((255.0, 0.0, 0.0), (200.0, 0.0, 0.0)) < 1


def _b(text, bbox, colour=(0.0, 0.0, 0.0)):
    return Block(text, bbox, colour)


def test_hand_computable_scores():
    ratio = RatioCache()
    pred = [
        _b("hello", (0.1, 0.1, 0.2, 0.1)),
        _b("abcd", (0.5, 0.5, 0.1, 0.1), (255.0, 0.0, 0.0)),
        _b("zzzz", (0.0, 0.9, 0.5, 0.1)),
    ]
    ref = [
        _b("hello", (0.2, 0.1, 0.2, 0.1)),
        _b("abce", (0.5, 0.6, 0.1, 0.1), (255.0, 0.0, 0.0)),
        _b("qqqq", (0.0, 0.0, 0.1, 0.1)),
    ]
    scores = sub_scores(pred, ref, [(0, 0), (1, 1), (2, 2)], ratio)
    # pair (2, 2) has ratio 0 < 0.5: dropped, both blocks unmatched
    assert [(p.pred, p.ref) for p in scores.pairs] == [(0, 0), (1, 1)]
    assert scores.dropped == [(2, 2, 0.0)]
    matched = (0.2 * 0.1 + 0.2 * 0.1) + (0.1 * 0.1 + 0.1 * 0.1)
    unmatched = 0.5 * 0.1 + 0.1 * 0.1
    assert scores.block == pytest.approx(matched / (matched + unmatched))
    assert scores.text == pytest.approx((1.0 + 0.75) / 2)
    assert scores.position == pytest.approx(((1 - 0.1) + (1 - 0.1)) / 2)
    assert scores.color == 1.0
    assert final_score(1.0, 1.0, 1.0, 1.0, None) == pytest.approx(0.8)
    assert final_score(1.0, 1.0, 1.0, 1.0, 1.0) == pytest.approx(1.0)


def test_position_uses_centres_and_max_axis():
    assert position_similarity(_b("a", (0.0, 0.0, 0.2, 0.2)), _b("a", (0.1, 0.3, 0.0, 0.0))) == pytest.approx(0.8)


def test_perfect_copy_block_score_is_not_exactly_one_like_reference():
    blocks = [_b(f"text {k}", (0.1 * (k % 3), 0.05 * k, 0.1 + 0.01 * k, 0.03)) for k in range(9)]
    ratio = RatioCache()
    scores = sub_scores(blocks, blocks, [(k, k) for k in range(9)], ratio)
    expected = reference.score_blocks(
        [{"text": b.text, "bbox": b.bbox, "color": b.color} for b in blocks],
        [{"text": b.text, "bbox": b.bbox, "color": b.color} for b in blocks],
    )
    assert scores.block == expected["block"]
    assert float(np.sum([0.1, 0.2, 0.3])) == np.sum([0.1, 0.2, 0.3])


def test_no_kept_pairs_scores_zero():
    scores = sub_scores([_b("aaaa", (0, 0, 0.1, 0.1))], [_b("bbbb", (0, 0, 0.1, 0.1))], [(0, 0)], RatioCache())
    assert not scores.matched and scores.block == scores.text == scores.position == scores.color == 0.0
