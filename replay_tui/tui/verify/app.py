"""The verify browser: tasks and answers with their verdicts and named assertions.

``replay-tui verify --tasks T.json --answers A.jsonl --tui`` opens it on the same report the
headless command prints, built by the same core (:mod:`replay_tui.verify`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Static

from replay_tui.sanitize import one_line, strip_control
from replay_tui.tui.app_base import ToolApp, stylesheets
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import Column, LazyTable
from replay_tui.tui.widgets.text_pane import PaneLine, TextPane, lines_from_text
from replay_tui.verify.models import Report, Task, TaskResult
from replay_tui.verify.network import NETWORK_EVALUATOR

STATUS_STYLES = {"success": "green", "failure": "bold red", "error": "bold yellow", "unverified": "yellow"}
COLUMNS = (
    Column("line", "line", 5, justify="right"),
    Column("task", "task", 5, justify="right"),
    Column("status", "status", 10),
    Column("assertions", "fails", 5, justify="right"),
    Column("network", "network", 7),
    Column("sites", "sites", 16),
    Column("types", "data types", 16),
    Column("intent", "intent", flex=True),
)


class ResultsSource:
    columns: Sequence[Column] = COLUMNS

    def __init__(self, report: Report, tasks: dict[int, Task], failures_only: bool = False):
        self.tasks = tasks
        self.rows = [r for r in report.results if not failures_only or r.status != "success"]

    def __len__(self) -> int:
        return len(self.rows)

    def row_style(self, index: int) -> str:
        return "" if self.rows[index].status == "success" else "red"

    def cells(self, index: int) -> Sequence[Text]:
        result = self.rows[index]
        task = self.tasks.get(result.task_id)
        count = len(result.assertions)
        return [
            Text(str(result.line or "")),
            Text(one_line(str(result.task_id))),
            Text(result.status, style=STATUS_STYLES.get(result.status, "")),
            Text(str(count) if count else ""),
            network_cell(result),
            Text(",".join(result.sites)),
            Text(",".join(result.data_types), style="cyan"),
            Text(one_line(task.intent if task else result.error_msg or "")),
        ]


def network_cell(result: TaskResult) -> Text:
    """The network checks of one answer: ``2/2`` passed, ``0/1`` (red), ``skipped`` without a trace."""
    checks = [r for r in result.evaluators_results if r.evaluator_name == NETWORK_EVALUATOR]
    if not checks:
        return Text("skipped", style="yellow") if NETWORK_EVALUATOR in result.skipped_evaluators else Text("")
    passed = sum(r.status == "success" for r in checks)
    return Text(f"{passed}/{len(checks)}", style="green" if passed == len(checks) else "bold red")


def _show(value: Any) -> str:
    return strip_control(json.dumps(value, ensure_ascii=False, default=str, sort_keys=True))


def detail_lines(result: TaskResult, task: Task | None) -> list[PaneLine]:
    """The verdict of one answer: intent, each evaluator's assertions with path, expected and actual
    (for a network check: the offending request and the field that differs)."""
    lines = [
        PaneLine(
            f"task {result.task_id} · {result.status} · score {result.score:.0f}",
            STATUS_STYLES.get(result.status, "bold"),
        )
    ]
    if task is not None:
        lines += lines_from_text(task.intent, "italic")
    if result.error_msg:
        lines.append(PaneLine(f"error: {strip_control(result.error_msg)}", "bold yellow"))
    # failing checks first, so a failed network check is not below a passing answer's dumps
    for evaluator in sorted(result.evaluators_results, key=lambda r: r.status == "success"):
        lines.append(PaneLine(""))
        lines.append(PaneLine(f"── {evaluator.evaluator_name}: {evaluator.status} ──", "bold"))
        if evaluator.error_msg:
            lines.append(PaneLine(f"error: {strip_control(evaluator.error_msg)}", "yellow"))
        for assertion in evaluator.assertions:
            request = request_of(assertion.actual)
            if request is None:
                lines.append(PaneLine(f"✗ {assertion.name}  at {assertion.path}", "bold red"))
                if assertion.message:
                    lines += lines_from_text("  " + assertion.message)
                lines.append(PaneLine(f"  expected  {_show(assertion.expected)}", "green"))
                lines.append(PaneLine(f"  actual    {_show(assertion.actual)}", "red"))
                continue
            # a network assertion: the offending request, the field that differs, then both values
            lines.append(PaneLine(f"✗ {assertion.name}", "bold red"))
            lines.append(PaneLine(f"  request   {request}", "bold magenta"))
            field = assertion.path.removeprefix("network_event").lstrip(".")
            if field:
                lines.append(PaneLine(f"  field     {strip_control(field)}", "bold"))
            elif assertion.message:
                lines += lines_from_text("  " + assertion.message)
            lines.append(PaneLine(f"  expected  {_show(assertion.expected)}", "green"))
            if isinstance(assertion.actual, dict) and "value" in assertion.actual:
                lines.append(PaneLine(f"  actual    {_show(assertion.actual['value'])}", "red"))
        lines.append(PaneLine("expected (normalised)", "dim"))
        lines += lines_from_text(_show(evaluator.expected))
        lines.append(PaneLine("actual (normalised)", "dim"))
        lines += lines_from_text(
            _show(evaluator.actual_normalized if evaluator.actual_normalized is not None else evaluator.actual)
        )
    if result.skipped_evaluators:
        lines.append(PaneLine(""))
        lines.append(
            PaneLine("skipped (answer-only, no trace): " + ", ".join(result.skipped_evaluators), "bold yellow")
        )
    return lines


def request_of(actual: Any) -> str | None:
    """``"POST http://host/path -> 201"`` when a network assertion's actual side names a request."""
    if isinstance(actual, dict) and isinstance(actual.get("request"), dict):
        actual = actual["request"]
    if isinstance(actual, dict) and {"method", "url", "status"} <= set(actual):
        return strip_control(f"#{actual.get('index', '?')} {actual['method']} {actual['url']} -> {actual['status']}")
    return None


class VerifyScreen(Screen):
    """One row per answer line; the selected answer's assertions beside the table."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "toggle_failures", "Failures", id="verify.failures"),
    ]

    def __init__(self, report: Report, tasks: dict[int, Task]):
        super().__init__(id="verify")
        self.report = report
        self.tasks = tasks
        self.failures_only = False

    def compose(self) -> ComposeResult:
        yield Static(id="verify-title")
        with Horizontal(id="verify-body"):
            yield LazyTable(id="results")
            yield TextPane("assertions", id="assertion-detail")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.reload()
        self.query_one("#results", LazyTable).focus()

    def reload(self) -> None:
        self.source = ResultsSource(self.report, self.tasks, self.failures_only)
        self.query_one("#results", LazyTable).set_source(self.source, cursor=0)
        overall = self.report.summary.overall
        title = Text("replay-tui verify  ", style="bold")
        title.append(f"{overall.total} answers: ")
        title.append(f"{overall.success} success ", style="green")
        title.append(f"{overall.failure} failure ", style="bold red" if overall.failure else "dim")
        title.append(f"{overall.error} error", style="bold yellow" if overall.error else "dim")
        if overall.unverified:  # a check could not run (no trace): never counted as success
            title.append(f" {overall.unverified} unverified", style="yellow")
        if self.report.rules != "strict":
            title.append(f"  rules: {one_line(str(self.report.rules))}", style="cyan")
        if self.failures_only:
            title.append("  showing failures and errors", style="cyan")
        self.query_one("#verify-title", Static).update(title)
        self.show_current()

    @on(LazyTable.Highlighted, "#results")
    def show_current(self) -> None:
        pane = self.query_one("#assertion-detail", TextPane)
        if not len(self.source):
            pane.set_text(None, placeholder="no answers to show")
            return
        result = self.source.rows[self.query_one("#results", LazyTable).cursor]
        pane.set_lines(detail_lines(result, self.tasks.get(result.task_id)))

    def action_toggle_failures(self) -> None:
        self.failures_only = not self.failures_only
        self.reload()


class VerifyApp(ToolApp):
    """``replay-tui verify --tui``: one screen, so ``esc`` only closes dialogs and ``q`` quits."""

    TITLE = "replay-tui verify"
    CSS_PATH = stylesheets("verify.tcss")

    def __init__(self, report: Report, tasks: dict[int, Task]):
        super().__init__()
        self.report = report
        self.tasks = tasks

    def on_mount(self) -> None:
        self.push_screen(VerifyScreen(self.report, self.tasks))
