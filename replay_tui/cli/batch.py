"""``replay-tui batch export`` and ``replay-tui batch import``: an LLM replay through a batch API
(OpenAI Batch, ``vllm run-batch``) instead of live requests; the engine is :mod:`replay_tui.batch`.

The replay flags (``--demos``, ``--sessions``, ``--model``, ``--base-url``...) and how they are read
come from :mod:`replay_tui.cli.commands`, which hands them in (``register``), so the two commands read
them exactly as ``replay`` does.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from replay_tui.cli.common import EXIT_MISMATCH, EXIT_OK, UsageError, check_outputs, protected_paths
from replay_tui.episodes.collection import EpisodeSet
from replay_tui.sanitize import strip_control
from replay_tui.workspace import default_annotations_path

ReplayInputs = Callable[[argparse.Namespace], tuple[EpisodeSet, list[int] | None, dict[str, object]]]
"""The demos, the sessions and the LLM settings a replay's flags ask for (checked as ``replay`` checks them)."""

ERRORS_SHOWN = 20


def register(
    subparsers: Any, add_replay_arguments: Callable[[argparse.ArgumentParser], None], replay_inputs: ReplayInputs
) -> None:
    """Add ``batch export`` and ``batch import`` to the CLI's subparsers."""
    batch = subparsers.add_parser(
        "batch",
        help="LLM replays through a batch API: export the requests, import the answers",
        description="Batch inference for --mode llm: `batch export` writes every request of a replay as an "
        "OpenAI Batch JSONL file (nothing is sent); run it through the OpenAI Batch API or `vllm run-batch`; "
        "`batch import` loads the results into the response cache, and the same replay then runs on cache hits.",
    )
    commands = batch.add_subparsers(dest="batch_command", metavar="SUBCOMMAND", required=True)
    export = commands.add_parser(
        "export",
        help="write a replay's requests as OpenAI Batch JSONL (no network)",
        description="Write every request the replay would send (each recorded step, each --repeat sample; each "
        "distinct request once) as OpenAI Batch JSONL, keyed by the response cache key of --base-url.",
    )
    add_replay_arguments(export)
    export.set_defaults(mode="llm")
    export.add_argument("--out", metavar="REQUESTS.jsonl", required=True, help="where to write the requests")
    export.add_argument(
        "--missing",
        action="store_true",
        help="only the requests the response cache (--cache-dir) cannot answer yet: what to send again "
        "after a batch that failed some",
    )
    export.set_defaults(func=lambda args, out, err: run_export(args, out, err, replay_inputs))
    load = commands.add_parser(
        "import",
        help="load OpenAI Batch / vllm run-batch results into the response cache",
        description="Store each answer of a batch output file in the response cache; a line that is not an "
        "answer (bad JSON, an error, a non-200 status) is reported by its number and skipped, the others are "
        "stored. Exit 0 when every line was imported, 1 when some were not.",
    )
    load.add_argument("results", metavar="RESULTS.jsonl", help="the batch output file")
    load.add_argument(
        "--cache-dir",
        metavar="PATH",
        help="response cache directory (default $REPLAY_TUI_CACHE_DIR, else ~/.cache/replay-tui/llm)",
    )
    load.set_defaults(func=run_import)


def run_export(args: argparse.Namespace, out: Console, err: Console, replay_inputs: ReplayInputs) -> int:
    from replay_tui.batch import export_requests  # the LLM policy and openai: only when asked for
    from replay_tui.policies.llm import LlmConfigError, LlmSettings
    from replay_tui.policies.llm_cache import CacheError

    if args.policy or args.mode != "llm":
        raise UsageError("batch export is for --mode llm (the requests an OpenAI-compatible model is sent)")
    for flag, given in (("--report", args.report), ("--record", args.record), ("--replay", args.replay)):
        if given:
            raise UsageError(f"{flag} is not used by batch export (it writes requests, not a run)")
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    if args.missing and args.no_cache:
        raise UsageError("--missing reads the response cache; it cannot go with --no-cache")
    demos, session_ids, llm = replay_inputs(args)
    sidecar = Path(args.annotations) if args.annotations else default_annotations_path(demos)
    check_outputs([("--out", args.out)], protected_paths(args, [source.path for source in demos.files], sidecar))
    try:
        settings = LlmSettings.from_dict(llm)
        counts = export_requests(
            settings,
            demos,
            session_ids,
            args.out,
            include_item_steps=args.item_steps,
            samples=args.repeat,
            missing_only=args.missing,
        )
    except (LlmConfigError, CacheError) as exc:
        raise UsageError(str(exc)) from None
    for problem in counts.problems:
        err.print(Text(f"problem: {strip_control(problem.one_line())}", style="yellow"), soft_wrap=True)
    if not args.quiet:
        shared = counts.asked - counts.requests - counts.cached
        note = f" ({shared} asked again share one)" if shared else ""
        if args.missing:
            note += f"; {counts.cached} already in the cache left out"
        out.print(
            Text(
                f"{counts.requests} requests of {counts.episodes} episodes{note} written to {args.out}, "
                f"keyed for {counts.endpoint}"
            ),
            soft_wrap=True,
        )
    return EXIT_OK


def run_import(args: argparse.Namespace, out: Console, err: Console) -> int:
    from replay_tui.batch import import_results
    from replay_tui.policies.llm_cache import CacheError, ResponseCache

    path = Path(args.results)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        cache = ResponseCache(args.cache_dir)
    except CacheError as exc:
        raise UsageError(str(exc)) from None
    report = import_results(path, cache)
    for number, reason in report.errors[:ERRORS_SHOWN]:
        err.print(Text(f"{path.name} line {number}: {strip_control(reason)}", style="yellow"), soft_wrap=True)
    if len(report.errors) > ERRORS_SHOWN:
        err.print(Text(f"… {len(report.errors) - ERRORS_SHOWN} more lines with errors"))
    if cache.write_error:
        raise UsageError(f"cannot write the response cache: {cache.write_error}")
    skipped = f"; {len(report.errors)} of {report.lines} lines not imported" if report.errors else ""
    out.print(Text(f"{report.imported} answers imported into {cache.path}{skipped}"), soft_wrap=True)
    return EXIT_MISMATCH if report.errors else EXIT_OK
