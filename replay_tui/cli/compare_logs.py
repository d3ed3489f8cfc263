"""``replay-tui compare LOG_A LOG_B``: two agents' own runs of the same tasks, paired by task.

Reached from ``compare`` when its arguments are logs (of any format, not replay reports): episodes
are paired by task key (:mod:`replay_tui.pairing`), the keys only one log has are named, and the
outcomes and aligned trajectories are compared (:mod:`replay_tui.compare.logs`). Refused (exit
2) only when no task key is in both logs. With three or more logs the first is the baseline: each
later log is compared with it as two logs are, and a combined table gives every run's success on
the tasks all of them share; a later log that pairs with nothing is left out with a warning.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from replay_tui.cli.common import UsageError, output_arg, print_warning
from replay_tui.cli.compare_output import COMMAND, finish, print_regressions
from replay_tui.compare import OutcomeComparison, RunsComparison, TaskPair, compare_many, compare_outcomes, run_label
from replay_tui.episodes.problems import DemoFileError
from replay_tui.fileio import expand_home
from replay_tui.pairing import PairingError, load_pair, load_pairs
from replay_tui.sanitize import one_line
from replay_tui.sources import expand_logs

UNPAIRED_SHOWN = 5


def run_logs(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Compare two logs, or each later log with the first; exit 1 with ``--fail-on-regression N`` when
    more than N tasks regressed (against A, in any later log)."""
    if len(args.runs) > 2 and args.tui:
        raise UsageError("--tui opens two logs; with more, compare prints each one against the first")
    specs = [str(expand_home(spec)) for spec in args.runs]
    output_arg(args.report, "--report", [path for spec in specs for path in _files(spec)])
    if len(specs) > 2:
        return _run_many(args, specs, out, err)
    try:
        pairing = load_pair(specs, fmt=args.log_format, key=args.key)
    except PairingError as exc:
        raise UsageError(one_line(str(exc))) from None
    for log in (pairing.a, pairing.b):
        for problem in log.problems:
            print_warning(err, COMMAND, str(problem))
    comparison = compare_outcomes(pairing, resamples=args.resamples, seed=args.seed)
    return finish(args, comparison, out, err, lambda: _print(out, comparison, args.show))


def _run_many(args: argparse.Namespace, specs: list[str], out: Console, err: Console) -> int:
    """Three or more logs: each later log against the first (the baseline), and the combined table."""
    try:
        positions, left_out = load_pairs(specs, fmt=args.log_format, key=args.key)
    except PairingError as exc:
        raise UsageError(one_line(str(exc))) from None
    pairings = [pairing for _, pairing in positions]
    seen: set[int] = set()
    for log in (log for pairing in pairings for log in (pairing.a, pairing.b)):
        if id(log) not in seen:
            seen.add(id(log))
            for problem in log.problems:
                print_warning(err, COMMAND, str(problem))
    labels = [run_label(0)] + [run_label(position) for position, _ in positions]
    runs = compare_many(pairings, labels, resamples=args.resamples, seed=args.seed)

    def printed() -> None:
        for label, comparison in zip(labels[1:], runs.comparisons, strict=True):
            _print(out, comparison, args.show, (labels[0], label))
        _print_runs(out, runs)

    return finish(args, runs, out, err, printed, warnings=[*left_out, *runs.warnings])


def _print_runs(out: Console, runs: RunsComparison) -> None:
    table = Table(title=f"{len(runs.labels)} runs against {runs.labels[0]}", header_style="bold")
    for column in ("", "log", f"paired with {runs.labels[0]}", f"success on {len(runs.common)} common tasks"):
        table.add_column(column, overflow="fold")
    for column in ("regressed", "fixed", "McNemar p"):
        table.add_column(column, justify="right")
    for row in runs.runs():
        rate = row["success_on_common"]
        versus = row["paired_with_baseline"] is not None
        table.add_row(
            row["label"],
            Text(one_line(row["log"])),
            str(row["paired_with_baseline"]) if versus else "—",
            f"{rate['successes']}/{rate['n']} {rate['rate']:.1%} [{rate['low']:.1%}, {rate['high']:.1%}]",
            str(row["regressions"]) if versus else "—",
            str(row["fixes"]) if versus else "—",
            f"{row['mcnemar_p']:.3g}" if versus else "—",
        )
    out.print(table)


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


def _print(out: Console, comparison: OutcomeComparison, show: int, labels: tuple[str, str] = ("A", "B")) -> None:
    x, y = labels
    summary = comparison.summary()
    table = Table(title=f"{x} → {y}, paired by task", header_style="bold")
    for column in ("", x, y, f"{y} − {x}"):
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
    out.print(
        Text(f"{x}: {one_line(comparison.a_path)}  {y}: {one_line(comparison.b_path)}", style="dim"), soft_wrap=True
    )
    for label, keys in ((x, comparison.a_only), (y, comparison.b_only)):
        if keys:
            out.print(Text(_unpaired(label, keys)), soft_wrap=True)

    def row(task: TaskPair) -> list[Text]:
        where = task.divergence.text() if task.divergence else "same calls"
        return [Text(one_line(task.key)[:120]), Text(one_line(where)[:400])]

    columns = [Column("task", max_width=40, overflow="fold"), Column("first divergence", overflow="fold")]
    print_regressions(out, comparison, show, f"Regressions ({x} ✓, {y} ✗)", columns, row)
