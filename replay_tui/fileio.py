"""Atomic file writes: a report or annotation file is either the old one or the new one, never half.

A writer killed between creating its temporary file and renaming it leaves that file behind
(``.NAME.<random>.tmp`` beside NAME). The next save or load of NAME removes such leftovers: only
names of exactly that pattern, and only files older than this process, so a concurrent writer's
temporary file is never touched.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
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


class OutputClash(ValueError):
    """An output path that names an input, or another output, of the same command; one line."""


OUTPUT_AS_INPUT = "one of the inputs"


def check_outputs(
    outputs: Iterable[tuple[str, str | os.PathLike[str] | None]],
    protected: Iterable[tuple[str, str | os.PathLike[str] | None]],
) -> None:
    """Raise :class:`OutputClash` when an output is a protected file or another output.

    ``outputs`` are ``(flag, path)``; ``protected`` are ``(what, path)``, ``what`` saying what the
    file is (``the annotations sidecar``). Paths are compared by :func:`same_file`: symlinks, ``..``
    and hard links name one file. The one check of every command that writes: ``--record d.json``
    truncated the log being replayed (SIGBUS), ``--record X --report X`` lost the cassette.
    """
    given = [(flag, Path(path)) for flag, path in outputs if path is not None]
    guarded = [(what, Path(path)) for what, path in protected if path is not None]
    for number, (flag, target) in enumerate(given):
        for what, source in guarded:
            if same_file(target, source):
                raise OutputClash(f"{flag} {target} is {what} ({source}): write the output somewhere else")
        for other_flag, other in given[:number]:
            if same_file(target, other):
                raise OutputClash(f"{flag} {target} is also the {other_flag} output: give each output its own path")


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


# -- reading only regular files -------------------------------------------------------------------
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotARegularFile(OSError):
    """A path that names a FIFO, a device, a socket or a folder where a file is read: opening one
    would block forever (a FIFO with no writer) or never end (``/dev/zero``)."""


class FileTooLarge(OSError):
    """A file larger than the most a reader takes of it (a run file, a config)."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``open(path, "rb")`` for a regular file only (symlinks followed); :class:`NotARegularFile`
    otherwise, raised at once: the file is opened with ``O_NONBLOCK`` (a FIFO opens without waiting
    for a writer) and its type is checked on the open descriptor, so a file swapped for a FIFO
    between a check and the open cannot hang the reader."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(errno.EINVAL, f"not a regular file ({_kind(mode)})", os.fspath(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_regular(path: str | os.PathLike[str]) -> None:
    """:class:`NotARegularFile` when ``path`` exists and is not a regular file (links followed);
    nothing is opened. A missing path passes (its reader says it is missing)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        raise NotARegularFile(errno.EINVAL, f"not a regular file ({_kind(mode)})", os.fspath(path))


def read_capped(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (:func:`open_regular`); a bigger one is
    :class:`FileTooLarge` before any of it is read (and a file that grows while read stops at the cap)."""
    with open_regular(path) as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise FileTooLarge(errno.EFBIG, f"larger than {limit:,} bytes; not read", os.fspath(path))
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(errno.EFBIG, f"larger than {limit:,} bytes; not read", os.fspath(path))
    return data


def expand_home(path: str | os.PathLike[str], what: str | None = None) -> Path:
    """``Path(path).expanduser()``, with ``~nosuchuser`` a ``FileNotFoundError`` naming the path (and
    ``what`` gave it) instead of ``RuntimeError``."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        user = os.fspath(path).split("/", 1)[0]
        where = f" (from {what})" if what else ""
        raise FileNotFoundError(errno.ENOENT, f"no such user: {user}{where}", os.fspath(path)) from None


def os_reason(exc: OSError) -> str:
    """``Permission denied``, ``No such file or directory``... without the errno and path decoration."""
    return exc.strerror or str(exc) or type(exc).__name__
