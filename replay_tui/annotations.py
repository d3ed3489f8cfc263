"""Triage annotations: tags and notes on episodes and steps, kept in a sidecar JSON file.

The sidecar sits beside the demo file (``X.json`` -> ``X.annotations.json``) unless a path is
chosen; when that directory is not writable it falls back to the user's data directory. Every
save is atomic, so a crash never leaves a half-written file, and the temporary files a killed
writer leaves behind are removed on the next load or save.

Two instances (two app windows, an app and a script) may share one sidecar. A save therefore
never writes its whole in-memory copy: under an exclusive lock (``flock`` on the sidecar's folder,
so no lock file is left behind) it
re-reads the file, applies only the edits this instance made since it last read or wrote it
(per tag and per note, so one instance's tag and another's note on the same step both stay), and
writes the result; what others wrote meanwhile is taken into memory and counted, so the app can
say so.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from pydantic import BaseModel, Field

from replay_tui.fileio import atomic_write_bytes, clean_stale_temp_files, open_regular

DEFAULT_LABELS: tuple[str, ...] = ("policy-bug", "data-issue", "normalization", "prompt", "env", "other")
SIDECAR_SUFFIX = ".annotations.json"
FORMAT_VERSION = 1


class Annotation(BaseModel):
    """Tags and a note on one episode (``step_label`` None) or one of its steps ("3", "3.1")."""

    session_id: int = Field(ge=-(2**63), le=2**63 - 1)
    step_label: str | None = None
    tags: list[str] = Field(default_factory=list)
    note: str = ""

    @property
    def key(self) -> tuple[int, str | None]:
        return (self.session_id, self.step_label)

    @property
    def empty(self) -> bool:
        return not self.tags and not self.note.strip()


class AnnotationFile(BaseModel):
    """The sidecar's JSON shape."""

    version: int = FORMAT_VERSION
    labels: list[str] = Field(default_factory=lambda: list(DEFAULT_LABELS))
    annotations: list[Annotation] = Field(default_factory=list)


class AnnotationError(Exception):
    """A sidecar that cannot be read; the message is one line."""


def data_dir() -> Path:
    """The user's data directory for replay-tui (XDG_DATA_HOME or ~/.local/share)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "replay-tui"


def sidecar_path(demo_path: str | os.PathLike[str]) -> Path:
    """Where the annotations of a demo file live: beside it, or in the data dir if that is read-only."""
    demo = Path(demo_path)
    name = demo.name[: -len(demo.suffix)] if demo.suffix else demo.name
    beside = demo.with_name(name + SIDECAR_SUFFIX)
    if os.access(demo.parent, os.W_OK):
        return beside
    return data_dir() / "annotations" / (name + SIDECAR_SUFFIX)


@dataclass
class _Edit:
    """What this instance changed on one annotation since it last synced: tags set or cleared, the note."""

    tags: dict[str, bool] = field(default_factory=dict)
    note: str | None = None


def _fingerprint(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _read_file(path: Path) -> AnnotationFile | None:
    """The sidecar's content, None when there is none; :class:`AnnotationError` when unreadable."""
    try:
        with open_regular(path) as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise AnnotationError(f"{path}: cannot read annotations: {exc.strerror or exc}") from None
    try:
        return AnnotationFile.model_validate(orjson.loads(raw))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, ValidationError are ValueErrors
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise AnnotationError(f"{path}: cannot read annotations: {first}") from None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock for the sidecar's read-merge-write, held on its folder (a rename keeps
    the folder, not the file); a no-op where flock is missing."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    directory = path.parent if str(path.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(directory, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:  # a filesystem without flock: merge without the lock rather than not save
        yield
        return
    try:
        yield
    finally:
        os.close(fd)  # closing releases the lock


class AnnotationStore:
    """In-memory annotations backed by one sidecar file; ``save`` merges and writes it atomically."""

    def __init__(self, path: str | os.PathLike[str], labels: Iterable[str] | None = None):
        self.path = Path(path)
        self.labels: list[str] = list(labels) if labels is not None else list(DEFAULT_LABELS)
        self._fixed_labels = labels is not None
        self._items: dict[tuple[int, str | None], Annotation] = {}
        self._edits: dict[tuple[int, str | None], _Edit] = {}
        self._seen: tuple[int, int, int] | None = None
        self.dirty = False
        self.merged_external = 0
        """How many annotations the last save took from changes another writer made meanwhile."""

    @classmethod
    def load(cls, path: str | os.PathLike[str], labels: Iterable[str] | None = None) -> AnnotationStore:
        """Read the sidecar at ``path`` (a missing file is an empty store)."""
        store = cls(path, labels)
        target = Path(path)
        clean_stale_temp_files(target)
        store._seen = _fingerprint(target)
        data = _read_file(target)
        if data is not None:
            store._take(data)
        return store

    def _take(self, data: AnnotationFile) -> None:
        """Replace the in-memory items with the file's (labels merged)."""
        if not self._fixed_labels:
            self.labels = list(dict.fromkeys([*data.labels, *self.labels, *DEFAULT_LABELS]))
        self._items = {item.key: item for item in data.annotations}

    def changed_on_disk(self) -> bool:
        """Whether the sidecar was written by someone else since this store last read or wrote it."""
        return _fingerprint(self.path) != self._seen

    def __iter__(self) -> Iterator[Annotation]:
        return iter(sorted(self._items.values(), key=_sort_key))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, session_id: int, step_label: str | None = None) -> Annotation | None:
        return self._items.get((session_id, step_label))

    def for_episode(self, session_id: int) -> list[Annotation]:
        """The episode's own annotation first, then its steps', in step order."""
        return sorted((a for a in self._items.values() if a.session_id == session_id), key=_sort_key)

    def episode_tags(self, session_id: int) -> list[str]:
        """Every tag on the episode or any of its steps, each once, in label order."""
        tags = {tag for a in self.for_episode(session_id) for tag in a.tags}
        order = {label: i for i, label in enumerate(self.labels)}
        return sorted(tags, key=lambda t: (order.get(t, len(order)), t))

    def toggle_tag(self, session_id: int, step_label: str | None, tag: str) -> bool:
        """Add ``tag`` if absent, remove it if present; returns True when it is now set."""
        item = self._items.get((session_id, step_label)) or Annotation(session_id=session_id, step_label=step_label)
        if tag in item.tags:
            item.tags.remove(tag)
            present = False
        else:
            item.tags.append(tag)
            present = True
            if tag not in self.labels:
                self.labels.append(tag)
        self._edits.setdefault(item.key, _Edit()).tags[tag] = present
        self._put(item)
        return present

    def set_note(self, session_id: int, step_label: str | None, note: str) -> None:
        item = self._items.get((session_id, step_label)) or Annotation(session_id=session_id, step_label=step_label)
        item.note = note
        self._edits.setdefault(item.key, _Edit()).note = note
        self._put(item)

    def _put(self, item: Annotation) -> None:
        if item.empty:
            self._items.pop(item.key, None)
        else:
            self._items[item.key] = item
        self.dirty = True

    def to_json(self) -> bytes:
        data = AnnotationFile(labels=self.labels, annotations=list(self))
        return orjson.dumps(data.model_dump(mode="json"), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"

    def save(self) -> Path:
        """Merge this instance's edits into the sidecar as it is now, and write it atomically.

        Raises :class:`AnnotationError` when the file on disk cannot be read (it is left as it is,
        and the edits stay in memory) and ``OSError`` when it cannot be written.
        """
        with _locked(self.path):
            self.merged_external = 0
            if self.changed_on_disk():
                data = _read_file(self.path)
                before = {key: item.model_dump() for key, item in self._items.items()}
                self._take(data if data is not None else AnnotationFile(labels=self.labels))
                for key, edit in self._edits.items():
                    self._apply(key, edit)
                after = {key: item.model_dump() for key, item in self._items.items()}
                keys = before.keys() | after.keys()
                self.merged_external = sum(1 for key in keys if before.get(key) != after.get(key))
            atomic_write_bytes(self.path, self.to_json())
            self._seen = _fingerprint(self.path)
        self._edits.clear()
        self.dirty = False
        return self.path

    def _apply(self, key: tuple[int, str | None], edit: _Edit) -> None:
        item = self._items.get(key)
        item = item.model_copy(deep=True) if item else Annotation(session_id=key[0], step_label=key[1])
        for tag, present in edit.tags.items():
            if present and tag not in item.tags:
                item.tags.append(tag)
                if tag not in self.labels:
                    self.labels.append(tag)
            elif not present and tag in item.tags:
                item.tags.remove(tag)
        if edit.note is not None:
            item.note = edit.note
        if item.empty:
            self._items.pop(key, None)
        else:
            self._items[key] = item


def _step_order(label: str | None) -> tuple[int, ...]:
    if label is None:
        return (-1,)
    try:
        return tuple(int(part) for part in label.split("."))
    except ValueError:
        return (1 << 30,)


def _sort_key(item: Annotation) -> tuple[int, tuple[int, ...], str]:
    return (item.session_id, _step_order(item.step_label), item.step_label or "")
