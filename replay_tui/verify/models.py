"""Data models for deterministic verification: agent responses, tasks, assertions and results.

The agent answers with ``{task_type, status, retrieved_data, error_details}`` (enums in any case;
a fenced JSON block inside free text is extracted). A task (WebArena-Verified format) holds an
``AgentResponseEvaluator`` config with a ``results_schema`` and the expected answer. Results follow
upstream's shapes: an evaluator result with named assertions, a task result, and a report whose
summary counts verdicts overall, per site and per data type.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from replay_tui.verify.rules import Rules

VerifyStatus = Literal["success", "failure", "error", "unverified"]
"""A verdict: every check passed, some check failed, the evaluation itself could not be done, or
every check that ran passed but one could not run (a network check without a trace: never a
success). An evaluator's own status is one of the first three."""


class _CaseInsensitiveEnum(StrEnum):
    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str):
            folded = value.strip().upper()
            for member in cls:
                if member.value == folded:
                    return member
        return None


class TaskType(_CaseInsensitiveEnum):
    """What the task is mainly about: reading data, changing data, or getting to a page."""

    RETRIEVE = "RETRIEVE"
    MUTATE = "MUTATE"
    NAVIGATE = "NAVIGATE"


class AgentStatus(_CaseInsensitiveEnum):
    """How the agent says the task ended."""

    SUCCESS = "SUCCESS"
    ACTION_NOT_ALLOWED_ERROR = "ACTION_NOT_ALLOWED_ERROR"
    PERMISSION_DENIED_ERROR = "PERMISSION_DENIED_ERROR"
    NOT_FOUND_ERROR = "NOT_FOUND_ERROR"
    DATA_VALIDATION_ERROR = "DATA_VALIDATION_ERROR"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"


_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)\r?\n?```", re.DOTALL)


def extract_response(raw: Any) -> Any:
    """Turn a raw agent answer into a value to evaluate (upstream's reading, slightly more tolerant).

    Objects pass through. Text is stripped; if it holds fenced code blocks (```` ``` ```` or
    ```` ```json ````, any language tag), the first block whose content parses as JSON is used (else
    the first block's text); otherwise the whole text is JSON-parsed. Text that does not parse stays
    text, which the evaluator reports as ``agent_response_invalid_format``. Empty answers are None.
    """
    if isinstance(raw, (bytes, bytearray)):
        raw = raw.decode("utf-8", errors="replace")
    if not isinstance(raw, str):
        return raw if raw or isinstance(raw, (int, float)) else None
    text = raw.strip()
    blocks = [m.group(1).strip() for m in _FENCE.finditer(raw)]
    candidates = blocks or [text]
    for candidate in candidates:
        try:
            return json.loads(candidate) if candidate else None
        except json.JSONDecodeError:
            continue
    return candidates[0] or None


# Upstream takes the first block fenced with ``` or ```json (lowercase only), whether or not it parses.
_UPSTREAM_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)\n?```", re.DOTALL)


def extract_response_upstream(raw: Any) -> Any:
    """The official evaluator's reading of a raw answer (``--rules upstream``).

    Text is trimmed; the first ```` ``` ```` / ```` ```json ```` block (exactly those tags) is taken
    when there is one (```` ```JSON ```` is not a tag there: its content then fails to parse); the
    result is JSON-parsed when it parses. Any falsy result (``{}``, ``[]``, ``""``, ``0``) is None.
    """
    value = raw
    if isinstance(raw, str):
        value = raw.strip()
        match = _UPSTREAM_FENCE.search(raw)
        if match:
            value = match.group(1).strip()
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            pass
    return value or None


class AgentResponse(BaseModel):
    """The agent's final answer in its strict form (for validation and display; evaluation is lenient)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    task_type: TaskType = Field(validation_alias=AliasChoices("task_type", "performed_operation"))
    status: AgentStatus
    retrieved_data: list[Any] | None = None
    error_details: str | None = None

    @classmethod
    def from_raw(cls, raw: Any) -> AgentResponse:
        """Parse a raw answer (object or text with an optional fenced JSON block).

        Raises :class:`ValueError` naming ``agent_response_invalid_format`` when it is not an object
        of the expected shape.
        """
        value = extract_response(raw)
        if not isinstance(value, dict):
            raise ValueError(f"agent_response_invalid_format: expected a structured object, got {type(value).__name__}")
        try:
            return cls.model_validate(value)
        except ValidationError as exc:
            raise ValueError(f"agent_response_invalid_format: {exc.errors()[0]['msg']}") from exc


def _expected_value(expected: dict[str, Any], key: str) -> Any:
    """``expected[key]``, falling back to ``performed_operation`` (the legacy name of ``task_type``).

    Any JSON value (None when neither is there): the enum it is given to rejects the rest.
    """
    return expected.get(key, expected.get("performed_operation"))


class AgentResponseEvaluatorConfig(BaseModel):
    """The ``AgentResponseEvaluator`` entry of a task's ``eval`` list."""

    model_config = ConfigDict(extra="allow", frozen=True)

    evaluator: Literal["AgentResponseEvaluator"] = "AgentResponseEvaluator"
    ordered: bool = False
    results_schema: dict[str, Any] | None = None
    expected: dict[str, Any]

    @field_validator("expected")
    @classmethod
    def _check_expected(cls, expected: dict[str, Any]) -> dict[str, Any]:
        for key, enum in (("task_type", TaskType), ("status", AgentStatus)):
            if key not in expected and not (key == "task_type" and "performed_operation" in expected):
                raise ValueError(f"expected answer has no {key!r}")
            value = _expected_value(expected, key)
            try:
                enum(value)
            except ValueError:
                raise ValueError(f"expected {key} {value!r} is not one of {[m.value for m in enum]}") from None
        data = expected.get("retrieved_data")
        if data is not None and not isinstance(data, list):
            raise ValueError("expected retrieved_data must be a list or null")
        return expected

    @property
    def task_type(self) -> TaskType:
        return TaskType(_expected_value(self.expected, "task_type"))

    @property
    def status(self) -> AgentStatus:
        return AgentStatus(self.expected["status"])

    @property
    def retrieved_data(self) -> list[Any] | None:
        return self.expected.get("retrieved_data")


class Task(BaseModel):
    """A WebArena-Verified task: the fields verification uses, the rest kept as given."""

    model_config = ConfigDict(extra="allow", frozen=True)

    task_id: int
    sites: list[str] = Field(default_factory=list)
    intent_template_id: int = -1
    intent: str = ""
    revision: int = 1
    eval: list[dict[str, Any]]

    @field_validator("eval")
    @classmethod
    def _has_agent_response_evaluator(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        configs = [e for e in value if isinstance(e, dict) and e.get("evaluator") == "AgentResponseEvaluator"]
        if not configs:
            raise ValueError("eval has no AgentResponseEvaluator")
        AgentResponseEvaluatorConfig.model_validate(configs[0])
        return value

    @cached_property
    def agent_response_config(self) -> AgentResponseEvaluatorConfig:
        config = next(e for e in self.eval if e.get("evaluator") == "AgentResponseEvaluator")
        return AgentResponseEvaluatorConfig.model_validate(config)

    @property
    def other_evaluators(self) -> list[str]:
        """Names of the task's evaluators that answer checking cannot run (e.g. network traces)."""
        return [str(e.get("evaluator")) for e in self.eval if e.get("evaluator") != "AgentResponseEvaluator"]


class TaskFileError(ValueError):
    """A tasks file that cannot be read or holds an invalid task."""


def parse_tasks(data: Any, source: str = "tasks") -> dict[int, Task]:
    """Validate a parsed tasks document (a list of tasks, or one task) into ``{task_id: Task}``."""
    items = [data] if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise TaskFileError(f"{source}: expected a JSON list of tasks, got {type(data).__name__}")
    tasks: dict[int, Task] = {}
    for index, item in enumerate(items):
        try:
            task = Task.model_validate(item)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error.get("loc", ()))
            ident = item.get("task_id") if isinstance(item, dict) else None
            raise TaskFileError(
                f"{source}: task #{index} (task_id {ident}): {where + ': ' if where else ''}{error['msg']}"
            ) from None
        if task.task_id in tasks:
            raise TaskFileError(f"{source}: task_id {task.task_id} appears twice")
        tasks[task.task_id] = task
    return tasks


def load_tasks(path: str | Path) -> dict[int, Task]:
    """Read a WebArena-Verified tasks file (e.g. ``webarena-verified.json``) into ``{task_id: Task}``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskFileError(f"{path}: not valid JSON: {exc}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # numbers past the digit limit, deep nesting
        reason = str(exc).split(";")[0].splitlines()[0] if str(exc) else type(exc).__name__
        raise TaskFileError(f"{path}: not usable JSON: {reason}") from None
    return parse_tasks(data, str(path))


class Assertion(BaseModel):
    """One failed check: its upstream-style name, what kind of check, where, and both sides.

    ``name`` is the path joined to the kind as upstream names it (``retrieved_data[2].price_mismatch``,
    ``agent_response.status_mismatch``, ``retrieved_data_array_values_mismatch``).
    """

    model_config = ConfigDict(frozen=True)

    name: str
    kind: str
    path: str
    expected: Any = None
    actual: Any = None
    message: str = ""


class EvaluatorResult(BaseModel):
    """The outcome of one evaluator: status, score and assertions (empty on success)."""

    evaluator_name: str = "AgentResponseEvaluator"
    status: VerifyStatus
    score: float
    actual: Any = None
    actual_normalized: Any = None
    expected: Any = None
    assertions: list[Assertion] = Field(default_factory=list)
    error_msg: str | None = None

    @classmethod
    def create(
        cls, *, assertions: list[Assertion] | None = None, error_msg: str | None = None, **kw: Any
    ) -> EvaluatorResult:
        if error_msg is not None:
            return cls(status="error", score=0.0, assertions=list(assertions or []), error_msg=error_msg, **kw)
        status: VerifyStatus = "failure" if assertions else "success"
        return cls(status=status, score=1.0 if status == "success" else 0.0, assertions=list(assertions or []), **kw)


class TaskResult(BaseModel):
    """The verdict for one answer to one task (binary: no partial credit)."""

    rules: Rules = "strict"
    line: int | None = None
    task_id: int
    intent_template_id: int = -1
    sites: list[str] = Field(default_factory=list)
    task_revision: int = 1
    data_types: list[str] = Field(default_factory=list)
    status: VerifyStatus
    score: float
    evaluators_results: list[EvaluatorResult] = Field(default_factory=list)
    skipped_evaluators: list[str] = Field(default_factory=list)
    error_msg: str | None = None

    @property
    def assertions(self) -> list[Assertion]:
        return [a for r in self.evaluators_results for a in r.assertions]

    @property
    def site_key(self) -> str:
        """Sites joined by ``-`` in sorted order, upstream's per-site summary key."""
        return "-".join(sorted(self.sites)) or "(none)"

    @classmethod
    def from_evaluators(cls, results: list[EvaluatorResult], **kw: Any) -> TaskResult:
        if any(r.status == "error" for r in results):
            status: VerifyStatus = "error"
        elif results and all(r.score == 1.0 for r in results):
            # what was checked passed; a check that could not run leaves the task unverified
            status = "unverified" if kw.get("skipped_evaluators") else "success"
        else:
            status = "failure"
        errors = [r.error_msg for r in results if r.error_msg]
        return cls(
            status=status,
            score=1.0 if status == "success" else 0.0,
            evaluators_results=results,
            error_msg=errors[0] if errors else None,
            **kw,
        )


class Counts(BaseModel):
    """Verdict counts for a group of results."""

    total: int = 0
    success: int = 0
    failure: int = 0
    error: int = 0
    unverified: int = 0
    """Answers whose checks that ran passed while another could not run: counted apart, never success."""
    success_task_ids: list[int] = Field(default_factory=list)
    failed_task_ids: list[int] = Field(default_factory=list)
    error_task_ids: list[int] = Field(default_factory=list)
    unverified_task_ids: list[int] = Field(default_factory=list)

    def add(self, result: TaskResult) -> None:
        self.total += 1
        if result.status == "success":
            self.success += 1
            self.success_task_ids.append(result.task_id)
        elif result.status == "unverified":
            self.unverified += 1
            self.unverified_task_ids.append(result.task_id)
        elif result.status == "failure":
            self.failure += 1
            self.failed_task_ids.append(result.task_id)
        else:
            self.error += 1
            self.error_task_ids.append(result.task_id)


class Summary(BaseModel):
    """Counts overall, per site (sites joined by ``-``), per data type, and assertion kinds seen."""

    overall: Counts = Field(default_factory=Counts)
    per_site: dict[str, Counts] = Field(default_factory=dict)
    per_data_type: dict[str, Counts] = Field(default_factory=dict)
    per_assertion_kind: dict[str, int] = Field(default_factory=dict)
    skipped_checks: int = 0
    """Checks not run (network checks without a trace): when nonzero the verdicts are answer-only."""

    @property
    def answer_only(self) -> bool:
        return self.skipped_checks > 0

    @classmethod
    def of(cls, results: list[TaskResult]) -> Summary:
        summary = cls()
        for result in results:
            summary.skipped_checks += len(result.skipped_evaluators)
            summary.overall.add(result)
            summary.per_site.setdefault(result.site_key, Counts()).add(result)
            for name in result.data_types or ["(none)"]:
                summary.per_data_type.setdefault(name, Counts()).add(result)
            for assertion in result.assertions:
                summary.per_assertion_kind[assertion.kind] = summary.per_assertion_kind.get(assertion.kind, 0) + 1
        return summary


class Report(BaseModel):
    """A verification run: the summary and, in input order, one result per answer line."""

    version: int = 1
    rules: Rules = "strict"
    summary: Summary
    results: list[TaskResult]

    @classmethod
    def of(cls, results: list[TaskResult], rules: Rules = "strict") -> Report:
        return cls(rules=rules, summary=Summary.of(results), results=results)

    def to_json_bytes(self) -> bytes:
        """Deterministic JSON: sorted keys, two-space indent, strict (no NaN), trailing newline."""
        data = self.model_dump(mode="json")
        text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        # a lone surrogate from the answers (valid in JSON as an escape) is written back as that escape
        return text.encode("utf-8", errors="backslashreplace")
