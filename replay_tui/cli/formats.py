"""``replay-tui formats``: the log formats replay-tui reads, and which one a file is."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay_tui.cli.common import EXIT_OK, EXIT_USAGE, print_error
from replay_tui.episodes.problems import DemoFileError, LoadProblem
from replay_tui.formats import FORMATS, FormatError, Reader, choose_reader, reader_for
from replay_tui.formats.census import census, merge_census
from replay_tui.sanitize import strip_control
from replay_tui.sources import expand_logs


def register(subparsers: Any) -> None:
    """Add the ``formats`` command to the CLI's subparsers."""
    parser = subparsers.add_parser(
        "formats",
        help="list the log formats replay-tui reads, or say which one each file is",
        description="With no FILE: every format and what it maps. With files: the format each file is "
        "(detected by content, or --format), its episodes, steps and recorded tool calls, and its problems. "
        "Exit 0 when every file yields episodes, 2 when one is not recognised or yields none.",
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="log files, experiment folders or folders of log files (each file of those read by its own reader)",
    )
    parser.add_argument(
        "--format",
        dest="fmt",
        metavar="NAME",
        choices=[info.name for info in FORMATS],
        help="read every FILE with this reader instead of detecting",
    )
    parser.add_argument(
        "--allow-pickle",
        action="store_true",
        help="read Python pickles (BrowserGym/AgentLab step files) with a restricted unpickler that refuses "
        "every class not on its allowlist; pickles can run code when loaded, so only for logs you trust",
    )
    parser.add_argument("--show", type=int, default=10, metavar="N", help="problems to print per file (default 10)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="for scripts: a JSON array on stdout, one object per FILE (file, format or null, episodes, steps, "
        "calls, results, subagents, problems, episode_list with each episode's id, steps, calls and outcome); "
        'a folder of log files is one object of its files\' sums (format "mixed" when they differ)',
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    if not args.files:
        out.print(_formats_table())
        return EXIT_OK
    if args.json:
        return _run_json(args, out)
    table = Table(title="Log files", header_style="bold")
    for column in ("file", "format", "episodes", "steps", "recorded calls", "problems"):
        table.add_column(
            column, justify="right" if column in ("episodes", "steps", "recorded calls", "problems") else "left"
        )
    failed = False
    notes: list[Text] = []
    for path, reader in (found for name in args.files for found in _logs(Path(name), args)):
        if isinstance(reader, FormatError):
            print_error(err, "formats", str(reader))
            failed = True
            continue
        episodes = steps = calls = 0
        problems: list[LoadProblem] = []
        for item in reader.read(path):
            if isinstance(item, LoadProblem):
                problems.append(item)
                continue
            episodes += 1
            steps += len(item.steps)
            calls += item.recorded_calls
        table.add_row(
            strip_control(_shown(path, args.files)),
            reader.name,
            str(episodes),
            str(steps),
            str(calls),
            str(len(problems)),
        )
        notes += [Text(f"problem: {strip_control(p.one_line())}", style="yellow") for p in problems[: args.show]]
        if len(problems) > args.show:
            notes.append(Text(f"… and {len(problems) - args.show} more problems in {path.name}", style="yellow"))
        if not episodes:
            first = f": {problems[0].one_line()}" if problems else ""
            print_error(err, "formats", f"{path.name}: no usable episodes as {reader.name}{first}")
            failed = True
    if table.row_count:
        out.print(table)
    for note in notes:
        out.print(note, soft_wrap=True)
    return EXIT_USAGE if failed else EXIT_OK


def _run_json(args: argparse.Namespace, out: Console) -> int:
    """``--json``: :func:`replay_tui.formats.census.census` of every FILE, one JSON array; the exit
    code as the table's (2 when a file is not recognised or yields no episode)."""
    failed = False
    found = []
    for name in args.files:
        path = Path(name)
        entries = [
            census(log, None, problem=LoadProblem(file=log.name, message=str(reader)))
            if isinstance(reader, FormatError)
            else census(log, reader)
            for log, reader in _logs(path, args)
        ]
        entry = entries[0] if len(entries) == 1 and entries[0]["file"] == str(path) else merge_census(path, entries)
        failed = failed or not entry["episodes"]
        found.append(entry)
    out.file.write(orjson.dumps(found, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode() + "\n")
    out.file.flush()
    return EXIT_USAGE if failed else EXIT_OK


def _logs(path: Path, args: argparse.Namespace) -> list[tuple[Path, Reader | FormatError]]:
    """What ``path`` names, each with its reader (or why none takes it): itself when a reader takes
    it (a file, a folder a reader reads whole), else a folder's log files, each by its own reader
    (what ``replay`` and the app open of a folder)."""
    try:
        return [(path, choose_reader(path, args.fmt, allow_pickle=args.allow_pickle))]
    except FormatError as exc:
        if not path.is_dir():
            return [(path, exc)]
        unread = exc
    try:
        files = expand_logs(path)
    except DemoFileError as exc:
        return [(path, FormatError(f"{unread}; {exc}"))]
    found: list[tuple[Path, Reader | FormatError]] = []
    for log in files:
        try:
            found.append((log, choose_reader(log, args.fmt, allow_pickle=args.allow_pickle)))
        except FormatError as exc:
            found.append((log, exc))
    return found


def _shown(path: Path, given: list[str]) -> str:
    """A file's name as the table shows it: with its folder's when it came from a folder given."""
    return path.name if str(path) in given else f"{path.parent.name}/{path.name}"


def _formats_table() -> Table:
    table = Table(title="Log formats (--format NAME; detected by content otherwise)", header_style="bold")
    table.add_column("name")
    table.add_column("format")
    table.add_column("reader")
    for info in FORMATS:
        try:
            reader_for(info.name)
            status = "ok"
        except ImportError as exc:
            status = f"not installed ({exc.name or exc})"
        table.add_row(info.name, info.label, status)
    return table
