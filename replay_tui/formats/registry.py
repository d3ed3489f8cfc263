"""The one list of formats, detection by content, and reading any file as trajectories."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from replay_tui.fileio import open_regular
from replay_tui.formats.base import HEAD_BYTES, Detection, Reader, ReadItem


@dataclass(frozen=True)
class FormatInfo:
    """A format the registry knows: its ``--format`` name, its module, and what it maps."""

    name: str
    module: str
    label: str


FORMATS: tuple[FormatInfo, ...] = (
    FormatInfo("atif", "replay_tui.formats.atif", "Harbor ATIF trajectories (trajectory.json, ATIF-v1.0–1.7)"),
    FormatInfo("openhands", "replay_tui.formats.openhands", "OpenHands V0 events and eval outputs, V1 conversations"),
    FormatInfo("otel-genai", "replay_tui.formats.otel_genai", "OpenTelemetry GenAI traces (OTLP/JSON, spans JSONL)"),
    FormatInfo("webshop-demos", "replay_tui.formats.webshop_demos", "WebShop demonstration files (the seed's format)"),
    FormatInfo("webshop-human", "replay_tui.formats.webshop_human", "WebShop session logs (AgentGym all_trajs JSONL)"),
    FormatInfo("inspect-ai", "replay_tui.formats.inspect_ai", "inspect_ai logs (.eval zip and .json)"),
    FormatInfo("tau2", "replay_tui.formats.tau2", "tau2-bench simulation results"),
    FormatInfo("swe-agent", "replay_tui.formats.swe_agent", "SWE-agent .traj and mini-swe-agent trajectories"),
    FormatInfo("browsergym", "replay_tui.formats.browsergym", "BrowserGym / AgentLab experiment folders"),
    FormatInfo("claude-code", "replay_tui.formats.claude_code", "Claude Code session transcripts (JSONL, folders)"),
    FormatInfo("codex", "replay_tui.formats.codex", "OpenAI Codex CLI rollouts (JSONL, sessions folders)"),
    FormatInfo("openai-chat", "replay_tui.formats.openai_chat", "OpenAI chat-completions transcripts (JSON/JSONL)"),
)
"""Every reader, in the order detection asks them: ties go to the earlier one, so the specific formats
come first and the generic chat transcript (which many formats also contain) last."""


class FormatError(Exception):
    """A file no reader takes, or an unknown ``--format``; the message is one line."""


@cache
def reader_for(name: str) -> Reader:
    """The reader registered as ``name`` (its module imported on first use)."""
    for info in FORMATS:
        if info.name == name:
            reader: Reader = importlib.import_module(info.module).READER
            return reader
    known = ", ".join(info.name for info in FORMATS)
    raise FormatError(f"unknown format {name!r}; known formats: {known}")


def available() -> list[FormatInfo]:
    """The registered formats whose reader module is installed."""
    found = []
    for info in FORMATS:
        try:
            reader_for(info.name)
        except ImportError:
            continue
        found.append(info)
    return found


def _head(path: Path) -> bytes:
    if path.is_dir():
        return b""
    with open_regular(path) as handle:  # a FIFO is refused at once, never waited on
        return handle.read(HEAD_BYTES)


def detect(path: str | Path) -> tuple[Reader, Detection]:
    """The reader most sure of ``path``. When none is at all (every sniffer said no), FormatError
    names the readers tried and no "closest" one: a reader that scored nothing is not closer than
    another, and naming the first of the list sent users of other logs the wrong way."""
    target = Path(path)
    try:
        head = _head(target)
    except OSError as exc:
        raise FormatError(f"{target}: cannot read: {exc.strerror or exc}") from None
    best: tuple[Reader, Detection] | None = None
    tried: list[str] = []
    for info in available():
        reader = reader_for(info.name)
        tried.append(reader.name)
        try:
            found = reader.sniff(target, head)
        except Exception as exc:  # a sniffer must never stop detection
            found = Detection.no(f"{type(exc).__name__}: {exc}")
        if found.score > 0 and (best is None or found.score > best[1].score):
            best = (reader, found)
    if best is None:
        raise FormatError(f"{target.name}: no reader recognises this file (tried {', '.join(tried)})")
    return best


def allowing_pickles(reader: Reader) -> Reader:
    """``reader`` with Python pickles read (by its restricted unpickler) when its format has them.

    Pickles execute code when loaded, so readers never read them unless the user asks
    (``--allow-pickle``); a format without pickles is returned as it is."""
    allow = getattr(reader, "allowing_pickles", None)
    return allow() if callable(allow) else reader


def choose_reader(path: str | Path, fmt: str | None = None, *, allow_pickle: bool = False) -> Reader:
    """The reader ``--format fmt`` names, else the one detected for ``path``, reading pickles when
    ``--allow-pickle`` says so: what every command that takes log files does first.

    Raises :class:`FormatError` (an unknown name, an unrecognised file)."""
    reader = reader_for(fmt) if fmt else detect(Path(path))[0]
    return allowing_pickles(reader) if allow_pickle else reader


def read_trajectories(path: str | Path, fmt: str | None = None, *, allow_pickle: bool = False) -> Iterator[ReadItem]:
    """Stream ``path``'s trajectories with the ``fmt`` reader, or the detected one."""
    yield from choose_reader(path, fmt, allow_pickle=allow_pickle).read(Path(path))
