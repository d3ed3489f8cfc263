"""Two runs' trajectories aligned: their calls, then their messages by role between the calls.

A global (Needleman-Wunsch) alignment of A's and B's calls whose substitution score comes from the
tool-call judge (:func:`replay_tui.matching.judge_call`): the same call scores above the same tool with
other arguments, which scores above another tool; the first row that is not the same call is the
first divergence. A replay comparison needs none of it: its steps pair by label (the identity alignment).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import orjson

from replay_tui.episodes.model import MessageView, ToolCall, Trajectory
from replay_tui.formats.census import step_calls
from replay_tui.matching import judge_call

RowKind = Literal["same", "arguments", "tool", "a_only", "b_only"]
"""An alignment row: the same call, the same tool with other arguments, another tool, or a call in one run only."""

SCORES: dict[str, int] = {"same": 2, "arguments": 1, "tool": -1, "gap": -1}
"""Substitution and gap scores: a call pairs with the same tool before it is left unpaired."""


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
