"""Two batches of generated pages against the same references: per-page and per-score deltas."""

from __future__ import annotations

import json
import math

import pytest

from replay_tui.cli import visual as cli
from replay_tui.stats import paired_bootstrap
from replay_tui.visual.compare import VisualCompareError, compare_batches
from replay_tui.visual.examples import EXAMPLES_DIR
from replay_tui.visual.models import BatchReport, BatchRow


def _batch(pred_dir: str, scores: dict[str, tuple[float, ...]], clip: float | None = None) -> BatchReport:
    rows = [
        BatchRow(name=name, status="ok", final=f, block=b, text=t, position=p, color=c, clip=clip)
        for name, (f, b, t, p, c) in scores.items()
    ]
    return BatchReport(ref_dir="refs", pred_dir=pred_dir, mode="compat", rows=rows, means={})


A = _batch("a", {"1.html": (0.5, 0.6, 0.7, 0.8, 0.9), "2.html": (0.4, 0.4, 0.4, 0.4, 0.4), "3.html": (0, 0, 0, 0, 0)})
B = _batch("b", {"1.html": (0.6, 0.6, 0.7, 0.7, 0.9), "2.html": (0.6, 0.4, 0.5, 0.4, 0.4), "4.html": (1, 1, 1, 1, 1)})


def test_pages_pair_by_name_and_each_score_gets_its_delta_interval_and_counts() -> None:
    comparison = compare_batches(A, B, resamples=2000)
    assert comparison.pages == 2 and comparison.only_a == ["3.html"] and comparison.only_b == ["4.html"]
    final = comparison.score("final")
    assert final is not None
    assert math.isclose(final.mean_a, 0.45) and math.isclose(final.mean_b, 0.6)
    assert math.isclose(final.difference, 0.15) and (final.better, final.worse, final.same) == (2, 0, 0)
    expected = paired_bootstrap([0.5, 0.4], [0.6, 0.6], resamples=2000)
    assert (final.low, final.high) == (expected.low, expected.high)
    position = comparison.score("position")
    assert position is not None and (position.better, position.worse, position.same) == (0, 1, 1)
    assert comparison.score("clip") is None  # no CLIP on either side: no paired figure
    assert [pair.name for pair in comparison.pairs] == ["1.html", "2.html"]


def test_no_shared_page_is_refused_and_other_references_are_a_warning() -> None:
    with pytest.raises(VisualCompareError, match="no page in common"):
        compare_batches(A, _batch("c", {"9.html": (1, 1, 1, 1, 1)}))
    other = B.model_copy(update={"ref_dir": "elsewhere"})
    assert any("reference folders differ" in w for w in compare_batches(A, other, resamples=100).warnings)


@pytest.mark.xdist_group("visual-pages")  # the bundled pages' renders, kept for the worker
def test_visual_with_two_pred_dirs_scores_both_and_compares(page_renderer, monkeypatch, tmp_path, capsys) -> None:
    """Two bundled pages (11202 and 13470, copied: each pair costs renders): their 'move' variants as A, their
    'reword' variants as B, in real Chromium (renders of the same pages kept for the worker)."""
    import shutil

    for variant in ("ref", "move", "reword", "drop"):
        (tmp_path / variant).mkdir()
        for name in ("11202.html", "13470.html", "rick.jpg"):
            shutil.copy(EXAMPLES_DIR / variant / name, tmp_path / variant / name)
    monkeypatch.setattr(cli, "renderer_factory", lambda timeout_ms: (page_renderer, False))
    out_json = tmp_path / "compare.json"
    argv = ["visual", "--ref-dir", str(tmp_path / "ref"), "--pred-dir", str(tmp_path / "move")]
    argv += ["--pred-dir", str(tmp_path / "reword"), "--json", str(out_json)]
    from replay_tui.cli import main

    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0 and "B (reword) − A (move) on 2 pages" in out
    data = json.loads(out_json.read_text())
    scores = {s["score"]: s for s in data["scores"]}
    assert set(scores) == {"final", "block", "text", "position", "color"} and data["pages"] == 2
    for score in scores.values():
        assert score["better"] + score["worse"] + score["same"] == 2
        assert score["low"] <= score["difference"] <= score["high"]
        assert math.isclose(score["difference"], score["mean_b"] - score["mean_a"], abs_tol=1e-12)
    # rewording keeps the layout: the block positions move less than in 'move', whose blocks were moved
    assert scores["position"]["difference"] > 0
    assert main([*argv[:-2], "--pred-dir", str(tmp_path / "drop")]) == 2  # three folders: a usage error
