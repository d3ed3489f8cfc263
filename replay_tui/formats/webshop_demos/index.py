"""Open and index the seed's demo files without building Python objects for every observation:
:class:`DemoFile`, one file as an episode source of a :class:`~replay_tui.episodes.collection.EpisodeSet`
(followed as it grows with ``--follow``), and :func:`open_demos`, a set of seed files alone.

Indexing memory-maps the file. The fast path lets msgspec split the top-level array into raw,
zero-copy byte views and decode from each only the header fields and one marker per trajectory
entry (msgspec skips every other value in C without allocating it), so observations stay bytes
on disk. A file msgspec rejects (truncated, invalid, JSON Lines) goes through a tolerant
tokenizer that recovers every complete episode and says where the file broke. An episode is
parsed in full (msgspec + pydantic) only when someone opens it, and cached.

No input escapes as an exception: before msgspec sees a file its nesting depth is checked without
recursion (:mod:`replay_tui.episodes.jsonscan`); UTF-16/32 files are decoded, other non-UTF-8 bytes,
out-of-range numbers and values of the wrong type become a :class:`LoadProblem` naming the field,
and a file that cannot be read at all is a one-line :class:`DemoFileError`.
"""

from __future__ import annotations

import mmap
import operator
import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec
from pydantic import ValidationError

from replay_tui.episodes.collection import EpisodeRef, EpisodeSet, Grown, resolve_demo_paths
from replay_tui.episodes.jsonscan import (
    MAX_DEPTH,
    NON_JSON_CONSTANTS,
    find_bad_value,
    first_too_deep,
    literal,
    not_utf8_message,
    number_message,
    scan_depth,
    sniff_encoding,
    transcode,
    utf8_error,
)
from replay_tui.episodes.model import BACKUP_STATUS, Trajectory
from replay_tui.episodes.problems import DemoFileError, EpisodeLoadError, LoadProblem
from replay_tui.episodes.summary import EpisodeSummary
from replay_tui.fileio import open_regular, os_reason
from replay_tui.formats.webshop_demos.contract import (
    ACTION_FIELDS,
    DecisionStep,
    Episode,
    EpisodeHeader,
    sub_event_class,
)
from replay_tui.formats.webshop_demos.fast import FastEpisode, decode_fast, fast_trajectory
from replay_tui.formats.webshop_demos.trajectory import from_webshop_episode
from replay_tui.sanitize import excerpt

FORMAT = "webshop-demos"
"""The format's name (its reader's): what a view reads of a seed demo file's episodes."""

_STR = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
# One token per key (with its scalar value when it has one), per bare string, per bracket.
_TOKEN = re.compile(rb"(" + _STR + rb")\s*:\s*(" + _STR + rb"|[^\s\"\[\]{},:]+)?|" + _STR + rb"|[\[\]{}]")
_NON_SPACE = re.compile(rb"\S")

_QUOTE, _LBRACE, _RBRACE, _LBRACK, _RBRACK = b'"'[0], b"{"[0], b"}"[0], b"["[0], b"]"[0]
_COMMA = b","[0]
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


class _EntryMarker(msgspec.Struct, gc=False):
    """Just enough of a trajectory entry to classify it; every other field is skipped unread.

    Not tracked by the garbage collector (decoded JSON holds no reference cycles): a 1 GB file
    has ~200k of these, built in one pass."""

    step_number: Any = msgspec.UNSET


class _EpisodeIndex(msgspec.Struct, gc=False):
    """The header fields of an episode plus one marker per trajectory entry."""

    session_id: Any = msgspec.UNSET
    instruction: Any = msgspec.UNSET
    final_reward: Any = msgspec.UNSET
    success: Any = msgspec.UNSET
    completed_by_backup: Any = msgspec.UNSET
    trajectory: list[_EntryMarker] | msgspec.UnsetType = msgspec.UNSET


_STEP_NUMBER_OF = operator.attrgetter("step_number")
_SPLIT = msgspec.json.Decoder(list[msgspec.Raw])
_LINES = msgspec.json.Decoder(msgspec.Raw)
_INDEX = msgspec.json.Decoder(_EpisodeIndex)
_INDEX_ALL = msgspec.json.Decoder(list[_EpisodeIndex])
_HEADER_FIELDS = ("session_id", "instruction", "final_reward", "success", "completed_by_backup")
_ANY = msgspec.json.Decoder()
ID_MIN, ID_MAX = -(2**63), 2**63 - 1
"""Session ids and step numbers must fit in 64 bits (what JSON reports and msgspec can hold)."""


@dataclass(slots=True)
class _Tail:
    """Where following a file stands (``--follow``): for JSON Lines, the bytes read so far
    (``offset``), the start of a line not complete yet and the lines counted; the records counted;
    and which file it is (a new file at the same path is a replacement, not more records)."""

    offset: int
    pending: bytes
    lines: int
    records: int
    device: int
    inode: int
    array: bool = False
    """A JSON array: ``offset`` is the end of its last complete episode, read from again each time."""


def _complete_elements(data: bytes, start: int, *, first: bool) -> tuple[list[tuple[int, int]], bool]:
    """The spans of the complete elements of a JSON array being written, in ``data[start:]`` (just
    after ``[``, ``first``, or after an element): each after a comma (none before the first) and
    followed by ``,`` or ``]``; one not followed by anything yet waits. ``broken`` when something
    else stands between two elements (nothing more of the array can be read)."""
    _, spans = scan_depth(data, 1 << 30, start, spans_at=1)  # elements are at level 1 from inside the array
    accepted: list[tuple[int, int]] = []
    previous, comma = start, not first
    for begin, end in spans:
        if data[previous:begin].strip() != (b"," if comma else b""):
            return accepted, True
        after = _NON_SPACE.search(data, end)
        if after is None:
            break
        if data[after.start()] not in (_COMMA, _RBRACK):
            return accepted, True
        accepted.append((begin, end))
        previous, comma = end, True
    return accepted, False


class _Gone(Exception):
    """A followed file was truncated or replaced (its message says which)."""


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
        raise fail(None, f"episode is a JSON {_json_kind(raw)}, not an object")
    if "session_id" not in raw and "trajectory" not in raw:
        raise fail(None, not_an_episode([str(key) for key in raw]))
    try:
        header = EpisodeHeader.model_validate({k: v for k, v in raw.items() if k != "trajectory"})
    except ValidationError as exc:
        path, message = _error_text(exc)
        raise fail(path, message) from None
    if "trajectory" not in raw:
        raise fail("trajectory", "missing")
    trajectory = raw["trajectory"]
    if not isinstance(trajectory, list):
        raise fail("trajectory", f"must be a list, got a JSON {_json_kind(trajectory)}")
    entries: list[Any] = []
    repaired: list[LoadProblem] = []
    for position, entry in enumerate(trajectory):
        where = f"trajectory[{position}]"
        if not isinstance(entry, dict):
            raise fail(where, f"entry is a JSON {_json_kind(entry)}, not an object")
        if "step_number" in entry:
            model: Any = DecisionStep
        else:
            kind = entry.get("type", "")
            model = sub_event_class(kind if isinstance(kind, str) else "")
        try:  # model_validate's own call, without its wrapper (once per entry of every episode read)
            entries.append(model.__pydantic_validator__.validate_python(entry))
        except ValidationError as exc:
            fixed = _without_bad_fields(model, entry, exc)
            if fixed is None:
                path, message = _error_text(exc)
                raise fail(f"{where}.{path}" if path else where, message) from None
            entries.append(fixed[0])
            for path, message in fixed[1]:
                problem = fail(f"{where}.{path}", message).problem
                repaired.append(problem.model_copy(update={"severity": "warning"}))
    episode = Episode.model_validate({**header.model_dump(), "trajectory": entries})
    episode._problems = repaired
    return episode


VALUE_CHARS = 60
"""The most of an invalid value a problem quotes."""


def _without_bad_fields(
    model: Any, entry: dict[str, Any], exc: ValidationError
) -> tuple[Any, list[tuple[str, str]]] | None:
    """``entry`` validated with its invalid optional fields left out (read as their defaults), and a
    ``(field path, "VALUE: reason; read as DEFAULT")`` for each; None when an invalid field is required
    or one of the :data:`ACTION_FIELDS`, or the entry fails as a whole (a model check), so the episode
    stays a problem as before."""
    bad: dict[str, tuple[str, str]] = {}
    for error in exc.errors(include_url=False):
        loc = error.get("loc", ())
        key = loc[0] if loc else None
        info = model.model_fields.get(key) if isinstance(key, str) else None
        if info is None or info.is_required() or key not in entry or key in ACTION_FIELDS:
            return None
        bad.setdefault(key, (_loc_path(loc), str(error.get("msg", "invalid value"))))
    try:
        fixed = model.__pydantic_validator__.validate_python({k: v for k, v in entry.items() if k not in bad})
    except ValidationError:
        return None
    notes = []
    for key, (path, reason) in bad.items():
        shown = excerpt(repr(entry[key]), VALUE_CHARS)
        default = model.model_fields[key].get_default(call_default_factory=True)
        notes.append((path, f"{shown}: {reason}; read as {default!r}, the rest of the episode is usable"))
    return fixed, notes


def _json_kind(value: Any) -> str:
    """The JSON name of a decoded value's type (``array``, not ``list``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def not_an_episode(keys: Sequence[str] | None = None) -> str:
    """The problem of a JSON object that has neither ``session_id`` nor ``trajectory``."""
    shown = ""
    if keys:
        names = ", ".join(repr(key[:40]) for key in keys[:5]) + (", …" if len(keys) > 5 else "")
        shown = f" (its keys: {names})"
    return (
        f"not an episode: a JSON object without session_id or trajectory{shown}; "
        "expected a JSON array of episode objects, or one episode object per line"
    )


Header = tuple[int, str, float | None, bool | None, bool]
"""An episode's header fields, validated: session id, instruction, final reward, success flag,
completed by backup (what its :class:`EpisodeSummary` is made of)."""


def _header(values: dict[str, Any]) -> Header:
    """Exact types (the common case) are taken as they are; anything else goes through
    :class:`EpisodeHeader` validation, which coerces numeric strings or raises ValidationError."""
    reward = values.get("final_reward")
    if (
        type(values.get("session_id")) is int
        and ID_MIN <= values["session_id"] <= ID_MAX
        and type(values.get("instruction", "")) is str
        and (reward is None or type(reward) is float or (type(reward) is int and ID_MIN <= reward <= ID_MAX))
        and type(values.get("success", True)) in (bool, type(None))
        and type(values.get("completed_by_backup", False)) is bool
    ):
        return (
            values["session_id"],
            values.get("instruction", ""),
            None if reward is None else float(reward),
            values.get("success"),
            values.get("completed_by_backup", False),
        )
    header = EpisodeHeader.model_validate(values)
    return header.session_id, header.instruction, header.final_reward, header.success, header.completed_by_backup


def _quick_header(marker: _EpisodeIndex) -> Header | None:
    """:func:`_header` of a marker whose fields all have their exact types (the common case, taken
    without building a dict); None for anything else, which goes through :meth:`DemoFile._add`."""
    session = marker.session_id
    if type(session) is not int or not ID_MIN <= session <= ID_MAX:
        return None
    instruction = marker.instruction
    if instruction is msgspec.UNSET:
        instruction = ""
    elif type(instruction) is not str:
        return None
    reward = marker.final_reward
    if reward is msgspec.UNSET or reward is None:
        reward = None
    elif type(reward) is int and ID_MIN <= reward <= ID_MAX:
        reward = float(reward)
    elif type(reward) is not float:
        return None
    success = marker.success
    if success is msgspec.UNSET:
        success = None
    elif success is not None and type(success) is not bool:
        return None
    backup = marker.completed_by_backup
    if backup is msgspec.UNSET:
        backup = False
    elif type(backup) is not bool:
        return None
    return session, instruction, reward, success, backup


class DemoFile:
    """One demo file, memory-mapped and indexed; episodes are parsed on demand.

    ``defer_scan`` (the app): a clean file is browsable after one msgspec pass, and the depth scan
    that finds each episode's bytes runs at the first read of an episode (the app's background
    validation, started after the first paint, makes it); an episode nested past MAX_DEPTH is then
    a problem when it is read instead of at open."""

    format = FORMAT

    def __init__(self, path: str | os.PathLike[str], *, defer_scan: bool = False, follow: bool = False):
        self.path = Path(path)
        self.name = str(path)
        self.episodes: list[EpisodeRef] = []
        self.problems: list[LoadProblem] = []
        self.error: str | None = None
        """A file-level error (truncated, trailing garbage); complete episodes stay usable."""
        self.encoding = "utf-8"
        """The file's text encoding; UTF-16 and UTF-32 files are decoded to UTF-8 in memory."""
        self._decode_error: str | None = None
        self._episode_spans: list[tuple[int, int]] = []  # (start, end) of each value the tokenizer cut out
        self._source_start = 0  # bytes of BOM before the JSON text msgspec saw
        self._encoding_error: str | None = None
        self._tolerant = False
        """Indexed by the tolerant tokenizer: each episode's depth is checked again before it is parsed."""
        self._defer_scan = defer_scan
        self._pending_scan: tuple[Any, int, int, list[EpisodeRef]] | None = None
        """The depth scan :meth:`_index_first` left for the first read (its arguments)."""
        self._scan_lock = threading.Lock()
        self._deep_at: dict[int, int] = {}
        """Episodes the deferred scan found nested past MAX_DEPTH: index -> offset in the episode."""
        self._data: Any = b""
        self._tail: _Tail | None = None
        try:
            stat = self.path.stat()
        except OSError as exc:
            raise DemoFileError(f"{self.name}: cannot open: {os_reason(exc)}") from None
        if self.path.is_dir():
            raise DemoFileError(f"{self.name}: is a directory")
        if stat.st_size == 0 and not follow:
            raise DemoFileError(f"{self.name}: empty file, expected a JSON array of episodes")
        self._data = self._read_complete(stat) if follow else self._map()
        self.size = len(self._data)
        try:
            if not follow or _NON_SPACE.search(self._data) is not None:
                self._index()
        except BaseException:
            self.close()
            raise

    def _map(self) -> Any:
        """The file's bytes: memory-mapped, or read when the file cannot be mapped (a pipe, /proc)."""
        try:
            with open_regular(self.path) as handle:
                try:
                    return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                except (OSError, ValueError):
                    return handle.read()
        except OSError as exc:
            raise DemoFileError(f"{self.name}: cannot open: {os_reason(exc)}") from None

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
        severity: Literal["error", "warning"] = "error",
    ) -> None:
        self.problems.append(
            LoadProblem(
                file=self.name, index=index, session_id=session, field=field_path, message=message, severity=severity
            )
        )

    def _index(self) -> None:
        codec, bom = sniff_encoding(bytes(self._data[:4]))
        if codec != "utf-8":
            mapped = self._data
            self._data, self._encoding_error = transcode(mapped, codec, bom)
            if isinstance(mapped, mmap.mmap):
                mapped.close()
            self.encoding, bom = codec, 0
        data = self._data
        first = _NON_SPACE.search(data, bom)
        if first is None:
            raise DemoFileError(f"{self.name}: empty file, expected a JSON array of episodes")
        pos = first.start()
        lead = data[pos]
        if self._is_array(lead):
            base = 1  # a JSON array of episodes
        elif lead in (_LBRACE, _LBRACK):
            base = 0  # JSON Lines (a .jsonl file may start with a line that is not an object), or one object
        else:
            shown = (bytes(data[pos : pos + 20]).decode("utf-8", "replace").splitlines() or [""])[0]
            hint = ", not UTF-8 text" if lead >= 0x80 else ""
            raise DemoFileError(
                f"{self.name}: not a JSON demo file (starts with {shown!r}{hint}); expected a JSON array of episodes"
            )

        # Nesting deeper than MAX_DEPTH is found by a scan without recursion, and sends the file to the
        # tolerant tokenizer (which refuses the deep episodes alone). The same scan finds where each
        # top-level value starts and ends. With ``defer_scan`` a clean file is indexed by msgspec
        # first (it refuses nesting past Python's recursion limit cleanly) and scanned when read.
        # A well-formed file of episode objects is indexed in one msgspec pass; otherwise a
        # well-formed JSON array, or JSON Lines (one episode object per line), is split by msgspec
        # and each value indexed alone; anything else (a broken array, a line that is not a whole
        # JSON value) takes the tolerant path.
        source = memoryview(data)[bom:] if bom else data
        self._source_start = bom
        split = _SPLIT.decode if base == 1 else _LINES.decode_lines
        if not (self._defer_scan and self._index_first(source, base, pos)):
            deep, spans = scan_depth(data, MAX_DEPTH + base, pos, spans_at=base + 1)
            if deep is None and self._index_whole(source, spans, base):
                pass
            elif base == 0 and self._index_lines(source):
                pass  # JSON Lines with bad lines: each line is its own record, a bad one is one problem
            elif deep is not None or not self._index_with(split, source):
                self._tolerant = True
                self._index_tolerant(pos, base)
        if self._encoding_error:
            self.error = f"{self._encoding_error}; {len(self.episodes)} complete episodes are usable"
        if self.error:
            self._problem(self.error)
        elif not self.episodes and not self.problems:
            self._problem("the file holds no episodes (an empty JSON array)")

    def _index_whole(self, source: Any, spans: list[tuple[int, int]], base: int) -> bool:
        """Index a file whose top-level values are all episode objects in one msgspec pass: the
        headers and entry markers come from the decoder, each episode's bytes from ``spans``.

        False (nothing recorded) when the file is anything else (a value that is not an object, bad
        text or numbers in a header, broken JSON): the per-episode path then says why."""
        try:
            markers = _INDEX_ALL.decode(source) if base == 1 else _INDEX.decode_lines(source)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return False
        if len(markers) != len(spans):  # pragma: no cover - both see the same well-formed values
            return False
        view = memoryview(self._data)
        for index, (marker, (start, end)) in enumerate(zip(markers, spans, strict=True)):
            self._index_one(index, msgspec.Raw(view[start:end]), marker)
        return True

    def _index_first(self, source: Any, base: int, pos: int) -> bool:
        """Index a clean file (every value an episode object whose header has its exact types) from
        one msgspec pass, before any depth scan: the refs are browsable at once and their ``raw``
        bytes come from a scan made by the first read (:meth:`_scan_spans`), which also finds
        episodes nested past MAX_DEPTH (a scan on a thread at once would take the GIL from the
        first paint: numpy holds it for much of the scan). msgspec itself refuses nesting past
        Python's recursion limit with a RecursionError, so no input can hurt it. False (nothing
        recorded) for any other file: the caller then scans first, as without ``defer_scan``."""
        try:
            markers = _INDEX_ALL.decode(source) if base == 1 else _INDEX.decode_lines(source)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return False
        refs: list[EpisodeRef] = []
        for index, marker in enumerate(markers):
            ref = self._quick_ref(index, None, marker)
            if ref is None:
                return False
            refs.append(ref)
        self.episodes.extend(refs)
        self._pending_scan = (source, base, pos, refs)
        return True

    def _scan_spans(self, source: Any, base: int, pos: int, refs: list[EpisodeRef]) -> None:
        """Give each ref of :meth:`_index_first` its bytes. An episode nested past MAX_DEPTH is
        remembered (reading it raises the same problem the tolerant index records)."""
        try:
            data = self._data
            deep, spans = scan_depth(data, MAX_DEPTH + base, pos, spans_at=base + 1)
            if deep is None and len(spans) == len(refs):
                view = memoryview(data)
                for ref, (start, end) in zip(refs, spans, strict=True):
                    ref.raw = view[start:end]
                return
            # Rare: some episode is nested past MAX_DEPTH (the scan stops there). msgspec splits the
            # file (it decoded it whole, so it is within the recursion limit) and each is checked.
            raws = _SPLIT.decode(source) if base == 1 else _LINES.decode_lines(source)
            for ref, raw in zip(refs, raws, strict=True):
                at = first_too_deep(raw, MAX_DEPTH)
                if at is not None:
                    self._deep_at[ref.index] = at
                ref.raw = raw
        except (ValueError, BufferError):  # pragma: no cover - the file was closed while scanning
            pass

    def _raw_of(self, ref: EpisodeRef) -> Any:
        """``ref.raw``, after the deferred scan (the first caller makes it, any other waits)."""
        with self._scan_lock:
            pending, self._pending_scan = self._pending_scan, None
            if pending is not None:
                self._scan_spans(*pending)
        if ref.raw is None:  # pragma: no cover - the file was closed before its scan finished
            raise EpisodeLoadError(
                LoadProblem(file=self.name, index=ref.index, session_id=ref.session_id, message="file closed")
            )
        return ref.raw

    def _index_with(self, split: Any, source: Any) -> bool:
        """Index the episodes ``split`` cuts the file into; False (and the reason kept) when it cannot."""
        try:
            raws = split(source)
        except (msgspec.DecodeError, RecursionError) as exc:
            self._decode_error = str(exc)
            return False
        self._index_raws(raws)
        return True

    def _index_lines(self, source: Any) -> bool:
        """Index JSON Lines one line at a time: a cut, invalid or too deeply nested line is a problem
        naming its line, and every other line stays usable (the tolerant tokenizer reads a stream and
        lost everything after the first cut line).

        False (nothing recorded) when the first record does not end at its line's end: a single
        object written over several lines is not JSON Lines, the tolerant path reads it."""
        view = memoryview(source)
        lines: list[tuple[int, Any]] = []
        start = 0
        number = 0
        size = len(view)
        while start < size:
            end = source.find(b"\n", start)
            end = size if end < 0 else end
            number += 1
            if _NON_SPACE.search(source, start, end) is not None:
                lines.append((number, view[start:end]))
            start = end + 1
        if len(lines) < 2:
            return False
        try:
            _LINES.decode(lines[0][1])
        except (msgspec.DecodeError, RecursionError):
            if first_too_deep(lines[0][1], MAX_DEPTH) is None:
                return False
        for index, (number, line) in enumerate(lines):
            self._index_record(index, line, f"line {number:,}")
        return True

    def _index_record(self, index: int, record: Any, where: str, others: str = "lines") -> None:
        """One record cut out of the file (``where``: "line 7"): an episode, or a problem naming it."""
        deep = first_too_deep(record, MAX_DEPTH)
        if deep is not None:
            self._problem(f"{where}: {self._too_deep(record, deep)}", index=index)
            return
        try:
            raw = _LINES.decode(record)
        except (msgspec.DecodeError, RecursionError) as exc:
            reason = str(exc).split(" - ")[0] if str(exc) else "invalid JSON"
            message = f"{where} is not a complete JSON value ({reason}); the other {others} are read"
            self._problem(message, index=index)
            return
        try:
            marker = _INDEX.decode(raw)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            marker = None
        self._index_one(index, raw, marker)

    # -- following a file that is still being written (--follow) ------------------------------
    def _is_array(self, lead: int) -> bool:
        """A file starting with ``[`` is one JSON array of episodes, unless it is named ``.jsonl``."""
        return lead == _LBRACK and self.path.suffix.lower() != ".jsonl"

    def _read_complete(self, stat: os.stat_result) -> bytes:
        """``follow``: the file read into memory (a map would crash the app with SIGBUS if the file
        were truncated under it) up to its last complete record, which :meth:`read_new` goes on from.

        JSON Lines: up to the last newline (a last line still being written waits for its own).
        A JSON array: up to its last complete episode (one followed by ``,`` or the closing ``]``,
        which a writer may rewrite after each new episode), indexed as if the array closed there."""
        try:
            with open_regular(self.path) as handle:
                data = handle.read()
        except OSError as exc:
            raise DemoFileError(f"{self.name}: cannot open: {os_reason(exc)}") from None
        first = _NON_SPACE.search(data)
        codec, _ = sniff_encoding(data[:4])
        if codec != "utf-8":
            self._problem("not followed: only UTF-8 files are followed", severity="warning")
            return data
        if first is not None and self._is_array(data[first.start()]):
            after = first.start() + 1
            spans, broken = _complete_elements(data, after, first=True)
            if broken:  # indexed as without --follow, which says where the file broke
                self._problem("not followed: the JSON array is broken", severity="warning")
                return data
            end = spans[-1][1] if spans else after
            self._tail = _Tail(end, b"", 0, len(spans), stat.st_dev, stat.st_ino, array=True)
            return data[:end] + b"]" if spans else b""
        end = data.rfind(b"\n") + 1
        records = sum(1 for line in data[:end].split(b"\n") if line.strip())
        self._tail = _Tail(len(data), data[end:], data.count(b"\n", 0, end), records, stat.st_dev, stat.st_ino)
        return data[:end]

    @property
    def following(self) -> bool:
        return self._tail is not None

    def read_grown(self, first_id: int) -> Grown:
        """:meth:`read_new` as a set reads a followed log (episodes keep their session ids, and a
        demo file's episodes never grow once complete)."""
        episodes, problems = self.read_new()
        return Grown(added=episodes, problems=problems)

    def read_new(self, limit: int = 16 << 20) -> tuple[list[EpisodeRef], list[LoadProblem]]:
        """The episodes and problems of the records appended since the last call (of JSON Lines, at
        most ``limit`` new bytes read per call; of an array, from its last complete episode on);
        the file is never read again from its start. A truncated or replaced file is one problem,
        and following it stops."""
        tail = self._tail
        if tail is None:
            return [], []
        episodes, problems = len(self.episodes), len(self.problems)
        try:
            stat = os.stat(self.path)
            if (stat.st_dev, stat.st_ino) != (tail.device, tail.inode):
                raise _Gone("was replaced by another file")
            if stat.st_size < tail.offset:
                raise _Gone(f"shrank from {tail.offset:,} to {stat.st_size:,} bytes (truncated)")
            if stat.st_size == tail.offset:
                return [], []
            with open_regular(self.path) as handle:
                handle.seek(tail.offset)
                size = stat.st_size - tail.offset
                chunk = handle.read(size if tail.array else min(limit, size))
            if tail.array:
                self._read_elements(tail, chunk)
                return self.episodes[episodes:], self.problems[problems:]
        except (OSError, _Gone) as exc:
            self._tail = None
            reason = f"cannot be read any more ({os_reason(exc)})" if isinstance(exc, OSError) else str(exc)
            self._problem(f"{reason}; following stopped, the episodes read so far stay: reopen it to read it again")
            return self.episodes[episodes:], self.problems[problems:]
        tail.offset += len(chunk)
        pending = tail.pending + chunk
        end = pending.rfind(b"\n") + 1
        tail.pending = pending[end:]
        view = memoryview(pending)
        start = 0
        while start < end:
            stop = pending.index(b"\n", start)
            tail.lines += 1
            if _NON_SPACE.search(pending, start, stop) is not None:
                self._index_record(tail.records, view[start:stop], f"line {tail.lines:,}")
                tail.records += 1
            start = stop + 1
        return self.episodes[episodes:], self.problems[problems:]

    def _read_elements(self, tail: _Tail, chunk: bytes) -> None:
        """The complete episodes of a followed JSON array in ``chunk`` (its bytes after the last one)."""
        spans, broken = _complete_elements(chunk, 0, first=tail.records == 0)
        view = memoryview(chunk)
        for start, end in spans:
            where = f"the episode at byte {tail.offset + start:,}"
            self._index_record(tail.records, view[start:end], where, others="episodes")
            tail.records += 1
        if broken:
            raise _Gone(f"is not a JSON array any more after byte {tail.offset + (spans[-1][1] if spans else 0):,}")
        if spans:
            tail.offset += spans[-1][1]

    def _index_raws(self, raws: list[Any]) -> None:
        for index, raw in enumerate(raws):
            try:
                marker = _INDEX.decode(raw)
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                marker = None  # not an object, a trajectory of non-objects, bad text or numbers: parse it to say why
            self._index_one(index, raw, marker)

    def _quick_ref(self, index: int, raw: Any, marker: _EpisodeIndex) -> EpisodeRef | None:
        """The ref of an episode whose marker has a trajectory and a header of exact types (the
        common case, no validation needed); None for any other."""
        trajectory = marker.trajectory
        if isinstance(trajectory, msgspec.UnsetType):
            return None
        header = _quick_header(marker)
        if header is None:
            return None
        events = list(map(_STEP_NUMBER_OF, trajectory)).count(msgspec.UNSET)  # a loop in C
        return self._ref(index, raw, header, len(trajectory) - events, events)

    def _ref(self, index: int, raw: Any, header: Header, steps: int, events: int) -> EpisodeRef:
        """The ref of an indexed episode: its header and counts as the summary every reader lists."""
        session, instruction, reward, success, backup = header
        summary = EpisodeSummary(
            id=str(session),
            record=index,
            task=instruction,
            steps=steps,
            turns=steps + events,
            reward=reward,
            success=success,
            status=BACKUP_STATUS if backup else None,
        )
        return EpisodeRef(self, index, raw, summary, session)

    def _index_one(self, index: int, raw: Any, marker: _EpisodeIndex | None) -> None:
        if marker is None or isinstance(marker.trajectory, msgspec.UnsetType):
            self._reject(index, raw)
            return
        ref = self._quick_ref(index, raw, marker)
        if ref is not None:
            self.episodes.append(ref)
            return
        trajectory = marker.trajectory
        events = [entry.step_number for entry in trajectory].count(msgspec.UNSET)
        values = {name: getattr(marker, name) for name in _HEADER_FIELDS}
        self._add(index, raw, values, len(trajectory) - events, events)

    def _reject(self, index: int, raw: Any) -> None:
        """Record why an episode that failed the quick index is malformed (full parse names the field)."""
        try:
            parse_episode(self._decode(raw, index), file=self.name, index=index)
        except EpisodeLoadError as exc:
            self.problems.append(exc.problem)
        except Exception as exc:  # pragma: no cover - a parser bug must not stop the index
            self._problem(f"unexpected error: {_exception_line(exc)}", index=index)
        else:  # pragma: no cover - the quick index only fails on shapes parse_episode rejects
            self._problem("episode could not be indexed", index=index)

    def _decode(self, raw: Any, index: int, session: Any = None) -> Any:
        """One episode's JSON as Python data; :class:`EpisodeLoadError` naming the field otherwise."""

        def fail(field_path: str | None, message: str) -> EpisodeLoadError:
            return EpisodeLoadError(
                LoadProblem(file=self.name, index=index, session_id=session, field=field_path, message=message)
            )

        # The whole file's depth was checked when it was indexed; a broken file's episodes (cut out by
        # the tolerant tokenizer) are checked again, one by one.
        deep = first_too_deep(raw, MAX_DEPTH) if self._tolerant else self._deep_at.get(index)
        if deep is not None:
            raise fail(None, self._too_deep(raw, deep))
        try:
            return _ANY.decode(raw)
        except UnicodeDecodeError:
            bad = utf8_error(raw)
            located = find_bad_value(raw)
            start = self._offset(raw)
            if bad is None:  # pragma: no cover - msgspec only raises this on bytes that are not UTF-8
                raise fail(None, "not valid UTF-8") from None
            offset = None if start is None else start + bad[0]
            raise fail(located[0] if located else None, not_utf8_message(bad[1], offset)) from None
        except msgspec.ValidationError as exc:  # "Number out of range", "Integer value out of range"
            located = find_bad_value(raw)
            if located is not None:
                raise fail(*located) from None
            raise fail(None, f"invalid JSON: {exc}") from None
        except msgspec.DecodeError as exc:  # NaN/Infinity (Python's json writes them) are named on their field
            located = find_bad_value(raw)
            if located is not None:
                raise fail(*located) from None
            raise fail(None, f"invalid JSON: {exc}") from None
        except RecursionError:  # pragma: no cover - the depth check comes first
            raise fail(None, f"nested more than {MAX_DEPTH} levels deep") from None

    def _too_deep(self, raw: Any, at: int) -> str:
        start = self._offset(raw)
        where = f" (at byte {start + at:,})" if start is not None else ""
        return f"nested more than {MAX_DEPTH} levels deep{where}; not parsed"

    def _offset(self, raw: Any) -> int | None:
        """Where a zero-copy view into this file's data starts, in bytes (None if it is a copy)."""
        try:
            import numpy as np

            base = np.frombuffer(self._data, dtype=np.uint8).ctypes.data
            start = np.frombuffer(raw, dtype=np.uint8).ctypes.data - base
        except (TypeError, ValueError, BufferError):
            return None
        return start if 0 <= start < len(self._data) else None

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
        self.episodes.append(self._ref(index, raw, header, steps, events))

    def _index_tolerant(self, pos: int, base: int) -> None:
        """Walk the structure token by token: recovers complete episodes from a broken file.

        Counts depth itself (no recursion), so an episode nested past MAX_DEPTH is refused alone."""
        data = self._data
        ep_level = base + 1
        deep_level = MAX_DEPTH + base
        depth = 0
        index = -1
        ep_start = -1
        deep_at = -1
        header: dict[str, tuple[Any, int]] = {}
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
                    if depth == base:
                        index = self._scalars(prev_end, start, index, base) + 1
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
                            header[name] = (_CONTAINER if value is None else value, match.start(2))
                elif depth == traj_depth + 1 and key == _STEP_NUMBER:
                    entry_is_step = True
            elif char in (_LBRACE, _LBRACK):
                if depth == base:
                    index = self._scalars(prev_end, start, index, base) + 1
                    if char == _LBRACK:
                        skipping = True
                        self._problem("episode is a JSON array, not an object", index=index)
                    else:
                        skipping = False
                        ep_start = start
                        deep_at = -1
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
                if depth > deep_level and deep_at < 0:
                    deep_at = start
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
                        self._episode_spans.append((ep_start, prev_end))
                        if deep_at >= 0:
                            self._problem(
                                f"nested more than {MAX_DEPTH} levels deep (at byte {deep_at:,}); not parsed",
                                index=index,
                            )
                        else:
                            self._finish_episode(index, ep_start, prev_end, header, traj_kind, steps, events)
                    ep_start = -1
                    skipping = False
                if depth < base or depth < 0:
                    if depth == base - 1:
                        index = self._scalars(prev_end, start, index, base)
                    closed_at = match.end()
                    break
        else:
            if depth == base:
                index = self._scalars(prev_end, len(data), index, base)

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
        if not self.error and self._decode_error and not self._python_constant(self._decode_error):
            self.error = f"invalid JSON ({self._decode_error})"

    def _python_constant(self, decode_error: str) -> bool:
        """Whether msgspec stopped at a ``NaN``/``Infinity`` (Python's json writes them) inside an
        episode the tokenizer cut out: that episode's own parse names the field, the file's JSON is
        otherwise fine, so no file-level error is added (a real syntax error still is one)."""
        found = re.search(r"byte (\d+)", decode_error)
        if found is None:
            return False
        at = int(found.group(1)) + self._source_start
        head = bytes(self._data[at : at + 9])
        if not head.startswith((b"NaN", b"Infinity", b"-Infinity")):
            return False
        return any(start <= at < end for start, end in self._episode_spans)

    def _scalars(self, start: int, end: int, index: int, base: int) -> int:
        """One problem per top-level value between ``start`` and ``end`` (numbers, literals, garbage:
        anything the tokenizer does not see); returns the index of the last one."""
        gap = bytes(self._data[start:end])
        for piece in gap.split(b"," if base == 1 else b"\n"):
            piece = piece.strip().strip(b",").strip()
            if not piece:
                continue
            index += 1
            try:
                kind = _json_kind(_ANY.decode(piece))
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                shown = piece[:40].decode("utf-8", "replace")
                self._problem(f"top-level value {shown!r} is not an episode object", index=index)
            else:
                self._problem(f"episode is a JSON {kind}, not an object", index=index)
        return index

    def _finish_episode(
        self,
        index: int,
        start: int,
        end: int,
        header: dict[str, tuple[Any, int]],
        traj_kind: str | None,
        steps: int,
        events: int,
    ) -> None:
        raw = memoryview(self._data)[start:end]
        values: dict[str, Any] = {}
        for name, (value, offset) in header.items():
            if value is _CONTAINER:
                values[name] = {}
                continue
            try:
                values[name] = _ANY.decode(value)
            except UnicodeDecodeError:
                bad = utf8_error(value)
                at, byte = bad if bad is not None else (0, value[0])
                self._problem(not_utf8_message(byte, offset + at), index=index, field_path=name)
                return
            except msgspec.ValidationError:
                self._problem(
                    f"number out of range: {literal(bytes(value).decode('ascii', 'replace'))}",
                    index=index,
                    field_path=name,
                )
                return
            except msgspec.DecodeError:
                shown = bytes(value[:40]).decode("utf-8", "replace")
                message = number_message(shown) if shown in NON_JSON_CONSTANTS else f"invalid JSON value {shown!r}"
                self._problem(message, index=index, field_path=name)
                return
        if traj_kind != "list":
            if "session_id" not in values and traj_kind is None:
                self._problem(not_an_episode([name for name in header]), index=index)
            elif "session_id" in values and traj_kind is None:
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
        raw = ref.raw if ref.raw is not None else self._raw_of(ref)
        return self._decode(raw, ref.index, ref.session_id)

    def read_fast(self, ref: EpisodeRef) -> FastEpisode | None:
        """The episode as the replay reads it when it is in the contract's exact form (one typed
        decode, no models; see :mod:`replay_tui.formats.webshop_demos.fast`); None sends the caller to
        :meth:`read_trajectory`, which reads anything else or names its problem."""
        raw = ref.raw if ref.raw is not None else self._raw_of(ref)
        if self._tolerant or ref.index in self._deep_at:
            return None
        return decode_fast(raw)

    def read_trajectory(self, ref: EpisodeRef, *, fast: bool = True) -> Trajectory:
        """The episode as the one model: from its fast reading when it is clean, else from its
        contract's parse (its invalid fields read as their defaults, in ``problems``); raises
        :class:`EpisodeLoadError` if it is malformed. ``fast=False``: parsed (its fast reading was
        tried and is None)."""
        reading = self.read_fast(ref) if fast else None
        if reading is not None:
            return fast_trajectory(reading)
        return from_webshop_episode(self.read_episode(ref))

    def read_episode(self, ref: EpisodeRef) -> Episode:
        """Parse and validate one episode by the seed's contract (what :meth:`read_trajectory` maps
        onto the one model); raise :class:`EpisodeLoadError` if it is malformed."""
        data = self.raw_episode(ref)
        try:
            return parse_episode(data, file=self.name, index=ref.index)
        except EpisodeLoadError:
            raise
        except Exception as exc:  # pragma: no cover - a validator bug must not take the caller down
            raise EpisodeLoadError(
                LoadProblem(
                    file=self.name,
                    index=ref.index,
                    session_id=ref.session_id,
                    message=f"unexpected error: {_exception_line(exc)}",
                )
            ) from None


def _exception_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def open_demos(
    specs: Sequence[str | os.PathLike[str]] | str | os.PathLike[str], *, skip_unreadable: bool = False
) -> EpisodeSet:
    """Open and index seed demo files (paths, directories or globs) as a set of their own (logs of
    every format: :func:`replay_tui.sources.open_sources`).

    Raises :class:`DemoFileError` (a one-line message) when a spec matches nothing or a file
    cannot be read at all; per-episode problems are collected in :attr:`EpisodeSet.problems`. With
    ``skip_unreadable`` (the app) those are recorded in :attr:`EpisodeSet.unreadable` instead and the
    other files are opened.
    """
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    demo_set = EpisodeSet()
    if skip_unreadable:
        paths: list[Path] = []
        for spec in specs:
            try:
                paths.extend(p for p in resolve_demo_paths([spec]) if p not in paths)
            except DemoFileError as exc:
                demo_set.add_unreadable(str(spec), str(exc))
    else:
        paths = resolve_demo_paths(specs)
    for path in paths:
        try:
            demo = DemoFile(path)
        except DemoFileError as exc:
            if not skip_unreadable:
                raise
            demo_set.add_unreadable(str(path), str(exc))
            continue
        demo_set.add_file(demo)
    return demo_set
