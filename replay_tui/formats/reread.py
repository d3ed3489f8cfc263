"""Loading one indexed episode by reading its file whole again: the readers whose files hold a few
episodes (an ATIF trajectory and its sub-agents, an experiment folder) index them one file at a
time and load an episode from its file's read, kept while the file is unchanged."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from replay_tui.episodes.model import Outcome, Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import EpisodeSummary, ReadItem

Stamp = tuple[tuple[str, int, int], ...]
CHANGED = "the log changed since it was indexed: reopen it"


def changed(file: str, summary: EpisodeSummary) -> LoadProblem:
    """What :meth:`~replay_tui.formats.base.IndexingReader.load` says when the episode is not where
    the index found it."""
    return LoadProblem(file=file, index=summary.record, session_id=summary.id, message=CHANGED)


def deferred(trajectory: Trajectory, record: int, locator: Any, load: Callable[[], ReadItem]) -> EpisodeSummary:
    """The summary of an episode whose outcome is built again when asked (``load``: the episode read
    again), not held: an outcome (a patch, a test report, the reference's checks) can weigh more
    than its row, and a 100,000-episode log shows a few dozen at a time."""
    summary = EpisodeSummary.of(trajectory, record, locator)
    return dataclasses.replace(summary, outcome=None, deferred_outcome=partial(_outcome_of, load))


def _outcome_of(load: Callable[[], ReadItem]) -> Outcome:
    found = load()
    return found.outcome if isinstance(found, Trajectory) else Outcome(status="error", error=found.message)


def indexed(trajectory: Trajectory, summary: EpisodeSummary) -> bool:
    """Whether ``trajectory`` is still the episode ``summary`` was made from (its id and counts)."""
    return (
        trajectory.id == summary.id
        and trajectory.decisions == summary.steps
        and len(trajectory.steps) == (summary.turns if summary.turns is not None else summary.steps)
    )


def episode_at(items: Iterable[ReadItem], nth: int, summary: EpisodeSummary, file: str) -> Trajectory | LoadProblem:
    """The ``nth`` episode of a read when it is still the one indexed; else the read's first error,
    or that the file changed."""
    found = list(items)
    episodes = [item for item in found if isinstance(item, Trajectory)]
    if nth < len(episodes) and indexed(episodes[nth], summary):
        return episodes[nth]
    errors = [item for item in found if isinstance(item, LoadProblem) and item.severity == "error"]
    if errors and not episodes:
        return errors[0]
    return changed(file, summary)


def stamp(files: Iterable[Path]) -> Stamp:
    """What a read depends on, as (path, mtime, size) of each file that still exists."""
    stamps = []
    for each in files:
        try:
            info = each.stat()
        except OSError:
            continue
        stamps.append((str(each), info.st_mtime_ns, info.st_size))
    return tuple(stamps)


class LastRead:
    """The last file's whole read, kept while its stamp is unchanged: the episodes of one file (a
    trajectory's sub-agents) opened or validated one by one read it once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[tuple[Path, Stamp], list[ReadItem]] | None = None

    def items(self, file: Path, files: Stamp, read: Callable[[], Iterable[ReadItem]]) -> list[ReadItem]:
        """``file``'s read, kept while the ``files`` its read depends on are unchanged."""
        key = (file, files)
        with self._lock:
            last = self._last
        if last is not None and last[0] == key:
            return last[1]
        found = list(read())
        with self._lock:
            self._last = (key, found)
        return found
