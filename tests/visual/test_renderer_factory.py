"""Every scorer and command given no renderer gets one from ``render.renderer_factory`` (the one place a
browser is started for them), so the tests hand them their session's Chromium instead of starting one each."""

from __future__ import annotations

import argparse
import io

from rich.console import Console

from replay_tui.cli import visual as cli
from replay_tui.visual import render
from replay_tui.visual.examples import example_pair
from replay_tui.visual.pipeline import VisualScorer


def test_a_scorer_without_a_renderer_takes_the_factorys_and_leaves_it_open(renderer, monkeypatch, tmp_path):
    asked: list[int | None] = []
    monkeypatch.setattr(render, "renderer_factory", lambda timeout_ms: (asked.append(timeout_ms), (renderer, False))[1])
    with VisualScorer(timeout_ms=4321) as scorer:
        assert scorer.renderer is renderer
    assert asked == [4321] and renderer.render_html("<p>still open</p>", tmp_path).ok


def test_the_command_takes_the_factorys_renderer(renderer, monkeypatch, tmp_path):
    asked: list[int | None] = []
    monkeypatch.setattr(render, "renderer_factory", lambda timeout_ms: (asked.append(timeout_ms), (renderer, False))[1])
    parser = argparse.ArgumentParser(prog="replay-tui")
    cli.register(parser.add_subparsers(dest="command"))
    ref, pred = example_pair("11202", "drop")
    ns = parser.parse_args(["visual", str(ref), str(pred), "--timeout", "12"])
    out = io.StringIO()
    assert ns.func(ns, Console(file=out, width=160), Console(file=io.StringIO(), width=160)) == 0
    assert asked == [12_000] and "Final" in out.getvalue()
    assert renderer.render_html("<p>still open</p>", tmp_path).ok


def test_by_default_the_factory_starts_a_renderer_its_caller_closes():
    made, owned = render.new_renderer(2500)
    assert owned and made.timeout_ms == 2500
