"""inspect_ai evaluation logs (``.eval`` zip and legacy ``.json``) as trajectories.

Read without the ``inspect_ai`` package (the field names come from its ``log/_log.py``,
``model/_chat_message.py``, ``event/*.py`` and ``log/_recorders/eval.py``):

- ``.eval``: a zip of ``header.json`` (or ``_journal/start.json`` while a run is in progress),
  ``samples/<id>_epoch_<n>.json`` (one sample each), ``summaries.json``, ``reductions.json``.
  Samples are read one zip member at a time; a zip with no central directory (a truncated or
  still-being-written log) is read from its local file headers, member by member. Members are
  deflate or, since inspect_ai 0.3.206, zstd (method 93, which Python < 3.14's ``zipfile`` cannot
  read: inflated here with ``backports.zstd``, within the same caps).
- ``.json``: one EvalLog object (``version``, ``status``, ``eval``, ``plan``, ``results``,
  ``samples[]``), parsed whole with orjson (the format has no record boundaries to stream on).

Each sample (and epoch) is one trajectory. A sample whose assistant turns make no tool call (QA,
multiple choice) is one decision: its final reply, whose text is the step's ``answer`` (typed
``choice`` when the sample has choices, ``number`` when a scorer is declared numeric).

Steps come from the sample's ``model`` events when it
has some (prompt = the event's ``input``, or its ``input_refs`` into the sample's message pool;
tools = the event's ``tools``), else from ``sample.messages`` (prompt = the messages before each
assistant message). Model events inside a scorer span or step are not agent steps (they are
kept in ``extra["scorer_model_events"]`` as a count). ``attachment://<hash>`` (and the older
``tc://<hash>``) strings are resolved from ``sample.attachments`` (``transcript.content`` in old
logs). A model event's ``timestamp``, ``working_time`` (the duration), ``model``, output ``usage``
(``ModelUsage``) and error are its step's typed fields; the sample's ``model_usage``, when it names
one model, is the episode's ``model`` and ``usage``.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import mmap
import re
import struct
import threading
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

import orjson

from replay_tui.episodes.jsonscan import NotAnArray, array_batches
from replay_tui.episodes.model import (
    ChatMessage,
    MessageView,
    Outcome,
    OutcomeCheck,
    TokenUsage,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    non_negative,
    parse_timestamp,
)
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import Detection, EpisodeSummary, ReadItem, strip_bom
from replay_tui.formats.inflate import MEMBER_LIMIT, ZIP_ZSTANDARD, Budget, InflateLimit, ZstdError, deflate_end

_SAMPLE_MEMBER = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json$")
_ATTACHMENT = "attachment://"
_OLD_ATTACHMENT = "tc://"
_PREFIXES = (_ATTACHMENT, _OLD_ATTACHMENT)
_SCORER_TYPES = frozenset({"scorer", "scorers"})
_PARSE_ERROR = re.compile(r"^Error parsing the following tool call arguments:\n\n(?P<raw>.*)\n\nError details: ", re.S)
_LETTER_SCORES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}  # inspect's CORRECT, INCORRECT, PARTIAL, NOANSWER
_WORD_SCORES = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
PASS_THRESHOLD = 1.0
"""A score value passes when it reads (:func:`value_to_float`) as at least this: inspect's own line
between correct and not (``at_least`` and ``pass_at`` reducers default their ``value`` to 1.0), so
partial credit (P, 0.5) is not a success."""


class _Bad(Exception):
    """A sample that cannot be mapped: where (a field path inside the sample) and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


# ---------------------------------------------------------------------------------------------
# Small helpers over raw JSON values


def _resolve_in_place(sample: dict[str, Any], attachments: dict[str, Any]) -> None:
    """Every ``attachment://<hash>`` (or ``tc://<hash>``) string in ``sample`` replaced by its content,
    in place, in one pass over the sample (its attachments themselves left as they are): linear in
    the sample's size, where resolving each model event's input as it is used walked the same
    messages again for every event. Iterative: a deep sample never meets the recursion limit."""
    if not attachments:
        return

    def found(text: str) -> str | None:
        key = text[len(_ATTACHMENT) :] if text.startswith(_ATTACHMENT) else text[len(_OLD_ATTACHMENT) :]
        content = attachments.get(key)
        return content if isinstance(content, str) else None

    kept: dict[str, Any] = {key: sample.pop(key) for key in ("attachments", "transcript") if key in sample}
    transcript: Any = kept.get("transcript")
    stored = transcript.pop("content", None) if isinstance(transcript, dict) else None
    stack: list[Any] = [sample, transcript]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if isinstance(item, str):
                    if item.startswith(_PREFIXES) and (content := found(item)) is not None:
                        node[key] = content  # a value replaced: the dict does not change size
                elif isinstance(item, (dict, list)):
                    stack.append(item)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    if item.startswith(_PREFIXES) and (content := found(item)) is not None:
                        node[index] = content
                elif isinstance(item, (dict, list)):
                    stack.append(item)
    sample.update(kept)
    if stored is not None:
        transcript["content"] = stored


def _content(content: Any, field: str) -> tuple[str, str, list[str]]:
    """``(text, reasoning, images)`` of a message's content (a string or a list of content parts)."""
    if content is None:
        return "", "", []
    if isinstance(content, str):
        return content, "", []
    if not isinstance(content, list):
        raise _Bad(field, f"content must be a string or a list of parts, not {type(content).__name__}")
    texts: list[str] = []
    thoughts: list[str] = []
    images: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "reasoning":
            if part.get("redacted"):
                summary = part.get("summary")
                thoughts.append(summary if isinstance(summary, str) and summary else "[redacted reasoning]")
            elif isinstance(part.get("reasoning"), str):
                thoughts.append(part["reasoning"])
        elif kind == "image" and isinstance(part.get("image"), str):
            images.append(part["image"])
        elif kind == "tool_use" and isinstance(part.get("name"), str):
            texts.append(f"[{part['name']}({part.get('arguments', '')})]")
    return "\n".join(texts), "\n\n".join(thoughts), images


def _tool_call(raw: Any, field: str) -> ToolCall:
    if not isinstance(raw, dict):
        raise _Bad(field, "a tool call must be an object")
    name = raw.get("function")
    if not isinstance(name, str):
        raise _Bad(f"{field}.function", "missing tool name")
    arguments = raw.get("arguments")
    raw_arguments: str | None = None
    if isinstance(arguments, str):  # some providers' raw text
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            raw_arguments, arguments = arguments, {}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raw_arguments, arguments = orjson.dumps(arguments).decode(), {}
    parse_error = raw.get("parse_error")
    if isinstance(parse_error, str) and parse_error:
        match = _PARSE_ERROR.match(parse_error)
        raw_arguments = match.group("raw") if match else parse_error
    call_id = raw.get("id")
    return ToolCall(
        name=name,
        arguments=arguments,
        id=call_id if isinstance(call_id, str) else None,
        raw_arguments=raw_arguments,
    )


def _error_text(error: Any) -> str | None:
    if isinstance(error, dict):
        message = error.get("message")
        return str(message) if message is not None else str(error.get("type", "error"))
    if isinstance(error, str):
        return error
    return None


class _Message:
    """A raw chat message mapped once: its ChatMessage and the images it carried."""

    __slots__ = ("chat", "images")

    def __init__(self, chat: ChatMessage, images: list[str]) -> None:
        self.chat = chat
        self.images = images


def _message(raw: Any, field: str) -> _Message:
    if not isinstance(raw, dict):
        raise _Bad(field, "a message must be an object")
    role = raw.get("role")
    if not isinstance(role, str):
        raise _Bad(f"{field}.role", "missing role")
    text, reasoning, images = _content(raw.get("content"), f"{field}.content")
    if not reasoning and isinstance(raw.get("reasoning"), str):  # inspect < 0.3.60 kept it as a field
        reasoning = raw["reasoning"]
    calls: list[ToolCall] = []
    raw_calls = raw.get("tool_calls")
    if raw_calls is not None:
        if not isinstance(raw_calls, list):
            raise _Bad(f"{field}.tool_calls", "must be a list")
        calls = [_tool_call(call, f"{field}.tool_calls[{i}]") for i, call in enumerate(raw_calls)]
    tool_call_id = raw.get("tool_call_id")
    name = raw.get("function")
    if role == "tool":
        error = _error_text(raw.get("error"))
        if error is not None:  # what inspect sends the model for a failed call
            text = f"Error: {error}"
    return _Message(
        ChatMessage(
            role=role,
            content=text,
            tool_calls=calls,
            tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
            name=name if isinstance(name, str) else None,
            reasoning=reasoning or None,
        ),
        images,
    )


def _screenshot(images: list[str]) -> bytes | None:
    """The last ``data:image/...;base64,`` image of a message, decoded."""
    for image in reversed(images):
        if image.startswith("data:image/") and ";base64," in image:
            try:
                return base64.b64decode(image.split(";base64,", 1)[1], validate=False)
            except (binascii.Error, ValueError):
                return None
    return None


def _tool_schema(raw: Any) -> dict[str, Any] | None:
    """An inspect ToolInfo (``name``, ``description``, ``parameters``) in the OpenAI shape."""
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        return None
    function: dict[str, Any] = {"name": raw["name"]}
    if isinstance(raw.get("description"), str):
        function["description"] = raw["description"]
    if isinstance(raw.get("parameters"), dict):
        function["parameters"] = raw["parameters"]
    return {"type": "function", "function": function}


def value_to_float(value: Any) -> float | None:
    """A score value as inspect's own metrics read it (``scorer/_metric.py`` ``value_to_float``):
    numbers and booleans as floats, the letter grades C/P/I/N as 1/0.5/0/0, ``yes``/``true`` and
    ``no``/``false`` (any case) as 1/0, a string holding a finite number as that number. None where
    inspect gives up (a list, a dict, other text) or the value is not finite (NaN marks "unscored")."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        return number if math.isfinite(number) else None
    if not isinstance(value, str):
        return None
    if value in _LETTER_SCORES:
        return _LETTER_SCORES[value]
    lowered = value.lower()
    if lowered in _WORD_SCORES:
        return _WORD_SCORES[lowered]
    try:
        number = float(lowered)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _passed(value: Any) -> bool | None:
    """Whether a score value counts as correct: its float (:func:`value_to_float`) at least
    :data:`PASS_THRESHOLD`; None when inspect cannot read it as a number."""
    number = value_to_float(value)
    return None if number is None else number >= PASS_THRESHOLD


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def target_text(target: Any) -> str | None:
    """A sample's target as inspect's ``Target.text`` reads it: a string as is, a list of strings
    joined (``["A", "C"]`` is ``"AC"``); None when there is none."""
    if isinstance(target, str):
        return target
    if isinstance(target, list) and target and all(isinstance(item, str) for item in target):
        return "".join(target)
    return None


def _headline(scores: dict[str, Any], log: dict[str, Any]) -> str | None:
    """The scorer whose score is the sample's: the one ``results.headline`` declares, else the first."""
    results = log.get("results")
    headline = results.get("headline") if isinstance(results, dict) else None
    if isinstance(headline, dict):
        for key in ("score", "scorer"):
            if isinstance(headline.get(key), str) and headline[key] in scores:
                return str(headline[key])
    return next(iter(scores), None)


def _scores(sample: dict[str, Any]) -> dict[Any, Any]:
    """A sample's (or summary's) scores by scorer name."""
    scores = sample.get("scores")
    if not isinstance(scores, dict):
        scores = {} if scores is None else {"score": scores}
    if not scores and isinstance(sample.get("score"), dict):  # inspect < 0.3.20: one `score`
        scores = {"score": sample["score"]}
    return scores


def _verdict(scores: dict[Any, Any], log: dict[str, Any]) -> tuple[float | None, bool | None]:
    """The reward and success of a sample's scores: the headline scorer's value first, then the
    others' in the log's order, the first that reads as a number."""
    headline = _headline(scores, log)
    values = [
        score.get("value") if isinstance(score, dict) else score
        for name, score in sorted(scores.items(), key=lambda item: str(item[0]) != headline)
    ]
    reward = next((n for value in values if (n := value_to_float(value)) is not None), None)
    success = next((passed for value in values if (passed := _passed(value)) is not None), None)
    return reward, success


_OUTCOME_KEYS = ("scores", "score", "output", "error", "limit", "target")
"""What :func:`_outcome` reads of a sample or summary."""


class _DeferredOutcome:
    """A summary's whole outcome, built when first asked (a summary whose outcome cannot be built
    keeps the reward and success read at index time: the loaded episode says the rest)."""

    __slots__ = ("built", "log", "reward", "success", "summary")

    def __init__(self, summary: dict[str, Any], log: dict[str, Any], reward: float | None, success: bool | None):
        self.summary = {key: summary[key] for key in _OUTCOME_KEYS if key in summary}  # not its input, metadata...
        self.log, self.reward, self.success = log, reward, success
        self.built: Outcome | None = None

    def __call__(self) -> Outcome:
        if self.built is None:
            try:
                self.built = _outcome(self.summary, self.log)
            except (_Bad, ValueError, TypeError, KeyError, AttributeError):
                self.built = Outcome(reward=self.reward, success=self.success)
            self.summary = {}
        return self.built


def _outcome(sample: dict[str, Any], log: dict[str, Any]) -> Outcome:
    scores = _scores(sample)
    checks: list[OutcomeCheck] = []
    answers: dict[str, str] = {}
    explanations: dict[str, str] = {}
    for name, score in scores.items():
        raw = score if isinstance(score, dict) else {"value": score}
        answer, explanation = _text_or_none(raw.get("answer")), _text_or_none(raw.get("explanation"))
        if answer is not None:
            answers[name] = answer
        if explanation is not None:
            explanations[name] = explanation
        detail = explanation if explanation is not None else (f"answer: {answer}" if answer is not None else "")
        checks.append(
            OutcomeCheck(name=str(name), passed=_passed(raw.get("value")), value=raw.get("value"), detail=detail)
        )
    headline = _headline(scores, log)
    reward, success = _verdict(scores, log)
    names = sorted((c.name for c in checks), key=lambda name: name != headline)  # the headline first
    output = sample.get("output")
    completion = _text_or_none(output.get("completion")) if isinstance(output, dict) else None
    error = _error_text(sample.get("error")) if sample.get("error") else None
    status: str | None = None
    if error is not None:
        status = "error"
    elif isinstance(sample.get("limit"), dict):
        status = f"{sample['limit'].get('type', 'unknown')}_limit"
    elif isinstance(sample.get("limit"), str) and sample["limit"]:  # a summary names the limit's type
        status = f"{sample['limit']}_limit"
    return Outcome(
        reward=reward,
        success=success,
        status=status,
        scores=scores,
        error=error,
        target=target_text(sample.get("target")),
        answer=completion or next((answers[n] for n in names if n in answers), None),
        explanation=next((explanations[n] for n in names if n in explanations), None),
        checks=checks,
    )


def _input_text(raw: Any) -> str | None:
    """A sample's task as text: its ``input`` string, or the first user message of its input."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        for i, item in enumerate(raw):
            if isinstance(item, dict) and item.get("role") == "user":
                return _message(item, f"input[{i}]").chat.content
    return None


# ---------------------------------------------------------------------------------------------
# One sample → one trajectory


class _Sample:
    """Maps one raw sample (a dict) onto a Trajectory."""

    def __init__(self, sample: dict[str, Any], log: dict[str, Any], trajectory_id: str) -> None:
        self.sample = sample
        self.log = log
        self.id = trajectory_id
        attachments: dict[str, Any] = {}
        transcript = sample.get("transcript")
        # inspect < 0.3.43: events and attachments in `transcript`
        if isinstance(transcript, dict) and isinstance(transcript.get("content"), dict):
            attachments.update(transcript["content"])
        if isinstance(sample.get("attachments"), dict):
            attachments.update(sample["attachments"])
        _resolve_in_place(sample, attachments)
        events = sample.get("events")
        if not events and isinstance(transcript, dict):
            events = transcript.get("events")
        if events is not None and not isinstance(events, list):
            raise _Bad("events", "must be a list")
        self.events: list[Any] = events or []
        pool: Any = None
        if isinstance(sample.get("events_data"), dict):
            pool = sample["events_data"].get("messages")
        if pool is None:
            pool = sample.get("message_pool")
        self.pool: list[Any] = pool if isinstance(pool, list) else []
        self._pool_messages: list[_Message | None] = []
        """The pool's messages converted, by position (None until an event refers to it)."""
        self._pool_chats: list[ChatMessage | None] = []
        self._unconverted: list[int] = []
        """Union-find over pool positions: the next position not converted yet, at or after each."""
        self._id_cache: dict[str, tuple[Any, _Message]] = {}

    # -- messages -------------------------------------------------------------------------

    def _convert(self, raw: Any, field: str) -> _Message:
        """A raw message mapped once per id (the same message recurs in every later prompt); a message
        whose id was reused for other content (mutated in place) is mapped again."""
        message_id = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(message_id, str):
            cached = self._id_cache.get(message_id)
            if cached is not None and (cached[0] is raw or cached[0] == raw):
                return cached[1]
        converted = _message(raw, field)
        if isinstance(message_id, str):
            self._id_cache[message_id] = (raw, converted)
        return converted

    def _pooled(self, start: int, end: int, field: str) -> None:
        """Pool positions ``[start, end)`` converted, each once however many events refer to it."""
        if start < 0 or end > len(self.pool):
            index = start if start < 0 else max(start, len(self.pool))
            raise _Bad(field, f"refers to message {index} of a pool of {len(self.pool)}")
        if not self._unconverted:
            self._pool_messages = [None] * len(self.pool)
            self._pool_chats = [None] * len(self.pool)
            self._unconverted = list(range(len(self.pool) + 1))
        skip = self._unconverted
        position = self._next_unconverted(start)
        while position < end:
            message = self._convert(self.pool[position], f"message_pool[{position}]")
            self._pool_messages[position], self._pool_chats[position] = message, message.chat
            skip[position] = position + 1
            position = self._next_unconverted(position + 1)

    def _next_unconverted(self, position: int) -> int:
        skip = self._unconverted
        root = position
        while skip[root] != root:
            root = skip[root]
        while skip[position] != root:
            skip[position], position = root, skip[position]
        return root

    def _event_input(self, event: dict[str, Any], field: str) -> Sequence[_Message]:
        """The event's prompt: its ``input``, or its ``input_refs`` as a view of the converted pool
        (every event refers to the pool again: a list of its own per event made a long sample
        quadratic in memory)."""
        refs = event.get("input_refs")
        raw_input = event.get("input")
        if refs is not None and not raw_input:
            if not isinstance(refs, list):
                raise _Bad(f"{field}.input_refs", "must be a list of [start, end) ranges")
            for i, ref in enumerate(refs):
                if not (isinstance(ref, list) and len(ref) == 2 and all(type(v) is int for v in ref)):
                    raise _Bad(f"{field}.input_refs[{i}]", "must be a [start, end) pair of integers")
                if ref[0] < ref[1]:
                    self._pooled(ref[0], ref[1], f"{field}.input_refs[{i}]")
            # only converted positions are in the ranges
            return MessageView(cast("list[_Message]", self._pool_messages), [(ref[0], ref[1]) for ref in refs])
        if raw_input is None:
            return []
        if not isinstance(raw_input, list):
            raise _Bad(f"{field}.input", "must be a list of messages")
        return [self._convert(raw, f"{field}.input[{i}]") for i, raw in enumerate(raw_input)]

    # -- the trajectory -----------------------------------------------------------------------

    def trajectory(self) -> Trajectory:
        sample = self.sample
        raw_messages = sample.get("messages")
        if raw_messages is None:
            raw_messages = []
        if not isinstance(raw_messages, list):
            raise _Bad("messages", "must be a list")
        messages = [self._convert(raw, f"messages[{i}]") for i, raw in enumerate(raw_messages)]
        results: dict[str, ChatMessage] = {
            m.chat.tool_call_id: m.chat for m in messages if m.chat.role == "tool" and m.chat.tool_call_id
        }
        model_events, scorer_events = self._model_events()
        if model_events:
            steps = self._steps_from_events(model_events, results)
        else:
            steps = self._steps_from_messages(messages, results)
        if steps:
            steps[-1].done = True
            if not any(step.action is not None for step in steps) and steps[-1].content.strip():
                steps[-1].answer = steps[-1].content  # no tool call anywhere: the reply is the decision
                steps[-1].answer_type = self._answer_type()
        extra: dict[str, Any] = {
            "sample_id": sample.get("id"),
            "epoch": sample.get("epoch"),
            "target": sample.get("target"),
            "steps_from": "model events" if model_events else "messages",
        }
        for key in ("uuid", "choices", "error", "limit", "model_usage", "total_time", "working_time"):
            if sample.get(key) is not None:
                extra[key] = sample[key]
        if scorer_events:
            extra["scorer_model_events"] = scorer_events
        if not steps and messages:
            extra["messages"] = [m.chat.model_dump(exclude_defaults=True) for m in messages]
        extra["log"] = {key: self.log[key] for key in ("version", "status", "file") if key in self.log}
        model, usage = _sample_usage(sample.get("model_usage"))
        return Trajectory(
            id=self.id,
            format=READER.name,
            task=self._task(messages),
            metadata=self._metadata(),
            steps=steps,
            outcome=_outcome(sample, self.log),
            model=model,
            usage=usage,
            extra=extra,
        )

    def _answer_type(self) -> str | None:
        """The type the task declares for a plain answer: ``choice`` when the sample has choices
        (multiple choice), ``number`` when a scorer was declared numeric (``match(numeric=True)``)."""
        choices = self.sample.get("choices")
        if isinstance(choices, list) and choices:
            return "choice"
        spec = self.log.get("eval")
        scorers = spec.get("scorers") if isinstance(spec, dict) else None
        for scorer in scorers if isinstance(scorers, list) else []:
            options = scorer.get("options") if isinstance(scorer, dict) else None
            if isinstance(options, dict) and options.get("numeric") is True:
                return "number"
        return None

    def _task(self, messages: list[_Message]) -> str:
        task = _input_text(self.sample.get("input"))
        if task is not None:
            return task
        for message in messages:
            if message.chat.role == "user":
                return message.chat.content
        return ""

    def _metadata(self) -> dict[str, Any]:
        raw = self.sample.get("metadata")
        metadata: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        spec = self.log.get("eval")
        if isinstance(spec, dict):
            for key in ("task", "model"):
                if spec.get(key) is not None:
                    metadata.setdefault(key, spec[key])
                    if metadata[key] != spec[key]:
                        metadata[f"eval_{key}"] = spec[key]
        return metadata

    def _model_events(self) -> tuple[list[tuple[int, dict[str, Any]]], int]:
        """The agent's model events (with their index), and how many a scorer made."""
        spans: dict[str, tuple[Any, Any]] = {}
        open_steps: list[tuple[Any, Any]] = []  # inspect < 0.3.70: `step` begin/end events
        found: list[tuple[int, dict[str, Any]]] = []
        scorer = 0
        for index, event in enumerate(self.events):
            if not isinstance(event, dict):
                continue
            kind = event.get("event")
            if kind == "span_begin" and isinstance(event.get("id"), str):
                spans[event["id"]] = (event.get("type"), event.get("parent_id"))
            elif kind == "step":
                if event.get("action") == "begin":
                    open_steps.append((event.get("name"), event.get("type")))
                elif event.get("action") == "end" and open_steps:
                    for k in range(len(open_steps) - 1, -1, -1):
                        if open_steps[k][0] == event.get("name"):
                            del open_steps[k:]
                            break
            elif kind == "model":
                in_scorer = any(kind in _SCORER_TYPES for _, kind in open_steps)
                span = event.get("span_id")
                seen: set[str] = set()
                while not in_scorer and isinstance(span, str) and span in spans and span not in seen:
                    seen.add(span)
                    span_type, parent = spans[span]
                    in_scorer = span_type in _SCORER_TYPES
                    span = parent
                if in_scorer:
                    scorer += 1
                else:
                    found.append((index, event))
        return found, scorer

    def _tool_events(self) -> dict[str, dict[str, Any]]:
        return {
            event["id"]: event
            for event in self.events
            if isinstance(event, dict) and event.get("event") == "tool" and isinstance(event.get("id"), str)
        }

    def _steps_from_events(
        self, model_events: list[tuple[int, dict[str, Any]]], results: dict[str, ChatMessage]
    ) -> list[TrajectoryStep]:
        tool_events: dict[str, dict[str, Any]] | None = None
        steps: list[TrajectoryStep] = []
        last = len(model_events) - 1
        for position, (index, event) in enumerate(model_events):
            field = f"events[{index}]"
            output = event.get("output")
            choices = output.get("choices") if isinstance(output, dict) else None
            raw_reply = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
            reply = self._convert(raw_reply, f"{field}.output.choices[0].message") if raw_reply is not None else None
            if reply is not None and not reply.chat.tool_calls and position != last:
                continue  # only the final answer is a step without a tool call
            prompt = self._event_input(event, field)
            tools = [schema for schema in map(_tool_schema, event.get("tools") or []) if schema]
            extra: dict[str, Any] = {"event": index}
            for key in ("model", "timestamp", "tool_choice", "error"):
                if event.get(key) is not None:
                    extra[key] = event[key]
            if isinstance(output, dict):
                for key in ("usage", "error"):
                    if output.get(key) is not None:
                        extra[f"output_{key}"] = output[key]
                if choices and isinstance(choices[0], dict) and choices[0].get("stop_reason"):
                    extra["stop_reason"] = choices[0]["stop_reason"]
            step = self._step(len(steps), prompt, reply, results, extra)
            step.tools = tools
            _telemetry(step, event)
            if step.action is not None and step.tool_result is None and step.action.id:
                if tool_events is None:
                    tool_events = self._tool_events()
                tool_event = tool_events.get(step.action.id)
                if tool_event is not None:
                    self._tool_event_result(step, tool_event)
            steps.append(step)
        return steps

    def _tool_event_result(self, step: TrajectoryStep, event: dict[str, Any]) -> None:
        error = _error_text(event.get("error"))
        if error is not None:
            step.tool_result = f"Error: {error}"
            step.extra["tool_error"] = event.get("error")
            return
        result = event.get("result")
        if isinstance(result, str):
            step.tool_result = result
        elif result is not None:
            text, _, _ = _content(result, "result") if isinstance(result, list) else ("", "", [])
            step.tool_result = text or orjson.dumps(result).decode()

    def _chats(self, prompt: Sequence[_Message]) -> Sequence[ChatMessage]:
        """The prompt's chat messages: a view of the pool's when the prompt is one of it."""
        if isinstance(prompt, MessageView) and prompt.pool is self._pool_messages:
            return MessageView(cast("list[ChatMessage]", self._pool_chats), prompt.ranges)
        return [message.chat for message in prompt]

    def _steps_from_messages(self, messages: list[_Message], results: dict[str, ChatMessage]) -> list[TrajectoryStep]:
        steps: list[TrajectoryStep] = []
        assistants = [i for i, m in enumerate(messages) if m.chat.role == "assistant"]
        chats = [message.chat for message in messages]
        for i in assistants:
            reply = messages[i]
            if not reply.chat.tool_calls and i != assistants[-1]:
                continue
            prompt = MessageView.prefix(messages, i)
            step = self._step(len(steps), prompt, reply, results, {"message": i}, MessageView.prefix(chats, i))
            steps.append(step)
        return steps

    def _step(
        self,
        index: int,
        prompt: Sequence[_Message],
        reply: _Message | None,
        results: dict[str, ChatMessage],
        extra: dict[str, Any],
        chats: Sequence[ChatMessage] | None = None,
    ) -> TrajectoryStep:
        observation = ""
        screenshot: bytes | None = None
        for message in reversed(prompt):
            if message.chat.role in ("user", "tool"):
                observation = message.chat.content
                screenshot = _screenshot(message.images)
                break
        action: ToolCall | None = None
        tool_result: str | None = None
        if reply is not None and reply.chat.tool_calls:
            action = reply.chat.tool_calls[0]
            if len(reply.chat.tool_calls) > 1:
                extra["tool_calls"] = [call.model_dump(exclude_none=True) for call in reply.chat.tool_calls]
            if action.id and action.id in results:
                tool_result = results[action.id].content
        return TrajectoryStep(
            index=index,
            observation=observation,
            screenshot=screenshot,
            messages=self._chats(prompt) if chats is None else chats,
            thinking=(reply.chat.reasoning or "") if reply else "",
            content=reply.chat.content if reply else "",
            action=action,
            tool_result=tool_result,
            extra=extra,
            kind="decision" if action is not None else "message",
        )


def _usage(usage: Any) -> TokenUsage | None:
    """inspect_ai's ``ModelUsage`` (input, output, total, cache write/read, reasoning, cost)."""
    return TokenUsage.read(
        usage,
        input="input_tokens",
        output="output_tokens",
        cache_read="input_tokens_cache_read",
        cache_write="input_tokens_cache_write",
        reasoning="reasoning_tokens",
        total="total_tokens",
        cost="total_cost",
    )


def _telemetry(step: TrajectoryStep, event: dict[str, Any]) -> None:
    """A model event's ``timestamp``, ``working_time``, ``model``, output ``usage`` and error."""
    output = event["output"] if isinstance(event.get("output"), dict) else {}
    step.timestamp = parse_timestamp(event.get("timestamp"))
    step.duration = non_negative(event.get("working_time"))
    model = event.get("model") or output.get("model")
    step.model = model if isinstance(model, str) and model else None
    step.usage = _usage(output.get("usage"))
    step.error = _error_text(event.get("error")) or _error_text(output.get("error"))


def _sample_usage(usage: Any) -> tuple[str | None, TokenUsage | None]:
    """The sample's ``model_usage`` when it names one model: that model and its usage (several
    models' usages are not added up here)."""
    if not isinstance(usage, dict) or len(usage) != 1:
        return None, None
    ((model, counts),) = usage.items()
    return str(model), _usage(counts)


# ---------------------------------------------------------------------------------------------
# Files


def _natural(member_id: str) -> tuple[int, int | str]:
    return (0, int(member_id)) if member_id.isdigit() else (1, member_id)


def _trajectory_id(sample_id: Any, epoch: Any, several_epochs: bool) -> str:
    text = str(sample_id)
    return f"{text}#{epoch}" if several_epochs and epoch is not None else text


def _map(file: str, index: int, sample: Any, log: dict[str, Any], several_epochs: bool, where: str) -> ReadItem:
    """One raw sample as a Trajectory, or the LoadProblem saying why not (never raises)."""
    if not isinstance(sample, dict):
        return LoadProblem(file=file, index=index, field=where.rstrip(":."), message="a sample must be a JSON object")
    sample_id = sample.get("id")
    if not isinstance(sample_id, (str, int)) or isinstance(sample_id, bool):
        return LoadProblem(file=file, index=index, field=f"{where}id", message="missing sample id")
    try:
        trajectory_id = _trajectory_id(sample_id, sample.get("epoch"), several_epochs)
        return _Sample(sample, log, trajectory_id).trajectory()
    except _Bad as bad:
        return LoadProblem(
            file=file, index=index, session_id=sample_id, field=f"{where}{bad.field}", message=bad.message
        )
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        message = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        return LoadProblem(
            file=file, index=index, session_id=sample_id, field=where.rstrip(":.") or None, message=message
        )


def _several_epochs(log: dict[str, Any], pairs: list[tuple[Any, Any]]) -> bool:
    spec = log.get("eval")
    config = spec.get("config") if isinstance(spec, dict) else None
    epochs = config.get("epochs") if isinstance(config, dict) else None
    if isinstance(epochs, int) and not isinstance(epochs, bool) and epochs > 1:
        return True
    seen: set[str] = set()
    for sample_id, _ in pairs:
        if str(sample_id) in seen:
            return True
        seen.add(str(sample_id))
    return any(epoch not in (None, 1) for _, epoch in pairs)


_JSON_CONSTANTS = re.compile(rb"NaN|Infinity")


def _loads(data: bytes | bytearray) -> Any:
    """JSON text as inspect_ai writes it: orjson, and where it refuses the constants ``NaN`` and
    ``Infinity`` (inspect writes an unscored score's value, ``Score.unscored``, as ``NaN``), the
    standard library's parser, which reads them as floats. Raises orjson's error otherwise."""
    data = data[3:] if data[:3] == b"\xef\xbb\xbf" else data
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if not _JSON_CONSTANTS.search(data):
            raise
        try:
            return json.loads(bytes(data))
        except (ValueError, RecursionError):
            raise exc from None


_ZIP_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
    NotImplementedError,  # "zip file version 23.5": a damaged header read as an unknown version
    RuntimeError,  # encrypted members
    ValueError,
    ZstdError,
)
"""What reading a damaged zip can raise (zipfile raises more than BadZipFile on broken headers)."""
_HEADER_ERRORS: tuple[type[Exception], ...] = (*_ZIP_ERRORS, orjson.JSONDecodeError)


class _Entry(NamedTuple):
    """A member as the central directory lists it (the fields :class:`zipfile.ZipInfo` names so)."""

    header_offset: int
    compress_size: int
    file_size: int
    compress_type: int
    flag_bits: int
    CRC: int


_END = struct.Struct("<4s4H2LH")
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")
_CENTRAL = struct.Struct("<4s6H3L5H2L")
_FULL32 = 0xFFFFFFFF


def _central_directory(data: mmap.mmap) -> tuple[list[str], dict[str, _Entry]] | None:
    """The members' names (in order, as ``ZipFile.namelist``) and entries, read straight from the
    central directory: zipfile builds a ZipInfo per member (0.6-0.9 s of CPU for a 100,000-sample
    log, most of its first rows' time then); this reads the few fields a member's read needs (0.3 s). None for what it
    does not read (damaged, split, data before the zip): :class:`zipfile.ZipFile` takes those."""
    size = len(data)
    at = data.rfind(b"PK\x05\x06", max(0, size - _END.size - 0xFFFF))
    if at < 0 or size - at < _END.size:
        return None
    _, disk, cd_disk, _, total, cd_size, cd_offset, comment = _END.unpack_from(data, at)
    if at + _END.size + comment != size or disk or cd_disk:
        return None
    end = at
    if _FULL32 in (cd_size, cd_offset) or total == 0xFFFF:
        if at < _END64_LOCATOR.size:
            return None
        signature, _, end64, _ = _END64_LOCATOR.unpack_from(data, at - _END64_LOCATOR.size)
        if signature != b"PK\x06\x07" or end64 + _END64.size > size:
            return None
        signature, _, _, _, _, _, _, total, cd_size, cd_offset = _END64.unpack_from(data, end64)
        if signature != b"PK\x06\x06":
            return None
        end = end64
    if cd_offset + cd_size != end:  # data before the zip (or a damaged directory)
        return None
    names: list[str] = []
    entries: dict[str, _Entry] = {}
    position = cd_offset
    unpack = _CENTRAL.unpack_from
    for _ in range(total):
        if position + _CENTRAL.size > end:
            return None
        (signature, _, _, flags, method, _, _, crc, csize, usize, name_len, extra_len, comment_len, _, _, _, offset) = (
            unpack(data, position)
        )
        if signature != b"PK\x01\x02":
            return None
        start = position + _CENTRAL.size
        try:
            name = data[start : start + name_len].decode("utf-8" if flags & 0x800 else "cp437").split("\0", 1)[0]
        except UnicodeDecodeError:
            return None
        if _FULL32 in (usize, csize, offset):
            found = _zip64_sizes(data[start + name_len : start + name_len + extra_len], usize, csize, offset)
            if found is None:
                return None
            usize, csize, offset = found
        names.append(name)
        entries[name] = _Entry(offset, csize, usize, method, flags, crc)
        position = start + name_len + extra_len + comment_len
    return (names, entries) if position == end else None


def _zip64_sizes(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int] | None:
    """The sizes and offset a zip64 extra field gives for those the entry holds as 0xFFFFFFFF."""
    position = 0
    while position + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, position)
        if tag == 1:
            values = list(struct.unpack_from(f"<{length // 8}Q", extra, position + 4))
            found = []
            for value in (usize, csize, offset):
                if value == _FULL32:
                    if not values:
                        return None
                    value = values.pop(0)
                found.append(value)
            return found[0], found[1], found[2]
        position += 4 + length
    return None


class _Members:
    """A zip's members by name: through its central directory, or (a truncated zip) its local headers.

    Every member is inflated within one :class:`~replay_tui.formats.inflate.Budget` for the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip: zipfile.ZipFile | None = None
        self.central: dict[str, _Entry] | None = None
        """The members, from :func:`_central_directory` (else zipfile's, or the local headers')."""
        self.local: dict[str, tuple[int, int, int, int, int]] = {}  # name → (data offset, csize, method, flags, usize)
        self.refused: dict[str, str] = {}
        """Members whose end could not be found within the caps (local headers only): why."""
        self.truncated: str | None = None
        self._map: mmap.mmap | None = None
        self.budget = Budget(path.stat().st_size)
        if path.stat().st_size:
            found = _central_directory(self._mapped())
            if found is not None:
                self.names, self.central = found
                return
        try:
            self.zip = zipfile.ZipFile(path)
            self.names = self.zip.namelist()
        except _ZIP_ERRORS as exc:
            if isinstance(exc, OSError) and not isinstance(exc, zipfile.BadZipFile) and exc.errno is not None:
                raise  # the file cannot be opened at all: the caller names it
            self.zip = None
            self.truncated = str(exc) or type(exc).__name__
            self.names = self._scan()

    def close(self) -> None:
        if self.zip is not None:
            self.zip.close()
        if self._map is not None:
            self._map.close()

    def _scan(self) -> list[str]:
        if self.path.stat().st_size == 0:
            return []
        data = self._mapped()
        names: list[str] = []
        offset = 0
        while offset + 30 <= len(data) and data[offset : offset + 4] == b"PK\x03\x04":
            _, _, flags, method, _, _, _, csize, usize, name_len, extra_len = struct.unpack(
                "<IHHHHHIIIHH", data[offset : offset + 30]
            )
            name_bytes = data[offset + 30 : offset + 30 + name_len]
            name = name_bytes.decode("utf-8" if flags & 0x800 else "cp437", errors="replace")
            extra = data[offset + 30 + name_len : offset + 30 + name_len + extra_len]
            if csize == 0xFFFFFFFF or usize == 0xFFFFFFFF:  # zip64: sizes in the extra field
                position = 0
                while position + 4 <= len(extra):
                    tag, length = struct.unpack("<HH", extra[position : position + 4])
                    if tag == 1 and length >= 16:
                        usize, csize = struct.unpack("<QQ", extra[position + 4 : position + 20])
                        break
                    position += 4 + length
            start = offset + 30 + name_len + extra_len
            if flags & 0x08 and csize == 0:  # sizes follow the data: only a deflate stream knows its end
                if method != zipfile.ZIP_DEFLATED:
                    break
                try:
                    found = deflate_end(data, start, min(MEMBER_LIMIT, self.budget.left))
                except InflateLimit as exc:
                    names.append(name)
                    self.local[name] = (start, -1, method, flags, usize)
                    self.refused[name] = str(exc)
                    break
                except zlib.error:
                    break
                if found is None:
                    names.append(name)
                    self.local[name] = (start, -1, method, flags, usize)
                    break
                csize = found
                end = start + csize
                end += 16 if data[end : end + 4] == b"PK\x07\x08" else 12
            else:
                end = start + csize
            names.append(name)
            self.local[name] = (start, csize if end <= len(data) else -1, method, flags, usize)
            if end > len(data):
                break
            offset = end
        return names

    def _zipfile(self) -> zipfile.ZipFile:
        """zipfile's reading of the zip, for its deflate and stored members (made when one is first
        read: a zstd log, what inspect_ai writes since 0.3.206, never needs it)."""
        if self.zip is None:
            self.zip = zipfile.ZipFile(self.path)
        return self.zip

    def _mapped(self) -> mmap.mmap:
        if self._map is None:
            with self.path.open("rb") as handle:
                self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        return self._map

    def _listed(self, info: zipfile.ZipInfo | _Entry) -> Iterator[bytes]:
        """A zstd member listed in the central directory, inflated within the caps a piece at a time
        and its CRC checked after the last (zipfile before Python 3.14 does not know the method)."""
        if info.flag_bits & 0x1:
            raise RuntimeError("encrypted member")
        data = self._mapped()
        header = data[info.header_offset : info.header_offset + 30]
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile("bad local file header")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        start = info.header_offset + 30 + name_len + extra_len
        raw = data[start : start + info.compress_size]
        if len(raw) < info.compress_size:
            raise zipfile.BadZipFile("member cut off by the end of the file")
        crc = 0
        pieces = self.budget.zstd_pieces(raw, info.file_size)
        while True:
            try:
                piece = next(pieces)
            except StopIteration as stop:
                ended = stop.value
                break
            crc = zlib.crc32(piece, crc)
            yield piece
        if not ended:
            raise zipfile.BadZipFile("compressed data ends early")
        if crc != info.CRC:
            raise zipfile.BadZipFile("bad CRC-32")

    def read(self, name: str) -> bytes | bytearray:
        """A member's bytes; OSError, zipfile.BadZipFile, zlib.error or ZstdError when it is damaged,
        InflateLimit when it would inflate past a cap."""
        if self.central is not None and self.central[name].compress_type == ZIP_ZSTANDARD:
            return b"".join(self._listed(self.central[name]))
        if self.central is not None or self.zip is not None:
            info = self._zipfile().getinfo(name)
            if info.compress_type == ZIP_ZSTANDARD:
                return b"".join(self._listed(info))
            with self._zipfile().open(info) as stream:
                return self.budget.read(stream, info.file_size)
        assert self._map is not None
        if name in self.refused:
            raise InflateLimit(self.refused[name])
        start, csize, method, flags, usize = self.local[name]
        if csize < 0:
            raise zipfile.BadZipFile("member cut off by the end of the file")
        declared = None if flags & 0x08 else usize  # sizes after the data: the local header says 0
        if method == zipfile.ZIP_STORED:
            self.budget.cap(csize)
            self.budget.used += csize
            return self._map[start : start + csize]
        if method == ZIP_ZSTANDARD:
            data, ended = self.budget.inflate_zstd(self._map[start : start + csize], declared)
        elif method != zipfile.ZIP_DEFLATED:
            raise zipfile.BadZipFile(f"unsupported compression method {method}")
        else:
            data, ended = self.budget.inflate(self._map[start : start + csize], declared)
        if not ended:
            raise zipfile.BadZipFile("compressed data ends early")
        return data

    def pieces(self, name: str) -> Iterator[bytes]:
        """:meth:`read` a piece at a time, within the same caps, raising the same errors (the last
        ones, a CRC or an early end, after the last piece)."""
        if self.central is not None and self.central[name].compress_type == ZIP_ZSTANDARD:
            yield from self._listed(self.central[name])
            return
        if self.central is not None or self.zip is not None:
            info = self._zipfile().getinfo(name)
            if info.compress_type == ZIP_ZSTANDARD:
                yield from self._listed(info)
                return
            with self._zipfile().open(info) as stream:
                yield from self.budget.read_pieces(stream, info.file_size)
            return
        if name in self.refused:
            raise InflateLimit(self.refused[name])
        start, csize, method, flags, usize = self.local[name]
        if method == zipfile.ZIP_STORED or csize < 0:
            yield bytes(self.read(name))
            return
        declared = None if flags & 0x08 else usize
        raw = self._mapped()[start : start + csize]
        if method == ZIP_ZSTANDARD:
            ended = yield from self.budget.zstd_pieces(raw, declared)
        elif method == zipfile.ZIP_DEFLATED:
            ended = yield from self.budget.inflate_pieces(raw, declared)
        else:
            raise zipfile.BadZipFile(f"unsupported compression method {method}")
        if not ended:
            raise zipfile.BadZipFile("compressed data ends early")


class InspectAiReader:
    name = "inspect-ai"
    label = "inspect_ai logs (.eval zip and .json)"
    description = (
        "one trajectory per sample (and epoch); steps = model events (prompt = input/input_refs, "
        "tools = tools) or assistant messages with tool calls; observation = last user/tool message, "
        "thinking = reasoning parts, action = first tool call, tool_result = the tool message; "
        "outcome = target, answer (output.completion), one check per scorer (passed when inspect reads "
        "its value as >= 1: C, true, 1.0), the first scorer's explanation, error/limit"
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: tuple[tuple[str, int, int, int], _Layout] | None = None
        """The last ``.eval`` a sample was loaded from (by path, size, mtime, inode), kept open."""

    def sniff(self, path: Path, head: bytes) -> Detection:
        if head[:4] == b"PK\x03\x04":
            markers = (b"header.json", b"_journal/start.json", b"samples/")
            if any(marker in head for marker in markers):
                return Detection.yes("zip with inspect_ai log members (header.json, _journal/, samples/)", 0.95)
            try:
                with zipfile.ZipFile(path) as archive:
                    names = archive.namelist()
            except _ZIP_ERRORS as exc:
                return Detection.no(f"zip without inspect_ai members in its head ({exc})")
            if any(n in ("header.json", "_journal/start.json") or n.startswith("samples/") for n in names):
                return Detection.yes("zip with inspect_ai log members (header.json, _journal/, samples/)", 0.95)
            return Detection.no("a zip without header.json, _journal/start.json or samples/")
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text[:1] != b"{":
            return Detection.no("neither a zip nor a JSON object")
        if not re.search(rb'"eval"\s*:\s*\{', text):
            return Detection.no('a JSON object without an "eval" spec')
        if not re.search(rb'"task"\s*:', text):
            return Detection.no('"eval" without a "task"')
        if not re.search(rb'"(version|status)"\s*:', text):
            return Detection(0.3, '"eval" with a "task" but no log "version"/"status"')
        return Detection.yes('an inspect_ai JSON log ("version"/"status", "eval" with a "task")', 0.9)

    def read(self, path: Path) -> Iterator[ReadItem]:
        try:
            with path.open("rb") as handle:
                magic = handle.read(4)
        except OSError as exc:
            yield LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
            return
        if magic == b"PK\x03\x04" or path.suffix == ".eval":
            yield from self._read_eval(path)
        else:
            yield from self._read_json(path)

    def _read_json(self, path: Path) -> Iterator[ReadItem]:
        file = path.name
        try:
            log = _loads(strip_bom(path.read_bytes()))
        except OSError as exc:
            yield LoadProblem(file=file, message=f"cannot read: {exc.strerror or exc}")
            return
        except orjson.JSONDecodeError as exc:
            yield LoadProblem(file=file, message=f"not valid JSON: {exc}")
            return
        if not isinstance(log, dict):
            yield LoadProblem(file=file, message="an inspect_ai JSON log is one object")
            return
        samples = log.pop("samples", None)
        if samples is None:
            yield LoadProblem(file=file, message=_no_samples(log))
            return
        if not isinstance(samples, list):
            yield LoadProblem(file=file, field="samples", message="must be a list")
            return
        pairs = [(s.get("id"), s.get("epoch")) for s in samples if isinstance(s, dict)]
        several = _several_epochs(log, pairs)
        for index in range(len(samples)):
            sample, samples[index] = samples[index], None  # let mapped samples go
            yield _map(file, index, sample, log, several, f"samples[{index}].")
        if not samples:
            yield LoadProblem(file=file, message=_no_samples(log))

    def _read_eval(self, path: Path) -> Iterator[ReadItem]:
        file = path.name
        try:
            members = _Members(path)
        except OSError as exc:
            yield LoadProblem(file=file, message=f"cannot read: {exc.strerror or exc}")
            return
        try:
            layout = _Layout(file, members)
            yield from layout.problems
            for _, item in layout.sample_items(range(len(layout.samples))):
                yield item
            if not layout.samples:
                yield from layout.without_samples()
        finally:
            members.close()

    # -- indexing -----------------------------------------------------------------------------

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every sample's summary from ``summaries.json`` (or, while a run is in progress, the
        ``_journal/summaries/*.json`` members): no sample member is inflated, so a 10,000-sample log
        lists in about the time its summaries member takes to parse. A sample the summaries do not
        cover (or every sample, when they are missing or unreadable: a warning says so) is read
        whole to index it. A legacy ``.json`` log (one document) is read whole and kept."""
        if not _is_zip(path):
            for record, item in enumerate(self.read(path)):
                yield item if isinstance(item, LoadProblem) else EpisodeSummary.of(item, record, item)
            return
        file = path.name
        try:
            key = _version(path)
            members = _Members(path)
        except OSError as exc:
            yield LoadProblem(file=file, message=f"cannot read: {exc.strerror or exc}")
            return
        kept = False
        try:
            layout = _Layout(file, members)
            yield from layout.problems
            if not layout.samples:
                for record, item in enumerate(layout.without_samples()):
                    yield item if isinstance(item, LoadProblem) else EpisodeSummary.of(item, record, item)
                return
            summaries = layout.summaries()
            problem = summaries.problem
            if problem is not None:
                yield problem
            unsummarised: list[int] = []
            for index, (_, epoch, sample_id, name) in enumerate(layout.samples):
                summary = summaries.get((sample_id, epoch))
                if summaries.problem is not None and summaries.problem is not problem:  # the rest read whole
                    problem = summaries.problem
                    yield problem
                indexed = layout.summary_of(index, summary, name) if summary is not None else None
                if indexed is None:
                    unsummarised.append(index)
                    continue
                if unsummarised:
                    yield from layout.summaries_by_reading(unsummarised)
                    unsummarised = []
                yield indexed
            yield from layout.summaries_by_reading(unsummarised)
            if (end := summaries.finish()) is not None and end is not problem:  # its end checked (a CRC)
                yield end
            kept = self._keep(key, layout)  # the first sample opened needs no second read of the directory
        finally:
            if not kept:
                members.close()

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The sample ``summary`` names: its one member inflated and mapped (the zip's directory and
        header kept open for the next load of the same unchanged file)."""
        locator = summary.locator
        if isinstance(locator, Trajectory):
            return locator
        if not (isinstance(locator, tuple) and len(locator) == 2 and isinstance(locator[0], str)):
            return LoadProblem(file=path.name, index=summary.record, session_id=summary.id, message="episode is gone")
        name, several = locator
        with self._lock:
            try:
                layout = self._opened(path)
            except OSError as exc:
                return LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
            layout.members.budget = Budget(layout.members.budget.file_size)  # one sample's caps, each load
            for _, item in layout.sample_items([summary.record], several, name):
                return item
        return LoadProblem(file=path.name, index=summary.record, session_id=summary.id, message="episode is gone")

    def _opened(self, path: Path) -> _Layout:
        """The file's layout, from the last index or load while the file is unchanged."""
        key = _version(path)
        if self._open is not None and self._open[0] == key:
            return self._open[1]
        layout = _Layout(path.name, _Members(path))
        self._keep(key, layout, locked=True)
        return layout

    def _keep(self, key: tuple[str, int, int, int], layout: _Layout, locked: bool = False) -> bool:
        """Keep ``layout`` open for the next load (the one kept before it closed)."""
        if not locked:
            with self._lock:
                return self._keep(key, layout, locked=True)
        if self._open is not None and self._open[1] is not layout:
            self._open[1].members.close()
        self._open = (key, layout)
        return True


def _version(path: Path) -> tuple[str, int, int, int]:
    """What identifies one version of a file: its path, size, mtime and inode."""
    stat = path.stat()
    return (str(path), stat.st_size, stat.st_mtime_ns, stat.st_ino)


def _is_zip(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError:
        return path.suffix == ".eval"
    return magic == b"PK\x03\x04" or path.suffix == ".eval"


class _Layout:
    """An ``.eval`` zip's header, its sample members in sample order, and how to read them."""

    def __init__(self, file: str, members: _Members) -> None:
        self.file = file
        self.members = members
        self.problems: list[LoadProblem] = []
        if members.truncated is not None:
            self.problems.append(
                LoadProblem(
                    file=file,
                    severity="warning",
                    message=f"damaged zip ({members.truncated}): read {len(members.names)} members from local headers",
                )
            )
        self.log: dict[str, Any] = {}
        for name in ("header.json", "_journal/start.json"):
            if name in members.names:
                try:
                    found = _loads(members.read(name))
                except _HEADER_ERRORS as exc:
                    self.problems.append(LoadProblem(file=file, field=name, message=f"unreadable: {exc}"))
                    continue
                if isinstance(found, dict):
                    self.log = found
                    break
        samples: list[tuple[tuple[int, int | str], int, str, str]] = []
        for name in members.names:
            match = _SAMPLE_MEMBER.match(name)
            if match:
                epoch = int(match.group("epoch"))
                samples.append((_natural(match.group("id")), epoch, match.group("id"), name))
        samples.sort(key=lambda s: (s[0], s[1]))
        self.samples = [(key, epoch, sample_id, name) for key, epoch, sample_id, name in samples]
        self.several = _several_epochs(self.log, [(s[2], s[1]) for s in samples])

    def sample_items(
        self, indexes: Iterable[int], several: bool | None = None, expected: str | None = None
    ) -> Iterator[tuple[int, ReadItem]]:
        """The samples at ``indexes`` (positions in :attr:`samples`), each read and mapped."""
        file, several = self.file, self.several if several is None else several
        wanted = list(indexes)
        for position, index in enumerate(wanted):
            if not 0 <= index < len(self.samples) or (expected is not None and self.samples[index][3] != expected):
                found = next((k for k, s in enumerate(self.samples) if s[3] == expected), None)
                if found is None:
                    yield index, LoadProblem(file=file, index=index, field=expected, message="no such sample member")
                    continue
                index = found
            sample_id, name = self.samples[index][2], self.samples[index][3]
            label: int | str = int(sample_id) if sample_id.isdigit() else sample_id
            try:
                sample = _loads(self.members.read(name))
            except InflateLimit as exc:
                yield index, LoadProblem(file=file, index=index, session_id=label, field=name, message=str(exc))
                left = len(wanted) - position - 1
                if exc.file_wide and left:
                    message = f"{left} more samples not read: the file's inflation cap is spent"
                    yield index, LoadProblem(file=file, message=message)
                    return
                continue
            except orjson.JSONDecodeError as exc:  # a ValueError: named before the zip errors
                yield (
                    index,
                    LoadProblem(file=file, index=index, session_id=label, field=name, message=f"not valid JSON: {exc}"),
                )
                continue
            except _ZIP_ERRORS as exc:
                yield (
                    index,
                    LoadProblem(
                        file=file, index=index, session_id=label, field=name, message=f"unreadable member: {exc}"
                    ),
                )
                continue
            yield index, _map(file, index, sample, self.log, several, f"{name}:")

    def without_samples(self) -> Iterator[ReadItem]:
        if "summaries.json" in self.members.names:
            yield from _from_summaries(self.file, self.members, self.log)
        else:
            yield LoadProblem(file=self.file, message=_no_samples(self.log))

    def summaries(self) -> _Summaries:
        """The samples' summaries, looked up by (member id, epoch) as they are parsed."""
        names = self.members.names
        numbered = [(int(m.group(1)), n) for n in names if (m := _JOURNAL_SUMMARY.match(n))]
        journal = [name for _, name in sorted(numbered)]
        sources = ["summaries.json"] if "summaries.json" in names else journal
        return _Summaries(self, sources)

    def _slower(self, why: str) -> LoadProblem:
        return LoadProblem(
            file=self.file,
            severity="warning",
            field="summaries.json",
            message=f"{why}: indexed by reading every sample not summarised (slower)",
        )

    def summary_of(self, index: int, summary: dict[str, Any], name: str) -> EpisodeSummary | None:
        """A sample's :class:`EpisodeSummary` from its entry in the summaries (None: not usable).

        The outcome is the summary's (inspect thins long answers and explanations there; the
        sample's own completion, when it has one, is the answer once the episode is loaded), built
        when first asked: only its reward and success are read here (a pydantic outcome per sample
        was a third of the index's time). The
        calls are inspect's ``turn_count`` (its top-level model generations; 1, the final reply, in
        logs older than it) until then: a tool-using sample's final answer is one more than its calls."""
        sample_id = summary.get("id")
        if not isinstance(sample_id, (str, int)) or isinstance(sample_id, bool):
            return None
        try:
            reward, success = _verdict(_scores(summary), self.log)
            task = _input_text(summary.get("input")) or ""
        except (_Bad, ValueError, TypeError, KeyError, AttributeError):
            return None
        turns = summary.get("turn_count")
        steps = turns if type(turns) is int and turns >= 0 else 1  # older logs: at least the final reply
        return EpisodeSummary(
            id=_trajectory_id(sample_id, summary.get("epoch"), self.several),
            record=index,
            task=task,
            steps=steps,
            reward=reward,
            success=success,
            deferred_outcome=_DeferredOutcome(summary, self.log, reward, success),
            locator=(name, self.several),
        )

    def summaries_by_reading(self, indexes: list[int]) -> Iterator[EpisodeSummary | LoadProblem]:
        """The slower path: each sample read whole and summarised (its trajectory let go)."""
        for index, item in self.sample_items(indexes):
            if isinstance(item, LoadProblem):
                yield item
            else:
                yield EpisodeSummary.of(item, index, (self.samples[index][3], self.several))


class _Summaries:
    """The samples' summaries (``summaries.json``, or the journal's members in order), parsed a
    batch at a time as the member inflates (:func:`~replay_tui.episodes.jsonscan.array_batches`):
    :meth:`get` reads on only until the summary asked for is found, so the first samples are
    indexed before a 100,000-sample log's member (hundreds of MB) is whole. inspect_ai writes them
    in the samples' order or near it (as they complete); one found early waits in :attr:`found`.
    When a member turns out unreadable, :attr:`problem` says so and the samples not found by then
    are read whole (slower), as when there are no summaries at all."""

    def __init__(self, layout: _Layout, sources: list[str]) -> None:
        self.layout = layout
        self.found: dict[tuple[str, int], dict[str, Any]] = {}
        self.problem: LoadProblem | None = None if sources else layout._slower("no summaries.json")
        self._batches = self._parsed(sources)

    def _parsed(self, sources: list[str]) -> Iterator[list[Any]]:
        for name in sources:
            try:
                yield from array_batches(self.layout.members.pieces(name), _loads)
            except NotAnArray:
                self.problem = self.layout._slower(f"{name} is not a list of sample summaries")
                return
            except _HEADER_ERRORS as exc:  # InflateLimit is a ValueError
                self.problem = self.layout._slower(f"{name} unreadable: {exc}")
                return

    def get(self, key: tuple[str, int]) -> dict[str, Any] | None:
        """The summary of sample ``key``, once (None: it has none, or the summaries broke first)."""
        found = self.found
        while key not in found and self.problem is None:
            batch = next(self._batches, None)
            if batch is None:
                break
            for entry in batch:
                if isinstance(entry, dict) and isinstance(entry.get("epoch", 1), int):
                    sample_id = entry.get("id")
                    if isinstance(sample_id, (str, int)) and not isinstance(sample_id, bool):
                        found[(str(sample_id), entry.get("epoch", 1))] = entry
        return found.pop(key, None)

    def finish(self) -> LoadProblem | None:
        """Read the members to their ends (a CRC or an early end is found there), for :attr:`problem`."""
        for _ in self._batches:
            pass
        return self.problem


_JOURNAL_SUMMARY = re.compile(r"^_journal/summaries/(\d+)\.json$")


def _from_summaries(file: str, members: _Members, log: dict[str, Any]) -> Iterator[ReadItem]:
    """A log written without its samples (``--no-log-samples``): one episode without steps per
    entry of ``summaries.json``, whose id, input, target, scores, error and limit give its outcome."""
    try:
        summaries = _loads(members.read("summaries.json"))
    except _HEADER_ERRORS as exc:  # InflateLimit is a ValueError
        yield LoadProblem(file=file, field="summaries.json", message=f"unreadable: {exc}")
        return
    if not isinstance(summaries, list) or not summaries:
        yield LoadProblem(file=file, message=_no_samples(log))
        return
    yield LoadProblem(
        file=file,
        severity="warning",
        message=f"no samples logged: {len(summaries)} outcomes from summaries.json, without steps",
    )
    several = _several_epochs(log, [(s.get("id"), s.get("epoch")) for s in summaries if isinstance(s, dict)])
    for index, summary in enumerate(summaries):
        item = _map(file, index, summary, log, several, f"summaries.json[{index}].")
        if isinstance(item, Trajectory):
            item.extra["steps_from"] = "summaries.json (samples not logged)"
        yield item


def _no_samples(log: dict[str, Any]) -> str:
    status = log.get("status")
    error = _error_text(log.get("error"))
    text = "no samples in this log"
    if status:
        text += f" (status {status}"
        text += f": {error.splitlines()[0][:200]})" if error else ")"
    return text


READER = InspectAiReader()
