"""The stepper's step list: every entry of an episode as a row, with its verdict mark, its tags,
note and invalid-field marks before the action, and the cursor.

A widget of its own so the stepper composes it and asks it for rows instead of reaching into a
table's source: what a row is (:class:`StepRow`), how it reads (:class:`StepsSource`), how wide the
list wants to be and where the next mismatch is all live here. The screen watches the list's
``cursor`` (a reactive, set in the same call as the key) rather than a Highlighted message, a hop
later: the list, the detail and the panes change in one frame.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from replay_tui.env import ReplayStep, replay_steps
from replay_tui.episodes.model import Trajectory, TrajectoryStep
from replay_tui.sanitize import excerpt, one_line, strip_control
from replay_tui.sources import note_kind, shown_as_decision
from replay_tui.tui.widgets.lazy_table import Column, LazyTable

if TYPE_CHECKING:  # the runner loads at the first replay, not at the app's launch
    from replay_tui.annotations import Annotation
    from replay_tui.runner import StepResult

STEP_COLUMNS = (
    Column("mark", "", 1),
    Column("label", "step", 5),
    Column("state", "state", 6, drop=1),
    Column("action", "recorded action", flex=True, min_width=14),
)
"""The step list; a narrow one (80 columns) leaves the state out for the action's sake."""
CALL_STEP_COLUMNS = (
    Column("mark", "", 1),
    Column("label", "step", 5),
    Column("action", "recorded action", flex=True, min_width=14),
)
"""The step list of a tool-calling log: the action shown as the log shows it (it names the tool)."""
STEPS_WIDTH = (24, 0.35)
"""The step list is as wide as its longest row, within these bounds: cells, share of the screen."""
WIDTH_ROWS = 500
"""The list is sized for the longest of its first rows (so a long episode opens at once)."""


@dataclass(frozen=True)
class StepRow:
    """A row of the step list: a Trajectory step and, when it is replayable, its replay step."""

    position: int
    entry: TrajectoryStep
    step: ReplayStep | None
    decision: bool
    """Listed as a decision (:func:`~replay_tui.sources.shown_as_decision`), not a sub-event or a note."""

    @property
    def label(self) -> str | None:
        return self.step.label if self.step is not None else None

    @property
    def is_sub_event(self) -> bool:
        return not self.decision


def build_rows(trajectory: Trajectory) -> list[StepRow]:
    """Every step, with item-page actions labelled as the env replays them."""
    steps = {s.trajectory_index: s for s in replay_steps(trajectory, include_item_steps=True)}
    return [
        StepRow(position, entry, steps.get(position), shown_as_decision(trajectory, entry))
        for position, entry in enumerate(trajectory.steps)
    ]


def shared_warnings(rows: Sequence[StepRow]) -> set[str]:
    """The warnings every replayable step carries (WebShop human logs record no available actions:
    every step infers them), said once per file rather than on each step."""
    steps = [row.step for row in rows if row.step is not None and row.step.kind == "decision"]
    return set.intersection(*(set(step.warnings) for step in steps)) if steps else set()


def row_marks(invalid: bool, annotation: Annotation | None) -> Text | None:
    """``⚠`` for a step with an invalid field, ``⚑`` tagged, ``✎`` noted (shown before its action)."""
    marks = Text()
    if invalid:
        marks.append("⚠", style="bold yellow")
    if annotation is not None and annotation.tags:
        marks.append("⚑", style="bold cyan")
    if annotation is not None and annotation.note.strip():
        marks.append("✎", style="bold cyan")
    return marks or None


class StepsSource:
    columns: Sequence[Column] = STEP_COLUMNS

    def __init__(
        self,
        rows: list[StepRow],
        verdicts: dict[str, StepResult],
        show_sub_events: bool = True,
        *,
        general: bool = False,
        calls: bool = False,
    ):
        self.verdicts = verdicts
        self.rows = rows if show_sub_events else [r for r in rows if not r.is_sub_event]
        self.general = general  # an episode of another format: its entries carry the log's own fields
        if calls:
            self.columns = CALL_STEP_COLUMNS

    def __len__(self) -> int:
        return len(self.rows)

    def verdict(self, index: int) -> StepResult | None:
        label = self.rows[index].label
        return self.verdicts.get(label) if label is not None else None

    def row_style(self, index: int) -> str:
        verdict = self.verdict(index)
        if verdict is not None and verdict.is_mismatch:
            return "bold red"
        return "dim" if self.rows[index].is_sub_event and self.rows[index].step is None else ""

    marks: Callable[[StepRow], Text | None] | None = None
    """What the screen marks a row with (tags, a note, an invalid field), shown before its action."""

    def cells(self, index: int) -> Sequence[Text]:
        cells = self.plain_cells(index)
        marks = self.marks(self.rows[index]) if self.marks is not None else None
        if not marks:
            return cells
        return [*cells[:-1], Text.assemble(marks, " ", cells[-1])]

    def plain_cells(self, index: int) -> Sequence[Text]:
        row = self.rows[index]
        verdict = self.verdict(index)
        if verdict is None:
            mark = Text("·", style="dim")
        elif verdict.match:
            mark = Text("✓", style="green")
        elif verdict.is_equivalent:
            mark = Text("≈", style="bold yellow")
        else:
            mark = Text("✗", style="bold red")
        entry = row.entry
        if self.general:
            return self._general_cells(row, mark)
        if row.decision:
            return [
                mark,
                Text(one_line(row.label or "")),
                Text(one_line(row.step.state if row.step else (entry.state or ""))),
                Text(strip_control(entry.action_text)),
            ]
        kind = entry.event or ""
        action = entry.action_text
        label = Text(f" {row.label}" if row.label else "  ↳", style="dim" if row.label is None else "")
        text = Text("  " + strip_control(kind), style="italic")
        if action:
            text.append(" " + strip_control(action), style="")
        return [mark, label, Text("Item" if row.step else "", style="dim"), text]

    def _general_cells(self, row: StepRow, mark: Text) -> list[Text]:
        """A step of another format: the action as the log shows it; a step without a call, its text."""
        entry = row.entry
        label = entry.label
        if row.decision:
            expected = row.step.expected if row.step is not None else ""
            action = Text(one_line(entry.action_text or expected))
            state = Text(one_line(row.step.state if row.step else (entry.state or "")))
            cells = [mark, Text(one_line(row.label or label or "")), state, action]
        else:
            text = Text(strip_control(note_kind(entry)), style="italic")
            if entry.content:
                text.append(" " + excerpt(entry.content, 200), style="")
            cells = [mark, Text(one_line(label or ""), style="dim"), Text(""), text]
        if self.columns is CALL_STEP_COLUMNS:
            del cells[2]
        return cells


class StepList(LazyTable):
    """The table of an episode's steps; the screen gives it rows and verdicts and asks it for the
    row under the cursor, a row's index and the next mismatch."""

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id, marker=True)
        self.steps = StepsSource([], {})

    def show_rows(self, steps: StepsSource, *, cursor: int | None = None) -> None:
        """List ``steps`` (the cursor kept, clamped, unless a new one is given)."""
        self.steps = steps
        self.set_source(steps, cursor=cursor)

    def set_verdicts(self, verdicts: dict[str, StepResult]) -> None:
        """A verdict arrived: the marks are drawn again (same rows)."""
        self.steps.verdicts = verdicts
        self.refresh_rows()

    @property
    def current_row(self) -> StepRow | None:
        if not len(self.steps):
            return None
        return self.steps.rows[self.cursor]

    def index_of(self, *, position: int | None = None, label: str | None = None) -> int | None:
        """The index of the row at trajectory ``position`` or of step ``label`` (None: not listed)."""
        return next(
            (
                n
                for n, row in enumerate(self.steps.rows)
                if (position is not None and row.position == position) or (label is not None and row.label == label)
            ),
            None,
        )

    def next_mismatch(self, direction: int, equivalents: bool = False) -> int | None:
        """The index of the next (previous) mismatch after the cursor; with ``equivalents``, also
        of tolerated steps (None: there is none)."""
        order = range(self.cursor + 1, len(self.steps)) if direction > 0 else range(self.cursor - 1, -1, -1)
        for index in order:
            verdict = self.steps.verdict(index)
            if verdict is not None and (verdict.is_mismatch or (equivalents and verdict.is_equivalent)):
                return index
        return None

    def width_within(self, screen_width: int, content_width: int) -> int:
        """Its width on a screen ``screen_width`` wide: ``content_width`` within STEPS_WIDTH."""
        low, share = STEPS_WIDTH
        return max(low, min(content_width, int(screen_width * share)))

    def content_width(self) -> int:
        """The width for its longest row (the first WIDTH_ROWS rows): gutter, columns, scrollbar, border."""
        steps = self.steps
        columns = steps.columns
        longest = 0
        for index in range(min(len(steps), WIDTH_ROWS)):
            longest = max(longest, steps.cells(index)[-1].cell_len)
        fixed = sum(column.width for column in columns if not column.flex) + len(columns) - 1
        return len(LazyTable.MARKER) + fixed + max(longest, len(columns[-1].label)) + 2 + 1
