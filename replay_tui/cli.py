"""The one command line: ``replay-tui``, ``python -m replay_tui`` and ``python -m replay_tui.replay``.

Exit codes: 0 when every replayed step matched, 1 when any step mismatched (or, with
``--strict``, when a malformed episode was found), 2 on a usage error or an unreadable file.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay_tui import __version__
from replay_tui.actions import CASE_POLICIES
from replay_tui.annotations import AnnotationError, AnnotationStore
from replay_tui.demos.loader import DemoSet, open_demos
from replay_tui.demos.problems import DemoFileError, LoadProblem
from replay_tui.env import MISMATCH_POLICIES, OfflineWebshopEnv
from replay_tui.examples import example_path
from replay_tui.export import FORMATS, ExportError, format_for_path, write_report
from replay_tui.fileio import atomic_write_bytes
from replay_tui.policies import BUILTIN_MODES, PolicyLoadError, builtin_policy, load_policy, policy_name
from replay_tui.runner import EpisodeReport, Runner, SummaryReport
from replay_tui.sanitize import strip_control
from replay_tui.workspace import default_annotations_path

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2
PROGRESS_MIN_EPISODES = 20


class UsageError(Exception):
    """A bad flag value or an unreadable input; printed as one line, exit code 2."""


def parse_sessions(text: str) -> list[int]:
    """``"0,1,2"`` or ``"0-9,15"`` -> session ids, in the given order, each once."""
    ids: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if match := re.fullmatch(r"(\d+)\s*-\s*(\d+)", part):
            low, high = int(match.group(1)), int(match.group(2))
            if high < low:
                raise UsageError(f"--sessions range {part!r} runs backwards")
            values = range(low, high + 1)
        elif re.fullmatch(r"-?\d+", part):
            values = range(int(part), int(part) + 1)
        else:
            raise UsageError(f"--sessions expects ids like 0,1,2 or 0-9, got {part!r}")
        seen = set(ids)
        ids.extend(v for v in values if v not in seen)
    if not ids:
        raise UsageError("--sessions is empty")
    return ids


def _add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--demos", nargs="+", metavar="FILE",
                        help="demo files, directories or globs (default: the bundled example)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--sessions", metavar="IDS", help="session ids to replay, e.g. 0,1,2 or 0-9")
    which.add_argument("--all", action="store_true", help="replay every episode (the default)")
    parser.add_argument("--mode", choices=BUILTIN_MODES, default="stub",
                        help="built-in policy: stub (recorded decisions) or heuristic (rule-based shopper)")
    parser.add_argument("--policy", metavar="SPEC",
                        help="load a policy from package.module:attr or path/to/file.py:attr (overrides --mode)")
    parser.add_argument("--mismatch", choices=MISMATCH_POLICIES, default="stop",
                        help="on a mismatch: stop the episode, or allow (force the recorded action, go on)")
    parser.add_argument("--item-steps", action="store_true",
                        help="also replay item-page actions (Description, options, Buy Now) as steps")
    parser.add_argument("--case", choices=CASE_POLICIES, default="exact",
                        help="how actions are compared: exact (default), lower, env (argument case-insensitive), "
                             "typed (by argument kind: keywords normalised, item ids exact, buttons/options any case)")
    parser.add_argument("--report", metavar="OUT.EXT",
                        help="write a report; the format follows the suffix: .json .md .csv .html .xml (JUnit)")
    parser.add_argument("--report-steps", action="store_true",
                        help="with a .json report: include every step result (without annotations)")
    parser.add_argument("--annotations", metavar="PATH",
                        help="tags and notes to include in reports (default: the sidecar beside the first file)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any episode is malformed")
    parser.add_argument("--show", type=int, default=20, metavar="N",
                        help="mismatches to list on the terminal (default 20, 0 for none)")
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the one-line verdict")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="replay-tui",
        description="A terminal debugger for LLM web agents: replay WebShop demonstration logs offline.",
    )
    parser.add_argument("--version", action="version", version=f"replay-tui {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay = commands.add_parser("replay", help="replay episodes headlessly and report accuracy",
                                 description="Replay recorded episodes through OfflineWebshopEnv.")
    _add_replay_arguments(replay)
    export = commands.add_parser("export", help="replay, then write a report (exit 0 once it is written)",
                                 description="Replay episodes and export the report in any format.")
    _add_replay_arguments(export)
    export.add_argument("--format", choices=FORMATS, help="report format (default: from the --out suffix)")
    export.add_argument("--out", metavar="PATH", required=True, help="where to write the report")
    tui = commands.add_parser("tui", help="open the debugger (the default when no command is given)",
                              description="Open the Textual debugger on demo files (default: the bundled example).")
    tui.add_argument("demos", nargs="*", metavar="FILE", help="demo files, directories or globs")
    tui.add_argument("--annotations", metavar="PATH", help="tags and notes sidecar (default: beside the first file)")
    tui.add_argument("--config", metavar="PATH", help="config file with labels and [keymap] (default: "
                     "~/.config/replay-tui/config.toml)")
    tui.add_argument("--mode", choices=BUILTIN_MODES, default="stub", help="policy for replays started in the app")
    tui.add_argument("--policy", metavar="SPEC", help="policy spec for replays (module:attr or file.py:attr)")
    tui.add_argument("--mismatch", choices=MISMATCH_POLICIES, default="stop", help="mismatch policy for replays")
    tui.add_argument("--item-steps", action="store_true", help="replay item-page actions as steps")
    tui.add_argument("--case", choices=CASE_POLICIES, default="exact", help="how actions are compared")
    from replay_tui.verify.cli import register as register_verify

    register_verify(commands)
    generate = commands.add_parser("generate", help="write a synthetic demo file in the exact contract")
    generate.add_argument("out", nargs="?", help="output path (default: webshop_demonstrations_START-END.json)")
    generate.add_argument("--start", type=int, default=0, help="first session id")
    generate.add_argument("--count", type=int, default=100, help="number of episodes")
    generate.add_argument("--seed", type=int, default=0, help="random seed")
    generate.add_argument("--quirk-rate", type=float, default=0.1,
                          help="share of episodes with real-log quirks (string numbers, JSON-string args...)")
    generate.add_argument("--target-mb", type=float, help="keep writing episodes until the file is this big")
    return parser


def _load(args: argparse.Namespace) -> DemoSet:
    specs = args.demos or [str(example_path())]
    try:
        demos = open_demos(specs)
    except DemoFileError as exc:
        raise UsageError(str(exc)) from None
    if demos.file_errors:
        raise UsageError(demos.file_errors[0])
    if not demos.refs and not demos.problems:
        raise UsageError(f"{', '.join(specs)}: no episodes found")
    return demos


def _make_policy(args: argparse.Namespace) -> tuple[object, str]:
    if args.policy:
        try:
            policy = load_policy(args.policy)
        except PolicyLoadError as exc:
            raise UsageError(str(exc)) from None
        return policy, policy_name(policy)
    return builtin_policy(args.mode), args.mode


def _print_problem(console: Console, problem: LoadProblem) -> None:
    console.print(Text(f"problem: {strip_control(problem.one_line())}", style="yellow"), soft_wrap=True)


def _summary_table(summary: SummaryReport) -> Table:
    table = Table(title="Replay summary", show_header=True, header_style="bold")
    table.add_column("state")
    table.add_column("steps", justify="right")
    table.add_column("accuracy", justify="right")
    for state, accuracy in summary.accuracy_by_state.items():
        table.add_row(state, str(summary.steps_by_state[state]), f"{accuracy:.1%}")
    table.add_row(Text("all", style="bold"), str(summary.total_steps), Text(f"{summary.overall_accuracy:.1%}",
                  style="bold green" if summary.overall_accuracy == 1.0 else "bold red"))
    return table


def _mismatch_table(episodes: list[EpisodeReport], limit: int) -> Table:
    table = Table(title="Mismatches", show_header=True, header_style="bold", show_lines=False)
    for name in ("session", "step", "state"):
        table.add_column(name, no_wrap=True)
    table.add_column("expected", style="green", overflow="fold")
    table.add_column("predicted", style="red", overflow="fold")
    shown = 0
    for episode in episodes:
        for mismatch in episode.mismatches:
            if shown >= limit:
                break
            predicted = mismatch.predicted if mismatch.error is None else f"error: {mismatch.error}"
            table.add_row(str(mismatch.session_id), mismatch.step_label, mismatch.state,
                          Text(strip_control(mismatch.expected)), Text(strip_control(predicted)))
            shown += 1
    return table


def _verdict(summary: SummaryReport) -> str:
    return (
        f"{summary.episodes_run} episodes, {summary.total_steps} steps, "
        f"{summary.total_matched} matched ({summary.overall_accuracy:.1%}); "
        f"{summary.total_mismatches} mismatches; {len(summary.problems)} problems"
    )


def _write_report(args: argparse.Namespace, demos: DemoSet, summary: SummaryReport, path: Path,
                  fmt: str | None) -> None:
    if args.report_steps and (fmt or format_for_path(path)) == "json":
        atomic_write_bytes(path, summary.to_json(include_steps=True))
        return
    try:
        store = AnnotationStore.load(args.annotations or default_annotations_path(demos))
        write_report(path, summary, store, fmt)
    except (ExportError, AnnotationError) as exc:
        raise UsageError(str(exc)) from None


def run_replay(args: argparse.Namespace, out: Console, err: Console) -> int:
    exporting = args.command == "export"
    report_path = Path(args.out) if exporting else (Path(args.report) if args.report else None)
    report_format = args.format if exporting else None
    if report_path is not None and report_format is None:
        try:
            format_for_path(report_path)
        except ExportError as exc:
            raise UsageError(str(exc)) from None
    demos = _load(args)
    session_ids = parse_sessions(args.sessions) if args.sessions else None
    if session_ids is not None:
        missing = [sid for sid in session_ids if sid not in demos]
        bad = {p.session_id for p in demos.problems}
        if missing and all(sid not in bad for sid in missing):
            raise UsageError(f"--sessions: no episode with session_id {', '.join(map(str, missing[:10]))}")
        session_ids = [sid for sid in session_ids if sid in demos]
    policy, mode = _make_policy(args)
    env = OfflineWebshopEnv(demos, mismatch_policy=args.mismatch, include_item_steps=args.item_steps,
                            case=args.case)
    runner = Runner(env, policy, mode=mode)
    for problem in demos.problems:
        _print_problem(err, problem)
    count = len(session_ids) if session_ids is not None else len(demos)
    show_progress = not (args.no_progress or args.quiet) and err.is_terminal and count >= PROGRESS_MIN_EPISODES

    def on_episode(item: EpisodeReport | LoadProblem) -> None:
        if isinstance(item, LoadProblem):
            _print_problem(err, item)
        if progress is not None:
            progress.advance(task)

    progress = None
    if show_progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        progress = Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                            console=err, transient=True)
        task = progress.add_task("replay", total=count)
        with progress:
            summary = runner.run_all(session_ids, on_episode=on_episode)
    else:
        summary = runner.run_all(session_ids, on_episode=on_episode)

    if report_path is not None:
        _write_report(args, demos, summary, report_path, report_format)
    if not args.quiet:
        out.print(_summary_table(summary))
        if summary.total_mismatches and args.show > 0:
            out.print(_mismatch_table(summary.episodes, args.show))
            if summary.total_mismatches > args.show:
                out.print(f"… {summary.total_mismatches - args.show} more mismatches (see --report)")
    out.print(Text(_verdict(summary), style="bold"), soft_wrap=True)
    if report_path is not None and not args.quiet:
        out.print(Text(f"report written to {report_path}"))
    if exporting:
        return EXIT_OK
    if summary.total_mismatches:
        return EXIT_MISMATCH
    if args.strict and summary.problems:
        return EXIT_MISMATCH
    return EXIT_OK


def run_generate(args: argparse.Namespace, out: Console) -> int:
    from replay_tui.demos import synth

    if args.count < 1 and not args.target_mb:
        raise UsageError("--count must be at least 1")
    path = args.out or synth.default_filename(args.start, args.count)
    target = int(args.target_mb * 1024 * 1024) if args.target_mb else None
    stats = synth.write_demo_file(path, start=args.start, count=args.count, seed=args.seed,
                                  quirk_rate=args.quirk_rate, target_bytes=target)
    out.print(Text(f"wrote {stats.episodes} episodes ({stats.bytes:,} bytes) to {stats.path}"))
    return EXIT_OK


COMMANDS = ("replay", "generate", "tui", "export", "verify")


def run_tui(args: argparse.Namespace) -> int:
    from replay_tui.tui.app import make_app
    from replay_tui.tui.config import ConfigError
    from replay_tui.workspace import ReplaySettings

    settings = ReplaySettings(mode="custom" if args.policy else args.mode, policy_spec=args.policy,
                              mismatch=args.mismatch, item_steps=args.item_steps, case=args.case)
    try:
        app = make_app(args.demos or None, annotations=args.annotations, config=args.config, settings=settings)
    except (DemoFileError, AnnotationError, ConfigError) as exc:
        raise UsageError(str(exc)) from None
    app.run()
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``replay-tui``; returns the process exit code.

    With no command, the arguments are demo files for the debugger: ``replay-tui FILE...``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["tui", *argv]
    parser = build_parser()
    args = parser.parse_args(argv)
    out = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    try:
        if args.command in ("replay", "export"):
            return run_replay(args, out, err)
        if args.command == "generate":
            return run_generate(args, out)
        if args.command == "tui":
            return run_tui(args)
        if hasattr(args, "func"):  # sub-commands registered by their own packages (verify, visual)
            return args.func(args, out, err)
        parser.print_help()
        return EXIT_OK
    except UsageError as exc:
        err.print(Text(f"replay-tui: error: {strip_control(str(exc))}", style="red"), soft_wrap=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.print(Text("interrupted", style="red"))
        return 130


def replay_main(argv: Sequence[str] | None = None) -> int:
    """``python -m replay_tui.replay`` (the seed's form): the replay command's flags."""
    return main(["replay", *(sys.argv[1:] if argv is None else argv)])
