"""Run history: every replay saved as a run, a deterministic JSON report with the settings that made it.

A run file is one JSON object (sorted keys, two-space indent, trailing newline, written atomically):
every field of :meth:`SummaryReport.to_dict` with the step results, plus ``"run"``, a :class:`RunInfo`
(id, name, when, tool version, policy, model, temperature, seed, matching, mismatch policy, item
steps, the demo files' names, paths, sizes and SHA-256, which sessions, and whether it completed).

Runs live in one folder per set of demo files (:meth:`RunStore.for_demos`) under the runs root:
``--runs-dir``, else ``$REPLAY_TUI_RUNS_DIR``, else ``$XDG_DATA_HOME/replay-tui/runs``, else
``~/.local/share/replay-tui/runs``. :meth:`RunStore.load` also reads a plain ``--report-steps`` JSON
report (no ``"run"`` record): its settings then come from the report, the rest is unknown.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import re
import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec
import orjson
from pydantic import BaseModel, Field, ValidationError, model_validator

from replay_tui import __version__
from replay_tui.annotations import data_dir
from replay_tui.fileio import atomic_write_bytes, expand_home, read_capped
from replay_tui.formats import browsergym
from replay_tui.matching import MatchSettings

if TYPE_CHECKING:  # the report's models are built when a run is read, not when the store opens
    from replay_tui.runner import SummaryReport

RUNS_ENV = "REPLAY_TUI_RUNS_DIR"
RUN_SUFFIX = ".json"
FOLDER_HASH_CHARS = 12
HASH_CHUNK = 1 << 20
_JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
MAX_RUN_BYTES = 2 << 30
"""The most of a run file read (a run of 20,000 episodes with every step is a few hundred MB): a
file bigger than that, or one that is not a regular file (``/dev/zero``), is listed as broken."""


class RunError(ValueError):
    """A run that cannot be read, found or changed; the message is one line naming it."""


# -- where runs live -------------------------------------------------------------------------------
def default_runs_root() -> Path:
    """``$REPLAY_TUI_RUNS_DIR``, else the ``runs`` folder of the user's data directory
    (``$XDG_DATA_HOME/replay-tui/runs`` or ``~/.local/share/replay-tui/runs``)."""
    given = os.environ.get(RUNS_ENV)
    if given:
        return expand_home(given, f"${RUNS_ENV}")
    return data_dir() / "runs"


def runs_root(flag: str | os.PathLike[str] | None = None) -> Path:
    """The runs root: the ``--runs-dir`` flag when given, else :func:`default_runs_root`."""
    return expand_home(flag, "--runs-dir") if flag else default_runs_root()


def slug(text: str, limit: int = 40) -> str:
    """``text`` as a filesystem-safe lower-case name: runs of other characters become one ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-") or "run"


# -- demo file fingerprints ------------------------------------------------------------------------
_fingerprints: dict[tuple[Any, ...], str] = {}
_fingerprints_lock = threading.Lock()


def _folder_files(folder: Path) -> list[tuple[str, Path, os.stat_result]]:
    found = []
    for path in folder.rglob("*"):
        try:
            stat = path.stat()
        except OSError:
            continue
        if path.is_file():
            found.append((path.relative_to(folder).as_posix(), path, stat))
    return sorted(found, key=lambda item: item[0])


def _hash_file(path: Path, digest: Any) -> None:
    with open(path, "rb") as handle:
        while chunk := handle.read(HASH_CHUNK):
            digest.update(chunk)


def demo_fingerprint(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a demo file (hex), read in chunks; for a folder (a BrowserGym experiment) the
    hash of its files' sorted relative paths and sizes, with the contents of the files the reader
    reads and the mtime of the others (a companion archive of 20 GiB is never read for it). Kept per
    (path, size, mtime) for the life of the process, so a large file is hashed once. Raises OSError
    when it cannot be read."""
    target = Path(path).resolve()
    if target.is_dir():
        files = _folder_files(target)
        key: tuple[Any, ...] = (str(target), tuple((rel, st.st_size, st.st_mtime_ns) for rel, _, st in files))
    else:
        stat = target.stat()
        key = (str(target), stat.st_size, stat.st_mtime_ns)
    with _fingerprints_lock:
        known = _fingerprints.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    if target.is_dir():
        for rel, file, st in files:
            digest.update(f"{rel}\0{st.st_size}\0".encode())
            if browsergym.reads(file.name):
                _hash_file(file, digest)
            else:
                digest.update(f"mtime {st.st_mtime_ns}\0".encode())
    else:
        _hash_file(target, digest)
    value = digest.hexdigest()
    with _fingerprints_lock:
        _fingerprints[key] = value
    return value


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(st.st_size for _, _, st in _folder_files(path))
    return path.stat().st_size


class DemoFileInfo(BaseModel):
    """A demo file (or experiment folder) a run replayed: its name, absolute path, size and SHA-256."""

    name: str
    path: str
    size: int = 0
    sha256: str = ""


def demo_file_info(path: str | os.PathLike[str]) -> DemoFileInfo:
    """Name, absolute path, size and fingerprint of a demo file; raises OSError when unreadable."""
    target = Path(path).resolve()
    return DemoFileInfo(name=target.name, path=str(target), size=_size(target), sha256=demo_fingerprint(target))


def demo_files_info(paths: Iterable[str | os.PathLike[str]]) -> list[DemoFileInfo]:
    return [demo_file_info(path) for path in paths]


# -- the run record --------------------------------------------------------------------------------
def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """ISO-8601 in UTC with microseconds and a ``Z``: sorts as text in time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def local_date(moment: datetime | None, unknown: str = "?") -> str:
    """``2026-11-23 20:59`` in local time; as written, with its offset, for a moment local time cannot
    hold (year 1 or 9999 a time zone away: ``0001-01-01 00:00+05:00``); ``unknown`` for None."""
    if moment is None:
        return unknown
    try:
        local = moment.astimezone()
    except (OverflowError, ValueError, OSError):
        return moment.isoformat(" ", "minutes")
    return f"{local.year:04d}-{local:%m-%d %H:%M}"  # %Y writes year 1 as "1" on glibc


def file_time(seconds: float) -> str:
    """A file's modification time as :func:`iso` text; ``""`` for one no date can hold."""
    try:
        return iso(datetime.fromtimestamp(seconds, UTC))
    except (OverflowError, ValueError, OSError):
        return ""


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def new_run_id(label: str, moment: datetime | None = None) -> str:
    """``20261123T205900Z-llm-gpt-4-1-3fa2c1``: the UTC time (sortable), ``label`` as a slug, 6 random hex."""
    when = (moment or utc_now()).astimezone(UTC)
    return f"{when:%Y%m%dT%H%M%S}Z-{slug(label)}-{secrets.token_hex(3)}"


class RunInfo(BaseModel):
    """What made a run: the ``"run"`` record of a run file."""

    id: str
    name: str = ""
    """The user's label; the id until renamed."""
    created: str = ""
    """ISO-8601 UTC."""
    tool_version: str | None = __version__
    policy: str = ""
    """The mode's name (``stub``, ``heuristic``, ``llm``...) or the ``--policy`` spec."""
    model: str | None = None
    temperature: float | None = None
    seed: int | None = None
    matching: dict[str, Any] = Field(default_factory=dict)
    """:meth:`MatchSettings.as_dict`."""
    mismatch_policy: str = "stop"
    item_steps: bool = False
    demo_files: list[DemoFileInfo] = Field(default_factory=list)
    sessions: Literal["all"] | list[int] = "all"
    complete: bool = True
    """False when the replay was cancelled."""

    @model_validator(mode="after")
    def _name_defaults_to_id(self) -> RunInfo:
        if not self.name:
            self.name = self.id
        return self

    @classmethod
    def new(
        cls,
        policy: str,
        *,
        model: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        matching: MatchSettings | dict[str, Any] | None = None,
        mismatch_policy: str = "stop",
        item_steps: bool = False,
        demo_files: Sequence[DemoFileInfo] = (),
        sessions: Literal["all"] | Sequence[int] = "all",
        complete: bool = True,
        name: str | None = None,
        moment: datetime | None = None,
    ) -> RunInfo:
        """A new run's record, with a fresh id and the current time."""
        when = moment or utc_now()
        label = policy.rsplit("/", 1)[-1] + (f" {model}" if model else "")
        run_id = new_run_id(label, when)
        if matching is None:
            matching = MatchSettings()
        return cls(
            id=run_id,
            name=name or run_id,
            created=iso(when),
            policy=policy,
            model=model,
            temperature=temperature,
            seed=seed,
            matching=matching.as_dict() if isinstance(matching, MatchSettings) else dict(matching),
            mismatch_policy=mismatch_policy,
            item_steps=item_steps,
            demo_files=list(demo_files),
            sessions="all" if sessions == "all" else list(sessions),
            complete=complete,
        )

    @property
    def created_at(self) -> datetime | None:
        return parse_time(self.created)

    def settings_key(self) -> tuple[Any, ...]:
        """What a replay's outcome depends on besides the files: equal keys, comparable verdicts."""
        return (
            self.policy,
            self.model,
            self.temperature,
            self.seed,
            orjson.dumps(self.matching, option=orjson.OPT_SORT_KEYS),
            self.mismatch_policy,
            self.item_steps,
        )

    def same_files(self, files: Sequence[DemoFileInfo]) -> bool:
        """True when the run replayed files with these contents, in this order (fingerprints equal)."""
        mine = [f.sha256 for f in self.demo_files]
        return bool(mine) and all(mine) and mine == [f.sha256 for f in files]


def info_from_report(summary: SummaryReport, path: Path) -> RunInfo:
    """The record of a plain replay report (no ``"run"``): settings from the report, the rest unknown."""
    try:
        created = file_time(path.stat().st_mtime)
    except OSError:
        created = ""
    ids = [episode.session_id for episode in summary.episodes]
    return RunInfo(
        id=path.stem,
        name=path.stem,
        created=created,
        tool_version=None,
        policy=summary.mode,
        matching=summary.matching_settings.as_dict(),
        mismatch_policy=summary.mismatch_policy,
        item_steps=summary.include_item_steps,
        sessions="all" if summary.episodes_run >= summary.episodes_total else ids,
        complete=not summary.cancelled,
    )


_EPISODES_AT_TOP = b'\n  "episodes": []'
"""How the (emptied) episode list shows in the indented head of a run file: it is the top level's."""


def run_json(summary: SummaryReport, info: RunInfo) -> bytes:
    """A run file's bytes: the report with its step results, plus ``"run"``.

    Written an episode at a time and spliced into the report's indented JSON: the same bytes as one
    ``orjson.dumps`` of the whole report, but the app's save worker no longer holds the GIL for the
    whole dump (a second on 20,000 episodes, a second the app's UI froze for)."""
    data = summary.to_dict(include_steps=True, episodes=False)
    data["run"] = info.model_dump(mode="json")
    data["episodes"] = []
    head = orjson.dumps(data, option=_JSON_OPTIONS)
    items = [
        b"    " + orjson.dumps(episode, option=_JSON_OPTIONS).replace(b"\n", b"\n    ")
        for episode in summary.episode_dicts(include_steps=True)
    ]
    if items:  # (a newline in the JSON is always between tokens: strings escape theirs)
        assert head.count(_EPISODES_AT_TOP) == 1
        head = head.replace(_EPISODES_AT_TOP, b'\n  "episodes": [\n' + b",\n".join(items) + b"\n  ]")
    return head + b"\n"


# -- listing ---------------------------------------------------------------------------------------
class _Head(msgspec.Struct):
    """The fields a listing reads; msgspec skips the rest (the episodes) without building them."""

    overall_accuracy: float | None = None
    accepted_accuracy: float | None = None
    total_steps: int | None = None
    episodes_run: int | None = None
    episodes_total: int | None = None
    mode: str | None = None
    cancelled: bool = False
    run: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunEntry:
    """A run in a listing; ``error`` says why a file that is not a readable run is listed anyway."""

    path: Path
    id: str
    name: str
    created: str
    policy: str = ""
    model: str | None = None
    accuracy: float | None = None
    accepted_accuracy: float | None = None
    steps: int | None = None
    episodes: int | None = None
    complete: bool | None = None
    info: RunInfo | None = None
    error: str | None = None

    @property
    def broken(self) -> bool:
        return self.error is not None

    @property
    def created_at(self) -> datetime | None:
        return parse_time(self.created)

    @property
    def date(self) -> str:
        """``2026-11-23 20:59`` in local time (``?`` when unknown)."""
        return local_date(self.created_at)

    @property
    def describe_policy(self) -> str:
        return self.policy + (f" · {self.model}" if self.model else "")


_entries: dict[tuple[str, int, int], RunEntry] = {}
_entries_lock = threading.Lock()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _read_object(path: Path) -> dict[str, Any]:
    """A run (or report) file's JSON object; RunError naming the file when it is unreadable or not one."""
    try:
        data = orjson.loads(read_capped(path, MAX_RUN_BYTES))
    except OSError as exc:
        raise RunError(f"{path}: cannot read: {exc.strerror or type(exc).__name__}") from None
    except orjson.JSONDecodeError as exc:
        raise RunError(f"{path}: not JSON: {_first_line(exc)}") from None
    if not isinstance(data, dict):
        raise RunError(f"{path}: not a replay report")
    return data


def read_entry(path: Path) -> RunEntry:
    """A listing entry for ``path``, read without building the episodes; never raises."""
    try:
        stat = path.stat()
    except OSError as exc:
        return RunEntry(path, path.stem, path.stem, "", error=exc.strerror or type(exc).__name__)
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _entries_lock:
        known = _entries.get(key)
    if known is not None:
        return known
    mtime = file_time(stat.st_mtime)
    try:
        head = msgspec.json.decode(read_capped(path, MAX_RUN_BYTES), type=_Head)
        if head.overall_accuracy is None or head.total_steps is None:
            raise RunError("not a replay report")
        info = RunInfo.model_validate(head.run) if head.run is not None else None
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: msgspec's, pydantic's, bad UTF-8
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else _first_line(exc)
        entry = RunEntry(path, path.stem, path.stem, mtime, error=reason)
    else:
        entry = RunEntry(
            path=path,
            id=info.id if info else path.stem,
            name=info.name if info else path.stem,
            created=(info.created if info and info.created_at else mtime),
            policy=info.policy if info else (head.mode or ""),
            model=info.model if info else None,
            accuracy=head.overall_accuracy,
            accepted_accuracy=head.accepted_accuracy,
            steps=head.total_steps,
            episodes=head.episodes_run,
            complete=info.complete if info else not head.cancelled,
            info=info,
        )
    with _entries_lock:
        _entries[key] = entry
    return entry


def _newest_first(entry: RunEntry) -> tuple[bool, datetime, str]:
    """Sorted descending: readable runs newest first, then broken files newest first."""
    return (not entry.broken, entry.created_at or datetime.min.replace(tzinfo=UTC), entry.id)


# -- the store -------------------------------------------------------------------------------------
class RunStore:
    """The runs under one root: a folder per set of demo files, a JSON file per run."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = expand_home(root) if root is not None else default_runs_root()

    def for_demos(self, paths: Sequence[str | os.PathLike[str]]) -> Path:
        """The folder of the runs of these demo files: ``<first file's stem>-<12 hex>``, the hex the
        SHA-256 of their sorted absolute paths (so the folder does not change with the contents)."""
        resolved = [str(Path(path).resolve()) for path in paths]
        if not resolved:
            return self.root / "no-files"
        first = Path(resolved[0])
        stem = first.name[: -len(first.suffix)] if first.suffix and not first.is_dir() else first.name
        digest = hashlib.sha256("\n".join(sorted(resolved)).encode("utf-8")).hexdigest()
        return self.root / f"{slug(stem, 60)}-{digest[:FOLDER_HASH_CHARS]}"

    def folders(self) -> list[Path]:
        """Every folder of runs under the root, by name."""
        try:
            return sorted(p for p in self.root.iterdir() if p.is_dir())
        except OSError:
            return []

    def save(self, summary: SummaryReport, info: RunInfo, folder: Path | None = None) -> Path:
        """Write the run atomically to ``folder`` (default: the folder of its demo files) as ``<id>.json``."""
        where = folder if folder is not None else self.for_demos([f.path for f in info.demo_files])
        return atomic_write_bytes(where / f"{info.id}{RUN_SUFFIX}", run_json(summary, info))

    def list(self, folder: Path) -> builtins.list[RunEntry]:
        """The runs in ``folder``, newest first; a file that is not a readable run is listed as broken
        (after the runs)."""
        try:
            paths = [p for p in folder.iterdir() if p.name.endswith(RUN_SUFFIX) and not p.name.startswith(".")]
        except OSError:
            return []
        return sorted((read_entry(p) for p in paths), key=_newest_first, reverse=True)

    def latest(self, folder: Path, files: Sequence[DemoFileInfo] | None = None) -> RunEntry | None:
        """The newest readable run in ``folder`` (of files with these fingerprints, when given)."""
        for entry in self.list(folder):
            if entry.broken:
                continue
            if files is not None and (entry.info is None or not entry.info.same_files(files)):
                continue
            return entry
        return None

    def find(self, name: str) -> Path:
        """A run by path, id or name (searched in every folder, newest first)."""
        path = Path(name).expanduser()
        if path.is_file():
            return path
        for folder in self.folders():
            for entry in self.list(folder):
                if name in (entry.id, entry.name, entry.path.name):
                    return entry.path
        raise RunError(f"{name}: no such run under {self.root}")

    def load(self, path_or_name: str | os.PathLike[str]) -> tuple[SummaryReport, RunInfo]:
        """The report and record of a run (a path, or an id or name under the root). A plain replay
        report without ``"run"`` loads too, its record made from the report. Raises RunError."""
        from replay_tui.runner import SummaryReport  # the report's models, built when a run is read

        path = self.find(str(path_or_name))
        data = _read_object(path)
        raw = data.pop("run", None)
        try:
            summary = SummaryReport.model_validate(data)
            info = RunInfo.model_validate(raw) if isinstance(raw, dict) else info_from_report(summary, path)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ())) or "report"
            raise RunError(f"{path}: not a replay report ({where}: {first.get('msg', 'invalid')})") from None
        return summary, info

    def rename(self, path: str | os.PathLike[str], name: str) -> RunInfo:
        """Give a run a new name (its id and file name stay); the file is rewritten atomically."""
        label = " ".join(name.split())
        if not label:
            raise RunError("a run's name cannot be empty")
        target = Path(path)
        data = _read_object(target)
        raw = data.get("run")
        if isinstance(raw, dict):
            try:
                info = RunInfo.model_validate(raw)
            except ValidationError as exc:
                raise RunError(f"{target}: unreadable run record: {_first_line(exc)}") from None
        else:
            info = self.load(target)[1]
        info = info.model_copy(update={"name": label})
        data["run"] = info.model_dump(mode="json")
        atomic_write_bytes(target, orjson.dumps(data, option=_JSON_OPTIONS) + b"\n")
        return info

    def delete(self, path: str | os.PathLike[str]) -> None:
        """Remove a run file (broken ones too)."""
        target = Path(path)
        if not target.name.endswith(RUN_SUFFIX):
            raise RunError(f"{target}: not a run file")
        try:
            target.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise RunError(f"{target}: cannot delete: {exc.strerror or type(exc).__name__}") from None
