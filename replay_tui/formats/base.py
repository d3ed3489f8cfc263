"""What a format reader is: a name, a content sniffer and a streaming reader."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.episodes.summary import EpisodeSummary as EpisodeSummary

HEAD_BYTES = 64 * 1024
"""How much of a file :meth:`Reader.sniff` sees. Readers decide from the head, never by parsing the
whole file; one whose files can open with a single long value (swe-agent) may search the rest for keys."""

ReadItem = Trajectory | LoadProblem


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
