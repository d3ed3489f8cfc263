"""What every ``replay-tui compare`` does once its comparison is made (of replay runs, their agreement,
or logs paired by task): its warnings, the app with ``--tui``, its tables, the headline, ``--report``
and the exit code (``cli/compare.py`` and ``cli/compare_logs.py`` both end here)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from replay_tui.cli.common import EXIT_MISMATCH, EXIT_OK, UsageError, print_warning

if TYPE_CHECKING:  # the engines are imported when the command runs, not when the full parser is built
    from replay_tui.compare import Agreement, Comparison, OutcomeComparison, PairedComparison, RunsComparison
    from replay_tui.compare.model import P

COMMAND = "compare"


def finish(
    args: argparse.Namespace,
    report: Comparison | OutcomeComparison | RunsComparison,
    out: Console,
    err: Console,
    printed: Callable[[], None],
    *,
    warnings: list[str] | None = None,
) -> int:
    """What every comparison (of replay runs, or of logs paired by task) does once made: its warnings
    (``warnings``, else the comparison's), the app with ``--tui``, its tables (``printed``) unless
    ``-q``, the headline, ``--report``, and exit 1 with ``--fail-on-regression N`` when more than N
    regressed (steps or tasks; against A in any later log)."""
    for warning in report.warnings if warnings is None else warnings:
        print_warning(err, COMMAND, warning)
    if args.tui:
        from replay_tui.compare import RunsComparison
        from replay_tui.tui.compare.app import CompareApp

        if isinstance(report, RunsComparison):
            raise UsageError("--tui opens two runs or two logs")
        CompareApp(report).theme_from_config().run()
    if not args.quiet:
        printed()
    out.print(Text(report.headline(), style="bold"), soft_wrap=True)
    write_report(args, report, out)
    if args.fail_on_regression is not None and report.regression_count > args.fail_on_regression:
        return EXIT_MISMATCH
    return EXIT_OK


def write_report(
    args: argparse.Namespace, report: Comparison | Agreement | OutcomeComparison | RunsComparison, out: Console
) -> None:
    """``--report``: the comparison written in the format its suffix names (one line on a bad path)."""
    if not args.report:
        return
    from replay_tui.export import ExportError
    from replay_tui.export.comparison import write_comparison

    try:
        written = write_comparison(args.report, report, title=args.title)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    if not args.quiet:
        out.print(Text(f"report written to {written}"), soft_wrap=True)


def print_regressions(
    out: Console,
    comparison: PairedComparison[P],
    show: int,
    title: str,
    columns: Sequence[Column],
    row: Callable[[P], Sequence[Text]],
) -> None:
    """The first ``show`` regressions of any comparison as a table (``row`` gives a pair's cells), and how
    many more the report has."""
    regressions = comparison.regressions
    if not regressions or show <= 0:
        return
    table = Table(*columns, title=title, header_style="bold")
    for pair in regressions[:show]:
        table.add_row(*row(pair))
    out.print(table)
    if len(regressions) > show:
        out.print(Text(f"… {len(regressions) - show} more regressions (see --report)"))
