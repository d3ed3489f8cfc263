"""Triage annotations: tags and notes on episodes and steps, kept in a sidecar JSON file.

The sidecar sits beside the demo file (``X.json`` -> ``X.annotations.json``) unless a path is
chosen; when that directory is not writable it falls back to the user's data directory. Every
save is atomic, so a crash never leaves a half-written file, and the temporary files a killed
writer leaves behind are removed on the next load or save.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson
from pydantic import BaseModel, Field

from replay_tui.fileio import atomic_write_bytes, clean_stale_temp_files

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


class AnnotationStore:
    """In-memory annotations backed by one sidecar file; ``save`` writes it atomically."""

    def __init__(self, path: str | os.PathLike[str], labels: Iterable[str] | None = None):
        self.path = Path(path)
        self.labels: list[str] = list(labels) if labels is not None else list(DEFAULT_LABELS)
        self._items: dict[tuple[int, str | None], Annotation] = {}
        self.dirty = False

    @classmethod
    def load(cls, path: str | os.PathLike[str], labels: Iterable[str] | None = None) -> AnnotationStore:
        """Read the sidecar at ``path`` (a missing file is an empty store)."""
        store = cls(path, labels)
        target = Path(path)
        clean_stale_temp_files(target)
        if not target.exists():
            return store
        try:
            data = AnnotationFile.model_validate(orjson.loads(target.read_bytes()))
        except (OSError, ValueError, RecursionError) as exc:  # JSONDecodeError, ValidationError are ValueErrors
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise AnnotationError(f"{target}: cannot read annotations: {first}") from None
        if labels is None:
            store.labels = list(dict.fromkeys([*data.labels, *DEFAULT_LABELS]))
        for item in data.annotations:
            store._items[item.key] = item
        return store

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
        self._put(item)
        return present

    def set_note(self, session_id: int, step_label: str | None, note: str) -> None:
        item = self._items.get((session_id, step_label)) or Annotation(session_id=session_id, step_label=step_label)
        item.note = note
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
        """Write the sidecar atomically (temp file + rename)."""
        atomic_write_bytes(self.path, self.to_json())
        self.dirty = False
        return self.path


def _step_order(label: str | None) -> tuple[int, ...]:
    if label is None:
        return (-1,)
    try:
        return tuple(int(part) for part in label.split("."))
    except ValueError:
        return (1 << 30,)


def _sort_key(item: Annotation) -> tuple[int, tuple[int, ...], str]:
    return (item.session_id, _step_order(item.step_label), item.step_label or "")
