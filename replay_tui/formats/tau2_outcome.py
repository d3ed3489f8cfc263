"""A tau2-bench simulation run's own verdict as an :class:`~replay_tui.episodes.model.Outcome`.

Facts from tau2's evaluator (``src/tau2/evaluator/``, ``data_model/{simulation,tasks}.py``,
``metrics/agent_metrics.py``) this follows:

- success is ``is_successful(reward)``: the reward within 1e-6 of 1;
- a run that did not end with ``agent_stop``/``user_stop`` is not evaluated (reward 0, a note in
  ``reward_info.info``); a task without ``evaluation_criteria`` gets reward 1 ("No evaluation
  criteria"): both notes are the outcome's ``explanation``;
- ``reward_basis`` says which components gate the reward (default ``[DB, COMMUNICATE]``); the
  others still run and are recorded as diagnostics: in airline/retail/telecom the action checks
  never gate it (a run may succeed with an action "missed": another path reached the same DB);
- ``infrastructure_error`` runs never ran (tau2 leaves them out of its metrics), ``user_error`` is
  the user simulator breaking the protocol, ``unexpected_error`` a crash: those are *errored*;
  ``agent_error`` (the agent broke the protocol), ``too_many_errors``, ``max_steps``, ``timeout``
  and ``context_window_exceeded`` are the agent's failures, named by ``status``.

Checks, in ``RewardInfo``'s order: ``db``, ``env assertion <function>``, ``action <n> <tool>``
(``(user)`` for a simulated user's action), ``nl assertion "…"``, ``communicate "…"``.
"""

from __future__ import annotations

from typing import Any

import orjson

from replay_tui.episodes.model import ExpectedAction, Outcome, OutcomeCheck, ToolCall, TrajectoryStep

SUCCESS_TOLERANCE = 1e-6
"""tau2's ``is_successful``: a reward within this of 1 is a success."""

ERRORED = {
    "infrastructure_error": "the simulation never ran (infrastructure error; tau2 leaves it out of its metrics)",
    "user_error": "the user simulator broke the conversation protocol",
    "unexpected_error": "the simulation crashed",
}
"""Termination reasons that mean the run broke, not that the agent failed, with what they mean."""

_BASIS_OF = {
    "db": "DB",
    "env": "ENV_ASSERTION",
    "action": "ACTION",
    "nl": "NL_ASSERTION",
    "communicate": "COMMUNICATE",
}
_DEFAULT_BASIS = ("DB", "COMMUNICATE")
"""``EvaluationCriteria.reward_basis``'s default (the original tau-bench's)."""
_QUOTED = 60


class BadField(Exception):
    """A malformed part of one simulation run: ``field`` (a path inside the run) and why."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def run_outcome(run: dict[str, Any], task: dict[str, Any] | None, steps: list[TrajectoryStep]) -> Outcome:
    """The outcome of ``run`` (a ``SimulationRun`` as JSON) of ``task`` (None when the file lacks it).

    Raises :class:`BadField` when ``reward_info``, its reward or the termination reason has the
    wrong type; a malformed check or reference action becomes a check named after its field."""
    reward_info = run.get("reward_info")
    if reward_info is not None and not isinstance(reward_info, dict):
        raise BadField("reward_info", f"expected an object, got {kind_of(reward_info)}")
    info = reward_info or {}
    reward: float | None = None
    value = info.get("reward")
    if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        raise BadField("reward_info.reward", f"expected a number, got {kind_of(value)}")
    if value is not None:
        reward = float(value)
    status = run.get("termination_reason")
    if status is not None and not isinstance(status, str):
        raise BadField("termination_reason", f"expected a string, got {kind_of(status)}")

    criteria = task.get("evaluation_criteria") if isinstance(task, dict) else None
    criteria = criteria if isinstance(criteria, dict) else {}
    recorded = info.get("reward_basis")
    if not isinstance(recorded, list):
        recorded = criteria.get("reward_basis")
    basis: list[Any] | tuple[str, ...] = recorded if isinstance(recorded, list) else _DEFAULT_BASIS
    checks: list[OutcomeCheck] = []
    _db_check(info.get("db_check"), basis, checks)
    _env_checks(info.get("env_assertions"), basis, checks)
    _action_checks(info.get("action_checks"), basis, checks)
    _text_checks(info.get("nl_assertions"), "nl_assertions", "nl_assertion", "nl", basis, checks)
    _text_checks(info.get("communicate_checks"), "communicate_checks", "info", "communicate", basis, checks)
    expected = _expected_actions(criteria.get("actions"), "evaluation_criteria.actions", checks)
    if expected is None or (not expected and criteria.get("actions") is None):
        # no reference in the task (a run file without its results, tau2 forks' acceptable
        # outcomes): the actions tau2 checked are the reference it used
        from_checks = [c.get("action") for c in info.get("action_checks") or [] if isinstance(c, dict)]
        expected = _expected_actions(from_checks, "reward_info.action_checks[].action", checks) or []
    _tool_types(info.get("action_checks"), expected)

    note = info.get("info", {}).get("note") if isinstance(info.get("info"), dict) else None
    error = _error(run, status)
    nl = criteria.get("nl_assertions")
    target = "\n".join(item for item in nl if isinstance(item, str)) if isinstance(nl, list) else ""
    answer = next((step.content for step in reversed(steps) if step.action is None and step.content.strip()), None)
    return Outcome(
        reward=reward,
        success=None if reward is None else abs(reward - 1.0) <= SUCCESS_TOLERANCE,
        status=status,
        scores=dict(info),
        error=error,
        target=target or None,
        answer=answer,
        explanation=note if isinstance(note, str) and note else None,
        checks=checks,
        expected_actions=expected,
    )


def _error(run: dict[str, Any], status: str | None) -> str | None:
    details: dict[str, Any] = run["info"] if isinstance(run.get("info"), dict) else {}
    message = details.get("error") if isinstance(details.get("error"), str) else None
    if message:
        kind = details.get("error_type")
        return f"{kind}: {message}" if isinstance(kind, str) and kind else message
    if status in ERRORED:
        return f"{status}: {ERRORED[status]}"
    return None


def _counts(component: str, basis: list[Any] | tuple[str, ...]) -> bool:
    return _BASIS_OF[component] in basis


def _db_check(raw: Any, basis: list[Any] | tuple[str, ...], checks: list[OutcomeCheck]) -> None:
    if raw is None:
        return
    if not isinstance(raw, dict):
        checks.append(_malformed("reward_info.db_check", raw))
        return
    match = raw.get("db_match")
    passed = match if isinstance(match, bool) else None
    detail = {
        True: "the end state equals the reference's",
        False: "the end state differs from the reference's (its actions replayed)",
        None: "",
    }[passed]
    checks.append(
        OutcomeCheck(name="db", passed=passed, value=raw.get("db_reward"), detail=detail, counts=_counts("db", basis))
    )


def _env_checks(raw: Any, basis: list[Any] | tuple[str, ...], checks: list[OutcomeCheck]) -> None:
    for position, entry in enumerate(_entries(raw, "reward_info.env_assertions", checks)):
        where = f"reward_info.env_assertions[{position}]"
        assertion = entry.get("env_assertion") if isinstance(entry, dict) else None
        if not isinstance(assertion, dict):
            checks.append(_malformed(where, entry))
            continue
        function = str(assertion.get("func_name") or "?")
        arguments: dict[str, Any] = assertion["arguments"] if isinstance(assertion.get("arguments"), dict) else {}
        wanted = assertion.get("assert_value", True)
        side = assertion.get("env_type") or "assistant"
        detail = f"{side} env: {ToolCall(name=function, arguments=arguments).display()} should be {wanted}"
        if isinstance(assertion.get("message"), str) and assertion["message"]:
            detail += f" ({assertion['message']})"
        met = entry.get("met")
        checks.append(
            OutcomeCheck(
                name=f"env assertion {function}",
                passed=met if isinstance(met, bool) else None,
                value=entry.get("reward"),
                detail=detail,
                counts=_counts("env", basis),
            )
        )


def _action_checks(raw: Any, basis: list[Any] | tuple[str, ...], checks: list[OutcomeCheck]) -> None:
    counts = _counts("action", basis)
    for position, entry in enumerate(_entries(raw, "reward_info.action_checks", checks)):
        where = f"reward_info.action_checks[{position}]"
        action = _expected_action(entry.get("action") if isinstance(entry, dict) else None)
        if action is None:
            checks.append(_malformed(where, entry))
            continue
        match = entry.get("action_match")
        passed = match if isinstance(match, bool) else None
        compared = (
            "every argument it gave"
            if action.compare_args is None
            else "no argument"
            if not action.compare_args
            else ", ".join(action.compare_args)
        )
        verb = {True: "made", False: "not made", None: "unknown"}[passed]
        who = "by the user simulator " if action.requestor == "user" else ""
        detail = f"{verb} {who}({compared} compared): {action.display()}"
        if not counts:
            detail += " [diagnostic: ACTION is not in the reward basis]"
        checks.append(
            OutcomeCheck(
                name=f"action {position + 1} {action.name}" + (" (user)" if action.requestor == "user" else ""),
                passed=passed,
                value=entry.get("action_reward"),
                detail=detail,
                counts=counts,
            )
        )


def _text_checks(
    raw: Any, field: str, key: str, component: str, basis: list[Any] | tuple[str, ...], checks: list[OutcomeCheck]
) -> None:
    label = {"nl": "nl assertion", "communicate": "communicate"}[component]
    for position, entry in enumerate(_entries(raw, f"reward_info.{field}", checks)):
        text = entry.get(key) if isinstance(entry, dict) else None
        if not isinstance(text, str):
            checks.append(_malformed(f"reward_info.{field}[{position}]", entry))
            continue
        quoted = text if len(text) <= _QUOTED else text[: _QUOTED - 1] + "…"
        met = entry.get("met")
        justification = entry.get("justification")
        checks.append(
            OutcomeCheck(
                name=f'{label} "{quoted}"',
                passed=met if isinstance(met, bool) else None,
                detail=justification if isinstance(justification, str) else "",
                counts=_counts(component, basis),
            )
        )


def _entries(raw: Any, field: str, checks: list[OutcomeCheck]) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        checks.append(_malformed(field, raw))
        return []
    return raw


def _malformed(field: str, value: Any) -> OutcomeCheck:
    return OutcomeCheck(name=field, passed=None, detail=f"unreadable: {kind_of(value)} where an entry was expected")


def _expected_action(raw: Any) -> ExpectedAction | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        return None
    arguments = raw.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        return None
    compare = raw.get("compare_args")
    if compare is not None and not (isinstance(compare, list) and all(isinstance(k, str) for k in compare)):
        return None
    requestor = raw.get("requestor")
    action_id = raw.get("action_id")
    return ExpectedAction(
        name=raw["name"],
        arguments=dict(arguments or {}),
        requestor=requestor if isinstance(requestor, str) and requestor else "assistant",
        compare_args=None if compare is None else list(compare),
        action_id=str(action_id) if isinstance(action_id, (str, int)) and not isinstance(action_id, bool) else None,
    )


def _expected_actions(raw: Any, field: str, checks: list[OutcomeCheck]) -> list[ToolCall] | None:
    """The reference's actions in order; None when there is none; [] (and a check naming the
    entry) when one is unreadable, so a partial reference is never aligned as if whole."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        checks.append(_malformed(field, raw))
        return []
    actions: list[ToolCall] = []
    for position, entry in enumerate(raw):
        action = _expected_action(entry)
        if action is None:
            shown = orjson.dumps(entry, option=orjson.OPT_NON_STR_KEYS).decode()[:_QUOTED]
            detail = f"unreadable reference action (an object with a name, arguments, compare_args): {shown}"
            checks.append(OutcomeCheck(name=f"{field}[{position}]", passed=None, detail=detail))
            return []
        actions.append(action)
    return actions


def _tool_types(raw: Any, expected: list[ToolCall]) -> None:
    """Newer tau2 files record each checked action's tool type: carried onto the reference's
    actions of the same tool (what :mod:`replay_tui.expected` reads to tell writes apart)."""
    if not isinstance(raw, list):
        return
    types: dict[str, str] = {}
    for entry in raw:
        action = entry.get("action") if isinstance(entry, dict) else None
        kind = entry.get("tool_type") if isinstance(entry, dict) else None
        if isinstance(action, dict) and isinstance(kind, str) and isinstance(action.get("name"), str):
            types[action["name"]] = kind
    for action in expected:
        if isinstance(action, ExpectedAction) and action.name in types:
            action.tool_type = types[action.name]
