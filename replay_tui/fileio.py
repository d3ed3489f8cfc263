"""Atomic file writes: a report or annotation file is either the old one or the new one, never half."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to a temp file beside ``path``, fsync it, then rename it over ``path``."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    return target


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
