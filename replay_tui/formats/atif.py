"""Harbor / Terminal-Bench ATIF trajectories (``trajectory.json``, ATIF-v1.0 … v1.7) as trajectories.

ATIF (the Agent Trajectory Interchange Format, Harbor's RFC 0001) is one JSON object:
``{schema_version: "ATIF-v1.N", session_id, trajectory_id?, agent{name, version, model_name,
tool_definitions?}, steps[], final_metrics?, continued_trajectory_ref?, subagent_trajectories?}``;
each step ``{step_id, source: system|user|agent, message, reasoning_content?, tool_calls[{tool_call_id,
function_name, arguments}], observation{results[{source_call_id, content, subagent_trajectory_ref?}]}}``
holds the calls an agent turn made and the results they returned.

Mapping:

- the file → a Trajectory (id = ``session_id``, else ``trajectory_id``, else the file name); task =
  the first user step's message;
- the conversation so far → the prompt: system steps as system messages, user steps as user
  messages, agent steps as assistant messages (reasoning and tool calls kept), each observation
  result as a tool message answering the call named by ``source_call_id`` (the step's calls in order
  when the result names none; a user message when the step made no call);
- each agent step → a step: thinking = ``reasoning_content``, content = the message, action = its
  first tool call (the others, and their results, in ``extra``), tool_result = the result paired with
  that call; an agent step without calls is a step without action; the step's other ATIF fields
  (``step_id``, ``timestamp``, ``metrics``, the ``observation`` as written...) verbatim in ``extra``.
  Tools = ``agent.tool_definitions`` (OpenAI function schemas) when given, else inferred from the
  recorded calls. The system and user steps are kept verbatim in the trajectory's
  ``extra["atif_context_steps"]`` (``position``, ``step``), so ``convert --to atif`` writes the file back;
- sub-agents: an observation result's ``subagent_trajectory_ref`` is followed to the file it names
  (beside this one, also with this file's name prefix) or to the inline ``subagent_trajectories``
  entry with its ``trajectory_id``; each sub-agent is yielded after its parent as a Trajectory of its
  own with its ``parent`` (the call whose result names it), the spawning step's ``subagent`` its id;
  each agent step's ``timestamp``, ``model_name`` (else the agent's) and ``metrics`` (prompt,
  completion and cached tokens, ``cost_usd``) are its typed fields, ``agent.model_name`` and
  ``final_metrics``'s totals the episode's ``model`` and ``usage``; a reference that cannot be
  resolved is a warning naming it. A
  ``continued_trajectory_ref`` file is read the same way (``metadata["continues"]``);
- outcome: ``final_metrics`` in ``scores``; reward from a Harbor trial's ``result.json``
  (``verifier_result.rewards``, several named rewards as checks) or ``verifier/reward.json`` /
  ``reward.txt`` beside the agent folder when present (success = reward 1.0); the trial's
  ``exception_info`` as the error (type and message, then the traceback), its type as the status;
  the trial's ``task_name`` in ``metadata["task_name"]`` (``compare`` pairs two jobs by it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from replay_tui.episodes.model import (
    ChatMessage,
    MessageView,
    Outcome,
    OutcomeCheck,
    ParentLink,
    TokenUsage,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    infer_tools,
    parse_timestamp,
)
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import HEAD_BYTES, Detection, EpisodeSummary, ReadItem, strip_bom
from replay_tui.formats.reread import LastRead, episode_at, stamp

_VERSION = re.compile(rb'"schema_version"\s*:\s*"ATIF-v?(\d+(?:\.\d+)*)')
_MAX_DEPTH = 16
"""How deep sub-agent references are followed (a reference cycle stops there, with a warning)."""


class AtifReader:
    name = "atif"
    label = "Harbor ATIF trajectories"
    description = (
        "episode = trajectory (sub-agents and continuations as their own episodes); step = agent step; "
        "prompt = the system/user/agent steps and tool results before it; action = first tool call; "
        "tools = agent.tool_definitions (inferred otherwise); outcome = final_metrics + result.json/reward.txt"
    )

    def sniff(self, path: Path, head: bytes) -> Detection:
        if path.is_dir():
            found = trial_trajectories(path)
            if not found:
                return Detection.no("a folder without trajectory.json or <trial>/agent/trajectory.json")
            try:
                with found[0].open("rb") as handle:
                    inner = self.sniff(found[0], handle.read(HEAD_BYTES))
            except OSError as exc:
                return Detection.no(f"{found[0].name} unreadable: {exc.strerror or exc}")
            if inner.score == 0:
                return inner
            return Detection.yes(f"Harbor trial/job folder ({len(found)} trajectories): {inner.reason}")
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text[:1] != b"{":
            return Detection.no("not a JSON object")
        found_version = _VERSION.search(head)
        if found_version is None:
            return Detection.no('no "schema_version": "ATIF-v…" field')
        return Detection.yes(f"ATIF trajectory (schema_version ATIF-v{found_version.group(1).decode()})")

    def read(self, path: Path) -> Iterator[ReadItem]:
        if path.is_dir():
            files = trial_trajectories(path)
            if not files:
                yield LoadProblem(file=path.name, message=_NO_TRIALS)
            for file in files:
                yield from self.read(file)
            return
        data, problem = _load(path)
        if problem is not None:
            yield problem
            return
        yield from _Walk(path).trajectory(data, path.name, parent=None, depth=0)

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every trajectory's summary, in :meth:`read`'s order, one trial file (with the sub-agent
        and continuation files it names) held at a time; ``locator`` = (the trial file, the
        how-manieth episode of its read)."""
        files = trial_trajectories(path) if path.is_dir() else [path]
        if path.is_dir() and not files:
            yield LoadProblem(file=path.name, message=_NO_TRIALS)
            return
        record = 0
        for file in files:
            nth = 0
            for item in self.read(file):
                if isinstance(item, LoadProblem):
                    yield item
                    continue
                yield EpisodeSummary.of(item, record, (file, nth))
                nth += 1
                record += 1

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The trajectory ``summary`` points at, from its trial file's read (kept for its
        sub-agents while the files beside it are unchanged)."""
        file, nth = summary.locator
        files = stamp(sorted(file.parent.glob("*.json")))
        return episode_at(self._last.items(file, files, lambda: self.read(file)), nth, summary, file.name)

    def __init__(self) -> None:
        self._last = LastRead()


def trial_trajectories(folder: Path) -> list[Path]:
    """The main trajectory files of a Harbor trial (``agent/trajectory.json``) or job (one folder per
    trial), or of a folder holding ``trajectory.json``; sub-agent and continuation files are reached
    through their references, not listed."""
    for candidate in (folder / "trajectory.json", folder / "agent" / "trajectory.json"):
        if candidate.is_file():
            return [candidate]
    found = []
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []
    for child in children:
        candidate = child / "agent" / "trajectory.json"
        if candidate.is_file():
            found.append(candidate)
    return found


READER = AtifReader()
_NO_TRIALS = "no trajectory.json in this folder or its trials"


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a malformed field reads as absent)."""
    return value if isinstance(value, dict) else {}


def _load(path: Path) -> tuple[Any, LoadProblem | None]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
    try:
        return orjson.loads(strip_bom(raw)), None
    except orjson.JSONDecodeError as exc:
        return None, LoadProblem(file=path.name, message=f"not valid JSON (truncated?): {exc}")
    except RecursionError:
        return None, LoadProblem(file=path.name, message="not readable: JSON nested too deep")


def content_text(value: Any) -> str:
    """An ATIF message or result content as text: a string, or ContentParts (text kept, images named)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text") or ""))
            elif isinstance(part, dict) and part.get("type") == "image":
                source = part.get("source")
                where = source.get("path") or source.get("url") if isinstance(source, dict) else None
                parts.append(f"[image {where}]" if where else "[image]")
            else:
                parts.append(orjson.dumps(part, default=str).decode())
        return "\n".join(parts)
    return orjson.dumps(value, default=str).decode()


def _call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, dict):
        raise _Bad(where, f"expected a tool call object, got {type(raw).__name__}")
    name = raw.get("function_name")
    if not isinstance(name, str) or not name:
        raise _Bad(f"{where}.function_name", "missing or not a string")
    call_id = raw.get("tool_call_id")
    arguments = raw.get("arguments")
    ident = str(call_id) if call_id is not None else None
    if isinstance(arguments, dict):
        return ToolCall(name=name, arguments=arguments, id=ident)
    if arguments is None:
        return ToolCall(name=name, id=ident)
    if isinstance(arguments, str):
        try:
            parsed = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return ToolCall(name=name, arguments=parsed, id=ident)
        return ToolCall(name=name, raw_arguments=arguments, id=ident)
    return ToolCall(name=name, raw_arguments=orjson.dumps(arguments, default=str).decode(), id=ident)


class _Bad(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _refs(value: Any) -> list[dict[str, Any]]:
    """``subagent_trajectory_ref``: a list of refs (v1.4+) or one ref object."""
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [ref for ref in value if isinstance(ref, dict)]
    return []


class _Walk:
    """Reading one file's trajectory and the sub-agent and continuation files it names."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen: set[Path] = {path.resolve()}

    def trajectory(self, data: Any, file: str, parent: ParentLink | None, depth: int) -> Iterator[ReadItem]:
        if not isinstance(data, dict):
            yield LoadProblem(file=file, message=f"not an ATIF trajectory: the top level is {type(data).__name__}")
            return
        steps = data.get("steps")
        if not isinstance(steps, list):
            yield LoadProblem(file=file, field="steps", message="missing or not a list")
            return
        ident = str(data.get("session_id") or data.get("trajectory_id") or file)
        if parent is not None:
            ident = _child_id(parent.episode or "", data, file)
        try:
            trajectory, refs = _convert(data, ident)
        except _Bad as exc:
            yield LoadProblem(file=file, session_id=ident, field=exc.field, message=exc.message)
            return
        except (TypeError, ValueError, RecursionError) as exc:  # values nested too deep, or of odd types
            yield LoadProblem(file=file, session_id=ident, message=f"not read: {exc}")
            return
        trajectory.parent = parent
        if parent is None:
            trajectory.outcome, task_name = _trial_outcome(self.path, trajectory.outcome)
            if task_name:
                trajectory.metadata["task_name"] = task_name
        if depth >= _MAX_DEPTH:
            yield trajectory
            if refs:
                yield LoadProblem(file=file, session_id=ident, severity="warning", message="sub-agents nested too deep")
            return
        later = list(self._subagents(data, file, ident, refs))  # resolved first: the spawning steps name them
        yield trajectory
        for next_item in later:
            if isinstance(next_item, LoadProblem):
                yield next_item
            else:
                sub, name, link = next_item
                yield from self.trajectory(sub, name, link, depth + 1)
        continued = data.get("continued_trajectory_ref")
        if isinstance(continued, str) and continued:
            found = self._resolve(continued)
            if found is None:
                yield LoadProblem(
                    file=file,
                    session_id=ident,
                    field="continued_trajectory_ref",
                    severity="warning",
                    message=f"continuation {continued!r} is not beside this file: not loaded",
                )
            elif found.resolve() not in self.seen:
                self.seen.add(found.resolve())
                sub, problem = _load(found)
                if problem is not None:
                    yield problem
                    return
                for item in self.trajectory(sub, found.name, None, depth + 1):
                    if isinstance(item, Trajectory) and item.parent is None:
                        item.metadata["continues"] = trajectory.id
                        if item.id == trajectory.id:
                            item.id = f"{trajectory.id}#{found.name}"
                    yield item

    def _subagents(
        self, data: dict[str, Any], file: str, ident: str, refs: list[_Ref]
    ) -> Iterator[LoadProblem | tuple[Any, str, ParentLink]]:
        """The sub-agent documents ``refs`` name (each with the file it is in and its link to this
        one, the spawning step's ``subagent`` set), or the problem a reference has, in order."""
        inline = {
            str(sub.get("trajectory_id")): sub
            for sub in data.get("subagent_trajectories") or []
            if isinstance(sub, dict) and sub.get("trajectory_id") is not None
        }
        used: set[str] = set()

        def child(sub: Any, name: str, spawned: _Ref | None) -> tuple[Any, str, ParentLink]:
            link = ParentLink(
                episode=ident, call_id=spawned.call_id if spawned else None, source="subagent_trajectory_ref"
            )
            if spawned is not None and spawned.step is not None and isinstance(sub, dict):
                spawned.step.subagent = _child_id(ident, sub, name)
            return sub, name, link

        for spawned in refs:
            ref = spawned.ref
            key = ref.get("trajectory_id")
            target = ref.get("trajectory_path")
            if isinstance(target, str) and target:
                found = self._resolve(target)
                if found is None:
                    yield LoadProblem(
                        file=file,
                        session_id=ident,
                        field=spawned.field,
                        severity="warning",
                        message=f"sub-agent trajectory {target!r} is not beside this file: not loaded",
                    )
                    continue
                if found.resolve() in self.seen:
                    continue
                self.seen.add(found.resolve())
                sub, problem = _load(found)
                if problem is not None:
                    yield problem
                    continue
                yield child(sub, found.name, spawned)
            elif key is not None and str(key) in inline:
                used.add(str(key))
                yield child(inline[str(key)], file, spawned)
            else:
                yield LoadProblem(
                    file=file,
                    session_id=ident,
                    field=spawned.field,
                    severity="warning",
                    message=f"sub-agent reference {ref.get('trajectory_id') or ref.get('session_id')!r} "
                    "names no file and no inline trajectory: not loaded",
                )
        for key, sub in inline.items():
            if key not in used:
                yield child(sub, file, None)

    def _resolve(self, target: str) -> Path | None:
        """A referenced file: beside this one, or with this file's name prefix (copies renamed
        ``<prefix>trajectory.json`` keep their sub-agents as ``<prefix>trajectory.<x>.json``)."""
        folder = self.path.parent
        name = Path(target).name
        candidates = [folder / target, folder / name]
        stem = self.path.name
        at = stem.rfind("trajectory")
        if at > 0:
            candidates.append(folder / (stem[:at] + name))
        for candidate in candidates:
            try:
                if candidate.is_file():
                    return candidate
            except OSError:
                continue
        return None


METRICS = {"input": "prompt_tokens", "output": "completion_tokens", "cache_read": "cached_tokens", "cost": "cost_usd"}
"""ATIF's step ``metrics`` names of the :class:`~replay_tui.episodes.model.TokenUsage` fields;
``final_metrics`` names the episode's totals the same with ``total_`` before."""


class _Ref(NamedTuple):
    """A ``subagent_trajectory_ref`` and where it was: the field, the agent step whose result holds
    it (None on a system step), the call it answers."""

    field: str
    ref: dict[str, Any]
    step: TrajectoryStep | None
    call_id: str | None


def _telemetry(step: TrajectoryStep, raw: dict[str, Any], agent: dict[str, Any]) -> None:
    """An agent step's ``timestamp``, ``model_name`` (else the agent's) and ``metrics`` as typed fields."""
    step.kind = "decision" if step.action is not None else "message"
    step.timestamp = parse_timestamp(raw.get("timestamp"))
    model = raw.get("model_name") or agent.get("model_name")
    step.model = model if isinstance(model, str) and model else None
    step.usage = TokenUsage.read(raw.get("metrics"), **METRICS)


def _convert(data: dict[str, Any], ident: str) -> tuple[Trajectory, list[_Ref]]:
    agent = _obj(data.get("agent"))
    definitions = agent.get("tool_definitions")
    messages: list[ChatMessage] = []
    steps: list[TrajectoryStep] = []
    refs: list[_Ref] = []
    task = ""
    all_calls: list[ToolCall] = []
    result_count = 0
    context: list[dict[str, Any]] = []
    for index, raw in enumerate(data["steps"]):
        where = f"steps[{index}]"
        if not isinstance(raw, dict):
            raise _Bad(where, f"expected a step object, got {type(raw).__name__}")
        source = raw.get("source")
        text = content_text(raw.get("message"))
        if source in ("system", "user"):
            context.append({"position": index, "step": raw})
        if source == "system":
            messages.append(ChatMessage(role="system", content=text))
        elif source == "user":
            if not task:
                task = text
            messages.append(ChatMessage(role="user", content=text))
        elif source == "agent":
            raw_calls = raw.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                raise _Bad(f"{where}.tool_calls", "not a list")
            calls = [_call(call, f"{where}.tool_calls[{n}]") for n, call in enumerate(raw_calls)]
            all_calls.extend(calls)
            reasoning = raw.get("reasoning_content")
            thinking = content_text(reasoning) if reasoning is not None else ""
            observation = next((m.content for m in reversed(messages) if m.role in ("user", "tool")), "")
            step = TrajectoryStep(
                index=len(steps),
                label=str(raw.get("step_id", len(steps))),
                observation=observation,
                messages=MessageView.prefix(messages, len(messages)),  # messages only grows
                thinking=thinking,
                content=text,
                action=calls[0] if calls else None,
                extra={
                    key: value
                    for key, value in raw.items()
                    if key not in ("message", "reasoning_content", "tool_calls", "source")
                },
            )
            _telemetry(step, raw, agent)
            if len(calls) > 1:
                step.extra["tool_calls"] = [call.model_dump(mode="json") for call in calls]
            messages.append(ChatMessage(role="assistant", content=text, tool_calls=calls, reasoning=thinking or None))
            steps.append(step)
        else:
            raise _Bad(f"{where}.source", f"expected system, user or agent, got {source!r}")
        recorded = raw.get("observation")
        results = recorded.get("results") if isinstance(recorded, dict) else None
        if recorded is not None and not isinstance(results, list):
            raise _Bad(f"{where}.observation.results", "missing or not a list")
        step_calls = messages[-1].tool_calls if source == "agent" else []
        pending = [call.id for call in step_calls]
        texts: list[tuple[str | None, str]] = []
        for n, result in enumerate(results or []):
            if not isinstance(result, dict):
                raise _Bad(f"{where}.observation.results[{n}]", "not an object")
            answered = result.get("source_call_id")
            for ref in _refs(result.get("subagent_trajectory_ref")):
                spawned = _Ref(
                    f"{where}.observation.results[{n}].subagent_trajectory_ref",
                    ref,
                    steps[-1] if source == "agent" else None,
                    str(answered) if answered is not None else None,
                )
                refs.append(spawned)
            call_id = str(answered) if answered is not None else None
            if call_id in pending:
                pending.remove(call_id)
            elif pending:
                call_id = pending.pop(0)
            body = content_text(result.get("content"))
            texts.append((call_id, body))
            result_count += 1
            if step_calls:
                messages.append(ChatMessage(role="tool", content=body, tool_call_id=call_id))
            else:
                messages.append(ChatMessage(role="user", content=body))
        if source == "agent" and texts:
            step = steps[-1]
            first = step.action.id if step.action is not None else None
            step.tool_result = next((body for call_id, body in texts if call_id == first), texts[0][1])
            if len(texts) > 1:
                step.extra["tool_results"] = [{"tool_call_id": c, "content": b} for c, b in texts]
    tools = [t for t in definitions if isinstance(t, dict)] if isinstance(definitions, list) else []
    if not tools:
        tools = infer_tools(all_calls)
    for step in steps:
        step.tools = tools
    if steps:
        steps[-1].done = True
    final = data.get("final_metrics")
    metadata = {
        "schema_version": data.get("schema_version"),
        "agent": {k: v for k, v in agent.items() if k != "tool_definitions"},
        "messages": len(messages),
        "results": result_count,
    }
    for key in ("session_id", "trajectory_id", "notes"):
        if data.get(key) is not None:
            metadata[key] = data[key]
    model = agent.get("model_name")
    trajectory = Trajectory(
        id=ident,
        format="atif",
        task=task,
        metadata=metadata,
        steps=steps,
        model=model if isinstance(model, str) and model else None,
        usage=TokenUsage.read(final, **{field: f"total_{key}" for field, key in METRICS.items()}),
        outcome=Outcome(scores={"final_metrics": final} if isinstance(final, dict) else {}),
        extra={"extra": data["extra"]} if isinstance(data.get("extra"), dict) else {},
    )
    trajectory.extra["atif_context_steps"] = context
    if isinstance(definitions, list):
        trajectory.extra["atif_tool_definitions"] = True
    return trajectory, refs


def _child_id(parent: str, data: Any, file: str) -> str:
    """A sub-agent's episode id: its parent's, then its own ``trajectory_id`` (else session, file)."""
    own = data.get("trajectory_id") or data.get("session_id") if isinstance(data, dict) else None
    return f"{parent}/{own or file}"


def _trial_outcome(path: Path, outcome: Outcome) -> tuple[Outcome, str | None]:
    """The verdict of the Harbor trial the file belongs to (``<trial>/agent/trajectory.json`` beside
    ``<trial>/result.json`` and ``<trial>/verifier/reward.txt`` or ``reward.json``), when those
    files are there: ``verifier_result.rewards`` (each named reward a check when there are several),
    ``exception_info`` (``harbor/models/trial/result.py``: type, message, traceback) as the error;
    and the trial's ``task_name`` (what two jobs of one task set pair by: a trial's session id is its own)."""
    task_name: str | None = None
    for trial in (path.parent, path.parent.parent):
        result = trial / "result.json"
        if result.is_file():
            data, problem = _load(result)
            data = data if isinstance(data, dict) and problem is None else {}
            if isinstance(data.get("task_name"), str) and data["task_name"].strip() and task_name is None:
                task_name = data["task_name"].strip()
            verifier = data.get("verifier_result")
            _apply_rewards(outcome, verifier.get("rewards") if isinstance(verifier, dict) else None)
            if data.get("exception_info"):
                outcome.scores["exception_info"] = data["exception_info"]
                _apply_exception(outcome, data["exception_info"])
        verifier_dir = trial / "verifier"
        if outcome.reward is None and (verifier_dir / "reward.json").is_file():
            data, problem = _load(verifier_dir / "reward.json")
            if problem is None:
                _apply_rewards(outcome, data)
        if outcome.reward is None and (verifier_dir / "reward.txt").is_file():
            try:
                outcome.reward = float((verifier_dir / "reward.txt").read_text(encoding="utf-8").strip())
            except (OSError, ValueError, UnicodeDecodeError):
                pass
        if outcome.reward is not None:
            outcome.success = outcome.reward >= 1.0
        if outcome.reward is not None or outcome.error:
            break
    return outcome, task_name


def _apply_rewards(outcome: Outcome, rewards: Any) -> None:
    """Harbor's rewards (``{"reward": 1.0}`` or several named ones): the one called ``reward`` (else
    the first) is the outcome's reward; with several, each is a check (its value; pass unknown)."""
    if not isinstance(rewards, dict) or not rewards:
        return
    numbers = {k: v for k, v in rewards.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    reward = numbers.get("reward", next(iter(numbers.values()), None))
    if reward is None:
        return
    outcome.reward = float(reward)
    outcome.scores["rewards"] = rewards
    if len(numbers) > 1:
        outcome.checks = [OutcomeCheck(name=str(name), value=value) for name, value in numbers.items()]


def _apply_exception(outcome: Outcome, info: Any) -> None:
    """``exception_info`` as the error (``Type: message`` then the traceback) and its type as the
    status (``AgentTimeoutError``, ``VerifierTimeoutError``...)."""
    if not isinstance(info, dict):
        outcome.status, outcome.error = "error", str(info)
        return
    kind, message, trace = (info.get(k) for k in ("exception_type", "exception_message", "exception_traceback"))
    outcome.status = kind if isinstance(kind, str) and kind else "error"
    head = ": ".join(str(part) for part in (kind, message) if part) or "error"
    outcome.error = f"{head}\n\n{trace.strip()}" if isinstance(trace, str) and trace.strip() else head
