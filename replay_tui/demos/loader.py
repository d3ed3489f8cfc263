"""Open and index demo files without building Python objects for every observation.

Indexing memory-maps the file. The fast path lets msgspec split the top-level array into raw,
zero-copy byte views and decode from each only the header fields and one marker per trajectory
entry (msgspec skips every other value in C without allocating it), so observations stay bytes
on disk. A file msgspec rejects (truncated, invalid, JSON Lines) goes through a tolerant
tokenizer that recovers every complete episode and says where the file broke. An episode is
parsed in full (msgspec + pydantic) only when someone opens it, and cached.
"""

from __future__ import annotations

import glob
import mmap
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from pydantic import ValidationError

from replay_tui.demos.models import (
    DecisionStep,
    Episode,
    EpisodeHeader,
    sub_event_class,
)
from replay_tui.demos.problems import DemoFileError, EpisodeLoadError, LoadProblem

_STR = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
# One token per key (with its scalar value when it has one), per bare string, per bracket.
_TOKEN = re.compile(rb"(" + _STR + rb")\s*:\s*(" + _STR + rb"|[^\s\"\[\]{},:]+)?|" + _STR + rb"|[\[\]{}]")
_NON_SPACE = re.compile(rb"\S")

_QUOTE, _LBRACE, _RBRACE, _LBRACK, _RBRACK = b'"'[0], b"{"[0], b"}"[0], b"["[0], b"]"[0]
_HEADER_KEYS = {
    b'"session_id"': "session_id",
    b'"instruction"': "instruction",
    b'"final_reward"': "final_reward",
    b'"success"': "success",
    b'"completed_by_backup"': "completed_by_backup",
}
_TRAJECTORY = b'"trajectory"'
_STEP_NUMBER = b'"step_number"'
_CONTAINER = object()


class _EntryMarker(msgspec.Struct):
    """Just enough of a trajectory entry to classify it; every other field is skipped unread."""

    step_number: Any = msgspec.UNSET


class _EpisodeIndex(msgspec.Struct):
    """The header fields of an episode plus one marker per trajectory entry."""

    session_id: Any = msgspec.UNSET
    instruction: Any = msgspec.UNSET
    final_reward: Any = msgspec.UNSET
    success: Any = msgspec.UNSET
    completed_by_backup: Any = msgspec.UNSET
    trajectory: list[_EntryMarker] | msgspec.UnsetType = msgspec.UNSET


_SPLIT = msgspec.json.Decoder(list[msgspec.Raw])
_LINES = msgspec.json.Decoder(msgspec.Raw)
_INDEX = msgspec.json.Decoder(_EpisodeIndex)
_HEADER_FIELDS = ("session_id", "instruction", "final_reward", "success", "completed_by_backup")


@dataclass(slots=True)
class EpisodeRef:
    """Where one episode lives and what the browser needs to know about it before opening it."""

    file: DemoFile = field(repr=False)
    index: int
    raw: Any = field(repr=False)
    """The episode's JSON bytes: a zero-copy view into the memory-mapped file."""
    header: HeaderInfo
    decision_steps: int
    sub_events: int

    @property
    def session_id(self) -> int:
        return self.header.session_id

    @property
    def size(self) -> int:
        """Size of the episode's JSON in bytes."""
        return len(memoryview(self.raw))


def _error_text(exc: ValidationError) -> tuple[str, str]:
    """(field path, message) of the first error of a pydantic ValidationError."""
    err = exc.errors(include_url=False)[0]
    return _loc_path(err.get("loc", ())), str(err.get("msg", "invalid value"))


def _loc_path(loc: Iterable[Any]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += ("." if path else "") + str(part)
    return path


def parse_episode(raw: Any, *, file: str, index: int) -> Episode:
    """Validate one raw episode; raise :class:`EpisodeLoadError` naming file, index and field."""
    session = raw.get("session_id") if isinstance(raw, dict) else None

    def fail(field_path: str | None, message: str) -> EpisodeLoadError:
        return EpisodeLoadError(
            LoadProblem(file=file, index=index, session_id=session, field=field_path, message=message)
        )

    if not isinstance(raw, dict):
        raise fail(None, f"episode is a JSON {type(raw).__name__}, not an object")
    try:
        header = EpisodeHeader.model_validate({k: v for k, v in raw.items() if k != "trajectory"})
    except ValidationError as exc:
        path, message = _error_text(exc)
        raise fail(path, message) from None
    if "trajectory" not in raw:
        raise fail("trajectory", "missing")
    trajectory = raw["trajectory"]
    if not isinstance(trajectory, list):
        raise fail("trajectory", f"must be a list, got {type(trajectory).__name__}")
    entries: list[Any] = []
    for position, entry in enumerate(trajectory):
        where = f"trajectory[{position}]"
        if not isinstance(entry, dict):
            raise fail(where, f"entry is a JSON {type(entry).__name__}, not an object")
        if "step_number" in entry:
            model: Any = DecisionStep
        else:
            kind = entry.get("type", "")
            model = sub_event_class(kind if isinstance(kind, str) else "")
        try:
            entries.append(model.model_validate(entry))
        except ValidationError as exc:
            path, message = _error_text(exc)
            raise fail(f"{where}.{path}" if path else where, message) from None
    return Episode.model_validate({**header.model_dump(), "trajectory": entries})


@dataclass(slots=True, frozen=True)
class HeaderInfo:
    """The episode-level fields the browser shows, validated but without pydantic's per-object cost."""

    session_id: int
    instruction: str = ""
    final_reward: float | None = None
    success: bool | None = None
    completed_by_backup: bool = False


def _header(values: dict[str, Any]) -> HeaderInfo:
    """Exact types (the common case) are taken as they are; anything else goes through
    :class:`EpisodeHeader` validation, which coerces numeric strings or raises ValidationError."""
    reward = values.get("final_reward")
    if (
        type(values.get("session_id")) is int
        and type(values.get("instruction", "")) is str
        and (reward is None or type(reward) in (float, int))
        and type(values.get("success", True)) in (bool, type(None))
        and type(values.get("completed_by_backup", False)) is bool
    ):
        return HeaderInfo(
            values["session_id"],
            values.get("instruction", ""),
            None if reward is None else float(reward),
            values.get("success"),
            values.get("completed_by_backup", False),
        )
    header = EpisodeHeader.model_validate(values)
    return HeaderInfo(
        header.session_id, header.instruction, header.final_reward, header.success, header.completed_by_backup
    )


class DemoFile:
    """One demo file, memory-mapped and indexed; episodes are parsed on demand."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.name = str(path)
        self.episodes: list[EpisodeRef] = []
        self.problems: list[LoadProblem] = []
        self.error: str | None = None
        """A file-level error (truncated, trailing garbage); complete episodes stay usable."""
        self._decode_error: str | None = None
        try:
            size = self.path.stat().st_size
        except OSError as exc:
            raise DemoFileError(f"{self.name}: cannot open: {exc.strerror or exc}") from None
        if self.path.is_dir():
            raise DemoFileError(f"{self.name}: is a directory")
        if size == 0:
            raise DemoFileError(f"{self.name}: empty file, expected a JSON array of episodes")
        with open(self.path, "rb") as handle:
            self._data: Any = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self.size = size
        self._index()

    def close(self) -> None:
        """Release the memory map; episodes of this file can no longer be read."""
        self.episodes.clear()
        data, self._data = self._data, b""
        if isinstance(data, mmap.mmap):
            try:
                data.close()
            except BufferError:  # an EpisodeRef is still held elsewhere; the map closes with it
                pass

    def _problem(
        self,
        message: str,
        *,
        index: int | None = None,
        session: Any = None,
        field_path: str | None = None,
        severity: str = "error",
    ) -> None:
        self.problems.append(
            LoadProblem(
                file=self.name, index=index, session_id=session, field=field_path, message=message, severity=severity
            )  # type: ignore[arg-type]
        )

    def _index(self) -> None:
        data = self._data
        first = _NON_SPACE.search(data)
        if first is None:
            raise DemoFileError(f"{self.name}: empty file, expected a JSON array of episodes")
        pos = first.start()
        if data[pos : pos + 3] == b"\xef\xbb\xbf":  # UTF-8 byte order mark
            first = _NON_SPACE.search(data, pos + 3)
            pos = first.start() if first else pos
        lead = data[pos]
        if lead == _LBRACK:
            base = 1  # a JSON array of episodes
        elif lead == _LBRACE:
            base = 0  # JSON Lines, or one episode object per top-level value
        else:
            shown = bytes(data[pos : pos + 20]).decode("utf-8", "replace").splitlines()[0]
            raise DemoFileError(
                f"{self.name}: not a JSON demo file (starts with {shown!r}); expected a JSON array of episodes"
            )

        # A well-formed JSON array, or JSON Lines (one episode object per line), is split by msgspec;
        # anything else (a broken array, a line that is not a whole JSON value) takes the tolerant path.
        if base == 1 and self._index_with(_SPLIT.decode):
            return
        if base == 0 and self._index_with(_LINES.decode_lines):
            return
        self._index_tolerant(pos, base)

    def _index_with(self, split: Any) -> bool:
        """Index the episodes ``split`` cuts the file into; False (and the reason kept) when it cannot."""
        try:
            raws = split(self._data)
        except msgspec.DecodeError as exc:
            self._decode_error = str(exc)
            return False
        self._index_raws(raws)
        return True

    def _index_raws(self, raws: list[Any]) -> None:
        for index, raw in enumerate(raws):
            try:
                marker = _INDEX.decode(raw)
            except msgspec.DecodeError:
                marker = None  # not an object, or a trajectory of non-objects: parse it to say why
            if marker is None or marker.trajectory is msgspec.UNSET:
                self._reject(index, raw)
                continue
            values = {name: getattr(marker, name) for name in _HEADER_FIELDS}
            steps = sum(1 for entry in marker.trajectory if entry.step_number is not msgspec.UNSET)
            self._add(index, raw, values, steps, len(marker.trajectory) - steps)

    def _reject(self, index: int, raw: Any) -> None:
        """Record why an episode that failed the quick index is malformed (full parse names the field)."""
        try:
            parse_episode(msgspec.json.decode(raw), file=self.name, index=index)
        except EpisodeLoadError as exc:
            self.problems.append(exc.problem)
        else:  # pragma: no cover - the quick index only fails on shapes parse_episode rejects
            self._problem("episode could not be indexed", index=index)

    def _add(self, index: int, raw: Any, values: dict[str, Any], steps: int, events: int) -> None:
        values = {name: value for name, value in values.items() if value is not msgspec.UNSET}
        if "session_id" not in values:
            self._problem("missing", index=index, field_path="session_id")
            return
        try:
            header = _header(values)
        except ValidationError as exc:
            path, message = _error_text(exc)
            self._problem(message, index=index, session=values.get("session_id"), field_path=path)
            return
        self.episodes.append(EpisodeRef(self, index, raw, header, steps, events))

    def _index_tolerant(self, pos: int, base: int) -> None:
        """Walk the structure token by token: recovers complete episodes from a broken file."""
        data = self._data
        ep_level = base + 1
        depth = 0
        index = -1
        ep_start = -1
        header: dict[str, Any] = {}
        traj_kind: str | None = None  # None (missing), "list", or the JSON kind it wrongly is
        expect_traj = False
        traj_depth = -1
        entry_is_step = False
        steps = events = 0
        prev_end = pos + 1 if base == 1 else pos
        closed_at = -1
        skipping = False  # inside a top-level element that is not an object

        for match in _TOKEN.finditer(data, pos):
            start = match.start()
            char = data[start]
            if char == _QUOTE:
                key = match.group(1)
                if key is None:  # a bare string value
                    if depth == base and base == 1:
                        index += 1
                        self._problem("episode is a JSON string, not an object", index=index)
                        prev_end = match.end()
                    elif depth == traj_depth:
                        events += 1  # non-object entry; parse_episode reports it
                    continue
                if skipping:
                    continue
                if depth == ep_level:
                    value = match.group(2)
                    if key == _TRAJECTORY:
                        if value is None:
                            expect_traj = True
                        else:
                            traj_kind = "string" if value[0] == _QUOTE else "scalar"
                    else:
                        name = _HEADER_KEYS.get(key)
                        if name is not None:
                            header[name] = _CONTAINER if value is None else value
                elif depth == traj_depth + 1 and key == _STEP_NUMBER:
                    entry_is_step = True
            elif char in (_LBRACE, _LBRACK):
                if depth == base:
                    gap = bytes(data[prev_end:start]).strip()
                    if gap not in (b"", b","):
                        index += 1
                        self._problem(
                            f"top-level value {gap[:40].decode('utf-8', 'replace')!r} is not an episode object",
                            index=index,
                        )
                    index += 1
                    if char == _LBRACK:
                        skipping = True
                        self._problem("episode is a JSON array, not an object", index=index)
                    else:
                        skipping = False
                        ep_start = start
                        header = {}
                        traj_kind = None
                        expect_traj = False
                        traj_depth = -1
                        steps = events = 0
                elif expect_traj and depth == ep_level:
                    expect_traj = False
                    if char == _LBRACK:
                        traj_kind = "list"
                        traj_depth = depth + 1
                    else:
                        traj_kind = "object"
                elif depth == traj_depth and char == _LBRACE:
                    entry_is_step = False
                depth += 1
            else:
                depth -= 1
                if depth == traj_depth:
                    if char == _RBRACE:
                        if entry_is_step:
                            steps += 1
                        else:
                            events += 1
                elif depth == traj_depth - 1 and char == _RBRACK:
                    traj_depth = -1
                if depth == base:
                    prev_end = match.end()
                    if not skipping and ep_start >= 0:
                        self._finish_episode(index, ep_start, prev_end, header, traj_kind, steps, events)
                    ep_start = -1
                    skipping = False
                if depth < base or depth < 0:
                    closed_at = match.end()
                    break

        if (base == 1 and closed_at < 0) or (depth > 0 and base == 0):
            where = "inside an episode" if ep_start >= 0 else "between episodes"
            lost = f"; episode #{index} is incomplete" if ep_start >= 0 else ""
            self.error = (
                f"truncated JSON: the file ends {where} at byte {self.size:,}{lost}; "
                f"{len(self.episodes)} complete episodes are usable"
            )
        elif closed_at >= 0:
            trailing = _NON_SPACE.search(data, closed_at)
            if trailing is not None:
                self.error = f"unexpected data after the JSON array at byte {trailing.start():,}"
        if not self.error and self._decode_error:
            self.error = f"invalid JSON ({self._decode_error})"
        if self.error:
            self._problem(self.error)

    def _finish_episode(
        self, index: int, start: int, end: int, header: dict[str, Any], traj_kind: str | None, steps: int, events: int
    ) -> None:
        raw = memoryview(self._data)[start:end]
        values: dict[str, Any] = {}
        for name, value in header.items():
            try:
                values[name] = {} if value is _CONTAINER else msgspec.json.decode(value)
            except msgspec.DecodeError:
                self._problem(
                    f"invalid JSON value {bytes(value[:40]).decode('utf-8', 'replace')!r}", index=index, field_path=name
                )
                return
        if traj_kind != "list":
            if "session_id" in values and traj_kind is None:
                self._problem("missing", index=index, session=values["session_id"], field_path="trajectory")
            elif "session_id" in values:
                self._problem(
                    f"must be a list, got a JSON {traj_kind}",
                    index=index,
                    session=values["session_id"],
                    field_path="trajectory",
                )
            else:
                self._problem("missing", index=index, field_path="session_id")
            return
        self._add(index, raw, values, steps, events)

    def raw_episode(self, ref: EpisodeRef) -> Any:
        """The episode's JSON as Python data (parsed now, not cached)."""
        try:
            return msgspec.json.decode(ref.raw)
        except msgspec.DecodeError as exc:
            raise EpisodeLoadError(
                LoadProblem(file=self.name, index=ref.index, session_id=ref.session_id, message=f"invalid JSON: {exc}")
            ) from None

    def read_episode(self, ref: EpisodeRef) -> Episode:
        """Parse and validate one episode; raise :class:`EpisodeLoadError` if it is malformed."""
        return parse_episode(self.raw_episode(ref), file=self.name, index=ref.index)


def resolve_demo_paths(specs: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Expand files, directories (their ``*.json``/``*.jsonl``) and glob patterns, in order, once each.

    Raises :class:`DemoFileError` for a spec that matches nothing.
    """
    found: list[Path] = []
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            matches = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file())
            if not matches:
                raise DemoFileError(f"{spec}: directory holds no .json or .jsonl demo files")
        elif path.exists():
            matches = [path]
        elif glob.has_magic(str(spec)):
            matches = sorted(Path(p) for p in glob.glob(str(spec), recursive=True) if Path(p).is_file())
            if not matches:
                raise DemoFileError(f"{spec}: no file matches this pattern")
        else:
            raise DemoFileError(f"{spec}: no such file or directory")
        for match in matches:
            if match not in found:
                found.append(match)
    return found


@dataclass
class DemoSet:
    """Episodes from one or many demo files, indexed by ``session_id``.

    Malformed episodes (found while indexing, or later when parsed) become :class:`LoadProblem`
    records in :attr:`problems`; every other episode stays usable.
    """

    files: list[DemoFile] = field(default_factory=list)
    refs: list[EpisodeRef] = field(default_factory=list)
    by_session: dict[int, EpisodeRef] = field(default_factory=dict)
    problems: list[LoadProblem] = field(default_factory=list)
    cache_size: int = 32
    _cache: OrderedDict[int, Episode] = field(default_factory=OrderedDict, repr=False)
    _bad: dict[int, LoadProblem] = field(default_factory=dict, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def add_file(self, demo: DemoFile) -> None:
        self.files.append(demo)
        self.problems.extend(demo.problems)
        for ref in demo.episodes:
            first = self.by_session.get(ref.session_id)
            if first is not None:
                self.problems.append(
                    LoadProblem(
                        file=demo.name,
                        index=ref.index,
                        session_id=ref.session_id,
                        field="session_id",
                        message=f"duplicate session_id (first seen in {first.file.name} episode #{first.index})",
                    )
                )
                continue
            self.by_session[ref.session_id] = ref
            self.refs.append(ref)

    @property
    def session_ids(self) -> list[int]:
        return [ref.session_id for ref in self.refs]

    @property
    def file_errors(self) -> list[str]:
        """One line per file-level error (truncated file, trailing data)."""
        return [f"{demo.name}: {demo.error}" for demo in self.files if demo.error]

    def __len__(self) -> int:
        return len(self.refs)

    def __iter__(self) -> Iterator[EpisodeRef]:
        return iter(self.refs)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self.by_session

    def ref(self, session_id: int) -> EpisodeRef:
        try:
            return self.by_session[session_id]
        except KeyError:
            raise KeyError(f"no episode with session_id {session_id}") from None

    def episode(self, session_id: int) -> Episode:
        """The parsed episode (cached); raises :class:`EpisodeLoadError` if malformed, KeyError if absent.

        Safe to call from a replay worker thread and the UI thread at once.
        """
        with self._lock:
            return self._episode(session_id)

    def _episode(self, session_id: int) -> Episode:
        cached = self._cache.get(session_id)
        if cached is not None:
            self._cache.move_to_end(session_id)
            return cached
        if session_id in self._bad:
            raise EpisodeLoadError(self._bad[session_id])
        ref = self.ref(session_id)
        try:
            episode = ref.file.read_episode(ref)
        except EpisodeLoadError as exc:
            self._record_bad(session_id, exc.problem)
            raise
        self._cache[session_id] = episode
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return episode

    def _record_bad(self, session_id: int, problem: LoadProblem) -> None:
        """Remember a malformed episode's problem (call with the lock held)."""
        self._bad[session_id] = problem
        self.problems.append(problem)

    def problem_for(self, session_id: int) -> LoadProblem | None:
        """The parse problem found for this session so far, if any."""
        return self._bad.get(session_id)

    def validate_all(self) -> list[LoadProblem]:
        """Parse every episode once (dropping them again) and return the problems found."""
        found = []
        for ref in self.refs:
            with self._lock:  # per episode, as :meth:`episode` does, so readers are not held up for the whole file
                if ref.session_id in self._bad or ref.session_id in self._cache:
                    continue
                try:
                    ref.file.read_episode(ref)
                except EpisodeLoadError as exc:
                    self._record_bad(ref.session_id, exc.problem)
                    found.append(exc.problem)
        return found

    def close(self) -> None:
        for demo in self.files:
            demo.close()


def open_demos(specs: Sequence[str | os.PathLike[str]] | str | os.PathLike[str]) -> DemoSet:
    """Open and index demo files (paths, directories or globs).

    Raises :class:`DemoFileError` (a one-line message) when a spec matches nothing or a file
    cannot be read at all; per-episode problems are collected in :attr:`DemoSet.problems`.
    """
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    demo_set = DemoSet()
    for path in resolve_demo_paths(specs):
        demo_set.add_file(DemoFile(path))
    return demo_set
