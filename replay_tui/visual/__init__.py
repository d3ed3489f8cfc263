"""Visual metrics: Design2Code's automatic scores of a generated web page against a reference page.

    from replay_tui.visual import VisualScorer
    with VisualScorer() as scorer:
        result = scorer.score("ref.html", "gen.html")["compat"]
        result.scores.block, result.scores.text, result.scores.position, result.scores.color, result.final

Modules: :mod:`render` (one headless Chromium per run), :mod:`htmlproc` and :mod:`blocks` (OCR-free text blocks),
:mod:`match` (merge search and matching), :mod:`scores` and :mod:`color` (sub-scores), :mod:`clip` (optional
CLIP), :mod:`dedup`, :mod:`pipeline`, :mod:`models`/:mod:`report` (JSON report), :mod:`batch` (page pairs of a
folder or a report, scored one after another) and :mod:`explain` (why each pair scored what it did). The command
line is :mod:`replay_tui.cli.visual`; a slow, straightforward re-implementation for the tests and the benchmark is
``tests/visual/reference_impl.py``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FIXES", "MODES", "PairResult", "VisualScorer"]


def __getattr__(name: str) -> Any:
    """The pipeline (numpy, scipy, OpenCV, bs4) is imported on first use, not whenever a sub-module is:
    every CLI command registers ``visual`` and must not pay a second for it."""
    if name in __all__:
        from replay_tui.visual import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
