"""The general episode model every log format maps onto: a task, steps, an outcome.

A step holds what the agent saw (observation text, an optional screenshot and accessibility
tree), the messages the model was sent (the prompt, as chat messages), the tool schemas it was
offered, what it thought and said, the recorded action as a tool call (name + typed arguments)
with its display string, the tool's result, reward/done, and anything else verbatim in ``extra``.

The seed's WebShop demonstration files map onto it without loss
(:func:`replay_tui.formats.webshop_demos.trajectory.from_webshop_episode`):
every field without a place of its own is kept in ``extra``.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Generic, Literal, TypeVar, overload

import orjson
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SerializeAsAny,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)

from replay_tui.episodes.problems import LoadProblem
from replay_tui.matching import split_call_text


class ToolCall(BaseModel):
    """A recorded (or predicted) tool call: ``name`` and its ``arguments`` as typed JSON values.

    ``raw_arguments`` keeps the arguments text as logged when it was not a JSON object (a model
    that wrote broken JSON is data, not an error).
    """

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    raw_arguments: str | None = None

    def display(self) -> str:
        """``name({"a": 1})``: compact, keys in the order the log had them."""
        if self.raw_arguments is not None and not self.arguments:
            return f"{self.name}({self.raw_arguments})"
        if not self.arguments:
            return f"{self.name}()"
        return call_text(self.name, self.arguments)


class ExpectedAction(ToolCall):
    """A reference action (what a correct agent calls) with what its log says about judging it.

    A :class:`ToolCall` everywhere one is expected; :mod:`replay_tui.expected` reads the rest."""

    requestor: str = "assistant"
    """Who is to make the call: ``assistant`` (the agent) or ``user`` (a simulated user, as in
    tau2's dual-control telecom domain: not the agent's to make)."""
    compare_args: list[str] | None = None
    """Only these arguments are compared (tau2's ``compare_args``); None: every argument the call
    gave (tau2 compares the call's keys)."""
    action_id: str | None = None
    tool_type: str | None = None
    """``read``/``write``/``think``/``generic`` when the log says (newer tau2 action checks)."""


class SideCall(BaseModel):
    """A tool call the log records that is no decision of the agent: a simulated user's own tool
    call (tau2's dual-control domains). Never replayed; a task's reference may expect it."""

    call: ToolCall
    requestor: str = "user"
    after: int | None = None
    """The index of the agent's last step before the call; None when it came before every step."""


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """The canonical text of a tool call, ``name({"a": 1})``: what replays of tool-calling formats
    record as the expected and predicted action (arguments as JSON, keys in the order given)."""
    return f"{name}({orjson.dumps(arguments, option=orjson.OPT_NON_STR_KEYS).decode()})"


def parse_call_text(text: str) -> ToolCall | None:
    """:func:`call_text` read back (:func:`replay_tui.matching.split_call_text`); None when ``text``
    is not ``name(...)``."""
    found = split_call_text(text)
    if found is None:
        return None
    return ToolCall(name=found.name, arguments=found.arguments, raw_arguments=found.raw_arguments)


class ChatMessage(BaseModel):
    """One chat message as a model saw or wrote it (OpenAI-style roles: system, user, assistant, tool)."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None


_T = TypeVar("_T")


class MessageView(Sequence[_T], Generic[_T]):
    """Ranges of one shared list of messages, read as a list: a step's prompt without a copy.

    A long run's prompts are each the one before plus a few messages (or, in inspect_ai's logs,
    ``input_refs`` ranges into one message pool): a list of its own per step made reading a
    trajectory quadratic in memory. A view holds the shared ``pool`` and ``[start, end)`` ranges
    into it; the pool may grow (appends) but the positions a view covers never change."""

    __slots__ = ("_length", "pool", "ranges")

    def __init__(self, pool: Sequence[_T], ranges: Iterable[tuple[int, int]] | None = None) -> None:
        self.pool = pool
        merged: list[tuple[int, int]] = []
        for start, end in ((0, len(pool)),) if ranges is None else ranges:
            if end <= start:
                continue
            if merged and merged[-1][1] == start:  # adjacent ranges are one (prefixes are told by ranges)
                start = merged.pop()[0]
            merged.append((start, end))
        self.ranges: tuple[tuple[int, int], ...] = tuple(merged)
        self._length = sum(end - start for start, end in merged)

    @classmethod
    def prefix(cls, pool: Sequence[_T], end: int) -> MessageView[_T]:
        """The first ``end`` messages of ``pool``."""
        return cls(pool, ((0, min(end, len(pool))),))

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[_T]:
        pool = self.pool
        return itertools.chain.from_iterable(itertools.islice(pool, start, end) for start, end in self.ranges)

    def __reversed__(self) -> Iterator[_T]:
        pool = self.pool
        for start, end in reversed(self.ranges):
            for position in range(end - 1, start - 1, -1):
                yield pool[position]

    @overload
    def __getitem__(self, index: int) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> list[_T]: ...
    def __getitem__(self, index: int | slice) -> _T | list[_T]:
        if isinstance(index, slice):
            if len(self.ranges) == 1 and index.step in (None, 1):
                start, end, _ = index.indices(self._length)
                first = self.ranges[0][0]
                return list(self.pool[first + start : first + max(start, end)])
            return list(self)[index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("message index out of range")
        for start, end in self.ranges:
            if index < end - start:
                return self.pool[start + index]
            index -= end - start
        raise IndexError("message index out of range")  # pragma: no cover (lengths agree)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(map(operator.eq, self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MessageView({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (MessageView, (self.pool, self.ranges))

    def starts_with(self, before: Sequence[_T]) -> bool | None:
        """Whether ``before`` (a view of the same pool) is a prefix of this view, answered from the
        ranges alone; None when that cannot be told without comparing the messages."""
        if not isinstance(before, MessageView) or before.pool is not self.pool:
            return None
        if not before.ranges:
            return True
        *whole, last = before.ranges
        mine = self.ranges
        if len(mine) < len(before.ranges) or tuple(mine[: len(whole)]) != tuple(whole):
            return False
        start, end = mine[len(whole)]
        return start == last[0] and end >= last[1]


def added_messages(messages: Sequence[_T], before: Sequence[_T]) -> Sequence[_T] | None:
    """The messages of ``messages`` after ``before`` when ``before`` is its prefix (the same
    objects), else None: what a step's prompt adds to the step before it, found in constant time
    for two views of one pool (comparing every earlier message made long runs quadratic)."""
    if len(before) > len(messages):
        return None
    known = messages.starts_with(before) if isinstance(messages, MessageView) else None
    if known is None:
        known = all(map(operator.is_, before, messages))
    return messages[len(before) :] if known else None


def _keep_view(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return value if isinstance(value, MessageView) else handler(value)


Messages = Annotated[
    Sequence[ChatMessage],
    WrapValidator(_keep_view),
    PlainSerializer(list, return_type=list[ChatMessage]),
]
"""A step's prompt: a list of messages, or a :class:`MessageView` of a shared one (kept as is)."""


_OPENAI_ROLES = {"system", "user", "assistant", "tool", "developer"}


def openai_messages(messages: Iterable[ChatMessage]) -> list[dict[str, Any]]:
    """``messages`` in the chat-completions request shape, ready to send again (teacher forcing).

    Tool calls get the ids the log gave them (``call_<n>`` when it gave none) and each tool result
    the id of the call it answers, so a strict server accepts the conversation; roles outside
    OpenAI's set are sent as ``user``; reasoning is not sent (models do not take it back).
    """
    conversation = OpenAIConversation()
    conversation.extend(messages)
    return conversation.sent


class OpenAIConversation:
    """:func:`openai_messages` built message by message: the shape of a message depends only on the
    messages before it, so the prompts of a trajectory's steps (each the one before plus a few
    messages) share one conversation instead of each converting every earlier message again."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        """The messages so far, in the request shape (shared: treat them as read-only)."""
        self._pending: list[str] = []
        self._counter = 0

    def extend(self, messages: Iterable[ChatMessage]) -> None:
        for message in messages:
            self.sent.append(self._entry(message))

    def _entry(self, message: ChatMessage) -> dict[str, Any]:
        role = message.role if message.role in _OPENAI_ROLES else "user"
        entry: dict[str, Any] = {"role": role, "content": message.content}
        if role == "assistant" and message.tool_calls:
            calls = []
            for call in message.tool_calls:
                self._counter += 1
                call_id = call.id or f"call_{self._counter}"
                self._pending.append(call_id)
                arguments = call.raw_arguments if call.raw_arguments is not None and not call.arguments else None
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": arguments
                            if arguments is not None
                            else orjson.dumps(call.arguments, option=orjson.OPT_NON_STR_KEYS).decode(),
                        },
                    }
                )
            entry["tool_calls"] = calls
            if not message.content:
                entry["content"] = None
        elif role == "tool":
            answered = message.tool_call_id
            if answered in self._pending:
                self._pending.remove(answered)
            elif self._pending:
                answered = self._pending.pop(0)
            entry["tool_call_id"] = answered or f"call_{self._counter}"
        if message.name and role in ("user", "system", "developer", "assistant"):
            entry["name"] = message.name
        return entry


def _schema_type(values: list[Any]) -> dict[str, Any]:
    kinds: list[str] = []
    for value in values:
        if isinstance(value, bool):
            kind = "boolean"
        elif isinstance(value, int):
            kind = "integer"
        elif isinstance(value, float):
            kind = "number"
        elif isinstance(value, str):
            kind = "string"
        elif isinstance(value, list):
            kind = "array"
        elif isinstance(value, dict):
            kind = "object"
        else:
            kind = "null"
        if kind not in kinds:
            kinds.append(kind)
    if kinds == ["integer", "number"] or kinds == ["number", "integer"]:
        kinds = ["number"]
    return {"type": kinds[0]} if len(kinds) == 1 else {"type": kinds}


def infer_tools(calls: list[ToolCall]) -> list[dict[str, Any]]:
    """Tool schemas for a log that recorded none, from the calls it recorded.

    One tool per name (in first-call order); each argument typed by the JSON types of the values
    seen, ``required`` the arguments every call gave. Enough for a model to call the same tools."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        seen.setdefault(call.name, []).append(call.arguments)
    tools = []
    for name, arguments in seen.items():
        keys: list[str] = []
        for args in arguments:
            keys.extend(key for key in args if key not in keys)
        properties = {key: _schema_type([args[key] for args in arguments if key in args]) for key in keys}
        required = [key for key in keys if all(key in args for args in arguments)]
        parameters: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            parameters["required"] = required
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": f"{name} (schema inferred from the recorded calls)",
                    "parameters": parameters,
                },
            }
        )
    return tools


def parse_timestamp(value: Any) -> datetime | None:
    """A log's timestamp as a timezone-aware datetime (UTC when the log gives no zone): ISO 8601
    text (``2026-03-12T22:09:38.510Z``), or epoch seconds, milliseconds or nanoseconds as a number
    (told apart by size, as OTLP's ``startTimeUnixNano`` and JavaScript's ``Date.now()`` write
    them). Anything else, or out of range, is None: a bad timestamp never stops a reader."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            number = float(text)
        except ValueError:
            try:
                parsed = datetime.fromisoformat(text)
            except ValueError:
                return None
            return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
        return parse_timestamp(number)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        return None
    seconds = float(value)
    while seconds > 1e11:  # milliseconds, microseconds, nanoseconds
        seconds /= 1000
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


Timestamp = Annotated[datetime | None, BeforeValidator(parse_timestamp)]
"""A timezone-aware moment, or None; anything a log writes is read by :func:`parse_timestamp`."""


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value >= 0 else None


def non_negative(value: Any) -> float | None:
    """A non-negative finite number as a float (seconds, dollars), else None (a log's bad value)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


Count = Annotated[int | None, BeforeValidator(_count)]
"""A token count: a non-negative int, else None (a log's bad value is no count)."""
Amount = Annotated[float | None, BeforeValidator(non_negative)]
"""A non-negative finite number (seconds, dollars), else None."""


class TokenUsage(BaseModel):
    """What a model call (a step) or a whole episode used, as the log records it; None where it
    does not say (never computed from the other fields, except ``total`` when the log gives none
    and gives both input and output: see :meth:`of`)."""

    input: Count = None
    """Prompt tokens (cached ones included when the log counts them in)."""
    output: Count = None
    """Completion tokens (reasoning ones included when the log counts them in)."""
    cache_read: Count = None
    cache_write: Count = None
    reasoning: Count = None
    total: Count = None
    cost: Amount = None
    """In US dollars, as the log records it."""

    @property
    def empty(self) -> bool:
        return all(value is None for value in self.__dict__.values())

    @classmethod
    def of(cls, **values: Any) -> TokenUsage | None:
        """A usage of the given counts (bad ones dropped), None when nothing is left."""
        usage = cls.model_validate(values)
        return None if usage.empty else usage

    @classmethod
    def read(cls, record: Any, **keys: str) -> TokenUsage | None:
        """The counts of a log's usage object under the format's own key names
        (``read(usage, input="input_tokens", cache_read="cached_input_tokens")``); None when the
        record is not an object or holds none of them."""
        if not isinstance(record, dict):
            return None
        return cls.of(**{field: record.get(key) for field, key in keys.items()})

    def short(self) -> str:
        """``1,234 in / 56 out · $0.0123`` (empty when the usage records neither)."""
        parts = []
        if self.input is not None or self.output is not None:
            tokens = []
            if self.input is not None:
                tokens.append(f"{self.input:,} in")
            if self.output is not None:
                tokens.append(f"{self.output:,} out")
            parts.append(" / ".join(tokens))
        elif self.total is not None:
            parts.append(f"{self.total:,} tokens")
        if self.cost is not None:
            parts.append(f"${self.cost:.4f}")
        return " · ".join(parts)


StepKind = Literal["decision", "item", "event", "message"]
"""What a step is (:attr:`TrajectoryStep.kind`)."""


class ParentLink(BaseModel):
    """A sub-agent's link to the episode that started it."""

    episode: str | None = None
    """The parent episode's id; None when the log says this is a sub-agent but not of whom
    (a Claude Code sidechain without its session, a Codex sub-agent whose source is not a spawn)."""
    call_id: str | None = None
    """The id of the parent's call that started it (Claude Code's Task ``tool_use`` id, Codex's
    ``spawn_agent`` call), when known."""
    source: str | None = None
    """The mechanism, as the log names it: ``Task``/``Agent`` (Claude Code's tool), ``sidechain``,
    ``thread_spawn`` (Codex), ``subagent_trajectory_ref`` (ATIF), ``invoke_agent`` (OTel)."""


class TrajectoryStep(BaseModel):
    """One decision of the agent, with everything the log recorded around it."""

    index: int
    """Position among the episode's steps (0-based)."""
    label: str = ""
    """How views name the step (``"3"``, ``"3.1"``...); ``str(index)`` when empty."""
    observation: str = ""
    screenshot: bytes | None = Field(default=None, exclude=True, repr=False)
    """The page as an image (PNG/JPEG bytes) when the log has one."""
    axtree: str | None = None
    """An accessibility tree or DOM excerpt, as text."""
    messages: Messages = Field(default_factory=list)
    """The prompt: the messages the model was sent for this decision (a :class:`MessageView` of
    the conversation's shared messages when the reader has one: read it as a sequence)."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """Tool schemas offered (OpenAI ``{"type": "function", "function": {...}}`` shape) when logged."""
    thinking: str = ""
    content: str = ""
    """The model's visible text besides the tool call."""
    action: ToolCall | None = None
    action_text: str = ""
    """The action as the log shows it (``search[shoes]``, ``bash(ls)``); ``action.display()`` when empty."""
    other_actions: list[ToolCall] = Field(default_factory=list)
    """The same decision's further tool calls after ``action`` (parallel calls), in order: a replay
    predicts and judges one call per step; task-level alignment (:mod:`replay_tui.expected`) counts
    them all."""
    tool_result: str | None = None
    prompt_text: str | None = None
    """The prompt as the log records it when that is one text (the seed's ``llm_prompt``, a Python
    literal of the messages): ``messages`` is its parse, and it is shown whole when it does not parse."""
    event: str | None = None
    """What a sub-event step records, in the log's own word for it (the seed's ``type`` of an
    ``item`` or ``event`` step: ``item_page_action``, ``detail_exploration``... or its model's name
    for a nameless one, ``UnknownEvent``); the list names the step by it."""
    answer: str | None = None
    """The recorded plain answer when this step is a decision without a tool call (a QA or
    multiple-choice reply): what a replay judges it by (:func:`replay_tui.matching.judge_answer`).
    None for a tool call, and for a reply that is not the episode's decision."""
    answer_type: str | None = None
    """The type the task declares for the answer (``choice``: a multiple-choice letter; ``number``),
    read through its normaliser under typed matching; None: text."""
    reward: float | None = None
    done: bool = False
    state: str | None = None
    """A state or page name when the format has one (WebShop: Search, Result, Item)."""
    available_actions: list[str] | None = None
    """The actions the page offered, as the log lists them (WebShop's ``search[...]``,
    ``click[...]``); None when it does not (a replay then infers them from the observation)."""
    kind: StepKind | None = None
    """What the step is, when the reader says (None: it does not):

    - ``decision``: an agent's turn that acts, a tool call or a judged answer (every reader's
      steps with an action; the seed's WebShop decision steps, a WebShop human trace's clicks);
    - ``item``: an action the seed's WebShop demos record on an item page as a sub-event of the
      decision before it (labelled ``3.1``, ``3.2``... after decision 3; a replay judges it only
      when asked to, ``include_item_steps``);
    - ``event``: something the log records that no model decided: an API error, a compaction, an
      aborted turn, a web search (Claude Code, Codex), the seed's other sub-events (a detail
      page explored, the backup agent's turn: the event verbatim in ``extra``);
    - ``message``: a model's reply that calls no tool (Claude Code and Codex responses without a
      call, an ATIF/OTel/inspect/tau2/OpenHands assistant turn without one)."""
    timestamp: Timestamp = None
    """When the step happened (its model call started, or its record was written), timezone-aware
    (a log's time without a zone is read as UTC)."""
    duration: Amount = None
    """How long the step took, in seconds, when the log times it: the model call (OTel span, inspect
    ``working_time``, OpenHands response latency) or the action (SWE-agent ``execution_time``)."""
    usage: TokenUsage | None = None
    """The step's model call's tokens and cost, when the log records them."""
    model: str | None = None
    """The model that made the decision, as the log names it."""
    error: str | None = None
    """The error the step's call or tool ended on, as the log records it."""
    subagent: str | None = None
    """The id of the child trajectory this step started (a Task/spawn call's sub-agent), when the
    log links them; the child's :attr:`Trajectory.parent` points back."""
    extra: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list, exclude=True)
    """What the reader repaired in this step (one line each: a seed decision's empty action
    rebuilt from its call), said where the step is shown and replayed; not part of the log."""

    def model_post_init(self, __context: Any) -> None:
        if not self.label:
            self.label = str(self.index)
        if not self.action_text and self.action is not None:
            self.action_text = self.action.display()
        if self.reward is not None and not math.isfinite(self.reward):  # NaN or infinite: no reward at all
            self.warnings.append(f"reward {self.reward!r} is not a number; read as missing")
            self.reward = None


class OutcomeCheck(BaseModel):
    """One named part of a task's verdict, as the log records it: a reward component (tau2's DB
    check, an inspect scorer), an evaluator of WebArena-Verified, a test of SWE-bench."""

    name: str
    """What was checked (``db``, ``communicate``, ``action 3: book_reservation``, ``accuracy``)."""
    passed: bool | None = None
    """True/False when the log says; None when it records only a value."""
    value: Any = None
    """The check's own value verbatim (a score, a reward, a letter grade)."""
    detail: str = ""
    """Why, in the log's words (what was expected and what was found), as text."""
    counts: bool = True
    """False for a diagnostic check the log records but that does not gate the score (tau2's
    action checks when ``ACTION`` is not in the task's ``reward_basis``)."""


OUTCOME_KINDS = ("succeeded", "failed", "errored", "unknown")
"""The four words every report and view counts outcomes in (:attr:`Outcome.kind`)."""


class Outcome(BaseModel):
    """What the log itself says of the task (never what a replay found: that is *agreement*).

    Every field is optional: a reader fills what its format records and leaves the rest empty.
    """

    reward: float | None = None
    """The task's score as one number (tau2's reward, inspect's first scorer as a float, WebShop's
    reward); the named scores, verbatim, are in ``scores``."""
    success: bool | None = None
    """Did the agent accomplish the task, as the log (or its scorer) says; None when it does not say."""
    status: str | None = None
    """Why the episode ended when the log says (``submitted``, ``max_steps``, ``user_stop``,
    ``error``, ``exit_context``...): the termination or exit reason, short."""
    scores: dict[str, Any] = Field(default_factory=dict)
    """The format's own scores and outcome fields, verbatim (JSON values)."""
    error: str | None = None
    """The error that ended the run (an exception, an exit status's message), as text."""
    target: str | None = None
    """The task's reference answer or goal state as text (inspect's target, a gold answer)."""
    answer: str | None = None
    """The agent's final answer or submission (inspect's completion, SWE-agent's patch, tau2's last
    reply), as text."""
    explanation: str | None = None
    """The scorer's own explanation of the score, as text."""
    checks: list[OutcomeCheck] = Field(default_factory=list)
    """The reward breakdown, one named check each, in the log's order."""
    expected_actions: list[SerializeAsAny[ToolCall]] = Field(default_factory=list)
    """The task's reference actions when the log has them (tau2 ``evaluation_criteria.actions``),
    in the reference's order: what :mod:`replay_tui.expected` aligns the agent's calls with. An
    :class:`ExpectedAction` carries who is to make it and which arguments count."""

    @property
    def kind(self) -> str:
        """One of :data:`OUTCOME_KINDS`: ``succeeded``/``failed`` when the log says so, ``errored``
        when the run ended on an error without succeeding, ``unknown`` otherwise."""
        if self.success is True:
            return "succeeded"
        if self.error or (self.status or "").lower() in ERROR_STATUSES:
            return "errored"
        if self.success is False:
            return "failed"
        return "unknown"

    @property
    def hit_limit(self) -> bool:
        """Whether the run ended on a limit rather than by itself (:data:`LIMIT_STATUS`)."""
        return bool(self.status and LIMIT_STATUS.search(self.status))

    @property
    def failed_checks(self) -> list[OutcomeCheck]:
        """The checks the log marks as not passed, in order (diagnostic checks, which do not gate
        the score, left out: a succeeded task may record them failed)."""
        return [check for check in self.checks if check.passed is False and check.counts]

    @property
    def reason(self) -> str:
        """Why the task ended as it did, in one line: the first failed check, else the error, else
        the termination status (empty when the log says nothing)."""
        failed = self.failed_checks
        if failed:
            first = failed[0]
            return f"{first.name}: {first.detail}" if first.detail else first.name
        if self.error:
            return self.error.strip().splitlines()[0] if self.error.strip() else "error"
        return self.status or ""


ERROR_STATUSES = frozenset({"error", "errored", "exception", "crashed", "exit_error", "failed_to_run"})
"""Termination statuses that mean the run broke (not that the agent failed the task)."""
LIMIT_STATUS = re.compile(r"max[_ -]?(?:steps|turns|iterations)|limit|exit_cost|exit_context|truncated|budget", re.I)
"""Termination statuses that mean the run hit a limit (steps, turns, cost, context, time): tau2's
``max_steps``, SWE-agent's ``exit_cost``, mini's ``LimitsExceeded``, inspect's ``message_limit``."""


class Trajectory(BaseModel):
    """One episode in any format."""

    id: str
    """The episode's id in its log (a session id, a sample id, an instance id)."""
    format: str
    """The reader that produced it (:mod:`replay_tui.formats`)."""
    task: str = ""
    """The instruction or goal."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    steps: list[TrajectoryStep] = Field(default_factory=list)
    outcome: Outcome = Field(default_factory=Outcome)
    side_calls: list[SideCall] = Field(default_factory=list)
    """Tool calls recorded besides the agent's (a simulated user's), in the log's order."""
    parent: ParentLink | None = None
    """Set on a sub-agent: which episode (and call) started it. None: a top-level episode."""
    model: str | None = None
    """The episode's model when the log records one at episode level."""
    usage: TokenUsage | None = None
    """The episode's totals when the log records them at episode level (never summed here)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    problems: list[LoadProblem] = Field(default_factory=list, exclude=True, repr=False)
    """The log's fields that were invalid and read as their defaults (a seed demo step's), each a
    :class:`~replay_tui.episodes.problems.LoadProblem` naming it (``trajectory[N]``: step N): the
    episode stays usable."""

    @property
    def recorded_calls(self) -> int:
        """Steps that carry a recorded tool call (the seed's item-page actions, sub-events of the
        decision before them, left out as :attr:`decisions` leaves them out)."""
        return sum(1 for step in self.steps if step.action is not None and step.kind != "item")

    @property
    def decisions(self) -> int:
        """Steps a replay judges: a recorded tool call, or a recorded plain answer (the seed's
        item-page actions, judged only when asked for, left out)."""
        return sum(1 for s in self.steps if (s.action is not None or s.answer is not None) and s.kind != "item")


def seed_success(reward: float | None, success: bool | None) -> bool:
    """A seed demonstration's success: its ``success`` flag, else LASER's definition on the reward it
    records (1.0; a reward the file leaves out reads as 0). The browser's row, the outcome screen and
    the seed reader's Trajectory all decide by this, so they agree."""
    return success if success is not None else reward == 1.0


BACKUP_STATUS = "completed by backup"
"""A seed demonstration's status when the backup agent had to finish the task."""


def webshop_outcome(
    reward: float | None, success: bool | None, completed_by_backup: bool = False, entries: Iterable[Any] = ()
) -> Outcome:
    """The outcome a seed demonstration records: its reward, its success flag, ``completed by
    backup`` as the status when the backup agent had to finish the task, and the item bought (the
    done page's ``Purchased`` ASIN and options, from the last entry that shows it) as the answer."""
    outcome = Outcome(reward=reward, success=success, status=BACKUP_STATUS if completed_by_backup else None)
    for entry in reversed(list(entries)):
        text = _observation_after(entry)
        if "\nPurchased\n" in f"\n{text}":
            outcome.answer = _purchased(text)
            break
    return outcome


def _observation_after(entry: Any) -> str:
    if isinstance(entry, dict):
        value = entry.get("observation_after_action")
    else:
        value = getattr(entry, "observation_after_action", None)
        if value is None and isinstance(entry, BaseModel):
            value = (entry.model_extra or {}).get("observation_after_action")
    return value if isinstance(value, str) else ""


_DONE_LABELS = frozenset({"asin", "options", "attrs", "category", "query", "product category", "Target", "Goal"})


def _purchased(text: str) -> str | None:
    """``B0DY81I2W6, options {"color": "black"}`` from WebShop's done page (``Purchased`` then the
    ``asin`` and ``options`` labels, each followed by its value; a label followed by a label is empty)."""
    lines = [line.strip() for line in text.splitlines()]
    start = lines.index("Purchased") + 1
    found: dict[str, str] = {}
    for position in range(start, len(lines) - 1):
        label, value = lines[position], lines[position + 1]
        if label in ("asin", "options") and label not in found and value not in _DONE_LABELS:
            found[label] = value
        if label == "Target":
            break
    asin = found.get("asin")
    if not asin or asin == "None":
        return None
    options = found.get("options", "")
    return f"{asin}, options {options}" if options not in ("", "{}", "None") else asin
