"""Issue 14: a batch scored ``jobs`` pairs at a time gives exactly the sequential run's reports, in order."""

from __future__ import annotations

import json

import pytest

from replay_tui.visual.batch import BatchPair, batch_report, bundled_pairs, score_pairs
from replay_tui.visual.pipeline import VisualScorer

from .page_renders import CachedRenderer, RenderStore
from .sequential import alone
from .test_cli import _run


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _scored(renderer, pairs: list[BatchPair], mode: str, jobs: int) -> str:
    """The batch report, timings aside; ``jobs=0``: each pair on its own, no batch (no renders shared: the
    worker's sequential reference, which the pipeline tests read too)."""
    pairs = [BatchPair(p.label, p.ref, p.pred) for p in pairs]
    order: list[int] = []

    def scored(index, report, _result):
        order.append(index)
        pairs[index].report = report

    scorer = VisualScorer(renderer=renderer)
    if jobs == 0:
        for index, pair in enumerate(pairs):
            scored(index, *alone(renderer, pair.ref, pair.pred, mode))
    else:
        score_pairs(scorer, pairs, mode, on_scored=scored, jobs=jobs)
    assert order == list(range(len(pairs)))
    report = batch_report(pairs, mode).model_dump(mode="json", by_alias=True)
    return json.dumps(_without_timings(report), sort_keys=True)


@pytest.mark.slow
@pytest.mark.xdist_group("visual-sequential")  # shares the sequential scores with test_pipeline.py
def test_jobs_2_gives_the_sequential_reports(renderer):
    bundled = {p.label: p for p in bundled_pairs()}  # 4 pages x 4 variants: moves, drops, recolours, rewords
    assert len(bundled) == 16
    # Every variant of the smallest page (12 blocks) and the largest (about 100), interleaved: each reference is
    # shared by four pairs, and a short pair often finishes before the long one handed out ahead of it.
    pairs = [bundled[f"{v}/{page}"] for v in ("move", "drop", "recolour", "reword") for page in ("11202", "9656")]
    alone = _scored(renderer, pairs, "compat", 0)
    # The batch with the most at once renders afresh (three threads' prefetches contend for the pool's pages) and
    # keeps its renders for the other two: what jobs 1 and 2 check is the batch (the shared reference renders,
    # the pair order, the threads), and Chromium's renders of the same pages again would change none of it.
    kept = CachedRenderer(renderer, RenderStore())
    assert _scored(kept, pairs, "compat", 3) == alone
    assert kept._store.made and not kept._store.served  # every render of jobs 3 fresh
    assert _scored(kept, pairs, "compat", 1) == alone  # the shared reference renders change nothing
    assert _scored(kept, pairs, "compat", 2) == alone
    # the other two pages (2310: the dedup quirk that fixed mode corrects), one reference shared; the batch takes
    # the renders jobs 3 made of the pages fixed mode renders as compat did (11202's), the reference is fresh
    some = [bundled[label] for label in ("move/11202", "drop/2310", "recolour/13470", "reword/11202")]
    assert _scored(kept, some, "fixed", 2) == _scored(renderer, some, "fixed", 0)


@pytest.mark.xdist_group("visual-pages")  # the bundled pages' renders, kept for the worker
def test_cli_jobs_writes_the_same_batch_report(page_renderer, monkeypatch, tmp_path):
    """The command's --jobs against its sequential run; renders kept for the worker (that a batch's renders and
    concurrency change no report is the test above, on fresh renders)."""
    import shutil

    from replay_tui.visual.examples import EXAMPLES_DIR

    for variant in ("ref", "reword"):  # two of the bundled pages: the two pairs are scored at once with --jobs 2
        (tmp_path / variant).mkdir()
        for name in ("11202.html", "13470.html", "rick.jpg"):
            shutil.copy(EXAMPLES_DIR / variant / name, tmp_path / variant / name)
    texts = {}
    for jobs in ("1", "2"):
        out_json = tmp_path / "batch.json"  # one path: the command prints it
        args = ["--ref-dir", str(tmp_path / "ref"), "--pred-dir", str(tmp_path / "reword")]
        code, out, _ = _run([*args, "--jobs", jobs, "--json", str(out_json)], page_renderer, monkeypatch)
        assert code == 0 and "means" in out
        texts[jobs] = (out, json.dumps(_without_timings(json.loads(out_json.read_text())), sort_keys=True))
    assert texts["1"] == texts["2"]
    code, _, err = _run(["--ref-dir", ".", "--pred-dir", ".", "--jobs", "0"], page_renderer, monkeypatch)
    assert code == 2 and "--jobs must be at least 1" in err
