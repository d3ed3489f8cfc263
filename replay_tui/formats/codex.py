"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``) as trajectories.

Source of truth: openai/codex ``codex-rs/protocol/src/protocol.rs`` (RolloutLine, RolloutItem,
SessionMeta, EventMsg) and ``models.rs`` (ResponseItem). Two shapes:

- ``{timestamp, type, payload}`` lines, ``type`` ∈ ``session_meta``, ``turn_context``,
  ``response_item`` (Responses-API items), ``event_msg``, ``compacted``;
- legacy (mid-2025): a header ``{id, timestamp, instructions}``, then bare response items and
  ``{"record_type": "state"}`` lines.

Mapping (one file = one episode, built in one pass by :mod:`replay_tui.formats.conversation`):

- id = the first ``session_meta``'s id (the header's in the legacy shape); later ``session_meta``
  records (a resumed session, or the parent whose history a forked sub-agent copies) are listed in
  ``metadata["sessions"]``; task = the first user ``message`` that is not injected context;
  ``metadata["message_records"]`` counts the ``message`` items;
- ``function_call`` / ``custom_tool_call`` (freeform input as ``{"input": text}``) /
  ``local_shell_call`` (its ``action``) → a step, its prompt the messages before the response;
  ``reasoning`` (summary and content texts) → thinking, assistant ``message`` → content; outputs
  paired by ``call_id``; a call never answered keeps no result;
- ``event_msg`` ``error`` / ``turn_aborted``, ``web_search_call``, ``compacted`` (the history is
  replaced by its ``replacement_history``, or by its summary message) → steps without an action;
- sub-agents: a rollout whose ``session_meta.source.subagent.thread_spawn`` names a parent gets
  ``parent`` (the parent thread, ``source`` ``thread_spawn``, and, when the parent's rollout is
  beside it, the spawning ``call_id``), its task the spawn's ``message``; in the parent, the
  ``spawn_agent`` step's ``subagent`` is the ``agent_id`` its output names. Each rollout stays its own episode
  (a sessions folder lists them);
- each line's ``timestamp`` → its steps' ``timestamp``; ``turn_context.model`` → ``model``;
  ``token_count`` ``last_token_usage`` → the last response's steps' ``usage``, the last
  ``total_token_usage`` → the episode's ``usage``; an ``error`` event or a failed output → ``error``;
- outcome: status = ``aborted`` / ``error`` / ``completed`` from the last turn's end event (an
  ``error`` event's message the ``error``); answer = the last turn's ``last_agent_message`` (else its
  last assistant message no call followed); ``scores`` counts errors and aborted turns. A sessions
  folder reads as one episode per rollout.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replay_tui.episodes.model import ChatMessage, Outcome, ParentLink, TokenUsage, ToolCall, Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import Detection, EpisodeSummary, ReadItem, strip_bom
from replay_tui.formats.conversation import (
    Conversation,
    CountingConversation,
    fork_state,
    head_records,
    jsonl_records,
    read_sessions,
)
from replay_tui.formats.growing import Forking, LogFollower

FORMAT = "codex"
_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
    }
)
_LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_META = re.compile(rb'\s*\{"timestamp"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"session_meta"\s*,\s*"payload"\s*:\s*\{')
_LEGACY = re.compile(rb'\s*\{"id"\s*:\s*"[^"]*"\s*,\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"instructions"\s*:')
_SESSION_ID = re.compile(r"\A[A-Za-z0-9_-]{1,128}\Z")
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
"""Response items that call a tool: an assistant message before one is no final answer."""
_CONTEXT_MARKS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>")
"""User messages Codex injects (AGENTS.md, environment): context, not the task."""


class CodexReader:
    name = FORMAT
    label = "OpenAI Codex CLI rollouts (JSONL, sessions folders)"
    description = (
        "episode = rollout (sub-agents and resumed sessions named in metadata); step = function/custom/"
        "local-shell call with the messages before its response; reasoning as thinking; outputs paired "
        "by call_id; errors, aborted turns and compactions as events"
    )

    def sniff(self, path: Path, head: bytes) -> Detection:
        if path.is_dir():
            for file in _rollouts(path)[:3]:
                try:
                    with file.open("rb") as handle:
                        found = self.sniff(file, handle.read(64 * 1024))
                except OSError:
                    continue
                if found.score > 0:
                    return Detection.yes(f"a Codex sessions folder ({file.name})", 0.9)
            return Detection.no("a folder without Codex rollout-*.jsonl files")
        records = head_records(head)
        if not records:
            # a first line longer than the head (long base instructions): its start still shows
            if _META.match(strip_bom(head)):
                return Detection.yes("a Codex session_meta line {timestamp, type, payload}", 0.9)
            if _LEGACY.match(strip_bom(head)):
                return Detection.yes("a legacy Codex rollout header {id, timestamp, instructions}", 0.8)
            return Detection.no("no JSON Lines record in the head")
        for record in records[:20]:
            if (
                record.get("type") == "session_meta"
                and isinstance(record.get("payload"), dict)
                and "timestamp" in record
            ):
                return Detection.yes("Codex rollout lines {timestamp, type: session_meta, payload}")
        first = records[0]
        if {"id", "timestamp", "instructions"} <= first.keys() and len(records) > 1:
            rest = records[1:6]
            if any(r.get("record_type") == "state" or r.get("type") in _ITEM_TYPES for r in rest):
                return Detection.yes("legacy Codex rollout (header {id, timestamp, instructions}, items)", 0.95)
        if all(r.get("type") in _LINE_TYPES and "payload" in r for r in records[:5]):
            return Detection.yes("Codex rollout lines {timestamp, type, payload}", 0.9)
        return Detection.no("no Codex session_meta line nor legacy header {id, timestamp, instructions}")

    def read(self, path: Path) -> Iterator[ReadItem]:
        return read_sessions(path, self.session_files, _NO_ROLLOUTS, _read_file)

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every rollout's summary, in :meth:`read`'s order, from the same pass over its lines with a
        :class:`~replay_tui.formats.conversation.CountingConversation` (no prompt, message or history
        is built; one rollout is held at a time). ``locator`` = the rollout file: :meth:`load` reads
        that one file again."""
        reading: list[Path] = [path]

        def counted(file: Path) -> Iterator[ReadItem]:
            reading[0] = file
            return _read_file(file, counting=True)

        record = 0
        for item in read_sessions(path, self.session_files, _NO_ROLLOUTS, counted):
            if isinstance(item, LoadProblem):
                yield item
                continue
            yield EpisodeSummary.of(item, record, reading[0])
            record += 1

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The rollout ``summary`` points at, read whole."""
        found = list(_read_file(summary.locator))
        episodes = [item for item in found if isinstance(item, Trajectory)]
        if episodes and episodes[0].id == summary.id:
            return episodes[0]
        errors = [item for item in found if isinstance(item, LoadProblem) and item.severity == "error"]
        if errors and not episodes:
            return errors[0]
        return LoadProblem(
            file=summary.locator.name,
            index=summary.record,
            session_id=summary.id,
            message="the rollout changed since it was indexed: reopen it",
        )

    def session_files(self, folder: Path) -> list[Path]:
        """A sessions folder's rollouts (else its ``.jsonl`` files)."""
        return _rollouts(folder) or sorted(folder.glob("*.jsonl"))

    def follower(self, path: Path) -> LogFollower:
        """A rollout read line by line as it grows (``--follow``)."""
        return Forking(_RolloutFile(path))


READER = CodexReader()
_NO_ROLLOUTS = "no Codex rollout-*.jsonl files in this folder"


def _rollouts(folder: Path) -> list[Path]:
    """The rollouts of a sessions folder: ``rollout-*.jsonl`` in it or in its ``YYYY/MM/DD`` tree.

    Empty when the folder also holds other files or folders (a folder of logs of other formats is
    not a sessions folder, and a home folder is never walked)."""
    rollouts: list[Path] = []
    for entry in sorted(folder.iterdir()):
        if entry.is_dir():
            if not entry.name.isdigit():
                return []
            rollouts.extend(_rollouts(entry))
        elif entry.name.startswith("rollout-") and entry.suffix == ".jsonl":
            rollouts.append(entry)
        elif not entry.name.startswith("."):
            return []
    return rollouts


def _text(content: Any) -> str:
    """A message's or output's content as text (``input_text``/``output_text`` parts joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif part.get("type") in ("input_image", "image"):
                    parts.append("[image]")
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    if content is None:
        return ""
    if isinstance(content, dict) and isinstance(content.get("content"), str):
        return content["content"]
    return orjson.dumps(content).decode()


class _Rollout:
    def __init__(self, path: Path, counting: bool = False):
        self.path = path
        self.conversation = CountingConversation() if counting else Conversation()
        self.id = ""
        self.task = ""
        self.metadata: dict[str, Any] = {}
        self.sessions: list[dict[str, Any]] = []
        self.messages = 0
        self.errors = 0
        self.aborted = 0
        self.status: str | None = None
        self.error: str | None = None
        self.answer: str | None = None
        """The last turn's final message (``task_complete.last_agent_message``, else the last
        assistant message no call followed)."""
        self.spawned: dict[str, str] = {}
        """spawn_agent call id → the child's agent_id."""
        self.parent: ParentLink | None = None
        self.usage: TokenUsage | None = None
        """The session's totals (the last ``token_count``'s ``total_token_usage``)."""

    # -- records -------------------------------------------------------------------------------

    def line(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        payload = record.get("payload")
        self.conversation.at(record.get("timestamp"))
        if kind in _LINE_TYPES:
            if not isinstance(payload, dict):
                return
            if kind == "session_meta":
                self.session_meta(payload)
            elif kind == "turn_context":
                model = payload.get("model")
                if isinstance(model, str):
                    self.conversation.at(record.get("timestamp"), model)
                    models = self.metadata.setdefault("models", [])
                    if model not in models:
                        models.append(model)
            elif kind == "response_item":
                self.item(payload)
            elif kind == "event_msg":
                self.event(payload)
            elif kind == "compacted":
                self.compacted(payload)
            return
        if record.get("record_type") is not None:
            return
        if not self.id and {"id", "instructions"} <= record.keys() and "type" not in record:
            self.id = str(record.get("id"))
            self.metadata.update(legacy=True, timestamp=record.get("timestamp"))
            return
        if kind in _ITEM_TYPES:
            self.item(record)

    def session_meta(self, payload: dict[str, Any]) -> None:
        session_id = str(payload.get("id", ""))
        source = payload.get("source")
        self.sessions.append({"id": session_id, "source": source, "timestamp": payload.get("timestamp")})
        if self.id:
            return
        self.id = session_id
        for key in ("cwd", "originator", "cli_version", "model_provider", "timestamp"):
            if payload.get(key) is not None:
                self.metadata[key] = payload[key]
        if isinstance(payload.get("git"), dict):
            self.metadata["git"] = payload["git"]
        spawn = source.get("subagent") if isinstance(source, dict) else None
        spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
        if isinstance(spawn, dict):
            parent = spawn.get("parent_thread_id")
            named = parent if isinstance(parent, str) and parent else None
            self.parent = ParentLink(episode=named, source="thread_spawn")
            self.metadata.update(nickname=spawn.get("agent_nickname"), role=spawn.get("agent_role"))
        elif isinstance(source, dict) and "subagent" in source:
            mechanism = source["subagent"]
            if isinstance(mechanism, dict) and len(mechanism) == 1:
                mechanism = next(iter(mechanism))
            self.parent = ParentLink(source=mechanism if isinstance(mechanism, str) else "subagent")
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else base
        if isinstance(text, str) and text:
            self.conversation.add_input(ChatMessage(role="system", content=text))

    def item(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        conversation = self.conversation
        if kind in _CALLS:
            self.answer = None
        if kind == "message":
            self.messages += 1
            role = str(item.get("role") or "user")
            text = _text(item.get("content"))
            if role == "assistant":
                conversation.add_text(text)
                self.answer = text if text.strip() else self.answer
            else:
                conversation.add_input(ChatMessage(role=role, content=text))
                if role == "user" and not self.task and not text.lstrip().startswith(_CONTEXT_MARKS):
                    self.task = text
        elif kind == "reasoning":
            texts = [_text(item.get("summary")), _text(item.get("content"))]
            conversation.add_thinking("\n".join(t for t in texts if t))
        elif kind == "function_call":
            raw = item.get("arguments")
            call_id = _id(item.get("call_id"))
            name = str(item.get("name") or "?")
            arguments: Any = raw
            if isinstance(raw, str):
                try:
                    arguments = orjson.loads(raw) if raw.strip() else {}
                except orjson.JSONDecodeError:
                    arguments = None
            if isinstance(arguments, dict):
                call = ToolCall(name=name, arguments=arguments, id=call_id)
            else:
                call = ToolCall(name=name, id=call_id, raw_arguments=raw if isinstance(raw, str) else _text(raw))
            conversation.add_call(call)
        elif kind == "custom_tool_call":
            call = ToolCall(
                name=str(item.get("name") or "?"),
                arguments={"input": _text(item.get("input"))},
                id=_id(item.get("call_id")),
            )
            conversation.add_call(call, extra={"custom_tool": True})
        elif kind == "local_shell_call":
            action = item.get("action")
            call_id = _id(item.get("call_id")) or _id(item.get("id"))
            call = ToolCall(name="local_shell", arguments=action if isinstance(action, dict) else {}, id=call_id)
            conversation.add_call(call)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = _id(item.get("call_id"))
            output = item.get("output")
            text = _text(output)
            error = isinstance(output, dict) and output.get("success") is False
            step = conversation.calls.get(call_id) if call_id else None
            if step is not None and step.action is not None and step.action.name == "spawn_agent":
                agent = _agent_id(text)
                if agent:
                    step.subagent = agent
                    self.spawned[call_id or ""] = agent
            conversation.add_result(call_id, text, error=error)
            if error and step is not None:
                step.error = text
        elif kind == "web_search_call":
            action = item.get("action")
            query = action.get("query") if isinstance(action, dict) else None
            conversation.add_event(f"web search: {query}" if query else "web search", "web_search", {"item": item})

    def event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "token_count":
            info = payload.get("info")
            if isinstance(info, dict):
                self.conversation.set_usage(_usage(info.get("last_token_usage")))
                self.usage = _usage(info.get("total_token_usage")) or self.usage
        elif kind == "error":
            self.errors += 1
            self.status = "error"
            self.error = str(payload.get("message", "")).strip() or "error"
            self.conversation.add_event(str(payload.get("message", "")), "error").error = self.error
        elif kind == "turn_aborted":
            self.aborted += 1
            self.status = "aborted"
            self.conversation.add_event(f"turn aborted: {payload.get('reason', '')}", "turn_aborted")
        elif kind == "task_complete":
            self.status, self.error = "completed", None
            said = payload.get("last_agent_message")
            if isinstance(said, str) and said.strip():
                self.answer = said
        elif kind == "task_started":
            self.status, self.error, self.answer = None, None, None

    def compacted(self, payload: dict[str, Any]) -> None:
        history = payload.get("replacement_history")
        messages: list[ChatMessage] = []
        if isinstance(history, list):
            for item in history:
                if isinstance(item, dict) and item.get("type") == "message":
                    messages.append(
                        ChatMessage(role=str(item.get("role") or "user"), content=_text(item.get("content")))
                    )
        summary = payload.get("message")
        if not messages and isinstance(summary, str) and summary:
            messages.append(ChatMessage(role="user", content=summary))
        self.conversation.add_event(
            summary if isinstance(summary, str) and summary else "context compacted", "compaction"
        )
        self.conversation.replace_history(messages)

    def trajectory(self) -> Trajectory:
        self.conversation.end_response()
        metadata = {
            **self.metadata,
            "message_records": self.messages,
            "sessions": self.sessions,
        }
        parent = self.parent
        if parent is not None and parent.episode:
            spawned = _spawning_call(self.path, parent.episode, self.id)
            if spawned is not None:
                call_id, task = spawned
                parent = parent.model_copy(update={"call_id": call_id})
                self.task = task or self.task
        return Trajectory(
            id=self.id or self.path.stem,
            format=FORMAT,
            task=self.task,
            metadata=metadata,
            steps=self.conversation.steps,
            outcome=Outcome(
                status=self.status,
                error=self.error if self.status == "error" else None,
                answer=self.answer,
                scores={"errors": self.errors, "aborted_turns": self.aborted},
            ),
            parent=parent,
            usage=self.usage,
        )


def _usage(usage: Any) -> TokenUsage | None:
    """A ``token_count`` usage (OpenAI's: input counts the cached tokens, output the reasoning ones)."""
    return TokenUsage.read(
        usage,
        input="input_tokens",
        output="output_tokens",
        cache_read="cached_input_tokens",
        reasoning="reasoning_output_tokens",
        total="total_tokens",
    )


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _agent_id(output: str) -> str | None:
    try:
        data = orjson.loads(output)
    except orjson.JSONDecodeError:
        return None
    agent = data.get("agent_id") if isinstance(data, dict) else None
    return agent if isinstance(agent, str) else None


def _spawning_call(path: Path, parent: str, child: str) -> tuple[str | None, str] | None:
    """The parent rollout's ``spawn_agent`` call whose output names ``child`` (when the parent's
    rollout is beside it): its call id and the ``message`` it gave the sub-agent (its task)."""
    if not _SESSION_ID.match(parent):  # an id from a log never walks out of its folder
        return None
    needle = child.encode()
    messages: dict[str, str] = {}
    for candidate in sorted(path.parent.glob(f"*{parent}.jsonl")):
        try:
            with candidate.open("rb") as handle:
                for line in handle:
                    spawn = b'"spawn_agent"' in line and b'"function_call"' in line
                    if not spawn and (needle not in line or b"function_call_output" not in line):
                        continue
                    try:
                        payload = orjson.loads(line).get("payload")
                    except (orjson.JSONDecodeError, AttributeError):
                        continue
                    if not isinstance(payload, dict):
                        continue
                    call_id = _id(payload.get("call_id"))
                    if spawn and call_id:
                        try:
                            arguments = orjson.loads(payload.get("arguments") or "{}")
                        except (orjson.JSONDecodeError, TypeError):
                            arguments = None
                        message = arguments.get("message") if isinstance(arguments, dict) else None
                        messages[call_id] = message if isinstance(message, str) else ""
                    elif _agent_id(_text(payload.get("output"))) == child:
                        return call_id, messages.get(call_id or "", "")
        except OSError:
            return None
    return None


def _read_file(path: Path, counting: bool = False) -> Iterator[ReadItem]:
    """A rollout's episode (``counting``: steps without prompts, for an index)."""
    state = _RolloutFile(path, counting)
    for number, record in jsonl_records(path):
        state.add(number, record)
    yield from state.finish()


class _RolloutFile:
    """One rollout file read so far (followed, ``--follow``: its records are added as lines
    complete and a :meth:`fork` is finished each time)."""

    def __init__(self, path: Path, counting: bool = False):
        self.path = path
        self.rollout = _Rollout(path, counting)
        self.problems: list[LoadProblem] = []
        self.seen = False

    def fork(self) -> _RolloutFile:
        clone = fork_state(self)
        clone.rollout = fork_state(self.rollout)
        return clone

    def add(self, number: int, record: dict[str, Any] | LoadProblem) -> None:
        if isinstance(record, LoadProblem):
            self.problems.append(record)
            return
        self.seen = True
        try:
            self.rollout.line(record)
        except Exception as exc:  # a record of an unforeseen shape is a problem, never a crash
            self.problems.append(
                LoadProblem(file=self.path.name, field=f"line {number}", message=f"{type(exc).__name__}: {exc}")
            )

    def finish(self) -> Iterator[ReadItem]:
        if self.seen:
            yield self.rollout.trajectory()
        else:
            yield LoadProblem(file=self.path.name, message="no Codex rollout records")
        yield from self.problems
