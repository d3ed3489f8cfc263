"""What a log holds, counted: every recorded call of a step, its results, sub-agents, per episode.

Readers map a turn with several tool calls onto one step whose ``action`` is the first call; the
others are in ``extra`` (``tool_calls``: every call of the turn; ``other_tool_calls``: the calls after
the first, each with its ``result``), their results in ``extra["tool_results"]``. These helpers read
that one convention back, so ``formats --json`` and ``convert`` count and write every call.

How :func:`census` counts (one episode in memory at a time, from the reader's streaming ``read``,
or a :class:`~replay_tui.formats.base.CountingReader`'s ``count``: the same episodes with bare
steps; an indexing reader's summaries are not used: they carry neither results, nor a turn's
second call, nor sub-agents):

- ``episodes``: the trajectories the reader yields, sub-agents' included;
- ``steps``: every step (a decision with a call or without: a reply, an event);
- ``calls``: every recorded tool call (a turn's parallel calls each count);
- ``results``: every tool result the log records: the reader's own count (``metadata["results"]``:
  an ATIF system step's observation, an OpenHands observation answering no call) where it keeps one,
  else the recorded calls answered by a result;
- ``subagents``: the episodes that are a sub-agent of another (their ``parent`` link);
- ``problems``: the reader's LoadProblems, warnings included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replay_tui.episodes.model import ToolCall, Trajectory, TrajectoryStep
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import CountingReader, Reader


def step_calls(step: TrajectoryStep) -> list[ToolCall]:
    """Every tool call the step's turn recorded, in order (the action first)."""
    if step.action is None:
        return []
    every = step.extra.get("tool_calls")
    if isinstance(every, list) and len(every) > 1:
        calls = _calls(every)
        if calls:
            return calls
    others = step.extra.get("other_tool_calls")
    if isinstance(others, list):
        return [step.action, *_calls(others)]
    return [step.action]


def _calls(raw: list[Any]) -> list[ToolCall]:
    found = []
    for item in raw:
        if isinstance(item, ToolCall):
            found.append(item)
        elif isinstance(item, dict):
            try:
                found.append(ToolCall.model_validate({k: v for k, v in item.items() if k != "result"}))
            except ValidationError:
                continue
    return found


def step_results(step: TrajectoryStep) -> list[tuple[str | None, str]]:
    """The results the step's calls got, as ``(call id, text)`` in the log's order."""
    if step.action is None:
        return []
    listed = step.extra.get("tool_results")
    if isinstance(listed, list) and listed:
        found: list[tuple[str | None, str]] = []
        for item in listed:
            if isinstance(item, dict):
                call_id = item.get("tool_call_id")
                found.append((str(call_id) if call_id is not None else None, _text(item.get("content"))))
            else:
                found.append((None, _text(item)))
        return found
    found = [] if step.tool_result is None else [(step.action.id, step.tool_result)]
    others = step.extra.get("other_tool_calls")
    if isinstance(others, list):
        for item in others:
            if isinstance(item, dict) and item.get("result") is not None:
                call_id = item.get("id")
                found.append((str(call_id) if call_id is not None else None, _text(item["result"])))
    return found


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def parent_of(trajectory: Trajectory) -> str | None:
    """The id of the episode that spawned ``trajectory`` when it is a sub-agent, else None (an
    empty string when the log says it is a sub-agent but not of which episode)."""
    link = trajectory.parent
    return None if link is None else link.episode or ""


def _results(trajectory: Trajectory) -> int:
    counted = trajectory.metadata.get("results")
    if isinstance(counted, int) and not isinstance(counted, bool):
        return counted
    return sum(len(step_results(step)) for step in trajectory.steps)


def episode_census(trajectory: Trajectory) -> dict[str, Any]:
    """One episode's entry of ``formats --json``'s ``episode_list``."""
    outcome = trajectory.outcome
    return {
        "id": trajectory.id,
        "steps": len(trajectory.steps),
        "calls": sum(len(step_calls(step)) for step in trajectory.steps),
        "results": _results(trajectory),
        "subagent_of": parent_of(trajectory),
        "outcome": {
            "success": outcome.success,
            "score": outcome.reward,
            "status": outcome.status,
            "reason": outcome.reason or None,
            "kind": outcome.kind,
        },
    }


def problem_json(problem: LoadProblem) -> dict[str, Any]:
    """A LoadProblem as ``formats --json`` lists it: file, episode (its id, else its position), field."""
    episode = problem.session_id if problem.session_id is not None else problem.index
    return {
        "file": problem.file,
        "episode": episode,
        "field": problem.field,
        "message": problem.message,
        "severity": problem.severity,
    }


def census(
    path: Path, reader: Reader | None, *, problem: LoadProblem | None = None, counting: bool = True
) -> dict[str, Any]:
    """The counts of ``path`` read by ``reader`` (None: unrecognised, with its ``problem``); a
    :class:`~replay_tui.formats.base.CountingReader`'s bare steps unless ``counting`` is False."""
    found: dict[str, Any] = {
        "file": str(path),
        "format": reader.name if reader is not None else None,
        "episodes": 0,
        "steps": 0,
        "calls": 0,
        "results": 0,
        "subagents": 0,
        "problems": [problem_json(problem)] if problem is not None else [],
        "episode_list": [],
    }
    if reader is None:
        return found
    items = reader.count(path) if counting and isinstance(reader, CountingReader) else reader.read(path)
    for item in items:
        if isinstance(item, LoadProblem):
            found["problems"].append(problem_json(item))
            continue
        entry = episode_census(item)
        found["episodes"] += 1
        found["steps"] += entry["steps"]
        found["calls"] += entry["calls"]
        found["results"] += entry["results"]
        found["subagents"] += entry["subagent_of"] is not None
        found["episode_list"].append(entry)
    return found


def merge_census(folder: Path, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """One object for a folder of log files: its files' counts summed, their problems and episodes in
    file order; ``format`` the one its files share, ``"mixed"`` when they differ, None when no file
    is recognised."""
    names = {entry["format"] for entry in entries if entry["format"] is not None}
    found = census(folder, None)
    found["format"] = names.pop() if len(names) == 1 else "mixed" if names else None
    for key in ("episodes", "steps", "calls", "results", "subagents"):
        found[key] = sum(entry[key] for entry in entries)
    found["problems"] = [problem for entry in entries for problem in entry["problems"]]
    found["episode_list"] = [episode for entry in entries for episode in entry["episode_list"]]
    return found
