"""A conversation built record by record into decision steps: what the agent-log readers share.

Coding agents (Claude Code, Codex) log a conversation as a stream of records: user input, the
model's response (reasoning, text, tool calls, possibly split over several records), tool results
that answer calls by id. :class:`Conversation` turns that stream into steps in one pass:

- each tool call is a step whose prompt is the history *before the response* that made it (the
  calls of one response share that prompt); the history is one growing list of shared
  :class:`ChatMessage` objects and a step holds a view of its prefix (:class:`MessageView`), so
  no message is built twice and no step copies the history;
- the response's thinking and text so far become the step's ``thinking`` and ``content``;
- a result is paired with its call by id (``tool_use_id``/``call_id``), a call never answered
  keeps ``tool_result = None``;
- a response with no call, an error or a compaction is a step without an action (an event the
  stepper shows and a replay skips);
- what the log records of the call (:meth:`Conversation.at`: the record's time and model;
  :meth:`Conversation.set_usage`: the response's tokens) goes on the typed fields of the steps
  the response made (``kind`` ``decision``/``message``, events ``event``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson

from replay_tui.episodes.model import ChatMessage, MessageView, TokenUsage, ToolCall, TrajectoryStep, parse_timestamp
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import ReadItem, strip_bom


class Conversation:
    """One agent's conversation, fed in log order; :attr:`steps` is the result."""

    def __init__(self) -> None:
        self.history: list[ChatMessage] = []
        self.steps: list[TrajectoryStep] = []
        self.calls: dict[str, TrajectoryStep] = {}
        """Call id → its step, to pair results."""
        self._prompt_end = 0
        self._response: ChatMessage | None = None
        self._response_key: Any = None
        self._response_steps = 0
        self._thinking: list[str] = []
        self._text: list[str] = []
        self._timestamp: Any = None
        self._model: str | None = None
        self._response_start = 0
        self._response_stamp: tuple[Any, str | None] = (None, None)
        self._response_usage: TokenUsage | None = None

    # -- what the log records of the calls --------------------------------------------------------

    def at(self, timestamp: Any = None, model: str | None = None) -> None:
        """The time (and model, when the record names one) of the records fed next: the steps they
        make carry them. A model given once stays until another is given."""
        self._timestamp = parse_timestamp(timestamp)
        if model:
            self._model = model

    def set_usage(self, usage: TokenUsage | None) -> None:
        """The tokens of the current response, or of the last one when none is open (Codex writes
        its ``token_count`` after the response): on the decisions and the reply that response made
        (one model call: its steps share it)."""
        if usage is None:
            return
        self._response_usage = usage
        for step in self.steps[self._response_start :]:
            if step.kind in ("decision", "message"):
                step.usage = usage

    # -- input the model reads -------------------------------------------------------------------

    def add_input(self, message: ChatMessage) -> None:
        """A message the model will read (user text, system/developer text): ends any response."""
        self.end_response()
        self.history.append(message)
        self._prompt_end = len(self.history)

    def add_result(
        self, call_id: str | None, text: str, *, error: bool = False, extra: dict[str, Any] | None = None
    ) -> None:
        """A tool's result: into the history (as a ``tool`` message) and onto the call's step."""
        self.end_response()
        self.history.append(ChatMessage(role="tool", content=text, tool_call_id=call_id))
        self._prompt_end = len(self.history)
        step = self.calls.get(call_id) if call_id else None
        if step is None:
            return
        step.tool_result = text if step.tool_result is None else f"{step.tool_result}\n{text}"
        if error:
            step.extra["is_error"] = True
        if extra:
            step.extra.update(extra)

    def replace_history(self, messages: list[ChatMessage]) -> None:
        """After a compaction the model reads ``messages`` instead of what came before (a new list:
        earlier steps keep their prompts)."""
        self.end_response()
        self.history = list(messages)
        self._prompt_end = len(self.history)

    # -- the model's response --------------------------------------------------------------------

    def _open(self, key: Any) -> ChatMessage:
        if self._response is None or (key is not None and key != self._response_key):
            self.end_response()
            self._response = ChatMessage(role="assistant")
            self._response_key = key
            self.history.append(self._response)
            self._opened()
        return self._response

    def _opened(self) -> None:
        self._response_start = len(self.steps)
        self._response_stamp = (self._timestamp, self._model)
        self._response_usage = None

    def add_thinking(self, text: str, key: Any = None) -> None:
        if not text:
            return
        response = self._open(key)
        response.reasoning = f"{response.reasoning}\n{text}" if response.reasoning else text
        self._thinking.append(text)

    def add_text(self, text: str, key: Any = None) -> None:
        if not text:
            return
        response = self._open(key)
        response.content = f"{response.content}\n{text}" if response.content else text
        self._text.append(text)

    def add_call(self, call: ToolCall, key: Any = None, extra: dict[str, Any] | None = None) -> TrajectoryStep:
        """A tool call of the current response: a decision step."""
        response = self._open(key)
        response.tool_calls.append(call)
        step = _new_step(
            index=len(self.steps),
            label=str(len(self.steps)),
            observation=_observation(self.history, self._prompt_end),
            messages=MessageView.prefix(self.history, self._prompt_end),
            thinking="\n".join(self._thinking),
            content="\n".join(self._text),
            action=call,
            action_text=call.display(),
            extra=dict(extra or {}),
            kind="decision",
            timestamp=self._response_stamp[0],
            model=self._response_stamp[1],
            usage=self._response_usage,
        )
        self.steps.append(step)
        self._response_steps += 1
        if call.id:
            self.calls[call.id] = step
        return step

    def add_event(self, content: str, kind: str, extra: dict[str, Any] | None = None) -> TrajectoryStep:
        """Something the log records that is no call (an error, a compaction, an aborted turn)."""
        self.end_response()
        step = self._note(content, "", {"event": kind, **(extra or {})})
        step.kind, step.timestamp, step.model = "event", self._timestamp, self._model
        return step

    def end_response(self) -> None:
        """Close the current response; one with no call becomes a step without an action."""
        if self._response is not None and not self._response_steps and (self._text or self._thinking):
            step = self._note("\n".join(self._text), "\n".join(self._thinking), {"event": "message"})
            step.kind, (step.timestamp, step.model), step.usage = "message", self._response_stamp, self._response_usage
        self._response = None
        self._response_key = None
        self._response_steps = 0
        self._thinking = []
        self._text = []

    def fork(self, marked: Iterable[str] = ()) -> Conversation:
        """A copy that goes on on its own: ending its response or pairing results leaves this one as
        it was. Following a growing log (``--follow``) shows a fork's steps and feeds the new lines
        to the original, so a response still being written is not cut in two.

        Only the steps that may still change are copied (shallowly): calls still waiting for their
        result, and the calls in ``marked`` (those the reader marks when it makes its trajectories,
        e.g. the Task calls a sub-agent is linked to); the others are shared, as are the prompts
        and their messages (none changes once written). A fork costs a few microseconds a step."""
        clone = fork_state(self)
        marked = set(marked)
        copies: dict[int, TrajectoryStep] = {}
        for call_id, step in self.calls.items():
            if step.tool_result is None or call_id in marked:
                copies[id(step)] = step.model_copy(update={"extra": dict(step.extra)})
        if copies:
            clone.steps = [copies.get(id(step), step) for step in self.steps]
            clone.calls = {call_id: copies.get(id(step), step) for call_id, step in self.calls.items()}
        return clone

    def _note(self, content: str, thinking: str, extra: dict[str, Any]) -> TrajectoryStep:
        step = TrajectoryStep(
            index=len(self.steps),
            observation=_observation(self.history, self._prompt_end),
            messages=MessageView.prefix(self.history, self._prompt_end),
            thinking=thinking,
            content=content,
            extra=extra,
        )
        self.steps.append(step)
        return step


class CountingConversation(Conversation):
    """A :class:`Conversation` that keeps only what a summary needs: one bare step per call or
    event (its action, its result; no prompt, no history, no message objects), made by the same
    rules, so an index counts exactly the steps a whole read builds at a fraction of the cost."""

    def add_input(self, message: ChatMessage) -> None:
        self.end_response()

    def add_result(
        self, call_id: str | None, text: str, *, error: bool = False, extra: dict[str, Any] | None = None
    ) -> None:
        self.end_response()
        step = self.calls.get(call_id) if call_id else None
        if step is not None:
            step.tool_result = text if step.tool_result is None else f"{step.tool_result}\n{text}"

    def replace_history(self, messages: list[ChatMessage]) -> None:
        self.end_response()

    def _open(self, key: Any) -> ChatMessage:
        if self._response is None or (key is not None and key != self._response_key):
            self.end_response()
            self._response = _OPEN
            self._response_key = key
            self._opened()
        return self._response

    def add_thinking(self, text: str, key: Any = None) -> None:
        if text:
            self._open(key)
            self._thinking.append(text)

    def at(self, timestamp: Any = None, model: str | None = None) -> None:
        return  # a summary carries no telemetry

    def set_usage(self, usage: TokenUsage | None) -> None:
        return

    def add_text(self, text: str, key: Any = None) -> None:
        if text:
            self._open(key)
            self._text.append(text)

    def add_call(self, call: ToolCall, key: Any = None, extra: dict[str, Any] | None = None) -> TrajectoryStep:
        self._open(key)
        step = _BARE.model_copy(update={"index": len(self.steps), "action": call, "extra": {}})
        self.steps.append(step)
        self._response_steps += 1
        if call.id:
            self.calls[call.id] = step
        return step

    def _note(self, content: str, thinking: str, extra: dict[str, Any]) -> TrajectoryStep:
        step = _BARE.model_copy(update={"index": len(self.steps), "extra": extra})
        self.steps.append(step)
        return step


_STEP_DEFAULTS = {
    name: field.default
    for name, field in TrajectoryStep.model_fields.items()
    if field.default_factory is None and not field.is_required()
}
_STEP_FACTORIES = {
    name: field.default_factory for name, field in TrajectoryStep.model_fields.items() if field.default_factory
}


def _new_step(**fields: Any) -> TrajectoryStep:
    """A step of trusted values, every field set: ``model_construct`` left to fill a field with a
    default factory asks pydantic whether the factory takes the validated data (an
    ``inspect.signature`` per field per step: 15 % of reading a Claude Code or Codex log)."""
    values = dict(_STEP_DEFAULTS)
    for name, make in _STEP_FACTORIES.items():
        if name not in fields:
            values[name] = make()  # type: ignore[call-arg]
    values.update(fields)
    return TrajectoryStep.model_construct(**values)


_OPEN = ChatMessage(role="assistant")
"""The response a :class:`CountingConversation` has open (never written to)."""
_BARE = TrajectoryStep(index=0)
"""What a :class:`CountingConversation`'s steps are copied from (a copy is microseconds; building
one, or ``model_construct`` with its default factories, is far more)."""


_State = TypeVar("_State")


def fork_state(state: _State) -> _State:
    """A copy of a reader's state object whose lists, dicts and sets are its own and whose
    :class:`Conversation` is a :meth:`~Conversation.fork`: making trajectories of the copy (which
    ends responses and sets fields) does not change the original, which reads on."""
    clone = copy.copy(state)
    for name, value in vars(state).items():
        if isinstance(value, Conversation):
            setattr(clone, name, value.fork())
        elif isinstance(value, (list, dict, set)):
            setattr(clone, name, copy.copy(value))
    return clone


def _observation(history: list[ChatMessage], end: int) -> str:
    """What the model read last before deciding: the last input or tool result."""
    for position in range(min(end, len(history)) - 1, -1, -1):
        if history[position].role != "assistant":
            return history[position].content
    return ""


def read_sessions(
    path: Path, files: Callable[[Path], list[Path]], none_found: str, read_file: Callable[[Path], Iterator[ReadItem]]
) -> Iterator[ReadItem]:
    """A session log, or a folder of them (``files`` lists a folder's sessions; ``none_found`` says
    an empty one), each read by ``read_file``: what the coding-agent readers share. Never raises."""
    try:
        if path.is_dir():
            found = files(path)
            if not found:
                yield LoadProblem(file=path.name, message=none_found)
            for file in found:
                yield from read_file(file)
            return
        yield from read_file(path)
    except OSError as exc:
        yield LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")


def head_records(head: bytes) -> list[dict[str, Any]]:
    """The JSON objects on the complete lines of a file's head (or the whole head when it holds one
    line): what the JSON Lines readers sniff on."""
    found = []
    for line in strip_bom(head).split(b"\n")[:-1] or [head]:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def jsonl_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | LoadProblem]]:
    """The file's JSON objects with their line numbers (1-based); a bad line is a problem (a cut last
    line, still being written, a warning)."""
    name = path.name
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if (strip_bom(line) if number == 1 else line).strip():
                yield number, jsonl_record(name, number, line, cut=not line.endswith(b"\n"))


def jsonl_record(file: str, number: int, line: bytes, *, cut: bool = False) -> dict[str, Any] | LoadProblem:
    """Line ``number`` (1-based) of a JSON Lines file as a JSON object, or the problem naming it
    (``cut``: the file's last line, without its newline, a warning)."""
    line = strip_bom(line) if number == 1 else line
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return LoadProblem(
            file=file,
            field=f"line {number}",
            message=("an incomplete last line (still being written?)" if cut else f"not JSON: {exc}"),
            severity="warning" if cut else "error",
        )
    if not isinstance(record, dict):
        return LoadProblem(file=file, field=f"line {number}", message="not a JSON object")
    return record
