"""The sequential reference: each bundled pair scored on its own (no batch, no renders shared), once per worker.

``tests/visual/test_jobs.py`` compares every batch (shared renders, ``jobs`` 1 to 3) with it, and the pipeline's
score checks (``tests/visual/test_pipeline.py``) read the same pairs' results: scoring a pair again would render the
same pages again. Real renders, the session's bare renderer (this is the reference renders are checked against).
"""

from __future__ import annotations

import threading
from pathlib import Path

from replay_tui.visual.models import PairReport
from replay_tui.visual.pipeline import PairResult, VisualScorer
from replay_tui.visual.render import Renderer
from replay_tui.visual.report import score_and_report

_lock = threading.Lock()
_scored: dict[tuple[str, str, str], tuple[PairReport, PairResult]] = {}


def alone(renderer: Renderer, ref: Path, pred: Path, mode: str) -> tuple[PairReport, PairResult]:
    """``score_and_report`` of the pair on its own in ``mode``; callers read it, never change it."""
    key = (str(Path(ref).resolve()), str(Path(pred).resolve()), mode)
    with _lock:
        if key not in _scored:
            _scored[key] = score_and_report(VisualScorer(renderer=renderer), ref, pred, mode)
        return _scored[key]
