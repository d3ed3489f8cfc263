"""Deterministic, data-type-aware verification of agent answers (WebArena-Verified style).

- :mod:`~replay_tui.verify.types`: typed normalisers chosen by a results schema.
- :mod:`~replay_tui.verify.normalize`: schema-driven normalisation of arrays and objects.
- :mod:`~replay_tui.verify.compare`: structural comparison into named assertions with paths.
- :mod:`~replay_tui.verify.evaluate`: task + answer -> verdict (upstream's flow).
- :mod:`~replay_tui.verify.models`: answers, tasks, assertions, results and reports.
- The ``replay-tui verify`` sub-command is :mod:`replay_tui.cli.verify`.
"""

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
