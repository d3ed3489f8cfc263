"""OpenHands logs as trajectories: V0 event lists and evaluation outputs, V1 SDK conversations.

Layouts read:

- **V0** (classic OpenHands, still in evaluation outputs): a JSON list of events ``{id, source,
  message, action | observation, args | content + extras, cause, tool_call_metadata{function_name,
  tool_call_id, model_response}}``; and an evaluation ``output.jsonl`` whose lines hold such a list
  in ``history`` (with ``instance_id``/``instruction``, ``test_result``, ``error``, ``success``);
- **V1** (the OpenHands Software Agent SDK): a conversation folder ``base_state.json`` +
  ``events/event-NNNNN-<id>.json`` (or the ``events`` folder itself), or the same events as JSON
  Lines; events have ``kind`` (SystemPromptEvent, MessageEvent, ActionEvent, ObservationEvent,
  AgentErrorEvent, UserRejectObservation, ConversationStateUpdateEvent, …).

Mapping (one trajectory per conversation or evaluation line):

- the messages the LLM was sent → the prompt: the system prompt, user and agent messages, each
  model response as an assistant message with its tool calls (V0 actions of one ``model_response``
  and V1 actions of one ``llm_response_id`` are one message), each observation answering a call as a
  tool message (paired by tool call id, V0 also by ``cause``); V0 observations that answer no call
  (recall, errors) are user messages, agent-state changes are no message;
- each model response → a step: action = its first tool call (the others and their results in
  ``extra``), arguments from the model's own tool call (V0 ``model_response``, V1 ``tool_call``), else
  the action's ``args``; content = the thought, thinking = ``reasoning_content``; an agent message
  without calls is a step without action. Tools are inferred from the recorded calls;
- each event's ``timestamp`` → its step's; V0 ``llm_metrics``: the last ``token_usages`` entry,
  cost and response latency → the step's ``usage``, ``model`` and ``duration``, the last
  accumulated usage and cost → the episode's ``usage``;
- outcome: status = the last agent state (V0 ``agent_state_changed``) or ``execution_status`` (V1),
  ``finished`` when a finish call was made, ``error`` with the error event or evaluation ``error``
  (its text the ``error``: the evaluation's, the error state's reason, the last error observation or
  ``AgentErrorEvent``); answer = the finish call's message (V0 ``final_thought``) or an evaluation's
  patch (``test_result.git_patch``, the resolver's ``git_patch``); success = the evaluation line's
  ``success`` or its SWE-bench ``report.resolved`` (failed_apply_patch, error_eval... as checks);
  the resolver's ``result_explanation`` as the explanation; ``test_result`` and metrics in ``scores``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from replay_tui.episodes.model import (
    ChatMessage,
    Outcome,
    OutcomeCheck,
    TokenUsage,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    infer_tools,
    non_negative,
    parse_timestamp,
)
from replay_tui.episodes.problems import LoadProblem
from replay_tui.fileio import open_regular
from replay_tui.formats.base import Detection, EpisodeSummary, ReadItem, strip_bom
from replay_tui.formats.reread import CHANGED, changed, deferred, episode_at, indexed

_V1_KIND = re.compile(
    rb'"kind"\s*:\s*"(SystemPromptEvent|MessageEvent|ActionEvent|ObservationEvent|AgentErrorEvent|'
    rb'ConversationStateUpdateEvent|SystemPromptUpdateEvent|UserRejectObservation|Condensation\w*)"'
)
_V0_ACTION = re.compile(rb'"(action|observation)"\s*:\s*"[a-z_]+"')
_V0_STRONG = re.compile(rb'"(tool_call_metadata|llm_metrics)"\s*:|"source"\s*:\s*"(agent|user|environment)"')
_EVENT_FILE = re.compile(r"event-(\d+)")

_NON_CALLS = frozenset({"system", "message", "recall", "change_agent_state", "null", "condensation"})
"""V0 actions that are no tool call of the model (prompts, bookkeeping)."""
_NON_MESSAGES = frozenset({"agent_state_changed", "null", "user_rejected"})
"""V0 observations the LLM is not sent (state changes)."""


class OpenHandsReader:
    name = "openhands"
    label = "OpenHands trajectories (V0 event lists and eval outputs, V1 conversations)"
    description = (
        "episode = conversation (V1 folder/events JSONL) or V0 event list / eval output line; step = model "
        "response; prompt = system + messages + tool results before it; action = first tool call; "
        "outcome = agent state / execution_status, finish, errors, eval success"
    )

    def sniff(self, path: Path, head: bytes) -> Detection:
        if path.is_dir():
            if _is_conversation(path):
                return Detection.yes("OpenHands V1 conversation (events/event-NNNNN-*.json)")
            if _conversations(path):
                return Detection.yes("a folder of OpenHands V1 conversations")
            return Detection.no("a folder without OpenHands events/event-*.json files")
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text[:1] not in (b"{", b"["):
            return Detection.no("not JSON")
        kinds = {m.group(1) for m in _V1_KIND.finditer(head)}
        if kinds and (len(kinds) >= 2 or b'"source"' in head):
            return Detection.yes(f"OpenHands V1 events ({', '.join(sorted(k.decode() for k in kinds)[:3])})")
        v0 = _V0_ACTION.search(head)
        if v0 and _V0_STRONG.search(head) and (text[:1] == b"[" or b'"history"' in head):
            return Detection.yes("OpenHands V0 events (action/observation with source, tool_call_metadata)")
        if _V0_ACTION.search(head) and b'"history"' in head and b'"instruction"' in head:
            return Detection(0.8, "OpenHands V0 evaluation output (instruction, history of actions/observations)")
        return Detection.no("no OpenHands event fields (kind: …Event, or action/observation + source)")

    def read(self, path: Path) -> Iterator[ReadItem]:
        for item, _ in _items(path, counting=False):
            yield item

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every episode's summary, in :meth:`read`'s order, from the same pass with a counting
        :class:`_Builder` (no prompt is copied into any step; one episode is held at a time).

        An evaluation ``output.jsonl`` (one instance a line, the big one) is read line by line:
        ``locator`` = the line's (offset, length), its outcome (the patch, the test report) built
        again from that line when asked, never held for every row. A conversation folder's locator
        is the folder; any other file (one trajectory) is read whole again by :meth:`load`."""
        nth = 0
        for item, where in _items(path, counting=True):
            if isinstance(item, LoadProblem):
                yield item
                continue
            if isinstance(where, tuple):
                offset, length, number = where
                yield deferred(item, number, where, partial(_read_line, path, offset, length, number, counting=True))
            else:
                yield EpisodeSummary.of(item, nth, where if isinstance(where, Path) else nth)
            nth += 1

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The episode ``summary`` points at: its evaluation line, its conversation folder, or the
        file read whole again."""
        where = summary.locator
        if isinstance(where, tuple):
            offset, length, number = where
            found: ReadItem = _read_line(path, offset, length, number, counting=False)
        elif isinstance(where, Path):
            return episode_at(_read_folder(where), 0, summary, where.name)
        else:
            return episode_at(self.read(path), where, summary, path.name)
        if isinstance(found, Trajectory) and not indexed(found, summary):
            return changed(path.name, summary)
        return found


READER = OpenHandsReader()


def _items(path: Path, counting: bool) -> Iterator[tuple[ReadItem, Any]]:
    """What :meth:`OpenHandsReader.read` yields, each with where it lives: an evaluation line's
    (offset, length, line number), a conversation folder, or None (the file read whole)."""
    if path.is_dir():
        folders = [path] if _is_conversation(path) else _conversations(path)
        for folder in folders:
            for item in _read_folder(folder, counting):
                yield item, folder
        return
    try:
        with open_regular(path) as handle:
            lines = _json_lines(handle)
            if lines is not None:
                yield from _read_lines(path, lines, counting)
                return
    except OSError as exc:
        yield LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}"), None
        return
    for item in _read_whole(path, counting):
        yield item, None


def _json_lines(handle: BinaryIO) -> Iterator[tuple[int, bytes]] | None:
    """The file's lines with their offsets when it is JSON Lines (its first line a JSON value and
    another line after it), else None (one JSON document, read whole)."""
    held: list[tuple[int, bytes]] = []
    offset = 0
    first = handle.readline()
    while first and not strip_bom(first).strip():  # blank lines before the first record
        held.append((offset, first))
        offset += len(first)
        first = handle.readline()
    try:
        orjson.loads(strip_bom(first) if not offset else first)
    except (orjson.JSONDecodeError, RecursionError):
        return None
    held.append((offset, first))
    offset += len(first)
    line = handle.readline()
    while line and not line.strip():
        held.append((offset, line))
        offset += len(line)
        line = handle.readline()
    if not line:
        return None

    def lines() -> Iterator[tuple[int, bytes]]:
        yield from held
        at, more = offset, line
        while more:
            yield at, more
            at += len(more)
            more = handle.readline()

    return lines()


def _read_whole(path: Path, counting: bool) -> Iterator[ReadItem]:
    try:
        raw = strip_bom(path.read_bytes())
    except OSError as exc:
        yield LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
        return
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        lines = ((0, line + b"\n") for line in raw.splitlines())
        for item, _ in _read_lines(path, lines, counting):
            yield item
        return
    except RecursionError:
        yield LoadProblem(file=path.name, message="not readable: JSON nested too deep")
        return
    if isinstance(data, list):
        yield _guard(path.name, 0, lambda: _v0(path.stem, data, {}, counting))
    elif isinstance(data, dict) and isinstance(data.get("history"), list):
        yield _guard(path.name, 0, lambda: _v0_line(path.stem, data, counting))
    elif isinstance(data, dict) and "kind" in data:
        yield _guard(path.name, 0, lambda: _v1(path.stem, [data], {}, counting))
    else:
        yield LoadProblem(file=path.name, message="not an OpenHands log: expected a list of events or an event")


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a malformed field reads as absent)."""
    return value if isinstance(value, dict) else {}


def _is_conversation(folder: Path) -> bool:
    events = folder / "events" if (folder / "events").is_dir() else folder
    return any(_EVENT_FILE.match(p.name) for p in _safe_iterdir(events))


def _conversations(folder: Path) -> list[Path]:
    """The conversation folders in ``folder`` (the SDK's ``conversations/<id>/`` layout); none when
    the folder also holds log files of its own (a folder of logs, each opened as itself)."""
    entries = _safe_iterdir(folder)
    if any(p.suffix in (".json", ".jsonl") and p.is_file() for p in entries):
        return []
    return sorted(p for p in entries if p.is_dir() and (p / "events").is_dir() and _is_conversation(p))


def _safe_iterdir(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


class _Bad(Exception):
    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _guard(file: str, index: int, build: Any) -> ReadItem:
    try:
        result: Trajectory = build()
    except _Bad as exc:
        return LoadProblem(file=file, index=index, field=exc.field, message=exc.message)
    except (TypeError, ValueError, RecursionError) as exc:  # values nested too deep, or of odd types
        return LoadProblem(file=file, index=index, message=f"not read: {exc}")
    return result


def _read_lines(
    path: Path, lines: Iterable[tuple[int, bytes]], counting: bool
) -> Iterator[tuple[ReadItem, tuple[int, int, int] | None]]:
    """JSON Lines: V1 events (one conversation) or V0 evaluation outputs (one per line), each with
    its (offset, length, line number) when it is one line."""
    events: list[dict[str, Any]] = []
    for number, (offset, line) in enumerate(lines):
        if not line.strip():
            continue
        record, problem = _record(path, strip_bom(line) if number == 0 else line, number)
        if problem is not None:
            yield problem, None
        elif isinstance(record, dict) and isinstance(record.get("history"), list):
            where = (offset, len(line), number)
            yield _guard(path.name, number, lambda r=record, n=number: _v0_line(f"{path.stem}#{n}", r, counting)), where
        elif isinstance(record, dict) and isinstance(record.get("kind"), str):
            events.append(record)
        else:
            yield LoadProblem(file=path.name, index=number, message=f"line {number + 1}: not an OpenHands event"), None
    if events:
        yield _guard(path.name, 0, lambda: _v1(path.stem, events, {}, counting)), None


def _record(path: Path, line: bytes, number: int) -> tuple[Any, LoadProblem | None]:
    try:
        return orjson.loads(line), None
    except orjson.JSONDecodeError as exc:
        return None, LoadProblem(file=path.name, index=number, message=f"line {number + 1}: not valid JSON: {exc}")
    except RecursionError:
        return None, LoadProblem(file=path.name, index=number, message=f"line {number + 1}: nested too deep")


def _read_line(path: Path, offset: int, length: int, number: int, counting: bool) -> ReadItem:
    """One evaluation line again, from its offset (what an index's locator holds)."""
    try:
        with open_regular(path) as handle:
            handle.seek(offset)
            line = handle.read(length)
    except OSError as exc:
        return LoadProblem(file=path.name, index=number, message=f"cannot read: {exc.strerror or exc}")
    record, problem = _record(path, strip_bom(line) if offset == 0 else line, number)
    if problem is not None:
        return problem
    if not (isinstance(record, dict) and isinstance(record.get("history"), list)):
        return LoadProblem(file=path.name, index=number, message=CHANGED)
    return _guard(path.name, number, lambda: _v0_line(f"{path.stem}#{number}", record, counting))


def _read_folder(folder: Path, counting: bool = False) -> Iterator[ReadItem]:
    root = folder.parent if folder.name == "events" and not (folder / "events").is_dir() else folder
    events_dir = root / "events" if (root / "events").is_dir() else folder
    state: dict[str, Any] = {}
    base = root / "base_state.json"
    if base.is_file():
        try:
            loaded = orjson.loads(strip_bom(base.read_bytes()))
            state = loaded if isinstance(loaded, dict) else {}
        except (OSError, orjson.JSONDecodeError) as exc:
            yield LoadProblem(file=f"{root.name}/base_state.json", severity="warning", message=f"not read: {exc}")
    files = []
    for path in _safe_iterdir(events_dir):
        found = _EVENT_FILE.match(path.name)
        if found and path.suffix == ".json":
            files.append((int(found.group(1)), path.name, path))
    events: list[dict[str, Any]] = []
    for _, _, path in sorted(files):
        try:
            event = orjson.loads(strip_bom(path.read_bytes()))
        except (OSError, orjson.JSONDecodeError, RecursionError) as exc:
            yield LoadProblem(file=f"{root.name}/events/{path.name}", message=f"not read: {exc}")
            continue
        if isinstance(event, dict):
            events.append(event)
        else:
            yield LoadProblem(file=f"{root.name}/events/{path.name}", message="not an event object")
    ident = str(state.get("id") or root.name)
    yield _guard(root.name, 0, lambda: _v1(ident, events, state, counting))


def _text(value: Any) -> str:
    """Text of a V1 content list (``[{type: text, text}]``), a string, or anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, dict) and "text" in part:
                parts.append(str(part.get("text") or ""))
            elif isinstance(part, dict) and part.get("type") == "image":
                parts.append("[image]")
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    if isinstance(value, dict) and "text" in value:
        return str(value.get("text") or "")
    return orjson.dumps(value, default=str).decode()


def _arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    if isinstance(raw, dict):
        return raw, None
    if isinstance(raw, str):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {}, raw
        if isinstance(parsed, dict):
            return parsed, None
        return {}, raw
    if raw is None:
        return {}, None
    return {}, orjson.dumps(raw, default=str).decode()


class _Builder:
    """The conversation as it grows: messages, steps, the call each result answers."""

    def __init__(self, counting: bool = False) -> None:
        self.counting = counting
        """For an index: steps without their prompts (no copy of the messages per step)."""
        self.messages: list[ChatMessage] = []
        self.steps: list[TrajectoryStep] = []
        self.calls: list[ToolCall] = []
        self.results = 0
        self.usage: TokenUsage | None = None
        """The episode's usage so far (V0's last ``llm_metrics`` accumulated usage and cost)."""
        self.open_response: str | None = None
        self.step_of_call: dict[str, TrajectoryStep] = {}
        self.task = ""

    def user(self, text: str) -> None:
        if not self.task:
            self.task = text
        self.messages.append(ChatMessage(role="user", content=text))
        self.open_response = None

    def note(self, text: str) -> None:
        """What the environment told the model outside any call (recall, errors): a user message."""
        self.messages.append(ChatMessage(role="user", content=text))
        self.open_response = None

    def replace_system(self, text: str) -> None:
        """A new system prompt (V1 SystemPromptUpdateEvent, e.g. tools changed): later steps see it
        in place of the old one; the steps before keep what they were sent."""
        at = next((i for i, m in enumerate(self.messages) if m.role == "system"), None)
        if at is None:
            self.messages.insert(0, ChatMessage(role="system", content=text))
        else:
            self.messages[at] = ChatMessage(role="system", content=text)

    def system(self, text: str) -> None:
        self.messages.append(ChatMessage(role="system", content=text))
        self.open_response = None

    def assistant(
        self, text: str, thinking: str, call: ToolCall | None, response: str | None, extra: Any, event: Any = None
    ) -> None:
        """A model response, or one more call of the response already open (parallel calls);
        ``event`` the log's event, whose time and LLM metrics the new step takes."""
        if call is not None:
            self.calls.append(call)
        last = self.messages[-1] if self.messages else None
        if call is not None and response and response == self.open_response and last is not None and self.steps:
            last.tool_calls.append(call)
            step = self.steps[-1]
            step.extra.setdefault("tool_calls", [step.action.model_dump(mode="json")] if step.action else [])
            step.extra["tool_calls"].append(call.model_dump(mode="json"))
            if call.id:
                self.step_of_call[call.id] = step
            return
        observation = (
            ""
            if self.counting
            else next((m.content for m in reversed(self.messages) if m.role in ("user", "tool")), "")
        )
        step = TrajectoryStep(
            index=len(self.steps),
            observation=observation,
            messages=[] if self.counting else list(self.messages),
            thinking=thinking,
            content=text,
            action=call,
            extra=extra,
            kind="decision" if call is not None else "message",
        )
        if isinstance(event, dict) and not self.counting:  # a summary carries no telemetry
            self._stamp(step, event)
        self.steps.append(step)
        if call is not None and call.id:
            self.step_of_call[call.id] = step
        self.messages.append(
            ChatMessage(role="assistant", content=text, tool_calls=[call] if call else [], reasoning=thinking or None)
        )
        self.open_response = response

    def _stamp(self, step: TrajectoryStep, event: dict[str, Any]) -> None:
        """The event's ``timestamp``; V0's ``llm_metrics``: the last of its ``token_usages`` (that
        response's tokens and model), ``costs`` and ``response_latencies`` (the step's usage, cost
        and duration), its accumulated usage and cost the episode's so far."""
        step.timestamp = parse_timestamp(event.get("timestamp"))
        metrics = _obj(event.get("llm_metrics"))
        if not metrics:
            return
        usages, costs, latencies = (_list(metrics.get(key)) for key in ("token_usages", "costs", "response_latencies"))
        last, cost, latency = _obj(usages[-1]), _obj(costs[-1]), _obj(latencies[-1])
        if last or cost:
            step.usage = _usage(last, cost.get("cost"))
        step.duration = non_negative(latency.get("latency"))
        model = last.get("model") or _obj(metrics.get("accumulated_token_usage")).get("model")
        step.model = model if isinstance(model, str) and model else None
        self.usage = _usage(_obj(metrics.get("accumulated_token_usage")), metrics.get("accumulated_cost"))

    def result(self, call_id: str | None, text: str) -> None:
        self.results += 1
        self.messages.append(ChatMessage(role="tool", content=text, tool_call_id=call_id))
        self.open_response = None
        step = self.step_of_call.get(call_id or "")
        if step is None:
            return
        if step.action is not None and step.action.id == call_id and step.tool_result is None:
            step.tool_result = text
        if "tool_calls" in step.extra:
            step.extra.setdefault("tool_results", []).append({"tool_call_id": call_id, "content": text})

    def trajectory(self, ident: str, outcome: Outcome, metadata: dict[str, Any]) -> Trajectory:
        tools = [] if self.counting else infer_tools(self.calls)
        for step in self.steps:
            step.tools = tools
        if self.steps:
            self.steps[-1].done = True
        metadata = {**metadata, "messages": len(self.messages), "results": self.results}
        return Trajectory(
            id=ident,
            format="openhands",
            task=self.task,
            steps=self.steps,
            outcome=outcome,
            metadata=metadata,
            usage=self.usage,
        )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) and value else [None]


def _usage(usage: dict[str, Any], cost: Any) -> TokenUsage | None:
    """OpenHands' ``TokenUsage`` (prompt, completion, cache read/write tokens) and a cost."""
    return TokenUsage.of(
        input=usage.get("prompt_tokens"),
        output=usage.get("completion_tokens"),
        cache_read=usage.get("cache_read_tokens"),
        cache_write=usage.get("cache_write_tokens"),
        cost=cost,
    )


# -- V0 ---------------------------------------------------------------------------------------


_FLAT_KEYS = frozenset({"action", "observation", "thought", "id", "timestamp", "source", "message", "cause"})
"""Bookkeeping keys of the oldest V0 events, which hold their arguments flat (no ``args``)."""


def _v0_args(event: dict[str, Any]) -> dict[str, Any]:
    args = event.get("args")
    if isinstance(args, dict):
        return args
    if "args" in event or "tool_call_metadata" in event:
        return {}
    return {k: v for k, v in event.items() if k not in _FLAT_KEYS}


def _v0_call(event: dict[str, Any]) -> ToolCall:
    meta = event.get("tool_call_metadata")
    args = _v0_args(event)
    if isinstance(meta, dict) and isinstance(meta.get("function_name"), str):
        call_id = meta.get("tool_call_id")
        raw: Any = None
        response = meta.get("model_response")
        choices = response.get("choices") if isinstance(response, dict) else None
        for choice in choices if isinstance(choices, list) else []:
            message = choice.get("message") if isinstance(choice, dict) else None
            for call in (message.get("tool_calls") or []) if isinstance(message, dict) else []:
                if isinstance(call, dict) and call.get("id") == call_id and isinstance(call.get("function"), dict):
                    raw = call["function"].get("arguments")
        if raw is None:
            raw = {k: v for k, v in args.items() if k != "thought"}
        arguments, text = _arguments(raw)
        return ToolCall(
            name=meta["function_name"], arguments=arguments, raw_arguments=text, id=str(call_id) if call_id else None
        )
    return ToolCall(
        name=str(event.get("action")),
        arguments={k: v for k, v in args.items() if k != "thought"},
        id=f"event-{event.get('id')}",
    )


def _v0_response_id(event: dict[str, Any]) -> str | None:
    meta = event.get("tool_call_metadata")
    response = meta.get("model_response") if isinstance(meta, dict) else None
    ident = response.get("id") if isinstance(response, dict) else None
    return str(ident) if ident else None


def _v0(ident: str, events: Iterable[Any], metadata: dict[str, Any], counting: bool = False) -> Trajectory:
    build = _Builder(counting)
    call_of_event: dict[Any, str | None] = {}
    pending: list[str | None] = []
    status: str | None = None
    answer: str | None = None
    last_error: str | None = None
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            raise _Bad(f"[{index}]", f"expected an event object, got {type(event).__name__}")
        source = event.get("source")
        args = _v0_args(event)
        action = event.get("action")
        if isinstance(action, str):
            if action == "system":
                build.system(str(args.get("content") or event.get("message") or ""))
                pending.clear()
            elif action == "message":
                text = str(args.get("content") if args.get("content") is not None else event.get("message") or "")
                if source in ("user", None):
                    build.user(text)
                else:
                    build.assistant(text, "", None, None, {"event_id": event.get("id")}, event)
            elif action in _NON_CALLS or source not in ("agent", None):
                continue
            else:
                call = _v0_call(event)
                if "id" in event:
                    call_of_event[event["id"]] = call.id
                pending.append(call.id)
                thought = str(args.get("thought") or "")
                reasoning = args.get("reasoning_content") or event.get("reasoning_content")
                build.assistant(
                    thought,
                    str(reasoning or ""),
                    call,
                    _v0_response_id(event),
                    {"event_id": event.get("id"), "action": action},
                    event,
                )
                if action == "finish":
                    status = "finished"
                    answer = _finish_text(args, event.get("message"))
            continue
        observation = event.get("observation")
        if not isinstance(observation, str):
            continue
        extras = _obj(event.get("extras"))
        if observation == "agent_state_changed":
            state = extras.get("agent_state")
            if isinstance(state, str) and state not in ("running", "loading", "init", "awaiting_user_input"):
                status = state
                if state == "error" and extras.get("reason"):
                    last_error = str(extras["reason"])
            continue
        if observation in _NON_MESSAGES:
            continue
        content = str(event.get("content") if event.get("content") is not None else event.get("message") or "")
        meta = event.get("tool_call_metadata")
        call_id = meta.get("tool_call_id") if isinstance(meta, dict) else None
        if call_id is None and event.get("cause") in call_of_event:
            call_id = call_of_event[event.get("cause")]
        if call_id is None and "id" not in event and pending:  # the oldest events: results in call order
            call_id = pending[0]
        if call_id in pending:
            pending.remove(call_id)
        if call_id is not None:
            build.result(str(call_id), content)
        else:
            if observation == "error":
                status = "error"
                last_error = content or last_error
            build.note(content)
    outcome = Outcome(status=status, answer=answer)
    if status == "error":
        outcome.error = last_error or "error"
    return build.trajectory(ident, outcome, metadata)


def _finish_text(args: dict[str, Any], message: Any) -> str | None:
    """What the agent said when it finished: the finish call's ``final_thought`` (or its
    ``outputs.content``), else the event's message."""
    outputs = args.get("outputs")
    for value in (args.get("final_thought"), outputs.get("content") if isinstance(outputs, dict) else None, message):
        if isinstance(value, str) and value.strip():
            return value
    return None


def _v0_line(ident: str, line: dict[str, Any], counting: bool = False) -> Trajectory:
    name = line.get("instance_id")
    issue = line.get("issue")
    if name is None and isinstance(issue, dict):
        name = f"{issue.get('owner')}/{issue.get('repo')}#{issue.get('number')}"
    trajectory = _v0(str(name or ident), line["history"], {}, counting)
    if isinstance(line.get("instruction"), str):
        trajectory.task = line["instruction"]
    outcome = trajectory.outcome
    if line.get("error"):
        outcome.status = "error"
        outcome.error = str(line["error"])
        outcome.scores["error"] = line["error"]
    if isinstance(line.get("success"), bool):
        outcome.success = line["success"]
        outcome.reward = 1.0 if line["success"] else 0.0
    for key in ("test_result", "metrics", "report", "result_explanation"):
        if line.get(key) is not None:
            outcome.scores[key] = line[key]
    _eval_verdict(outcome, line)
    for key in ("metadata", "base_commit", "issue_type"):
        if line.get(key) is not None:
            trajectory.metadata[key] = line[key]
    return trajectory


def _eval_verdict(outcome: Outcome, line: dict[str, Any]) -> None:
    """An evaluation line's own verdict (``evaluation/utils/shared.py: EvalOutput``; the resolver's
    output): the patch it produced as the answer (``test_result.git_patch``, the resolver's
    ``git_patch``), ``resolved`` from a SWE-bench ``report`` (in ``test_result`` or the line), the
    resolver's ``result_explanation`` as the explanation."""
    test_result = _obj(line.get("test_result"))
    patch = test_result.get("git_patch", line.get("git_patch"))
    if isinstance(patch, str) and patch.strip():
        outcome.answer = patch
    report = _obj(test_result.get("report") or line.get("report"))
    if isinstance(report.get("resolved"), bool) and outcome.success is None:
        outcome.success = report["resolved"]
        outcome.reward = 1.0 if report["resolved"] else 0.0
    for key in ("failed_apply_patch", "error_eval", "empty_generation", "test_timeout"):
        if report.get(key) is True:
            outcome.checks.append(OutcomeCheck(name=key, passed=False, detail=key.replace("_", " ")))
    if isinstance(line.get("result_explanation"), str) and line["result_explanation"].strip():
        outcome.explanation = line["result_explanation"]


# -- V1 ---------------------------------------------------------------------------------------


def _v1(ident: str, events: list[dict[str, Any]], state: dict[str, Any], counting: bool = False) -> Trajectory:
    build = _Builder(counting)
    status = state.get("execution_status") if isinstance(state.get("execution_status"), str) else None
    finished = False
    answer: str | None = None
    errors: list[str] = []
    for index, event in enumerate(events):
        kind = event.get("kind")
        source = event.get("source")
        if kind == "SystemPromptEvent" and "system_prompt" in event:
            build.system(_text(event.get("system_prompt")))
        elif kind == "SystemPromptUpdateEvent" and "system_prompt" in event:
            build.replace_system(_text(event.get("system_prompt")))
        elif kind == "MessageEvent":
            message = event.get("llm_message")
            if not isinstance(message, dict):
                raise _Bad(f"events[{index}].llm_message", "missing or not an object")
            text = _text(message.get("content"))
            if message.get("role") == "assistant" or source == "agent":
                thinking = _text(message.get("reasoning_content"))
                build.assistant(text, thinking, None, None, {"event_id": event.get("id")}, event)
            elif message.get("role") == "system":
                build.system(text)
            else:
                build.user(text)
        elif kind == "ActionEvent":
            raw = event.get("tool_call")
            action = _obj(event.get("action"))
            call_id = event.get("tool_call_id")
            if isinstance(raw, dict) and isinstance(raw.get("name"), str):
                arguments, raw_text = _arguments(raw.get("arguments"))
                call_ident = raw.get("id") or call_id
                call = ToolCall(name=raw["name"], arguments=arguments, raw_arguments=raw_text, id=str(call_ident))
            else:
                name = event.get("tool_name") or action.get("kind")
                if not isinstance(name, str):
                    raise _Bad(f"events[{index}].tool_call", "no tool call and no tool_name")
                arguments = {k: v for k, v in action.items() if k != "kind"}
                call = ToolCall(name=name, arguments=arguments, id=str(call_id) if call_id else None)
            if action.get("kind") == "FinishAction" or call.name == "finish":
                finished = True
                said = action.get("message", call.arguments.get("message"))
                answer = said if isinstance(said, str) and said.strip() else answer
            response = event.get("llm_response_id")
            build.assistant(
                _text(event.get("thought")),
                _text(event.get("reasoning_content")),
                call,
                str(response) if response else None,
                {"event_id": event.get("id"), "action_kind": action.get("kind")},
                event,
            )
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            call_id = event.get("tool_call_id")
            if kind == "ObservationEvent":
                observation = event.get("observation")
                text = _text(observation.get("content")) if isinstance(observation, dict) else _text(observation)
            elif kind == "AgentErrorEvent":
                text = str(event.get("error") or "")
                errors.append(text)
            else:
                text = str(event.get("rejection_reason") or "rejected by the user")
            if call_id is None and kind == "AgentErrorEvent":
                build.note(text)
            else:
                build.result(str(call_id) if call_id is not None else None, text)
        elif kind == "ConversationStateUpdateEvent" and event.get("key") == "execution_status":
            status = event["value"] if isinstance(event.get("value"), str) else status
    if status is None and finished:
        status = "finished"
    outcome = Outcome(status=status, answer=answer)
    if errors:
        outcome.scores["errors"] = errors
    if status == "error":
        outcome.error = errors[-1] if errors else "error"
    if isinstance(state.get("stats"), dict):
        outcome.scores["stats"] = state["stats"]
    metadata: dict[str, Any] = {}
    agent = state.get("agent")
    llm = agent.get("llm") if isinstance(agent, dict) else None
    if isinstance(llm, dict) and llm.get("model"):
        metadata["model"] = llm["model"]
    return build.trajectory(ident, outcome, metadata)
