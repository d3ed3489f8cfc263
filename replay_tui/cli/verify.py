"""``replay-tui verify``: check agent answers against WebArena-Verified tasks, deterministically.

    replay-tui verify --tasks TASKS.json --answers ANSWERS.jsonl [--report out.json] [--rules upstream]
                      [--trace DIR|FILE]

Each answers line is ``{"task_id": N, "response": <object or raw text>}``. Exit codes: 0 when every
answer succeeds, 1 when any fails, errors (an unknown task id, a task whose expected answer cannot
be normalised) or is unverified (a network check without a trace), 2 on bad input (an unreadable or
malformed file, a bad flag value).

``--rules strict`` (the default) keeps replay_tui's corrections; ``--rules upstream`` gives the
official evaluator's verdicts (README: "Differences from the official evaluator"). The summary and
the report say which rules were used.

``--trace`` runs the tasks' network checks on the requests the agent's browser made: a HAR file (or
upstream's trace format) for every answer, or a directory holding one per task id (``<id>.har``,
``<id>/network.har``, ...). Without a trace, network checks are skipped: under ``strict`` a task whose
answer passes is ``unverified`` (counted apart, never success); under ``upstream`` it is an error, as
the official evaluator has it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from replay_tui.cli.common import (
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    cell,
    output_arg,
    print_error,
)
from replay_tui.episodes.jsonscan import first_too_deep, literal
from replay_tui.fileio import atomic_write_bytes
from replay_tui.sanitize import strip_control
from replay_tui.verify.rules import RULES

if TYPE_CHECKING:  # the evaluator is imported when the command runs, not when the full parser is built
    from replay_tui.verify.models import Counts, Report
    from replay_tui.verify.network import Event

EXIT_FAILED = EXIT_MISMATCH  # an answer failed or errored
MAX_LISTED = 25


class InputError(UsageError, ValueError):
    """Bad input for ``verify``: printed as one line, exit code 2."""


def register(subparsers: Any) -> None:
    """Add the ``verify`` sub-command to an argparse ``subparsers`` object."""
    parser = subparsers.add_parser(
        "verify",
        help="check agent answers against WebArena-Verified tasks (typed exact matching)",
        description=(
            "Check agent answers against the expected answers of WebArena-Verified tasks with "
            "deterministic, data-type-aware exact matching. Exit 0 when every answer succeeds, "
            "1 otherwise, 2 on bad input."
        ),
    )
    parser.add_argument("--tasks", required=True, metavar="TASKS.json", help="tasks file (e.g. webarena-verified.json)")
    parser.add_argument(
        "--answers",
        required=True,
        metavar="ANSWERS.jsonl",
        help='one answer per line: {"task_id": N, "response": <object or raw text>}',
    )
    parser.add_argument("--report", metavar="OUT.json", help="write the full report as JSON (sorted keys)")
    parser.add_argument(
        "--site-url",
        action="append",
        default=[],
        metavar="SITE=URL",
        help="base URL a site was served from (e.g. gitlab=http://localhost:8023), to read URLs in answers "
        "as __SITE__ placeholders; repeatable",
    )
    parser.add_argument(
        "--rules",
        choices=RULES,
        default="strict",
        help="strict (default): replay_tui's corrections (no credit for an agent's regex or hedged "
        "alternatives, optimal list matching, ...); upstream: the official evaluator's verdicts, quirks included",
    )
    parser.add_argument(
        "--trace",
        metavar="DIR|FILE",
        help="network trace(s) for the tasks' network checks: a HAR file (or upstream's Playwright trace) "
        "used for every answer, or a directory with one per task id (<id>.har, <id>/network.har, <id>.zip); "
        "without it those checks cannot run (strict: a passing answer is unverified; upstream: an error)",
    )
    parser.add_argument("--tui", action="store_true", help="browse the verdicts and assertions in the debugger")
    parser.set_defaults(func=run)


def read_answers(path: str | Path) -> list[tuple[int, int, Any]]:
    """Read an answers JSONL file into ``(line number, task_id, response)`` triples."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    answers: list[tuple[int, int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        item = json_value(line, f"{path}:{number}")
        if not isinstance(item, dict):
            raise InputError(f"{path}:{number}: expected an object with task_id and response")
        task_id = item.get("task_id")
        if isinstance(task_id, str) and task_id.strip().isdigit() and len(task_id) < 20:
            task_id = int(task_id)
        if isinstance(task_id, bool) or not isinstance(task_id, int) or abs(task_id) >= 2**63:
            raise InputError(f"{path}:{number}: task_id must be an integer, got {literal(json.dumps(task_id))}")
        if "response" not in item:
            raise InputError(f"{path}:{number}: no 'response' key")
        answers.append((number, task_id, item["response"]))
    if not answers:
        raise InputError(f"{path}: no answers")
    return answers


ANSWER_DEPTH = 64
"""Answers nest a few levels (a list of objects of lists); deeper is an attack on the evaluator."""


def json_value(text: str, where: str) -> Any:
    """One JSON value of untrusted text, or an :class:`InputError` naming ``where`` and the reason:
    never a traceback (nesting is measured without recursion first; out-of-range numbers, NaN and
    infinities are refused)."""
    deep = first_too_deep(text.encode("utf-8", "surrogatepass"), ANSWER_DEPTH)
    if deep is not None:
        raise InputError(f"{where}: nested more than {ANSWER_DEPTH} levels deep (at byte {deep})")

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a number JSON allows")

    try:
        return json.loads(text, parse_constant=constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        reason = str(exc).split(";")[0].splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{where}: not usable JSON: {reason}") from None


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {literal(text)} is out of range")
    return value


def parse_site_urls(values: list[str]) -> dict[str, list[str]]:
    """``["gitlab=http://host:8023", ...]`` -> ``{"gitlab": ["http://host:8023"], ...}``."""
    urls: dict[str, list[str]] = {}
    for value in values or []:
        site, sep, url = value.partition("=")
        if not sep or not site.strip() or not url.strip():
            raise InputError(f"--site-url expects SITE=URL, got {value!r}")
        urls.setdefault(site.strip().strip("_").lower(), []).append(url.strip())
    return urls


def trace_source(where: str | None) -> Any:
    """``--trace``: None (no traces), a file for every answer, or a directory looked up by task id.

    Traces are read once each; an unreadable one is a :class:`TraceError` (exit 2).
    """
    from replay_tui.verify.network import TraceError, find_trace, load_trace

    if not where:
        return None
    path = Path(where)
    if not path.exists():
        raise TraceError(f"--trace {where}: no such file or directory")
    if path.is_file() or (path.is_dir() and (path / "trace.network").is_file()):
        events = load_trace(path)
        return lambda task_id: events
    cache: dict[int, list[Event] | None] = {}

    def lookup(task_id: int) -> list[Event] | None:
        if task_id not in cache:
            found = find_trace(path, task_id)
            cache[task_id] = load_trace(found) if found is not None else None
        return cache[task_id]

    return lookup


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Run ``verify``; print a summary to ``out``, one-line errors to ``err``; return the exit code."""
    from replay_tui.verify.evaluate import evaluate_many
    from replay_tui.verify.models import TaskFileError, load_tasks
    from replay_tui.verify.network import TraceError

    try:
        site_urls = parse_site_urls(getattr(args, "site_url", []))
        tasks = load_tasks(args.tasks)
        answers = read_answers(args.answers)
    except (InputError, TaskFileError) as exc:
        print_error(err, "verify", str(exc))
        return EXIT_USAGE
    if args.report:
        try:
            output_arg(args.report, "--report", [p for p in (args.tasks, args.answers) if p])
        except UsageError as exc:
            print_error(err, "verify", str(exc))
            return EXIT_USAGE
    try:
        traces = trace_source(getattr(args, "trace", None))
        report = evaluate_many(
            tasks, answers, site_urls=site_urls, rules=getattr(args, "rules", "strict"), traces=traces
        )
    except TraceError as exc:
        print_error(err, "verify", str(exc))
        return EXIT_USAGE
    if args.report:
        try:
            atomic_write_bytes(args.report, report.to_json_bytes())
        except OSError as exc:
            print_error(err, "verify", f"cannot write report {args.report}: {exc.strerror or exc}")
            return EXIT_USAGE
    if getattr(args, "tui", False):
        from replay_tui.tui.verify.app import VerifyApp

        VerifyApp(report, tasks).theme_from_config().run()
    out.print(render_summary(report, tasks_total=len(tasks)))
    if args.report:
        out.print(Text(f"report written to {args.report}"))
    return EXIT_OK if report.summary.overall.success == report.summary.overall.total else EXIT_FAILED


def _counts_table(title: str, label: str, groups: dict[str, Counts]) -> Table:
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    table.add_column(label)
    for name in ("total", "success", "failure", "error", "unverified"):
        table.add_column(name, justify="right")
    for key in sorted(groups):
        c = groups[key]
        table.add_row(
            Text(strip_control(key)),
            Text(str(c.total)),
            Text(str(c.success), style="green" if c.success else ""),
            Text(str(c.failure), style="red" if c.failure else ""),
            Text(str(c.error), style="yellow" if c.error else ""),
            Text(str(c.unverified), style="yellow" if c.unverified else ""),
        )
    return table


def render_summary(report: Report, tasks_total: int | None = None) -> RenderableType:
    """A readable summary of a report: totals, per site, per data type, and the failing lines."""
    overall = report.summary.overall
    head = Text()
    head.append(f"verified {overall.total} answer(s)")
    if tasks_total is not None:
        head.append(f" against {tasks_total} task(s)")
    head.append(": ")
    head.append(f"{overall.success} success", style="green")
    head.append(", ")
    head.append(f"{overall.failure} failure", style="red" if overall.failure else "")
    head.append(", ")
    head.append(f"{overall.error} error", style="yellow" if overall.error else "")
    head.append(", ")
    head.append(f"{overall.unverified} unverified", style="yellow" if overall.unverified else "")
    head.append(f" (rules: {report.rules})")
    parts: list[RenderableType] = [head]
    if report.summary.answer_only:
        parts.append(
            Text(
                f"answer-only: {report.summary.skipped_checks} network check(s) skipped (no trace; see --trace): "
                "an answer that passes leaves its task unverified, never success",
                style="yellow",
            )
        )
    parts += [
        Text(""),
        _counts_table("per site", "site", report.summary.per_site),
        Text(""),
        _counts_table("per data type", "data type", report.summary.per_data_type),
    ]
    bad = [r for r in report.results if r.status != "success"]
    if bad:
        table = Table(title="not successful", title_justify="left", show_edge=False, pad_edge=False)
        for column in ("line", "task", "status", "assertion", "detail"):
            table.add_column(column, overflow="fold")
        for result in bad[:MAX_LISTED]:
            summaries = ("array_values_mismatch", "missing_navigation_event")  # details say more
            specific = [a for a in result.assertions if a.kind != "array_values_mismatch" and a.name not in summaries]
            candidates = specific or result.assertions
            first = candidates[0] if candidates else None
            name = first.name if first else ""
            detail = first.message if first else (result.error_msg or "")
            if not first and result.status == "unverified":
                detail = f"not checked (no trace): {', '.join(result.skipped_evaluators)}"
            more = len(result.assertions) - 1
            if more > 0:
                detail += f" (+{more} more)"
            table.add_row(
                Text(str(result.line if result.line is not None else "")),
                Text(str(result.task_id)),
                Text(result.status, style="red" if result.status == "failure" else "yellow"),  # error, unverified
                Text(strip_control(name)),
                cell(" ".join(detail.split()), 200),
            )
        parts += [Text(""), table]
        if len(bad) > MAX_LISTED:
            parts.append(Text(f"... and {len(bad) - MAX_LISTED} more (see --report)"))
    return Group(*parts)
