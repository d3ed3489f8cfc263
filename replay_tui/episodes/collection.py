"""Episodes of every format behind one set: :class:`EpisodeSet` (the logs opened, their episodes by
session id, the one cache of opened Trajectories, their problems), :class:`EpisodeRef` (where an
episode lives, what its log's index says of it) and :class:`EpisodeSource` (what a file of episodes
is to the set: a seed demo file, ``formats/webshop_demos``, or a log of another format,
:mod:`replay_tui.sources`).
"""

from __future__ import annotations

import glob
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from replay_tui.episodes.model import BACKUP_STATUS, Trajectory
from replay_tui.episodes.problems import DemoFileError, EpisodeLoadError, LoadProblem
from replay_tui.episodes.reading import FastReading
from replay_tui.episodes.summary import EpisodeSummary
from replay_tui.fileio import check_regular, os_reason


class EpisodeSource(Protocol):
    """A file of episodes a EpisodeSet holds: a seed demo file (``formats/webshop_demos``' ``DemoFile``),
    or a log of another format read by its reader (:class:`replay_tui.sources.TrajectoryFile`)."""

    path: Path
    name: str
    format: str
    """The log's format (its reader's name)."""
    episodes: list[EpisodeRef]
    problems: list[LoadProblem]
    error: str | None

    def read_trajectory(self, ref: EpisodeRef, *, fast: bool = True) -> Trajectory:
        """The episode as the one model; raises :class:`EpisodeLoadError` naming its problem.
        ``fast=False``: its fast reading is known to be None (not tried again)."""
        ...

    def read_fast(self, ref: EpisodeRef) -> FastReading | None:
        """The episode as a replay reads it without models, or None (then :meth:`read_trajectory`)."""
        ...

    def close(self) -> None: ...


@dataclass(slots=True)
class Grown:
    """What a look at a growing log found (``--follow``): episodes new to it, problems new and
    problems no longer true (the same objects it reported before), and episodes whose log grew
    (their refs updated in place)."""

    added: list[EpisodeRef] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    gone: list[LoadProblem] = field(default_factory=list)
    changed: list[EpisodeRef] = field(default_factory=list)


@runtime_checkable
class GrowingLog(Protocol):
    """An episode source that is followed as it grows (``--follow``): a seed demo file whose episodes
    are appended, or a log of another format whose episodes may grow as well
    (:class:`replay_tui.sources.FollowedLog`)."""

    @property
    def following(self) -> bool: ...

    def read_grown(self, first_id: int) -> Grown:
        """Read what was appended since the last look; new episodes get ids from ``first_id`` on."""
        ...


@runtime_checkable
class ParsingSource(Protocol):
    """An episode source with a model of its own beside the Trajectory (a seed demo file's contract):
    :meth:`EpisodeSet.episode` reads it, for the contract's tests."""

    def read_episode(self, ref: EpisodeRef) -> Any: ...


@dataclass(slots=True)
class EpisodeRef:
    """Where one episode lives and what the browser needs to know about it before opening it: its
    log's index entry (:class:`EpisodeSummary`, every format's, the seed's too), and its key in the
    set. The views read the names below, never the summary's own."""

    file: EpisodeSource = field(repr=False)
    index: int
    raw: Any = field(repr=False)
    """What the file needs to read the episode again: a seed demo's JSON bytes (a zero-copy view into
    the memory-mapped file; None until a deferred depth scan has found them: read it through the
    file), another log's summary."""
    summary: EpisodeSummary
    session_id: int
    """The episode's key in its set: a seed demo's session id, a position in the set for the others."""
    episode_id: str | None = None
    """The episode's id in a log of another format (None for a seed demo: its session id)."""

    @property
    def task(self) -> str:
        return self.summary.task

    @property
    def reward(self) -> float | None:
        """The reward the log records (None when it records none)."""
        return self.summary.reward

    @property
    def success(self) -> bool | None:
        """The success flag the log records (None when it records none)."""
        return self.summary.success

    @property
    def format(self) -> str:
        return self.file.format

    @property
    def completed_by_backup(self) -> bool:
        return self.summary.status == BACKUP_STATUS

    @property
    def decision_steps(self) -> int:
        """Steps with a recorded call or answer (what a replay judges)."""
        return self.summary.steps

    @property
    def sub_events(self) -> int:
        """The other steps (a seed demo's sub-events, a log's turns without a call)."""
        summary = self.summary
        return max(0, (summary.turns or summary.steps) - summary.steps)


def resolve_demo_paths(specs: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Expand files, directories (their ``*.json``/``*.jsonl``) and glob patterns, in order, once each.

    Raises :class:`DemoFileError` for a spec that matches nothing.
    """
    found: list[Path] = []
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            try:
                matches = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file())
            except OSError as exc:
                raise DemoFileError(f"{spec}: cannot list the directory: {os_reason(exc)}") from None
            if not matches:
                raise DemoFileError(f"{spec}: directory holds no .json or .jsonl demo files")
        elif path.exists():
            try:
                check_regular(path)  # a FIFO with no writer would block the read forever
            except OSError as exc:
                raise DemoFileError(f"{spec}: {os_reason(exc)}: only regular files are read") from None
            matches = [path]
        elif glob.has_magic(str(spec)):
            matches = sorted(Path(p) for p in glob.glob(str(spec), recursive=True) if Path(p).is_file())
            if not matches:
                raise DemoFileError(f"{spec}: no file matches this pattern")
        else:
            raise DemoFileError(f"{spec}: no such file or directory")
        for match in matches:
            if match not in found:
                found.append(match)
    return found


@dataclass
class EpisodeSet:
    """Episodes from one or many logs of any format, indexed by ``session_id`` (a seed demo's own
    session id; a position in the set for the others: :mod:`replay_tui.sources` opens them).

    Malformed episodes (found while indexing, or later when parsed) become :class:`LoadProblem`
    records in :attr:`problems`; every other episode stays usable. Files that could not be read at
    all (when opened with ``skip_unreadable``) are file-level problems in :attr:`unreadable` too.
    """

    files: list[EpisodeSource] = field(default_factory=list)
    refs: list[EpisodeRef] = field(default_factory=list)
    by_session: dict[int, EpisodeRef] = field(default_factory=dict)
    problems: list[LoadProblem] = field(default_factory=list)
    unreadable: list[LoadProblem] = field(default_factory=list)
    cache_size: int = 32
    _cache: OrderedDict[int, Trajectory] = field(default_factory=OrderedDict, repr=False)
    _bad: dict[int, LoadProblem] = field(default_factory=dict, repr=False)
    _noted: set[int] = field(default_factory=set, repr=False)
    """Sessions whose invalid fields (read as defaults) are in :attr:`problems` already."""
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    changed: list[int] = field(default_factory=list)
    """Sessions whose log grew at the last :meth:`read_new` (their cached episodes dropped)."""
    problems_dropped: int = 0
    """How many times :attr:`problems` lost some (a followed log's problem no longer true): with its
    length, what tells a cache of them is stale (problems are otherwise only appended)."""

    def add_file(self, demo: EpisodeSource) -> None:
        self.files.append(demo)
        self.problems.extend(demo.problems)
        self._add_refs(demo, demo.episodes)

    def _add_refs(self, demo: EpisodeSource, episodes: Iterable[EpisodeRef]) -> None:
        by_session, refs = self.by_session, self.refs
        for ref in episodes:
            session_id = ref.session_id
            first = by_session.get(session_id)
            if first is not None:
                self.problems.append(
                    LoadProblem(
                        file=demo.name,
                        index=ref.index,
                        session_id=ref.session_id,
                        field="session_id",
                        message=f"duplicate session_id (first seen in {first.file.name} episode #{first.index})",
                    )
                )
                continue
            by_session[session_id] = ref
            refs.append(ref)

    def add_unreadable(self, name: str, message: str) -> None:
        """Record a file that cannot be read at all (its one-line error) as a file-level problem."""
        prefix = f"{name}: "
        problem = LoadProblem(file=name, message=message[len(prefix) :] if message.startswith(prefix) else message)
        self.unreadable.append(problem)
        self.problems.append(problem)

    @property
    def following(self) -> bool:
        """Some file is followed (``--follow``): :meth:`read_new` may find more episodes."""
        return any(isinstance(demo, GrowingLog) and demo.following for demo in self.files)

    def read_new(self) -> tuple[list[EpisodeRef], list[LoadProblem]]:
        """The episodes (and problems) appended to the followed files since the last call, added to
        the set as if they had been there at open (a duplicate session id is a problem). Episodes
        of a log that grew are listed in :attr:`changed` and parsed again when next asked for."""
        added: list[EpisodeRef] = []
        found: list[LoadProblem] = []
        self.changed = []
        for demo in list(self.files):
            if isinstance(demo, GrowingLog) and demo.following:
                self._grown(demo, demo.read_grown(max(self.by_session, default=-1) + 1), added, found)
        return added, found

    def _grown(self, demo: EpisodeSource, grown: Grown, added: list[EpisodeRef], found: list[LoadProblem]) -> None:
        with self._lock:
            if grown.gone:
                gone = {id(problem) for problem in grown.gone}
                self.problems = [problem for problem in self.problems if id(problem) not in gone]
                self.problems_dropped += 1
            count, before = len(self.refs), len(self.problems)
            self.problems.extend(grown.problems)
            self._add_refs(demo, grown.added)
            added += self.refs[count:]
            found += self.problems[before:]
            for ref in grown.changed:
                session_id = ref.session_id
                self._cache.pop(session_id, None)
                bad = self._bad.pop(session_id, None)
                if bad is not None:  # read again when next asked for: it may be whole now
                    self.problems = [problem for problem in self.problems if problem is not bad]
                    self.problems_dropped += 1
                self._noted.discard(session_id)
                self.changed.append(session_id)

    @property
    def session_ids(self) -> list[int]:
        return [ref.session_id for ref in self.refs]

    @property
    def file_errors(self) -> list[str]:
        """One line per file-level error (truncated file, trailing data)."""
        return [f"{demo.name}: {demo.error}" for demo in self.files if demo.error]

    def __len__(self) -> int:
        return len(self.refs)

    def __iter__(self) -> Iterator[EpisodeRef]:
        return iter(self.refs)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self.by_session

    def session_of(self, episode_id: str) -> int | None:
        """The session of the first episode whose id in its log is ``episode_id`` (a sub-agent's,
        a typed one), None when none is loaded."""
        return next((ref.session_id for ref in self.refs if ref.episode_id == episode_id), None)

    def ref(self, session_id: int) -> EpisodeRef:
        try:
            return self.by_session[session_id]
        except KeyError:
            raise KeyError(f"no episode with session_id {session_id}") from None

    def trajectory(self, session_id: int) -> Trajectory:
        """The episode as the one model (cached; every format's, a seed demo's read as
        its file's ``read_trajectory`` reads it); raises :class:`EpisodeLoadError` if malformed,
        KeyError if absent. Its invalid fields read as defaults are recorded in :attr:`problems` once.

        Safe to call from a replay worker thread and the UI thread at once.
        """
        with self._lock:
            return self._trajectory(session_id)

    def episode(self, session_id: int) -> Any:
        """The episode as its file's own model parses it, for a file that has one (a seed demo file:
        its contract's ``Episode``; not cached: what its tests check of the contract). Engines and
        views read :meth:`trajectory`. Raises as :meth:`trajectory` does, and TypeError for an
        episode of a log of another format."""
        with self._lock:
            if session_id in self._bad:
                raise EpisodeLoadError(self._bad[session_id])
            ref = self.ref(session_id)
            if not isinstance(ref.file, ParsingSource):
                raise TypeError(f"episode {session_id} is a {ref.format} log's: read it with trajectory()")
            try:
                episode = ref.file.read_episode(ref)
            except EpisodeLoadError as exc:
                self._record_bad(session_id, exc.problem)
                raise
            self._note_fields(session_id, episode.problems)
            return episode

    def replay_episode(self, session_id: int) -> Trajectory | FastReading:
        """The episode as a replay reads it: the Trajectory when it is cached, else the fast reading
        of a clean episode of a demo file (not cached: a replay reads each episode once), else
        :meth:`trajectory`. Raises as :meth:`trajectory` does."""
        with self._lock:
            if session_id not in self._cache and session_id not in self._bad:
                ref = self.ref(session_id)
                fast = ref.file.read_fast(ref)
                if fast is not None:
                    return fast
                return self._trajectory(session_id, fast=False)
            return self._trajectory(session_id)

    def _trajectory(self, session_id: int, *, fast: bool = True) -> Trajectory:
        cached = self._cache.get(session_id)
        if cached is not None:
            self._cache.move_to_end(session_id)
            return cached
        if session_id in self._bad:
            raise EpisodeLoadError(self._bad[session_id])
        ref = self.ref(session_id)
        try:
            trajectory = ref.file.read_trajectory(ref, fast=fast)
        except EpisodeLoadError as exc:
            self._record_bad(session_id, exc.problem)
            raise
        self._note_fields(session_id, trajectory.problems)
        self._cache[session_id] = trajectory
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return trajectory

    def _record_bad(self, session_id: int, problem: LoadProblem) -> None:
        """Remember a malformed episode's problem (call with the lock held)."""
        self._bad[session_id] = problem
        self.problems.append(problem)

    def _note_fields(self, session_id: int, problems: list[LoadProblem]) -> list[LoadProblem]:
        """Record the episode's invalid fields (read as their defaults) in :attr:`problems` once (call
        with the lock held); the ones recorded now. The episode itself stays usable (its
        :attr:`Trajectory.problems` say where)."""
        if session_id in self._noted or not problems:
            return []
        self._noted.add(session_id)
        self.problems.extend(problems)
        return list(problems)

    def problem_for(self, session_id: int) -> LoadProblem | None:
        """The parse problem found for this session so far, if any."""
        return self._bad.get(session_id)

    def validate_all(self) -> list[LoadProblem]:
        """Parse every episode once (dropping them again) and return the problems found."""
        return [problem for problem in self.validation() if problem is not None]

    def validation(self, start: int = 0, end: int | None = None) -> Iterator[LoadProblem | None]:
        """Parse every episode not parsed yet (those of :attr:`refs` ``[start:end]``), one at a time
        (dropping them again): yields the problem of each malformed one as it is found (recorded as
        :meth:`trajectory` records it), the invalid fields of a usable one then None, and None after
        each good one, so a caller (the app's background validation) can stop or yield between
        episodes, and go on later with the episodes added since. The set's only episode is kept (in
        the cache, as :meth:`episode` keeps it): a long trajectory alone in its file is then parsed
        once, whenever it is opened."""
        for ref in self.refs[start:end]:
            with self._lock:  # per episode, as :meth:`episode` does, so readers are not held up for the whole file
                if ref.session_id in self._bad or ref.session_id in self._cache:
                    continue
                found: list[LoadProblem | None] = [None]
                try:
                    trajectory = ref.file.read_trajectory(ref)
                    found = [*self._note_fields(ref.session_id, trajectory.problems), None]
                    if len(self.refs) == 1:  # the only one: opening it next takes it, not a second read of the file
                        self._cache[ref.session_id] = trajectory
                except EpisodeLoadError as exc:
                    self._record_bad(ref.session_id, exc.problem)
                    found = [exc.problem]
            yield from found

    def close(self) -> None:
        for demo in self.files:
            demo.close()
