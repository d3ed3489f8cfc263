"""The LLM response cache as one SQLite file: ``CACHE_DIR/llm-cache.sqlite3``.

The file-per-request cache it replaces (:class:`~replay_tui.policies.cache.FileCache`) wrote one
JSON file per request, ~0.5 ms each and hundreds of thousands of inodes for a big run. Here the keys
and entries are the same (:func:`~replay_tui.policies.cache.request_key`, the endpoint-scoped key of
:meth:`LlmPolicy.cache_key`), stored as rows of one table in WAL mode:

- **one writer thread per file and process** takes every ``put`` from a pending map and commits
  whatever has accumulated in one transaction, so ``--jobs 64`` pays one commit per batch, not per
  answer; a ``get`` sees pending entries at once (read-your-writes before the commit);
- **readers** use their own connection per thread (WAL readers never block the writer);
- **several processes** may share the file: SQLite's locking and a busy timeout serialise writers.

A directory that still holds the file-per-request layout (``ab/abcdef….json``) is migrated into the
database the first time it is opened, once (a flag in the ``meta`` table), in one transaction; the
old files are left in place for the user to delete.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from replay_tui.policies.cache import FileCache, default_cache_dir, is_transport_failure, valid_entry

DB_NAME = "llm-cache.sqlite3"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 60.0
"""How long a process waits for another one's write lock (a migration of 400k files takes a while)."""
MAX_ENTRY_BYTES = 64 * 2**20
"""An entry is one answer (at most 16 MiB, ``llm.MAX_RESPONSE_BYTES``) plus its request; a bigger one
is not stored, and a bigger row reads as a miss."""
BATCH_ROWS = 2048
"""The most rows one commit takes; a bigger backlog is committed in several transactions."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, entry BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class CacheError(ValueError):
    """A cache file that cannot be opened or created; the message is one line naming it."""


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable at checkpoints, never corrupt
    return connection


class _Writer:
    """The one writer of a database file in this process: a pending map drained by a thread."""

    def __init__(self, path: Path):
        self.path = path
        self.pending: dict[str, bytes] = {}
        self.error: str | None = None
        """The last write that failed (the cache is best effort: a replay goes on without it)."""
        self._cond = threading.Condition()
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def put(self, key: str, data: bytes) -> None:
        with self._cond:
            self.pending[key] = data
            if self._thread is None:
                self._closed = False
                self._start()
            self._cond.notify_all()

    def _start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="llm-cache-writer", daemon=True)
        self._thread.start()

    def pending_entry(self, key: str) -> bytes | None:
        with self._cond:
            return self.pending.get(key)

    def _run(self) -> None:
        connection: sqlite3.Connection | None = None
        try:
            connection = _connect(self.path)
            while self._commit_next(connection):
                pass
        except BaseException as exc:  # the file went away, the disk is full...: report it, never hang a flush
            self.error = f"{self.path}: {exc}"
        finally:
            with self._cond:
                if self.pending and self.error:  # what could not be written is dropped (best effort)
                    self.pending.clear()
                self._thread = None  # a later put starts a new one
                self._busy = False
                if self.pending:  # a put came in while this writer was closing
                    self._start()
                self._cond.notify_all()
            if connection is not None:
                if self._closed:  # the last writer out folds the log back into the file
                    with contextlib.suppress(sqlite3.Error):
                        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                connection.close()

    def _commit_next(self, connection: sqlite3.Connection) -> bool:
        """Commit the next batch of pending entries; False when there is none and the writer closes."""
        with self._cond:
            while not self.pending and not self._closed:
                self._cond.wait()
            if not self.pending:
                return False
            batch = list(itertools.islice(self.pending.items(), BATCH_ROWS))
            self._busy = True
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.executemany("INSERT OR REPLACE INTO entries (key, entry) VALUES (?, ?)", batch)
            connection.execute("COMMIT")
        except sqlite3.Error as exc:
            self.error = f"{self.path}: {exc}"
            if connection.in_transaction:
                connection.execute("ROLLBACK")
        with self._cond:
            for key, data in batch:  # a newer put of the same key stays pending
                if self.pending.get(key) is data:
                    del self.pending[key]
            self._busy = False
            self._cond.notify_all()
        return True

    def flush(self) -> None:
        """Wait until every pending entry is committed (or its write failed)."""
        with self._cond:
            while (self.pending or self._busy) and self._thread is not None:
                self._cond.wait(0.5)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()


_WRITERS: dict[Path, _Writer] = {}
_WRITERS_LOCK = threading.Lock()


def _writer_for(path: Path) -> _Writer:
    with _WRITERS_LOCK:
        writer = _WRITERS.get(path)
        if writer is None:
            writer = _WRITERS[path] = _Writer(path)
        return writer


@atexit.register
def flush_all() -> None:
    """Commit every cache's pending entries (at exit, so a run that never closed its policy loses nothing)."""
    with _WRITERS_LOCK:
        writers = list(_WRITERS.values())
    for writer in writers:
        writer.close()


class ResponseCache:
    """The SQLite response cache under ``directory`` (created on first use, migrated from the
    file-per-request layout if that is what the directory holds). Thread- and process-safe.

    Instances are cheap handles: every instance of one file in a process shares its writer, so an
    entry put through one is seen by all at once."""

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = (self.directory / DB_NAME).resolve()
        self._local = threading.local()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.migrated = self._open()
        except (OSError, sqlite3.Error) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise CacheError(f"cannot open the response cache {str(self.path)!r}: {reason}") from None
        self._writer = _writer_for(self.path)

    def _open(self) -> int:
        """Create the tables; migrate the old layout once. Returns how many entries were migrated now."""
        connection = self._connection()
        connection.executescript(_SCHEMA)
        if connection.execute("SELECT 1 FROM meta WHERE name = 'migrated'").fetchone():
            return 0
        legacy = FileCache(self.directory)
        connection.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see the flag
        try:
            if connection.execute("SELECT 1 FROM meta WHERE name = 'migrated'").fetchone():
                connection.execute("ROLLBACK")
                return 0
            count = 0
            for key, data in legacy.raw_entries():
                if len(data) <= MAX_ENTRY_BYTES:
                    # an entry already in the database is newer than the old file
                    connection.execute("INSERT OR IGNORE INTO entries (key, entry) VALUES (?, ?)", (key, data))
                    count += 1
            connection.execute(
                "INSERT INTO meta (name, value) VALUES ('migrated', ?), ('schema', ?)",
                (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), str(SCHEMA_VERSION)),
            )
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        return count

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = _connect(self.path)
        return connection

    def get(self, key: str) -> dict[str, Any] | None:
        data = self._writer.pending_entry(key)
        if data is None:
            try:
                row = self._connection().execute("SELECT entry FROM entries WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error:
                return None
            data = row[0] if row is not None else None
        if data is None or len(data) > MAX_ENTRY_BYTES:
            return None
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        return value if valid_entry(value) else None

    def answer(self, key: str, *, retry_failures: bool = False) -> dict[str, Any] | None:
        """What a replay takes from the cache for ``key``: the entry, unless there is none or it is a
        transport failure and ``retry_failures`` asks again for those."""
        entry = self.get(key)
        if entry is not None and retry_failures and is_transport_failure(entry):
            return None
        return entry

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Queue ``entry`` for the writer thread (seen by :meth:`get` at once); an entry over
        :data:`MAX_ENTRY_BYTES` is not stored."""
        data = orjson.dumps(dict(entry), option=orjson.OPT_SORT_KEYS)
        if len(data) <= MAX_ENTRY_BYTES:
            self._writer.put(key, data)

    def flush(self) -> None:
        """Wait until everything put so far is in the file."""
        self._writer.flush()

    @property
    def write_error(self) -> str | None:
        """The last failed write, if any (for a warning: the run itself goes on)."""
        return self._writer.error

    def __iter__(self) -> Iterator[str]:
        """Every key in the file (pending entries committed first)."""
        self.flush()
        for (key,) in self._connection().execute("SELECT key FROM entries"):
            yield key

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __len__(self) -> int:
        self.flush()
        (count,) = self._connection().execute("SELECT COUNT(*) FROM entries").fetchone()
        return int(count)

    def close(self) -> None:
        """Commit pending entries and close this thread's reading connection."""
        self.flush()
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None
