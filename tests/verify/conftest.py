"""Shared fixtures for the verifier tests: the bundled WebArena-Verified tasks and demo answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay_tui.verify.models import Task, load_tasks
from replay_tui.verify.types import ACTUAL, EXPECTED, REGISTRY, TypedValue

DATA = Path(__file__).parent / "data"
TASKS_FILE = DATA / "webarena-verified.json"
DEMO = DATA / "demo"


@pytest.fixture(scope="session")
def tasks() -> dict[int, Task]:
    return load_tasks(TASKS_FILE)


def passing(task: Task) -> str:
    """The verdict of a passing answer to ``task`` without a trace (strict rules): ``unverified``
    when the task has network checks (they cannot run: never ``success``), else ``success``."""
    return "unverified" if task.other_evaluators else "success"


def demo(task_id: int) -> tuple[str, dict[str, Any]]:
    """A demo's raw agent response text and its upstream eval_result."""
    folder = DEMO / str(task_id)
    return (folder / "agent_response.json").read_text(), json.loads((folder / "eval_result.json").read_text())


def expected(type_name: str, raw: Any) -> TypedValue:
    return REGISTRY[type_name].make(raw, EXPECTED)


def actual(type_name: str, raw: Any) -> TypedValue:
    return REGISTRY[type_name].make(raw, ACTUAL)


def same(type_name: str, want: Any, got: Any) -> bool:
    """Whether ``got`` (an agent's value) matches ``want`` (an expected value) for this data type."""
    return expected(type_name, want).matches(actual(type_name, got))
