"""CLIP: preprocessing (no weights needed), the sha256 gate, and how the pipeline feeds it boxes."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from replay_tui.visual.clip import (
    MEAN,
    STD,
    ClipScorer,
    ClipUnavailable,
    load_clip_scorer,
    mask_and_inpaint,
    preprocess,
)
from replay_tui.visual.examples import example_pair


def test_preprocess_shape_and_normalisation():
    white = np.full((300, 500, 3), 255, np.uint8)
    out = preprocess(white, [])
    assert out.shape == (3, 224, 224) and out.dtype == np.float32
    assert np.allclose(out[:, 100, 100], (1 - MEAN) / STD, atol=1e-6)


def test_inpainting_removes_text_box():
    img = np.full((100, 200, 3), 255, np.uint8)
    img[40:50, 50:120] = 0  # a "text" bar
    painted = mask_and_inpaint(img, [(0.25, 0.4, 0.35, 0.1)])  # x=50, y=40, w=70, h=10 exactly
    assert painted[45, 80].min() > 200
    assert np.array_equal(mask_and_inpaint(img, []), img)


def test_scorer_cosine_with_injected_encoder():
    def encoder(image):
        return image.reshape(3, 16, 14, 16, 14).mean(axis=(2, 4)).ravel()

    scorer = ClipScorer(encoder)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (200, 300, 3), dtype=np.uint8)
    assert scorer.similarity(a, a, [], []) == pytest.approx(1.0)
    b = 255 - a
    assert scorer.similarity(a, b, [], []) < 0.999


def test_weights_gate(tmp_path):
    with pytest.raises(ClipUnavailable, match="not found"):
        load_clip_scorer(tmp_path / "missing.pt")
    fake = tmp_path / "ViT-B-32.pt"
    fake.write_bytes(b"not the weights")
    with pytest.raises(ClipUnavailable, match="sha256"):
        load_clip_scorer(fake)
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(ClipUnavailable, match="torch"):
            load_clip_scorer(fake, expected_sha256=hashlib.sha256(b"not the weights").hexdigest())


def test_pipeline_feeds_clip_and_final_is_complete(renderer):
    from replay_tui.visual.pipeline import VisualScorer

    seen = []

    class Spy:
        def similarity(self, img1, img2, boxes1, boxes2):
            seen.append((img1.shape, img2.shape, list(boxes1), list(boxes2)))
            return 0.9

    ref, pred = example_pair("11202", "ref")
    scorer = VisualScorer(renderer=renderer, clip_scorer=Spy())
    result = scorer.score(ref, pred)["compat"]
    assert result.clip == 0.9 and not result.final_partial
    expected = 0.2 * (result.scores.block + result.scores.text + result.scores.position + result.scores.color + 0.9)
    assert result.final == pytest.approx(expected)
    ((shape1, _shape2, boxes1, boxes2),) = seen
    assert shape1[1] == 1280 and boxes1 == [b.bbox for b in result.pred_blocks]  # merged prediction boxes (Q7)
    assert boxes2 == [b.bbox for b in result.ref_bbox_merged]
