"""The one command line: ``replay-tui``, ``python -m replay_tui`` and ``python -m replay_tui.replay``.

The parser and the dispatch of every command; ``replay``, ``export``, ``generate``, ``runs`` and ``tui`` run here,
``visual`` and ``inspect`` in :mod:`replay_tui.cli.visual`, ``verify`` in :mod:`replay_tui.cli.verify`.

Exit codes: 0 when every replayed step matched, 1 when any step mismatched (or, with
``--strict``, when a malformed episode was found), 2 on a usage error or an unreadable file. Usage
errors print ``replay-tui COMMAND: error: MESSAGE`` (after the command's usage when argparse finds them).
"""

from __future__ import annotations

import argparse
import difflib
import gc
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay_tui import __version__
from replay_tui.annotations import AnnotationError, AnnotationStore
from replay_tui.cli.batch import register as register_batch
from replay_tui.cli.common import (
    EXIT_MISMATCH,
    EXIT_OK,
    EndpointError,
    UsageError,
    add_executor_arguments,
    add_graphics_argument,
    cell,
    check_outputs,
    folder_arg,
    prepare_graphics,
    print_warning,
    protected_paths,
    ray_executor,
    refuse_overwriting,
    run_parsed,
)
from replay_tui.cli.compare import register as register_compare
from replay_tui.cli.convert import register as register_convert
from replay_tui.cli.formats import register as register_formats
from replay_tui.cli.mcp import register as register_mcp
from replay_tui.cli.serve import register as register_serve
from replay_tui.cli.verify import register as register_verify
from replay_tui.cli.visual import register as register_visual
from replay_tui.cli.visual import register_inspect
from replay_tui.env import MISMATCH_POLICIES
from replay_tui.episodes.collection import EpisodeSet
from replay_tui.episodes.problems import DemoFileError, LoadProblem
from replay_tui.examples import example_path
from replay_tui.export import FORMATS
from replay_tui.fileio import atomic_write_bytes
from replay_tui.formats import FormatError, detect
from replay_tui.gcpause import gc_paused
from replay_tui.matching import CASE_POLICIES, MatchSettings, MatchSpecError
from replay_tui.policies.registry import LLM_MODES, MODE_FLAGS
from replay_tui.runs import RunEntry, RunError, RunStore, runs_root
from replay_tui.sanitize import excerpt, strip_control
from replay_tui.sources import open_sources
from replay_tui.workspace import ReplaySettings, annotations_path_for, default_annotations_path, make_run_info

if TYPE_CHECKING:
    from rich.progress import Progress

    from replay_tui.executors import RayExecutor
    from replay_tui.groups import MismatchGroup
    from replay_tui.repeat_report import RepeatReport
    from replay_tui.runner import EpisodeReport, SummaryReport
    from replay_tui.session import ReplaySession, SessionEvent
    from replay_tui.tui.app import ReplayApp

PROGRESS_MIN_EPISODES = 20
GROUP_SAMPLE_CHARS = 48
"""A mismatch group's sample reason is cut to this many characters on the terminal."""
MAX_SESSION_RANGE = 1_000_000
MODES: tuple[str, ...] = MODE_FLAGS
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


def _check_webshop_only(args: argparse.Namespace, demos: EpisodeSet) -> None:
    """The heuristic shopper and item-page steps are WebShop's; asked for on other logs, say so."""
    from replay_tui.sources import is_call_judged

    others = sorted({ref.format for ref in demos.refs if is_call_judged(ref.format)})
    if not others:
        return
    if args.mode == "heuristic" and not args.policy:
        raise UsageError(
            f"--mode heuristic plays WebShop only, and these are {', '.join(others)} logs; "
            "use --mode stub, llm or langgraph, or --policy"
        )
    if args.item_steps and len(others) == len({ref.format for ref in demos.refs}):
        raise UsageError(f"--item-steps is for WebShop demo files; {', '.join(others)} logs have no item-page steps")


def _select_sessions(text: str, demos: EpisodeSet) -> list[int]:
    """``--sessions``: session ids and ranges (:func:`parse_sessions`), or, for logs of other formats,
    the episode ids the logs give (``--sessions task_17,task_18``), each matched exactly."""
    try:
        return parse_sessions(text)
    except UsageError:
        by_name = {ref.episode_id: ref.session_id for ref in demos.refs if ref.episode_id is not None}
        if not by_name:
            raise
    ids: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part in by_name:
            ids.append(by_name[part])
        elif re.fullmatch(r"-?\d+", part):
            ids.append(int(part))
        else:
            close = difflib.get_close_matches(part, list(by_name), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UsageError(f"--sessions: no episode with id {part!r}{hint}")
    if not ids:
        raise UsageError("--sessions is empty")
    return list(dict.fromkeys(ids))


def _add_replay_arguments(parser: argparse.ArgumentParser, *, format_flag: str = "--format") -> None:
    parser.add_argument(
        "--demos", nargs="+", metavar="FILE", help="demo files, directories or globs (default: the bundled example)"
    )
    _add_source_arguments(parser, flag=format_flag)
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--sessions",
        metavar="IDS",
        help="session ids to replay, e.g. 0,1,2 or 0-9; for logs of other formats also the episode ids the log gives",
    )
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
    _add_match_arguments(parser)
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
    add_executor_arguments(parser, "episodes")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="K",
        help="ask the policy K times for every recorded step and report the agreement with the "
        "recording and between runs, per state (JSON reports only; not saved as a run)",
    )
    _add_run_arguments(parser, "save the run in the run history")
    _add_llm_arguments(parser)


def _add_run_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--runs-dir",
        metavar="DIR",
        help="where runs are saved, a folder per demo file (default: $REPLAY_TUI_RUNS_DIR, else "
        "~/.local/share/replay-tui/runs)",
    )
    parser.add_argument("--no-save-run", action="store_true", help=f"do not {what}")


def _add_source_arguments(parser: argparse.ArgumentParser, *, flag: str = "--log-format") -> None:
    from replay_tui.formats import FORMATS as LOG_FORMATS

    names = [info.name for info in LOG_FORMATS]
    flags = [flag] if flag == "--log-format" else [flag, "--log-format"]
    parser.add_argument(
        *flags,
        dest="log_format",
        choices=names,
        metavar="NAME",
        help=f"read the files as this log format instead of detecting it ({', '.join(names)}; "
        "`replay-tui formats` lists them)",
    )
    parser.add_argument(
        "--allow-pickle",
        action="store_true",
        help="read BrowserGym step pickles (screenshots, AXTree) with a restricted unpickler that refuses "
        "unknown classes; pickles can run code, so only for logs you trust",
    )


def _add_match_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--match",
        action="append",
        default=[],
        metavar="[STATE=]POLICY",
        help="matching policy, for one state (Search=tolerant) or every state (typed); repeatable. "
        "exact (default: every character), lower, env (argument case), typed (keywords normalised, "
        "buttons/options any case, item ids exact), tolerant (typed + keyword order, plurals, stop words; "
        "item ids any case). Tolerated differences are counted as equivalent (≈), apart from matches",
    )
    parser.add_argument(
        "--case",
        choices=CASE_POLICIES,
        default=None,
        help="the policy for every state (the same as --match POLICY)",
    )


def _matching(args: argparse.Namespace) -> MatchSettings:
    """config.toml's [match], then --case, then each --match (a later one wins)."""
    from replay_tui.config import ConfigError, load_config

    try:
        base = load_config(getattr(args, "config", None)).matching()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    specs = [*base.specs(), *([args.case] if args.case else []), *args.match]
    try:
        return MatchSettings.parse(specs)
    except MatchSpecError as exc:
        raise UsageError(str(exc)) from None


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
    llm.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="deadline for one complete answer, per attempt (default 60)"
    )
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
    replay.set_defaults(func=run_replay)
    export = commands.add_parser(
        "export",
        help="replay, then write a report (exit 0 once it is written)",
        description="Replay episodes and export the report in any format.",
    )
    _add_replay_arguments(export, format_flag="--log-format")
    export.add_argument("--format", choices=FORMATS, help="report format (default: from the --out suffix)")
    export.add_argument("--out", metavar="PATH", required=True, help="where to write the report")
    export.set_defaults(func=run_replay)
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
    tui.add_argument(
        "--follow",
        action="store_true",
        help="JSON Lines logs still being written (demo files, Claude Code / Codex sessions and their folders, "
        "other JSON Lines logs): show episodes and steps as they are appended",
    )
    tui.add_argument(
        "--out-dir",
        metavar="DIR",
        help="the one folder the app's dialogs write to: an export path outside it is refused, and the "
        "policy spec and LLM base URL stay those given here (made if missing; serve's default: ./replay-tui-out)",
    )
    _add_run_arguments(tui, "save the app's replays as runs (the last run is still reopened)")
    _add_source_arguments(tui, flag="--format")
    _add_match_arguments(tui)
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
    add_graphics_argument(
        tui,
        "screenshots: a terminal graphics protocol when the terminal has one (auto), or "
        "the half-block renderer everywhere (halfblock)",
    )
    _add_llm_arguments(tui)
    tui.set_defaults(func=run_tui)
    register_serve(commands, tui, tui_app)
    register_verify(commands)
    register_visual(commands)
    register_inspect(commands)
    register_formats(commands)
    register_convert(commands)
    register_compare(commands)
    register_mcp(commands)
    register_batch(commands, _add_replay_arguments, _batch_inputs)
    runs = commands.add_parser(
        "runs",
        help="list the saved runs (every replay is saved as a run)",
        description="List the saved runs of demo files (date, name, policy, model, accuracy, steps, complete), "
        "newest first; without --demos, the runs of every demo file.",
    )
    runs.add_argument("--demos", nargs="+", metavar="FILE", help="the demo files whose runs to list")
    runs.add_argument(
        "--runs-dir",
        metavar="DIR",
        help="the runs folder (default: $REPLAY_TUI_RUNS_DIR, else ~/.local/share/replay-tui/runs)",
    )
    runs.set_defaults(func=run_runs)
    generate = commands.add_parser(
        "generate",
        help="write a synthetic demo file in the exact contract",
        description="Write realistic synthetic WebShop demonstration logs (every episode is a pure "
        "function of --seed and its session id), or regenerate the bundled example with --bundled.",
    )
    generate.add_argument(
        "out",
        nargs="?",
        metavar="OUT",
        help="output file, or a folder to write webshop_demonstrations_START-END.json into "
        "(default: that name in the current folder; with --bundled: the bundled example itself)",
    )
    generate.add_argument("--start", type=int, help="first session id (default 0)")
    generate.add_argument("--count", type=int, help="number of episodes (default 100)")
    generate.add_argument("--seed", type=int, help="random seed (default 0)")
    generate.add_argument(
        "--quirk-rate",
        type=float,
        help="share of episodes with real-log quirks (string numbers, JSON-string args...) (default 0.1)",
    )
    generate.add_argument(
        "--target-mb",
        type=float,
        metavar="MB",
        help="ignore --count and keep writing episodes until the file is about MB megabytes (1 MB = 1,000,000 bytes)",
    )
    generate.add_argument("--indent", action="store_true", help="indent the JSON for reading")
    generate.add_argument("--force", action="store_true", help="overwrite OUT when it exists")
    generate.add_argument(
        "--bundled",
        action="store_true",
        help="regenerate the bundled example: sessions 0-99, seed 0, quirk rate 0.1, indented",
    )
    generate.set_defaults(func=run_generate)
    return parser


def _load(args: argparse.Namespace) -> EpisodeSet:
    specs = args.demos or [str(example_path())]
    fmt = getattr(args, "log_format", None)
    try:
        demos = open_sources(specs, fmt=fmt, allow_pickle=getattr(args, "allow_pickle", False))
    except (DemoFileError, FormatError) as exc:
        raise UsageError(str(exc) + _unknown_format([Path(spec) for spec in specs], fmt)) from None
    if demos.file_errors:
        raise UsageError(demos.file_errors[0] + _unknown_format([demo.path for demo in demos.files], fmt))
    if not demos.refs:  # nothing to replay: exit 2, naming the first reason
        first = f"; {demos.problems[0].one_line()}" if demos.problems else ""
        more = f" (and {len(demos.problems) - 1} more problems)" if len(demos.problems) > 1 else ""
        hint = _unknown_format([demo.path for demo in demos.files], fmt)
        raise UsageError(f"{', '.join(map(str, specs))}: no usable episodes{first}{more}{hint}")
    return demos


def _unknown_format(paths: list[Path], fmt: str | None) -> str:
    """When no reader recognised a file (so it was read as a seed demo file), the closest reader
    and why it refused: the reason a user needs when a log of some other kind will not open."""
    if fmt is not None:
        return ""
    for path in paths:
        if not path.is_file():
            continue
        try:
            detect(path)
        except FormatError as exc:
            text = str(exc)
            return "; " + (text[len(path.name) + 2 :] if text.startswith(path.name + ": ") else text)
        except OSError:
            continue
    return ""


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


def _batch_inputs(args: argparse.Namespace) -> tuple[EpisodeSet, list[int] | None, dict[str, object]]:
    """``batch export``: the demos, sessions and LLM settings of the replay its flags describe."""
    demos = _load(args)
    session_ids = _select_sessions(args.sessions, demos) if args.sessions else None
    if session_ids is not None:
        bad = {p.session_id for p in demos.problems}
        unknown = [sid for sid in session_ids if sid not in demos and sid not in bad]
        if unknown:
            raise UsageError(f"--sessions: no episode with session_id {', '.join(map(str, unknown[:10]))}")
        session_ids = [sid for sid in session_ids if sid in demos or sid in bad]
    _check_llm_flags(args)
    _check_webshop_only(args, demos)
    return demos, session_ids, _llm_settings(args)


def _replay_settings(args: argparse.Namespace) -> ReplaySettings:
    """The replay settings the flags ask for (a --policy overrides --mode)."""
    return ReplaySettings(
        mode="custom" if args.policy else args.mode,
        policy_spec=args.policy,
        mismatch=args.mismatch,
        item_steps=args.item_steps,
        matching=_matching(args),
        llm=_llm_settings(args) or None,
        graph_spec=args.graph,
    )


def _session(
    args: argparse.Namespace,
    demos: EpisodeSet,
    session_ids: list[int] | None,
    executor: RayExecutor | None,
    on_event: Callable[[SessionEvent], object],
) -> ReplaySession:
    """The replay the flags ask for; a policy that cannot be built is a usage error."""
    from replay_tui.policies import POLICY_BUILD_ERRORS
    from replay_tui.session import ReplaySession

    try:
        return ReplaySession(
            demos,
            _replay_settings(args),  # config.toml read once, with the flags
            session_ids,
            on_event=on_event,
            jobs=args.jobs,
            executor=executor,
            log_format=getattr(args, "log_format", None),
            allow_pickle=getattr(args, "allow_pickle", False),
        )
    except POLICY_BUILD_ERRORS as exc:
        raise UsageError(str(exc)) from None


def _stats_line(session: ReplaySession) -> str | None:
    """The LLM policies' request counts (and their cassette), for stderr."""
    numbers = session.llm_counts()
    if numbers is None:
        return None
    sent, hits = numbers["requests_sent"], numbers["cache_hits"]
    line = f"llm: {sent} request{'' if sent == 1 else 's'} sent, {hits} answer{'' if hits == 1 else 's'} from the cache"
    cassette = getattr(session.policy, "cassette", None)
    if cassette is not None:
        verb = "recorded to" if cassette.mode == "record" else "replayed from"
        line += f", {len(cassette)} exchanges {verb} {cassette.path}"
    return line


def _print_problem(console: Console, problem: LoadProblem) -> None:
    console.print(Text(f"problem: {strip_control(problem.one_line())}", style="yellow"), soft_wrap=True)


def _summary_table(summary: SummaryReport) -> Table:
    from replay_tui.export import Intervals

    tolerant = summary.matching is not None
    intervals = Intervals(summary)
    title = f"Replay summary (matching: {summary.matching_label})"
    table = Table(title=title, show_header=True, header_style="bold", min_width=len(title) + 2)
    table.add_column("state")
    table.add_column("steps", justify="right")
    table.add_column("accuracy", justify="right")
    table.add_column("95% CI", justify="right", style="dim")
    if tolerant:
        table.add_column("≈ equivalent", justify="right")
        table.add_column("with ≈ [95% CI]", justify="right")
    for state, accuracy in summary.accuracy_by_state.items():
        row: list[str | Text] = [
            Text(strip_control(state)),
            str(summary.steps_by_state[state]),
            f"{accuracy:.1%}",
            _ci_cell(intervals.by_state.get(state)),
        ]
        if tolerant:
            row += [
                str(summary.equivalent_by_state.get(state, 0)),
                f"{summary.accepted_accuracy_by_state.get(state, 0.0):.1%} "
                + _ci_cell(intervals.accepted_by_state.get(state), brackets=True),
            ]
        table.add_row(*row)
    total: list[str | Text] = [
        Text("all", style="bold"),
        str(summary.total_steps),
        Text(f"{summary.overall_accuracy:.1%}", style="bold green" if summary.overall_accuracy == 1.0 else "bold red"),
        _ci_cell(intervals.overall),
    ]
    if tolerant:
        total += [
            str(summary.total_equivalent),
            Text(f"{summary.accepted_accuracy:.1%} {_ci_cell(intervals.accepted, brackets=True)}", style="bold"),
        ]
    table.add_row(*total)
    return table


def _ci_cell(interval: tuple[float, float] | None, *, brackets: bool = False) -> str:
    """``17.9–25.8%`` (``[17.9–25.8%]``): a 95 % Wilson interval."""
    if interval is None:
        return ""
    text = f"{interval[0] * 100:.1f}–{interval[1] * 100:.1f}%"
    return f"[{text}]" if brackets else text


def _groups_table(groups: list[MismatchGroup], limit: int) -> Table:
    """The largest ``limit`` mismatch groups: count, state, expected → predicted tool, reason kind, a sample."""
    total = sum(group.count for group in groups)
    title = f"Mismatch groups ({total} mismatches in {len(groups)} groups)"
    table = Table(title=title, show_header=True, header_style="bold", show_lines=False)
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("expected → predicted tool", overflow="fold")
    table.add_column("reason", overflow="fold")
    table.add_column("sample", style="dim", overflow="fold")
    for group in groups[:limit]:
        table.add_row(
            str(group.count),
            Text(strip_control(group.state)),
            cell(group.tools),
            Text(strip_control(group.reason_kind)),
            Text(excerpt(group.sample_reason, GROUP_SAMPLE_CHARS)),
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
                cell(mismatch.expected),
                cell(predicted),
            )
            shown += 1
    return table


def _verdict(summary: SummaryReport) -> str:
    return (
        f"{summary.episodes_run} episodes, {summary.total_steps} steps, "
        f"{summary.total_matched} matched ({summary.overall_accuracy:.1%}); "
        + (f"{summary.total_equivalent} equivalent; " if summary.matching is not None else "")
        + f"{summary.total_mismatches} mismatches; {len(summary.problems)} problems"
        + (f" (matching: {summary.matching_label})" if summary.matching is not None else "")
    )


def _report_annotations(args: argparse.Namespace, demos: EpisodeSet, err: Console) -> AnnotationStore | None:
    """The annotations a report includes, read before the replay: an unreadable sidecar is a warning
    (the report is written without them), not an error after the whole run."""
    try:
        return AnnotationStore.load(args.annotations or default_annotations_path(demos))
    except AnnotationError as exc:
        print_warning(err, args.command, f"{exc}; the report is written without annotations")
        return None


def _write_report(
    args: argparse.Namespace, summary: SummaryReport, store: AnnotationStore | None, path: Path, fmt: str | None
) -> None:
    from replay_tui.export import ExportError, report_json, write_report

    if args.report_steps and fmt == "json":
        atomic_write_bytes(path, report_json(summary, include_steps=True))
        return
    try:
        write_report(path, summary, store, fmt)
    except ExportError as exc:
        raise UsageError(str(exc)) from None


def run_replay(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``replay`` and ``export``: check the flags, replay, save the run, write the report, print."""
    # the engines are imported here, not with the parser: the app (the default command) needs none of them
    from replay_tui.repeat_report import RepeatReport

    exporting = args.command == "export"
    report_path, report_format = _report_target(args, exporting)
    demos = _load(args)
    sidecar = Path(args.annotations) if args.annotations else default_annotations_path(demos)
    check_outputs(
        [("--out" if exporting else "--report", report_path), ("--record", getattr(args, "record", None))],
        protected_paths(args, [source.path for source in demos.files], sidecar),
    )
    steps_only = args.report_steps and report_format == "json"  # a --report-steps JSON has no annotations
    store = _report_annotations(args, demos, err) if report_path is not None and not steps_only else None
    session_ids = _selected_sessions(args, demos)
    executor = _checked_run_flags(args, demos, report_path, report_format)
    events = _ReplayEvents(err)
    session = _session(args, demos, session_ids, executor, events)
    for problem in demos.problems:
        _print_problem(err, problem)
    summary = _run_session(args, session, events, err)
    if not isinstance(summary, RepeatReport) and not exporting:
        _refuse_nothing_judged(summary, demos)
    stats = _stats_line(session)
    if stats and not args.quiet:
        err.print(Text(stats), soft_wrap=True)
    if isinstance(summary, RepeatReport):
        return _finish_repeat(args, summary, report_path, out, exporting)

    if not args.no_save_run:
        _save_run(args, session.settings, demos, summary, session_ids, err)
    if report_path is not None:
        _write_report(args, summary, store, report_path, report_format)
    if not args.quiet:
        _print_summary(out, summary, args.show)
    out.print(Text(_verdict(summary), style="bold"), soft_wrap=True)
    if report_path is not None and not args.quiet:
        out.print(Text(f"report written to {report_path}"))
    return EXIT_OK if exporting else _replay_exit(args, summary)


def _report_target(args: argparse.Namespace, exporting: bool) -> tuple[Path | None, str | None]:
    """Where the report goes and in which format (``export --out``/``--format``, ``replay --report``);
    a path whose format cannot be told is a usage error."""
    from replay_tui.export import ExportError, format_for_path

    report_path = Path(args.out) if exporting else (Path(args.report) if args.report else None)
    report_format = args.format if exporting else None
    if report_path is not None and report_format is None:
        try:
            report_format = format_for_path(report_path)
        except ExportError as exc:
            raise UsageError(str(exc)) from None
    return report_path, report_format


def _selected_sessions(args: argparse.Namespace, demos: EpisodeSet) -> list[int] | None:
    """The ``--sessions`` to replay (None: all); an id no file has is a usage error unless its episode is
    a known bad one (reported as a problem, not as a typo)."""
    if not args.sessions:
        return None
    session_ids = _select_sessions(args.sessions, demos)
    missing = [sid for sid in session_ids if sid not in demos]
    bad = {p.session_id for p in demos.problems}
    if missing and all(sid not in bad for sid in missing):
        raise UsageError(f"--sessions: no episode with session_id {', '.join(map(str, missing[:10]))}")
    return [sid for sid in session_ids if sid in demos]


def _checked_run_flags(
    args: argparse.Namespace, demos: EpisodeSet, report_path: Path | None, report_format: str | None
) -> RayExecutor | None:
    """The flags that cannot go together, as usage errors before anything runs; the executor asked for."""
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    if args.repeat > 1 and report_path is not None and report_format != "json":
        raise UsageError("--repeat writes JSON reports only (use a .json path)")
    executor = ray_executor(args)
    if executor is not None and args.repeat > 1:
        raise UsageError("--repeat runs with --executor local")
    if executor is not None and args.record:
        raise UsageError("--record writes one cassette: it runs with --executor local")
    _check_llm_flags(args)
    _check_webshop_only(args, demos)
    return executor


class _ReplayEvents:
    """The session's events as the CLI shows them: problems found while replaying on stderr, finished
    episodes on the progress bar once there is one."""

    def __init__(self, err: Console) -> None:
        self.err = err
        self.progress: Progress | None = None
        self.task: Any = None

    def __call__(self, event: SessionEvent) -> None:
        from replay_tui.session import EpisodeDone, ProblemFound

        if isinstance(event, ProblemFound):  # found while replaying (a malformed episode, an invalid field)
            _print_problem(self.err, event.problem)
        elif isinstance(event, EpisodeDone) and self.progress is not None:
            self.progress.advance(self.task)


def _run_session(
    args: argparse.Namespace, session: ReplaySession, events: _ReplayEvents, err: Console
) -> SummaryReport | RepeatReport:
    """Replay (``--repeat`` times), with a progress bar on a terminal for a long run; an endpoint no request
    reached is an infrastructure failure (exit 3), not 0 % accuracy."""
    from replay_tui.session import SessionError

    def run() -> SummaryReport | RepeatReport:
        return session.run_repeats(args.repeat) if args.repeat > 1 else session.run()

    show_progress = not (args.no_progress or args.quiet) and err.is_terminal and session.count >= PROGRESS_MIN_EPISODES
    try:
        if show_progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            events.progress = Progress(
                TextColumn("replaying"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            events.task = events.progress.add_task("replay", total=session.count)
            with events.progress:
                summary = run()
        else:
            summary = run()
    except SessionError as exc:
        raise UsageError(str(exc)) from None
    if session.unreachable is not None:
        raise EndpointError(session.unreachable.message())
    return summary


def _refuse_nothing_judged(summary: SummaryReport, demos: EpisodeSet) -> None:
    """Never "0.0 %" of nothing: episodes replayed with no decision among them is a usage error."""
    if not (summary.episodes_run and not summary.total_steps):
        return
    names = [Path(source.name).name for source in demos.files]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise UsageError(
        f"{shown}: nothing judged: the {summary.episodes_run} episodes replayed record no decision "
        "(a tool call, an env action or a plain answer) to compare"
    )


def _print_summary(out: Console, summary: SummaryReport, show: int) -> None:
    """The summary table, the failures by kind, the first mismatches and their groups, the headline."""
    from replay_tui.export import headline
    from replay_tui.groups import group_mismatches

    out.print(_summary_table(summary))
    if summary.failures_by_kind:
        out.print(Text("failures: " + ", ".join(f"{kind} {n}" for kind, n in summary.failures_by_kind.items())))
    if summary.total_mismatches and show > 0:
        out.print(_mismatch_table(summary.episodes, show))
        if summary.total_mismatches > show:
            out.print(f"… {summary.total_mismatches - show} more mismatches (see --report)")
        groups = group_mismatches(summary)
        out.print(_groups_table(groups, show))
        if len(groups) > show:
            more = len(groups) - show
            out.print(f"… {more} more mismatch {'group' if more == 1 else 'groups'} (see --report)")
    out.print(Text(strip_control(headline(summary))), soft_wrap=True)  # agreement · outcome


def _replay_exit(args: argparse.Namespace, summary: SummaryReport) -> int:
    """0 all judged steps agree, 1 a mismatch (or a problem under ``--strict``), 2 nothing replayable."""
    if not summary.episodes_run and summary.problems:
        raise UsageError(f"no episode could be replayed: {len(summary.problems)} problems (listed above)")
    if summary.total_mismatches:
        return EXIT_MISMATCH
    if args.strict and summary.problems:
        return EXIT_MISMATCH
    return EXIT_OK


def _save_run(
    args: argparse.Namespace,
    settings: ReplaySettings,
    demos: EpisodeSet,
    summary: SummaryReport,
    session_ids: list[int] | None,
    err: Console,
) -> None:
    """Save the run (with its step results) to the runs folder of the demo files; a run that cannot be
    saved is a warning, never a failed replay."""
    try:
        store = RunStore(runs_root(args.runs_dir))
        info = make_run_info(
            settings,
            [demo.path for demo in demos.files],
            sessions="all" if session_ids is None else session_ids,
            complete=not summary.cancelled,
        )
        store.save(summary, info)
    except (OSError, RunError) as exc:
        err.print(Text(f"warning: run not saved: {exc}", style="yellow"), soft_wrap=True)
        return
    if not args.quiet:
        err.print(Text(f"run saved: {info.id}"), soft_wrap=True)


def run_runs(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``runs``: the saved runs of the given demo files, or of every folder under the runs root."""
    store = RunStore(runs_root(args.runs_dir))
    if args.demos:
        from replay_tui.sources import _expand  # the files a replay of these specs opens

        paths: list[Path] = []
        for spec in args.demos:
            paths.extend(p for p in _expand(spec) if p not in paths)  # DemoFileError: exit 2
        folders = [store.for_demos(paths)]
    else:
        folders = store.folders()
    shown = 0
    for folder in folders:
        entries = store.list(folder)
        if not entries:
            continue
        shown += len(entries)
        out.print(_runs_table(folder, entries))
    if not shown:
        what = f"of {', '.join(args.demos)} " if args.demos else ""
        out.print(Text(f"no runs {what}in {store.root}"))
    return EXIT_OK


def _runs_table(folder: Path, entries: list[RunEntry]) -> Table:
    files = next((e.info.demo_files for e in entries if e.info is not None and e.info.demo_files), [])
    title = ", ".join(f.name for f in files) or folder.name
    table = Table(title=Text(f"{title}  ({folder})"), show_header=True, header_style="bold")
    for name in ("date", "name", "policy", "model", "accuracy", "steps", "complete"):
        table.add_column(
            name,
            justify="right" if name in ("accuracy", "steps") else "left",
            no_wrap=name in ("date", "accuracy", "steps", "complete"),
            overflow="fold",
        )
    for entry in entries:
        if entry.broken:
            table.add_row(entry.date, Text(f"{entry.path.name}: {entry.error}", style="red"), "", "", "", "", "broken")
            continue
        table.add_row(
            entry.date,
            Text(strip_control(entry.name)),
            Text(strip_control(entry.policy)),
            Text(strip_control(entry.model or "")),
            "" if entry.accuracy is None else f"{entry.accuracy:.1%}",
            "" if entry.steps is None else str(entry.steps),
            "yes" if entry.complete else "cancelled",
        )
    return table


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
    from replay_tui.export import outcome_phrase

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
            f"agree between runs; {overall.consistent_steps}/{overall.steps} steps consistent · "
            f"{outcome_phrase(report)}",
            style="bold",
        ),
        soft_wrap=True,
    )
    if report_path is not None and not args.quiet:
        out.print(Text(f"report written to {report_path}"))
    if exporting:
        return EXIT_OK
    return EXIT_OK if report.all_matched else EXIT_MISMATCH


BYTES_PER_MB = 1_000_000  # generate --target-mb: megabytes as in "MB", not mebibytes


def run_generate(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``generate``: a synthetic demo file (unset flags take the bundled example's values), or the bundled one."""
    from replay_tui.formats.webshop_demos import synth

    if args.bundled:
        given = [
            flag
            for flag, value in (
                ("--start", args.start),
                ("--count", args.count),
                ("--seed", args.seed),
                ("--quirk-rate", args.quirk_rate),
                ("--target-mb", args.target_mb),
            )
            if value is not None
        ]
        if args.indent:
            given.append("--indent")
        if given:
            raise UsageError(f"--bundled writes the bundled example as it is: drop {', '.join(given)}")
        stats = synth.write_bundled_example(args.out)
    else:
        start = 0 if args.start is None else args.start
        count = 100 if args.count is None else args.count
        if args.target_mb is not None and args.target_mb <= 0:
            raise UsageError("--target-mb must be positive")
        if count < 1 and args.target_mb is None:
            raise UsageError("--count must be at least 1")
        path = Path(args.out) if args.out else Path(synth.default_filename(start, count))
        if path.is_dir():
            path = path / synth.default_filename(start, count)
        refuse_overwriting(path, args.force)
        stats = synth.write_demo_file(
            path,
            start=start,
            count=count,
            seed=synth.BUNDLED_SEED if args.seed is None else args.seed,
            quirk_rate=synth.BUNDLED_QUIRK_RATE if args.quirk_rate is None else args.quirk_rate,
            target_bytes=round(args.target_mb * BYTES_PER_MB) if args.target_mb is not None else None,
            indent=args.indent,
        )
    out.print(Text(f"wrote {stats.episodes} episodes ({stats.bytes:,} bytes) to {stats.path}"))
    return EXIT_OK


COMMANDS = (
    "replay",
    "generate",
    "tui",
    "export",
    "verify",
    "visual",
    "inspect",
    "formats",
    "convert",
    "compare",
    "runs",
    "batch",
    "serve",
    "mcp",
)


def run_tui(args: argparse.Namespace, out: Console, err: Console) -> int:
    # The launch (Textual's import, the logs' index) allocates what the app keeps for its life and
    # frees almost nothing: a full collection in the middle of it walked every module's objects
    # (20-45 ms of a long trajectory's first step) and the young ones were walked again and again.
    # Kept from the collector as the app keeps what it holds (its mount freezes the heap too).
    with gc_paused(tenure=False):
        app = tui_app(args)
        gc.freeze()  # before the collector is back: its first pass would walk all of it
    prepare_graphics(args)
    app.run()
    return EXIT_OK


def tui_app(args: argparse.Namespace) -> ReplayApp:
    """The app the ``tui`` flags ask for, every flag checked (a :class:`UsageError` otherwise); ``serve``
    builds one too, to refuse bad flags before it listens."""
    from replay_tui.config import ConfigError
    from replay_tui.tui.app import VisualBatch, make_app

    _check_llm_flags(args)
    settings = _replay_settings(args)
    if args.visual_pred_dir and not args.visual_ref_dir:
        raise UsageError("--visual-pred-dir needs --visual-ref-dir")
    ref_dir = Path(args.visual_ref_dir) if args.visual_ref_dir else None
    pred_dirs = tuple(Path(d) for d in args.visual_pred_dir)
    if ref_dir is not None and not pred_dirs:
        raise UsageError("--visual-ref-dir needs at least one --visual-pred-dir")
    for folder in (ref_dir, *pred_dirs):
        if folder is not None:
            folder_arg(folder)
    files = _spec_files(args.demos or [str(example_path())])
    sidecar = None if args.annotations else annotations_path_for(files[0] if files else None)
    check_outputs(
        [("--annotations", args.annotations), ("--record", getattr(args, "record", None))],
        protected_paths(args, files, sidecar),
    )
    if args.out_dir is not None:
        try:
            Path(args.out_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--out-dir {args.out_dir}: cannot make it: {exc.strerror or exc}") from None
    try:
        app = make_app(
            args.demos or None,
            annotations=args.annotations,
            config=args.config,
            settings=settings,
            visual=VisualBatch(ref_dir, pred_dirs),
            require_readable=True,
            fmt=args.log_format,
            allow_pickle=args.allow_pickle,
            runs_dir=runs_root(args.runs_dir),
            save_runs=not args.no_save_run,
            follow=args.follow,
            out_dir=args.out_dir,
        )
    except (DemoFileError, AnnotationError, ConfigError, FormatError) as exc:
        raise UsageError(str(exc)) from None
    return app


def _spec_files(specs: Sequence[str]) -> list[Path]:
    """The files a replay of these specs (files, folders, globs) opens; a spec that matches nothing
    is left to the loader to report."""
    from replay_tui.sources import _expand

    found: list[Path] = []
    for spec in specs:
        try:
            found.extend(path for path in _expand(spec) if path not in found)
        except DemoFileError:
            continue
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """The full parser's entry (:func:`replay_tui.cli.entry.main` sends every command here but those
    that parse alone); returns the process exit code.

    With no command, the arguments are demo files for the debugger: ``replay-tui FILE...``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["tui", *argv]
    return run_parsed(build_parser(), argv)


def replay_main(argv: Sequence[str] | None = None) -> int:
    """``python -m replay_tui.replay`` (the seed's form): the replay command's flags."""
    return main(["replay", *(sys.argv[1:] if argv is None else argv)])
