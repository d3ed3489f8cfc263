"""Two agents' own runs of the same tasks compared: outcomes paired by task, trajectories aligned.

Per paired task key: A's and B's outcome (success, score) and their calls aligned by a global
(Needleman-Wunsch) alignment whose substitution score comes from the tool-call judge
(:func:`replay_tui.matching.judge_call`): the same call scores above the same tool with other
arguments, which scores above another tool; the first row that is not the same call is the task's
first divergence. Over the pairs: success of A and B with Wilson intervals, the exact McNemar test
on the discordant keys, a bootstrap of B − A clustered by task (its trials are not independent),
and tau2's pass^k per run for every k the trials allow. When the task carries its reference actions
(:mod:`replay_tui.expected`), both runs' calls are aligned with that one reference, so each reference
action says which run hit it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from math import comb
from typing import Any, Literal, cast

import orjson

from replay_tui.episodes.model import MessageView, ToolCall, Trajectory
from replay_tui.expected import align_trajectory
from replay_tui.formats.census import step_calls
from replay_tui.matching import judge_call
from replay_tui.pairing import Pairing
from replay_tui.stats import RESAMPLES, PairedStats, Rate, paired_stats

RowKind = Literal["same", "arguments", "tool", "a_only", "b_only"]
"""An alignment row: the same call, the same tool with other arguments, another tool, or a call in one run only."""

SCORES: dict[str, int] = {"same": 2, "arguments": 1, "tool": -1, "gap": -1}
"""Substitution and gap scores: a call pairs with the same tool before it is left unpaired."""


def success_of(trajectory: Trajectory) -> bool | None:
    """The episode succeeded: the log's own success, else reward ≥ 1 (tau2's rule); None when unknown."""
    outcome = trajectory.outcome
    if outcome.success is not None:
        return outcome.success
    if outcome.reward is not None:
        return outcome.reward >= 1
    return None


def score_of(trajectory: Trajectory) -> float | None:
    """The episode's score for the bootstrap: its reward, else 1/0 for success."""
    if trajectory.outcome.reward is not None:
        return float(trajectory.outcome.reward)
    success = success_of(trajectory)
    return None if success is None else float(success)


def calls_of(trajectory: Trajectory) -> list[ToolCall]:
    """The tool calls the agent made, in order: each step's action and the parallel calls of the
    same message (read back by :func:`replay_tui.formats.census.step_calls`, the readers' one convention)."""
    return [call for _, call in located_calls(trajectory)]


def located_calls(trajectory: Trajectory) -> list[tuple[int, ToolCall]]:
    """:func:`calls_of` with the index of the step each call was made in (parallel calls share one)."""
    return [
        (position, call)
        for position, step in enumerate(trajectory.steps)
        if step.action is not None and step.action.name
        for call in step_calls(step)
    ]


def _kind(a: ToolCall, b: ToolCall) -> RowKind:
    if a.name != b.name:
        return "tool"  # the judge's exact policy: another name is another tool
    verdict = judge_call(a.name, a.arguments, b.name, b.arguments)
    if verdict.accepted and (a.raw_arguments or "") == (b.raw_arguments or ""):
        return "same"
    return "tool" if verdict.part == "kind" else "arguments"


@dataclass(frozen=True)
class Row:
    """One row of an alignment: indices into A's and B's calls (None on a gap) and how they relate."""

    kind: RowKind
    a: int | None
    b: int | None


def align(a: Sequence[ToolCall], b: Sequence[ToolCall]) -> list[Row]:
    """The global alignment of two call sequences (Needleman-Wunsch, :data:`SCORES`) after their
    common prefix, so the first row that is not the same call is where the runs first part (the
    alignment alone may, on a tie, open a gap before a call both made); ties prefer pairing the
    calls, then a call of A alone."""
    prefix = 0
    while prefix < min(len(a), len(b)) and _kind(a[prefix], b[prefix]) == "same":
        prefix += 1
    rows = [Row("same", i, i) for i in range(prefix)]
    rest = _needleman_wunsch(a[prefix:], b[prefix:])
    return rows + [
        Row(row.kind, None if row.a is None else row.a + prefix, None if row.b is None else row.b + prefix)
        for row in rest
    ]


def _signature(call: ToolCall) -> bytes:
    return orjson.dumps([call.name, call.arguments, call.raw_arguments], option=orjson.OPT_NON_STR_KEYS)


def _needleman_wunsch(a: Sequence[ToolCall], b: Sequence[ToolCall]) -> list[Row]:
    a_keys, b_keys = [_signature(x) for x in a], [_signature(y) for y in b]
    judged: dict[tuple[bytes, bytes], RowKind] = {}  # agents repeat calls: each distinct pair judged once
    pairs: list[list[tuple[str, float] | None]] = []
    for x, x_key in zip(a, a_keys, strict=True):
        row: list[tuple[str, float] | None] = []
        for y, y_key in zip(b, b_keys, strict=True):
            kind = judged.get((x_key, y_key))
            if kind is None:
                kind = judged[(x_key, y_key)] = "same" if x_key == y_key else _kind(x, y)
            row.append((kind, SCORES[kind]))
        pairs.append(row)
    return [Row(cast(RowKind, kind), i, j) for kind, i, j in global_alignment(pairs, len(b), SCORES["gap"])]


def global_alignment(
    pairs: Sequence[Sequence[tuple[str, float] | None]], m: int, gap: float
) -> list[tuple[str, int | None, int | None]]:
    """Needleman-Wunsch over an n x m matrix of ``(kind, score)`` pairs (None: the two never pair)
    with a ``gap`` score: ``(kind, i, j)`` rows in order, ``a_only``/``b_only`` on a gap. Ties prefer
    pairing, then an item of A alone."""
    n = len(pairs)
    never = float("-inf")
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        score[i][0] = i * gap
    for j in range(1, m + 1):
        score[0][j] = j * gap
    for i in range(1, n + 1):
        previous, current, row = score[i - 1], score[i], pairs[i - 1]
        for j in range(1, m + 1):
            pair = row[j - 1]
            current[j] = max(
                previous[j - 1] + (never if pair is None else pair[1]), previous[j] + gap, current[j - 1] + gap
            )
    rows: list[tuple[str, int | None, int | None]] = []
    i, j = n, m
    while i or j:
        pair = pairs[i - 1][j - 1] if i and j else None
        if pair is not None and score[i][j] == score[i - 1][j - 1] + pair[1]:
            rows.append((pair[0], i - 1, j - 1))
            i, j = i - 1, j - 1
        elif i and score[i][j] == score[i - 1][j] + gap:
            rows.append(("a_only", i - 1, None))
            i -= 1
        else:
            rows.append(("b_only", None, j - 1))
            j -= 1
    rows.reverse()
    return rows


# --------------------------------------------------------------------------- messages aligned by role

MessageKind = Literal["same", "text", "a_only", "b_only"]
"""A message row: the same words, the same role saying something else, or a message in one run only."""

MESSAGE_GAP = -1.0
"""A message in one run only. Two messages of one role score 2 for the same words, else 1 plus the
share of words they have in common (so the more alike pair first); messages of two roles never pair."""

SAID_ROLES = frozenset({"user", "assistant"})
"""The conversation's own messages (a system prompt is the setting, a tool message the result of a call)."""


@dataclass(frozen=True)
class Said:
    """One message of the conversation: its role, its text and the step it came with."""

    role: str
    text: str
    step: int


@dataclass(frozen=True)
class Conversation:
    """A trajectory's messages in order, and where its calls fall among them: ``before[k]`` messages
    come before call ``k`` (the calls as :func:`located_calls` orders them)."""

    said: list[Said]
    before: list[int]


def conversation_of(trajectory: Trajectory) -> Conversation:
    """The user's and the agent's messages in the order of the run: what a step's prompt adds to the
    previous step's (the user's replies; the first prompt's opening messages), then the step's own
    words, then its calls. Tool results stay with their calls; system prompts are left out."""
    said: list[Said] = []
    before: list[int] = []
    seen = 0
    for position, step in enumerate(trajectory.steps):
        prompt = step.messages
        if len(prompt) > seen:
            for message in prompt[seen:]:
                role, text = message.role, message.content.strip()
                if text and (role == "user" or (role == "assistant" and not seen)):
                    said.append(Said(role, text, position))
        seen = max(seen, len(prompt))
        if step.content.strip():
            said.append(Said("assistant", step.content.strip(), position))
        if step.action is not None and step.action.name:
            before.extend(len(said) for _ in step_calls(step))
    said += _said_after(trajectory)
    return Conversation(said, before)


def _said_after(trajectory: Trajectory) -> list[Said]:
    """What the user said after the agent's last step (tau2's closing ``###STOP###``): the rest of the
    shared conversation the last prompt is the beginning of, when the reader shares one."""
    if not trajectory.steps:
        return []
    prompt = trajectory.steps[-1].messages
    if not isinstance(prompt, MessageView) or len(prompt.ranges) != 1 or prompt.ranges[0][0] != 0:
        return []
    last = len(trajectory.steps) - 1
    return [
        Said("user", message.content.strip(), last)
        for message in prompt.pool[prompt.ranges[0][1] :]
        if message.role == "user" and message.content.strip()
    ]


@dataclass(frozen=True)
class TimelineRow:
    """One row of a task's two runs read as conversations: an aligned call (``call_row`` indexes
    :attr:`TaskPair.rows`) or a pair of messages of one role (``a``/``b`` index each run's
    :attr:`Conversation.said`, None on a gap)."""

    kind: str
    call_row: int | None
    role: str | None
    a: int | None
    b: int | None


def _items(conversation: Conversation, calls: int) -> list[tuple[str, int]]:
    """A run as one sequence: ``("said", i)`` messages and ``("call", k)`` calls, in the run's order."""
    items: list[tuple[str, int]] = []
    at = 0
    for k in range(calls):
        upto = max(at, conversation.before[k] if k < len(conversation.before) else at)
        items += [("said", i) for i in range(at, upto)]
        items.append(("call", k))
        at = upto
    items += [("said", i) for i in range(at, len(conversation.said))]
    return items


def _message_pair(x: frozenset[str], y: frozenset[str]) -> tuple[str, float]:
    if x == y:
        return "same", 2.0
    return "text", 1.0 + len(x & y) / max(1, len(x | y))


def timeline(
    rows: Sequence[Row], a: Conversation, b: Conversation, a_calls: int | None = None, b_calls: int | None = None
) -> list[TimelineRow]:
    """The call alignment ``rows`` with both runs' messages between the calls, aligned by role.

    One global alignment of the two runs' messages and calls in which a call pairs only with the call
    the call alignment gave it (those pairs score above anything else, so every one is kept: the
    calls' rows, and the first divergence, stay those of ``rows``) and a message only with a message
    of its role (the same words above other words); a message in one run only is a gap."""
    paired = {(row.a, row.b): index for index, row in enumerate(rows) if row.a is not None and row.b is not None}
    alone_a = {row.a: index for index, row in enumerate(rows) if row.b is None and row.a is not None}
    alone_b = {row.b: index for index, row in enumerate(rows) if row.a is None and row.b is not None}
    a_items = _items(a, len(a.before) if a_calls is None else a_calls)
    b_items = _items(b, len(b.before) if b_calls is None else b_calls)
    a_words = [frozenset(said.text.split()) for said in a.said]
    b_words = [frozenset(said.text.split()) for said in b.said]
    anchor = 3.0 * (len(a_items) + len(b_items) + 1)  # more than every message pair and gap together
    pairs: list[list[tuple[str, float] | None]] = []
    for what_a, i in a_items:
        row: list[tuple[str, float] | None] = []
        for what_b, j in b_items:
            if what_a == "call" and what_b == "call":
                row.append(("call", anchor) if (i, j) in paired else None)
            elif what_a == "said" and what_b == "said" and a.said[i].role == b.said[j].role:
                row.append(_message_pair(a_words[i], b_words[j]))
            else:
                row.append(None)
        pairs.append(row)
    found: list[TimelineRow] = []
    for kind, x, y in global_alignment(pairs, len(b_items), MESSAGE_GAP):
        item_a = None if x is None else a_items[x]
        item_b = None if y is None else b_items[y]
        if kind == "call" and item_a is not None and item_b is not None:
            index = paired[(item_a[1], item_b[1])]
            found.append(TimelineRow(rows[index].kind, index, None, item_a[1], item_b[1]))
        elif item_a is not None and item_a[0] == "call":
            index = alone_a[item_a[1]]
            found.append(TimelineRow(rows[index].kind, index, None, item_a[1], None))
        elif item_b is not None and item_b[0] == "call":
            index = alone_b[item_b[1]]
            found.append(TimelineRow(rows[index].kind, index, None, None, item_b[1]))
        else:
            role = a.said[item_a[1]].role if item_a is not None else b.said[item_b[1]].role if item_b else None
            found.append(
                TimelineRow(
                    kind, None, role, None if item_a is None else item_a[1], None if item_b is None else item_b[1]
                )
            )
    return found


@dataclass(frozen=True)
class Divergence:
    """The first alignment row that is not the same call: its row, kind and the two calls' text."""

    row: int
    kind: RowKind
    a_call: int | None
    b_call: int | None
    a: str | None
    b: str | None

    def text(self) -> str:
        if self.kind == "a_only":
            return f"A's call {_nth(self.a_call)} {self.a}: B made no such call"
        if self.kind == "b_only":
            return f"B's call {_nth(self.b_call)} {self.b}: A made no such call"
        what = "arguments differ" if self.kind == "arguments" else "another tool"
        return f"A's call {_nth(self.a_call)} / B's call {_nth(self.b_call)}, {what}: A {self.a} · B {self.b}"


def _nth(index: int | None) -> str:
    return "?" if index is None else f"#{index + 1}"


@dataclass(frozen=True)
class ExpectedPair:
    """One reference action of a paired task and what each run did about it: ``matched``,
    ``different`` (the tool, other arguments) or ``missing`` (:data:`replay_tui.expected.EXPECTED_STATUSES`)."""

    position: int
    name: str
    action: str
    requestor: str
    a: str
    b: str

    @property
    def change(self) -> str:
        """``lost`` (A hit it, B did not), ``gained``, ``both`` (both hit it) or ``neither``."""
        a, b = self.a == "matched", self.b == "matched"
        if a != b:
            return "lost" if a else "gained"
        return "both" if a else "neither"


def expected_pairs(a: Trajectory, b: Trajectory) -> list[ExpectedPair]:
    """Both runs' calls aligned with one reference: A's log's expected actions, else B's (the same
    task's reference; A is the baseline). Empty when neither log carries one."""
    reference = a.outcome.expected_actions or b.outcome.expected_actions
    if not reference:
        return []
    a_hits = align_trajectory(a, reference=reference)
    b_hits = align_trajectory(b, reference=reference)
    if a_hits is None or b_hits is None:
        return []
    return [
        ExpectedPair(x.position, x.name, x.expected.display(), x.requestor, x.status, y.status)
        for x, y in zip(a_hits.hits, b_hits.hits, strict=True)
    ]


@dataclass
class TaskPair:
    """One paired task key: outcomes, the alignment and its summary."""

    key: str
    task: str
    a_success: bool | None
    b_success: bool | None
    a_score: float | None
    b_score: float | None
    a_status: str | None
    b_status: str | None
    rows: list[Row]
    a_calls: list[ToolCall]
    b_calls: list[ToolCall]
    divergence: Divergence | None
    a_steps: list[int] = field(default_factory=list)
    """The step (index into A's trajectory) each of A's calls was made in."""
    b_steps: list[int] = field(default_factory=list)
    a_trajectory: Trajectory | None = field(default=None, repr=False)
    """A's whole episode, for views that show a call's step (observation, thinking, result)."""
    b_trajectory: Trajectory | None = field(default=None, repr=False)
    expected: list[ExpectedPair] = field(default_factory=list)
    """The task's reference actions and which run hit each (empty without a reference)."""

    def expected_hit(self, side: Literal["a", "b"]) -> tuple[int, int]:
        """``(matched, total)`` of the reference actions that are the agent's to make (a simulated
        user's are not), for run ``side``."""
        own = [pair for pair in self.expected if pair.requestor != "user"]
        return sum(1 for pair in own if getattr(pair, side) == "matched"), len(own)

    @property
    def first_lost_expected(self) -> str | None:
        """The first of the agent's reference actions A hit and B did not (its tool), if any."""
        return next((p.name for p in self.expected if p.requestor != "user" and p.change == "lost"), None)

    @property
    def divergent_rows(self) -> list[int]:
        """The alignment rows that are not the same call, in order."""
        return [index for index, row in enumerate(self.rows) if row.kind != "same"]

    @property
    def divergent_tool(self) -> str:
        """The tool of the first divergent call (A's, else B's); ``(same calls)`` when none differs."""
        found = self.divergence
        if found is None:
            return "(same calls)"
        if found.a_call is not None:
            return self.a_calls[found.a_call].name
        return self.b_calls[found.b_call or 0].name

    @property
    def differs_when_both_failed(self) -> bool:
        """Both runs failed the task, and not by the same calls."""
        return self.change == "both_failed" and self.divergence is not None

    @property
    def change(self) -> str:
        """``regressed`` (A ✓, B ✗), ``fixed``, ``both_succeeded``, ``both_failed`` or ``unknown``."""
        if self.a_success is None or self.b_success is None:
            return "unknown"
        if self.a_success != self.b_success:
            return "regressed" if self.a_success else "fixed"
        return "both_succeeded" if self.a_success else "both_failed"

    def count(self, kind: RowKind) -> int:
        return sum(1 for row in self.rows if row.kind == kind)

    @cached_property
    def conversations(self) -> tuple[Conversation, Conversation]:
        """A's and B's messages and where their calls fall among them (made when a view first asks)."""
        empty = Conversation([], [])
        return (
            conversation_of(self.a_trajectory) if self.a_trajectory is not None else empty,
            conversation_of(self.b_trajectory) if self.b_trajectory is not None else empty,
        )

    @cached_property
    def timeline(self) -> list[TimelineRow]:
        """The calls' rows with both runs' messages between them, aligned by role (:func:`timeline`)."""
        return timeline(self.rows, *self.conversations, len(self.a_calls), len(self.b_calls))


def pair_task(key: str, task: str, a: Trajectory, b: Trajectory) -> TaskPair:
    """Outcomes and aligned calls of one task key."""
    a_located, b_located = located_calls(a), located_calls(b)
    a_calls, b_calls = [call for _, call in a_located], [call for _, call in b_located]
    rows = align(a_calls, b_calls)
    divergence = None
    for index, row in enumerate(rows):
        if row.kind != "same":
            divergence = Divergence(
                index,
                row.kind,
                row.a,
                row.b,
                None if row.a is None else a_calls[row.a].display(),
                None if row.b is None else b_calls[row.b].display(),
            )
            break
    return TaskPair(
        key,
        task,
        success_of(a),
        success_of(b),
        score_of(a),
        score_of(b),
        a.outcome.status,
        b.outcome.status,
        rows,
        a_calls,
        b_calls,
        divergence,
        [step for step, _ in a_located],
        [step for step, _ in b_located],
        a,
        b,
        expected_pairs(a, b),
    )


@dataclass(frozen=True)
class PassK:
    """tau2's pass^k of each run on the paired tasks that have at least k trials, and B − A."""

    k: int
    tasks: int
    a: float
    b: float

    @property
    def difference(self) -> float:
        return self.b - self.a


def pass_hat_k(trials: Sequence[tuple[int, int]], k: int) -> float:
    """Mean over tasks of C(c, k) / C(n, k) for a task with n trials and c successes (tau2's pass^k:
    the chance that k trials drawn without replacement all succeed)."""
    usable = [(n, c) for n, c in trials if n >= k]
    if not usable:
        return 0.0
    return sum(comb(c, k) / comb(n, k) for n, c in usable) / len(usable)


@dataclass
class OutcomeComparison:
    """Everything ``compare LOG_A LOG_B`` reports."""

    a_path: str
    b_path: str
    tasks: list[TaskPair]
    a_only: list[str]
    b_only: list[str]
    counts: dict[str, int]
    stats: PairedStats
    """Success of A and B on the paired tasks whose outcome both know, McNemar's test on them, and the
    bootstrap of B − A on their scores clustered by task (the figures a replay comparison states)."""
    pass_k: list[PassK]
    warnings: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[TaskPair]:
        return [task for task in self.tasks if task.change == "regressed"]

    def grouped_regressions(self, by: Literal["tool", "reference", "status"]) -> dict[str, list[str]]:
        """The regressed task keys in groups, largest first (ties by name): ``tool``, the tool at the
        first divergence (A's call, else B's); ``reference``, the first reference action A hit and B
        did not (``(none)`` when B hit every one A hit; tasks without a reference are left out);
        ``status``, B's termination reason (``unknown`` when the log gives none)."""
        groups: dict[str, list[str]] = {}
        for task in self.regressions:
            if by == "tool":
                name = task.divergent_tool
            elif by == "reference":
                if not task.expected:
                    continue
                name = task.first_lost_expected or "(none)"
            else:
                name = task.b_status or "unknown"
            groups.setdefault(name, []).append(task.key)
        return dict(sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])))

    def regression_groups(self) -> dict[str, int]:
        """Regressions by the tool at their first divergence (A's call, else B's), most first."""
        return {name: len(keys) for name, keys in self.grouped_regressions("tool").items()}

    def summary(self) -> dict[str, Any]:
        """The report's ``summary``: counts as integers, ``mcnemar_p`` a float, rates and intervals."""
        return {
            "paired": len(self.tasks),
            "regressions": self.counts["regressed"],
            "fixes": self.counts["fixed"],
            "both_succeeded": self.counts["both_succeeded"],
            "both_failed": self.counts["both_failed"],
            "unknown_outcome": self.counts["unknown"],
            "mcnemar_p": float(self.stats.mcnemar_p),
            "a_success": _rate(self.stats.a),
            "b_success": _rate(self.stats.b),
            "difference": {
                "b_minus_a": self.stats.difference,
                "low": self.stats.low,
                "high": self.stats.high,
                "clusters": self.stats.clusters,
                "resamples": self.stats.resamples,
                "clustered_by": "task",
            },
            "regressions_by_tool": self.regression_groups(),
            "regressions_by_missed_reference": {
                name: len(keys) for name, keys in self.grouped_regressions("reference").items()
            },
            "regressions_by_status": {name: len(keys) for name, keys in self.grouped_regressions("status").items()},
            "expected_actions": self.expected_summary(),
            "pass_k": [
                {"k": p.k, "tasks": p.tasks, "a": p.a, "b": p.b, "b_minus_a": p.difference} for p in self.pass_k
            ],
        }

    def expected_summary(self) -> dict[str, int]:
        """Over the paired tasks with reference actions, the agent's actions: how many each run hit,
        and how many A hit and B did not (``lost``) or B hit and A did not (``gained``)."""
        own = [pair for task in self.tasks for pair in task.expected if pair.requestor != "user"]
        return {
            "tasks": sum(1 for task in self.tasks if task.expected),
            "actions": len(own),
            "a_matched": sum(1 for pair in own if pair.a == "matched"),
            "b_matched": sum(1 for pair in own if pair.b == "matched"),
            "lost": sum(1 for pair in own if pair.change == "lost"),
            "gained": sum(1 for pair in own if pair.change == "gained"),
        }

    def headline(self) -> str:
        a, b = self.stats.a, self.stats.b
        return (
            f"{len(self.tasks)} paired tasks: A {a.right}/{a.total}, B {b.right}/{b.total}; "
            f"{self.counts['regressed']} regressed, {self.counts['fixed']} fixed, "
            f"{self.counts['both_failed']} both failed; McNemar p = {self.stats.mcnemar_p:.3g}"
        )


def _rate(rate: Rate) -> dict[str, Any]:
    return {"successes": rate.right, "n": rate.total, "rate": rate.rate, "low": rate.low, "high": rate.high}


def compare_outcomes(pairing: Pairing, *, resamples: int = RESAMPLES, seed: int = 0) -> OutcomeComparison:
    """Pair outcomes and trajectories of two logs' shared task keys; the statistics over those whose
    outcome both logs know."""
    tasks = []
    for key in pairing.paired:
        a, b = pairing.a.episodes[key], pairing.b.episodes[key]
        tasks.append(pair_task(key, a.key.task, a.trajectory, b.trajectory))
    counts = dict.fromkeys(("regressed", "fixed", "both_succeeded", "both_failed", "unknown"), 0)
    for task in tasks:
        counts[task.change] += 1
    known = [task for task in tasks if task.change != "unknown"]
    a_scores = [task.a_score if task.a_score is not None else float(bool(task.a_success)) for task in known]
    b_scores = [task.b_score if task.b_score is not None else float(bool(task.b_success)) for task in known]
    stats = paired_stats(
        [bool(task.a_success) for task in known],
        [bool(task.b_success) for task in known],
        [task.task for task in known],
        scores=(a_scores, b_scores),
        resamples=resamples,
        seed=seed,
    )
    trials: dict[str, list[tuple[bool, bool]]] = {}
    for task in known:
        trials.setdefault(task.task, []).append((bool(task.a_success), bool(task.b_success)))
    pass_k = []
    most = max((len(runs) for runs in trials.values()), default=0)
    for k in range(1, most + 1):
        a_trials = [(len(runs), sum(a for a, _ in runs)) for runs in trials.values()]
        b_trials = [(len(runs), sum(b for _, b in runs)) for runs in trials.values()]
        usable = sum(1 for runs in trials.values() if len(runs) >= k)
        pass_k.append(PassK(k, usable, pass_hat_k(a_trials, k), pass_hat_k(b_trials, k)))
    warnings = [*pairing.a.warnings, *pairing.b.warnings]
    if counts["unknown"]:
        warnings.append(
            f"{counts['unknown']} paired task(s) without a known outcome in A or B: left out of the statistics"
        )
    return OutcomeComparison(
        a_path=pairing.a.path,
        b_path=pairing.b.path,
        tasks=tasks,
        a_only=pairing.a_only,
        b_only=pairing.b_only,
        counts=counts,
        stats=stats,
        pass_k=pass_k,
        warnings=warnings,
    )


@dataclass
class RunsComparison:
    """``compare LOG_A LOG_B LOG_C…``: each later log against A (the baseline), paired by task as two
    logs are (each pair's own keys and statistics), and every run's success on the task keys all of
    them share (``common``), so the runs' rates are read on the same tasks."""

    labels: list[str]
    """A, then the label of each compared log, in ``comparisons``' order."""
    comparisons: list[OutcomeComparison]
    common: list[str]
    """The task keys every compared log shares with A, in A's order."""
    rates: list[Rate]
    """Each run's successes, n and Wilson interval on the common keys whose outcome every run knows."""
    warnings: list[str] = field(default_factory=list)

    @property
    def baseline(self) -> str:
        return self.comparisons[0].a_path

    @property
    def paths(self) -> list[str]:
        return [self.baseline, *(c.b_path for c in self.comparisons)]

    @property
    def regressions(self) -> int:
        """The most tasks any log regressed on against A (``--fail-on-regression`` reads it)."""
        return max(c.counts["regressed"] for c in self.comparisons)

    def runs(self) -> list[dict[str, Any]]:
        """Each run's row of the combined table: its label, log, pairs with A and rate on the common keys."""
        rows = []
        for index, (label, path) in enumerate(zip(self.labels, self.paths, strict=True)):
            versus = self.comparisons[index - 1] if index else None
            rows.append(
                {
                    "label": label,
                    "log": path,
                    "paired_with_baseline": len(versus.tasks) if versus else None,
                    "regressions": versus.counts["regressed"] if versus else None,
                    "fixes": versus.counts["fixed"] if versus else None,
                    "mcnemar_p": float(versus.stats.mcnemar_p) if versus else None,
                    "success_on_common": _rate(self.rates[index]),
                }
            )
        return rows

    def headline(self) -> str:
        parts = [
            f"{label} {c.counts['regressed']} regressed, {c.counts['fixed']} fixed (p = {c.stats.mcnemar_p:.3g})"
            for label, c in zip(self.labels[1:], self.comparisons, strict=True)
        ]
        rates = ", ".join(f"{label} {r.right}/{r.total}" for label, r in zip(self.labels, self.rates, strict=True))
        return (
            f"{len(self.labels)} runs against {self.labels[0]}: "
            + "; ".join(parts)
            + (f"; on the {len(self.common)} tasks all share: {rates}")
        )


def compare_many(
    pairings: Sequence[Pairing], labels: Sequence[str], *, resamples: int = RESAMPLES, seed: int = 0
) -> RunsComparison:
    """Each pairing (the baseline with one later log) compared as two logs are; the common keys' rates."""
    comparisons = [compare_outcomes(pairing, resamples=resamples, seed=seed) for pairing in pairings]
    by_key = [{task.key: task for task in c.tasks} for c in comparisons]
    common = [task.key for task in comparisons[0].tasks if all(task.key in tasks for tasks in by_key)]
    known = [key for key in common if all(tasks[key].change != "unknown" for tasks in by_key)]
    successes = [sum(1 for key in known if by_key[0][key].a_success)]
    successes += [sum(1 for key in known if tasks[key].b_success) for tasks in by_key]
    warnings = [warning for c in comparisons for warning in c.warnings]
    return RunsComparison(
        labels=list(labels),
        comparisons=comparisons,
        common=common,
        rates=[Rate.of(right, len(known)) for right in successes],
        warnings=list(dict.fromkeys(warnings)),
    )
