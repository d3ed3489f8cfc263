"""What a format reader is: a name, a content sniffer and a streaming reader."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from replay_tui.demos.problems import LoadProblem
from replay_tui.trajectory import Trajectory

HEAD_BYTES = 64 * 1024
"""How much of a file :meth:`Reader.sniff` sees (readers decide from the head, never the whole file)."""

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
