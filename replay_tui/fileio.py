"""Atomic file writes: a report or annotation file is either the old one or the new one, never half.

A writer killed between creating its temporary file and renaming it leaves that file behind
(``.NAME.<random>.tmp`` beside NAME). The next save or load of NAME removes such leftovers: only
names of exactly that pattern, and only files older than this process, so a concurrent writer's
temporary file is never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO


def _process_start() -> float:
    """When this process started: from /proc on Linux (to a clock tick, rounded down), else now."""
    now = time.time()
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            ticks = int(handle.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime since boot
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
        return min(now, now - since_boot + ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return now


PROCESS_START = _process_start()
"""When this process started: temporary files older than that are leftovers of an earlier process."""
TEMP_SUFFIX = ".tmp"


def temp_prefix(target: Path) -> str:
    return f".{target.name}."


def _temp_pattern(target: Path) -> re.Pattern[str]:
    # tempfile.mkstemp adds 8 characters from [a-z0-9_]; allow a little more in case that changes
    return re.compile(re.escape(temp_prefix(target)) + r"[A-Za-z0-9_]{6,16}" + re.escape(TEMP_SUFFIX))


def stale_temp_files(path: str | os.PathLike[str], *, older_than: float | None = None) -> list[Path]:
    """The leftover temporary files of interrupted atomic writes of ``path``."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    cutoff = PROCESS_START if older_than is None else older_than
    pattern = _temp_pattern(target)
    found = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                found.append(Path(entry.path))
        except OSError:
            continue
    return sorted(found)


def clean_stale_temp_files(path: str | os.PathLike[str], *, older_than: float | None = None) -> int:
    """Remove the leftovers of interrupted atomic writes of ``path``; returns how many went.

    Never raises: a leftover that cannot be removed is left for next time.
    """
    removed = 0
    for stale in stale_temp_files(path, older_than=older_than):
        try:
            stale.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def _current_umask() -> int:
    """The process umask: from /proc on Linux (a read, safe beside other threads creating files),
    else by setting it and straight back (the only portable way to read it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _target_mode(target: Path) -> int:
    """The mode the written file should have: an existing file keeps its own (a rewrite of a 0644
    report stays 0644), a new one gets what ``open()`` would give it (0666 less the umask), not
    ``mkstemp``'s 0600."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_current_umask()


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to a temp file beside ``path``, fsync it, then rename it over ``path``.

    Leftover temp files of earlier interrupted writes of ``path`` are removed first. The file
    keeps its mode when it existed, else follows the umask (see :func:`_target_mode`).
    """
    with atomic_writer(path) as handle:
        handle.write(data)
    return Path(path)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """:func:`atomic_write_bytes` for a file written piece by piece (a batch file of many lines):
    the handle writes a temp file, renamed over ``path`` when the block ends without an exception."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    clean_stale_temp_files(target)
    try:
        fd, temp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=TEMP_SUFFIX, dir=directory)
    except OSError as exc:  # name the file the user asked for, not our temporary one
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), _target_mode(target))
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


def bounded_lines(handle: IO[bytes], limit: int) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, bytes)`` of a file read line by line; None for a line longer than ``limit``
    bytes, skipped unread, so one huge line never has to fit in memory."""
    number = 0
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = handle.readline(limit)
            yield number, None
            continue
        yield number, raw


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def require_folder(path: str | os.PathLike[str], what: str | None = None) -> Path:
    """``path`` as a Path when it is a folder, else ``NotADirectoryError("[WHAT ]PATH: not a folder")``.

    The one folder check of the command lines and the app; ``what`` names the flag that gave the path."""
    folder = Path(path)
    if not folder.is_dir():
        raise NotADirectoryError(f"{what + ' ' if what else ''}{folder}: not a folder")
    return folder


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (links and ``..`` followed); for paths that do not exist
    (yet), whether they would."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether ``path``, with links and ``..`` followed, is under ``folder`` (served apps write only
    there)."""
    return Path(path).resolve().is_relative_to(Path(folder).resolve())


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise ``OSError`` naming ``path`` now if a file cannot be written there later.

    Called before long work (a replay, a batch) so a typo in an output path costs nothing: the
    folder is created as :func:`atomic_write_bytes` would, and a temporary file is made and removed
    in it, which is the one test that holds for permissions, read-only mounts and /proc alike.
    """
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(21, "is a folder", str(target))
    directory = target.parent if str(target.parent) else Path(".")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=TEMP_SUFFIX, dir=directory)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None
    os.close(fd)
    os.unlink(temp)
