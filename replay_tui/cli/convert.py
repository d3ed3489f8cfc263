"""``replay-tui convert --to atif``: any readable log written as ATIF trajectories (Harbor's interchange
format), so logs of every tool reach the tools that read ATIF.

Everything is read, converted and checked against the schema first; then every output path is checked
(no input replaced, no two outputs alike, no file overwritten without ``--force``); then the files are
written, each atomically. A log or an episode that cannot be converted is one error line naming file,
episode and field; the others are written, and the exit code is 2.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.text import Text

from replay_tui.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    check_outputs,
    print_error,
    print_warning,
    protected_paths,
    refuse_overwriting,
)
from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.fileio import atomic_write_bytes
from replay_tui.formats import FORMATS, FormatError, choose_reader
from replay_tui.formats.atif_write import ConvertError, Document, base_name, check, document, plan
from replay_tui.sanitize import strip_control

TARGETS = ("atif",)


def register(subparsers: Any) -> None:
    """Add the ``convert`` command to the CLI's subparsers."""
    parser = subparsers.add_parser(
        "convert",
        help="write logs of any format as ATIF trajectories",
        description="Write every episode of each FILE as an ATIF trajectory (Harbor's Agent Trajectory "
        "Interchange Format, v1.7), sub-agents as files their parent references (subagent_trajectory_ref), "
        "each checked against the format's schema. Exit 0 when everything was written, 2 when a file or an "
        "episode could not be (the rest is written).",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="log files (or folders) of any readable format")
    parser.add_argument("--to", required=True, choices=TARGETS, help="the format to write (atif)")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--out",
        metavar="DIR",
        help="the folder to write into: <log name>.trajectory.json (<log name>.<n>... "
        "when a log holds several episodes), sub-agents as <log name>.trajectory.subagent-<k>.json",
    )
    where.add_argument("-o", dest="output", metavar="FILE", help="the one file to write (one FILE of one episode)")
    parser.add_argument(
        "--format",
        dest="fmt",
        metavar="NAME",
        choices=[info.name for info in FORMATS],
        help="read every FILE with this reader instead of detecting",
    )
    parser.add_argument("--allow-pickle", action="store_true", help="read BrowserGym pickles (see `formats`)")
    parser.add_argument("--force", action="store_true", help="overwrite files that exist")
    parser.set_defaults(func=run)


@dataclass
class _Output:
    path: Path
    data: bytes


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.output is not None and len(args.files) != 1:
        raise UsageError("-o FILE writes one log's one episode; give --out DIR for several logs")
    folder = Path(args.out) if args.out is not None else Path(args.output).parent
    if args.out is not None and folder.exists() and not folder.is_dir():
        raise UsageError(f"--out {folder}: not a folder")
    probe = Path(args.output) if args.output is not None else folder / ".replay-tui-convert"
    protected = protected_paths(None, args.files)
    check_outputs([("-o" if args.output else "--out", probe)], protected)
    failed = False
    outputs: list[_Output] = []
    taken: set[str] = set()
    written_logs = 0
    for name in args.files:
        path = Path(name)
        try:
            reader = choose_reader(path, args.fmt, allow_pickle=args.allow_pickle)
        except FormatError as exc:
            print_error(err, "convert", str(exc))
            failed = True
            continue
        trajectories: list[Trajectory] = []
        for item in reader.read(path):
            if isinstance(item, LoadProblem):
                if item.severity == "warning":
                    print_warning(err, "convert", item.one_line())
                else:
                    print_error(err, "convert", item.one_line())
                    failed = True
            else:
                trajectories.append(item)
        if not trajectories:
            print_error(err, "convert", f"{path.name}: no usable episodes as {reader.name}: nothing written")
            failed = True
            continue
        tops, children = plan(trajectories)
        if args.output is not None and len(tops) != 1:
            print_error(err, "convert", f"{path.name}: {len(tops)} episodes; -o writes one: give --out DIR")
            failed = True
            continue
        base = base_name(path)
        before = len(outputs)
        for number, top in enumerate(tops, start=1):
            if args.output is not None:
                file_name = Path(args.output).name
            else:
                single = f"{base}.trajectory.json" if len(tops) == 1 else f"{base}.{number}.trajectory.json"
                file_name = _free(single, taken)
            try:
                doc = document(top, file_name, children)
                problems = _check(doc)
                texts = [orjson.dumps(d.data, option=orjson.OPT_INDENT_2) + b"\n" for d in _flatten(doc)]
            except ConvertError as exc:
                print_error(err, "convert", _where(path, top.id, exc.field, exc.message))
                failed = True
                continue
            except (TypeError, ValueError, RecursionError) as exc:  # values nested past orjson's depth, odd types
                print_error(err, "convert", _where(path, top.id, None, f"cannot be written as JSON: {exc}"))
                failed = True
                continue
            if problems:
                episode, field, message = problems[0]
                print_error(err, "convert", _where(path, episode, field, f"not valid ATIF: {message}"))
                failed = True
                continue
            taken.update(d.name for d in _flatten(doc))
            outputs += [_Output(folder / d.name, text) for d, text in zip(_flatten(doc), texts, strict=True)]
        written_logs += len(outputs) > before
    flags = [("-o" if args.output else "--out", output.path) for output in outputs]
    check_outputs(flags, protected)
    for output in outputs:
        refuse_overwriting(output.path, args.force)
    for output in outputs:
        atomic_write_bytes(output.path, output.data)
    if outputs:
        files = f"{len(outputs)} ATIF file{'s' if len(outputs) != 1 else ''}"
        logs = f"{written_logs} log{'s' if written_logs != 1 else ''}"
        out.print(Text(f"wrote {files} ({logs}) to {strip_control(str(folder))}"), soft_wrap=True)
    return EXIT_USAGE if failed else EXIT_OK


def _free(name: str, taken: set[str]) -> str:
    """``name``, or ``name`` with ``-2``, ``-3``... before ``.trajectory.json`` when another log took it."""
    if name not in taken:
        return name
    stem = name[: -len(".trajectory.json")]
    number = 2
    while f"{stem}-{number}.trajectory.json" in taken:
        number += 1
    return f"{stem}-{number}.trajectory.json"


def _flatten(doc: Document) -> list[Document]:
    found = [doc]
    for child in doc.children:
        found += _flatten(child)
    return found


def _check(doc: Document) -> list[tuple[str, str, str]]:
    """The schema's complaints about ``doc`` and its children: (episode, field, message)."""
    return [(d.episode, field, message) for d in _flatten(doc) for field, message in check(d.data)]


def _where(path: Path, episode: str, field: str | None, message: str) -> str:
    return f"{path.name}: episode {episode}: " + (f"field {field}: " if field else "") + message
