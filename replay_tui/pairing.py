"""Pairing two agents' own runs of the same tasks: a task key per episode, and what overlaps.

Free-running runs share no recorded inputs, only tasks: tau2's task id and trial, inspect's sample id
and epoch, a SWE-bench instance id, a WebShop instruction. :func:`task_key` gives each episode of
any format its key (and the task it belongs to, the cluster its trials share); ``--key`` names
fields instead (:class:`KeyExpr`: dotted paths joined by ``+``, looked up, never evaluated).
:func:`pair_logs` joins two logs on those keys and keeps what did not pair.

:func:`join` is the one pairing of every comparison: two logs' tasks by task key here, and two replay
runs' episodes by (demo file, episode) then their steps by step label in ``compare.runs.compare_runs``
(the replay case's alignment is the identity: a step pairs with the step of the same label).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import DemoFileError, LoadProblem
from replay_tui.formats.registry import FormatError, choose_reader
from replay_tui.sources import expand_logs


class PairingError(ValueError):
    """A log that cannot be read, a bad ``--key``, or two logs with no task in common (one line)."""


_ROOTS = ("id", "format", "task", "metadata", "extra", "outcome")
_PATH = re.compile(r"\A[A-Za-z_][\w-]*(\.[\w-]+)*\Z")


@dataclass(frozen=True)
class KeyExpr:
    """``--key``: fields of a trajectory joined into a task key, e.g. ``metadata.task_id+metadata.trial``.

    Each part is a dotted path from ``id``, ``format``, ``task``, ``metadata``, ``extra`` or
    ``outcome``; the first part also names the task the trials are clustered by."""

    parts: tuple[tuple[str, ...], ...]

    @classmethod
    def parse(cls, text: str) -> KeyExpr:
        parts = []
        for raw in text.split("+"):
            part = raw.strip()
            if not _PATH.match(part):
                raise PairingError(f"--key {text!r}: {part!r} is not a dotted field path (like metadata.task_id)")
            path = tuple(part.split("."))
            if path[0] not in _ROOTS:
                raise PairingError(f"--key {text!r}: {part!r} must start with one of {', '.join(_ROOTS)}")
            parts.append(path)
        return cls(tuple(parts))

    def values(self, trajectory: Trajectory) -> list[str] | str:
        """The parts' values as text, or the name of the first field the trajectory lacks."""
        found = []
        for path in self.parts:
            value: Any = getattr(trajectory, path[0])
            for name in path[1:]:
                if isinstance(value, BaseModel):
                    value = getattr(value, name) if name in type(value).model_fields else None
                else:
                    value = value.get(name) if isinstance(value, dict) else None
            if value is None or isinstance(value, (dict, list)):
                return ".".join(path)
            found.append(str(value))
        return found


@dataclass(frozen=True)
class TaskKey:
    """An episode's place in the task set: ``key`` (task and trial) and ``task`` (its cluster)."""

    key: str
    task: str


def _join(task: Any, trial: Any) -> TaskKey:
    return TaskKey(f"{task}#{trial}" if trial is not None else str(task), str(task))


def task_key(trajectory: Trajectory, expr: KeyExpr | None = None) -> TaskKey | str:
    """The episode's key: ``expr``'s fields when given, else its format's own task identity.

    tau2: task id # trial; inspect_ai: sample id # epoch; a Harbor trial's ATIF trajectory: its
    ``task_name`` (a task's further trials numbered by :func:`load_log`); WebShop: the instruction;
    SWE-agent and any other format: the episode id (an instance id, a session id). A string: the missing field."""
    if expr is not None:
        values = expr.values(trajectory)
        if isinstance(values, str):
            return values
        return TaskKey("#".join(values), values[0])
    meta, extra = trajectory.metadata, trajectory.extra
    if trajectory.format == "tau2" and meta.get("task_id") is not None:
        return _join(meta["task_id"], meta.get("trial"))
    if trajectory.format == "inspect-ai" and extra.get("sample_id") is not None:
        return _join(extra["sample_id"], extra.get("epoch"))
    if trajectory.format == "atif" and isinstance(meta.get("task_name"), str) and meta["task_name"]:
        return TaskKey(meta["task_name"], meta["task_name"])  # a Harbor trial: its session id is its own
    if trajectory.format.startswith("webshop") and trajectory.task.strip():
        return TaskKey(trajectory.task.strip(), trajectory.task.strip())
    return TaskKey(trajectory.id, trajectory.id)


@dataclass
class Episode:
    """A keyed episode of one log."""

    key: TaskKey
    trajectory: Trajectory


@dataclass
class LoadedLog:
    """One run's log, keyed: ``episodes`` by task key in file order; what could not be keyed."""

    path: str
    formats: list[str] = field(default_factory=list)
    episodes: dict[str, Episode] = field(default_factory=dict)
    problems: list[LoadProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _reader(path: Path, fmt: str | None) -> Any:
    try:
        return choose_reader(path, fmt)
    except FormatError as exc:
        raise PairingError(f"{path}: {exc}") from None


def load_log(spec: str | Path, *, fmt: str | None = None, expr: KeyExpr | None = None) -> LoadedLog:
    """Read a run's log of any format (a file, a folder of log files, a glob) and key its episodes.

    A key met twice (a format without trials, a file written twice) is numbered as the next trial
    (``key#2``) and a warning says so."""
    try:
        paths = expand_logs(spec)
    except DemoFileError as exc:
        raise PairingError(str(exc)) from None
    log = LoadedLog(str(spec))
    repeats = 0
    for path in paths:
        reader = _reader(path, fmt)
        if reader.name not in log.formats:
            log.formats.append(reader.name)
        try:
            for item in reader.read(path):
                if isinstance(item, LoadProblem):
                    log.problems.append(item)
                    continue
                found = task_key(item, expr)
                if isinstance(found, str):
                    problem = LoadProblem(file=str(path), session_id=item.id, field=found, message="no such field")
                    log.problems.append(problem)
                    continue
                key, seen = found, 1
                while key.key in log.episodes:
                    seen += 1
                    key = TaskKey(f"{found.key}#{seen}", found.task)
                repeats += seen > 1
                log.episodes[key.key] = Episode(key, item)
        except Exception as exc:  # a reader must not take the comparison down; what it read stays
            log.problems.append(LoadProblem(file=str(path), message=f"{reader.name} reader failed: {exc}"))
    if repeats:
        log.warnings.append(f"{spec}: {repeats} episode(s) repeat a task key; numbered as further trials (key#2…)")
    return log


K = TypeVar("K", bound=Hashable)
A = TypeVar("A")
B = TypeVar("B")


@dataclass
class Joined(Generic[K, A, B]):
    """Two keyed sequences joined: ``paired`` (key, A's value, B's value) in A's order, and what
    one side only has (with its value), each in its own side's order."""

    paired: list[tuple[K, A, B]]
    a_only: list[tuple[K, A]]
    b_only: list[tuple[K, B]]


def join(a: Iterable[tuple[K, A]], b: Mapping[K, B]) -> Joined[K, A, B]:
    """Pair A's items with B's of the same key; a key A repeats pairs each time (its first value in ``b``)."""
    paired: list[tuple[K, A, B]] = []
    a_only: list[tuple[K, A]] = []
    keys_a: set[K] = set()
    for key, value in a:
        keys_a.add(key)
        if key in b:
            paired.append((key, value, b[key]))
        else:
            a_only.append((key, value))
    b_only = [(key, value) for key, value in b.items() if key not in keys_a]
    return Joined(paired, a_only, b_only)


@dataclass
class Pairing:
    """The keys both logs have (in A's order) and those only one has."""

    a: LoadedLog
    b: LoadedLog
    paired: list[str]
    a_only: list[str]
    b_only: list[str]


def pair_logs(a: LoadedLog, b: LoadedLog) -> Pairing:
    """Join two keyed logs; PairingError when no key is in both (they are not runs of one task set)."""
    for log in (a, b):
        if not log.episodes:
            why = f": {log.problems[0].one_line()}" if log.problems else ""
            raise PairingError(f"{log.path}: no episode to pair{why}")
    joined = join(a.episodes.items(), b.episodes)
    paired = [key for key, _, _ in joined.paired]
    a_only = [key for key, _ in joined.a_only]
    b_only = [key for key, _ in joined.b_only]
    if not paired:
        sample = ", ".join(_short(k) for k in (a_only[:2] + b_only[:2])) or "none"
        raise PairingError(
            f"{a.path} and {b.path} share no task key ({len(a.episodes)} and {len(b.episodes)} episodes; "
            f"e.g. {sample}): give --key FIELD[+FIELD] to pair them"
        )
    return Pairing(a, b, paired, a_only, b_only)


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def load_pair(specs: Sequence[str], *, fmt: str | None = None, key: str | None = None) -> Pairing:
    """The CLI's entry: two log paths, an optional ``--format`` and ``--key``, paired."""
    expr = KeyExpr.parse(key) if key else None
    first, second = (load_log(spec, fmt=fmt, expr=expr) for spec in specs)
    return pair_logs(first, second)


def load_pairs(
    specs: Sequence[str], *, fmt: str | None = None, key: str | None = None
) -> tuple[list[tuple[int, Pairing]], list[str]]:
    """Three or more logs: the first (the baseline, A) paired with each other one, read once; each
    pairing with the position of its later log in ``specs``.

    A later log that pairs with nothing (no episode, no task key in common with A) is left out, its
    reason returned as a warning; PairingError only when none pairs (or a log cannot be read)."""
    expr = KeyExpr.parse(key) if key else None
    baseline, *others = (load_log(spec, fmt=fmt, expr=expr) for spec in specs)
    pairings: list[tuple[int, Pairing]] = []
    left_out: list[str] = []
    for position, other in enumerate(others, start=1):
        try:
            pairings.append((position, pair_logs(baseline, other)))
        except PairingError as exc:
            left_out.append(f"left out: {exc}")
    if not pairings:
        raise PairingError(f"no log pairs with the baseline {baseline.path}: {left_out[0].removeprefix('left out: ')}")
    return pairings, left_out
