"""Deterministic, data-type-aware verification of agent answers (WebArena-Verified style).

- :mod:`~replay_tui.verify.types`: typed normalisers chosen by a results schema.
- :mod:`~replay_tui.verify.normalize`: schema-driven normalisation of arrays and objects.
- :mod:`~replay_tui.verify.compare`: structural comparison into named assertions with paths.
- :mod:`~replay_tui.verify.evaluate`: task + answer -> verdict (upstream's flow).
- :mod:`~replay_tui.verify.models`: answers, tasks, assertions, results and reports.
- The ``replay-tui verify`` sub-command is :mod:`replay_tui.cli.verify`.

The names below are imported on first use: :mod:`replay_tui.matching` reads only the normalisers of
``verify.types``, and importing them must not build the task and report models (a fifth of the
app's launch).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replay_tui.verify.evaluate import evaluate, evaluate_many, reference_response
    from replay_tui.verify.models import (
        AgentResponse,
        Assertion,
        EvaluatorResult,
        Report,
        Task,
        TaskFileError,
        TaskResult,
        extract_response,
        load_tasks,
    )

_HOMES = {
    **dict.fromkeys(("evaluate", "evaluate_many", "reference_response"), "replay_tui.verify.evaluate"),
    **dict.fromkeys(
        (
            "AgentResponse",
            "Assertion",
            "EvaluatorResult",
            "Report",
            "Task",
            "TaskFileError",
            "TaskResult",
            "extract_response",
            "load_tasks",
        ),
        "replay_tui.verify.models",
    ),
}
"""Each exported name -> the module that defines it."""

__all__ = [
    "AgentResponse",
    "Assertion",
    "EvaluatorResult",
    "Report",
    "Task",
    "TaskFileError",
    "TaskResult",
    "evaluate",
    "evaluate_many",
    "extract_response",
    "load_tasks",
    "reference_response",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
