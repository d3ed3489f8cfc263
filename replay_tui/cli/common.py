"""What every command shares: exit codes, the usage error, the one error-line format and the graphics flag."""

from __future__ import annotations

import argparse
import os
import signal
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from replay_tui.fileio import OUTPUT_AS_INPUT, OutputClash, check_writable, require_folder
from replay_tui.fileio import check_outputs as fileio_check_outputs
from replay_tui.sanitize import strip_control

if TYPE_CHECKING:
    from replay_tui.executors import RayExecutor

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2
PROG = "replay-tui"


class UsageError(Exception):
    """A bad flag value or an unreadable input; printed as one line, exit code 2."""


class EndpointError(UsageError):
    """No request of a replay reached the policy's endpoint (``endpoint unreachable: URL: REASON``):
    exit 2 like bad input, so CI does not read a dead server as a regression (exit 1)."""


def print_error(err: Console, command: str | None, message: str) -> None:
    """One line on stderr, the same for every command: ``replay-tui COMMAND: error: MESSAGE``.

    It is argparse's own form, so a bad flag and a bad input read alike."""
    where = f"{PROG} {command}" if command else PROG
    err.print(Text(f"{where}: error: {strip_control(message)}", style="red"), soft_wrap=True)


CELL_CHARS = 300
"""The most a table cell shows of one value: a 20 MB tool argument kept a terminal printing for
ten minutes. Reports (``--report``) keep every value whole."""


def cell(value: str, limit: int = CELL_CHARS) -> Text:
    """A table cell of untrusted text: control characters stripped, cut at ``limit`` characters with
    what was left out said."""
    if len(value) > limit:
        value = value[: limit * 4]  # strip only what can be shown
        shown = strip_control(value)[:limit]
        return Text(f"{shown}… (cut; the report has it all)")
    return Text(strip_control(value))


def print_warning(err: Console, command: str | None, message: str) -> None:
    """``replay-tui COMMAND: warning: MESSAGE`` on stderr: the run goes on."""
    where = f"{PROG} {command}" if command else PROG
    err.print(Text(f"{where}: warning: {strip_control(message)}", style="yellow"), soft_wrap=True)


def check_outputs(
    outputs: Iterable[tuple[str, str | os.PathLike[str] | None]],
    protected: Iterable[tuple[str, str | os.PathLike[str] | None]] = (),
) -> None:
    """Check a command's output paths before any work: a :class:`UsageError` when one is a protected
    file (an input log, the annotations sidecar, the response cache: see :func:`protected_paths`) or
    another output, or cannot be written (a typo costs nothing, not a whole run)."""
    given = [(flag, path) for flag, path in outputs if path is not None]
    try:
        fileio_check_outputs(given, protected)
    except OutputClash as exc:
        raise UsageError(str(exc)) from None
    for flag, path in given:
        try:
            check_writable(path)
        except OSError as exc:
            raise UsageError(f"{flag} {path}: cannot write there ({exc.strerror or exc})") from None


def output_arg(path: str | os.PathLike[str] | None, flag: str, inputs: Iterable[str | os.PathLike[str]] = ()) -> None:
    """:func:`check_outputs` for one output of a command whose inputs are ``inputs`` (the config and
    the response cache are protected too)."""
    check_outputs([(flag, path)], protected_paths(None, inputs))


def protected_paths(
    args: argparse.Namespace | None,
    inputs: Iterable[str | os.PathLike[str]],
    sidecar: str | os.PathLike[str] | None = None,
) -> list[tuple[str, str | os.PathLike[str] | None]]:
    """Every file a replay command reads or keeps that no output may replace: the input logs, a
    ``--replay`` cassette, the annotations sidecar, the config and the LLM response cache (its
    database and SQLite's two companion files), whether or not this run uses them."""
    from replay_tui.config import default_config_path
    from replay_tui.policies.cache import default_cache_dir
    from replay_tui.policies.llm_cache import DB_NAME

    found: list[tuple[str, str | os.PathLike[str] | None]] = [(OUTPUT_AS_INPUT, path) for path in inputs]
    found.append((OUTPUT_AS_INPUT, getattr(args, "replay", None)))
    found.append(("the annotations sidecar", sidecar))
    found.append(("the config file", getattr(args, "config", None) or default_config_path()))
    cache_dir = getattr(args, "cache_dir", None)
    database = (Path(cache_dir) if cache_dir else default_cache_dir()) / DB_NAME
    found += [("the LLM response cache", f"{database}{suffix}") for suffix in ("", "-wal", "-shm")]
    return found


def refuse_overwriting(path: str | os.PathLike[str], force: bool, flag: str = "--force") -> None:
    """A :class:`UsageError` when ``path`` exists and the user did not say ``--force``."""
    if not force and Path(path).exists():
        raise UsageError(f"{path} exists; add {flag} to overwrite it")


def folder_arg(path: str | os.PathLike[str], flag: str | None = None) -> Path:
    """A folder given on the command line, or a :class:`UsageError` naming it (and the flag)."""
    try:
        return require_folder(path, flag)
    except NotADirectoryError as exc:
        raise UsageError(str(exc)) from None


def add_graphics_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """``--graphics auto|halfblock``, for the commands that show screenshots."""
    from replay_tui.tui.graphics import GRAPHICS_CHOICES

    parser.add_argument("--graphics", choices=GRAPHICS_CHOICES, default="auto", help=help)


def prepare_graphics(args: argparse.Namespace) -> None:
    """Query the terminal for a graphics protocol now: it cannot be asked once the app has started."""
    from replay_tui.tui.graphics import prepare

    prepare(getattr(args, "graphics", "auto"))


def add_executor_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """``--executor local|ray`` and ``--ray-address``, for the commands that can run on Ray (the ray extra)."""
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help=f"where {what} run: here on threads (local, the default) or as Ray tasks (ray; needs the ray extra); "
        "reports are the same",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="with --executor ray: a running Ray cluster (auto, or ray://HOST:10001); default: a local Ray "
        "started for this command with --jobs CPUs (every core with --jobs 1)",
    )


def ray_executor(args: argparse.Namespace) -> RayExecutor | None:
    """The Ray executor the flags ask for (not started yet), or None for ``--executor local``."""
    if args.executor != "ray":
        if args.ray_address:
            raise UsageError("--ray-address is used with --executor ray")
        return None
    from replay_tui.executors import RAY_MISSING, RayExecutor, ray_installed

    if not ray_installed():
        raise UsageError(RAY_MISSING)
    if args.ray_address is not None and not args.ray_address.strip():
        raise UsageError("--ray-address is empty (auto, or ray://HOST:10001)")
    return RayExecutor(args.ray_address, args.jobs)


def run_parsed(parser: argparse.ArgumentParser, argv: list[str]) -> int:
    """Parse ``argv`` and run its command: SIGTERM, bad input and interrupts as exit codes, one line each."""
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse would print the top-level usage: print the command's own, and exit 2
        command_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    out = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    if not hasattr(args, "func"):
        parser.print_help()
        return EXIT_OK
    if args.command not in ("tui", "inspect") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)  # the app handles its own signals
    from replay_tui.episodes.problems import DemoFileError

    try:
        return int(args.func(args, out, err))
    except _Terminated:
        err.print(Text("terminated", style="red"))
        return 128 + signal.SIGTERM
    except (UsageError, DemoFileError, OSError) as exc:  # an unreadable input or an unwritable output
        message = str(exc) if not isinstance(exc, OSError) or not exc.filename else _os_error_line(exc)
        print_error(err, args.command, message)
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.print(Text("interrupted", style="red"))
        return 130


def command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The sub-parser of ``command``, so its own usage goes with its errors."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            found: argparse.ArgumentParser = action.choices[command]
            return found
    return parser


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so ``finally`` blocks run: temporary files (atomic writes,
    the visual renderer's page copies beside the user's HTML) are removed as on any other exit."""


def _terminated(signum: int, frame: object) -> None:
    raise _Terminated


def _os_error_line(exc: OSError) -> str:
    return f"{exc.filename}: {exc.strerror or type(exc).__name__}"
