"""SWE-agent ``.traj`` files and mini-swe-agent trajectories as trajectories (one file = one episode).

Two families, one reader:

* **SWE-agent** (``sweagent/types.py``): ``{"environment", "trajectory": [{action, observation,
  response, thought, state, execution_time, query | messages, extra_info}], "history": [chat
  messages with message_type, thought, action, tool_calls], "info": {exit_status, submission,
  model_stats, edited_files*}, "replay_config"}``. Each ``trajectory[i]`` is a step: what the model
  saw (``observation`` = the previous step's observation), ``thinking`` = ``thought``, ``content`` =
  ``response``, the action as a tool call (the ``tool_calls`` of the matching ``history`` message
  with function calling, else ``bash``/the SWE-agent command named by the action's first word with
  ``{"command": action}``), ``tool_result`` = this step's ``observation``, the prompt = the step's
  ``query``/``messages`` (cut before the step's own answer) or else the history before it. A file
  with only ``history`` (no ``trajectory``) is read message by message like mini-swe-agent.
* **mini-swe-agent** (``DefaultAgent.serialize()``): ``{"info", "messages", "trajectory_format":
  "mini-swe-agent-1.1", "instance_id"}``, or older bare lists of messages. Each ``assistant`` message
  is a step: the action is its first tool call, else the command mini parsed (``extra.actions``),
  else its ```bash (1.x) / ```mswea_bash_command (2.x) block as ``bash({"command": ...})`` when it
  has exactly one (mini's rule: with two or more the turn is a format error and nothing runs, so
  the step has no call; its blocks are in ``extra["commands"]``; mini 2 records such an answer only
  in its format error's ``extra.model_response``: a step without a call too); ``thinking`` =
  ``reasoning_content``; the prompt = the messages before it; ``tool_result`` = the observation
  message(s) after it.

Outcome: ``status`` = ``info.exit_status`` verbatim (``submitted``, ``exit_cost``, ``Submitted``,
``LimitsExceeded``, an exception's class name such as ``Timeout``...); ``error`` = the exception
(mini: ``exception_str`` then the ``traceback``; SWE-agent: the ``Exit due to ...`` message of an
``exit_error``/``exit_api``/``exit_environment_error``); ``answer`` = the submission (the patch) when
the run did not crash; ``success`` when the file has a ``resolved`` flag or a SWE-bench report beside
it names the instance (``report.json``: resolved, each test category a check; ``results.json``:
``resolved_ids``); ``scores`` = the submission's length and ``model_stats``; the rest of ``info``
verbatim in ``extra``.

Step facts where recorded: SWE-agent's ``execution_time`` → ``duration``; mini 2's assistant
``extra`` (``timestamp``, ``cost``, the response's ``model`` and ``usage``) → ``timestamp``,
``usage``, ``model``; ``model_stats`` (``tokens_sent``/``tokens_received``, ``instance_cost``) →
the episode's ``usage``.

The file is one JSON document, parsed whole with orjson (stdlib ``json`` as a fallback for
NaN/Infinity or bad UTF-8, with a warning). The reader indexes (``index``: the episode's counts and
outcome from bare steps, with the read's problems; ``load``: the episode built whole, from the
document and messages the index parsed when the file has not changed since), so a folder of runs
holds one run's document, not every episode. A rejected turn's observation is what came since the
model's previous turn (back to the format error that answered it). Nothing raises on bad input: a bad field is a
:class:`LoadProblem` and the rest of the episode still loads.
"""

from __future__ import annotations

import functools
import json
import mmap
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replay_tui.episodes.model import (
    ChatMessage,
    MessageView,
    Outcome,
    OutcomeCheck,
    StepKind,
    TokenUsage,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    non_negative,
    parse_timestamp,
)
from replay_tui.episodes.problems import LoadProblem
from replay_tui.fileio import open_regular, read_capped
from replay_tui.formats.base import HEAD_BYTES, Detection, EpisodeSummary, ReadItem

FORMAT = "swe-agent"

SWE_AGENT_COMMANDS = frozenset(
    {
        "append",
        "create",
        "edit",
        "exit_forfeit",
        "filemap",
        "find_file",
        "goto",
        "insert",
        "open",
        "scroll_down",
        "scroll_up",
        "search_dir",
        "search_file",
        "skip",
        "str_replace_editor",
        "submit",
    }
)
"""SWE-agent's own tools (its bundles); any other command line is a ``bash`` call."""

_BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
"""mini-swe-agent 1.x's ``action_regex``: a turn runs only when its text holds exactly one such block."""
_MSWEA_BLOCK = re.compile(r"```mswea_bash_command\s*\n(.*?)\n```", re.DOTALL)
"""mini-swe-agent 2.x's text-based models' ``action_regex`` (the same rule)."""
_MINI_FORMAT = re.compile(rb'"trajectory_format"\s*:\s*"mini-swe-agent')
_TRAJECTORY = re.compile(rb'"trajectory"\s*:\s*\[')
_HISTORY = re.compile(rb'"history"\s*:\s*\[')
_STEP_KEY = re.compile(rb'"(action|observation|thought|response)"\s*:')
_MESSAGE_TYPE = re.compile(rb'"message_type"\s*:\s*"(system_prompt|observation|action|thought|demonstration)"')
_MESSAGES = re.compile(rb'"messages"\s*:\s*\[')
_INFO_MINI = re.compile(rb'"(mini_version|exit_status)"\s*:')
_INFO = re.compile(rb'"info"\s*:')
_MINI_VERSION = re.compile(rb'"mini_version"\s*:')
_FIRST_KEY = re.compile(rb'\{\s*"(\w+)"\s*:')
_OWN_KEYS = frozenset(
    {"info", "messages", "trajectory_format", "instance_id", "trajectory", "history", "environment", "replay_config"}
)
"""Top-level keys of SWE-agent and mini-swe-agent files: a head that starts with one and decides
nothing is searched further."""
_ROLE = re.compile(rb'"role"\s*:\s*"(system|user|assistant|tool)"')
_MINI_MARKS = re.compile(rb"<returncode>|```mswea_bash_command|COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT")
_PR_DESCRIPTION = re.compile(r"Consider the following PR description:\s*\n(.*?)\n</pr_description>", re.DOTALL)
_ISSUE = re.compile(r"ISSUE:\n(.*?)\n\s*\nINSTRUCTIONS:", re.DOTALL)
_OBSERVATION_ROLES = ("tool", "user")
_SWE_AGENT_ERRORS = re.compile(r"\b(exit_error|exit_api|exit_environment_error)\b")
"""SWE-agent's exit statuses for a run that broke (``agents.py``: runtime, API retry and environment
errors); its other ``exit_*`` statuses are limits the agent reached (cost, context, time, format)."""
_REPORT_NAMES = ("results.json", "report.json")
"""SWE-bench evaluation reports a trajectory's folder or its parent may hold: SWE-agent's
``results.json`` (``resolved_ids``..., what its inspector reads) and the harness's per-instance
``report.json`` (``{instance_id: {resolved, tests_status}}``)."""
_REPORT_CAP = 16 * 1024 * 1024
_TEST_KINDS = ("FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL")


class SweAgentReader:
    name = FORMAT
    label = "SWE-agent .traj and mini-swe-agent trajectories"
    description = (
        "SWE-agent: observation = previous step's observation, prompt = query/messages (else history), "
        "thinking = thought, content = response, action = history tool_calls[0] or bash/command(action), "
        "tool_result = observation; mini-swe-agent: each assistant message a step, action = tool call or "
        "```bash block, thinking = reasoning_content; outcome status = info.exit_status, error = exception, "
        "answer = submission, success = resolved (a SWE-bench report beside the file)"
    )

    def sniff(self, path: Path, head: bytes) -> Detection:
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        start = text[:1]
        if start not in (b"{", b"["):
            return Detection.no("not JSON")
        if start == b"{":
            found = _sniff_object(head)
            if found is not None:
                return found
            first = _FIRST_KEY.match(text)
            if len(head) >= HEAD_BYTES and first is not None and first.group(1).decode() in _OWN_KEYS:
                # the head is one long value (a submitted patch, a config): the keys may come later
                found = _sniff_whole(path)
                if found is not None:
                    return found
            if _TRAJECTORY.search(head):
                return Detection.no("a trajectory list without SWE-agent step fields (action, observation, thought)")
            return Detection.no("no trajectory/history, nor mini-swe-agent info and messages")
        if _ROLE.search(head) and _MINI_MARKS.search(head):
            return Detection.yes("mini-swe-agent message list (<returncode> observations / bash blocks)", 0.95)
        return Detection.no("a JSON list without mini-swe-agent messages")

    def read(self, path: Path) -> Iterator[ReadItem]:
        try:
            data = path.read_bytes()
        except OSError as exc:
            yield LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
            return
        builder = _Builder(path)
        trajectory = builder.build(data)
        if trajectory is not None:
            yield trajectory
        yield from builder.problems

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """The file's one episode as :meth:`read` counts it, with the same problems, from bare steps
        (no prompt, observation or telemetry is built). The parsed document is kept for the
        :meth:`load` that usually follows (one file's at a time: a folder of runs holds one)."""
        try:
            with open_regular(path) as handle:
                stamp = _stamp(path, os.fstat(handle.fileno()))
                data = handle.read()
        except OSError as exc:
            yield LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
            return
        builder = _Builder(path, counting=True)
        doc = builder.parse(data)
        del data
        trajectory = builder.map(doc)
        _LAST_PARSED.keep(stamp, doc, builder.validated)
        if trajectory is not None:
            yield EpisodeSummary.of(trajectory, 0, stamp)
        yield from builder.problems

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The episode read whole: from the document the index parsed when the file is unchanged."""
        try:
            builder = _Builder(path)
            with open_regular(path) as handle:
                stamp = _stamp(path, os.fstat(handle.fileno()))
                doc, builder.validated = _LAST_PARSED.take(stamp)
                if doc is _UNREADABLE:
                    doc = builder.parse(handle.read())
        except OSError as exc:
            return LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
        trajectory = builder.map(doc)
        errors = [problem for problem in builder.problems if problem.severity == "error"]
        if trajectory is None:
            return errors[0] if errors else LoadProblem(file=path.name, message="no episode in the file")
        if trajectory.id != summary.id:
            return LoadProblem(
                file=path.name, session_id=summary.id, message="the file changed since it was indexed: reopen it"
            )
        return trajectory


READER = SweAgentReader()
_UNREADABLE = object()
"""A file that is no JSON document (its problem said)."""


def _stamp(path: Path, found: os.stat_result) -> tuple[str, int, int, int]:
    """A file's identity and version: a rewritten file is parsed again."""
    return str(path), found.st_ino, found.st_mtime_ns, found.st_size


class _ParsedSlot:
    """The last document :meth:`SweAgentReader.index` parsed (and its messages, validated), until its
    :meth:`~SweAgentReader.load` takes it: opening a long run parses and validates its file once
    (the two are most of building it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stamp: tuple[str, int, int, int] | None = None
        self._kept: tuple[Any, list[ChatMessage | None] | None] = (_UNREADABLE, None)

    def keep(self, stamp: tuple[str, int, int, int], doc: Any, messages: list[ChatMessage | None] | None) -> None:
        with self._lock:
            self._stamp, self._kept = stamp, (doc, messages)

    def take(self, stamp: tuple[str, int, int, int]) -> tuple[Any, list[ChatMessage | None] | None]:
        """What was kept for ``stamp`` (given once), else ``(_UNREADABLE, None)``."""
        with self._lock:
            if self._stamp != stamp:
                return _UNREADABLE, None
            kept, self._stamp, self._kept = self._kept, None, (_UNREADABLE, None)
            return kept


_LAST_PARSED = _ParsedSlot()


def _sniff_object(data: bytes | mmap.mmap) -> Detection | None:
    """What the keys found in ``data`` (a JSON object's head, or the whole file) say; None: nothing.

    The patterns match keys only: a quote inside a JSON string is escaped, so ``"messages"`` followed
    by ``:`` is never the text of a value (a submitted patch that quotes a trajectory)."""
    if _MINI_FORMAT.search(data):
        return Detection.yes('"trajectory_format": "mini-swe-agent..."')
    if _TRAJECTORY.search(data) and len(_distinct(_STEP_KEY.finditer(data), 2)) >= 2:
        return Detection.yes("SWE-agent trajectory (steps with action/observation/thought)", 0.95)
    if _HISTORY.search(data) and _MESSAGE_TYPE.search(data):
        return Detection.yes("SWE-agent history (messages with message_type)", 0.9)
    if _MESSAGES.search(data) and _INFO.search(data):
        if _MINI_VERSION.search(data):
            return Detection.yes("mini-swe-agent run (info.mini_version, messages)")
        if _INFO_MINI.search(data):
            return Detection.yes("mini-swe-agent run (info.exit_status, messages)", 0.9)
    return None


def _distinct(matches: Iterator[re.Match[bytes]], enough: int) -> set[bytes]:
    found: set[bytes] = set()
    for match in matches:
        found.add(match.group(1))
        if len(found) >= enough:
            break
    return found


def _sniff_whole(path: Path) -> Detection | None:
    """:func:`_sniff_object` over the whole file (memory-mapped: the searches run in C, nothing is
    parsed), for a head that holds no key to decide by; None when it cannot be read."""
    try:
        with open_regular(path) as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return None
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                found = _sniff_object(data)
    except (OSError, ValueError):
        return None
    if found is None:
        return None
    return Detection(found.score, found.reason + ", found past the file's head")


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".json", ".traj"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name or path.name


def _mini_telemetry(step: TrajectoryStep, extra: dict[str, Any]) -> None:
    """mini-swe-agent 2's assistant message ``extra``: its ``timestamp``, ``cost`` and the model's
    ``response`` (LiteLLM's: ``model``, ``usage`` prompt/completion/total and cached tokens)."""
    response = _dict(extra.get("response"))
    usage = _dict(response.get("usage"))
    details = _dict(usage.get("prompt_tokens_details"))
    step.timestamp = parse_timestamp(extra.get("timestamp"))
    step.usage = TokenUsage.of(
        input=usage.get("prompt_tokens"),
        output=usage.get("completion_tokens"),
        cache_read=details.get("cached_tokens"),
        total=usage.get("total_tokens"),
        cost=extra.get("cost"),
    )
    model = response.get("model")
    step.model = model if isinstance(model, str) and model else None


def _bare_step(
    index: int, action: ToolCall | None, content: str, thinking: str, *, told: bool = True
) -> TrajectoryStep:
    """A step as an index counts it: its call and its text (what the outcome reads of the last step);
    ``told``: its kind is said, as the whole read says it."""
    kind: StepKind | None = ("decision" if action is not None else "message") if told else None
    # an index counts calls and shows none: the tool's name stands for the action text, which the step
    # would otherwise make by serialising every call's arguments (once more than the episode's load does)
    text = action.name if action is not None else ""
    return TrajectoryStep(
        index=index, label=str(index), content=content, thinking=thinking, action=action, action_text=text, kind=kind
    )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class _Builder:
    """Maps one parsed file; collects its problems (every one located by field)."""

    def __init__(self, path: Path, counting: bool = False):
        self.path = path
        self.counting = counting
        """Steps without their prompt, observations or telemetry (an index's counts; the same problems)."""
        self.validated: list[ChatMessage | None] | None = None
        """A message list's messages as validated (by the index, for its load: validated once)."""
        self.file = path.name
        self.id = _stem(path)
        self.ending: dict[str, Any] = {}
        """The ``extra`` of mini 2's ``exit`` message (exit status, exception, traceback)."""
        self.problems: list[LoadProblem] = []

    def problem(self, field: str | None, message: str, severity: str = "error") -> None:
        self.problems.append(
            LoadProblem(
                file=self.file,
                index=0,
                session_id=self.id,
                field=field,
                message=message,
                severity="warning" if severity == "warning" else "error",
            )
        )

    # -- parsing ---------------------------------------------------------------------------------

    def build(self, data: bytes) -> Trajectory | None:
        return self.map(self.parse(data))

    def parse(self, data: bytes) -> Any:
        """The file's JSON document; :data:`_UNREADABLE` (the problem said) when it is none."""
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        if not data.strip():
            self.problems.append(LoadProblem(file=self.file, message="empty file"))
            return _UNREADABLE
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            try:
                doc = json.loads(data.decode("utf-8", errors="replace"))
            except (ValueError, RecursionError):
                self.problems.append(LoadProblem(file=self.file, message=f"not JSON: {exc}"))
                return _UNREADABLE
            self.problem(
                None, f"not strict JSON ({exc}); read leniently (NaN/Infinity kept, bad bytes as U+FFFD)", "warning"
            )
            return doc

    def map(self, doc: Any) -> Trajectory | None:
        """The parsed document as a trajectory (None when it is not one: the problem is said)."""
        if doc is _UNREADABLE:
            return None
        if isinstance(doc, list):
            return self.mini(doc, {}, None)
        if not isinstance(doc, dict):
            self.problems.append(
                LoadProblem(file=self.file, message=f"top level is a JSON {type(doc).__name__}, not an object or list")
            )
            return None
        if "trajectory" in doc or "history" in doc:
            return self.swe_agent(doc)
        if "messages" in doc:
            info = doc.get("info")
            if info is not None and not isinstance(info, dict):
                self.problem("info", f"expected an object, got {type(info).__name__}")
            messages = doc.get("messages")
            if not isinstance(messages, list):
                self.problem("messages", f"expected a list of messages, got {type(messages).__name__}")
                messages = []
            instance = doc.get("instance_id")
            if isinstance(instance, str) and instance:
                self.id = instance
            return self.mini(messages, _dict(info), doc)
        self.problems.append(
            LoadProblem(
                file=self.file, message="no trajectory, history or messages: not a SWE-agent/mini-swe-agent file"
            )
        )
        return None

    def text(self, value: Any, field: str) -> str:
        """A text field; content-part lists are joined, other types are a problem (kept as JSON)."""
        if isinstance(value, str):
            return value
        if value is None:
            return ""
        if isinstance(value, list) and all(isinstance(part, dict) for part in value):
            return "\n".join(str(part.get("text", "")) for part in value if part.get("type", "text") == "text")
        self.problem(field, f"expected text, got {type(value).__name__}", "warning")
        return _dump(value)

    def tool_call(self, raw: Any, field: str) -> ToolCall | None:
        if not isinstance(raw, dict):
            self.problem(field, f"expected a tool call object, got {type(raw).__name__}")
            return None
        nested = raw.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else raw
        name = function.get("name")
        if not isinstance(name, str) or not name:
            self.problem(f"{field}.function.name", "tool call without a name")
            return None
        arguments = function.get("arguments", function.get("input"))
        call_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        if isinstance(arguments, dict):
            return ToolCall(name=name, arguments=arguments, id=call_id)
        if arguments is None or arguments == "":
            return ToolCall(name=name, id=call_id)
        if isinstance(arguments, str):
            try:
                parsed = orjson.loads(arguments)
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict):
                return ToolCall(name=name, arguments=parsed, id=call_id)
            self.problem(f"{field}.function.arguments", "arguments are not a JSON object; kept as text", "warning")
            return ToolCall(name=name, id=call_id, raw_arguments=arguments)
        self.problem(
            f"{field}.function.arguments", f"arguments are a {type(arguments).__name__}; kept as text", "warning"
        )
        return ToolCall(name=name, id=call_id, raw_arguments=_dump(arguments))

    def tool_calls(self, raw: Any, field: str) -> list[ToolCall]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.problem(field, f"expected a list of tool calls, got {type(raw).__name__}")
            return []
        calls = [self.tool_call(item, f"{field}[{i}]") for i, item in enumerate(raw)]
        return [call for call in calls if call is not None]

    def message(self, raw: Any, field: str) -> ChatMessage | None:
        if not isinstance(raw, dict):
            if raw != {}:
                self.problem(field, f"expected a message object, got {type(raw).__name__}")
            return None
        if not raw:
            return None  # SWE-agent's default query is [{}]
        role = raw.get("role")
        if not isinstance(role, str) or not role:
            self.problem(f"{field}.role", "message without a role")
            role = "unknown"
        extras: dict[str, Any] = {}
        for key in ("agent", "message_type", "is_demo", "tags", "thought", "action"):
            if key in raw:
                extras[key] = raw[key]
        tool_call_id = raw.get("tool_call_id")
        if tool_call_id is None and isinstance(raw.get("tool_call_ids"), list) and raw["tool_call_ids"]:
            tool_call_id = raw["tool_call_ids"][0]
        name = raw.get("name")
        return ChatMessage(
            role=role,
            content=self.text(raw.get("content"), f"{field}.content"),
            tool_calls=self.tool_calls(raw.get("tool_calls"), f"{field}.tool_calls"),
            tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
            name=name if isinstance(name, str) else None,
            reasoning=self.reasoning(raw, field) or None,
            **extras,
        )

    def reasoning(self, raw: dict[str, Any], field: str) -> str:
        for key in ("reasoning_content", "reasoning"):
            value = raw.get(key)
            if isinstance(value, str) and value:
                return value
        blocks = raw.get("thinking_blocks")
        if isinstance(blocks, list):
            parts = [b.get("thinking", "") for b in blocks if isinstance(b, dict)]
            if any(parts):
                return "\n".join(p for p in parts if isinstance(p, str))
        response = _dict(_dict(raw.get("extra")).get("response"))
        choices = response.get("choices")
        if isinstance(choices, list) and choices:
            value = _dict(_dict(choices[0]).get("message")).get("reasoning_content")
            if isinstance(value, str):
                return value
        return ""

    def messages(self, raw: Any, field: str) -> list[ChatMessage | None]:
        return [self.message(item, f"{field}[{i}]") for i, item in enumerate(raw)]

    # -- SWE-agent ---------------------------------------------------------------------------------

    def swe_agent(self, doc: dict[str, Any]) -> Trajectory:
        replay = doc.get("replay_config")
        if isinstance(replay, str):
            try:
                replay = orjson.loads(replay)
            except orjson.JSONDecodeError:
                self.problem("replay_config", "a text that is not JSON", "warning")
        replay = _dict(replay)
        statement = _dict(replay.get("problem_statement"))
        if isinstance(statement.get("id"), str) and statement["id"]:
            self.id = statement["id"]
        info = doc.get("info")
        if info is not None and not isinstance(info, dict):
            self.problem("info", f"expected an object, got {type(info).__name__}")
        info = _dict(info)

        history_raw = doc.get("history")
        if history_raw is not None and not isinstance(history_raw, list):
            self.problem("history", f"expected a list of messages, got {type(history_raw).__name__}")
        history_raw = history_raw if isinstance(history_raw, list) else []
        history = self.messages(history_raw, "history")

        task = statement.get("text") if isinstance(statement.get("text"), str) else ""
        if not task:
            task = _task_from_messages(history, _ISSUE)

        trajectory_raw = doc.get("trajectory")
        if trajectory_raw is None:
            steps = self.message_steps(history_raw, history, "history")
        elif not isinstance(trajectory_raw, list):
            self.problem("trajectory", f"expected a list of steps, got {type(trajectory_raw).__name__}")
            steps = self.message_steps(history_raw, history, "history")
        else:
            steps = self.swe_steps(trajectory_raw, history_raw, history)

        metadata: dict[str, Any] = {}
        if "environment" in doc:
            metadata["environment"] = doc["environment"]
        model = _dict(_dict(replay.get("agent")).get("model")).get("name")
        if model is not None:
            metadata["model"] = model
        for key in ("model_stats", "swe_agent_version", "swe_agent_hash", "swe_rex_version"):
            if key in info:
                metadata[key] = info[key]
        extra = {
            key: value for key, value in doc.items() if key not in ("trajectory", "history", "info", "environment")
        }
        return self.finish(task, steps, info, metadata, extra)

    def swe_steps(
        self, trajectory_raw: list[Any], history_raw: list[Any], history: list[ChatMessage | None]
    ) -> list[TrajectoryStep]:
        actions = [
            i for i, m in enumerate(history) if m is not None and m.role == "assistant" and not _extra(m, "is_demo")
        ]
        steps: list[TrajectoryStep] = []
        previous_observation: str | None = None
        for i, raw in enumerate(trajectory_raw):
            field = f"trajectory[{i}]"
            if not isinstance(raw, dict):
                self.problem(field, f"expected a step object, got {type(raw).__name__}; step skipped")
                continue
            action_text = self.text(raw.get("action"), f"{field}.action")
            observation_after = self.text(raw.get("observation"), f"{field}.observation")
            position = actions[i] if i < len(actions) else None
            source = _dict(history_raw[position]) if position is not None else {}
            if source and isinstance(source.get("action"), str) and source["action"].strip() != action_text.strip():
                source, position = {}, None  # the history no longer lines up with the steps
            calls = self.tool_calls(source.get("tool_calls"), f"history[{actions[i]}].tool_calls") if source else []
            action = calls[0] if calls else _command_call(action_text)

            prompt, prompt_source = self.swe_prompt(raw, field, action_text, history, position, i == len(actions))
            observation = previous_observation if previous_observation is not None else _last_observation(prompt)
            extra: dict[str, Any] = {"prompt_source": prompt_source}
            for key in ("state", "execution_time", "extra_info"):
                if key in raw:
                    extra[key] = raw[key]
            if len(calls) > 1:
                extra["tool_calls"] = [call.model_dump() for call in calls]
            if source.get("thinking_blocks"):
                extra["thinking_blocks"] = source["thinking_blocks"]
            state = raw.get("state")
            steps.append(
                TrajectoryStep(
                    index=len(steps),
                    label=str(i),
                    observation=observation,
                    messages=prompt,
                    thinking=self.text(raw.get("thought"), f"{field}.thought"),
                    content=self.text(raw.get("response"), f"{field}.response"),
                    action=action,
                    action_text=action_text,
                    tool_result=observation_after,
                    state=state if isinstance(state, str) else None,
                    extra=extra,
                    kind="decision",
                    duration=non_negative(raw.get("execution_time")),
                )
            )
            previous_observation = observation_after
        return steps

    def swe_prompt(
        self,
        raw: dict[str, Any],
        field: str,
        action_text: str,
        history: list[ChatMessage | None],
        position: int | None,
        next_after_history: bool,
    ) -> tuple[list[ChatMessage], str]:
        """The messages the model saw: ``query`` as recorded; ``messages`` cut before the step's own
        answer (the replay variant records the history after the step); else the history before it."""
        for key in ("query", "messages"):
            value = raw.get(key)
            if value is None:
                continue
            if not isinstance(value, list):
                self.problem(f"{field}.{key}", f"expected a list of messages, got {type(value).__name__}")
                continue
            parsed = [m for m in self.messages(value, f"{field}.{key}") if m is not None]
            if not parsed:
                continue
            if key == "messages":
                last = max((j for j, m in enumerate(parsed) if m.role == "assistant"), default=None)
                if last is not None and str(_extra(parsed[last], "action") or "").strip() == action_text.strip():
                    parsed = parsed[:last]
            return parsed, key
        if position is not None:
            return [m for m in history[:position] if m is not None], "history"
        if next_after_history:
            return [m for m in history if m is not None], "history"
        return [], "none"

    # -- message lists (mini-swe-agent; SWE-agent history-only files) -------------------------------

    def mini(self, messages_raw: list[Any], info: dict[str, Any], doc: dict[str, Any] | None) -> Trajectory:
        known = self.validated
        messages = known if known is not None else self.messages(messages_raw, "messages")
        self.validated = messages
        exits = [_dict(m) for m in messages_raw if isinstance(m, dict) and m.get("role") == "exit"]
        if exits:
            # mini 2's exit message holds what ended the run; an interactive run's info lacks the
            # exception (serialize() copies only exit_status and submission from it)
            self.ending = _dict(exits[-1].get("extra"))
            info = info or self.ending
        task = _task_from_messages(messages, _PR_DESCRIPTION)
        steps = self.message_steps(messages_raw, messages, "messages")
        config = _dict(info.get("config"))
        metadata: dict[str, Any] = {}
        model = _dict(config.get("model")).get("model_name")
        if model is not None:
            metadata["model"] = model
        for key in ("model_stats", "mini_version"):
            if key in info:
                metadata[key] = info[key]
        if doc is not None and "trajectory_format" in doc:
            metadata["trajectory_format"] = doc["trajectory_format"]
        extra = {key: value for key, value in (doc or {}).items() if key not in ("messages", "info")}
        return self.finish(task, steps, info, metadata, extra)

    def message_steps(
        self, messages_raw: list[Any], messages: list[ChatMessage | None], field: str
    ) -> list[TrajectoryStep]:
        steps: list[TrajectoryStep] = []
        # each step's prompt is a view of one list's prefix (filtering, validating or even copying
        # every earlier message again for each step made long runs quadratic)
        kept = [m for m in messages if m is not None]
        kept_before = 0
        v2 = any(m is not None and m.role != "assistant" and "```mswea_bash_command" in m.content for m in messages)
        blocks = _MSWEA_BLOCK if v2 else _BASH_BLOCK
        for i, message in enumerate(messages):
            if i and messages[i - 1] is not None:
                kept_before += 1
            if message is not None and message.role == "user":
                prompt = MessageView.prefix(kept, kept_before)
                rejected_step = self.rejected_answer(messages_raw, messages, i, blocks, len(steps), prompt)
                if rejected_step is not None:
                    steps.append(rejected_step)
                continue
            if message is None or message.role != "assistant" or _extra(message, "is_demo"):
                continue
            raw = _dict(messages_raw[i])
            calls = list(message.tool_calls)
            commands, rejected = self.commands(raw, message, blocks)
            if calls:
                action: ToolCall | None = calls[0]
            elif isinstance(raw.get("action"), str):
                action = _command_call(raw["action"])  # SWE-agent history: its own command names
            else:
                action = ToolCall(name="bash", arguments={"command": commands[0]}) if commands else None
            if action is None and not rejected:
                self.problem(f"{field}[{i}]", "assistant message without a tool call or a bash block", "warning")
            if self.counting:
                thought = raw.get("thought")
                thinking = message.reasoning or (thought if isinstance(thought, str) else "")
                steps.append(_bare_step(len(steps), action, message.content, thinking))
                continue
            before = _observations(messages, range(i - 1, -1, -1))[::-1]
            after = _observations(messages, range(i + 1, len(messages)))
            raw_extra = _dict(raw.get("extra"))
            tool_result = _result_for(action, after)
            extra: dict[str, Any] = {}
            if raw_extra:
                extra["message_extra"] = raw_extra
            if len(calls) > 1:
                extra["tool_calls"] = [call.model_dump() for call in calls]
            if not calls and len(commands) > 1:
                extra["commands"] = commands
            if rejected:
                extra["commands"] = rejected
                extra["format_error"] = (
                    f"{len(rejected)} bash blocks: mini-swe-agent runs a turn only with exactly one, so none ran"
                )
            if len(after) > 1:
                extra["tool_results"] = [m.content for m in after]
            thought = raw.get("thought")
            thinking = message.reasoning or (thought if isinstance(thought, str) else "")
            step = TrajectoryStep(
                index=len(steps),
                label=str(len(steps)),
                observation="\n\n".join(m.content for m in before),
                thinking=thinking,
                content=message.content,
                action=action,
                action_text=raw["action"] if isinstance(raw.get("action"), str) and action else "",
                tool_result=tool_result,
                extra=extra,
                kind="decision" if action is not None else "message",
            )
            _mini_telemetry(step, raw_extra)
            step.messages = MessageView.prefix(kept, kept_before)  # validated already, as parts of ``messages``
            steps.append(step)
        return steps

    def rejected_answer(
        self,
        messages_raw: list[Any],
        messages: list[ChatMessage | None],
        i: int,
        blocks: re.Pattern[str],
        index: int,
        prompt: MessageView,
    ) -> TrajectoryStep | None:
        """mini 2's format error (a user message whose ``extra.model_response`` is the answer it
        rejected; mini 2 records no assistant message for it) as a step without a call; ``prompt``:
        the messages before it, a view of the run's one list (a copy per step is quadratic)."""
        extra = _dict(_dict(messages_raw[i]).get("extra"))
        answer = extra.get("model_response")
        if extra.get("interrupt_type") != "FormatError" or not isinstance(answer, str):
            return None
        message = messages[i]
        assert message is not None
        if self.counting:
            return _bare_step(index, None, answer, "", told=False)
        found = [block.strip() for block in blocks.findall(answer)]
        count = extra.get("n_actions", len(found))
        step_extra: dict[str, Any] = {
            "message_extra": extra,
            "format_error": f"{count} bash blocks: mini-swe-agent runs a turn only with exactly one, so none ran",
        }
        if found:
            step_extra["commands"] = found
        before = _since_rejected(messages_raw, messages, i)
        step = TrajectoryStep(
            index=index,
            label=str(index),
            observation="\n\n".join(m.content for m in before),
            content=answer,
            tool_result=message.content,
            extra=step_extra,
        )
        step.messages = prompt  # validated already, as parts of ``messages``
        return step

    def commands(
        self, raw: dict[str, Any], message: ChatMessage, blocks: re.Pattern[str]
    ) -> tuple[list[str], list[str]]:
        """The commands a text-based answer ran, and the bash blocks of one the agent rejected.

        What mini parsed (``extra.actions``) or SWE-agent ran (``action``) when recorded; else the
        answer's bash blocks by mini's own rule (``parse_action``: exactly one block, else a format
        error and nothing runs)."""
        actions = _dict(raw.get("extra")).get("actions")
        if isinstance(actions, list):
            found = [a.get("command") for a in actions if isinstance(a, dict)]
            commands = [c for c in found if isinstance(c, str)]
            if commands:
                return commands, []
        if isinstance(raw.get("action"), str) and raw["action"].strip():
            return [raw["action"]], []
        found_blocks = [block.strip() for block in blocks.findall(message.content)]
        if len(found_blocks) > 1:
            return [], found_blocks
        return found_blocks, []

    # -- outcome -------------------------------------------------------------------------------

    def finish(
        self,
        task: str,
        steps: list[TrajectoryStep],
        info: dict[str, Any],
        metadata: dict[str, Any],
        extra: dict[str, Any],
    ) -> Trajectory:
        status = info.get("exit_status")
        if status is not None and not isinstance(status, str):
            self.problem("info.exit_status", f"expected text, got {type(status).__name__}", "warning")
            status = str(status)
        scores: dict[str, Any] = {}
        submission = info.get("submission")
        if isinstance(submission, str):
            scores["submission_length"] = len(submission)
        elif submission is not None:
            submission = _dump(submission)
            scores["submission_length"] = len(submission)
        if isinstance(info.get("model_stats"), dict):
            scores["model_stats"] = info["model_stats"]
        if status and steps:
            steps[-1].done = True
        if info:
            extra["info"] = {key: value for key, value in info.items() if key != "model_stats"}
        outcome = Outcome(status=status or None, scores=scores)
        error = self.exit_error(info, status or "", steps)
        if error is not None:
            outcome.error = error
        elif submission:
            outcome.answer = submission
        resolved = info.get("resolved")
        if isinstance(resolved, bool):
            outcome.success = resolved
        else:
            self.swebench_verdict(outcome)
        stats = _dict(info.get("model_stats"))
        return Trajectory(
            id=self.id,
            format=FORMAT,
            task=task,
            metadata=metadata,
            steps=steps,
            outcome=outcome,
            usage=TokenUsage.of(
                input=stats.get("tokens_sent"), output=stats.get("tokens_received"), cost=stats.get("instance_cost")
            ),
            extra=extra,
        )

    def exit_error(self, info: dict[str, Any], status: str, steps: list[TrajectoryStep]) -> str | None:
        """The error that ended the run, as text (None when it ended without one).

        mini-swe-agent 2 records an uncaught exception as ``exception_str`` and ``traceback`` (in
        ``info`` and in its ``exit`` message); mini 1 only the ``traceback``, with ``str(e)`` as the
        submission. SWE-agent ends on an error with ``exit_error``/``exit_api``/
        ``exit_environment_error`` (``submitted (...)`` after an autosubmission), its message in the
        last step's response."""
        message = info.get("exception_str", self.ending.get("exception_str"))
        trace = info.get("traceback", self.ending.get("traceback"))
        if isinstance(trace, str) and trace.strip():
            if not (isinstance(message, str) and message.strip()):
                submission = info.get("submission")
                last_line = trace.strip().splitlines()[-1]
                message = submission if isinstance(submission, str) and submission.strip() else last_line
            return f"{message.strip()}\n\n{trace.strip()}"
        if isinstance(message, str) and message.strip():
            return message.strip()
        if _SWE_AGENT_ERRORS.search(status):
            last = steps[-1] if steps else None
            said = (last.content or last.thinking).strip() if last is not None else ""
            return said if said.startswith("Exit due to") else status
        return None

    def swebench_verdict(self, outcome: Outcome) -> None:
        """``success`` (and the tests as checks) from a SWE-bench evaluation report beside the file,
        when one names this instance: SWE-agent's ``results.json`` (``resolved_ids``; ``resolved``
        in older runs) or the harness's per-instance ``report.json``."""
        folder = self.path.parent
        for where in (folder, folder.parent):
            for name in _REPORT_NAMES:
                candidate = where / name
                try:
                    found = candidate.stat() if candidate.is_file() else None
                    if found is None:
                        continue
                    report = _report(str(candidate), found.st_mtime_ns, found.st_size)
                except (OSError, orjson.JSONDecodeError) as exc:
                    self.problem(None, f"SWE-bench report {candidate.name} not read: {exc}", "warning")
                    continue
                if _apply_report(report, self.id, outcome):
                    outcome.scores["report"] = candidate.name
                    return


@functools.lru_cache(maxsize=4)
def _report(path: str, mtime_ns: int, size: int) -> dict[str, Any]:
    """A report file parsed once for all the trajectories of its folder (keyed by its mtime and size:
    a rewritten report is read again). Treat as read-only."""
    return _dict(orjson.loads(read_capped(path, _REPORT_CAP)))


def _apply_report(report: dict[str, Any], instance: str, outcome: Outcome) -> bool:
    """Fill ``outcome`` from a SWE-bench report that names ``instance``; False when it does not."""
    own = report.get(instance)
    if isinstance(own, dict) and isinstance(own.get("resolved"), bool):
        outcome.success = own["resolved"]
        tests = _dict(own.get("tests_status"))
        for kind in _TEST_KINDS:
            found = _dict(tests.get(kind))
            passed, failed = _names(found.get("success")), _names(found.get("failure"))
            if not passed and not failed:
                continue
            outcome.checks.append(
                OutcomeCheck(
                    name=kind,
                    passed=not failed,
                    value={"success": len(passed), "failure": len(failed)},
                    detail=f"failing: {', '.join(failed)}" if failed else f"{len(passed)} passed",
                )
            )
        if own.get("patch_successfully_applied") is False:
            outcome.checks.insert(0, OutcomeCheck(name="patch applied", passed=False, detail="the patch did not apply"))
        return True
    resolved = report.get("resolved_ids", report.get("resolved"))
    if not isinstance(resolved, list):
        return False
    if instance in resolved:
        outcome.success = True
        return True
    for key in ("unresolved_ids", "error_ids", "empty_patch_ids", "submitted_ids", "completed_ids"):
        listed = report.get(key)
        if isinstance(listed, list) and instance in listed:
            outcome.success = False
            if key == "error_ids":
                outcome.checks.append(OutcomeCheck(name="evaluation", passed=False, detail="the evaluation errored"))
            elif key == "empty_patch_ids":
                outcome.checks.append(OutcomeCheck(name="patch", passed=False, detail="empty patch"))
            return True
    return False


def _names(value: Any) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def _dump(value: Any) -> str:
    """A JSON value as compact text, whatever it holds (too deep for orjson: a short placeholder)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, ValueError):
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return f"<a JSON {type(value).__name__} too deep to show>"


def _extra(message: ChatMessage, key: str) -> Any:
    return (message.model_extra or {}).get(key)


def _command_call(action: str) -> ToolCall | None:
    """A SWE-agent command line as a call: its own tools by name, anything else ``bash``."""
    command = action.strip()
    if not command:
        return None
    first = command.split(None, 1)[0]
    return ToolCall(name=first if first in SWE_AGENT_COMMANDS else "bash", arguments={"command": command})


def _task_from_messages(messages: list[ChatMessage | None], pattern: re.Pattern[str]) -> str:
    for message in messages:
        if message is not None and message.role == "user" and not _extra(message, "is_demo"):
            found = pattern.search(message.content)
            return found.group(1).strip() if found else message.content
    return ""


def _observations(messages: list[ChatMessage | None], positions: range) -> list[ChatMessage]:
    """The run of observation messages (tool/user) at ``positions``, up to the first other one."""
    found: list[ChatMessage] = []
    for position in positions:
        message = messages[position]
        if message is None or message.role not in _OBSERVATION_ROLES:
            break
        found.append(message)
    return found


def _since_rejected(messages_raw: list[Any], messages: list[ChatMessage | None], i: int) -> list[ChatMessage]:
    """What a rejected turn (the format error at ``i``) saw since the model's previous turn: the
    observations before it, back to the previous assistant message or format error (that one
    included: it answered the previous rejected turn). A model that keeps being rejected leaves a
    run of format errors only: each turn's observation is the one before it, not the whole run
    again (that made such a run quadratic)."""
    found: list[ChatMessage] = []
    for position in range(i - 1, -1, -1):
        message = messages[position]
        if message is None or message.role not in _OBSERVATION_ROLES:
            break
        found.append(message)
        if _dict(_dict(messages_raw[position]).get("extra")).get("interrupt_type") == "FormatError":
            break
    return found[::-1]


def _last_observation(prompt: list[ChatMessage]) -> str:
    for message in reversed(prompt):
        if message.role in _OBSERVATION_ROLES:
            return message.content
        if message.role == "assistant":
            break
    return ""


def _result_for(action: ToolCall | None, after: list[ChatMessage]) -> str | None:
    if not after:
        return None
    if action is not None and action.id:
        for message in after:
            if message.tool_call_id == action.id:
                return message.content
    return "\n\n".join(m.content for m in after)
