"""Demo files written from the generated episodes (one JSON array, streamed), and the bundled example."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from replay_tui import examples
from replay_tui.fileio import atomic_writer
from replay_tui.formats.webshop_demos.synth.generate import episode_of

BUNDLED_SEED = 0
BUNDLED_START = 0
BUNDLED_COUNT = 100
BUNDLED_QUIRK_RATE = 0.1


@dataclass(frozen=True, slots=True)
class DemoFileStats:
    """What :func:`write_demo_file` wrote."""

    path: Path
    episodes: int
    bytes: int


def default_filename(start: int, count: int) -> str:
    """The conventional demo file name, ``webshop_demonstrations_{start}-{end}.json``."""
    return f"webshop_demonstrations_{start}-{start + count - 1}.json"


def _dump(episode: dict[str, Any], indent: bool) -> bytes:
    if not indent:
        return orjson.dumps(episode)
    data = orjson.dumps(episode, option=orjson.OPT_INDENT_2)
    return b"  " + data.replace(b"\n", b"\n  ")


def write_demo_file(
    path: str | os.PathLike[str],
    start: int = 0,
    count: int = 100,
    seed: int = 0,
    *,
    quirk_rate: float = 0.0,
    target_bytes: int | None = None,
    indent: bool = False,
) -> DemoFileStats:
    """Stream episodes into a JSON-array demo file, atomically (:func:`replay_tui.fileio.atomic_writer`:
    the old file or the new one, never half, and a killed run's leftover removed by the next).

    With ``target_bytes``, ``count`` is ignored and sessions ``start, start+1, ...`` are written until
    the file reaches about that size. ``indent`` writes a readable, 2-space-indented file; otherwise
    one compact episode per line. Output is UTF-8 with non-ASCII characters kept as they are.
    """
    path = Path(path)
    sessions: Iterable[int] = itertools.count(start) if target_bytes is not None else range(start, start + count)
    written = episodes = 0
    with atomic_writer(path) as fh:
        fh.write(b"[")
        written = 1
        for session_id in sessions:
            if target_bytes is not None and written + 3 >= target_bytes:
                break
            data = _dump(episode_of(session_id, seed, quirk_rate), indent)
            sep = b"\n" if episodes == 0 else b",\n"
            fh.write(sep)
            fh.write(data)
            written += len(sep) + len(data)
            episodes += 1
        tail = b"\n]\n" if episodes else b"]\n"
        fh.write(tail)
        written += len(tail)
    return DemoFileStats(path, episodes, written)


def bundled_example_path() -> Path:
    """Path of the bundled example file (``replay_tui/examples/webshop_demonstrations_0-99.json``)."""
    return Path(str(resources.files(examples).joinpath(default_filename(BUNDLED_START, BUNDLED_COUNT))))


def write_bundled_example(path: str | os.PathLike[str] | None = None) -> DemoFileStats:
    """(Re)generate the bundled example: sessions 0..99, seed 0, quirk rate 0.1, indented."""
    return write_demo_file(
        path if path is not None else bundled_example_path(),
        BUNDLED_START,
        BUNDLED_COUNT,
        BUNDLED_SEED,
        quirk_rate=BUNDLED_QUIRK_RATE,
        indent=True,
    )
