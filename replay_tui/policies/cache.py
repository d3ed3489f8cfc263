"""LLM exchanges on disk: a response cache so a re-run is free and identical, and cassettes that
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

import hashlib
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from replay_tui.fileio import atomic_write_bytes

CACHE_FORMAT_VERSION = 1
CASSETTE_FORMAT = "replay-tui-llm-cassette"

TRANSPORT_FAILURES = frozenset({"timeout", "http_error", "connection_error", "bad_response", "api_error"})
"""Failure kinds that come from the way to the model, not from the model's answer."""


class CassetteError(Exception):
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


def _valid_entry(value: Any) -> bool:
    return isinstance(value, dict) and value.get("outcome") in ("response", "failure")


class ResponseCache:
    """One JSON file per key under ``directory/ab/abcdef....json``; safe across threads and processes
    (each write is atomic; a corrupt file reads as a miss and is overwritten)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self.directory = Path(directory) if directory is not None else default_cache_dir()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            value = orjson.loads(self.path(key).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            value = None
        return value if _valid_entry(value) else None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        atomic_write_bytes(self.path(key), orjson.dumps(dict(entry), option=orjson.OPT_SORT_KEYS))

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json")) if self.directory.is_dir() else 0


class Cassette:
    """Every exchange of a run in one file: ``record`` collects entries and writes them on
    :meth:`save`; ``replay`` serves only what the file holds (never the network).

    The file is deterministic JSON (sorted keys), so recording the same run twice writes the
    same bytes and a cassette diffs well in version control.
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
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Cassette:
        """Open a recorded cassette for replay; raises :class:`CassetteError` with a one-line reason."""
        target = Path(path)
        try:
            data = orjson.loads(target.read_bytes())
        except FileNotFoundError:
            raise CassetteError(f"cassette {str(target)!r} does not exist (record one with --record)") from None
        except OSError as exc:
            raise CassetteError(f"cannot read cassette {str(target)!r}: {exc.strerror or exc}") from None
        except orjson.JSONDecodeError as exc:
            raise CassetteError(f"cassette {str(target)!r} is not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != CASSETTE_FORMAT:
            raise CassetteError(f"{str(target)!r} is not a replay-tui LLM cassette")
        entries = data.get("entries")
        if not isinstance(entries, dict) or not all(_valid_entry(v) for v in entries.values()):
            raise CassetteError(f"cassette {str(target)!r} has malformed entries")
        model = data.get("model")
        return cls(target, mode="replay", model=model if isinstance(model, str) else None, entries=entries)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self.entries.get(key)

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        with self._lock:
            self.entries[key] = dict(entry)

    def __len__(self) -> int:
        return len(self.entries)

    def to_bytes(self) -> bytes:
        with self._lock:
            data = {
                "format": CASSETTE_FORMAT,
                "version": CACHE_FORMAT_VERSION,
                "model": self.model,
                "entries": dict(self.entries),
            }
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"

    def save(self) -> Path:
        """Write the cassette (record mode); returns its path."""
        if self.mode != "record":
            return self.path
        try:
            return atomic_write_bytes(self.path, self.to_bytes())
        except OSError as exc:
            raise CassetteError(f"cannot write cassette {str(self.path)!r}: {exc.strerror or exc}") from None
