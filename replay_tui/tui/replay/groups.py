"""The mismatch groups of the latest results: one row per group, its steps below, each opening the stepper.

Groups are made by :func:`replay_tui.groups.group_mismatches` from the workspace's summary (what
exports write), so the app, the reports and the terminal show the same groups and counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from replay_tui.groups import SORT_KEYS, MismatchGroup, group_mismatches, sort_groups
from replay_tui.runner import Mismatch, SummaryReport
from replay_tui.sanitize import excerpt, one_line
from replay_tui.stats import wilson
from replay_tui.tui.messages import (
    EpisodeOpenRequested,
    OutcomeGroupsRequested,
    ReplayState,
    StatusRefreshRequested,
)
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import Column, LazyTable, SortActions

GROUP_COLUMNS = (
    Column("count", "count", 6, justify="right"),
    Column("state", "state", 16),
    Column("tools", "expected → predicted tool", 32),
    Column("reason", "reason", 42),
    Column("sample", "sample reason", flex=True),
)
SORT_COLUMNS = {"count": "count", "state": "state", "tools": "tool", "reason": "reason"}
"""Which sort key a click on a column header picks."""


def step_columns(episode_ids: bool) -> tuple[Column, ...]:
    """The columns of a group's steps: the log's episode id for logs of other formats, else the session."""
    first = Column("episode", "episode", 24) if episode_ids else Column("session", "session", 8, justify="right")
    return (
        first,
        Column("step", "step", 6),
        Column("expected", "expected", flex=True),
        Column("predicted", "predicted", flex=True),
    )


class GroupsSource:
    """The groups, in the screen's sort order."""

    columns: Sequence[Column] = GROUP_COLUMNS

    def __init__(self, groups: list[MismatchGroup]):
        self.groups = groups

    def __len__(self) -> int:
        return len(self.groups)

    def row_style(self, index: int) -> str:
        return ""

    def cells(self, index: int) -> Sequence[Text]:
        group = self.groups[index]
        tools = Text(one_line(group.expected_tool), style="green")
        tools.append(" → ", style="dim")
        tools.append(one_line(group.predicted_tool), style="red")
        return [
            Text(str(group.count), style="bold"),
            Text(one_line(group.state), style="cyan"),
            tools,
            Text(one_line(group.reason_kind)),
            Text(excerpt(group.sample_reason, 300), style="dim"),
        ]


class GroupStepsSource:
    """The steps of one group: where they are, what was recorded and what was predicted."""

    def __init__(
        self,
        group: MismatchGroup | None,
        mismatches: dict[tuple[int, str], Mismatch],
        episode_ids: dict[int, str],
    ):
        self.keys: list[tuple[int, str]] = list(group.steps) if group is not None else []
        self.mismatches = mismatches
        self.episode_ids = episode_ids
        self.columns: Sequence[Column] = step_columns(bool(episode_ids))

    def __len__(self) -> int:
        return len(self.keys)

    def row_style(self, index: int) -> str:
        return ""

    def cells(self, index: int) -> Sequence[Text]:
        session_id, label = self.keys[index]
        mismatch = self.mismatches.get((session_id, label))
        where = self.episode_ids.get(session_id, str(session_id)) if self.episode_ids else str(session_id)
        expected = mismatch.expected if mismatch is not None else ""
        if mismatch is not None and mismatch.error and not mismatch.predicted.strip():
            predicted = Text(f"{mismatch.error_kind or 'error'}: {one_line(mismatch.error)}", style="italic red")
        else:
            predicted = Text(one_line(mismatch.predicted if mismatch is not None else ""), style="red")
        return [Text(one_line(where)), Text(one_line(label)), Text(one_line(expected), style="green"), predicted]


class GroupsView(SortActions, Screen):
    """Groups above, the selected group's steps below: sortable (``s``/``S`` or a header click),
    enter on a group lists its steps, enter on a step opens it (:meth:`open_step`).

    The mechanics both group screens share (a run's mismatch groups, a comparison's regression
    groups); subclasses say what the rows are and where a step opens. Widget ids are ``PREFIX`` +
    ``groups-title``, ``group-list``, ``group-detail``, ``group-steps``.
    """

    SORT_KEYS = SORT_KEYS
    SORT_COLUMNS: ClassVar[dict[str, str]] = SORT_COLUMNS
    PREFIX: ClassVar[str] = ""
    NO_GROUP: ClassVar[tuple[str, str]] = ("no group selected", "dim")
    """What the detail line says when there is no group (text, style)."""

    groups: list[MismatchGroup]
    source: GroupsSource
    steps_source: Any

    def compose(self) -> ComposeResult:
        yield Static(id=f"{self.PREFIX}groups-title")
        yield LazyTable(id=f"{self.PREFIX}group-list")
        yield Static(id=f"{self.PREFIX}group-detail")
        yield LazyTable(id=f"{self.PREFIX}group-steps")
        yield from self.compose_bottom()

    def compose_bottom(self) -> ComposeResult:
        yield KeysFooter()

    @property
    def group_table(self) -> LazyTable:
        return self.query_one(f"#{self.PREFIX}group-list", LazyTable)

    @property
    def steps_table(self) -> LazyTable:
        return self.query_one(f"#{self.PREFIX}group-steps", LazyTable)

    # -- what subclasses say ------------------------------------------------------------------
    def groups_source(self, groups: list[MismatchGroup]) -> GroupsSource:
        return GroupsSource(groups)

    def steps_source_for(self, group: MismatchGroup | None) -> Any:
        """The table source of ``group``'s steps; its ``keys`` are what :meth:`open_step` receives."""
        raise NotImplementedError

    def open_step(self, key: Any) -> None:
        raise NotImplementedError

    def update_title(self) -> None:
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------------
    def rebuild(self, keep: Any = None) -> None:
        """Sort the groups by the current key, keeping the cursor on the same group when it is still there."""
        if keep is None:
            current = self.current_group()
            keep = current.key if current is not None else None
        self.groups = sort_groups(self.groups, self.sort_key, self.reverse)
        index = next((n for n, g in enumerate(self.groups) if g.key == keep), 0)
        self.source = self.groups_source(self.groups)
        self.group_table.set_source(self.source, cursor=index)
        self.show_group()
        self.update_title()

    def current_group(self) -> MismatchGroup | None:
        source = getattr(self, "source", None)
        if source is None or not len(source):
            return None
        return source.groups[min(self.group_table.cursor, len(source) - 1)]

    def show_group(self) -> None:
        group = self.current_group()
        self.shown_group = group
        self.steps_source = self.steps_source_for(group)
        self.steps_table.set_source(self.steps_source, cursor=0)
        detail = Text()
        if group is None:
            detail.append(*self.NO_GROUP)
        else:
            detail.append(f"{group.count} {'step' if group.count == 1 else 'steps'}", style="bold")
            detail.append(f"  {one_line(group.state)}  ", style="bold cyan")
            detail.append(one_line(group.expected_tool), style="green")
            detail.append(" → ", style="dim")
            detail.append(one_line(group.predicted_tool), style="red")
            detail.append(f"  {one_line(group.reason_kind)}", style="bold")
            detail.append("\nsample  ", style="dim")
            detail.append(excerpt(group.sample_reason, 400))
        self.query_one(f"#{self.PREFIX}group-detail", Static).update(detail)

    def sort_title(self, text: Text) -> None:
        """The sort order at the end of the title: count sorts the largest first (↓), the others a to
        z (↑); ``S`` reverses."""
        arrow = "↓" if (self.sort_key == "count") != self.reverse else "↑"
        text.append(f"  sort: {self.sort_key} {arrow}", style="dim")
        self.query_one(f"#{self.PREFIX}groups-title", Static).update(text)

    # -- events -------------------------------------------------------------------------------
    @on(LazyTable.Highlighted)
    def _group_highlighted(self, event: LazyTable.Highlighted) -> None:
        if event.control is not self.group_table:
            return
        group = self.current_group()
        shown = getattr(self, "shown_group", None)
        if group is not None and (shown is None or group.key != shown.key):
            self.show_group()

    @on(LazyTable.Selected)
    def _selected(self, event: LazyTable.Selected) -> None:
        if event.control is self.group_table:
            if len(self.steps_source):
                self.steps_table.focus()
        elif event.control is self.steps_table:
            self.open_step(self.steps_source.keys[event.index])

    @on(LazyTable.HeaderClicked)
    def _header_clicked(self, event: LazyTable.HeaderClicked) -> None:
        if event.control is not self.group_table:
            return
        key = self.SORT_COLUMNS.get(self.source.columns[event.column].key)
        if key is not None:
            self.sort_by(key)

    # -- actions ------------------------------------------------------------------------------
    def action_back(self) -> None:
        if self.steps_table.has_focus:
            self.group_table.focus()
        else:
            self.app.pop_screen()


class GroupsScreen(GroupsView):
    """Mismatch groups: enter on a group lists its steps, enter on a step opens it in the stepper."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort", "Sort", id="groups.sort"),
        Binding("S", "reverse_sort", "Reverse", show=False, id="groups.reverse_sort"),
        Binding("o", "outcome_groups", "Outcome groups", id="groups.outcome"),
        Binding("escape", "back", "Back", id="groups.back"),
    ]

    def __init__(self, replay_app: ReplayState) -> None:
        super().__init__(id="groups")
        self.replay_app = replay_app  # read only: changes are asked for with messages
        self.summary: SummaryReport | None = None
        self.groups = []
        self.mismatches: dict[tuple[int, str], Mismatch] = {}
        self.episode_ids: dict[int, str] = {}

    def compose_bottom(self) -> ComposeResult:
        yield Static(id="status")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.reload()
        self.group_table.focus()
        self.post_message(StatusRefreshRequested())

    def on_screen_resume(self) -> None:
        self.reload()
        self.post_message(StatusRefreshRequested())

    # -- data ---------------------------------------------------------------------------------
    def reload(self) -> None:
        """Group the latest results again (after a replay or a change of matching policies)."""
        summary = self.replay_app.workspace.summary()
        self.summary = summary
        self.mismatches = {(m.session_id, m.step_label): m for e in summary.episodes for m in e.mismatches}
        self.episode_ids = {e.session_id: e.episode_id for e in summary.episodes if e.episode_id is not None}
        keep = self.current_group()
        self.groups = group_mismatches(summary)
        self.rebuild(keep=keep.key if keep is not None else None)

    def steps_source_for(self, group: MismatchGroup | None) -> GroupStepsSource:
        return GroupStepsSource(group, self.mismatches, self.episode_ids)

    def open_step(self, key: Any) -> None:
        session_id, label = key
        self.post_message(EpisodeOpenRequested(session_id, step_label=label))

    def update_title(self) -> None:
        summary = self.summary
        text = Text()
        text.append("mismatch groups  ", style="bold")
        if summary is None or not summary.episodes_run:
            text.append("nothing replayed yet: R in the browser replays every episode", style="yellow")
            text.append(" · o: the logs' outcomes grouped", style="dim")
        elif not summary.total_mismatches:
            text.append(f"no mismatches in {summary.episodes_run} replayed episodes", style="green")
        else:
            groups = len(self.groups)
            text.append(
                f"{summary.total_mismatches} mismatches in {groups} {'group' if groups == 1 else 'groups'}",
                style="bold red",
            )
            low, high = wilson(summary.total_matched, summary.total_steps)
            text.append(
                f" · {summary.episodes_run} episodes · step accuracy {summary.overall_accuracy:.1%} "
                f"[{low * 100:.1f}–{high * 100:.1f}%]",
            )
        self.sort_title(text)

    def action_outcome_groups(self) -> None:
        self.post_message(OutcomeGroupsRequested())
