"""OpenAI chat-completions transcripts (``{"messages": [...], "tools": [...]}``) as trajectories.

Accepted shapes, in JSON Lines (one record a line) or one JSON document:

- a record ``{"messages": [...], "tools": [...], ...}`` (``traj`` is taken for ``messages``: the
  tau-bench v1 ``EnvRunResult``), a top-level array of such records, or a bare list of messages
  (one episode);
- assistant ``tool_calls`` (``arguments`` a JSON string, or already an object), the legacy
  ``function_call`` shape (its result a ``function`` message), content given as a list of parts
  (``[{"type": "text", "text": ...}]``);
- Responses-API items (``{"type": "function_call", "name", "arguments", "call_id"}``,
  ``function_call_output``, ``reasoning``, ``message``) as a bare list or under ``input``/``output``.

Each assistant message with a tool call is a step: the prompt (``messages``) is every message
before it, ``action`` its first call (further calls of the same message in
``extra["other_tool_calls"]`` with their results), ``content`` its text, ``thinking`` its
``reasoning_content``/``reasoning``, ``tool_result`` the following ``tool`` message with that
``tool_call_id``, ``observation`` the last user/tool message before it.

Outcome: a record's ``reward``/``score``/``success``/``status``; a cassette's ``finish_reason`` as
the status (``stop``, ``tool_calls``, ``length``...); tau-bench v1 results add the task's reference
actions (``info.task.actions``) as expected actions, its required outputs as the target,
``info.reward_info.info`` as checks and a crashed run's ``info.error`` + ``traceback`` as the error.

JSON Lines files are streamed a line at a time (a bad line is a LoadProblem, the others still
load). A JSON document (a file whose first line is not a whole record) is parsed whole with orjson:
such files hold one episode or a results array (tau-bench), not gigabytes.

The reader is an :class:`~replay_tui.formats.base.IndexingReader`: ``index()`` lists a JSON Lines
file's episodes (id, task, recorded calls, reward, success) without building them: it memory-maps
the file (giving the pages back as it goes, so its memory stays far below the file's size) and
decodes each line with msgspec into narrow structs that skip everything the summary does not need
(tool schemas, results, prompts); a line those structs do not describe goes
through the full path, so the summaries and problems are exactly :meth:`read`'s. ``load()`` reads
one episode back from its line's offset and length. (One known difference: a number orjson cannot
hold, such as ``1e999``, in a field the index skips is named when the episode is loaded, not when
indexed.) A JSON document or a cassette is read whole for its index (such files are small).

VCR cassettes (vcrpy YAML of recorded ``POST /v1/chat/completions`` calls, read with PyYAML when it
is installed) give one episode per recorded call, whose one step is the decision the model made:
the prompt is the request's ``messages`` + ``tools`` (a history the test wrote, tool calls
included, is prompt, not a decision), the step the response's message (gzip bodies decoded; a
streamed response, ``stream=True`` server-sent ``chat.completion.chunk`` events, put back together):
its first tool call, or its answer when it calls nothing.
"""

from __future__ import annotations

import gzip
import io
import mmap
import os
import re
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import msgspec
import orjson

from replay_tui.episodes.model import (
    ChatMessage,
    MessageView,
    Outcome,
    OutcomeCheck,
    ToolCall,
    Trajectory,
    TrajectoryStep,
)
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import safe_yaml
from replay_tui.formats.base import UTF8_BOM, Detection, EpisodeSummary, ReadItem, strip_bom

NAME = "openai-chat"
PARSED_FILES = 2
"""Whole-file parses (JSON documents, cassettes) a reader keeps for loading their episodes."""
_Entry = tuple[int | None, Any]
"""A parsed record of a whole file and its index, or ``(None, the LoadProblem that stops the file)``."""
_MESSAGE_KEYS = ("messages", "traj")
"""Where a record keeps its chat messages (``traj``: tau-bench v1 results)."""
_ITEM_KEYS = ("input", "output")
"""Where a Responses-API record keeps its items."""
_ITEM_TYPES = {"message", "function_call", "function_call_output", "reasoning"}
_OTHER_FORMATS = {"trajectory_format", "instance_id", "history"}
"""Record keys of formats that also hold chat messages (mini-swe-agent, SWE-agent): sniffed lower."""
_OBSERVED_ROLES = {"user", "tool", "function"}
_KNOWN_MESSAGE_FIELDS = {
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "name",
    "function_call",
    "reasoning_content",
    "reasoning",
}


class _Bad(Exception):
    """A malformed record: ``field`` names where, the message says what."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


# --------------------------------------------------------------------------------------------- sniffing

_ITEM_TYPE_RE = re.compile(r'"type"\s*:\s*"(function_call|function_call_output)"')
_KEY_RE = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"\s*:')
_STRING_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
"""A string value from its opening quote: to its closing quote (or where the head ends)."""
_STRUCTURE_RE = re.compile(r'["\[\]{}]')
"""Where the scanner has something to do: a string, or a container opening or closing."""
PATH_DEPTH = 4
"""Container keys a key's path keeps; a deeper path keeps that many and ends in ``"…"`` (the sniffer
looks three deep: a whole path per key made a deeply nested head quadratic to scan)."""


def _scan_keys(text: str, limit: int = 4000) -> tuple[str, list[tuple[tuple[str, ...], str]]]:
    """Keys of the first JSON value in ``text`` with their container path (a tiny tolerant scanner).

    Returns the top-level kind (``{``, ``[`` or ``""``) and ``(path, key)`` pairs, where ``path`` holds
    the key (or ``"[]"`` for an array) of each enclosing container below the top (at most
    ``PATH_DEPTH`` of them, then ``"…"``). Stops at the end of
    the first value, at ``limit`` keys, or where ``text`` ends (a truncated head is fine). Strings and
    the text between containers are skipped by regular expressions, not a character at a time.
    """
    i, n = 0, len(text)
    while i < n and text[i] in " \t\r\n\ufeff":
        i += 1
    if i >= n or text[i] not in "[{":
        return "", []
    kind = text[i]
    found: list[tuple[tuple[str, ...], str]] = []
    stack: list[str] = []  # per open container: the key it is under ("[]" inside an array)
    is_obj: list[bool] = []
    pending = "[]"
    while i < n and len(found) < limit:
        c = text[i]
        if c == '"':
            match = _KEY_RE.match(text, i)
            if match is not None and is_obj and is_obj[-1]:
                key = match.group(1)
                path = tuple(stack[1:]) if len(stack) <= PATH_DEPTH + 1 else (*stack[1 : PATH_DEPTH + 1], "…")
                found.append((path, key))
                pending = key
                i = match.end()
                continue
            i = _STRING_RE.match(text, i).end()  # type: ignore[union-attr]  # a string value: skip it
            continue
        if c in "[{":
            stack.append(pending if is_obj and is_obj[-1] else "[]")
            is_obj.append(c == "{")
            pending = "[]"
        elif c in "]}":
            if not stack:
                break
            stack.pop()
            is_obj.pop()
            if not stack:
                break
        else:
            following = _STRUCTURE_RE.search(text, i)
            if following is None:
                break
            i = following.start()
            continue
        i += 1
    return kind, found


def _sniff_value(text: str) -> Detection:
    kind, keys = _scan_keys(text)
    if not kind:
        return Detection.no("not JSON")
    # the record level: the top object, or the objects of a top-level array
    top = () if kind == "{" else ("[]",)
    record_keys = {key for path, key in keys if path == top}
    calls = any(key in ("tool_calls", "function_call") for _, key in keys)
    for field in _MESSAGE_KEYS:
        if field in record_keys:
            roles = [key for path, key in keys if path == (*top, field, "[]") and key == "role"]
            if roles:
                if record_keys & _OTHER_FORMATS:
                    marker = sorted(record_keys & _OTHER_FORMATS)[0]
                    return Detection(0.5, f"chat messages, but {marker!r} marks another format's record")
                score = (1.0 if field == "messages" else 0.9) if calls else 0.7
                shown = "with tool calls" if calls else "(no tool call in the first ones)"
                return Detection.yes(f"records with {field}[] of chat messages {shown}", score)
    for field in _ITEM_KEYS:
        items = any(path == (*top, field, "[]") and key in ("role", "type") for path, key in keys)
        if field in record_keys and items and _ITEM_TYPE_RE.search(text):
            return Detection.yes(f"Responses-API records with {field}[] items", 0.8)
    if kind == "[":
        if "role" in record_keys:
            if calls:
                return Detection.yes("a bare list of chat messages with tool calls", 0.9)
            return Detection.yes("a bare list of chat messages (no tool call in the first ones)", 0.5)
        if "type" in record_keys and _ITEM_TYPE_RE.search(text):
            return Detection.yes("a bare list of Responses-API items", 0.8)
        if "messages" in {key for path, key in keys}:
            return Detection(0.2, "messages found, but not at a record's top level")
    if record_keys & {*_MESSAGE_KEYS, *_ITEM_KEYS}:
        return Detection(0.2, "a messages field, but its first entries have no role")
    return Detection.no("no messages[] of chat messages (role, content) in the first record")


def _is_jsonl_line(line: bytes) -> bool:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, (dict, list))


def _records_array(line: bytes) -> bool:
    """Whether a whole-JSON first line is an array of records (objects that are not messages)."""
    if not line.startswith(b"["):
        return False
    value = orjson.loads(line)
    return isinstance(value, list) and any(isinstance(item, dict) for item in value) and not _is_message_list(value)


# --------------------------------------------------------------------------------------------- mapping


def _text(value: Any) -> str:
    """A message's content as text: a string as it is, a list of parts joined, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts: list[str] = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif isinstance(part.get("refusal"), str):
                    parts.append(part["refusal"])
                elif kind in ("image_url", "input_image", "image"):
                    parts.append("[image]")
                elif kind in ("input_audio", "audio"):
                    parts.append("[audio]")
                else:
                    parts.append(_dump(part))
            else:
                parts.append(_dump(part))
        return "\n".join(parts)
    return _dump(value)


def _dump(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return repr(value)


def _reasoning(message: dict[str, Any]) -> str | None:
    for key in ("reasoning_content", "reasoning", "thinking"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, (list, dict)) and value:
            if isinstance(value, dict) and isinstance(value.get("summary"), list):
                return _text(value["summary"])
            return _text(value if isinstance(value, list) else [value])
    return None


def _call(raw: Any, field: str) -> ToolCall:
    """One tool call: ``{id, type, function: {name, arguments}}`` (or ``{name, arguments}``)."""
    if not isinstance(raw, dict):
        raise _Bad(field, f"a tool call must be an object, not {type(raw).__name__}")
    function: dict[str, Any] = raw["function"] if isinstance(raw.get("function"), dict) else raw
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise _Bad(f"{field}.function.name", "a tool call needs a name")
    call_id = raw.get("id", raw.get("call_id"))
    arguments = function.get("arguments")
    if arguments is None or arguments == "":
        return ToolCall(name=name, id=None if call_id is None else str(call_id))
    if isinstance(arguments, dict):
        return ToolCall(name=name, arguments=arguments, id=None if call_id is None else str(call_id))
    if isinstance(arguments, str):
        try:
            parsed = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return ToolCall(name=name, arguments=parsed, id=None if call_id is None else str(call_id))
        return ToolCall(name=name, raw_arguments=arguments, id=None if call_id is None else str(call_id))
    return ToolCall(name=name, raw_arguments=_dump(arguments), id=None if call_id is None else str(call_id))


def _items_to_messages(items: list[Any], field: str) -> list[Any]:
    """Responses-API items as chat-completions messages (function calls merged into one assistant turn)."""
    messages: list[Any] = []
    reasoning: list[str] = []
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            messages.append(item)  # reported where messages are checked
            continue
        kind = item.get("type")
        if kind == "reasoning":
            text = _reasoning({"reasoning": item}) or _text(item.get("content"))
            if text:
                reasoning.append(text)
            continue
        if kind == "function_call":
            call = {
                "id": item.get("call_id", item.get("id")),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments")},
            }
            last = messages[-1] if messages else None
            if isinstance(last, dict) and last.get("role") == "assistant" and last.get("_from_items"):
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call], "_from_items": True})
            if reasoning:
                messages[-1].setdefault("reasoning", "\n".join(reasoning))
                reasoning = []
            continue
        if kind == "function_call_output":
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output"), "_item": position}
            )
            continue
        message = {key: value for key, value in item.items() if key != "type"}
        if message.get("role") == "assistant":
            message["_from_items"] = True
            if reasoning:
                message.setdefault("reasoning", "\n".join(reasoning))
                reasoning = []
        messages.append(message)
    del field
    return messages


def _message(raw: Any, field: str) -> tuple[ChatMessage, list[ToolCall]]:
    if not isinstance(raw, dict):
        raise _Bad(field, f"a message must be an object, not {type(raw).__name__}")
    role = raw.get("role")
    if not isinstance(role, str) or not role:
        raise _Bad(f"{field}.role", "a message needs a role")
    calls: list[ToolCall] = []
    tool_calls = raw.get("tool_calls")
    if isinstance(tool_calls, list):
        calls = [_call(call, f"{field}.tool_calls[{k}]") for k, call in enumerate(tool_calls)]
    elif tool_calls is not None:
        raise _Bad(f"{field}.tool_calls", f"tool_calls must be a list, not {type(tool_calls).__name__}")
    legacy = raw.get("function_call")
    if legacy is not None and not calls:
        calls = [_call({"function": legacy}, f"{field}.function_call")]
    tool_call_id = raw.get("tool_call_id")
    name = raw.get("name")
    extra = {key: value for key, value in raw.items() if key not in _KNOWN_MESSAGE_FIELDS and not key.startswith("_")}
    message = ChatMessage(
        role=role,
        content=_text(raw.get("content")),
        tool_calls=calls,
        tool_call_id=None if tool_call_id is None else str(tool_call_id),
        name=name if isinstance(name, str) else None,
        reasoning=_reasoning(raw),
        **extra,
    )
    return message, calls


def _tools(raw: Any) -> list[dict[str, Any]]:
    """Tool schemas in the chat-completions shape (legacy ``functions`` and flat Responses tools wrapped)."""
    tools: list[dict[str, Any]] = []
    if not isinstance(raw, list):
        return tools
    for tool in raw:
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("function"), dict):
            tools.append(tool)
        elif isinstance(tool.get("name"), str):
            schema = {key: value for key, value in tool.items() if key != "type"}
            tools.append({"type": "function", "function": schema})
        else:
            tools.append(tool)
    return tools


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _reward_success(record: dict[str, Any]) -> tuple[float | None, bool | None]:
    reward = _number(record.get("reward"))
    if reward is None:
        reward = _number(record.get("score"))
    success = record.get("success") if isinstance(record.get("success"), bool) else None
    if success is None and "traj" in record and "task_id" in record and reward is not None:
        success = reward >= 1.0  # tau-bench: a task passes with reward 1
    return reward, success


def _outcome(record: dict[str, Any]) -> Outcome:
    """What a transcript says of its task: ``reward``/``score``/``success`` and ``status`` when the
    record has them, a cassette's ``finish_reason`` as the status; tau-bench (v1 ``EnvRunResult``,
    ``tau_bench/types.py``) adds the task's reference ``actions`` as expected actions, its required
    ``outputs`` as the target, ``reward_info.info`` as checks (``r_actions``: the database after
    the run is the one the reference actions make; ``outputs``: each required output said to the
    user) and a crashed run's ``info.error`` then ``info.traceback`` as the error."""
    scores: dict[str, Any] = {}
    for key in ("reward", "score", "success", "scores", "reward_info"):
        if key in record:
            scores[key] = record[key]
    info = _dict(record.get("info"))
    if isinstance(info.get("reward_info"), dict):
        scores["reward_info"] = info["reward_info"]
    reward, success = _reward_success(record)
    outcome = Outcome(reward=reward, success=success, scores=scores)
    error = info.get("error")
    if isinstance(error, str):
        outcome.status = "error"
        trace = info.get("traceback")
        head = error.strip() or "error"
        outcome.error = f"{head}\n\n{trace.strip()}" if isinstance(trace, str) and trace.strip() else head
    elif isinstance(record.get("status"), str):
        outcome.status = record["status"]
    elif isinstance(record.get("finish_reason"), str):
        outcome.status = record["finish_reason"]
    task = _dict(info.get("task"))
    actions = task.get("actions")
    for action in actions if isinstance(actions, list) else []:
        if isinstance(action, dict) and isinstance(action.get("name"), str):
            arguments = action.get("kwargs", action.get("arguments"))
            outcome.expected_actions.append(
                ToolCall(name=action["name"], arguments=arguments if isinstance(arguments, dict) else {})
            )
    outputs = task.get("outputs")
    if isinstance(outputs, list) and outputs:
        outcome.target = ", ".join(str(output) for output in outputs)
    outcome.checks = _tau_bench_checks(_dict(_dict(info.get("reward_info")).get("info")))
    return outcome


def _tau_bench_checks(info: dict[str, Any]) -> list[OutcomeCheck]:
    """tau-bench's reward breakdown (``RewardActionInfo`` or ``RewardOutputInfo``) as checks."""
    checks: list[OutcomeCheck] = []
    r_actions = _number(info.get("r_actions"))
    if r_actions is not None:
        detail = "" if r_actions >= 1.0 else "the database differs from the one the reference actions make"
        checks.append(OutcomeCheck(name="actions", passed=r_actions >= 1.0, value=info["r_actions"], detail=detail))
    outputs = info.get("outputs")
    for output, said in outputs.items() if isinstance(outputs, dict) else []:
        checks.append(
            OutcomeCheck(
                name=f"output {output}",
                passed=said if isinstance(said, bool) else None,
                value=said,
                detail="" if said is True else "not said to the user",
            )
        )
    if not isinstance(outputs, dict) and _number(info.get("r_outputs")) is not None:
        r_outputs = float(info["r_outputs"])
        checks.append(OutcomeCheck(name="outputs", passed=r_outputs >= 1.0, value=info["r_outputs"]))
    return checks


def _task(record: dict[str, Any], messages: list[ChatMessage]) -> str:
    task = _record_task(record)
    if task is not None:
        return task
    for message in messages:
        if message.role == "user" and message.content.strip():
            return message.content
    return ""


def _record_task(record: dict[str, Any]) -> str | None:
    """The task the record states outside its messages (an instruction field), if it does."""
    metadata = _dict(record.get("metadata"))
    info = _dict(record.get("info"))
    info_task = _dict(info.get("task"))
    for candidate in (
        record.get("instruction"),
        record.get("task") if isinstance(record.get("task"), str) else None,
        metadata.get("instruction"),
        metadata.get("task"),
        info_task.get("instruction"),
    ):
        if isinstance(candidate, str) and candidate.strip():
            return candidate
    return None


def _episode_id(record: dict[str, Any], fallback: str) -> str:
    metadata = _dict(record.get("metadata"))
    for candidate in (record.get("id"), metadata.get("id"), record.get("session_id")):
        if isinstance(candidate, (str, int)) and not isinstance(candidate, bool) and str(candidate):
            return str(candidate)
    if "task_id" in record and isinstance(record["task_id"], (str, int)):
        trial = record.get("trial")
        return f"task-{record['task_id']}" + (f"-trial-{trial}" if isinstance(trial, int) else "")
    return fallback


def _steps(
    raw_messages: list[Any], field: str, tools: list[dict[str, Any]], warnings: list[tuple[str | None, str]]
) -> tuple[list[ChatMessage], list[TrajectoryStep]]:
    messages: list[ChatMessage] = []
    positions: list[int] = []  # each kept message's index in the file's list
    for position, raw in enumerate(raw_messages):
        where = f"{field}[{raw.get('_item', position) if isinstance(raw, dict) else position}]"
        try:
            message, _ = _message(raw, where)
        except _Bad as bad:
            warnings.append((bad.field, bad.message + " (message skipped)"))
            continue
        messages.append(message)
        positions.append(position)
    steps: list[TrajectoryStep] = []
    for i, message in enumerate(messages):
        if message.role != "assistant" or not message.tool_calls:
            continue
        results = _results(messages, i)
        prompt = MessageView.prefix(messages, i)
        observation = ""
        for earlier in reversed(prompt):
            if earlier.role in _OBSERVED_ROLES:
                observation = earlier.content
                break
        first, *others = message.tool_calls
        extra: dict[str, Any] = {"message_index": positions[i]}
        if others:
            extra["other_tool_calls"] = [
                {**call.model_dump(exclude_none=True), "result": results[k]} for k, call in enumerate(others, start=1)
            ]
        steps.append(
            TrajectoryStep(
                index=len(steps),
                observation=observation,
                messages=prompt,
                tools=tools,
                thinking=message.reasoning or "",
                content=message.content,
                action=first,
                tool_result=results[0],
                extra=extra,
                kind="decision",
            )
        )
    return messages, steps


def _response_step(
    prompt: list[ChatMessage],
    response: dict[str, Any],
    tools: list[dict[str, Any]],
    warnings: list[tuple[str | None, str]],
) -> tuple[TrajectoryStep, ChatMessage] | None:
    """The decision of a recorded call: its response (tool calls, or an answer without one) to the
    request's messages (the prompt, whole), and the response as a message; None without one."""
    if not response:
        return None
    try:
        message, _ = _message(response, "response")
    except _Bad as bad:
        warnings.append((bad.field, bad.message + " (response skipped)"))
        return None
    observation = next((m.content for m in reversed(prompt) if m.role in _OBSERVED_ROLES), "")
    first = message.tool_calls[0] if message.tool_calls else None
    others = message.tool_calls[1:]
    extra: dict[str, Any] = {"message_index": len(prompt)}
    if others:
        extra["other_tool_calls"] = [{**call.model_dump(exclude_none=True), "result": None} for call in others]
    step = TrajectoryStep(
        index=0,
        observation=observation,
        messages=prompt,
        tools=tools,
        thinking=message.reasoning or "",
        content=message.content,
        action=first,
        extra=extra,
        kind="decision" if first is not None else "message",
    )
    return step, message


def _results(messages: list[ChatMessage], i: int) -> list[str | None]:
    """The result of each call of ``messages[i]``: the following tool (or function) message with its id."""
    calls = messages[i].tool_calls
    results: list[str | None] = [None] * len(calls)
    replies: list[ChatMessage] = []
    for later in messages[i + 1 :]:
        if later.role == "assistant":
            break
        if later.role in ("tool", "function"):
            replies.append(later)
    used: set[int] = set()
    for k, call in enumerate(calls):
        for r, reply in enumerate(replies):
            if r in used:
                continue
            if (call.id is not None and reply.tool_call_id == call.id) or (
                reply.role == "function" and reply.name == call.name
            ):
                results[k] = reply.content
                used.add(r)
                break
    # replies without ids (or ids the calls do not carry): in order, to the calls still without one
    free = [
        r for r, reply in enumerate(replies) if r not in used and (reply.tool_call_id is None or calls[0].id is None)
    ]
    for k in range(len(calls)):
        if results[k] is None and free:
            results[k] = replies[free.pop(0)].content
    return results


def _trajectory(
    value: Any, fallback_id: str, response: dict[str, Any] | None = None
) -> tuple[Trajectory, list[tuple[str | None, str]]]:
    """One record (or a bare message list) as a trajectory, with the warnings of its skipped messages.

    ``response``: the message a recorded call answered with (a cassette; ``{}`` when it has none):
    then the record's messages are only the prompt (a history the caller wrote, its calls included,
    is not the model's to judge) and the response is the one step."""
    if isinstance(value, list):
        record: dict[str, Any] = {"messages": value}
    elif isinstance(value, dict):
        record = value
    else:
        raise _Bad(None, f"a record must be an object or a list of messages, not {type(value).__name__}")
    field = next((key for key in _MESSAGE_KEYS if key in record), None)
    if field is not None:
        raw_messages = record[field]
        if not isinstance(raw_messages, list):
            raise _Bad(field, f"must be a list of messages, not {type(raw_messages).__name__}")
    else:
        field = next((key for key in _ITEM_KEYS if isinstance(record.get(key), list)), None)
        if field is None:
            raise _Bad("messages", "no messages (nor traj, nor Responses-API input/output items) in the record")
        raw_messages = []
        for key in _ITEM_KEYS:
            if isinstance(record.get(key), list):
                raw_messages.extend(record[key])
    if any(isinstance(m, dict) and m.get("type") in _ITEM_TYPES for m in raw_messages):
        raw_messages = _items_to_messages(raw_messages, field)
    tools = _tools(record.get("tools", record.get("functions")))
    warnings: list[tuple[str | None, str]] = []
    messages, steps = _steps(raw_messages, field, tools, warnings)
    if response is not None:
        decision = _response_step(messages, response, tools, warnings)
        steps = [decision[0]] if decision else []
        messages = [*messages, decision[1]] if decision else messages
    metadata = dict(record["metadata"]) if isinstance(record.get("metadata"), dict) else {}
    for key in ("model", "task_id", "trial"):
        if key in record and key not in metadata:
            metadata[key] = record[key]
    extra = {
        key: val
        for key, val in record.items()
        if key not in (*_MESSAGE_KEYS, *_ITEM_KEYS, "tools", "functions", "metadata")
    }
    extra["message_count"] = len(messages)
    if messages and messages[-1].role == "assistant" and not messages[-1].tool_calls:
        extra["final_answer"] = messages[-1].content
    trajectory = Trajectory(
        id=_episode_id(record, fallback_id),
        format=NAME,
        task=_task(record, messages),
        metadata=metadata,
        steps=steps,
        outcome=_outcome(record),
        extra=extra,
    )
    return trajectory, warnings


def _is_message_list(value: list[Any]) -> bool:
    first = next((item for item in value if isinstance(item, dict)), None)
    return first is not None and ("role" in first or first.get("type") in _ITEM_TYPES)


def _session(value: Any) -> Any:
    if isinstance(value, dict):
        metadata = _dict(value.get("metadata"))
        for candidate in (value.get("id"), metadata.get("id"), value.get("task_id")):
            if candidate is not None:
                return candidate
    return None


def _response_message(response: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The assistant message of a recorded response (gzip bodies decoded, a streamed response's
    chunks put together), and a note when it is missing or incomplete."""
    body = _dict(response.get("body")).get("string")
    if body is None:
        return None, None
    if isinstance(body, bytes) and body[:2] == b"\x1f\x8b":
        try:
            body = gzip.decompress(body)
        except (OSError, EOFError, zlib.error) as exc:
            return None, f"gzip: {exc}"
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    if not isinstance(body, str):
        return None, f"a body of type {type(body).__name__}"
    if body.lstrip().startswith(("data:", "event:", ":")):
        return _stream_message(body)
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None, "not JSON, nor a stream of data: chunks"
    choices = _dict(payload).get("choices")
    if not isinstance(choices, list) or not choices:
        return None, "no choices"
    message = _dict(choices[0]).get("message")
    if not isinstance(message, dict):
        return None, "no message in choices[0]"
    finish = _dict(choices[0]).get("finish_reason")
    return ({**message, "finish_reason": finish} if isinstance(finish, str) else message), None


def _sse_events(body: str) -> Iterator[str]:
    """The data of each server-sent event (its ``data:`` lines joined; events end at a blank line)."""
    lines: list[str] = []
    for line in body.splitlines():
        if not line.strip():
            if lines:
                yield "\n".join(lines)
                lines = []
        elif line.startswith("data:"):
            value = line[5:]
            lines.append(value[1:] if value.startswith(" ") else value)
    if lines:
        yield "\n".join(lines)


def _stream_message(body: str) -> tuple[dict[str, Any] | None, str | None]:
    """A streamed chat completion (``stream=True``: ``chat.completion.chunk`` events, then
    ``[DONE]``) as the one message it spells: choice 0's content, reasoning and tool-call deltas
    (by their ``index``; ``id`` and ``name`` as first given, ``arguments`` fragments concatenated)."""
    role = "assistant"
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    legacy: dict[str, str] | None = None
    finish: str | None = None
    done = False
    chunks = 0
    for data in _sse_events(body):
        if data.strip() == "[DONE]":
            done = True
            break
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None, f"stream chunk {chunks} is not JSON"
        chunks += 1
        choices = _dict(chunk).get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = _dict(choice.get("delta"))
            if isinstance(choice.get("finish_reason"), str):
                finish = choice["finish_reason"]
            if isinstance(delta.get("role"), str):
                role = delta["role"]
            if isinstance(delta.get("content"), str):
                content.append(delta["content"])
            for key in ("reasoning_content", "reasoning"):
                if isinstance(delta.get(key), str):
                    reasoning.append(delta[key])
            function_call = delta.get("function_call")
            if isinstance(function_call, dict):
                legacy = legacy or {"name": "", "arguments": ""}
                _add_fragment(legacy, function_call)
            tool_calls = delta.get("tool_calls")
            for position, raw in enumerate(tool_calls if isinstance(tool_calls, list) else []):
                if not isinstance(raw, dict):
                    continue
                slot_index = raw.get("index", position)
                slot = calls.setdefault(
                    slot_index if isinstance(slot_index, int) else position,
                    {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                if slot["id"] is None and isinstance(raw.get("id"), str):
                    slot["id"] = raw["id"]
                _add_fragment(slot["function"], _dict(raw.get("function")))
    if not chunks:
        return None, "a stream without chunks"
    message: dict[str, Any] = {"role": role, "content": "".join(content) if content else None}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = [calls[key] for key in sorted(calls)]
    elif legacy is not None:
        message["function_call"] = legacy
    if finish is not None:
        message["finish_reason"] = finish
    return message, None if done else "the stream ends before [DONE]: the response may be cut short"


def _add_fragment(function: dict[str, Any], delta: dict[str, Any]) -> None:
    """One delta of a streamed call: the name as first given (some servers repeat it in every chunk),
    the arguments appended."""
    name = delta.get("name")
    if isinstance(name, str) and name and not function["name"]:
        function["name"] = name
    arguments = delta.get("arguments")
    if isinstance(arguments, str):
        function["arguments"] += arguments


# --------------------------------------------------------------------------------------------- indexing
#
# The index decodes each JSON Lines record with msgspec into the narrow structs below: the fields
# the summary needs (id, instruction, outcome), each message's role and its calls' names, and the
# raw bytes of its content (decoded only for the first user message). msgspec skips every other
# value (tool schemas, tool results, the system prompt...) in C without building it. A record the
# structs do not describe exactly (a message without a role, a Responses-API item, a flat tool
# call, a metadata that is not an object...) fails to decode or is refused by _fast_summary, and
# is then read by the full path, so a summary always says what read() would.


_Name = Annotated[str, msgspec.Meta(min_length=1)]


class _FunctionHead(msgspec.Struct):
    name: _Name
    """A call without a name is skipped by read() (with a warning): the full path tells."""


class _CallHead(msgspec.Struct):
    function: _FunctionHead


class _MessageHead(msgspec.Struct):
    role: _Name
    content: msgspec.Raw = msgspec.Raw(b"null")
    tool_calls: list[_CallHead] | None = None
    function_call: _FunctionHead | None = None
    type: None = None
    """A typed message is a Responses-API item: the full path converts it."""


class _MetadataHead(msgspec.Struct):
    id: Any = msgspec.UNSET
    instruction: Any = msgspec.UNSET
    task: Any = msgspec.UNSET


class _InfoTaskHead(msgspec.Struct):
    instruction: Any = msgspec.UNSET
    actions: Any = msgspec.UNSET
    outputs: Any = msgspec.UNSET


class _InfoHead(msgspec.Struct):
    task: _InfoTaskHead | msgspec.UnsetType = msgspec.UNSET
    error: Any = msgspec.UNSET
    traceback: Any = msgspec.UNSET
    reward_info: Any = msgspec.UNSET


class _RecordHead(msgspec.Struct):
    id: Any = msgspec.UNSET
    session_id: Any = msgspec.UNSET
    task_id: Any = msgspec.UNSET
    trial: Any = msgspec.UNSET
    instruction: Any = msgspec.UNSET
    task: Any = msgspec.UNSET
    reward: Any = msgspec.UNSET
    score: Any = msgspec.UNSET
    success: Any = msgspec.UNSET
    status: Any = msgspec.UNSET
    scores: Any = msgspec.UNSET
    reward_info: Any = msgspec.UNSET
    metadata: _MetadataHead | msgspec.UnsetType = msgspec.UNSET
    info: _InfoHead | msgspec.UnsetType = msgspec.UNSET
    messages: list[_MessageHead] | msgspec.UnsetType = msgspec.UNSET
    traj: list[_MessageHead] | msgspec.UnsetType = msgspec.UNSET


_HEAD = msgspec.json.Decoder(_RecordHead)
_CHUNK = 1 << 22
"""How much of a JSON Lines file the index reads at a time (a longer line is read whole)."""
_DROP = 1 << 23
"""How much of a mapped file the index reads before it gives the pages back (the RSS it adds)."""
_OPEN_BRACE = ord("{")


def _fits_orjson(value: Any) -> bool:
    """Whether orjson reads ``value`` as msgspec did: it makes a float of an integer beyond 64 bits."""
    return type(value) is not int or -(2**63) <= value < 2**64


def _fields(struct: msgspec.Struct) -> dict[str, Any] | None:
    """The fields ``struct`` found in its JSON object (as orjson would give them), or None."""
    found: dict[str, Any] = {}
    for name in struct.__struct_fields__:
        value = getattr(struct, name)
        if value is msgspec.UNSET:
            continue
        if not _fits_orjson(value):
            return None
        found[name] = value
    return found


def _fast_summary(head: _RecordHead, fallback_id: str, record: int, locator: Any) -> EpisodeSummary | None:
    """The summary of a record decoded as ``head``, or None when only the full path can tell."""
    messages = head.messages if head.messages is not msgspec.UNSET else head.traj
    if isinstance(messages, msgspec.UnsetType):
        return None
    # every message has a role and every call a name (else the decoding failed): each assistant
    # message with a call (or the legacy function_call) is a step with a recorded call
    steps = sum(1 for m in messages if m.role == "assistant" and (m.tool_calls or m.function_call is not None))
    fields = _fields(head)
    if fields is None:
        return None
    if isinstance(head.metadata, _MetadataHead):
        metadata = _fields(head.metadata)
        if metadata is None:
            return None
        fields["metadata"] = metadata
    if isinstance(head.info, _InfoHead):
        info = _fields(head.info)
        info_task = head.info.task
        task_fields = {} if isinstance(info_task, msgspec.UnsetType) else _fields(info_task)
        if info is None or task_fields is None:
            return None
        if not isinstance(info_task, msgspec.UnsetType):
            info["task"] = task_fields
        fields["info"] = info
    task = _record_task(fields)
    if task is None:
        task = ""
        for message in messages:
            if message.role != "user":
                continue
            try:
                text = _text(orjson.loads(memoryview(message.content)))
            except orjson.JSONDecodeError:
                return None
            if text.strip():
                task = text
                break
    outcome = _outcome(fields)
    return EpisodeSummary(
        id=_episode_id(fields, fallback_id),
        record=record,
        task=task,
        steps=steps,
        reward=outcome.reward,
        success=outcome.success,
        outcome=outcome,
        locator=locator,
    )


def _fast(line: memoryview, fallback_id: str, index: int, locator: Any) -> EpisodeSummary | None:
    try:
        head = _HEAD.decode(line)
    except Exception:  # not JSON, not this shape, too deep: the full path says what is wrong
        return None
    return _fast_summary(head, fallback_id, index, locator)


def _version(path: Path, stat: os.stat_result) -> tuple[str, int, int, int]:
    """What identifies one version of a file's content: its path, size, mtime and inode."""
    return (str(path), stat.st_size, stat.st_mtime_ns, stat.st_ino)


def _layout(handle: BinaryIO) -> str:
    """How the file holds its records: ``lines`` (JSON Lines), ``document``, ``cassette`` or ``empty``."""
    first = b""
    for line in handle:
        if line.strip():
            first = line
            break
    if not first:
        return "empty"
    stripped = first.lstrip(UTF8_BOM + b" \t\r\n")
    if stripped.startswith(b"interactions:"):
        return "cassette"
    if _is_jsonl_line(stripped):
        # one line holding an array of records (tau-bench results written without indent) is a
        # document of episodes, not one episode whose messages are records
        return "document" if _records_array(stripped) else "lines"
    second = b""
    for line in handle:
        if line.strip():
            second = line
            break
    # a first line that is not a whole record, then one that is: JSON Lines with a bad first line
    return "lines" if second and _is_jsonl_line(second) and stripped[:1] == b"{" else "document"


_Window = tuple["bytes | mmap.mmap", memoryview, int, int, int]


def _windows(handle: BinaryIO) -> Iterator[_Window]:
    """The file as windows of whole lines, about :data:`_CHUNK` bytes each: ``(data, view, start,
    stop, base)``, the window being ``data[start:stop]`` (``view`` a memoryview of ``data``) at
    file offset ``base + start``.

    The file is memory-mapped when it can be, and the pages of each window are given back once
    it is done with (so the peak RSS stays at a window, not the file); otherwise (a pipe, a
    platform without mmap) it is read in chunks.
    """
    try:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        yield from _read_windows(handle)
        return
    view = memoryview(mapped)
    drop = getattr(mapped, "madvise", None)
    dontneed = getattr(mmap, "MADV_DONTNEED", None)
    try:
        size = len(mapped)
        start = dropped = 0
        while start < size:
            newline = mapped.find(b"\n", min(start + _CHUNK, size) - 1)
            stop = size if newline < 0 else newline + 1
            yield mapped, view, start, stop, 0
            start = stop
            done = start // mmap.PAGESIZE * mmap.PAGESIZE
            if drop is not None and dontneed is not None and done - dropped >= _DROP:
                drop(dontneed, dropped, done - dropped)
                dropped = done
    finally:
        try:
            view.release()
            mapped.close()
        except BufferError:  # a view of a line still held somewhere: the mapping closes when collected
            pass


def _read_windows(handle: BinaryIO) -> Iterator[_Window]:
    buffer = b""
    base = 0
    while True:
        chunk = handle.read(_CHUNK)
        if chunk and chunk.rfind(b"\n") < 0:  # a line longer than a chunk: read on to its end
            parts = [buffer, chunk]
            while chunk and chunk.rfind(b"\n") < 0:
                chunk = handle.read(_CHUNK)
                parts.append(chunk)
            buffer = b"".join(parts)
        else:
            buffer = buffer + chunk if buffer else chunk
        if not buffer:
            return
        stop = buffer.rfind(b"\n") + 1 if chunk else len(buffer)
        yield buffer, memoryview(buffer), 0, stop, base
        if not chunk:
            return
        buffer = buffer[stop:]
        base += stop


def _is_utf8(view: memoryview) -> bool:
    """orjson refuses invalid UTF-8 anywhere in a line, msgspec only where it decodes."""
    try:
        str(view, "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _line_number(path: Path, offset: int) -> int:
    """The 1-based number of the line starting at ``offset`` (counted only when a problem needs it)."""
    count = 1
    with path.open("rb") as handle:
        while offset > 0:
            data = handle.read(min(_CHUNK, offset))
            if not data:
                break
            count += data.count(b"\n")
            offset -= len(data)
    return count


class OpenAIChatReader:
    name = NAME
    label = "OpenAI chat-completions transcripts"
    description = (
        "observation = last user/tool message, prompt = the messages before each assistant tool call, "
        "thinking = reasoning_content/reasoning, action = the first tool call (name + parsed arguments), "
        "tool_result = the tool message with its tool_call_id"
    )

    def __init__(self) -> None:
        self._parsed: OrderedDict[tuple[str, int, int, int], tuple[str, list[_Entry]]] = OrderedDict()
        self._parsed_lock = threading.Lock()

    def sniff(self, path: Path, head: bytes) -> Detection:
        data = strip_bom(head)
        text = data.decode("utf-8", errors="replace")
        if text.lstrip().startswith("interactions:"):
            if "/chat/completions" in text:
                return Detection.yes("a VCR cassette of /v1/chat/completions calls", 0.9)
            return Detection.no("a VCR cassette without /chat/completions calls")
        return _sniff_value(text)

    def read(self, path: Path) -> Iterator[ReadItem]:
        for _, item in self._records(path):
            yield item

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every episode's summary without building it: a JSON Lines file is mapped (or read in
        chunks) a window at a time, each line decoded only as far as the summary needs (``locator``
        = its byte offset and length); a JSON document or a cassette (small files) is read whole
        (``locator`` = the record's index), and its parse kept for :meth:`load` (the last
        :data:`PARSED_FILES` files, while unchanged): loading each episode never parses the file again. The
        summaries and problems are :meth:`read`'s, in its order."""
        opened = self._open(path)
        if isinstance(opened, LoadProblem):
            yield opened
            return
        kind, handle = opened
        with handle:
            if kind == "lines":
                yield from self._index_lines(path, handle)
                return
        for record, item in self._records(path):
            if isinstance(item, Trajectory) and record is not None:
                yield EpisodeSummary.of(item, record, record)
            elif isinstance(item, LoadProblem):
                yield item

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The episode ``summary`` (from :meth:`index`) points at, read by the full path."""
        items: list[tuple[int | None, ReadItem]] = []
        locator = summary.locator
        if isinstance(locator, tuple) and len(locator) == 2:
            offset, length = locator
            try:
                with path.open("rb") as handle:
                    handle.seek(offset)
                    line = handle.read(length)
            except (OSError, ValueError, TypeError) as exc:
                return LoadProblem(file=path.name, index=summary.record, message=f"cannot read: {exc}")
            items = [(summary.record, item) for item in self._line(path, line, summary.record, 0)]
            if not any(isinstance(item, Trajectory) for _, item in items):  # name the line in the problem
                number = _line_number(path, offset)
                items = [(summary.record, item) for item in self._line(path, line, summary.record, number)]
        else:
            whole = self._whole(path)
            if isinstance(whole, LoadProblem):
                return whole
            kind, entries = whole
            for record, value in entries:
                if record == summary.record:
                    items.extend(self._entry_items(path, kind, record, value))
        for _, item in items:
            if isinstance(item, Trajectory):
                if item.id != summary.id:
                    return LoadProblem(
                        file=path.name,
                        index=summary.record,
                        session_id=summary.id,
                        message=f"the file changed since it was indexed: record {summary.record} is now {item.id!r}",
                    )
                return item
        problems = [item for _, item in items if isinstance(item, LoadProblem)]
        errors = [problem for problem in problems if problem.severity == "error"]
        if errors or problems:
            return (errors or problems)[0]
        return LoadProblem(
            file=path.name, index=summary.record, message="no such episode in the file (changed since it was indexed?)"
        )

    def _open(self, path: Path) -> tuple[str, BinaryIO] | LoadProblem:
        try:
            handle = path.open("rb")
        except OSError as exc:
            return LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
        try:
            kind = _layout(handle)
            handle.seek(0)
        except BaseException:
            handle.close()
            raise
        if kind == "empty":
            handle.close()
            return LoadProblem(file=path.name, message="the file is empty")
        return kind, handle

    def _records(self, path: Path) -> Iterator[tuple[int | None, ReadItem]]:
        """What :meth:`read` yields, each with the index of its record (None: the whole file)."""
        opened = self._open(path)
        if isinstance(opened, LoadProblem):
            yield None, opened
            return
        kind, handle = opened
        with handle:
            if kind == "lines":
                yield from self._lines(path, handle)
                return
            entries = self._parse_whole(path, kind, handle)
        for record, value in entries:
            yield from self._entry_items(path, kind, record, value)

    def _parse_whole(self, path: Path, kind: str, handle: BinaryIO) -> list[_Entry]:
        """A JSON document's or cassette's records, parsed once per file version (size, mtime, inode)
        and kept for the next :meth:`load` (a 20,000-interaction cassette is not parsed per episode)."""
        key = _version(path, os.fstat(handle.fileno()))
        known = self._known(key)
        if known is not None:
            return known[1]
        data = handle.read()
        entries = list(self._cassette(path, data) if kind == "cassette" else self._document(path, data))
        with self._parsed_lock:
            self._parsed[key] = (kind, entries)
            while len(self._parsed) > PARSED_FILES:
                self._parsed.popitem(last=False)
        return entries

    def _known(self, key: tuple[str, int, int, int]) -> tuple[str, list[_Entry]] | None:
        with self._parsed_lock:
            known = self._parsed.get(key)
            if known is not None:
                self._parsed.move_to_end(key)
            return known

    def _whole(self, path: Path) -> tuple[str, list[_Entry]] | LoadProblem:
        """The parsed records of a whole file: kept from :meth:`index` while the file is unchanged
        (found by its size, mtime and inode, before a byte of it is read again)."""
        try:
            known = self._known(_version(path, path.stat()))
        except OSError:
            known = None
        if known is not None:
            return known
        opened = self._open(path)
        if isinstance(opened, LoadProblem):
            return opened
        kind, handle = opened
        with handle:
            if kind == "lines":
                return LoadProblem(file=path.name, message="the file changed since it was indexed (now JSON Lines)")
            return kind, self._parse_whole(path, kind, handle)

    def _entry_items(
        self, path: Path, kind: str, record: int | None, value: Any
    ) -> Iterator[tuple[int | None, ReadItem]]:
        """The items of one parsed entry: a file-level problem as it is, a record mapped now."""
        if record is None:
            yield None, value
        elif kind == "cassette":
            yield from self._interaction(path, record, value)
        else:
            for item in self._record(path, value, record, ""):
                yield record, item

    def _lines(self, path: Path, handle: BinaryIO) -> Iterator[tuple[int | None, ReadItem]]:
        index = 0
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            for item in self._line(path, line, index, number):
                yield index, item
            index += 1

    def _line(self, path: Path, line: bytes, index: int, number: int) -> Iterator[ReadItem]:
        """The items of one non-blank line of a JSON Lines file: record ``index``, line ``number``."""
        if index == 0:
            line = line.lstrip(UTF8_BOM)
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            yield LoadProblem(file=path.name, index=index, field=f"line {number}", message=f"not JSON: {exc}")
            return
        yield from self._record(path, value, index, f"line {number}: ")

    def _index_lines(self, path: Path, handle: BinaryIO) -> Iterator[EpisodeSummary | LoadProblem]:
        index = number = 0
        for data, view, start, stop, base in _windows(handle):
            utf8 = _is_utf8(view[start:stop])  # a window ends at a newline, never inside a character
            end = start
            while end < stop:
                begin = end
                newline = data.find(b"\n", begin, stop)
                end = stop if newline < 0 else newline + 1
                number += 1
                locator = (base + begin, end - begin)
                summary = None
                if data[begin] == _OPEN_BRACE:
                    if utf8 or _is_utf8(view[begin:end]):
                        summary = _fast(view[begin:end], f"{path.stem}#{index}", index, locator)
                elif not data[begin:end].strip():
                    continue  # a blank line
                if summary is not None:
                    yield summary
                else:
                    for item in self._line(path, data[begin:end], index, number):
                        yield EpisodeSummary.of(item, index, locator) if isinstance(item, Trajectory) else item
                index += 1

    def _document(self, path: Path, data: bytes) -> Iterator[_Entry]:
        """A JSON document's records (raw), or the problem that stops it."""
        try:
            value = orjson.loads(strip_bom(data))
        except orjson.JSONDecodeError as exc:
            yield None, LoadProblem(file=path.name, message=f"not JSON (nor JSON Lines): {exc}")
            return
        if isinstance(value, list) and not _is_message_list(value):
            if not value:
                yield None, LoadProblem(file=path.name, message="an empty list: no episodes")
            yield from enumerate(value)
            return
        yield 0, value

    def _cassette(self, path: Path, data: bytes) -> Iterator[_Entry]:
        """A vcrpy cassette's interactions (raw), or the problem that stops it."""
        try:
            cassette = safe_yaml.load(data)
        except ImportError:
            yield None, LoadProblem(file=path.name, message="reading a VCR cassette needs PyYAML (pip install pyyaml)")
            return
        except safe_yaml.YamlLimit as exc:
            yield None, LoadProblem(file=path.name, message=str(exc))
            return
        except Exception as exc:  # any YAML error
            yield None, LoadProblem(file=path.name, message=f"not YAML: {' '.join(str(exc).split())}")
            return
        interactions = _dict(cassette).get("interactions")
        if not isinstance(interactions, list):
            problem = LoadProblem(
                file=path.name, field="interactions", message="a cassette needs a list of interactions"
            )
            yield None, problem
            return
        yield from enumerate(interactions)

    def _interaction(self, path: Path, index: int, interaction: Any) -> Iterator[tuple[int | None, ReadItem]]:
        """One interaction of a vcrpy cassette: a recorded /chat/completions call is an episode (its
        request's messages + the response's message); other calls (telemetry...) are skipped."""
        request = _dict(_dict(interaction).get("request"))
        if "/chat/completions" not in str(request.get("uri", "")):
            return
        try:
            body = orjson.loads(request.get("body") or b"")
        except (orjson.JSONDecodeError, TypeError) as exc:
            yield (
                index,
                LoadProblem(
                    file=path.name,
                    index=index,
                    field=f"interactions[{index}].request.body",
                    message=f"not JSON: {exc}",
                ),
            )
            return
        if not isinstance(body, dict):
            body = {"messages": body}
        record: dict[str, Any] = {"id": f"{path.stem}#{index}", **body}
        response, note = _response_message(_dict(_dict(interaction).get("response")))
        if response is not None and "finish_reason" in response:
            response = dict(response)
            record["finish_reason"] = response.pop("finish_reason")
        if note is not None:
            message = note if response is not None else f"response not decoded ({note}); the request's messages only"
            problem = LoadProblem(
                file=path.name,
                index=index,
                field=f"interactions[{index}].response.body",
                message=message,
                severity="warning",
            )
            yield index, problem
        for item in self._record(path, record, index, "", response if response is not None else {}):
            yield index, item

    def _record(
        self, path: Path, value: Any, index: int, where: str, response: dict[str, Any] | None = None
    ) -> Iterator[ReadItem]:
        session = _session(value)
        try:
            trajectory, warnings = _trajectory(value, f"{path.stem}#{index}", response)
        except _Bad as bad:
            yield LoadProblem(
                file=path.name, index=index, session_id=session, field=bad.field, message=where + bad.message
            )
            return
        except Exception as exc:  # a reader never raises on bad input
            yield LoadProblem(
                file=path.name, index=index, session_id=session, message=f"{where}{type(exc).__name__}: {exc}"
            )
            return
        for field, message in warnings:
            yield LoadProblem(
                file=path.name,
                index=index,
                session_id=session,
                field=field,
                message=where + message,
                severity="warning",
            )
        yield trajectory


READER = OpenAIChatReader()
