"""The whole pipeline on real Chromium renders: compat numbers, special cases, fixed-mode corrections."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from replay_tui.visual.dedup import check_repetitive_compat, check_repetitive_fixed
from replay_tui.visual.examples import example_pair
from tests.visual import reference_impl as reference
from tests.visual.sequential import alone

EXAMPLES = Path(__file__).resolve().parents[2] / "replay_tui" / "visual" / "examples"


def _write(tmp_path, name, html):
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return path


def _as_dicts(blocks):
    return [{"text": b.text, "bbox": b.bbox, "color": b.color} for b in blocks]


def test_identical_copy_scores_full(page_scorer):
    scorer = page_scorer
    ref, pred = example_pair("11202", "ref")
    result = scorer.score(ref, pred)["compat"]
    assert result.status == "ok"
    assert result.scores.text == 1.0 and result.scores.position == 1.0 and result.scores.color == 1.0
    assert result.scores.block == pytest.approx(1.0, abs=1e-12)
    assert result.clip is None and result.final_partial
    assert result.final == pytest.approx(0.8, abs=1e-12)


@pytest.mark.xdist_group("visual-sequential")  # the pairs' sequential scores are test_jobs.py's reference too
@pytest.mark.parametrize(
    ("page", "variant"), [("11202", "move"), ("11202", "drop"), ("11202", "recolour"), ("11202", "reword")]
)
def test_compat_scores_equal_reference_on_same_blocks(renderer, page, variant):
    ref, pred = example_pair(page, variant)
    result = alone(renderer, ref, pred, "compat")[1]  # scorer.score(ref, pred)["compat"], scored once a worker
    expected = reference.score_blocks(_as_dicts(result.pred.raw_blocks), _as_dicts(result.ref.raw_blocks))
    for key in ("block", "text", "position", "color"):
        assert abs(getattr(result.scores, key) - expected[key]) <= 1e-6, key
    assert [(p.pred, p.ref) for p in result.scores.pairs] == [(p[0], p[1]) for p in expected["pairs"]]
    assert result.scores.matched


@pytest.mark.slow
def test_end_to_end_equals_reference_pipeline(scorer, tmp_path):
    ref = _write(
        tmp_path,
        "ref.html",
        '<html><body><h1 style="color:#225588">Fresh bread</h1><p>Baked daily '
        "since 1920.</p><ul><li>Rye</li><li>Spelt</li></ul></body></html>",
    )
    pred = _write(
        tmp_path,
        "pred.html",
        "<html><body><h2>Fresh bread!</h2><p>Baked daily since</p><p>1920.</p>"
        "<ul><li>Spelt</li><li>Rye</li></ul></body></html>",
    )
    result = scorer.score(ref, pred)["compat"]
    # its own Playwright, on another thread; one browser for its six screenshots (the benchmark starts one for each)
    with ThreadPoolExecutor(1) as pool:
        expected = pool.submit(reference.evaluate, str(ref), str(pred), one_browser=True).result()
    assert [(b.text, b.bbox, b.color) for b in result.pred.raw_blocks] == [
        (b["text"], tuple(float(v) for v in b["bbox"]), tuple(float(c) for c in b["color"]))
        for b in expected["raw_pred"]
    ]
    for key in ("block", "text", "position", "color"):
        assert abs(getattr(result.scores, key) - expected[key]) <= 1e-6, key


def test_empty_page_and_page_without_text(page_scorer, tmp_path):
    scorer = page_scorer
    ref, _ = example_pair("11202", "ref")
    empty = _write(tmp_path, "empty.html", "")
    images = _write(
        tmp_path, "img.html", '<html><body><div style="width:300px;height:200px;background:#39c"></div></body></html>'
    )
    for pred in (empty, images):
        for mode, res in scorer.score(ref, pred, modes=("compat", "fixed")).items():
            assert res.status == "no_blocks", mode
            assert res.final == 0.0 and res.scores.block == 0.0


def test_invalid_html_is_scored(scorer, tmp_path):
    ref = _write(tmp_path, "ref.html", "<html><body><p>Alpha beta</p><div>Gamma delta</div></body></html>")
    broken = _write(tmp_path, "broken.html", "<p>Alpha beta<div>Gamma <b>delta</span></p></td>&nbsp;<<>>")
    res = scorer.score(ref, broken, modes=("compat", "fixed"))
    for mode in ("compat", "fixed"):
        assert res[mode].status == "ok", (mode, res[mode].error)
        assert res[mode].scores.text > 0.5
    not_utf8 = tmp_path / "latin1.html"
    not_utf8.write_bytes("<html><body><p>Alpha beta caf\xe9</p></body></html>".encode("latin-1"))
    res = scorer.score(ref, not_utf8, modes=("compat", "fixed"))
    assert res["compat"].status == "reference_crash" and "UTF-8" in res["compat"].error
    assert res["fixed"].status == "ok"


def test_more_than_4096_text_elements(scorer, tmp_path):
    spans = " ".join(f"<span>w{k}</span>" for k in range(4100))
    ref = _write(tmp_path, "many.html", f'<html><body style="font-size:16px">{spans}</body></html>')
    # A prediction without text keeps the test fast (no 4100-column merge search); the point is the extraction.
    pred = _write(tmp_path, "small.html", '<html><body><div style="height:50px;background:#abc"></div></body></html>')
    res = scorer.score(ref, pred, modes=("compat", "fixed"))
    assert res["compat"].status == "reference_crash" and "NotImplementedError" in res["compat"].error
    assert res["compat"].final == 0.0
    fixed = res["fixed"]
    assert fixed.status == "no_blocks" and fixed.ref.text_tags == 4100 and fixed.error is None
    assert len(fixed.ref.raw_blocks) > 4000  # a handful of light pool colours have no full-coverage pixels
    assert fixed.ref.notes[-1].startswith("colour round 2/2") and not fixed.ref.notes[-1].endswith(": 0 blocks")


def test_dedup_quirk_truncates_prettified_copy(page_scorer):
    scorer = page_scorer
    ref, pred = example_pair("2310", "ref")
    text = Path(pred).read_text(encoding="utf-8")
    assert check_repetitive_compat(text).cut_at == 1912
    assert not check_repetitive_fixed(text).cut
    assert reference.check_repetitive_content(text) == 1912
    res = scorer.score(ref, pred, modes=("compat", "fixed"))
    assert res["compat"].status == "no_blocks" and res["compat"].final == 0.0
    assert res["fixed"].status == "ok" and res["fixed"].scores.text == 1.0


def test_fixed_dedup_still_cuts_real_repetition():
    para = "<p>Buy our amazing product today, it is the best product ever made by anyone anywhere!</p>\n"
    page = "<html><body><h1>Shop</h1>" + para * 30 + "</body></html>"
    fixed = check_repetitive_fixed(page)
    assert fixed.cut and page[fixed.cut_at] == "<" and fixed.cut_at < len(page) // 2
    assert page.index("<p>") < fixed.cut_at  # the first copy is kept
    assert check_repetitive_compat(page).cut


def test_render_failure_is_reported(scorer, tmp_path):
    ref, _ = example_pair("11202", "ref")
    hang = _write(tmp_path, "hang.html", "<html><body><p>x</p><script>while(true){}</script></body></html>")
    saved = scorer.renderer.timeout_ms
    scorer.renderer.timeout_ms = 1500
    try:
        res = scorer.score(ref, hang, modes=("compat", "fixed"))
    finally:
        scorer.renderer.timeout_ms = saved
    # issue 15: a page out of time is a named status in both modes (no blank stand-in), scored 0
    assert res["compat"].pred.render_errors and res["compat"].status == "timeout" and res["compat"].final == 0
    assert res["fixed"].status == "timeout" and "Timeout" in res["fixed"].error


def test_fixed_mode_flags_autojunk_disagreement(scorer, tmp_path):
    from replay_tui.visual.report import pair_report

    sentence = (
        "Our bakery opened in nineteen twenty and has baked rye, spelt and wheat loaves every morning since "
        "then, using flour from the mill down the road and water from the old well behind the shop, "
        "which the family still owns and keeps clean."
    )
    assert len(sentence) > 200
    typo = sentence.replace("spelt", "spelk").replace("morning", "mornings")
    ref = _write(tmp_path, "ref.html", f"<html><body><p>{sentence}</p></body></html>")
    pred = _write(tmp_path, "pred.html", f"<html><body><p>{typo}</p></body></html>")
    results = scorer.score(ref, pred, modes=("compat", "fixed"))
    assert results["fixed"].scores.text > 0.98
    assert results["compat"].scores.text < results["fixed"].scores.text
    report = pair_report(str(ref), str(pred), results, "fixed")
    text = next(d for d in report.disagreements if d.score == "text")
    assert any(r.startswith("no-autojunk") for r in text.reasons)
    assert report.result.corrections and report.compat is not None


def test_compat_dedup_equals_reference_scan():
    import random

    rng = random.Random(4)
    pieces = [
        "<div>\n   <p>\n    ",
        "Lorem ipsum dolor sit amet ",
        "</p>\n  </div>\n",
        "<style>.a{color:red}</style>",
        "Buy now! ",
        "        ",
        "Unique words %d here. ",
    ]
    for trial in range(25):
        page = "".join(rng.choice(pieces).replace("%d", str(rng.randint(0, 99))) for _ in range(rng.randint(5, 120)))
        assert check_repetitive_compat(page).cut_at == reference.check_repetitive_content(page), trial
