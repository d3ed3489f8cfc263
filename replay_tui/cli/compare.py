"""``replay-tui compare``: two runs of the same recorded inputs, step by step, with intervals and a test.

``replay-tui compare RUN_A RUN_B`` aligns the runs by episode and step, lists the steps that
regressed (✓ in A, ✗ in B), were fixed, or stayed wrong with another prediction, and prints the
accuracies of A and B with Wilson 95 % intervals, B − A with a paired (episode-clustered) bootstrap
interval and the exact McNemar p of the discordant steps, overall, per state and on episodes. With
three or more runs it prints their agreement matrix instead.

``replay-tui compare LOG_A LOG_B [LOG_C…]`` on logs of agents' own runs (any format, not replay
reports) pairs them by task instead (:mod:`replay_tui.cli.compare_logs`).

A RUN is a report file (a saved run, or a ``replay --report X.json --report-steps`` report, or a
``--repeat`` report, which counts as one run per repetition) or the name of a run in the history.

Exit codes: 0, or 1 with ``--fail-on-regression N`` when more than N steps regressed; 2 on a usage
error, an unreadable run, or runs over different recorded inputs (one line saying why).
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from replay_tui.cli.common import (
    EXIT_OK,
    UsageError,
    cell,
    output_arg,
    print_warning,
)
from replay_tui.cli.compare_output import COMMAND, finish, print_regressions, write_report
from replay_tui.fileio import expand_home, read_capped
from replay_tui.gcpause import gc_paused
from replay_tui.sanitize import strip_control

if TYPE_CHECKING:  # the engines are imported when the command runs, not when the full parser is built
    from replay_tui.compare import Agreement, Comparison, LoadedRun, StepPair
    from replay_tui.stats import PairedStats, Rate


def register(subparsers: Any) -> None:
    """Add the ``compare`` command to the CLI's subparsers."""
    parser = subparsers.add_parser(
        COMMAND,
        help="compare runs of the same recorded inputs: flips, intervals, McNemar",
        description="Compare run B with run A (the baseline) step by step: regressed (✓→✗), fixed (✗→✓) and "
        "both-wrong-but-different steps and episodes; accuracy of A and B with Wilson 95%% intervals, B − A "
        "with a paired bootstrap interval (clustered by episode), the exact McNemar test; overall, per state "
        "and on episodes. Three or more runs: their agreement matrix. A RUN is a report file (a saved run, "
        "a --report-steps JSON report or a --repeat report) or a name from the run history. Exit 0; 1 with "
        "--fail-on-regression N when more than N steps regressed; 2 when the runs cannot be compared. "
        "Two LOGS of agents' own runs (any format, not replay reports) are paired by task instead (tau2 task#trial, "
        "inspect sample#epoch, instance id, or --key): success with Wilson intervals, McNemar, a task-clustered "
        "bootstrap, pass^k, each task's first divergent call and which run hit which reference action; three or "
        "more LOGS: each later one against the first, and every run's success on the tasks all share.",
    )
    parser.add_argument(
        "runs", nargs="+", metavar="RUN", help="run A (the baseline), run B, and any more runs; or LOG_A LOG_B [LOG_C…]"
    )
    parser.add_argument(
        "--report",
        metavar="OUT.EXT",
        help="write the comparison; the format follows the suffix: .json .md .csv .html .xml (JUnit)",
    )
    parser.add_argument("--title", metavar="TEXT", help="the report's title (default: Compare runs)")
    parser.add_argument(
        "--fail-on-regression",
        type=int,
        metavar="N",
        help="exit 1 when more than N steps regressed (0: any regression fails)",
    )
    parser.add_argument(
        "--show", type=int, default=20, metavar="N", help="regressions to list on the terminal (default 20, 0 for none)"
    )
    parser.add_argument(
        "--resamples", type=int, default=10_000, metavar="N", help="bootstrap resamples (default 10000)"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="bootstrap seed (default 0)")
    parser.add_argument(
        "--runs-dir",
        metavar="DIR",
        help="where run names are looked up (default: $REPLAY_TUI_RUNS_DIR, else ~/.local/share/replay-tui/runs)",
    )
    parser.add_argument(
        "--key",
        metavar="FIELD[+FIELD]",
        help="two logs: pair episodes by these fields (dotted paths from id, task, metadata, extra, outcome; "
        "e.g. metadata.task_id+metadata.trial) instead of each format's task id",
    )
    parser.add_argument("--format", dest="log_format", metavar="NAME", help="two logs: read both as this format")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the one-line verdict")
    parser.add_argument(
        "--tui",
        action="store_true",
        help="open the comparison in the debugger (two logs: tasks, then the two trajectories aligned side by side)",
    )
    parser.set_defaults(func=run)


# --------------------------------------------------------------------------- loading runs


def load_run(spec: str, runs_dir: str | None = None) -> list[LoadedRun]:
    """The one place a RUN argument becomes runs: a report file (a ``--repeat`` report gives one run per
    repetition), else a name in the run history (:mod:`replay_tui.runs`, when it is installed)."""
    from replay_tui.compare import CompareError, is_repeat_report, load_run_data, repeat_runs
    from replay_tui.runs import MAX_RUN_BYTES

    path = expand_home(spec)
    if path.is_file():
        try:
            data = orjson.loads(read_capped(path, MAX_RUN_BYTES))
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"{spec}: not JSON ({exc.msg} at line {exc.lineno})") from None
        try:
            return repeat_runs(data, spec) if is_repeat_report(data) else [load_run_data(data, spec)]
        except CompareError as exc:
            raise UsageError(str(exc)) from None
    if path.exists():
        raise UsageError(f"{spec}: not a file")
    from replay_tui.runs import RunError, RunStore, runs_root

    try:
        found = RunStore(runs_root(runs_dir)).find(spec)
    except RunError as exc:
        raise UsageError(strip_control(str(exc))) from None
    return load_run(str(found))


def _runs_or_none(args: argparse.Namespace) -> list[LoadedRun] | None:
    return runs_or_none(args.runs, args.runs_dir, args.log_format)


def runs_or_none(specs: list[str], runs_dir: str | None, fmt: str | None) -> list[LoadedRun] | None:
    """The runs ``specs`` name; None when every one is a log of an agent's own run instead (a file or
    folder that is not a replay report), which ``compare`` pairs by task (the CLI and the MCP server
    decide alike). UsageError names the first spec that is neither."""
    loaded: list[LoadedRun] = []
    first_error: UsageError | None = None
    for spec in specs:
        try:
            loaded.extend(load_run(spec, runs_dir))
        except UsageError as exc:
            if not expand_home(spec).exists() and not glob.has_magic(spec):
                raise (first_error or exc) from None
            first_error = first_error or exc
    if first_error is None:
        return loaded
    if loaded or not all_logs(specs, fmt):
        raise first_error
    return None


def all_logs(specs: list[str], fmt: str | None) -> bool:
    """Every spec names log files (a file, a folder, a glob) the first of which a reader takes (or
    ``--format`` names the reader)."""
    from replay_tui.episodes.problems import DemoFileError
    from replay_tui.formats.registry import FormatError, detect
    from replay_tui.sources import expand_logs

    for spec in specs:
        try:
            first = expand_logs(expand_home(spec))[0]
            if not fmt:
                detect(first)
        except (FormatError, DemoFileError, OSError):
            return False
    return True


# --------------------------------------------------------------------------- the command


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.show < 0:
        raise UsageError("--show must be 0 or more")
    if args.fail_on_regression is not None and args.fail_on_regression < 0:
        raise UsageError("--fail-on-regression must be 0 or more")
    if args.resamples < 100:
        raise UsageError("--resamples must be at least 100")
    from replay_tui.export import ExportError, format_for_path

    report_format = None
    if args.report:
        try:
            report_format = format_for_path(args.report)
        except ExportError as exc:
            raise UsageError(str(exc)) from None
    # reading two big reports and pairing their steps makes millions of objects and no cycles: the
    # cycle collector's passes over them were a third of the command's time (replay_tui.gcpause)
    with gc_paused():
        return _compare(args, out, err, report_format)


def _compare(args: argparse.Namespace, out: Console, err: Console, report_format: str | None) -> int:
    from replay_tui.compare import CompareError, agreement_matrix, compare_runs, run_info, run_label

    runs = _runs_or_none(args)
    if runs is None:
        from replay_tui.cli.compare_logs import run_logs

        return run_logs(args, out, err)
    if args.key or args.log_format:
        raise UsageError("--key and --format pair two logs; runs are compared by episode and step")
    if len(runs) < 2:
        raise UsageError("give at least two runs (RUN_A RUN_B), or a --repeat report of two or more runs")
    output_arg(args.report, "--report", [loaded.source for loaded in runs if loaded.source])
    infos = [
        run_info(loaded.run, loaded.info, label=run_label(index), source=loaded.source)
        for index, loaded in enumerate(runs)
    ]
    if len(runs) > 2:
        if args.tui:
            raise UsageError("--tui opens two runs; with more, compare prints their agreement")
        if args.fail_on_regression is not None:
            raise UsageError("--fail-on-regression compares two runs; with more, compare shows their agreement")
        if report_format == "junit":
            raise UsageError("an agreement of several runs is written as .json, .md, .csv or .html")
        try:
            agreement = agreement_matrix([loaded.run for loaded in runs], infos)
        except CompareError as exc:
            raise UsageError(str(exc)) from None
        for warning in agreement.warnings:
            print_warning(err, COMMAND, warning)
        _print_agreement(out, agreement, quiet=args.quiet)
        write_report(args, agreement, out)
        return EXIT_OK
    try:
        comparison = compare_runs(
            runs[0].run,
            runs[1].run,
            a_info=infos[0],
            b_info=infos[1],
            resamples=args.resamples,
            seed=args.seed,
        )
    except CompareError as exc:
        raise UsageError(str(exc)) from None
    return finish(args, comparison, out, err, lambda: _print_comparison(out, comparison, args.show))


def _rate(rate: Rate) -> str:
    return f"{rate.rate:.1%} [{rate.low:.1%}, {rate.high:.1%}]"


def _difference(stats: PairedStats) -> Text:
    from replay_tui.compare import signed_pp

    text = f"{signed_pp(stats.difference)} [{signed_pp(stats.low)}, {signed_pp(stats.high)}]"
    style = "red" if stats.high < 0 else ("green" if stats.low > 0 else "")
    return Text(text, style=style)


def _stats_row(name: str, stats: PairedStats) -> list[Text | str]:
    return [
        Text(name),
        str(stats.n),
        _rate(stats.a),
        _rate(stats.b),
        _difference(stats),
        Text(str(stats.a_only), style="bold red" if stats.a_only else ""),
        Text(str(stats.b_only), style="bold green" if stats.b_only else ""),
        f"{stats.mcnemar_p:.3g}",
    ]


def _stats_table(title: str, first: str) -> Table:
    table = Table(title=title, header_style="bold")
    table.add_column(first)
    for column in ("n", "A", "B", "B − A (95% CI)", "✓→✗", "✗→✓", "McNemar p"):
        table.add_column(column, justify="right")
    return table


def _print_comparison(out: Console, comparison: Comparison, show: int) -> None:
    runs = Table(title="Runs", header_style="bold")
    for column in ("", "run", "policy", "matching", "mismatch", "episodes", "steps", "demo files"):
        runs.add_column(column, justify="right" if column in ("episodes", "steps") else "left")
    for info in (comparison.a, comparison.b):
        files = ", ".join(Path(f.name).name for f in info.demo_files[:3]) + ("…" if len(info.demo_files) > 3 else "")
        runs.add_row(
            info.label,
            Text(strip_control(info.name)),
            Text(strip_control(info.mode)),
            Text(strip_control(info.matching)),
            info.mismatch_policy,
            str(info.episodes),
            str(info.steps),
            Text(strip_control(files) + ("" if info.hashes_known else " (hashes unknown)")),
        )
    out.print(runs)
    summary = _stats_table("A → B", "")
    summary.add_row(*_stats_row("steps", comparison.overall))
    if comparison.accepted.a.right != comparison.overall.a.right or (
        comparison.accepted.b.right != comparison.overall.b.right
    ):
        summary.add_row(*_stats_row("steps, ≈ accepted", comparison.accepted))
    summary.add_row(*_stats_row("episodes fully matched", comparison.episodes_stats))
    out.print(summary)
    if comparison.by_state:
        states = _stats_table("Per state", "state")
        for state, stats in comparison.by_state.items():
            states.add_row(*_stats_row(strip_control(state), stats))
        out.print(states)
    out.print(Text(comparison.note, style="dim"), soft_wrap=True)
    flips = comparison.flips
    episode_flips = comparison.episode_flips
    out.print(
        Text(
            f"steps: {flips['regressed']} regressed ✓→✗, {flips['fixed']} fixed ✗→✓, "
            f"{flips['both_wrong_different']} both wrong with different predictions, "
            f"{flips['both_wrong_same']} both wrong alike, {flips['both_right']} both right; "
            f"episodes: {episode_flips['regressed']} regressed, {episode_flips['fixed']} fixed"
        ),
        soft_wrap=True,
    )

    def row(step: StepPair) -> list[Text]:
        predicted = step.predicted_b if not step.error_b else f"error: {step.error_b}"
        return [
            Text(strip_control(step.episode)),
            Text(strip_control(step.step_label)),
            Text(strip_control(step.state)),
            cell(step.expected),
            cell(predicted),
        ]

    columns = [Column(name, no_wrap=True) for name in ("episode", "step", "state")]
    columns += [
        Column("expected (= A)", style="green", overflow="fold"),
        Column("B predicted", style="red", overflow="fold"),
    ]
    print_regressions(out, comparison, show, "Regressions", columns, row)


def _print_agreement(out: Console, agreement: Agreement, *, quiet: bool) -> None:
    if not quiet:
        runs = Table(title="Runs", header_style="bold")
        for column in ("", "run", "policy", "steps", "accuracy on common steps"):
            runs.add_column(column, justify="right" if column in ("steps",) else "left")
        for info, rate in zip(agreement.runs, agreement.accuracy, strict=True):
            runs.add_row(
                info.label, Text(strip_control(info.name)), Text(strip_control(info.mode)), str(info.steps), _rate(rate)
            )
        out.print(runs)
        matrix = Table(title="Agreement (same verdict and prediction; steps compared)", header_style="bold")
        matrix.add_column("")
        for info in agreement.runs:
            matrix.add_column(info.label, justify="right")
        for i, info in enumerate(agreement.runs):
            matrix.add_row(
                info.label,
                *(f"{agreement.matrix[i][j]:.1%} ({agreement.pair_steps[i][j]})" for j in range(len(agreement.runs))),
            )
        out.print(matrix)
    out.print(
        Text(
            f"{len(agreement.runs)} runs: {agreement.all_agree} of {agreement.common_steps} common steps agree in "
            f"every run; {agreement.all_right} right in all, {agreement.all_wrong} wrong in all",
            style="bold",
        ),
        soft_wrap=True,
    )
