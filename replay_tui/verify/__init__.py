"""Deterministic, data-type-aware verification of agent answers (WebArena-Verified style).

- :mod:`~replay_tui.verify.types`: typed normalisers chosen by a results schema.
- :mod:`~replay_tui.verify.normalize`: schema-driven normalisation of arrays and objects.
- :mod:`~replay_tui.verify.compare`: structural comparison into named assertions with paths.
- :mod:`~replay_tui.verify.evaluate`: task + answer -> verdict (upstream's flow).
- :mod:`~replay_tui.verify.models`: answers, tasks, assertions, results and reports.
- :mod:`~replay_tui.verify.actions`: typed comparison of WebShop actions for the replay debugger.
- The ``replay-tui verify`` sub-command is :mod:`replay_tui.cli.verify`.
"""

from replay_tui.verify.actions import ActionVerdict, compare_actions
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
    "ActionVerdict",
    "AgentResponse",
    "Assertion",
    "EvaluatorResult",
    "Report",
    "Task",
    "TaskFileError",
    "TaskResult",
    "compare_actions",
    "evaluate",
    "evaluate_many",
    "extract_response",
    "load_tasks",
    "reference_response",
]
