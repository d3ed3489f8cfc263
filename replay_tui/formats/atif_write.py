"""Any log's trajectories written as ATIF (Harbor's Agent Trajectory Interchange Format, RFC 0001 v1.7).

One log's episodes become documents: each episode that is no sub-agent of another episode of the log
one ATIF file, each sub-agent a file of its own that its parent names in a ``subagent_trajectory_ref``
(on the result of the call that spawned it, else on a system step after the parent's last step).

Mapping (the reverse of :mod:`replay_tui.formats.atif`):

- the prompt of the first step → system and user steps (an assistant message in it an agent step, a
  tool message the result of that step's call); the user and system messages a later step's prompt adds
  → user and system steps before it; no prompt → the task as a user step;
- each step → an agent step (the steps a reader made of the calls of one response, one agent step:
  one LLM inference per step, as the RFC asks): ``message`` = its text, ``reasoning_content`` = its thinking,
  ``tool_calls`` = every call it recorded (:func:`replay_tui.formats.census.step_calls`; arguments that
  were no JSON object kept as ``{"raw_arguments": text}``), ``observation`` = their results;
- ``agent.tool_definitions`` = the tools the steps were offered; ``extra`` (root) = the source format,
  the log's outcome and metadata (ATIF has no place for an outcome); a step's label, reward, state and
  the plain values of its ``extra`` in its ``extra``; its ``usage`` as ``metrics``, its ``model`` as
  ``model_name``, its ``timestamp`` (ISO 8601); the episode's ``usage`` as ``final_metrics``;
- an episode read from ATIF is written back as it was read: its system and user steps and every step's
  own ATIF fields verbatim (the reader keeps them), so ATIF → ATIF is the identity on ATIF's fields
  (except a tool call's own ``extra``, and a content-part message, written as its text).

Every document is checked against ``atif_schema.json`` (the RFC's tables as a JSON Schema) and the
rules a JSON Schema cannot state (:func:`check`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from replay_tui.episodes.model import ChatMessage, TokenUsage, Trajectory, TrajectoryStep
from replay_tui.formats.atif import METRICS
from replay_tui.formats.census import parent_of, step_calls, step_results

ATIF_VERSION = "ATIF-v1.7"
"""The version written: the latest the RFC defines."""

AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")
STEP_FIELDS = (
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "extra",
    "llm_call_count",
    "is_copied_context",
)
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class ConvertError(Exception):
    """An episode that cannot be written as ATIF: ``field`` names where (a JSON path of the document)."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass
class Document:
    """One ATIF file to write: its name (in the output folder) and its content."""

    name: str
    episode: str
    """The id of the episode it holds (what a problem names)."""
    data: dict[str, Any]
    children: list[Document] = field(default_factory=list)


@cache
def schema() -> dict[str, Any]:
    """The ATIF v1.7 JSON Schema (written from the RFC's tables)."""
    text = resources.files("replay_tui.formats").joinpath("atif_schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


def check(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """Every way ``doc`` breaks ATIF, as ``(field path, message)``; empty when it is valid."""
    found = []
    for error in sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path)):
        found.append((_path(error.absolute_path), error.message))
    if found:
        return found
    return _rules(doc, "")


def _path(parts: Any) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _rules(doc: dict[str, Any], where: str) -> list[tuple[str, str]]:
    found = []
    for n, step in enumerate(doc["steps"]):
        at = f"{where}steps[{n}]"
        if step["step_id"] != n + 1:
            found.append((f"{at}.step_id", f"expected {n + 1} (sequential from 1), got {step['step_id']}"))
        stamp = step.get("timestamp")
        if isinstance(stamp, str):
            try:
                datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                found.append((f"{at}.timestamp", f"not an ISO 8601 time: {stamp!r}"))
        ids = {call["tool_call_id"] for call in step.get("tool_calls") or []}
        for k, result in enumerate((step.get("observation") or {}).get("results", [])):
            answered = result.get("source_call_id")
            if answered is not None and answered not in ids:
                found.append((f"{at}.observation.results[{k}].source_call_id", f"{answered!r} is no call of its step"))
    seen: set[str] = set()
    for n, sub in enumerate(doc.get("subagent_trajectories") or []):
        ident = sub.get("trajectory_id")
        if ident is None or ident in seen:
            found.append((f"{where}subagent_trajectories[{n}].trajectory_id", "missing or not unique"))
        seen.add(str(ident))
        found += _rules(sub, f"{where}subagent_trajectories[{n}].")
    return found


def plain(value: Any) -> Any:
    """``value`` as JSON values only (what a log's metadata holds that JSON has no type for, as text)."""
    return orjson.loads(orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS))


def file_prefix(name: str) -> str:
    """What the files of one document's sub-agents start with: its name up to ``trajectory`` (as
    Harbor names them, ``<x>trajectory.json`` → ``<x>trajectory.<sub>.json``), else its stem and a dot."""
    at = name.rfind("trajectory")
    return name[:at] if at >= 0 else name.rsplit(".", 1)[0] + "."


def base_name(source: Path) -> str:
    """The output name's start for a log: its file name without extensions or a ``trajectory`` tail."""
    name = source.name
    for suffix in (".json", ".jsonl", ".eval", ".traj", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    name = re.sub(r"[._-]?trajectory$", "", name)
    return _SAFE_NAME.sub("_", name) or "log"


def plan(trajectories: list[Trajectory]) -> tuple[list[Trajectory], dict[str, list[Trajectory]]]:
    """One log's episodes (in read order) split into those written as files of their own and, by
    parent id, the sub-agents written as their parent's children."""
    by_id = {t.id for t in trajectories}
    children: dict[str, list[Trajectory]] = {}
    tops = []
    for trajectory in trajectories:
        parent = parent_of(trajectory)
        if parent and parent in by_id and parent != trajectory.id:
            children.setdefault(parent, []).append(trajectory)
        else:
            tops.append(trajectory)
    return tops, children


_MAX_DEPTH = 16


def document(trajectory: Trajectory, name: str, children: dict[str, list[Trajectory]], depth: int = 0) -> Document:
    """``trajectory`` as the ATIF file ``name``, its sub-agents (``children``, from :func:`plan`) as
    files named after it; :class:`ConvertError` when it cannot be written."""
    prefix = file_prefix(name)
    subs = children.get(trajectory.id, []) if depth < _MAX_DEPTH else []
    docs: list[Document] = []
    refs: list[tuple[Trajectory, dict[str, Any]]] = []
    taken = {name}
    embedded: list[dict[str, Any]] = []
    for number, child in enumerate(subs, start=1):
        if _embedded(trajectory, child):
            inline = document(child, name, children, depth + 1)
            embedded.append(inline.data)
            docs += inline.children
            continue
        wanted = _kept_ref_name(trajectory, child)
        child_name = prefix + wanted if wanted else f"{prefix}trajectory.subagent-{number}.json"
        if child_name in taken:
            child_name = f"{prefix}trajectory.subagent-{number}.json"
        taken.add(child_name)
        docs.append(document(child, child_name, children, depth + 1))
        ref: dict[str, Any] = {"session_id": child.metadata.get("session_id") or child.id}
        ref["trajectory_path"] = wanted or child_name
        refs.append((child, ref))
    data = to_atif(trajectory, refs)
    if embedded:
        data["subagent_trajectories"] = embedded
    return Document(name=name, episode=trajectory.id, data=data, children=docs)


def _embedded(parent: Trajectory, child: Trajectory) -> bool:
    """Whether an ATIF parent held ``child`` inline (``subagent_trajectories``, reached by ``trajectory_id``)."""
    ident = child.metadata.get("trajectory_id")
    return ident is not None and any(
        ref.get("trajectory_id") == ident and not ref.get("trajectory_path") for ref in _atif_refs(parent)
    )


def _kept_ref_name(parent: Trajectory, child: Trajectory) -> str | None:
    """For an ATIF parent: the file name its own reference gave ``child`` (kept, so the document is
    written back as read)."""
    for ref in _atif_refs(parent):
        target = ref.get("trajectory_path")
        if not isinstance(target, str):
            continue
        name = Path(target).name
        if _matches(ref, child, name) and _SAFE_NAME.sub("_", name) == name and name.endswith(".json"):
            return name
    return None


def _matches(ref: dict[str, Any], child: Trajectory, name: str | None) -> bool:
    meta = child.metadata
    if ref.get("trajectory_id") is not None and ref.get("trajectory_id") == meta.get("trajectory_id"):
        return True
    if ref.get("session_id") is not None and ref.get("session_id") == meta.get("session_id"):
        return True
    return bool(name) and child.id.endswith(f"/{name}")


def _atif_refs(trajectory: Trajectory) -> list[dict[str, Any]]:
    found = []
    for step in trajectory.steps:
        found += _refs_of(step.extra.get("observation"))
    for entry in trajectory.extra.get("atif_context_steps") or []:
        found += _refs_of(entry.get("step", {}).get("observation"))
    return found


def _refs_of(observation: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for result in observation.get("results", []) if isinstance(observation, dict) else []:
        refs = result.get("subagent_trajectory_ref") if isinstance(result, dict) else None
        found += [ref for ref in ([refs] if isinstance(refs, dict) else refs or []) if isinstance(ref, dict)]
    return found


def to_atif(trajectory: Trajectory, refs: list[tuple[Trajectory, dict[str, Any]]] | None = None) -> dict[str, Any]:
    """One episode as an ATIF document; ``refs`` are its sub-agents with the reference to each."""
    if "atif_context_steps" in trajectory.extra:
        return _from_atif(trajectory, list(refs or []))
    steps: list[dict[str, Any]] = []
    pending = list(refs or [])
    previous: Sequence[ChatMessage] | None = None
    last: TrajectoryStep | None = None
    for step in trajectory.steps:
        if previous is None:
            _context(steps, step.messages, first=True)
            if not steps and trajectory.task:
                steps.append({"source": "user", "message": trajectory.task})
        elif len(step.messages) > len(previous) and step.messages is not previous:
            _context(steps, step.messages[len(previous) :], first=False)
        entry = _agent_step(trajectory, step, pending)
        if last is not None and previous is not None and _same_response(last, step, previous):
            _merge(steps[-1], entry)
        else:
            steps.append(entry)
        previous, last = step.messages, step
    if not steps and trajectory.task:
        steps.append({"source": "user", "message": trajectory.task})
    if pending:
        steps.append(_delegation(pending))
    if not steps:
        raise ConvertError("steps", "the episode has no step and no task: ATIF needs at least one step")
    for number, written in enumerate(steps, start=1):
        written["step_id"] = number
    tools = next((s.tools for s in trajectory.steps if s.tools), [])
    agent: dict[str, Any] = {"name": _agent_name(trajectory), "version": _agent_version(trajectory)}
    model = trajectory.model or trajectory.metadata.get("model")
    models = trajectory.metadata.get("models")
    if not (isinstance(model, str) and model) and isinstance(models, list) and models:
        model = models[0]
    if isinstance(model, str) and model:
        agent["model_name"] = model
    if tools:
        agent["tool_definitions"] = plain(tools)
    extra: dict[str, Any] = {"source_format": trajectory.format}
    outcome = trajectory.outcome.model_dump(mode="json", exclude_defaults=True)
    if outcome:
        extra["outcome"] = {**outcome, "kind": trajectory.outcome.kind}
    if trajectory.metadata:
        extra["metadata"] = plain(trajectory.metadata)
    data: dict[str, Any] = {
        "schema_version": ATIF_VERSION,
        "session_id": trajectory.id,
        "agent": agent,
        "steps": [{key: step[key] for key in STEP_FIELDS if key in step} for step in steps],
    }
    final = _final_metrics(trajectory)
    if final:
        data["final_metrics"] = final
    data["extra"] = extra
    return data


def _final_metrics(trajectory: Trajectory) -> dict[str, Any]:
    """The episode's usage as ATIF ``final_metrics``: the step metrics' names with ``total_``."""
    return _usage_metrics(trajectory.usage, "total_")


def _usage_metrics(usage: TokenUsage | None, prefix: str = "") -> dict[str, Any]:
    """A usage's counts under ATIF's metric names (``prompt_tokens``... ``cost_usd``, each after
    ``prefix``), those the log recorded only."""
    if usage is None:
        return {}
    found = {prefix + key: getattr(usage, field) for field, key in METRICS.items()}
    return {key: value for key, value in found.items() if value is not None}


def _same_response(last: TrajectoryStep, step: TrajectoryStep, previous: Sequence[ChatMessage]) -> bool:
    """Whether ``step`` is another call of ``last``'s response: readers that make a step of each call
    of one response (Claude Code, Codex) give them one prompt, the same messages. ATIF holds one LLM
    inference per step (the RFC's convention), so they are written as one agent step."""
    if step.action is None or last.action is None or len(step.messages) != len(previous):
        return False
    return not previous or step.messages[-1] is previous[-1]


def _merge(entry: dict[str, Any], more: dict[str, Any]) -> None:
    """``more`` (a further call of the same response) folded into the agent step ``entry``."""
    for key in ("message", "reasoning_content"):
        text, added = entry.get(key) or "", more.get(key) or ""
        if added and added != text:
            entry[key] = added if added.startswith(text) else f"{text}\n\n{added}" if text else added
    taken = {call["tool_call_id"] for call in entry.get("tool_calls", [])}
    for call in more.get("tool_calls", []):
        if call["tool_call_id"] in taken:
            call["tool_call_id"] = f"{call['tool_call_id']}#{len(taken)}"
        taken.add(call["tool_call_id"])
        entry.setdefault("tool_calls", []).append(call)
    results = (more.get("observation") or {}).get("results", [])
    if results:
        entry.setdefault("observation", {"results": []})["results"].extend(results)


def _agent_name(trajectory: Trajectory) -> str:
    agent = trajectory.metadata.get("agent")
    if isinstance(agent, str) and agent:
        return agent
    if isinstance(agent, dict) and isinstance(agent.get("name"), str):
        return str(agent["name"])
    return trajectory.format


def _agent_version(trajectory: Trajectory) -> str:
    for key in ("cli_version", "version", "agent_version"):
        value = trajectory.metadata.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value):
            return str(value)
    return "unknown"


def _context(steps: list[dict[str, Any]], messages: Sequence[ChatMessage], *, first: bool) -> None:
    """Messages of a prompt as ATIF steps: user and system ones always; in the first prompt also the
    earlier agent turns (a later prompt's are the steps already written) with their results."""
    for message in messages:
        if message.role in ("system", "developer"):
            steps.append({"source": "system", "message": message.content})
        elif message.role == "assistant":
            if not first:
                continue
            calls = [_call(call, f"ctx{len(steps)}_{n}") for n, call in enumerate(message.tool_calls)]
            entry: dict[str, Any] = {"source": "agent", "message": message.content}
            if message.reasoning:
                entry["reasoning_content"] = message.reasoning
            if calls:
                entry["tool_calls"] = calls
            steps.append(entry)
        elif message.role == "tool":
            if not first:
                continue
            last = steps[-1] if steps else None
            if last is not None and last.get("tool_calls"):
                ids = [c["tool_call_id"] for c in last["tool_calls"]]
                result: dict[str, Any] = {"content": message.content}
                if message.tool_call_id in ids:
                    result["source_call_id"] = message.tool_call_id
                last.setdefault("observation", {"results": []})["results"].append(result)
            else:
                steps.append({"source": "user", "message": message.content})
        else:
            steps.append({"source": "user", "message": message.content})


def _call(call: Any, fallback: str) -> dict[str, Any]:
    arguments = call.arguments
    if not arguments and call.raw_arguments is not None:
        arguments = {"raw_arguments": call.raw_arguments}
    return {"tool_call_id": call.id or fallback, "function_name": call.name, "arguments": plain(arguments)}


def _agent_step(
    trajectory: Trajectory, step: TrajectoryStep, pending: list[tuple[Trajectory, dict[str, Any]]]
) -> dict[str, Any]:
    calls = [_call(call, f"call_{step.index}_{n}") for n, call in enumerate(step_calls(step))]
    entry: dict[str, Any] = {"source": "agent", "message": step.content}
    if step.thinking:
        entry["reasoning_content"] = step.thinking
    if calls:
        entry["tool_calls"] = calls
    results = []
    ids = [call["tool_call_id"] for call in calls]
    unanswered = list(ids)
    for call_id, text in step_results(step):
        if call_id in unanswered:
            answered: str | None = call_id
        elif call_id is None and unanswered:
            answered = unanswered[0]
        else:
            answered = None
        if answered is not None:
            unanswered.remove(answered)
        result: dict[str, Any] = {"content": text}
        if answered is not None:
            result["source_call_id"] = answered
        results.append(result)
    for child, ref in list(pending):
        spawned = child.parent.call_id if child.parent is not None else None
        if step.subagent == child.id or (spawned and spawned in ids):
            target = spawned if spawned in ids else (ids[0] if ids else None)
            into = next((r for r in results if target and r.get("source_call_id") == target), None)
            if into is None:
                into = {"source_call_id": target} if target else {}
                results.append(into)
            into.setdefault("subagent_trajectory_ref", []).append(ref)
            pending.remove((child, ref))
    if results:
        entry["observation"] = {"results": results}
    extra: dict[str, Any] = {
        key: value
        for key, value in step.extra.items()
        if isinstance(value, str | int | float | bool) and key not in _METRICS
    }
    extra.update(
        (key, value)
        for key, value in (("label", step.label), ("reward", step.reward), ("state", step.state))
        if value is not None
    )
    if step.done:
        extra["done"] = True
    entry["extra"] = plain(extra)
    metrics = _metrics(step)
    if metrics:
        entry["metrics"] = metrics
    if step.model:
        entry["model_name"] = step.model
    if step.timestamp is not None:
        entry["timestamp"] = step.timestamp.isoformat()
    return entry


def _metrics(step: TrajectoryStep) -> dict[str, Any]:
    """The step's usage as ATIF ``metrics`` (prompt, completion, cached tokens, ``cost_usd``);
    else the token counts its ``extra`` holds under OpenInference or GenAI names."""
    if step.usage is not None:
        return _usage_metrics(step.usage)
    return {
        field: step.extra[key]
        for key, field in _METRICS.items()
        if type(step.extra.get(key)) is int and step.extra[key] >= 0
    }


_METRICS = {
    "llm.token_count.prompt": "prompt_tokens",
    "gen_ai.usage.input_tokens": "prompt_tokens",
    "llm.token_count.completion": "completion_tokens",
    "gen_ai.usage.output_tokens": "completion_tokens",
}
"""Token counts a step's ``extra`` holds under OpenInference or GenAI names, as ATIF ``metrics``."""


def _delegation(pending: list[tuple[Trajectory, dict[str, Any]]]) -> dict[str, Any]:
    """A system step naming the sub-agents no step of their parent spawned (RFC v1.2: system steps
    may hold the observation of a delegation)."""
    return {
        "source": "system",
        "message": f"{len(pending)} sub-agent trajectories",
        "observation": {"results": [{"subagent_trajectory_ref": [ref]} for _, ref in pending]},
    }


def _from_atif(trajectory: Trajectory, refs: list[tuple[Trajectory, dict[str, Any]]]) -> dict[str, Any]:
    """An episode the ATIF reader read, written back: its own fields verbatim where the reader kept them."""
    context = {int(entry["position"]): entry["step"] for entry in trajectory.extra["atif_context_steps"]}
    agents = iter(trajectory.steps)
    steps: list[dict[str, Any]] = []
    for position in range(len(context) + len(trajectory.steps)):
        if position in context:
            steps.append(dict(context[position]))
            continue
        step = next(agents)
        entry = {key: value for key, value in step.extra.items() if key in STEP_FIELDS}
        entry["source"] = "agent"
        entry["message"] = step.content
        if step.thinking:
            entry["reasoning_content"] = step.thinking
        calls = [_call(call, f"call_{step.index}_{n}") for n, call in enumerate(step_calls(step))]
        if calls:
            entry["tool_calls"] = calls
        steps.append(entry)
    own = _atif_refs(trajectory)
    pending = [
        (child, ref)
        for child, ref in refs
        if not any(_matches(r, child, Path(str(r.get("trajectory_path") or "")).name) for r in own)
    ]
    if pending:
        steps.append(_delegation(pending))
    agent = dict(trajectory.metadata.get("agent") or {})
    definitions = trajectory.extra.get("atif_tool_definitions")
    if isinstance(definitions, list):
        agent["tool_definitions"] = definitions
    data: dict[str, Any] = {"schema_version": trajectory.metadata.get("schema_version") or ATIF_VERSION}
    for key in ("session_id", "trajectory_id"):
        if key in trajectory.metadata:
            data[key] = trajectory.metadata[key]
    data["agent"] = agent
    data["steps"] = [{key: step[key] for key in STEP_FIELDS if key in step} for step in steps]
    if "notes" in trajectory.metadata:
        data["notes"] = trajectory.metadata["notes"]
    final = trajectory.outcome.scores.get("final_metrics")
    if isinstance(final, dict):
        data["final_metrics"] = final
    if isinstance(trajectory.extra.get("extra"), dict):
        data["extra"] = trajectory.extra["extra"]
    return data
