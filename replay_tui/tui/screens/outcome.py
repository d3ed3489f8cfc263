"""The outcome of one episode, whole: what the log says of the task, and expected vs actual for the
whole task.

Above, the outcome (kind, score, termination reason, every check with its value and why, the error,
the target, the agent's answer, the scorer's explanation). Below, when the log carries the task's
reference actions (tau2's ``evaluation_criteria.actions``), each one aligned with the agent's
recorded calls by :func:`replay_tui.expected.align_trajectory` (matched, called with a different
argument, named, or missing). ``enter`` on an action shows its step in the stepper: the call that
matched or came closest, or, for a missing one, where it should have come (after the call of the
reference action before it). Nothing here judges a call: the alignment was made by the one judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from replay_tui.demos.problems import EpisodeLoadError
from replay_tui.expected import ExpectedHit, TaskAlignment, align_trajectory
from replay_tui.sanitize import excerpt, one_line
from replay_tui.sources import outcome_of, outcome_of_ref
from replay_tui.trajectory import Outcome, Trajectory
from replay_tui.tui.messages import ReplayState, StatusRefreshRequested
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import Column, LazyTable
from replay_tui.tui.widgets.outcome_text import KIND_LABELS, append_headline, check_text, value_text

WHOLE = 2000
"""A target, answer, explanation or error is shown up to this many characters here."""
EXPECTED_COLUMNS = (
    Column("position", "#", 3, justify="right"),
    Column("expected", "expected action", flex=True, min_width=20),
    Column("status", "agent", 10),
    Column("step", "step", 5, justify="right"),
    Column("why", "why", flex=True, min_width=16),
)
STATUS_STYLES = {"matched": "green", "different": "yellow", "missing": "bold red"}


def jump_position(alignment: TaskAlignment, index: int, call_steps: Sequence[int]) -> int | None:
    """The trajectory step to show for the ``index``-th expected action: the step of the call that
    matched or came closest; for a missing one, the first call after the step of the nearest
    reference action before it that the agent did call (the first call when there is none).
    ``call_steps``: the steps that carry a call, in order. None when the episode has no call."""
    hit = alignment.hits[index]
    if hit.step is not None:
        return hit.step
    before = [h.step for h in alignment.hits[:index] if h.step is not None]
    if not before:
        return call_steps[0] if call_steps else None
    after = [step for step in call_steps if step > max(before)]
    return after[0] if after else max(before)


class ExpectedSource:
    """The expected actions, one row each, in the reference's order."""

    columns: Sequence[Column] = EXPECTED_COLUMNS

    def __init__(self, alignment: TaskAlignment | None, call_steps: Sequence[int]):
        self.hits: list[ExpectedHit] = list(alignment.hits) if alignment is not None else []
        self.alignment = alignment
        self.call_steps = list(call_steps)

    def __len__(self) -> int:
        return len(self.hits)

    def row_style(self, index: int) -> str:
        return ""

    def cells(self, index: int) -> Sequence[Text]:
        hit = self.hits[index]
        assert self.alignment is not None
        if hit.status == "missing":
            where = jump_position(self.alignment, index, self.call_steps)
            why = "never called" + (f"; would come at step {where}" if where is not None else "")
            step = Text("—", style="dim")
        else:
            why = one_line(hit.reason) if hit.status == "different" else "called with these arguments"
            step = Text(str(hit.step))
        return [
            Text(str(hit.position + 1)),
            Text(one_line(hit.expected.display())),
            Text(hit.status, style=STATUS_STYLES.get(hit.status, "")),
            step,
            Text(why, style="dim" if hit.status == "matched" else ""),
        ]


def outcome_text(outcome: Outcome) -> Text:
    """Every particular of the outcome, a titled block each, a blank line apart."""
    blocks: list[Text] = []

    def block(title: str, body: Text | str | None, style: str = "") -> None:
        if body is None or not one_line(body.plain if isinstance(body, Text) else body):
            return
        text = Text()
        text.append(title + "\n", style="bold")
        if isinstance(body, Text):
            text.append_text(body)
        else:
            text.append(excerpt(body, WHOLE), style=style)
        blocks.append(text)

    if outcome.checks:
        failed = len(outcome.failed_checks)
        checks = Text("\n").join(check_text(check, WHOLE) for check in outcome.checks)
        block(f"checks ({failed} of {len(outcome.checks)} failed)", checks)
    block("error", outcome.error, "yellow")
    block("target", outcome.target)
    block("answer", outcome.answer)
    block("explanation", outcome.explanation)
    if outcome.scores and not outcome.checks:
        scores = ", ".join(f"{key} {value_text(value)}" for key, value in outcome.scores.items())
        block("scores", scores)
    return Text("\n\n").join(blocks)


class OutcomeScreen(Screen[int | None]):
    """One episode's outcome and its expected vs actual; dismissed with the step to show (or None)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="outcome.back"),
    ]

    def __init__(self, session_id: int, replay_app: ReplayState) -> None:
        super().__init__(id="outcome")
        self.session_id = session_id
        self.replay_app = replay_app  # read only: changes are asked for with messages
        self.problem: str | None = None
        self.trajectory: Trajectory | None = None
        self.outcome = Outcome()
        self.alignment: TaskAlignment | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="outcome-title")
        with VerticalScroll(id="outcome-body"):
            yield Static(id="outcome-text")
        yield Static(id="expected-title")
        yield LazyTable(id="expected", marker=True)
        yield Static(id="status")
        yield KeysFooter()

    def on_mount(self) -> None:
        demos = self.replay_app.workspace.demos
        ref = demos.ref(self.session_id)
        try:
            episode = demos.episode(self.session_id)
        except EpisodeLoadError as exc:
            self.problem = exc.problem.one_line()
            self.outcome = outcome_of_ref(ref)
        else:
            self.outcome = outcome_of(episode)
            self.trajectory = episode.source
        if self.trajectory is not None:
            self.alignment = align_trajectory(self.trajectory)
        calls = [step.index for step in self.trajectory.steps if step.action is not None] if self.trajectory else []
        self.source = ExpectedSource(self.alignment, calls)
        table = self.query_one("#expected", LazyTable)
        table.set_source(self.source, cursor=0)
        table.display = bool(len(self.source))
        table.focus()
        self.show()
        self.post_message(StatusRefreshRequested())

    def show(self) -> None:
        ref = self.replay_app.workspace.demos.ref(self.session_id)
        title = Text()
        title.append(f"outcome  session {self.session_id}  ", style="bold")
        if ref.header.episode_id is not None:
            title.append("episode ", style="dim")
            title.append(excerpt(ref.header.episode_id, 60) + "  ", style="bold cyan")
        append_headline(title, self.outcome)
        if self.outcome.kind == "unknown" and self.outcome.reward is None and not self.outcome.status:
            title.append(KIND_LABELS["unknown"][0], style=KIND_LABELS["unknown"][1])
        reason = self.outcome.reason
        if reason and self.outcome.kind != "succeeded":
            title.append("\nwhy ", style="dim")
            title.append(excerpt(reason, 300))
        if self.problem is not None:
            title.append("\n" + one_line(self.problem), style="red")
        self.query_one("#outcome-title", Static).update(title)
        body = outcome_text(self.outcome)
        self.query_one("#outcome-text", Static).update(
            body if body else Text("the log records nothing more", style="dim")
        )
        expected = Text()
        expected.append("expected vs actual  ", style="bold")
        alignment = self.alignment
        if alignment is None:
            expected.append("the log carries no reference actions for this task", style="dim")
        else:
            counts = [(status, alignment.count(status)) for status in ("matched", "different", "missing")]
            expected.append(f"{len(alignment.hits)} reference actions: ")
            expected.append_text(
                Text(" · ").join(
                    Text(f"{n} {status}", style=STATUS_STYLES[status] if n else "dim") for status, n in counts
                )
            )
            if len(self.source):
                expected.append("  enter shows the step", style="dim")
        self.query_one("#expected-title", Static).update(expected)

    @on(LazyTable.Selected, "#expected")
    def _jump(self, event: LazyTable.Selected) -> None:
        if self.alignment is None:
            return
        self.dismiss(jump_position(self.alignment, event.index, self.source.call_steps))

    def action_back(self) -> None:
        self.dismiss(None)
