"""``replay-tui compare LOG_A LOG_B``: two agents' own runs of the same tasks, paired by task.

Reached from ``compare`` when its arguments are logs (of any format, not replay reports): episodes
are paired by task key (:mod:`replay_tui.pairing`), the keys only one log has are named, and the
outcomes and aligned trajectories are compared (:mod:`replay_tui.outcome_compare`). Refused (exit
2) only when no task key is in both logs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay_tui.cli.common import EXIT_MISMATCH, EXIT_OK, UsageError, output_arg, print_warning
from replay_tui.demos.problems import DemoFileError
from replay_tui.export import ExportError
from replay_tui.export.outcomes import check_format, write
from replay_tui.fileio import expand_home
from replay_tui.outcome_compare import OutcomeComparison, compare_outcomes
from replay_tui.pairing import PairingError, load_pair
from replay_tui.sanitize import one_line
from replay_tui.sources import expand_logs

COMMAND = "compare"
UNPAIRED_SHOWN = 5


def run_logs(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Compare two logs; exit 1 with ``--fail-on-regression N`` when more than N tasks regressed."""
    if len(args.runs) != 2:
        raise UsageError("give two logs to pair by task (LOG_A LOG_B); more than two are compared as runs only")
    if args.report:
        try:
            check_format(args.report)
        except ExportError as exc:
            raise UsageError(str(exc)) from None
    specs = [str(expand_home(spec)) for spec in args.runs]
    output_arg(args.report, "--report", [path for spec in specs for path in _files(spec)])
    try:
        pairing = load_pair(specs, fmt=args.log_format, key=args.key)
    except PairingError as exc:
        raise UsageError(one_line(str(exc))) from None
    for log in (pairing.a, pairing.b):
        for problem in log.problems:
            print_warning(err, COMMAND, str(problem))
    comparison = compare_outcomes(pairing, resamples=args.resamples, seed=args.seed)
    for warning in comparison.warnings:
        print_warning(err, COMMAND, warning)
    if args.tui:
        open_app(comparison)
    if not args.quiet:
        _print(out, comparison, args.show)
    out.print(Text(comparison.headline(), style="bold"), soft_wrap=True)
    if args.report:
        try:
            written = write(args.report, comparison, title=args.title)
        except ExportError as exc:
            raise UsageError(str(exc)) from None
        if not args.quiet:
            out.print(Text(f"report written to {written}"), soft_wrap=True)
    if args.fail_on_regression is not None and comparison.counts["regressed"] > args.fail_on_regression:
        return EXIT_MISMATCH
    return EXIT_OK


def open_app(comparison: Any) -> None:
    """Run the compare app on ``comparison`` (two logs, or two replay runs) until the user quits."""
    from replay_tui.tui.compare_app import CompareApp

    CompareApp(comparison).theme_from_config().run()


def _files(spec: str) -> list[Path]:
    """The log files a spec names (none when it names none: reading it says so)."""
    try:
        return expand_logs(spec)
    except DemoFileError:
        return []


def _unpaired(label: str, keys: list[str]) -> str:
    shown = ", ".join(one_line(key)[:60] for key in keys[:UNPAIRED_SHOWN])
    more = f" … {len(keys) - UNPAIRED_SHOWN} more" if len(keys) > UNPAIRED_SHOWN else ""
    return f"{len(keys)} task key(s) only in {label}: {shown}{more}"


def _print(out: Console, comparison: OutcomeComparison, show: int) -> None:
    summary = comparison.summary()
    table = Table(title="A → B, paired by task", header_style="bold")
    for column in ("", "A", "B", "B − A"):
        table.add_column(column, justify="right")
    a, b, diff = summary["a_success"], summary["b_success"], summary["difference"]
    table.add_row(
        "success",
        f"{a['successes']}/{a['n']} {a['rate']:.1%} [{a['low']:.1%}, {a['high']:.1%}]",
        f"{b['successes']}/{b['n']} {b['rate']:.1%} [{b['low']:.1%}, {b['high']:.1%}]",
        f"{diff['b_minus_a'] * 100:+.1f} pp [{diff['low'] * 100:+.1f}, {diff['high'] * 100:+.1f}]",
    )
    for p in comparison.pass_k:
        table.add_row(f"pass^{p.k} ({p.tasks} tasks)", f"{p.a:.3f}", f"{p.b:.3f}", f"{p.difference:+.3f}")
    out.print(table)
    out.print(Text(f"A: {one_line(comparison.a_path)}  B: {one_line(comparison.b_path)}", style="dim"), soft_wrap=True)
    for label, keys in (("A", comparison.a_only), ("B", comparison.b_only)):
        if keys:
            out.print(Text(_unpaired(label, keys)), soft_wrap=True)
    regressions = comparison.regressions
    if regressions and show > 0:
        listed = Table(title="Regressions (A ✓, B ✗)", header_style="bold")
        listed.add_column("task", max_width=40, overflow="fold")
        listed.add_column("first divergence", overflow="fold")
        for task in regressions[:show]:
            where = task.divergence.text() if task.divergence else "same calls"
            listed.add_row(Text(one_line(task.key)[:120]), Text(one_line(where)[:400]))
        out.print(listed)
        if len(regressions) > show:
            out.print(Text(f"… {len(regressions) - show} more regressions (see --report)"))
