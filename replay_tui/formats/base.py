"""What a format reader is: a name, a content sniffer and a streaming reader."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from replay_tui.episodes.model import Outcome, Trajectory
from replay_tui.episodes.problems import LoadProblem

HEAD_BYTES = 64 * 1024
"""How much of a file :meth:`Reader.sniff` sees. Readers decide from the head, never by parsing the
whole file; one whose files can open with a single long value (swe-agent) may search the rest for keys."""

ReadItem = Trajectory | LoadProblem


@dataclass(frozen=True, slots=True)
class EpisodeSummary:
    """What the session browser shows about an episode before it is opened, and where it lives.

    A reader that can find one episode again without reading the whole file (an offset into a JSON
    Lines file, a member of a zip) lists these from :meth:`IndexingReader.index` so a 1 GB log opens
    to a browsable list without holding every episode in memory.
    """

    id: str
    """The episode's id in its log."""
    record: int
    """The episode's position in the file (0-based): what a LoadProblem names."""
    task: str = ""
    steps: int = 0
    """Steps that carry a recorded tool call or plain answer (what a replay will judge): the
    browser's calls."""
    turns: int | None = None
    """Every step of the episode, with a call or without (a reply, a message): the rows the
    stepper lists, the browser's turns. None: the same as ``steps``."""
    reward: float | None = None
    success: bool | None = None
    outcome: Outcome | None = None
    """The log's whole outcome when the reader has it at index time (None: only ``reward`` and
    ``success`` are known before the episode is loaded)."""
    deferred_outcome: Callable[[], Outcome] | None = field(default=None, compare=False, repr=False)
    """How to build the whole outcome when first asked (:meth:`full_outcome`), for a reader that
    has it at index time but not cheaply: a 100,000-sample inspect_ai log lists its rows without
    building 100,000 outcomes, and the browser builds those it shows."""
    locator: Any = None
    """Reader-specific: how :meth:`IndexingReader.load` finds the episode again (offsets, a name)."""

    def full_outcome(self) -> Outcome | None:
        """The log's whole outcome, built now when the reader deferred it; None when only ``reward``
        and ``success`` are known before the episode is loaded."""
        if self.outcome is None and self.deferred_outcome is not None:
            return self.deferred_outcome()
        return self.outcome

    @classmethod
    def of(cls, trajectory: Trajectory, record: int, locator: Any = None) -> EpisodeSummary:
        """The summary of an episode already read whole."""
        return cls(
            id=trajectory.id,
            record=record,
            task=trajectory.task,
            steps=trajectory.decisions,
            turns=len(trajectory.steps),
            reward=trajectory.outcome.reward,
            success=trajectory.outcome.success,
            outcome=trajectory.outcome,
            locator=locator,
        )


@dataclass(frozen=True)
class Detection:
    """How sure a reader is that a file is its format (0 = not at all, 1 = certain), and why."""

    score: float
    reason: str

    @classmethod
    def no(cls, reason: str) -> Detection:
        return cls(0.0, reason)

    @classmethod
    def yes(cls, reason: str, score: float = 1.0) -> Detection:
        return cls(score, reason)


class Reader(Protocol):
    """A log format: ``name`` (for ``--format``), a one-line ``description``, the fields it maps."""

    name: str
    label: str
    description: str

    def sniff(self, path: Path, head: bytes) -> Detection:
        """Decide from ``head`` (the first :data:`HEAD_BYTES` of the file; for a folder, b"")."""
        ...

    def read(self, path: Path) -> Iterator[ReadItem]:
        """Stream the file's episodes; a malformed record is a LoadProblem (file, index, field)."""
        ...


@runtime_checkable
class IndexingReader(Protocol):
    """A reader that indexes a file cheaply and loads one episode at a time (optional).

    Readers without it are read whole by :meth:`Reader.read` (fine for the small files most
    formats produce); a format whose files reach gigabytes implements it.
    """

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every episode's summary, in file order; a record that cannot be indexed is a LoadProblem."""
        ...

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The whole episode ``summary`` points at (or the problem that stops it)."""
        ...


@runtime_checkable
class CountingReader(Protocol):
    """A reader that can read its episodes with bare steps (optional): what ``formats --json``
    counts (:func:`replay_tui.formats.census.census`) at an index's cost."""

    def count(self, path: Path) -> Iterator[ReadItem]:
        """:meth:`Reader.read`'s episodes and problems, each step bare (its calls and results, no
        prompt or telemetry), with the same ids, sub-agent links and outcomes."""
        ...


UTF8_BOM = b"\xef\xbb\xbf"


def strip_bom(data: bytes) -> bytes:
    """JSON text without the UTF-8 byte order mark Windows tools write (orjson refuses it)."""
    return data[3:] if data[:3] == UTF8_BOM else data
