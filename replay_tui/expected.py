"""Task-level expected vs actual: the reference's actions aligned with the agent's calls.

A log may carry the task's own reference (tau2's ``evaluation_criteria.actions``): the calls a
correct agent makes. Each expected action is **matched** (a call of the same tool whose compared
arguments are equal, judged by :func:`replay_tui.matching.judge_call`), **different** (the tool
was called, with an argument that differs: the reason names it), or **missing**. This is the
second, stronger "expected" beside teacher-forced replay's per-step one, kept apart from it by name.

As tau2's ``ActionEvaluator`` judges it: order does not matter, any recorded call may match any
expected action (the agent's, every parallel call of a step, and a simulated user's), and only the
arguments in the action's ``compare_args`` are compared (None: every argument the *call* gave, so
an argument the reference has and the call lacks is not compared; ``[]``: the name alone).

Who is to act is kept apart: an expected action with requestor ``user`` (tau2 telecom's user-side
actions) is not the agent's to make, so it is counted in :attr:`TaskAlignment.missed_by_user`, never
in :attr:`TaskAlignment.missed`.

**Extra write-like calls** are the agent's calls that change state and that no expected action
used (a second booking, a cancellation nobody asked for). A tool is write-like when the log says
(tau2's ``tool_type``; an MCP tool's ``readOnlyHint``/``destructiveHint`` annotation), else when its
name starts with a verb that changes state (:data:`WRITE_VERBS`: ``book_``, ``cancel_``,
``update_``, ``toggle_``...). Read tools, ``think``, ``calculate`` and ``transfer_to_human_agents``
(tau2's "generic") are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from replay_tui.episodes.model import ExpectedAction, ToolCall, Trajectory, parse_call_text
from replay_tui.matching import MatchPolicy, judge_call

EXPECTED_STATUSES = ("matched", "different", "missing")

WRITE_VERBS = frozenset(
    {
        "add", "apply", "book", "cancel", "change", "charge", "close", "connect", "create", "delete",
        "disable", "disconnect", "dismiss", "edit", "enable", "exchange", "grant", "insert", "log",
        "make", "modify", "move", "open", "patch", "pay", "post", "put", "refuel", "refund", "register",
        "reboot", "remove", "rename", "request", "reseat", "reset", "resume", "return", "revoke", "save",
        "send", "set", "submit", "suspend", "toggle", "update", "upsert", "write",
    }
)  # fmt: skip
"""Leading words of tool names that change state (tau2's write tools in airline, retail, telecom
and its mock domain all start with one; none of its read or generic tools does)."""

_WORDS = re.compile(r"[_\-\s.]+|(?<=[a-z0-9])(?=[A-Z])")


class RecordedCall(NamedTuple):
    """A call the log records: the trajectory step it belongs to, the call, and who made it."""

    step: int
    """The step's index (for a simulated user's call: the agent's last step before it, or 0)."""
    call: ToolCall
    requestor: str = "assistant"


@dataclass(frozen=True, slots=True)
class ExpectedHit:
    """One expected action and what was done about it."""

    position: int
    """The action's position in the reference (0-based)."""
    expected: ToolCall
    status: str
    """One of :data:`EXPECTED_STATUSES`."""
    step: int | None = None
    """The step of the call that matched or came closest; for a missing action, the step where it
    should have been: the one after the previous matched expected action's step (0 when none)."""
    reason: str = ""
    """For ``different``: the judge's reason, naming the differing argument; for ``missing``: why."""
    requestor: str = "assistant"
    """Who is to make it (``user``: a simulated user, not the agent)."""

    @property
    def name(self) -> str:
        return self.expected.name


@dataclass(frozen=True, slots=True)
class TaskAlignment:
    """Every expected action's hit, in the reference's order, and the agent's extra writes."""

    hits: list[ExpectedHit] = field(default_factory=list)
    extra_writes: list[RecordedCall] = field(default_factory=list)
    """The agent's write-like calls no expected action used, in the log's order."""

    @property
    def missed(self) -> list[str]:
        """The names of the agent's expected actions missed or matched with different arguments,
        in the reference's order (a simulated user's are in :attr:`missed_by_user`)."""
        return [hit.name for hit in self.hits if hit.status != "matched" and hit.requestor != "user"]

    @property
    def missed_by_user(self) -> list[str]:
        """The same for the actions a simulated user was to make (not the agent's misses)."""
        return [hit.name for hit in self.hits if hit.status != "matched" and hit.requestor == "user"]

    def count(self, status: str, requestor: str | None = None) -> int:
        """How many hits have ``status`` (only ``requestor``'s when given: ``assistant``, ``user``)."""
        return sum(1 for hit in self.hits if hit.status == status and (requestor is None or hit.requestor == requestor))

    @property
    def agent_total(self) -> int:
        """The expected actions that are the agent's to make."""
        return sum(1 for hit in self.hits if hit.requestor != "user")


class PredictedStep(Protocol):
    """What :func:`align_predicted` reads of a replay's step result (:class:`replay_tui.runner.StepResult`)."""

    @property
    def step_number(self) -> int: ...

    @property
    def predicted(self) -> str: ...


def compared_arguments(expected: ToolCall, call: ToolCall) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arguments of ``expected`` and ``call`` that are compared, as tau2's
    ``Action.compare_with_tool_call`` picks them: ``compare_args`` when the reference gives them,
    else the call's own keys."""
    keys = expected.compare_args if isinstance(expected, ExpectedAction) else None
    chosen = set(call.arguments) if keys is None else set(keys)
    return (
        {key: value for key, value in expected.arguments.items() if key in chosen},
        {key: value for key, value in call.arguments.items() if key in chosen},
    )


def is_write_like(name: str, tool_type: str | None = None, spec: Mapping[str, Any] | None = None) -> bool:
    """True when a tool called ``name`` changes state (see the module docstring): the log's
    ``tool_type`` first, then the tool spec's MCP annotations, then the name's first word."""
    if tool_type:
        return tool_type.lower() == "write"
    hints = spec.get("annotations") if isinstance(spec, Mapping) else None
    if isinstance(hints, Mapping):
        if hints.get("readOnlyHint") is True:
            return False
        if hints.get("readOnlyHint") is False or hints.get("destructiveHint") is True:
            return True
    words = [word for word in _WORDS.split(name) if word]
    return bool(words) and words[0].lower() in WRITE_VERBS


def align_expected(
    expected: Sequence[ToolCall],
    calls: Sequence[tuple[int, ToolCall] | RecordedCall],
    policy: MatchPolicy = "exact",
    *,
    last_step: int | None = None,
    tools: Iterable[Mapping[str, Any]] = (),
) -> TaskAlignment:
    """Align ``expected`` actions with the recorded ``calls`` (``(step index, call)`` pairs, or
    :class:`RecordedCall` with who made them), in the log's order.

    ``last_step`` caps where a missing action is placed; ``tools`` are tool specs (OpenAI or MCP
    shape) whose annotations say which tools write."""
    recorded = [item if isinstance(item, RecordedCall) else RecordedCall(item[0], item[1]) for item in calls]
    used: set[int] = set()
    hits: list[ExpectedHit] = []
    previous_step: int | None = None
    for position, want in enumerate(expected):
        requestor = want.requestor if isinstance(want, ExpectedAction) else "assistant"
        found, closest = _search(want, recorded, policy)
        if found is not None:
            used.add(found)
            previous_step = recorded[found].step
            hits.append(ExpectedHit(position, want, "matched", previous_step, requestor=requestor))
        elif closest is not None:
            used.add(closest[0])
            hits.append(ExpectedHit(position, want, "different", recorded[closest[0]].step, closest[1], requestor))
        else:
            where = 0 if previous_step is None else previous_step + 1
            if last_step is not None:
                where = max(0, min(where, last_step))
            who = "the user simulator" if requestor == "user" else "the agent"
            hits.append(ExpectedHit(position, want, "missing", where, f"{who} never called {want.name}", requestor))
    return TaskAlignment(hits, _extra_writes(expected, recorded, used, tools))


def _search(
    want: ToolCall, recorded: list[RecordedCall], policy: MatchPolicy
) -> tuple[int | None, tuple[int, str] | None]:
    """The first call accepted for ``want`` (its position in ``recorded``); else the closest call of
    the same tool (most compared arguments equal, the earliest on a tie) and why it differs."""
    closest: tuple[int, str] | None = None
    best = -1
    for number, (_, call, _) in enumerate(recorded):
        if call.raw_arguments is not None and not call.arguments:
            if call.name == want.name and closest is None:
                closest, best = (number, f"arguments unreadable: {call.raw_arguments[:80]}"), 0
            continue
        wanted, given = compared_arguments(want, call)
        verdict = judge_call(want.name, wanted, call.name, given, policy)
        if verdict.accepted:
            return number, None
        if verdict.part == "kind":
            continue
        same = sum(1 for key, value in wanted.items() if key in given and given[key] == value)
        if same > best:
            closest, best = (number, verdict.reason), same
    return None, closest


def _extra_writes(
    expected: Sequence[ToolCall], recorded: list[RecordedCall], used: set[int], tools: Iterable[Mapping[str, Any]]
) -> list[RecordedCall]:
    types = {
        action.name: action.tool_type
        for action in expected
        if isinstance(action, ExpectedAction) and action.tool_type is not None
    }
    specs: dict[str, Mapping[str, Any]] = {}
    for tool in tools:  # OpenAI {"type": "function", "function": {...}} or MCP {"name", "annotations"}
        inner = tool.get("function")
        spec = inner if isinstance(inner, Mapping) else tool
        if isinstance(spec.get("name"), str):
            specs[spec["name"]] = {"annotations": tool.get("annotations") or spec.get("annotations")}
    return [
        item
        for number, item in enumerate(recorded)
        if number not in used
        and item.requestor != "user"
        and is_write_like(item.call.name, types.get(item.call.name), specs.get(item.call.name))
    ]


def recorded_calls(trajectory: Trajectory) -> list[RecordedCall]:
    """Every call ``trajectory`` records, in the log's order: each step's action and its parallel
    calls (the agent's), and the calls others made (a simulated user's) after the step they follow."""
    agent = [
        RecordedCall(step.index, call)
        for step in trajectory.steps
        if step.action is not None
        for call in (step.action, *step.other_actions)
    ]
    return _merged(agent, trajectory)


def _merged(agent: list[RecordedCall], trajectory: Trajectory) -> list[RecordedCall]:
    """``agent`` calls with the trajectory's side calls placed after the step each follows."""
    side = [
        RecordedCall(-1 if item.after is None else item.after, item.call, item.requestor)
        for item in trajectory.side_calls
    ]
    merged = sorted([*agent, *side], key=lambda item: item.step)  # stable: the log's order within a step
    return [item if item.step >= 0 else item._replace(step=0) for item in merged]


def _tools(trajectory: Trajectory) -> list[Mapping[str, Any]]:
    seen: dict[int, list[dict[str, Any]]] = {}
    for step in trajectory.steps:
        if step.tools:
            seen.setdefault(id(step.tools), step.tools)
    return [tool for tools in seen.values() for tool in tools if isinstance(tool, Mapping)]


def align_trajectory(
    trajectory: Trajectory, policy: MatchPolicy = "exact", *, reference: Sequence[ToolCall] | None = None
) -> TaskAlignment | None:
    """The alignment of ``trajectory``'s recorded calls with its log's expected actions (or with
    ``reference``: another run's log of the same task, so two runs are judged by one reference);
    None when there are no reference actions."""
    expected = trajectory.outcome.expected_actions if reference is None else reference
    if not expected:
        return None
    return align_expected(
        expected,
        recorded_calls(trajectory),
        policy,
        last_step=max(len(trajectory.steps) - 1, 0),
        tools=_tools(trajectory),
    )


def align_predicted(
    trajectory: Trajectory, results: Iterable[PredictedStep], policy: MatchPolicy = "exact"
) -> TaskAlignment | None:
    """The same alignment for a replay's **predicted** calls: what the replayed model would have
    hit of the task's reference ("4/5 expected actions").

    ``results`` are the replay's step results of this one episode (their ``step_number`` is the
    trajectory step's index). A step's prediction stands for the whole step (a replay predicts one
    call: the recording's parallel calls are not counted); steps the replay did not reach, or whose
    prediction is no call, contribute nothing; a simulated user's recorded calls count as recorded
    (teacher forcing replays the user's side as it was)."""
    expected = trajectory.outcome.expected_actions
    if not expected:
        return None
    agent: list[RecordedCall] = []
    for result in results:
        call = parse_call_text(result.predicted) if result.predicted else None
        if call is not None:
            agent.append(RecordedCall(result.step_number, call))
    agent.sort(key=lambda item: item.step)
    return align_expected(
        expected,
        _merged(agent, trajectory),
        policy,
        last_step=max(len(trajectory.steps) - 1, 0),
        tools=_tools(trajectory),
    )
