"""JSON Lines logs read while an agent still writes them (``--follow``).

A followed file is read once from its start, then only its appended bytes: :class:`LineTail` keeps
the offset, a last line not complete yet (it waits for its newline: never an error) and the line
count. What the lines become depends on the reader:

- a :class:`FollowingReader` (Claude Code, Codex) keeps the state it builds line by line and goes
  on from it (:class:`LogFollower`): a new line costs what reading that line costs, and the
  trajectories shown are made from a fork of that state (:func:`conversation.fork_state`), so a
  response still being written is not cut in two;
- any other reader of JSON Lines (OpenHands events, OTel spans, chat transcripts, WebShop session
  logs) cannot go on from where it stopped (spans are grouped by trace and sorted by start time,
  events are mapped as a whole), so the file is read again whole, by itself, when complete lines
  were appended (not while its last line is cut: that would be a problem for a moment; and, for a
  file slow to read, not more often than :data:`REREAD_SHARE` of the time).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from replay_tui.episodes.problems import LoadProblem
from replay_tui.fileio import open_regular
from replay_tui.formats.base import Reader, ReadItem
from replay_tui.formats.conversation import jsonl_record

CHUNK = 16 << 20
"""Bytes read at a time from a followed file."""
REREAD_SLOW = 0.2
"""Seconds a whole read of a followed file may take before the next one is put off (see below)."""
REREAD_SHARE = 0.1
"""A file that takes longer than :data:`REREAD_SLOW` to read whole is read again at most this share
of the time (a 2 s read, every 20 s at most): the app stays responsive on a big growing file."""


class Gone(Exception):
    """A followed file was truncated or replaced (its message says which)."""


@dataclass(slots=True)
class LineTail:
    """Where reading a growing JSON Lines file stands: the bytes read (``offset``), the start of a
    line not complete yet (``pending``), the lines counted, and which file it is (a new file at the
    same path is a replacement, not more lines)."""

    path: Path
    device: int = -1
    inode: int = -1
    offset: int = 0
    pending: bytes = b""
    lines: int = 0
    _opened: bool = field(default=False, repr=False)

    @property
    def waiting(self) -> bool:
        """A last line is still being written (no newline yet)."""
        return bool(self.pending.strip())

    def read_lines(self) -> Iterator[tuple[int, bytes]]:
        """The complete lines appended since the last call, numbered from 1 (blank ones left out),
        a chunk at a time. Raises :class:`Gone` when the file shrank or was replaced, OSError when
        it cannot be read."""
        stat = os.stat(self.path)
        if not self._opened:
            self.device, self.inode, self._opened = stat.st_dev, stat.st_ino, True
        elif (stat.st_dev, stat.st_ino) != (self.device, self.inode):
            raise Gone("was replaced by another file")
        if stat.st_size < self.offset:
            raise Gone(f"shrank from {self.offset:,} to {stat.st_size:,} bytes (truncated)")
        if stat.st_size == self.offset:
            return
        with open_regular(self.path) as handle:
            handle.seek(self.offset)
            while self.offset < stat.st_size:
                chunk = handle.read(min(CHUNK, stat.st_size - self.offset))
                if not chunk:
                    break
                self.offset += len(chunk)
                data = self.pending + chunk
                end = data.rfind(b"\n") + 1
                self.pending = data[end:]
                for line in data[:end].split(b"\n")[:-1]:
                    self.lines += 1
                    if line.strip():
                        yield self.lines, line


class LogFollower(Protocol):
    """A reader's state for one growing file: fed each complete line's record, it makes the file's
    trajectories (and problems) as they stand whenever asked, without changing its state."""

    def add(self, number: int, record: dict[str, Any] | LoadProblem) -> None: ...

    def results(self) -> list[ReadItem]: ...


class SessionState(Protocol):
    """What a :class:`FollowingReader` builds from one file's records, line by line."""

    def add(self, number: int, record: dict[str, Any] | LoadProblem) -> None: ...

    def fork(self) -> SessionState:
        """A copy that :meth:`finish` can end without ending this one (see ``conversation.fork_state``)."""
        ...

    def finish(self) -> Iterator[ReadItem]:
        """The file's trajectories and problems (ends the state: open responses are closed)."""
        ...


class Forking:
    """The :class:`LogFollower` of a :class:`SessionState`: results are made from a fork of it."""

    def __init__(self, state: SessionState):
        self.state = state

    def add(self, number: int, record: dict[str, Any] | LoadProblem) -> None:
        self.state.add(number, record)

    def results(self) -> list[ReadItem]:
        return list(self.state.fork().finish())


@runtime_checkable
class FollowingReader(Protocol):
    """A reader of JSON Lines session files that goes on from where it stopped (optional)."""

    def follower(self, path: Path) -> LogFollower:
        """The state that reads ``path`` line by line."""
        ...

    def session_files(self, folder: Path) -> list[Path]:
        """The session files of a folder the reader takes whole (new ones are new episodes)."""
        ...


class FollowedFile:
    """One JSON Lines log being written: its tail and what its lines make (see the module docstring)."""

    def __init__(self, path: Path, reader: Reader):
        self.path = path
        self.reader = reader
        self.tail = LineTail(path)
        self.follower = reader.follower(path) if isinstance(reader, FollowingReader) else None
        self.items: list[ReadItem] = []
        """The file's trajectories and problems as of the last :meth:`read` that changed them."""
        self._stale = True
        self._not_before = 0.0

    def read(self) -> bool:
        """Read the lines appended since the last call; True when :attr:`items` were made again.
        Raises :class:`Gone` or OSError as :meth:`LineTail.read_lines` does."""
        if self.follower is not None:
            lines = False
            for number, line in self.tail.read_lines():
                self.follower.add(number, jsonl_record(self.path.name, number, line))
                lines = True
            if not lines and not self._stale:
                return False
            self.items, self._stale = self.follower.results(), False
            return True
        self._stale = sum(1 for _ in self.tail.read_lines()) > 0 or self._stale
        if not self._stale or (self.tail.waiting and self.items) or time.monotonic() < self._not_before:
            return False  # the first read does not wait: a file cut at open is read as it is
        start = time.monotonic()
        self.items, self._stale = list(self.reader.read(self.path)), False
        took = time.monotonic() - start
        if took > REREAD_SLOW:
            self._not_before = start + took / REREAD_SHARE
        return True
