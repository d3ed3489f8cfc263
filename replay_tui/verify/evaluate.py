"""Task + agent answer -> verdict, following upstream's AgentResponseEvaluator flow.

1. Read the answer (:func:`~replay_tui.verify.models.extract_response`).
2. Normalise the expected answer *strictly* (a failure is an ``error`` verdict: the task is broken).
3. Normalise the actual answer *leniently*, over the fixed keys ``task_type``, ``status`` and
   ``retrieved_data`` (``performed_operation`` is the legacy name of ``task_type``; a missing
   ``retrieved_data`` is null; other keys such as ``error_details`` are ignored).
4. Compare ``task_type`` and ``status`` (any case), then, for retrieve tasks only, ``retrieved_data``
   structurally by the task's ``results_schema``.

Without a trace, evaluators that need one (``NetworkEventEvaluator``) cannot run. Under ``strict``
rules they are listed in ``skipped_evaluators`` and the task is ``unverified`` when its answer
passes (never ``success``); under ``upstream`` rules the check is an error, as the official
evaluator reports a task it is given no trace for (score 0).

``rules="upstream"`` gives the official evaluator's verdicts instead (:func:`evaluate_agent_response_upstream`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from replay_tui.verify.compare import compare, compare_upstream
from replay_tui.verify.models import (
    Assertion,
    EvaluatorResult,
    Report,
    Task,
    TaskResult,
    TaskType,
    extract_response,
    extract_response_upstream,
)
from replay_tui.verify.network import NETWORK_EVALUATOR, Event, NetworkCheck, check_events
from replay_tui.verify.normalize import (
    Raw,
    _schema_kind,
    is_no_data,
    normalize_retrieved_data,
    normalize_retrieved_data_upstream,
    schema_data_types,
    to_display,
    to_jsonable,
)
from replay_tui.verify.rules import Rules
from replay_tui.verify.types import REGISTRY, STRING, Side, type_name

NO_TRACE_UPSTREAM = "no network trace to check: the official evaluator cannot evaluate the task without one"
"""The error of a network check given no trace under ``upstream`` rules (upstream's
``evaluate_task`` with no trace is an error with score 0, never a success)."""

SiteUrls = Mapping[str, Sequence[str]]
"""Site name (``gitlab``, ``GITLAB`` or ``__GITLAB__``) -> the base URLs it was served from."""


def placeholder(site: str) -> str:
    """``"shopping_admin"`` -> ``"__SHOPPING_ADMIN__"``."""
    return f"__{site.strip('_').upper()}__"


def sides_for(sites: Iterable[str], site_urls: SiteUrls | None = None, *, upstream: bool = False) -> tuple[Side, Side]:
    """The expected and actual :class:`Side` for a task, with URL (de)rendering for its sites."""
    urls = {key.strip("_").lower(): list(values) for key, values in (site_urls or {}).items()}
    pairs = [(base.rstrip("/"), placeholder(site)) for site in sites for base in urls.get(site.lower(), []) if base]
    if not pairs:
        return Side(expected=True, upstream=upstream), Side(expected=False, upstream=upstream)
    pairs.sort(key=lambda pair: -len(pair[0]))
    bases = {ph: base for base, ph in reversed(pairs)}

    # upstream finds a site URL in a text case-sensitively (``/ADMIN/...`` is not the admin site there)
    patterns = [(re.compile(re.escape(base), 0 if upstream else re.IGNORECASE), ph) for base, ph in pairs]

    def derender(text: str) -> str:
        for pattern, ph in patterns:
            text = pattern.sub(ph, text)
        return text

    def render(text: str) -> str:
        for ph, base in bases.items():
            if text.startswith(ph):
                return base + text[len(ph) :]
        return text

    return (
        Side(expected=True, derender=derender, render=render, upstream=upstream),
        Side(expected=False, derender=derender, render=render, upstream=upstream),
    )


def evaluate(
    task: Task,
    response: Any,
    *,
    site_urls: SiteUrls | None = None,
    line: int | None = None,
    rules: Rules = "strict",
    trace: Sequence[Event] | None = None,
) -> TaskResult:
    """Verify one answer (an object, or raw text) to ``task`` under ``rules``.

    With a ``trace`` (the requests the agent's browser made) the task's network checks run too;
    without one they are listed in ``skipped_evaluators`` and a passing answer leaves the task
    ``unverified`` (strict), or they are errors as upstream has them (``upstream``).
    """
    config = task.agent_response_config
    try:
        data_types = schema_data_types(config.results_schema)
    except Exception:
        data_types = []
    if rules == "upstream":
        result = evaluate_agent_response_upstream(task, response, site_urls=site_urls)
    else:
        result = evaluate_agent_response(task, response, site_urls=site_urls)
    results = [result]
    skipped = task.other_evaluators
    if trace is not None:
        results += evaluate_network(task, trace, site_urls=site_urls, rules=rules)
        skipped = [name for name in skipped if name != NETWORK_EVALUATOR]
    elif rules == "upstream" and NETWORK_EVALUATOR in skipped:
        results.append(EvaluatorResult.create(evaluator_name=NETWORK_EVALUATOR, error_msg=NO_TRACE_UPSTREAM))
        skipped = [name for name in skipped if name != NETWORK_EVALUATOR]
    return TaskResult.from_evaluators(
        results,
        rules=rules,
        line=line,
        task_id=task.task_id,
        intent_template_id=task.intent_template_id,
        sites=list(task.sites),
        task_revision=task.revision,
        data_types=data_types,
        skipped_evaluators=skipped,
    )


def evaluate_network(
    task: Task, trace: Sequence[Event], *, site_urls: SiteUrls | None = None, rules: Rules = "strict"
) -> list[EvaluatorResult]:
    """Run each network check of ``task`` on ``trace``.

    Site URLs come from ``site_urls``; for a one-site task without them, the origin of the trace's
    first request stands for the site (as upstream does when no environment is configured).
    """
    urls = dict(site_urls or {})
    known = {key.strip("_").lower() for key in urls}
    missing = [site for site in task.sites if site.lower() not in known]
    if missing and len(task.sites) == 1 and trace:
        parts = urlsplit(trace[0].url)
        if parts.scheme and parts.netloc:
            urls[missing[0]] = [f"{parts.scheme}://{parts.netloc}"]
    sides = sides_for(task.sites, urls, upstream=rules == "upstream")
    navigate = task.agent_response_config.task_type is TaskType.NAVIGATE
    results = []
    for config in task.eval:
        if config.get("evaluator") != NETWORK_EVALUATOR:
            continue
        try:
            check = NetworkCheck.from_config(config)
        except (ValueError, TypeError) as exc:
            results.append(EvaluatorResult.create(evaluator_name=NETWORK_EVALUATOR, error_msg=f"network check: {exc}"))
            continue
        results.append(check_events(check, trace, sides, navigate_task=navigate))
    return results


def evaluate_agent_response(task: Task, response: Any, *, site_urls: SiteUrls | None = None) -> EvaluatorResult:
    """Run the answer check of ``task`` on ``response``: the ``AgentResponseEvaluator`` result."""
    config = task.agent_response_config
    expected_side, actual_side = sides_for(task.sites, site_urls)
    expected: dict[str, Any] | None = None
    actual: Any = None
    try:
        is_retrieve = config.task_type is TaskType.RETRIEVE
        expected = {
            "task_type": STRING.make(config.task_type.value, expected_side),
            "status": STRING.make(config.status.value, expected_side),
            "retrieved_data": normalize_retrieved_data(config.retrieved_data, config.results_schema, expected_side),
        }
        value = extract_response(response)
        actual = _normalize_actual(value, is_retrieve, expected["retrieved_data"], config.results_schema, actual_side)
        assertions = compare(expected, actual, path="agent_response", ignored_keys={"retrieved_data"})
        if isinstance(actual, dict) and is_retrieve:
            assertions.extend(
                _compare_retrieved_data(expected["retrieved_data"], actual["retrieved_data"], config.ordered)
            )
        return EvaluatorResult.create(
            assertions=assertions,
            actual=to_jsonable(response),
            actual_normalized=to_display(actual),
            expected=to_display(expected),
        )
    except Exception as exc:  # a broken task (or a bug) is an error verdict, never a crash
        return EvaluatorResult.create(
            error_msg=f"task {task.task_id}: {type(exc).__name__}: {exc}",
            actual=to_jsonable(response),
            actual_normalized=to_display(actual),
            expected=to_display(expected),
        )


def evaluate_agent_response_upstream(
    task: Task, response: Any, *, site_urls: SiteUrls | None = None
) -> EvaluatorResult:
    """The answer check as the official evaluator runs it (``--rules upstream``), quirks included.

    Differences from :func:`evaluate_agent_response`: upstream's answer reading
    (:func:`~replay_tui.verify.models.extract_response_upstream`); the answer's keys are the ones the
    task's expected answer has (task 319's lacks ``retrieved_data``, so no answer can pass it); a
    ``task_type``/``status`` that is not text is an error; a "no data" task with a non-array results
    schema given data is an error; alternatives and patterns count on the agent's side too
    (symmetric equality); arrays match greedily.
    """
    config = task.agent_response_config
    expected_side, actual_side = sides_for(task.sites, site_urls, upstream=True)
    expected: dict[str, Any] | None = None
    actual: Any = None
    try:
        is_retrieve = config.task_type is TaskType.RETRIEVE
        expected = {
            "task_type": STRING.make(config.task_type.value, expected_side),
            "status": STRING.make(config.status.value, expected_side),
            "retrieved_data": normalize_retrieved_data_upstream(
                config.retrieved_data, config.results_schema, expected_side
            ),
        }
        actual = extract_response_upstream(response)
        if isinstance(actual, dict):
            actual = _normalize_actual_upstream(actual, task, is_retrieve, actual_side)
        assertions = compare_upstream(expected, actual, path="agent_response", ignored_keys={"retrieved_data"})
        if isinstance(actual, dict) and actual and is_retrieve:
            want, got = expected["retrieved_data"], actual.get("retrieved_data")
            if want is None and got is not None:
                assertions.append(_compare_retrieved_data(None, got, False)[0])
            elif want is not None and got is None:
                assertions.append(_compare_retrieved_data(want, None, False)[0])
            elif want is not None:
                assertions.extend(compare_upstream(want, got, path="retrieved_data", ordered=config.ordered))
        return EvaluatorResult.create(
            assertions=assertions,
            actual=to_jsonable(response),
            actual_normalized=to_display(actual),
            expected=to_display(expected),
        )
    except Exception as exc:  # upstream's outcome for any exception: an error verdict
        return EvaluatorResult.create(
            error_msg=f"task {task.task_id}: {type(exc).__name__}: {exc}",
            actual=to_jsonable(response),
            actual_normalized=to_display(actual),
            expected=to_display(expected),
        )


def _normalize_actual_upstream(value: dict[str, Any], task: Task, is_retrieve: bool, side: Side) -> dict[str, Any]:
    config = task.agent_response_config
    keys = ["task_type" if key == "performed_operation" else key for key in config.expected]
    actual: dict[str, Any] = {}
    for key in dict.fromkeys(k for k in keys if k in ("task_type", "status", "retrieved_data", "error_details")):
        source = key
        if key == "task_type" and key not in value and "performed_operation" in value:
            source = "performed_operation"
        if source not in value:
            if key == "retrieved_data":
                actual[key] = None
            continue
        if key == "retrieved_data":
            data = value[source]
            actual[key] = normalize_retrieved_data_upstream(data, config.results_schema, side) if is_retrieve else None
            continue
        raw = value[source]
        if not isinstance(raw, str):  # upstream calls .strip() on it
            raise TypeError(f"agent_response.{source}: expected text, got {type(raw).__name__}")
        text = raw.strip()
        actual[key] = STRING.make(text, side) if text else None
    return actual


def _normalize_actual(value: Any, is_retrieve: bool, expected_data: Any, schema: Any, side: Side) -> Any:
    if not isinstance(value, dict):
        return value  # compared against an object: agent_response_invalid_format (or _none_mismatch)
    actual: dict[str, Any] = {}
    for key in ("task_type", "status"):
        source = key if key in value else "performed_operation" if key == "task_type" else None
        if source is None or source not in value:
            continue  # agent_response_keys_mismatch
        raw = value[source]
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            actual[key] = None
        elif isinstance(raw, str):
            actual[key] = STRING.make(raw.strip(), side)
        else:
            actual[key] = Raw(raw, "string", f"expected text, got {type(raw).__name__}")
    data = value.get("retrieved_data")
    if not is_retrieve or is_no_data(data):
        actual["retrieved_data"] = None
    elif expected_data is None:
        actual["retrieved_data"] = Raw(data, "null", "no data expected")  # reported as retrieved_data_unexpected
    else:
        actual["retrieved_data"] = normalize_retrieved_data(data, schema, side)
    return actual


def _compare_retrieved_data(expected: Any, actual: Any, ordered: bool) -> list[Assertion]:
    if expected is None and actual is None:
        return []
    if expected is None:
        return [
            Assertion(
                name="retrieved_data_unexpected",
                kind="unexpected",
                path="retrieved_data",
                expected=None,
                actual=to_display(actual),
                message="expected no retrieved_data, got some",
            )
        ]
    if actual is None:
        return [
            Assertion(
                name="retrieved_data_missing_or_null",
                kind="missing_or_null",
                path="retrieved_data",
                expected=to_display(expected),
                actual=None,
                message=f"expected {len(expected)} item(s) of retrieved_data, got none (null or empty)",
            )
        ]
    return compare(expected, actual, path="retrieved_data", ordered=ordered)


def evaluate_many(
    tasks: Mapping[int, Task],
    answers: Iterable[tuple[Any, ...]],
    *,
    site_urls: SiteUrls | None = None,
    rules: Rules = "strict",
    traces: Callable[[int], Sequence[Event] | None] | None = None,
) -> Report:
    """Verify answers in order: ``(task_id, response)`` or ``(line, task_id, response)`` tuples.

    An answer to a task id that is not in ``tasks`` is an ``error`` line. ``traces`` gives the
    trace of a task id (or None: its network checks are skipped).
    """
    results: list[TaskResult] = []
    for index, answer in enumerate(answers, start=1):
        line, task_id, response = answer if len(answer) == 3 else (index, *answer)
        task = tasks.get(task_id)
        if task is None:
            results.append(
                TaskResult(
                    rules=rules,
                    line=line,
                    task_id=task_id,
                    status="error",
                    score=0.0,
                    error_msg=f"unknown task_id {task_id}",
                )
            )
            continue
        trace = traces(task_id) if traces is not None else None
        results.append(evaluate(task, response, site_urls=site_urls, line=line, rules=rules, trace=trace))
    return Report.of(results, rules=rules)


# --------------------------------------------------------------------------------------------------
# Reference answers: a task's own expected answer, as an agent would give it
# --------------------------------------------------------------------------------------------------


def reference_response(task: Task, choice: int = 0) -> dict[str, Any]:
    """The answer a perfect agent would give: the expected answer with one value per alternative.

    ``choice`` picks which alternative (0 = first, -1 = last) wherever the expected answer offers
    several. Patterns are given as written (an answer equal to a pattern's text matches it).
    """
    config = task.agent_response_config
    data = config.retrieved_data
    if data is not None:
        items = config.results_schema.get("items") if config.results_schema else None
        data = [_pick(item, items or {}, choice) for item in data]
    return {
        "task_type": config.task_type.value,
        "status": config.status.value,
        "retrieved_data": data,
        "error_details": None,
    }


def _pick(value: Any, schema: Mapping[str, Any], choice: int) -> Any:
    kind = _schema_kind(schema)
    if kind == "object":
        if not isinstance(value, dict):
            return value
        props = schema.get("properties") or {}
        return {k: (None if v is None else _pick(v, props.get(k) or {}, choice)) for k, v in value.items()}
    if kind == "array":
        if isinstance(value, list):
            return [_pick(v, schema.get("items") or {}, choice) for v in value]
        return value
    dtype = REGISTRY.get(type_name(schema))
    if dtype is not None and dtype.is_alternatives(value) and value:
        return value[choice]
    return value
