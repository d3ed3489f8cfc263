"""The compare view of two agents' own runs of the same tasks (``replay-tui compare LOG_A LOG_B --tui``).

:class:`LogCompareScreen` lists the paired tasks (A ✓/✗, B ✓/✗ and the change: regressed −, fixed
+, both failed ✗ — ≠ when their calls differ —, both succeeded ·) under the figures the CLI prints
(success rates with Wilson intervals, B − A with its task-clustered bootstrap interval, McNemar's
p, pass^k); ``f`` cycles the filters (regressions, fixes, both failed differently), ``M`` groups the
regressions (by the tool at the first divergence, by the reference action B missed, by B's termination
reason), ``e`` exports.
``enter`` opens :class:`LogPairScreen`: the two trajectories side by side, aligned call by call,
the first divergence marked, which of the task's reference actions each run hit; ``]``/``[`` go
from divergence to divergence and each side's step (what the agent saw, thought, called and got
back) is shown below its column.

The screens only display an :class:`~replay_tui.compare.logs.OutcomeComparison` made by the core.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from replay_tui.compare import OutcomeComparison, TaskPair, TimelineRow
from replay_tui.episodes.model import Trajectory
from replay_tui.sanitize import excerpt, one_line, strip_control
from replay_tui.tui.compare.screen import ComparisonScreen
from replay_tui.tui.compare.side_by_side import Position, SideBySideScreen, SideIds
from replay_tui.tui.widgets.lazy_table import Column, LazyTable
from replay_tui.tui.widgets.text_pane import PaneLine, TextPane, lines_from_text

FILTERS: dict[str, tuple[str, Callable[[TaskPair], bool]]] = {
    "all": ("all tasks", lambda task: True),
    "regressed": ("regressions (A ✓, B ✗)", lambda task: task.change == "regressed"),
    "fixed": ("fixes (A ✗, B ✓)", lambda task: task.change == "fixed"),
    "both_failed_differently": ("both failed, differently", lambda task: task.differs_when_both_failed),
}
FILTER_CYCLE = ("all", "regressed", "fixed", "both_failed_differently")
CHANGE_MARKS: dict[str, tuple[str, str]] = {
    "regressed": ("− regressed", "bold red"),
    "fixed": ("+ fixed", "bold green"),
    "both_failed": ("✗ both failed", "red"),
    "both_succeeded": ("· both ok", "dim"),
    "unknown": ("? unknown", "yellow"),
}
ROW_MARKS: dict[str, tuple[str, str]] = {
    "same": ("=", "dim"),
    "arguments": ("≠", "bold yellow"),
    "tool": ("✗", "bold red"),
    "a_only": ("A", "bold magenta"),
    "b_only": ("B", "bold cyan"),
}
ROW_WORDS = {
    "same": "the same call",
    "arguments": "the same tool, other arguments",
    "tool": "another tool",
    "a_only": "a call of A only",
    "b_only": "a call of B only",
}
MESSAGE_MARKS: dict[str, tuple[str, str]] = {
    "same": ("·", "dim"),
    "text": ("~", "italic"),
    "a_only": ("a", "magenta"),
    "b_only": ("b", "cyan"),
}
MESSAGE_WORDS = {
    "same": "the same words",
    "text": "other words",
    "a_only": "in A only",
    "b_only": "in B only",
}
STEP_TEXT_LIMIT = 4_000
"""Characters of an observation or a result shown in a side's pane (the end is cut, saying so)."""


def instruction(task: TaskPair) -> str:
    """What the task asked, from A's episode (else B's); the pairing's task id when neither says."""
    for trajectory in (task.a_trajectory, task.b_trajectory):
        if trajectory is not None and trajectory.task:
            return trajectory.task
    return task.task


def outcome_mark(success: bool | None, score: float | None) -> Text:
    """``✓ 1.0``, ``✗ 0.0`` or ``? –``: a run's outcome on one task."""
    mark, style = ("✓", "green") if success else (("✗", "bold red") if success is False else ("?", "yellow"))
    text = Text(mark, style=style)
    text.append(f" {score:g}" if score is not None else " –", style="")
    return text


class TasksSource:
    """The paired tasks of a comparison under a filter; cells made on demand."""

    columns: Sequence[Column] = (
        Column("key", "task key", 18, min_width=8),
        Column("task", "task", flex=True, min_width=12),
        Column("a", "A", 7),
        Column("b", "B", 7),
        Column("change", "change", 13),
        Column("divergence", "first divergence", 36, drop=1),
    )

    def __init__(self, comparison: OutcomeComparison, filter_name: str = "all", group: set[str] | None = None):
        keep = FILTERS[filter_name][1]
        self.rows = [task for task in comparison.tasks if keep(task) and (group is None or task.key in group)]

    def __len__(self) -> int:
        return len(self.rows)

    def row_style(self, index: int) -> str:
        return "dim" if self.rows[index].change == "both_succeeded" else ""

    def cells(self, index: int) -> Sequence[Text]:
        task = self.rows[index]
        word, style = CHANGE_MARKS[task.change]
        if task.change == "both_failed" and task.divergence is not None:
            word = "≠ both failed"
        found = task.divergence
        return [
            Text(one_line(task.key)),
            Text(one_line(instruction(task))),
            outcome_mark(task.a_success, task.a_score),
            outcome_mark(task.b_success, task.b_score),
            Text(word, style=style),
            Text(one_line(found.text()) if found else "same calls", style="" if found else "dim"),
        ]


class RegressionGroupsModal(ModalScreen[tuple[str, set[str]] | None]):
    """The regressions grouped by the tool at their first divergence, by the reference action B
    missed and by B's termination reason; enter shows a group's tasks in the list, escape closes."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Close", id="log_groups.close")]

    def __init__(self, comparison: OutcomeComparison):
        super().__init__()
        self.groups: list[tuple[str, set[str]]] = regression_groups(comparison)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Regressions in groups (A ✓, B ✗)", style="bold"))
            if self.groups:
                yield OptionList(
                    *(
                        Option(Text(f"{len(keys):>4}  {one_line(name)}"), id=str(i))
                        for i, (name, keys) in enumerate(self.groups)
                    ),
                    id="log-groups",
                )
            else:
                yield Label(Text("No task regressed.", style="green"))
            yield Label(Text("enter shows the group's tasks · esc closes", style="dim"))

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.groups[int(event.option.id or 0)])


def regression_groups(comparison: OutcomeComparison) -> list[tuple[str, set[str]]]:
    """``(name, task keys)`` of each group the core makes (:meth:`OutcomeComparison.grouped_regressions`):
    by the tool at the first divergence, by the first reference action A hit and B did not (tasks
    with a reference), then by B's termination reason; largest first within each."""
    ordered: list[tuple[str, set[str]]] = []
    for name, keys in comparison.grouped_regressions("tool").items():
        ordered.append((f"first divergence at {name}", set(keys)))
    for name, keys in comparison.grouped_regressions("reference").items():
        missed = "B hit every reference action A hit" if name == "(none)" else f"B missed reference action {name}"
        ordered.append((missed, set(keys)))
    for name, keys in comparison.grouped_regressions("status").items():
        ordered.append((f"B ended: {name}", set(keys)))
    return ordered


class LogCompareScreen(ComparisonScreen[OutcomeComparison, TaskPair]):
    """The tasks two logs share, their outcomes and changes; the figures above them."""

    DEFAULT_CSS = """
    LogCompareScreen #logcmp-title { height: auto; padding: 0 1; }
    LogCompareScreen #logcmp-stats { height: auto; padding: 0 1; border-bottom: hkey $panel; }
    LogCompareScreen #logcmp-tasks { height: 1fr; }
    LogCompareScreen #logcmp-status {
        height: auto; max-height: 3; padding: 0 1; background: $panel; color: $text-muted;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "cycle_filter", "Filter", id="log_compare.filter"),
        Binding("minus", "filter('regressed')", "Regressions", id="log_compare.regressions"),
        Binding("plus", "filter('fixed')", "Fixes", show=False, id="log_compare.fixes"),
        Binding("d", "filter('both_failed_differently')", "Both failed ≠", show=False, id="log_compare.both_failed"),
        Binding("right_square_bracket", "next_change(1)", "Next change", id="log_compare.next"),
        Binding("left_square_bracket", "next_change(-1)", "Prev change", show=False, id="log_compare.prev"),
        Binding("M", "groups", "Regression groups", id="log_compare.groups"),
        Binding("e", "export", "Export", id="log_compare.export"),
    ]

    PREFIX = "logcmp"
    TABLE_ID = "logcmp-tasks"
    NO_FURTHER = "no further task whose outcome changed"

    def __init__(self, comparison: OutcomeComparison, export_dir: Path | None = None, *, out_dir: Path | None = None):
        self.group: set[str] | None = None
        self.group_name = ""
        super().__init__(comparison, export_dir, out_dir=out_dir, id="log-compare")

    def make_source(self) -> TasksSource:
        return TasksSource(self.comparison, self.filter_name, self.group)

    def changed(self, row: TaskPair) -> bool:
        return row.change in ("regressed", "fixed")

    def update_title(self) -> None:
        c = self.comparison
        text = Text()
        text.append("compare ", style="bold")
        text.append("A ", style="bold")
        text.append(one_line(c.a_path), style="cyan")
        text.append("  →  ", style="dim")
        text.append("B ", style="bold")
        text.append(one_line(c.b_path), style="cyan")
        text.append("\n")
        counts = c.counts
        text.append(f"{len(c.tasks)} paired  ", style="bold")
        text.append(f"{counts['regressed']} regressed  ", style="bold red" if counts["regressed"] else "dim")
        text.append(f"{counts['fixed']} fixed  ", style="bold green" if counts["fixed"] else "dim")
        differently = sum(1 for task in c.tasks if task.differs_when_both_failed)
        text.append(f"{counts['both_failed']} both failed ({differently} differently)  ", style="red")
        text.append(f"{counts['both_succeeded']} both succeeded", style="dim")
        if counts["unknown"]:
            text.append(f"  {counts['unknown']} unknown", style="yellow")
        text.append(f"   showing {len(self.source)}", style="bold")
        if self.filter_name != "all":
            text.append(f"  filter: {FILTERS[self.filter_name][0]}", style="cyan")
        if self.group is not None:
            text.append(f"  group: {one_line(self.group_name)}", style="cyan")
        self.query_one("#logcmp-title", Static).update(text)
        status = Text()
        for label, keys in (("A", c.a_only), ("B", c.b_only)):
            if keys:
                shown = ", ".join(one_line(key)[:40] for key in keys[:3])
                more = f" … {len(keys) - 3} more" if len(keys) > 3 else ""
                status.append(f"{len(keys)} task key(s) only in {label}: {shown}{more}  ")
        if c.warnings:
            status.append("⚠ " + one_line(" · ".join(c.warnings)), style="yellow")
        self.query_one("#logcmp-status", Static).update(status or Text("every task key paired", style="dim"))

    def stats_text(self) -> Text:
        summary = self.comparison.summary()
        text = Text()
        for label, key in (("A", "a_success"), ("B", "b_success")):
            rate = summary[key]
            text.append(f"{label} ", style="bold")
            text.append(f"{rate['successes']}/{rate['n']} {rate['rate']:.1%} [{rate['low']:.1%}–{rate['high']:.1%}]  ")
        diff = summary["difference"]
        style = "bold red" if diff["high"] < 0 else ("bold green" if diff["low"] > 0 else "")
        text.append(
            f"B − A {diff['b_minus_a'] * 100:+.1f} pp [{diff['low'] * 100:+.1f}, {diff['high'] * 100:+.1f}]",
            style=style,
        )
        text.append(f" (bootstrap over {diff['clusters']} tasks)  McNemar p {summary['mcnemar_p']:.3g}", style="dim")
        for p in self.comparison.pass_k:
            text.append(f"\npass^{p.k} ({p.tasks} tasks)  A {p.a:.3f}  B {p.b:.3f}  B − A {p.difference:+.3f}")
        return text

    def current_task(self) -> TaskPair | None:
        return self.current_row()

    # -- actions ----------------------------------------------------------------------------
    def action_cycle_filter(self) -> None:
        self.filter_name = FILTER_CYCLE[(FILTER_CYCLE.index(self.filter_name) + 1) % len(FILTER_CYCLE)]
        self.reload(self.current_task())

    def action_groups(self) -> None:
        def apply(chosen: tuple[str, set[str]] | None) -> None:
            if chosen is None:
                return
            self.group_name, self.group = chosen
            self.filter_name = "all"
            self.reload(None)

        if self.group is not None:  # M again: the whole list back
            self.group = None
            self.reload(self.current_task())
            return
        self.app.push_screen(RegressionGroupsModal(self.comparison), apply)

    @on(LazyTable.Selected, "#logcmp-tasks")
    def _open(self, event: LazyTable.Selected) -> None:
        self.app.push_screen(LogPairScreen(self.source.rows[event.index]))


class AlignedRowsSource:
    """The aligned calls of one task: a mark, A's call and B's call per row."""

    columns: Sequence[Column] = (
        Column("row", "#", 4, justify="right"),
        Column("kind", "", 1),
        Column("a", "A's call", flex=True, min_width=12),
        Column("b", "B's call", flex=True, min_width=12),
    )

    def __init__(self, task: TaskPair, *, messages: bool = False):
        self.task = task
        self.messages = messages
        self.rows: list[TimelineRow] = (
            task.timeline
            if messages
            else [TimelineRow(row.kind, index, None, row.a, row.b) for index, row in enumerate(task.rows)]
        )
        """Rows shown: the calls (``call_row`` set), with both runs' messages between them when ``messages``."""

    def __len__(self) -> int:
        return len(self.rows)

    def position_of(self, call_row: int) -> int:
        """The shown row of the call alignment's row ``call_row``."""
        return next((i for i, row in enumerate(self.rows) if row.call_row == call_row), 0)

    def row_style(self, index: int) -> str:
        row = self.rows[index]
        if row.call_row is None:
            return "dim" if row.kind == "same" else ""
        divergence = self.task.divergence
        if divergence is not None and divergence.row == row.call_row:
            return "bold"
        return "dim" if row.kind == "same" else ""

    def cells(self, index: int) -> Sequence[Text]:
        row = self.rows[index]
        if row.call_row is None:
            a_said, b_said = self.task.conversations
            mark, style = MESSAGE_MARKS[row.kind]
            a = "" if row.a is None else excerpt(f"{row.role}: {a_said.said[row.a].text}", 500)
            b = "" if row.b is None else excerpt(f"{row.role}: {b_said.said[row.b].text}", 500)
            return [
                Text(""),
                Text(mark, style=style),
                Text(a, style="italic"),
                Text(b, style="italic"),
            ]
        mark, style = ROW_MARKS[row.kind]
        a = "" if row.a is None else self.task.a_calls[row.a].display()
        b = "" if row.b is None else self.task.b_calls[row.b].display()
        side_style = "" if row.kind == "same" else style
        return [
            Text(str(row.call_row + 1)),
            Text(mark, style=style),
            Text(one_line(a), style=side_style if row.a is not None else "dim"),
            Text(one_line(b), style=side_style if row.b is not None else "dim"),
        ]


def _cut(text: str, limit: int = STEP_TEXT_LIMIT) -> str:
    text = strip_control(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


def side_lines(trajectory: Trajectory | None, step_index: int | None, call_text: str | None) -> list[PaneLine]:
    """One side's step at an aligned row: the call, what the agent thought and saw, the result."""
    if call_text is None:
        return [PaneLine("no call on this side at this row", "dim italic")]
    lines = [PaneLine("call", "bold")]
    lines += lines_from_text(strip_control(call_text), "bold")
    if trajectory is None or step_index is None or not 0 <= step_index < len(trajectory.steps):
        return lines
    step = trajectory.steps[step_index]
    lines.insert(0, PaneLine(f"step {one_line(step.label)}", "dim"))
    for title, body, style in (
        ("thinking", step.thinking, "italic"),
        ("said", step.content, ""),
        ("result", step.tool_result or "", "green"),
        ("observation", step.observation, ""),
    ):
        if body:
            lines.append(PaneLine(""))
            lines.append(PaneLine(title, "bold"))
            lines += lines_from_text(_cut(body), style)
    return lines


class LogPairScreen(SideBySideScreen):
    """One task's two trajectories side by side, aligned call by call; each side's step in its pane."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right_square_bracket", "next_divergence(1)", "Next divergence", id="log_pair.next"),
        Binding("left_square_bracket", "next_divergence(-1)", "Prev divergence", id="log_pair.prev"),
        Binding("m", "toggle_messages", "Messages", id="log_pair.messages"),
        Binding("escape", "back", "Back", id="log_pair.back"),
    ]
    IDS = SideIds(title="pair-title", rows="pair-rows", where="pair-where", a="pair-a", b="pair-b")
    NO_DIVERGENCE = "the runs made the same calls"

    def __init__(self, pair: TaskPair):
        super().__init__(id="log-pair")
        self.pair = pair
        self.source = AlignedRowsSource(pair)

    def on_mount(self) -> None:
        pair = self.pair
        title = Text()
        title.append(one_line(pair.key), style="bold")
        word, style = CHANGE_MARKS[pair.change]
        title.append("  ").append(word, style=style)
        title.append("  A ").append_text(outcome_mark(pair.a_success, pair.a_score))
        if pair.a_status:
            title.append(f" ({one_line(pair.a_status)})", style="dim")
        title.append("  B ").append_text(outcome_mark(pair.b_success, pair.b_score))
        if pair.b_status:
            title.append(f" ({one_line(pair.b_status)})", style="dim")
        title.append("\n")
        title.append(one_line(instruction(pair))[:400], style="italic")
        title.append("\n")
        if pair.expected:
            (a_hit, total), (b_hit, _) = pair.expected_hit("a"), pair.expected_hit("b")
            title.append(f"reference actions hit: A {a_hit}/{total}  B {b_hit}/{total}", style="bold")
            by_one = [(e.name, e.change) for e in pair.expected if e.requestor != "user"]
            for label, change in (("A only", "lost"), ("B only", "gained")):
                names = [name for name, which in by_one if which == change]
                if names:
                    title.append(f"  {label}: ", style="dim").append(one_line(", ".join(names))[:200])
            title.append("\n")
        if pair.divergence is not None:
            title.append("first divergence: ", style="bold").append(one_line(pair.divergence.text()), style="yellow")
        else:
            title.append("the runs made the same calls", style="dim")
        self.query_one("#pair-title", Static).update(title)
        self.rows_table.set_source(self.source, cursor=0)
        self.rows_table.focus()
        self.show_row()

    def divergences(self) -> list[Position]:
        return sorted((0, self.source.position_of(row)) for row in self.pair.divergent_rows)

    def show_row(self) -> None:
        pair = self.pair
        where = self.where
        a_pane, b_pane = self.panes
        if not len(self.source):
            where.update(Text("neither run made a tool call", style="dim"))
            a_pane.set_text(None, placeholder="no calls")
            b_pane.set_text(None, placeholder="no calls")
            return
        shown = self.source.rows[self.rows_table.cursor]
        if shown.call_row is None:
            self._show_message(shown, where, a_pane, b_pane)
            return
        index, row = shown.call_row, pair.rows[shown.call_row]
        mark, style = ROW_MARKS[row.kind]
        text = Text(f"row {index + 1}/{len(pair.rows)}  ")
        text.append(f"{mark} {ROW_WORDS[row.kind]}", style=style)
        divergent = pair.divergent_rows
        text.append(f"   {len(divergent)} divergent row(s)", style="dim")
        if pair.divergence is not None and pair.divergence.row == index:
            text.append("  ← first divergence", style="bold yellow")
        where.update(text)
        a_call = None if row.a is None else pair.a_calls[row.a].display()
        b_call = None if row.b is None else pair.b_calls[row.b].display()
        a_step = None if row.a is None or row.a >= len(pair.a_steps) else pair.a_steps[row.a]
        b_step = None if row.b is None or row.b >= len(pair.b_steps) else pair.b_steps[row.b]
        a_pane.set_lines(side_lines(pair.a_trajectory, a_step, a_call))
        b_pane.set_lines(side_lines(pair.b_trajectory, b_step, b_call))

    def _show_message(self, row: TimelineRow, where: Static, a_pane: TextPane, b_pane: TextPane) -> None:
        mark, style = MESSAGE_MARKS[row.kind]
        where.update(Text(f"{row.role} message  ").append(f"{mark} {MESSAGE_WORDS[row.kind]}", style=style))
        for pane, conversation, at in zip((a_pane, b_pane), self.pair.conversations, (row.a, row.b), strict=True):
            if at is None:
                pane.set_lines([PaneLine(f"no {row.role} message on this side here", "dim italic")])
                continue
            said = conversation.said[at]
            lines = [PaneLine(f"step {said.step}", "dim"), PaneLine(f"{said.role} said", "bold")]
            pane.set_lines(lines + lines_from_text(_cut(said.text), "italic"))

    def action_toggle_messages(self) -> None:
        """Show both runs' messages between the calls, aligned by role (``m`` again: the calls alone)."""
        table = self.rows_table
        current = self.source.rows[table.cursor] if len(self.source) else None
        call_row = current.call_row if current is not None else None
        self.source = AlignedRowsSource(self.pair, messages=not self.source.messages)
        if call_row is None and current is not None:  # a message row: the next call row below it
            call_row = next((r.call_row for r in self.source.rows[table.cursor :] if r.call_row is not None), None)
        table.set_source(self.source, cursor=self.source.position_of(call_row) if call_row is not None else 0)
        self.notify("messages shown, aligned by role" if self.source.messages else "calls only", timeout=2)
        self.show_row()
