"""Claude Code session transcripts (``~/.claude/projects/<slug>/<session>.jsonl``) as trajectories.

No official spec exists; the layout (seen in Claude Code 1.0.70–2.1.90) is one JSON record per line,
``type`` user | assistant | system | summary plus bookkeeping types (``file-history-snapshot``,
``queue-operation``, ``progress``, ``attachment``...) that carry no conversation and are skipped.
``message`` is an Anthropic Messages API object; Claude Code writes each content block of one
response as its own record (same ``message.id``).

Mapping (one pass, see :mod:`replay_tui.formats.conversation`):

- the file's main chain → a Trajectory (id = the file's session uuid, else its first ``sessionId``;
  a resumed session continues one chain under several ``sessionId`` values, all listed in
  ``metadata["session_ids"]``); task = the first user text that is no slash command or caveat;
  metadata = cwd, version, git branch, models, ``message_records`` (user + assistant records);
- each ``tool_use`` block → a step: prompt = the messages before its response, thinking = the
  response's ``thinking`` blocks, content = its ``text``; the ``tool_result`` with the same
  ``tool_use_id`` is its ``tool_result`` (``is_error`` kept in ``extra``); a call never answered
  keeps no result;
- a response with no call, an API error (``isApiErrorMessage``), a compaction (``isCompactSummary``
  user record: the history is replaced by the summary; a ``compact_boundary`` system record) →
  steps without an action (``extra["event"]`` says which); ``summary`` records (titles) go to the
  metadata of the session holding their ``leafUuid``;
- sub-agents (Task/Agent calls) → child Trajectories after their parent, their ``parent`` naming
  the session and the call (``source`` the tool's name, ``sidechain`` when no call is known); the
  spawning step's ``subagent`` and the first line of its result (``[sub-agent episode: <id>]``)
  name the child. 1.x inlines them
  (``isSidechain`` records, one thread per root), matched to the Task call by prompt; 2.0 writes
  ``agent-<agentId>.jsonl`` beside the session, 2.1 ``<session>/subagents/agent-<agentId>.jsonl``,
  found by the ``agentId`` of the Task's result, else built from the session's ``progress`` records
  (``data.type: agent_progress``, ``parentToolUseID`` = the Task call);
- each record's ``timestamp`` → its steps' ``timestamp``, ``message.model`` → ``model``,
  ``message.usage`` (input, output, cache read/creation tokens) → the response's steps' ``usage``;
  a tool result's ``is_error`` text and an API error → the step's ``error``;
- outcome: status ``api_error`` when the session ends on an API error (its kind and text the
  ``error``), ``interrupted`` when it ends on the user stopping a response; ``answer`` = the text of
  the last response when it called no tool; ``scores`` counts tool and API errors. A project folder
  reads as one episode per session file.

The reader indexes (:meth:`ClaudeCodeReader.index`): the same pass over the records with a
:class:`~replay_tui.formats.conversation.CountingConversation` gives each episode's summary without
a prompt, message or history built (one session file held at a time; ``bench/bench_big_logs.py``);
an episode is read from its session file again when opened.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replay_tui.episodes.model import ChatMessage, Outcome, ParentLink, TokenUsage, ToolCall, Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import HEAD_BYTES, Detection, EpisodeSummary, ReadItem, strip_bom
from replay_tui.formats.conversation import (
    Conversation,
    CountingConversation,
    fork_state,
    head_records,
    jsonl_records,
    read_sessions,
)
from replay_tui.formats.growing import Forking, LogFollower
from replay_tui.formats.reread import stamp

FORMAT = "claude-code"
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
"""The tools that start a sub-agent (``Task`` until 2.1 renamed it ``Agent``)."""
_CONVERSATION_TYPES = frozenset({"user", "assistant"})
_INTERRUPTED = "[Request interrupted by user"
"""What Claude Code writes as the user's message when the user stops a response (Esc)."""
_AGENT_ID = re.compile(r"\A[A-Za-z0-9_-]{1,128}\Z")
"""What an ``agentId`` may be to name a file (an id from a log never walks out of its folder)."""
_CUT_RECORD = re.compile(rb'\{"parentUuid"\s*:\s*(null|"[^"]*")\s*,\s*"(isSidechain|logicalParentUuid)"\s*:')
_OTHER_LOGS = frozenset({".json", ".eval", ".traj", ".yaml", ".yml", ".gz"})
"""Log files a Claude Code project folder never holds: a folder with them is a folder of logs."""
_NOT_TASK = ("<command-", "<local-command-", "Caveat:", "[Request interrupted")
"""User records Claude Code writes for slash commands and interruptions: not the task."""


def _is_session_record(record: dict[str, Any]) -> bool:
    return (
        record.get("type") in _CONVERSATION_TYPES
        and "uuid" in record
        and "parentUuid" in record
        and "sessionId" in record
        and isinstance(record.get("message"), dict)
    )


class ClaudeCodeReader:
    name = FORMAT
    label = "Claude Code session transcripts (JSONL, project folders)"
    description = (
        "episode = session (sub-agents as child episodes); step = tool_use with the messages before its "
        "response; thinking/text of the response; tool_result paired by tool_use_id; API errors, "
        "compactions and text replies as events"
    )

    def sniff(self, path: Path, head: bytes) -> Detection:
        if path.is_dir():
            others = [p for p in path.iterdir() if p.is_file() and p.suffix in _OTHER_LOGS]
            if others:
                return Detection.no(f"a folder with other logs ({others[0].name}), not a Claude Code project")
            for file in sorted(path.glob("*.jsonl"))[:5]:
                try:
                    with file.open("rb") as handle:
                        found = self.sniff(file, handle.read(HEAD_BYTES))
                except OSError:
                    continue
                if found.score > 0:
                    return Detection.yes(f"a Claude Code project folder ({file.name}: {found.reason})", 0.9)
            return Detection.no("a folder without Claude Code session files")
        records = head_records(head)
        if any(_is_session_record(record) for record in records):
            return Detection.yes("Claude Code records (type user/assistant with uuid, parentUuid, sessionId, message)")
        # a record longer than the head (a big tool result) still starts as Claude Code writes it
        if _CUT_RECORD.match(strip_bom(head).rsplit(b"\n", 1)[-1]):
            return Detection.yes("a Claude Code record's start (parentUuid, isSidechain)", 0.9)
        return Detection.no("no record with type user/assistant, uuid, parentUuid and sessionId")

    def read(self, path: Path) -> Iterator[ReadItem]:
        return read_sessions(path, self.session_files, _NO_SESSIONS, _read_file)

    def count(self, path: Path) -> Iterator[ReadItem]:
        """:meth:`read` with a :class:`~replay_tui.formats.conversation.CountingConversation` (the
        index's bare steps: calls, results, sub-agents and outcomes as read gives them)."""
        return read_sessions(path, self.session_files, _NO_SESSIONS, _counted_file)

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every episode's summary, in :meth:`read`'s order, from the same pass over the records with
        a :class:`~replay_tui.formats.conversation.CountingConversation` (no prompt, message or
        history is built; one session file is held at a time). ``locator`` = (session file, the
        how-manieth episode of that file): :meth:`load` reads that one file again."""
        reading: list[Path] = [path]

        def counted(file: Path) -> Iterator[ReadItem]:
            reading[0] = file
            return _read_file(file, counting=True)

        record = 0
        nth: dict[Path, int] = {}
        for item in read_sessions(path, self.session_files, _NO_SESSIONS, counted):
            if isinstance(item, LoadProblem):
                yield item
                continue
            file = reading[0]
            nth[file] = nth.get(file, -1) + 1
            yield EpisodeSummary.of(item, record, (file, nth[file]))
            record += 1

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[tuple[tuple[str, int, int], ...], list[ReadItem]] | None = None

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The episode ``summary`` points at: its session file read whole (with its sub-agents).

        The last file's read is kept while its files are unchanged: a session's sub-agents are
        episodes of the same file, so opening or validating them one by one read it once each."""
        file, nth = summary.locator
        stamp = _stamp(file)
        with self._lock:
            last = self._last
        if last is not None and last[0] == stamp:
            found = last[1]
        else:
            found = [item for item in read_sessions(file, self.session_files, _NO_SESSIONS, _read_file)]
            with self._lock:
                self._last = (stamp, found)
        episodes = [item for item in found if isinstance(item, Trajectory)]
        if nth < len(episodes) and episodes[nth].id == summary.id:
            return episodes[nth]
        errors = [item for item in found if isinstance(item, LoadProblem) and item.severity == "error"]
        if errors and not episodes:
            return errors[0]
        return LoadProblem(
            file=file.name,
            index=summary.record,
            session_id=summary.id,
            message="the session file changed since it was indexed: reopen it",
        )

    def session_files(self, folder: Path) -> list[Path]:
        """A project folder's session files (2.0's ``agent-*.jsonl`` beside them are sub-agents)."""
        return sorted(p for p in folder.glob("*.jsonl") if not p.name.startswith("agent-"))

    def follower(self, path: Path) -> LogFollower:
        """A session file read line by line as it grows (``--follow``)."""
        return Forking(_SessionFile(path))


READER = ClaudeCodeReader()
_NO_SESSIONS = "no session .jsonl files in this folder"


def _text_of(content: Any) -> str:
    """A tool result's or message's content as text (blocks joined; images named)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "image":
                    parts.append("[image]")
                elif "text" in block:
                    parts.append(str(block["text"]))
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    if content is None:
        return ""
    return orjson.dumps(content).decode()


class _Session:
    """One thread of records (a session's main chain or one sub-agent) being built."""

    def __init__(self, session_id: str, file: str, counting: bool = False):
        self.id = session_id
        self.file = file
        self.counting = counting
        self.conversation = CountingConversation() if counting else Conversation()
        self.task = ""
        self.metadata: dict[str, Any] = {"session_id": session_id}
        self.models: list[str] = []
        self.messages = 0
        self.uuids: set[str] = set()
        self.tool_errors = 0
        self.api_errors = 0
        self.ended_on_error = False
        self.last_error = ""
        self.interrupted = False
        self.answer: str | None = None
        """The text of the last response, when it called no tool: the session's final answer."""
        self.answer_key: Any = None
        self.answer_called = False
        self.first_prompt = ""
        self.subagent_calls: dict[str, Any] = {}
        """Task call id → its input (to match sub-agents)."""
        self.agent_ids: dict[str, str] = {}
        """Task call id → the agentId its result names (2.x)."""

    def add(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            self.uuids.add(uuid)
        for key in ("cwd", "version", "gitBranch"):
            if key not in self.metadata and isinstance(record.get(key), str):  # known after the first record
                self.metadata[key] = record[key]
        if kind == "system":
            if record.get("subtype") == "compact_boundary":
                self.conversation.add_event(
                    "context compacted", "compaction", {"metadata": record.get("compactMetadata")}
                )
            return
        message = record.get("message")
        if not isinstance(message, dict):
            return
        self.messages += 1
        if kind == "assistant":
            self._assistant(record, message)
        else:
            self._user(record, message)

    def _assistant(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        model = message.get("model")
        if isinstance(model, str) and model != "<synthetic>" and model not in self.models:
            self.models.append(model)
        content = message.get("content")
        if record.get("isApiErrorMessage") or record.get("error"):
            self.api_errors += 1
            self.ended_on_error = True
            text = _text_of(content).strip()
            kind = record.get("error")
            self.last_error = f"{kind}: {text}" if isinstance(kind, str) and kind and text else text or str(kind)
            self.conversation.at(record.get("timestamp"))
            step = self.conversation.add_event(_text_of(content), "api_error", {"error": record.get("error")})
            step.error = self.last_error
            return
        self.ended_on_error = False
        self.interrupted = False
        key = message.get("id") or record.get("requestId") or record.get("uuid")
        named = model if isinstance(model, str) and model != "<synthetic>" else None
        self.conversation.at(record.get("timestamp"), named)
        if key != self.answer_key:
            self.answer, self.answer_key, self.answer_called = None, key, False
        blocks = content if isinstance(content, list) else [{"type": "text", "text": _text_of(content)}]
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "thinking":
                self.conversation.add_thinking(str(block.get("thinking", "")), key)
            elif kind == "redacted_thinking":
                self.conversation.add_thinking("[redacted thinking]", key)
            elif kind == "text":
                self.conversation.add_text(str(block.get("text", "")), key)
                if self.answer_key == key and (self.answer is not None or not self.answer_called):
                    text = str(block.get("text", ""))
                    self.answer = f"{self.answer}\n{text}" if self.answer else text
            elif kind in ("tool_use", "server_tool_use"):
                name = block.get("name")
                arguments = block.get("input")
                call_id = block.get("id") if isinstance(block.get("id"), str) else None
                call = ToolCall(
                    name=name if isinstance(name, str) and name else "?",
                    arguments=arguments if isinstance(arguments, dict) else {},
                    id=call_id,
                    raw_arguments=None if isinstance(arguments, dict) or arguments is None else str(arguments),
                )
                self.conversation.add_call(call, key)
                self.answer, self.answer_called = None, True
                if call.name in SUBAGENT_TOOLS and call_id:
                    self.subagent_calls[call_id] = call.arguments
        if not self.counting:  # a summary carries no usage: not validated for every response of an index
            self.conversation.set_usage(_usage(message.get("usage")))

    def _user(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        content = message.get("content")
        self.conversation.at(record.get("timestamp"))
        if record.get("isCompactSummary"):
            text = _text_of(content)
            self.conversation.add_event(text, "compaction")
            self.conversation.replace_history([ChatMessage(role="user", content=text)])
            return
        if isinstance(content, list):
            texts = []
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_result":
                    call_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
                    error = bool(block.get("is_error"))
                    self.tool_errors += error
                    used = record.get("toolUseResult")
                    agent = used.get("agentId") if isinstance(used, dict) else None
                    if call_id in self.subagent_calls and isinstance(agent, str) and _AGENT_ID.match(agent):
                        self.agent_ids[call_id] = agent
                    text = _text_of(block.get("content"))
                    self.conversation.add_result(call_id, text, error=error)
                    step = self.conversation.calls.get(call_id) if error and call_id else None
                    if step is not None:
                        step.error = text
                elif block.get("type") in ("text", "image"):
                    texts.append(_text_of([block]))
            if texts:
                self._user_text("\n".join(texts), record)
            return
        self._user_text(_text_of(content), record)

    def _user_text(self, text: str, record: dict[str, Any]) -> None:
        self.conversation.add_input(ChatMessage(role="user", content=text))
        self.interrupted = text.lstrip().startswith(_INTERRUPTED)
        if not self.first_prompt:
            self.first_prompt = text
        if not self.task and not record.get("isMeta") and not text.lstrip().startswith(_NOT_TASK):
            self.task = text

    def trajectory(self, metadata: dict[str, Any] | None = None, parent: ParentLink | None = None) -> Trajectory:
        self.conversation.end_response()
        status = "api_error" if self.ended_on_error else "interrupted" if self.interrupted else None
        data = {**self.metadata, "models": self.models, "message_records": self.messages, **(metadata or {})}
        outcome = Outcome(
            status=status,
            error=self.last_error or "api_error" if self.ended_on_error else None,
            answer=self.answer if self.answer and self.answer.strip() else None,
            scores={"tool_errors": self.tool_errors, "api_errors": self.api_errors},
        )
        return Trajectory(
            id=self.id,
            format=FORMAT,
            task=self.task,
            metadata=data,
            steps=self.conversation.steps,
            outcome=outcome,
            parent=parent,
        )


_UUID = re.compile(r"\A[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


def _read_file(path: Path, counting: bool = False) -> Iterator[ReadItem]:
    """A session file's episodes (``counting``: steps without prompts, for an index)."""
    state = _SessionFile(path, counting)
    for number, record in jsonl_records(path):
        state.add(number, record)
    yield from state.finish()


def _counted_file(path: Path) -> Iterator[ReadItem]:
    return _read_file(path, counting=True)


class _SessionFile:
    """One session file read so far: its main chain as one episode, then its sub-agents.

    A file is one conversation even when its records carry several ``sessionId`` values (a
    resumed session continues the same ``parentUuid`` chain under a new id; hook dumps interleave
    them), so the episode is the file's, and every id it holds is listed in the metadata.
    Followed (``--follow``), its records are added as lines complete and a :meth:`fork` is
    finished each time; sub-agent transcript files (2.x) are read whole by each finish."""

    def __init__(self, path: Path, counting: bool = False):
        self.path = path
        self.counting = counting
        self.main = _Session(path.stem if _UUID.match(path.stem) else "", path.name, counting)
        self.session_ids: list[str] = []
        self.chains: dict[str, _Session] = {}
        """A sidechain record's uuid → the thread it belongs to (1.x inline sub-agents)."""
        self.sidechains: list[_Session] = []
        self.progress: dict[str, _Session] = {}
        """A Task call id → its sub-agent's thread, from ``agent_progress`` records (2.x)."""
        self.summaries: list[dict[str, Any]] = []
        self.problems: list[LoadProblem] = []

    def fork(self) -> _SessionFile:
        """A copy whose :meth:`finish` leaves this one reading on (threads forked, links kept)."""
        clone = fork_state(self)
        threads = {id(thread): fork_state(thread) for thread in [self.main, *self.sidechains, *self.progress.values()]}
        clone.main = threads[id(self.main)]
        clone.main.conversation = self.main.conversation.fork(self.main.subagent_calls)  # finish links them
        clone.sidechains = [threads[id(thread)] for thread in self.sidechains]
        clone.chains = {uuid: threads[id(thread)] for uuid, thread in self.chains.items()}
        clone.progress = {call: threads[id(thread)] for call, thread in self.progress.items()}
        return clone

    def add(self, number: int, record: dict[str, Any] | LoadProblem) -> None:
        path, main, problems = self.path, self.main, self.problems
        if isinstance(record, LoadProblem):
            problems.append(record)
            return
        kind = record.get("type")
        if kind == "summary":
            self.summaries.append(record)
            return
        if kind == "progress":
            try:
                _progress(record, self.progress, path.name, self.counting)
            except Exception as exc:  # a record of an unforeseen shape is a problem, never a crash
                problems.append(
                    LoadProblem(file=path.name, field=f"line {number}", message=f"{type(exc).__name__}: {exc}")
                )
            return
        if kind not in _CONVERSATION_TYPES and kind != "system":
            return
        session_id = record.get("sessionId")
        if not isinstance(session_id, str):
            return
        try:
            if record.get("isSidechain"):
                parent = record.get("parentUuid")
                thread = self.chains.get(parent) if isinstance(parent, str) else None
                if thread is None:
                    if kind == "system":
                        return
                    thread = _Session(f"/sidechain-{len(self.sidechains) + 1}", path.name, self.counting)
                    thread.metadata["session_id"] = session_id
                    self.sidechains.append(thread)
                if isinstance(record.get("uuid"), str):
                    self.chains[record["uuid"]] = thread
                thread.add(record)
                return
            if kind in _CONVERSATION_TYPES and session_id not in self.session_ids:
                self.session_ids.append(session_id)
            main.add(record)
        except Exception as exc:  # a record of an unforeseen shape is a problem, never a crash
            problems.append(
                LoadProblem(
                    file=path.name,
                    session_id=session_id,
                    field=f"line {number}",
                    message=f"{type(exc).__name__}: {exc}",
                )
            )

    def finish(self) -> Iterator[ReadItem]:
        path, main, problems = self.path, self.main, self.problems
        sidechains, progress, session_ids = self.sidechains, self.progress, self.session_ids
        if not main.messages and not sidechains and progress:
            sidechains = list(progress.values())  # only a sub-agent's progress: its threads alone
            progress = {}
        if main.messages:
            main.id = main.id or session_ids[0]
            main.metadata["session_id"] = main.id
            titles = [
                s.get("summary")
                for s in self.summaries
                if isinstance(s.get("leafUuid"), str) and s["leafUuid"] in main.uuids
            ]
            extra: dict[str, Any] = {"session_ids": session_ids}
            if titles:
                extra["summaries"] = titles
            for thread in sidechains:
                thread.id = f"{main.id}{thread.id}"
            children = _children(path, main, sidechains, progress)
            yield main.trajectory(extra)
            yield from children
        elif sidechains:  # a sub-agent's own file (agent-<id>.jsonl), opened alone
            stem = path.stem
            for number, thread in enumerate(sidechains):
                parent = thread.metadata["session_id"]
                thread.id = stem if len(sidechains) == 1 else f"{stem}/sidechain-{number + 1}"
                yield thread.trajectory(parent=ParentLink(episode=parent, source="sidechain"))
        else:
            problems = [
                LoadProblem(file=path.name, message="no Claude Code session records (type user/assistant)"),
                *problems,
            ]
        yield from problems


def _progress(record: dict[str, Any], threads: dict[str, _Session], file: str, counting: bool) -> None:
    """An ``agent_progress`` record: one message of the sub-agent a Task call started, written
    into the session file as it runs (2.x; the same messages as its ``agent-<id>.jsonl``)."""
    data = record.get("data")
    call_id = record.get("parentToolUseID")
    if not isinstance(data, dict) or data.get("type") != "agent_progress" or not isinstance(call_id, str):
        return
    message = data.get("message")
    if not isinstance(message, dict) or message.get("type") not in _CONVERSATION_TYPES:
        return
    thread = threads.get(call_id)
    if thread is None:
        agent = data.get("agentId")
        name = f"agent-{agent}" if isinstance(agent, str) and _AGENT_ID.match(agent) else f"progress-{len(threads) + 1}"
        thread = threads[call_id] = _Session(f"/{name}", file, counting)
        thread.metadata["session_id"] = record.get("sessionId")
    uuid = message.get("uuid")
    if isinstance(uuid, str) and uuid in thread.uuids:
        return  # the same message written again
    thread.add(message)


def _children(path: Path, session: _Session, inline: list[_Session], progress: dict[str, _Session]) -> list[Trajectory]:
    """The session's sub-agents as trajectories, each linked to the Task call that started it:
    inline sidechains (1.x), transcript files (2.x), else the ``agent_progress`` records."""
    steps = session.conversation.calls
    children: list[Trajectory] = []

    def link(child: _Session, call_id: str | None, source: str) -> None:
        step = steps.get(call_id) if call_id is not None else None
        if step is not None:
            step.subagent = child.id
            if step.action is not None:
                source = step.action.name  # the mechanism: the Task (Agent) tool
            if step.tool_result is not None:  # where a user reading the Task's result sees it
                step.tool_result = f"[sub-agent episode: {child.id}]\n{step.tool_result}"
        children.append(child.trajectory(parent=ParentLink(episode=session.id, call_id=call_id, source=source)))

    by_prompt = {str(arguments.get("prompt", "")).strip(): call for call, arguments in session.subagent_calls.items()}
    for thread in inline:
        call_id = by_prompt.pop(thread.first_prompt.strip(), None)
        link(thread, call_id, "sidechain")
    seen: set[Path] = set()
    for call_id, agent in session.agent_ids.items():
        for candidate in (
            path.parent / path.stem / "subagents" / f"agent-{agent}.jsonl",
            path.parent / f"agent-{agent}.jsonl",
        ):
            if candidate.is_file() and candidate not in seen:
                seen.add(candidate)
                child = _agent_file(candidate, f"{session.id}/agent-{agent}", session.counting)
                if child is not None:
                    link(child, call_id, "sidechain")
                    progress.pop(call_id, None)  # the file holds the whole transcript
                break
    for call_id, thread in progress.items():
        thread.id = f"{session.id}{thread.id}"
        link(thread, call_id, "sidechain")
    folder = path.parent / path.stem / "subagents"
    if folder.is_dir():
        for candidate in sorted(folder.glob("agent-*.jsonl")):
            if candidate not in seen:
                child = _agent_file(candidate, f"{session.id}/{candidate.stem}", session.counting)
                if child is not None:
                    link(child, None, "sidechain")
    return children


def _stamp(file: Path) -> tuple[tuple[str, int, int], ...]:
    """What a session file's read depends on, as (path, mtime, size): the file, its 2.1
    ``subagents`` folder's transcripts and the 2.0 ``agent-*.jsonl`` beside it."""
    files = [file, *sorted((file.parent / file.stem / "subagents").glob("agent-*.jsonl"))]
    files.extend(sorted(file.parent.glob("agent-*.jsonl")))
    return stamp(files)


def _usage(usage: Any) -> TokenUsage | None:
    """A response's ``message.usage`` (the Anthropic API's: input excludes the cached tokens)."""
    return TokenUsage.read(
        usage,
        input="input_tokens",
        output="output_tokens",
        cache_read="cache_read_input_tokens",
        cache_write="cache_creation_input_tokens",
    )


def _agent_file(path: Path, child_id: str, counting: bool) -> _Session | None:
    """A sub-agent transcript file (2.x) as one thread; unreadable lines are skipped."""
    thread = _Session(child_id, path.name, counting)
    try:
        for _, record in jsonl_records(path):
            if isinstance(record, dict) and (
                record.get("type") in _CONVERSATION_TYPES or record.get("type") == "system"
            ):
                thread.add(record)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return thread if thread.messages else None
