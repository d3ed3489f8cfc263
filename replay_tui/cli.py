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
from replay_tui.policies import BUILTIN_MODES, PolicyLoadError
from replay_tui.repeat import RepeatReport, run_repeats
from replay_tui.runner import EpisodeReport, Runner, SummaryReport, run_all_parallel
from replay_tui.sanitize import strip_control
from replay_tui.workspace import ReplaySettings, close_policy, default_annotations_path

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2
PROGRESS_MIN_EPISODES = 20
MAX_SESSION_RANGE = 1_000_000
MODES: tuple[str, ...] = (*BUILTIN_MODES, "llm", "langgraph")
LLM_MODES = ("llm", "langgraph")
# argparse dest -> LlmSettings field, for the LLM flags (None when not given).
_LLM_FLAGS = {
    "base_url": "base_url",
    "model": "model",
    "api_key_env": "api_key_env",
    "temperature": "temperature",
    "llm_seed": "seed",
    "max_tokens": "max_tokens",
    "tool_choice": "tool_choice",
    "timeout": "timeout",
    "retries": "retries",
    "backoff": "backoff",
    "cache_dir": "cache_dir",
    "record": "record",
    "replay": "replay",
}


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
            if high - low >= MAX_SESSION_RANGE:
                raise UsageError(f"--sessions range {part!r} spans more than {MAX_SESSION_RANGE:,} ids")
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
    parser.add_argument(
        "--demos", nargs="+", metavar="FILE", help="demo files, directories or globs (default: the bundled example)"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--sessions", metavar="IDS", help="session ids to replay, e.g. 0,1,2 or 0-9")
    which.add_argument("--all", action="store_true", help="replay every episode (the default)")
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="stub",
        help="policy: stub (recorded decisions), heuristic (rule-based shopper), llm (an "
        "OpenAI-compatible endpoint) or langgraph (a LangGraph graph, see --graph)",
    )
    parser.add_argument(
        "--policy",
        metavar="SPEC",
        help="load a policy from package.module:attr or path/to/file.py:attr (overrides --mode)",
    )
    parser.add_argument(
        "--mismatch",
        choices=MISMATCH_POLICIES,
        default="stop",
        help="on a mismatch: stop the episode, or allow (force the recorded action, go on)",
    )
    parser.add_argument(
        "--item-steps",
        action="store_true",
        help="also replay item-page actions (Description, options, Buy Now) as steps",
    )
    parser.add_argument(
        "--case",
        choices=CASE_POLICIES,
        default="exact",
        help="how actions are compared: exact (default), lower, env (argument case-insensitive), "
        "typed (by argument kind: keywords normalised, item ids exact, buttons/options any case)",
    )
    parser.add_argument(
        "--report",
        metavar="OUT.EXT",
        help="write a report; the format follows the suffix: .json .md .csv .html .xml (JUnit)",
    )
    parser.add_argument(
        "--report-steps",
        action="store_true",
        help="with a .json report: include every step result (without annotations)",
    )
    parser.add_argument(
        "--annotations",
        metavar="PATH",
        help="tags and notes to include in reports (default: the sidecar beside the first file)",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when any episode is malformed")
    parser.add_argument(
        "--show", type=int, default=20, metavar="N", help="mismatches to list on the terminal (default 20, 0 for none)"
    )
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the one-line verdict")
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="replay up to N episodes at once (default 1); reports keep the session order",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="K",
        help="ask the policy K times for every recorded step and report the agreement with the "
        "recording and between runs, per state (JSON reports only)",
    )
    _add_llm_arguments(parser)


def _add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    llm = parser.add_argument_group("LLM and LangGraph modes (--mode llm, --mode langgraph)")
    llm.add_argument(
        "--base-url",
        metavar="URL",
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL, else OpenAI)",
    )
    llm.add_argument("--model", metavar="NAME", help="model name sent with every request")
    llm.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key (default OPENAI_API_KEY; local servers need none)",
    )
    llm.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (default 0)")
    llm.add_argument("--seed", dest="llm_seed", type=int, metavar="N", help="sampling seed sent to the server")
    llm.add_argument("--max-tokens", type=int, metavar="N", help="answer length limit sent to the server")
    llm.add_argument("--tool-choice", choices=("required", "auto"), help="tool_choice sent (default required)")
    llm.add_argument("--timeout", type=float, metavar="SECONDS", help="wait this long for an answer (default 60)")
    llm.add_argument(
        "--retries",
        type=int,
        metavar="N",
        help="retries after a timeout, connection error, HTTP 408/409/429/5xx (default 2)",
    )
    llm.add_argument(
        "--backoff", type=float, metavar="SECONDS", help="wait before the first retry, doubled each time (default 1)"
    )
    llm.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    llm.add_argument(
        "--cache-dir",
        metavar="PATH",
        help="response cache directory (default $REPLAY_TUI_CACHE_DIR, else ~/.cache/replay-tui/llm)",
    )
    llm.add_argument(
        "--retry-failures",
        action="store_true",
        help="ask again where the cache holds a timeout, HTTP or connection error",
    )
    cassette = llm.add_mutually_exclusive_group()
    cassette.add_argument("--record", metavar="FILE", help="write every LLM exchange of the run to a cassette file")
    cassette.add_argument(
        "--replay", metavar="FILE", help="answer only from a recorded cassette: no server, no network"
    )
    llm.add_argument(
        "--graph",
        metavar="SPEC",
        help="with --mode langgraph: a compiled graph or a factory, as module:attr or file.py:attr",
    )


def _add_graphics_argument(parser: argparse.ArgumentParser) -> None:
    from replay_tui.tui.graphics import GRAPHICS_CHOICES

    parser.add_argument(
        "--graphics",
        choices=GRAPHICS_CHOICES,
        default="auto",
        help="screenshots: a terminal graphics protocol when the terminal has one (auto), or "
        "the half-block renderer everywhere (halfblock)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="replay-tui",
        description="A terminal debugger for LLM web agents: replay WebShop demonstration logs offline.",
    )
    parser.add_argument("--version", action="version", version=f"replay-tui {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay = commands.add_parser(
        "replay",
        help="replay episodes headlessly and report accuracy",
        description="Replay recorded episodes through OfflineWebshopEnv.",
    )
    _add_replay_arguments(replay)
    export = commands.add_parser(
        "export",
        help="replay, then write a report (exit 0 once it is written)",
        description="Replay episodes and export the report in any format.",
    )
    _add_replay_arguments(export)
    export.add_argument("--format", choices=FORMATS, help="report format (default: from the --out suffix)")
    export.add_argument("--out", metavar="PATH", required=True, help="where to write the report")
    tui = commands.add_parser(
        "tui",
        help="open the debugger (the default when no command is given)",
        description="Open the Textual debugger on demo files (default: the bundled example).",
    )
    tui.add_argument("demos", nargs="*", metavar="FILE", help="demo files, directories or globs")
    tui.add_argument("--annotations", metavar="PATH", help="tags and notes sidecar (default: beside the first file)")
    tui.add_argument(
        "--config",
        metavar="PATH",
        help="config file with labels and [keymap] (default: ~/.config/replay-tui/config.toml)",
    )
    tui.add_argument("--mode", choices=MODES, default="stub", help="policy for replays started in the app")
    tui.add_argument("--policy", metavar="SPEC", help="policy spec for replays (module:attr or file.py:attr)")
    tui.add_argument("--mismatch", choices=MISMATCH_POLICIES, default="stop", help="mismatch policy for replays")
    tui.add_argument("--item-steps", action="store_true", help="replay item-page actions as steps")
    tui.add_argument("--case", choices=CASE_POLICIES, default="exact", help="how actions are compared")
    tui.add_argument(
        "--visual-ref-dir",
        metavar="DIR",
        help="the visual screen (v): folder of reference pages "
        "(default: the bundled Design2Code pages and their variants)",
    )
    tui.add_argument(
        "--visual-pred-dir",
        metavar="DIR",
        action="append",
        default=[],
        help="the visual screen: folder of generated pages with the same names (repeatable)",
    )
    _add_graphics_argument(tui)
    _add_llm_arguments(tui)
    from replay_tui.verify.cli import register as register_verify
    from replay_tui.visual.cli import register as register_visual

    register_verify(commands)
    register_visual(commands)
    inspect = commands.add_parser(
        "inspect",
        help="open a visual report (or a page pair) in the inspector",
        description="Open the visual-metric inspector on a saved pair report "
        "(replay-tui visual --json) or on REF.html GEN.html; a saved batch "
        "report, or no argument (the bundled page pairs), opens the visual "
        "batch screen.",
    )
    inspect.add_argument(
        "paths",
        nargs="*",
        metavar="RESULT.json | REF.html GEN.html",
        help="a saved pair or batch report, or two pages (default: the bundled page pairs)",
    )
    inspect.add_argument("--mode", choices=("compat", "fixed"), help="scoring mode (default: the report's)")
    inspect.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="bound on each page's load and capture (default 30)",
    )
    _add_graphics_argument(inspect)
    generate = commands.add_parser("generate", help="write a synthetic demo file in the exact contract")
    generate.add_argument("out", nargs="?", help="output path (default: webshop_demonstrations_START-END.json)")
    generate.add_argument("--start", type=int, default=0, help="first session id")
    generate.add_argument("--count", type=int, default=100, help="number of episodes")
    generate.add_argument("--seed", type=int, default=0, help="random seed")
    generate.add_argument(
        "--quirk-rate",
        type=float,
        default=0.1,
        help="share of episodes with real-log quirks (string numbers, JSON-string args...)",
    )
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
    if not demos.refs:  # nothing to replay: exit 2, naming the first reason
        first = f"; {demos.problems[0].one_line()}" if demos.problems else ""
        more = f" (and {len(demos.problems) - 1} more problems)" if len(demos.problems) > 1 else ""
        raise UsageError(f"{', '.join(map(str, specs))}: no usable episodes{first}{more}")
    return demos


def _llm_settings(args: argparse.Namespace) -> dict[str, object]:
    """The LlmSettings fields given on the command line (defaults are the dataclass's)."""
    settings: dict[str, object] = {
        field: getattr(args, dest) for dest, field in _LLM_FLAGS.items() if getattr(args, dest, None) is not None
    }
    if getattr(args, "no_cache", False):
        settings["cache"] = False
    if getattr(args, "retry_failures", False):
        settings["retry_failures"] = True
    return settings


def _check_llm_flags(args: argparse.Namespace) -> None:
    mode = None if args.policy else args.mode
    if mode == "langgraph" and not args.graph:
        raise UsageError("--mode langgraph needs --graph module:attr or file.py:attr")
    if args.graph and mode != "langgraph":
        raise UsageError("--graph is used with --mode langgraph")
    if mode in LLM_MODES:
        if mode == "langgraph":
            for flag, given in (
                ("--record", args.record),
                ("--replay", args.replay),
                ("--no-cache", args.no_cache),
                ("--cache-dir", args.cache_dir),
                ("--retry-failures", args.retry_failures),
            ):
                if given:
                    raise UsageError(f"{flag} is used with --mode llm (a graph makes its own calls)")
        return
    given = [dest for dest in _LLM_FLAGS if getattr(args, dest, None) is not None]
    given += [dest for dest in ("no_cache", "retry_failures") if getattr(args, dest, False)]
    if given:
        flag = "--" + ("seed" if given[0] == "llm_seed" else given[0]).replace("_", "-")
        raise UsageError(f"{flag} is used with --mode llm or --mode langgraph")


def _replay_settings(args: argparse.Namespace) -> ReplaySettings:
    """The replay settings the flags ask for (a --policy overrides --mode)."""
    return ReplaySettings(
        mode="custom" if args.policy else args.mode,
        policy_spec=args.policy,
        mismatch=args.mismatch,
        item_steps=args.item_steps,
        case=args.case,
        llm=_llm_settings(args) or None,
        graph_spec=args.graph,
    )


def _make_policy(args: argparse.Namespace) -> tuple[object, str]:
    settings = _replay_settings(args)
    usage_errors: tuple[type[Exception], ...] = ()  # a built-in mode's policy cannot fail to load
    if settings.mode == "llm":
        from replay_tui.policies.llm import LlmConfigError

        usage_errors = (LlmConfigError,)
    elif settings.mode in ("custom", "langgraph"):
        usage_errors = (PolicyLoadError,)
    try:
        return settings.make_policy()
    except usage_errors as exc:
        raise UsageError(str(exc)) from None


class _Policies:
    """The policies of a run: built-in and LLM policies are thread-safe and shared by every worker;
    others (a --policy, a LangGraph graph) are built once per worker. ``close`` ends them all."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.first, self.mode = _make_policy(args)
        self.shared = args.policy is None and args.mode != "langgraph"
        self.made: list[object] = [self.first]
        self._first_taken = False

    def take(self) -> object:
        if not self._first_taken:
            self._first_taken = True
            return self.first
        if self.shared:
            return self.first
        policy, _ = _make_policy(self.args)
        self.made.append(policy)
        return policy

    def close(self) -> None:
        from replay_tui.policies.llm import LlmConfigError

        for policy in self.made:
            try:
                close_policy(policy)
            except LlmConfigError as exc:
                raise UsageError(str(exc)) from None

    def stats_line(self) -> str | None:
        stats = getattr(self.first, "stats", None)
        if not callable(stats):
            return None
        numbers = stats()
        sent, hits = numbers["requests_sent"], numbers["cache_hits"]
        line = (
            f"llm: {sent} request{'' if sent == 1 else 's'} sent, "
            f"{hits} answer{'' if hits == 1 else 's'} from the cache"
        )
        cassette = getattr(self.first, "cassette", None)
        if cassette is not None:
            verb = "recorded to" if cassette.mode == "record" else "replayed from"
            line += f", {len(cassette)} exchanges {verb} {cassette.path}"
        return line


def _print_problem(console: Console, problem: LoadProblem) -> None:
    console.print(Text(f"problem: {strip_control(problem.one_line())}", style="yellow"), soft_wrap=True)


def _summary_table(summary: SummaryReport) -> Table:
    table = Table(title="Replay summary", show_header=True, header_style="bold")
    table.add_column("state")
    table.add_column("steps", justify="right")
    table.add_column("accuracy", justify="right")
    for state, accuracy in summary.accuracy_by_state.items():
        table.add_row(state, str(summary.steps_by_state[state]), f"{accuracy:.1%}")
    table.add_row(
        Text("all", style="bold"),
        str(summary.total_steps),
        Text(f"{summary.overall_accuracy:.1%}", style="bold green" if summary.overall_accuracy == 1.0 else "bold red"),
    )
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
            predicted = (
                mismatch.predicted
                if mismatch.error is None
                else (f"{mismatch.error_kind or 'error'}: {mismatch.error}")
            )
            table.add_row(
                str(mismatch.session_id),
                mismatch.step_label,
                mismatch.state,
                Text(strip_control(mismatch.expected)),
                Text(strip_control(predicted)),
            )
            shown += 1
    return table


def _verdict(summary: SummaryReport) -> str:
    return (
        f"{summary.episodes_run} episodes, {summary.total_steps} steps, "
        f"{summary.total_matched} matched ({summary.overall_accuracy:.1%}); "
        f"{summary.total_mismatches} mismatches; {len(summary.problems)} problems"
    )


def _write_report(
    args: argparse.Namespace, demos: DemoSet, summary: SummaryReport, path: Path, fmt: str | None
) -> None:
    if args.report_steps and fmt == "json":
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
            report_format = format_for_path(report_path)
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
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    if args.repeat > 1 and report_path is not None and report_format != "json":
        raise UsageError("--repeat writes JSON reports only (use a .json path)")
    _check_llm_flags(args)
    policies = _Policies(args)
    for problem in demos.problems:
        _print_problem(err, problem)
    count = len(session_ids) if session_ids is not None else len(demos)
    show_progress = not (args.no_progress or args.quiet) and err.is_terminal and count >= PROGRESS_MIN_EPISODES

    def on_episode(item: object) -> None:
        if isinstance(item, LoadProblem):
            _print_problem(err, item)
        if progress is not None:
            progress.advance(task)

    def make_runner() -> Runner:
        env = OfflineWebshopEnv(
            demos, mismatch_policy=args.mismatch, include_item_steps=args.item_steps, case=args.case
        )
        return Runner(env, policies.take(), mode=policies.mode)

    def run() -> SummaryReport | RepeatReport:
        if args.repeat > 1:
            return run_repeats(
                policies.take,
                demos,
                session_ids,
                repeats=args.repeat,
                case=args.case,
                include_item_steps=args.item_steps,
                jobs=args.jobs,
                mode=policies.mode,
                on_episode=on_episode,
            )
        return run_all_parallel(make_runner, session_ids, jobs=args.jobs, on_episode=on_episode)

    progress = None
    try:
        if show_progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            progress = Progress(
                TextColumn("replaying"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            task = progress.add_task("replay", total=count)
            with progress:
                summary = run()
        else:
            summary = run()
    finally:
        policies.close()
    stats = policies.stats_line()
    if stats and not args.quiet:
        err.print(Text(stats), soft_wrap=True)
    if isinstance(summary, RepeatReport):
        return _finish_repeat(args, summary, report_path, out, exporting)

    if report_path is not None:
        _write_report(args, demos, summary, report_path, report_format)
    if not args.quiet:
        out.print(_summary_table(summary))
        if summary.failures_by_kind:
            out.print(Text("failures: " + ", ".join(f"{kind} {n}" for kind, n in summary.failures_by_kind.items())))
        if summary.total_mismatches and args.show > 0:
            out.print(_mismatch_table(summary.episodes, args.show))
            if summary.total_mismatches > args.show:
                out.print(f"… {summary.total_mismatches - args.show} more mismatches (see --report)")
    out.print(Text(_verdict(summary), style="bold"), soft_wrap=True)
    if report_path is not None and not args.quiet:
        out.print(Text(f"report written to {report_path}"))
    if exporting:
        return EXIT_OK
    if not summary.episodes_run and summary.problems:
        raise UsageError(f"no episode could be replayed: {len(summary.problems)} problems (listed above)")
    if summary.total_mismatches:
        return EXIT_MISMATCH
    if args.strict and summary.problems:
        return EXIT_MISMATCH
    return EXIT_OK


def _repeat_table(report: RepeatReport) -> Table:
    table = Table(title=f"Reproducibility ({report.repeats} runs per step)", show_header=True, header_style="bold")
    for name in ("state", "steps", "runs", "match recording", "agree between runs", "consistent steps"):
        table.add_column(name, justify="left" if name == "state" else "right")
    rows = [*report.by_state.items(), ("all", report.overall)]
    for state, stats in rows:
        table.add_row(
            Text(state, style="bold" if state == "all" else ""),
            str(stats.steps),
            str(stats.runs),
            f"{stats.agreement_with_recording:.1%}",
            f"{stats.agreement_between_runs:.1%}",
            f"{stats.consistent_steps}/{stats.steps}",
        )
    return table


def _finish_repeat(
    args: argparse.Namespace, report: RepeatReport, report_path: Path | None, out: Console, exporting: bool
) -> int:
    if report_path is not None:
        atomic_write_bytes(report_path, report.to_json())
    overall = report.overall
    if not args.quiet:
        out.print(_repeat_table(report))
        if overall.failures_by_kind:
            out.print(Text("failures: " + ", ".join(f"{k} {n}" for k, n in overall.failures_by_kind.items())))
    out.print(
        Text(
            f"{report.episodes_run} episodes, {overall.steps} steps x {report.repeats} runs: "
            f"{overall.agreement_with_recording:.1%} match the recording, {overall.agreement_between_runs:.1%} "
            f"agree between runs; {overall.consistent_steps}/{overall.steps} steps consistent",
            style="bold",
        ),
        soft_wrap=True,
    )
    if report_path is not None and not args.quiet:
        out.print(Text(f"report written to {report_path}"))
    if exporting:
        return EXIT_OK
    return EXIT_OK if report.all_matched else EXIT_MISMATCH


def run_generate(args: argparse.Namespace, out: Console) -> int:
    from replay_tui.demos import synth

    if args.count < 1 and not args.target_mb:
        raise UsageError("--count must be at least 1")
    path = args.out or synth.default_filename(args.start, args.count)
    target = int(args.target_mb * 1024 * 1024) if args.target_mb else None
    stats = synth.write_demo_file(
        path, start=args.start, count=args.count, seed=args.seed, quirk_rate=args.quirk_rate, target_bytes=target
    )
    out.print(Text(f"wrote {stats.episodes} episodes ({stats.bytes:,} bytes) to {stats.path}"))
    return EXIT_OK


COMMANDS = ("replay", "generate", "tui", "export", "verify", "visual", "inspect")


def run_tui(args: argparse.Namespace) -> int:
    from replay_tui.tui.app import VisualBatch, make_app
    from replay_tui.tui.config import ConfigError

    _check_llm_flags(args)
    settings = _replay_settings(args)
    if args.visual_pred_dir and not args.visual_ref_dir:
        raise UsageError("--visual-pred-dir needs --visual-ref-dir")
    ref_dir = Path(args.visual_ref_dir) if args.visual_ref_dir else None
    pred_dirs = tuple(Path(d) for d in args.visual_pred_dir)
    if ref_dir is not None and not pred_dirs:
        raise UsageError("--visual-ref-dir needs at least one --visual-pred-dir")
    for folder in (ref_dir, *pred_dirs):
        if folder is not None and not folder.is_dir():
            raise UsageError(f"{folder}: not a folder")
    try:
        app = make_app(
            args.demos or None,
            annotations=args.annotations,
            config=args.config,
            settings=settings,
            visual=VisualBatch(ref_dir, pred_dirs),
            require_readable=True,
        )
    except (DemoFileError, AnnotationError, ConfigError) as exc:
        raise UsageError(str(exc)) from None
    _prepare_graphics(args)
    app.run()
    return EXIT_OK


def _prepare_graphics(args: argparse.Namespace) -> None:
    """Query the terminal for a graphics protocol now: it cannot be asked once the app has started."""
    from replay_tui.tui.graphics import prepare

    prepare(getattr(args, "graphics", "auto"))


def inspect_app(paths: list[str], mode: str | None, *, timeout_ms: int = 30_000):
    """The app for ``inspect``: a saved pair report, a saved batch report, or REF.html GEN.html."""
    from pydantic import ValidationError

    from replay_tui.tui.inspector import InspectorApp

    if not paths:
        from replay_tui.tui.visual_batch import VisualBatchApp, bundled_pairs

        return VisualBatchApp(bundled_pairs(), mode=mode or "compat", timeout_ms=timeout_ms)
    if len(paths) == 2:
        for path in paths:
            if not Path(path).is_file():
                raise UsageError(f"{path}: no such page")
        return InspectorApp(paths[0], paths[1], mode=mode or "compat", timeout_ms=timeout_ms)
    if len(paths) != 1:
        raise UsageError("inspect takes RESULT.json or REF.html GEN.html")
    import orjson

    from replay_tui.visual.models import BatchReport, PairReport

    try:
        data = orjson.loads(Path(paths[0]).read_bytes())
        if not isinstance(data, dict):
            raise TypeError("the top level is not an object")
        if "rows" in data:
            batch = BatchReport.model_validate(data)
        else:
            report = PairReport.model_validate(data)
    except (OSError, orjson.JSONDecodeError, ValidationError, TypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"{paths[0]}: not a visual report (replay-tui visual --json): {first}") from None
    if "rows" in data:
        from replay_tui.tui.visual_batch import VisualBatchApp, pairs_from_report

        return VisualBatchApp(pairs_from_report(batch), mode=mode or batch.mode, timeout_ms=timeout_ms)
    for path in (report.ref, report.pred):
        if not Path(path).is_file():
            raise UsageError(f"{path}: no such page (the report's pages are rendered again for the screenshots)")
    chosen = mode or report.mode
    return InspectorApp(
        report.ref, report.pred, mode=chosen, timeout_ms=timeout_ms, report=report if chosen == report.mode else None
    )


def run_inspect(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    app = inspect_app(args.paths, args.mode, timeout_ms=int(args.timeout * 1000))
    _prepare_graphics(args)
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
        if args.command == "inspect":
            return run_inspect(args)
        if hasattr(args, "func"):  # sub-commands registered by their own packages (verify, visual)
            return args.func(args, out, err)
        parser.print_help()
        return EXIT_OK
    except (UsageError, DemoFileError, OSError) as exc:  # an unreadable input or an unwritable output
        message = str(exc) if not isinstance(exc, OSError) or not exc.filename else _os_error_line(exc)
        err.print(Text(f"replay-tui: error: {strip_control(message)}", style="red"), soft_wrap=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.print(Text("interrupted", style="red"))
        return 130


def _os_error_line(exc: OSError) -> str:
    return f"{exc.filename}: {exc.strerror or type(exc).__name__}"


def replay_main(argv: Sequence[str] | None = None) -> int:
    """``python -m replay_tui.replay`` (the seed's form): the replay command's flags."""
    return main(["replay", *(sys.argv[1:] if argv is None else argv)])
