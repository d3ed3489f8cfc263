"""The outcome of one episode, whole: what the log says of the task, and expected vs actual for the
whole task.

Above, the outcome (kind, score, termination reason, every check with its value and why, the error,
the target, the agent's answer, the scorer's explanation). Below, when the log carries the task's
reference actions (tau2's ``evaluation_criteria.actions``), each one aligned with the agent's
recorded calls by :func:`replay_tui.expected.align_trajectory` (matched, called with a different
argument, named, or missing; a simulated user's actions marked so), then the agent's extra
write-like calls. Once the episode has been replayed, a ``replay`` column gives each reference
action's fate among the replay's **predicted** calls (:func:`replay_tui.expected.align_predicted`,
the alignment the reports count as ``replay_expected``). ``enter`` on a row shows its step in the
stepper: the call that matched or came closest, or, for a missing one, where the alignment placed
it. Nothing here judges a call or places one: the alignment did, with the one judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from replay_tui.episodes.model import Outcome, Trajectory
from replay_tui.episodes.problems import EpisodeLoadError
from replay_tui.expected import ExpectedHit, RecordedCall, TaskAlignment, align_predicted, align_trajectory
from replay_tui.runner import replay_expected
from replay_tui.sanitize import excerpt, one_line
from replay_tui.sources import outcome_of_ref, trajectory_of
from replay_tui.tui.messages import ReplayState, StatusRefreshRequested
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import Column, LazyTable
from replay_tui.tui.widgets.outcome_text import KIND_LABELS, append_headline, check_text, value_text

WHOLE = 2000
"""A target, answer, explanation or error is shown up to this many characters here."""
EXPECTED_COLUMNS = (
    Column("position", "#", 3, justify="right"),
    Column("expected", "expected action", flex=True, min_width=20),
    Column("status", "done", 16),
    Column("step", "step", 5, justify="right"),
    Column("why", "why", flex=True, min_width=16),
)
REPLAY_COLUMN = Column("replay", "replay", 10)
"""Each reference action's fate among a replay's predicted calls (shown once the episode was replayed)."""
STATUS_STYLES = {"matched": "green", "different": "yellow", "missing": "bold red"}
EXTRA_WHY = "a write-like call no expected action asked for"


@dataclass(frozen=True, slots=True)
class ExpectedRow:
    """A row of expected vs actual: an expected action's hit, or an extra write-like call."""

    hit: ExpectedHit | None = None
    extra: RecordedCall | None = None

    @property
    def step(self) -> int | None:
        """The trajectory step ``enter`` shows: the call's, or where a missing action should have come
        (placed by :func:`replay_tui.expected.align_expected`, not here)."""
        if self.hit is not None:
            return self.hit.step
        return self.extra.step if self.extra is not None else None


def expected_rows(alignment: TaskAlignment | None) -> list[ExpectedRow]:
    """Every expected action in the reference's order, then the agent's extra write-like calls."""
    if alignment is None:
        return []
    return [ExpectedRow(hit=hit) for hit in alignment.hits] + [
        ExpectedRow(extra=call) for call in alignment.extra_writes
    ]


class ExpectedSource:
    """Expected vs actual, one row each (:func:`expected_rows`), and, given a replay's alignment
    (``predicted``, over the same reference), what the replay's predictions did of each action."""

    def __init__(self, alignment: TaskAlignment | None, predicted: TaskAlignment | None = None):
        self.rows = expected_rows(alignment)
        self.predicted = predicted
        self.columns: Sequence[Column] = (*EXPECTED_COLUMNS, REPLAY_COLUMN) if predicted else EXPECTED_COLUMNS

    def _replay_cell(self, row: ExpectedRow) -> list[Text]:
        if self.predicted is None:
            return []
        if row.hit is None:
            return [Text("")]
        status = self.predicted.hits[row.hit.position].status
        return [Text(status, style=STATUS_STYLES.get(status, ""))]

    def __len__(self) -> int:
        return len(self.rows)

    def row_style(self, index: int) -> str:
        return ""

    def cells(self, index: int) -> Sequence[Text]:
        row = self.rows[index]
        step = Text("—" if row.step is None else str(row.step))
        if row.extra is not None:
            call = row.extra.call
            return [
                Text("+"),
                Text(one_line(call.display())),
                Text("extra write", style="bold red"),
                step,
                Text(EXTRA_WHY),
                *self._replay_cell(row),
            ]
        hit = row.hit
        assert hit is not None
        status = hit.status + (" (user)" if hit.requestor == "user" else "")
        if hit.status == "missing":
            why = one_line(hit.reason) or "never called"
            step = Text("" if hit.step is None else f"→ {hit.step}", style="dim")
        elif hit.status == "different":
            why = one_line(hit.reason)
        else:
            why = "called with these arguments"
        return [
            Text(str(hit.position + 1)),
            Text(one_line(hit.expected.display())),
            Text(status, style=STATUS_STYLES.get(hit.status, "")),
            step,
            Text(why, style="dim" if hit.status == "matched" else ""),
            *self._replay_cell(row),
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
        self.predicted: TaskAlignment | None = None
        """The replay's predicted calls aligned with the same reference, once the episode was replayed."""

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
            self.trajectory = trajectory_of(demos, self.session_id)
        except EpisodeLoadError as exc:
            self.problem = exc.problem.one_line()
            self.outcome = outcome_of_ref(ref)
        else:
            self.outcome = self.trajectory.outcome
        if self.trajectory is not None:
            self.alignment = align_trajectory(self.trajectory)
            results = self.replay_app.step_results.get(self.session_id)
            if self.alignment is not None and results:
                self.predicted = align_predicted(self.trajectory, results.values())
        self.source = ExpectedSource(self.alignment, self.predicted)
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
        if ref.episode_id is not None:
            title.append("episode ", style="dim")
            title.append(excerpt(ref.episode_id, 60) + "  ", style="bold cyan")
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
            found = replay_expected(self.predicted)
            if found is not None:  # as the reports count it
                expected.append(f"  the replay: {found.matched} of {found.total} matched")
            if len(self.source):
                expected.append("  enter shows the step", style="dim")
        self.query_one("#expected-title", Static).update(expected)

    @on(LazyTable.Selected, "#expected")
    def _jump(self, event: LazyTable.Selected) -> None:
        step = self.source.rows[event.index].step
        if step is not None:
            self.dismiss(step)

    def action_back(self) -> None:
        self.dismiss(None)
