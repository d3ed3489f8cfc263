"""LLM exchanges on disk: the cache keys and entries (the SQLite cache itself is in llm_cache.py), the
previous file-per-request cache (read to migrate it), and cassettes that
record a whole run for offline regression tests.

Both store *entries* under a key: the SHA-256 of the canonical JSON of what determines the model's
answer (model, messages, tools, tool choice, temperature, seed, token limit, sample index). An entry
is what that request produced, either the raw response body or a failure::

    {"outcome": "response", "response": {...chat completion JSON...}, "latency_ms": 12.5, "attempts": 1,
     "request": {...}}
    {"outcome": "failure", "failure": {"kind": "timeout", "message": "...", "raw": null}, ...}

Failures are stored too, so a second identical run gives an identical report without asking again;
``transport`` failures (timeouts, HTTP and connection errors) can be asked again on demand.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from replay_tui.fileio import atomic_write_bytes, atomic_writer

CACHE_FORMAT_VERSION = 1
CASSETTE_FORMAT = "replay-tui-llm-cassette"
CASSETTE_VERSION = 2
"""Version 2: JSON Lines written as the run goes; version 1 (one document) is still read."""

TRANSPORT_FAILURES = frozenset({"timeout", "http_error", "connection_error", "bad_response", "api_error"})
"""Failure kinds that come from the way to the model, not from the model's answer."""


class CassetteError(ValueError):
    """A cassette that cannot be read or written; the message is one line."""


def canonical_json(value: Any) -> bytes:
    """Deterministic JSON bytes: sorted keys, no whitespace."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def request_key(material: Mapping[str, Any]) -> str:
    """The cache key of a request: the SHA-256 hex digest of its canonical JSON."""
    return hashlib.sha256(canonical_json({"v": CACHE_FORMAT_VERSION, **material})).hexdigest()


def default_cache_dir() -> Path:
    """``$REPLAY_TUI_CACHE_DIR``, else ``$XDG_CACHE_HOME/replay-tui/llm`` (``~/.cache/replay-tui/llm``)."""
    explicit = os.environ.get("REPLAY_TUI_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "replay-tui" / "llm"


def is_transport_failure(entry: Mapping[str, Any]) -> bool:
    """True for a stored failure that came from the transport (worth asking again), not the model."""
    if entry.get("outcome") != "failure":
        return False
    failure = entry.get("failure") or {}
    return failure.get("kind") in TRANSPORT_FAILURES


def valid_entry(value: Any) -> bool:
    """Whether a decoded entry has the shape every reader relies on."""
    return isinstance(value, dict) and value.get("outcome") in ("response", "failure")


class FileCache:
    """The previous cache layout, one JSON file per key under ``directory/ab/abcdef....json``; kept
    to migrate it into :class:`~replay_tui.policies.llm_cache.ResponseCache` and as the benchmark's
    baseline (each write is atomic; a corrupt file reads as a miss)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self.directory = Path(directory) if directory is not None else default_cache_dir()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            value = orjson.loads(self.path(key).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            value = None
        return value if valid_entry(value) else None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        atomic_write_bytes(self.path(key), orjson.dumps(dict(entry), option=orjson.OPT_SORT_KEYS))

    def files(self) -> Iterator[Path]:
        """The entry files, in no particular order."""
        if self.directory.is_dir():
            yield from self.directory.glob("[0-9a-f][0-9a-f]/*.json")

    def raw_entries(self) -> Iterator[tuple[str, bytes]]:
        """``(key, JSON bytes)`` of every readable, well-formed entry (what a migration copies)."""
        for path in self.files():
            try:
                data = path.read_bytes()
                value = orjson.loads(data)
            except (OSError, orjson.JSONDecodeError):
                continue
            if valid_entry(value):
                yield path.stem, data

    def __len__(self) -> int:
        return sum(1 for _ in self.files())


class Cassette:
    """Every exchange of a run in one file: ``record`` appends each new entry as it comes (a JSON
    line, flushed, so nothing is held in memory) to a temporary file beside the cassette, renamed over
    it by :meth:`save` (an interrupted run saves what it had; until then the old cassette, or the file
    a mistyped path named, is untouched); ``replay`` serves only what the file holds (never the network).

    The file is JSON Lines: a header ``{"format": ..., "version": 2, "model": ...}``, then one
    ``{"entry": {...}, "key": ...}`` per request, each key once, sorted keys: recording the same run
    twice (one job) writes the same bytes, and a cassette diffs well in version control. Version 1
    cassettes (one JSON document with an ``entries`` map) still replay.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        mode: str,
        model: str | None = None,
        entries: dict[str, dict[str, Any]] | None = None,
    ):
        if mode not in ("record", "replay"):
            raise ValueError("cassette mode must be 'record' or 'replay'")
        self.path = Path(path)
        self.mode = mode
        self.model = model
        self.entries: dict[str, dict[str, Any]] = dict(entries or {})
        """Replay mode: what the file holds. Record mode keeps only the keys written (``written``)."""
        self.written: set[str] = set()
        self.error: str | None = None
        self._lock = threading.Lock()
        self._handle: BinaryIO | None = None
        self._file = contextlib.ExitStack()
        """Record mode: the atomic write of the file, renamed over ``path`` by :meth:`save`."""
        if mode == "record":
            header = {"format": CASSETTE_FORMAT, "version": CASSETTE_VERSION, "model": model}
            try:
                self._handle = self._file.enter_context(atomic_writer(self.path))
                self._handle.write(canonical_json(header) + b"\n")
                self._handle.flush()
            except OSError as exc:
                raise CassetteError(f"cannot write cassette {str(self.path)!r}: {exc.strerror or exc}") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Cassette:
        """Open a recorded cassette for replay; raises :class:`CassetteError` with a one-line reason."""
        target = Path(path)
        name = repr(str(target))
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            raise CassetteError(f"cassette {name} does not exist (record one with --record)") from None
        except OSError as exc:
            raise CassetteError(f"cannot read cassette {name}: {exc.strerror or exc}") from None
        first, _, rest = data.partition(b"\n")
        try:
            header = orjson.loads(first)
        except orjson.JSONDecodeError:
            header = None
        if isinstance(header, dict) and header.get("format") == CASSETTE_FORMAT and "entries" not in header:
            entries = _cassette_lines(rest, name)
        else:  # version 1: one JSON document
            try:
                document = orjson.loads(data)
            except orjson.JSONDecodeError as exc:
                raise CassetteError(f"cassette {name} is not JSON: {exc}") from None
            if not isinstance(document, dict) or document.get("format") != CASSETTE_FORMAT:
                raise CassetteError(f"{name} is not a replay-tui LLM cassette")
            header, found = document, document.get("entries")
            if not isinstance(found, dict) or not all(valid_entry(v) for v in found.values()):
                raise CassetteError(f"cassette {name} has malformed entries")
            entries = found
        model = header.get("model")
        return cls(target, mode="replay", model=model if isinstance(model, str) else None, entries=entries)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self.entries.get(key)

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Record mode: append ``entry`` unless ``key`` is already in the file; a write that fails is
        kept in :attr:`error` (raised by :meth:`save`) and stops the recording, not the run."""
        if self.mode != "record":
            with self._lock:
                self.entries[key] = dict(entry)
            return
        line = canonical_json({"entry": dict(entry), "key": key}) + b"\n"
        with self._lock:
            if key in self.written or self._handle is None:
                return
            try:
                self._handle.write(line)
                self._handle.flush()
            except OSError as exc:
                self.error = f"cannot write cassette {str(self.path)!r}: {exc.strerror or exc}"
                self._close_handle(keep=False)
                return
            self.written.add(key)

    def __len__(self) -> int:
        return len(self.written) if self.mode == "record" else len(self.entries)

    def _close_handle(self, keep: bool = True) -> None:
        """End the write: ``keep`` renames the temporary file over ``path``, else it is removed and
        ``path`` stays as it was."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        try:
            if keep:
                self._file.close()
            else:
                self._file.__exit__(CassetteError, CassetteError(self.error), None)
        except OSError as exc:
            self.error = self.error or f"cannot write cassette {str(self.path)!r}: {exc.strerror or exc}"

    def save(self) -> Path:
        """Finish the file (record mode: close it); returns its path, or raises :class:`CassetteError`
        when a write failed during the run."""
        with self._lock:
            self._close_handle(keep=not self.error)
        if self.error:
            raise CassetteError(self.error)
        return self.path


def _cassette_lines(data: bytes, name: str) -> dict[str, dict[str, Any]]:
    """The entries of a version 2 cassette's lines; a last line cut short (the recording was killed
    mid-write) is left out, any other bad line is an error naming its number."""
    entries: dict[str, dict[str, Any]] = {}
    lines = data.split(b"\n")
    for number, line in enumerate(lines, start=2):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            if number == len(lines) + 1:  # no newline after it: an interrupted write
                break
            raise CassetteError(f"cassette {name} line {number}: not JSON") from None
        if (
            not isinstance(record, dict)
            or not isinstance(record.get("key"), str)
            or not valid_entry(record.get("entry"))
        ):
            raise CassetteError(f"cassette {name} line {number}: not a cassette entry (key, entry)")
        entries.setdefault(record["key"], record["entry"])
    return entries
