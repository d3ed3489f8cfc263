"""``replay-tui visual``: single pair, JSON report, PNGs, batch with means, usage errors."""

from __future__ import annotations

import argparse
import io
import json

import pytest
from rich.console import Console

from replay_tui.cli import visual as cli
from replay_tui.visual.examples import example_pair


def _run(args, renderer, monkeypatch):
    # Reuse the session's browser: the CLI would otherwise start its own.
    monkeypatch.setattr(cli, "renderer_factory", lambda timeout_ms: (renderer, False))
    parser = argparse.ArgumentParser(prog="replay-tui")
    cli.register(parser.add_subparsers(dest="command"))
    ns = parser.parse_args(["visual", *args])
    out, err = io.StringIO(), io.StringIO()
    code = ns.func(ns, Console(file=out, width=160), Console(file=err, width=160))
    return code, out.getvalue(), err.getvalue()


def test_single_pair_prints_scores_and_writes_json(renderer, monkeypatch, tmp_path):
    ref, pred = example_pair("11202", "drop")
    report = tmp_path / "out.json"
    code, out, _ = _run(
        [str(ref), str(pred), "--json", str(report), "--png-dir", str(tmp_path / "png")], renderer, monkeypatch
    )
    assert code == 0
    for name in ("Block-Match", "Text", "Position", "Color", "CLIP", "Final", "partial"):
        assert name in out
    data = json.loads(report.read_text())
    assert data["schema"] == "replay-tui.visual/1"
    result = data["result"]
    assert result["mode"] == "compat" and result["status"] == "ok"
    scores = result["scores"]
    assert set(scores) == {"block", "text", "position", "color", "clip", "final", "final_partial", "final_renormalised"}
    assert scores["clip"] is None and scores["final_partial"] is True
    four = (scores["block"], scores["text"], scores["position"], scores["color"])
    assert scores["final_renormalised"] == sum(four) / 4 and "Final (4 metrics, renormalised)" in out
    kept = [m for m in result["matches"] if m["kept"]]
    assert kept and {"pred", "ref", "text", "position", "color"} <= set(kept[0])
    block = result["pred"]["blocks"][kept[0]["pred"]]
    assert {"id", "text", "bbox", "color", "sources"} <= set(block) and len(block["bbox"]) == 4
    assert (tmp_path / "png" / "11202_pred.png").exists() and (tmp_path / "png" / "11202_ref_blocks.png").exists()


def test_fixed_mode_lists_corrections_and_disagreements(renderer, monkeypatch, tmp_path):
    ref, pred = example_pair("2310", "ref")
    report = tmp_path / "fixed.json"
    code, out, _ = _run([str(ref), str(pred), "--mode", "fixed", "--json", str(report)], renderer, monkeypatch)
    assert code == 0
    assert "corrections applied" in out and "disagrees with compat" in out
    data = json.loads(report.read_text())
    assert data["result"]["mode"] == "fixed" and data["compat"]["mode"] == "compat"
    assert "no-autojunk" in data["result"]["corrections"]
    assert any(d["score"] == "text" and any("dedup" in r for r in d["reasons"]) for d in data["disagreements"])


def test_batch_prints_table_and_means(renderer, monkeypatch, tmp_path):
    refs, preds = tmp_path / "ref", tmp_path / "pred"
    refs.mkdir()
    preds.mkdir()
    (refs / "a.html").write_text("<html><body><h1>Alpha page</h1><p>Some words here.</p></body></html>")
    (refs / "b.html").write_text("<html><body><p>Beta page text</p></body></html>")
    (refs / "c.html").write_text("<html><body><p>Gamma</p></body></html>")
    (preds / "a.html").write_text("<html><body><h1>Alpha page</h1><p>Some words.</p></body></html>")
    (preds / "b.html").write_text("<html><body><p>Beta \x1b[31mpage</p></body></html>")
    report = tmp_path / "batch.json"
    code, out, _ = _run(
        ["--ref-dir", str(refs), "--pred-dir", str(preds), "--json", str(report)], renderer, monkeypatch
    )
    assert code == 0
    assert "a.html" in out and "b.html" in out and "mean" in out and "c.html" in out  # c listed as skipped
    assert "\x1b[31m" not in out
    data = json.loads(report.read_text())
    assert [r["name"] for r in data["rows"]] == ["a.html", "b.html"] and data["missing"] == ["c.html"]
    assert data["means"]["text"] == pytest.approx(sum(r["text"] for r in data["rows"]) / 2)
    assert data["means"]["clip"] is None


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["only_one.html"],
        ["--ref-dir", "x"],
        ["a.html", "b.html", "--ref-dir", "x"],
        ["missing_ref.html", "missing_pred.html"],
        ["--ref-dir", "nope", "--pred-dir", "n"],
    ],
)
def test_usage_errors_exit_2(renderer, monkeypatch, args):
    code, _, err = _run(args, renderer, monkeypatch)
    assert code == 2 and err.startswith("replay-tui visual: error: ")


def test_register_sets_func():
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command"))
    ns = parser.parse_args(["visual", "a.html", "b.html", "--compat", "design2code"])
    assert ns.func is cli.run and ns.compat == "design2code"
    with pytest.raises(SystemExit):
        parser.parse_args(["visual", "a", "b", "--compat", "design2code", "--mode", "fixed"])


def test_bundled_examples_are_complete():
    from replay_tui.visual.examples import EXAMPLES_DIR, VARIANTS, example_ids

    assert example_ids() == ["11202", "13470", "2310", "9656"]
    for page in example_ids():
        for variant in ("ref", *VARIANTS):
            ref, pred = example_pair(page, variant)
            assert ref.is_file() and pred.is_file() and (pred.parent / "rick.jpg").is_file()
    assert (EXAMPLES_DIR / "LICENSE-ODC-By.txt").is_file()
    assert "ODC" in (EXAMPLES_DIR / "PROVENANCE.md").read_text()
    with pytest.raises(FileNotFoundError):
        example_pair("nope")
