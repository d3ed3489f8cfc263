"""Outcome groups: the episodes whose logs say they did not succeed, grouped by one cause at a time.

``o`` cycles the grouping (:data:`replay_tui.groups.OUTCOME_GROUPINGS`: termination reason, first
missed expected action, first failed check, the scorer explanation's leading phrase); the groups of
one grouping sum to the episodes that failed or errored. ``enter`` on a group lists its episodes,
``enter`` on an episode shows its outcome (from which ``enter`` shows a step). Groups are made by
:func:`replay_tui.groups.group_outcomes` (no Textual), from what the logs say, not from a replay.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from replay_tui.episodes.model import Outcome
from replay_tui.episodes.problems import EpisodeLoadError
from replay_tui.expected import TaskAlignment, align_trajectory
from replay_tui.groups import OUTCOME_GROUPINGS, OUTCOME_SORT_KEYS, OutcomeGroup, group_outcomes, sort_outcome_groups
from replay_tui.sanitize import excerpt, one_line
from replay_tui.sources import outcome_of_ref, trajectory_of
from replay_tui.tui.messages import OutcomeRequested, ReplayState, StatusRefreshRequested
from replay_tui.tui.replay.groups import GroupsView
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import Column

OUTCOME_GROUP_COLUMNS = (
    Column("count", "count", 6, justify="right"),
    Column("group", "group", 40, min_width=16),
    Column("sample", "sample", flex=True),
)
EPISODE_COLUMNS = (
    Column("episode", "episode", 24),
    Column("kind", "outcome", 9),
    Column("score", "score", 6, justify="right"),
    Column("reason", "reason", flex=True),
)
KIND_STYLES = {"failed": "red", "errored": "yellow"}


class OutcomeGroupsSource:
    """The groups of the grouping shown, in the screen's sort order."""

    columns: Sequence[Column] = OUTCOME_GROUP_COLUMNS

    def __init__(self, groups: list[OutcomeGroup]):
        self.groups = groups

    def __len__(self) -> int:
        return len(self.groups)

    def row_style(self, index: int) -> str:
        return ""

    def cells(self, index: int) -> Sequence[Text]:
        group = self.groups[index]
        return [
            Text(str(group.count), style="bold"),
            Text(one_line(group.key), style="cyan"),
            Text(excerpt(group.sample, 300), style="dim"),
        ]


class GroupEpisodesSource:
    """The episodes of one group: the log's episode id, the outcome's kind, score and reason."""

    columns: Sequence[Column] = EPISODE_COLUMNS

    def __init__(self, group: OutcomeGroup | None, outcomes: dict[int, Outcome], names: dict[int, str]):
        self.keys: list[int] = list(group.episodes) if group is not None else []
        self.outcomes = outcomes
        self.names = names

    def __len__(self) -> int:
        return len(self.keys)

    def row_style(self, index: int) -> str:
        return ""

    def cells(self, index: int) -> Sequence[Text]:
        session_id = self.keys[index]
        outcome = self.outcomes[session_id]
        score = "—" if outcome.reward is None else f"{outcome.reward:.2f}"
        return [
            Text(one_line(self.names.get(session_id, str(session_id)))),
            Text(outcome.kind, style=KIND_STYLES.get(outcome.kind, "")),
            Text(score),
            Text(one_line(outcome.reason)),
        ]


class OutcomeGroupsScreen(GroupsView):
    """The episodes that did not succeed, grouped by one cause; ``o`` the next cause."""

    SORT_KEYS = OUTCOME_SORT_KEYS
    SORT_COLUMNS: ClassVar[dict[str, str]] = {"count": "count", "group": "group"}
    PREFIX: ClassVar[str] = "outcome-"
    NO_GROUP: ClassVar[tuple[str, str]] = ("no episode failed or errored, as their logs say", "green")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "next_grouping", "Next grouping", id="outcome_groups.next"),
        Binding("s", "sort", "Sort", id="outcome_groups.sort"),
        Binding("S", "reverse_sort", "Reverse", show=False, id="outcome_groups.reverse_sort"),
        Binding("escape", "back", "Back", id="outcome_groups.back"),
    ]

    def __init__(self, replay_app: ReplayState) -> None:
        super().__init__(id="outcome-groups")
        self.replay_app = replay_app  # read only: changes are asked for with messages
        self.grouping = OUTCOME_GROUPINGS[0][0]
        self.groups: list[OutcomeGroup] = []  # type: ignore[assignment]
        self.outcomes: dict[int, Outcome] = {}
        self.alignments: dict[int, TaskAlignment | None] = {}
        self.names: dict[int, str] = {}
        self.total = 0

    def compose_bottom(self) -> ComposeResult:
        yield Static(id="status")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.gather()
        self.regroup()
        self.group_table.focus()
        self.post_message(StatusRefreshRequested())

    # -- data ---------------------------------------------------------------------------------
    def gather(self) -> None:
        """Every episode's outcome from the index; the expected-vs-actual alignment of those that
        did not succeed and whose log has reference actions (only those are opened)."""
        demos = self.replay_app.workspace.demos
        refs = demos.refs
        self.total = len(refs)
        for ref in refs:
            outcome = outcome_of_ref(ref)
            self.outcomes[ref.session_id] = outcome
            self.names[ref.session_id] = ref.episode_id or str(ref.session_id)
            alignment = None
            if outcome.kind in ("failed", "errored") and outcome.expected_actions:
                try:
                    alignment = align_trajectory(trajectory_of(demos, ref.session_id))
                except EpisodeLoadError:
                    alignment = None
            self.alignments[ref.session_id] = alignment

    def regroup(self) -> None:
        items = ((sid, outcome, self.alignments.get(sid)) for sid, outcome in self.outcomes.items())
        self.groups = group_outcomes(items, self.grouping)
        self.rebuild()

    # -- GroupsView ---------------------------------------------------------------------------
    def rebuild(self, keep: Any = None) -> None:
        if keep is None:
            current = self.current_group()
            keep = current.key if current is not None else None
        self.groups = sort_outcome_groups(self.groups, self.sort_key, self.reverse)
        index = next((n for n, g in enumerate(self.groups) if g.key == keep), 0)
        self.source = OutcomeGroupsSource(self.groups)  # type: ignore[assignment]
        self.group_table.set_source(self.source, cursor=index)
        self.show_group()
        self.update_title()

    def current_group(self) -> OutcomeGroup | None:  # type: ignore[override]
        source = getattr(self, "source", None)
        if source is None or not len(source):
            return None
        group: OutcomeGroup = source.groups[min(self.group_table.cursor, len(source) - 1)]
        return group

    def show_group(self) -> None:
        group = self.current_group()
        self.shown_group = group  # type: ignore[assignment]
        self.steps_source = self.steps_source_for(group)
        self.steps_table.set_source(self.steps_source, cursor=0)
        detail = Text()
        if group is None:
            detail.append(*self.NO_GROUP)
        else:
            detail.append(f"{group.count} {'episode' if group.count == 1 else 'episodes'}", style="bold")
            detail.append(f"  {one_line(group.key)}", style="bold cyan")
            if group.sample:
                detail.append("\nsample  ", style="dim")
                detail.append(excerpt(group.sample, 400))
        self.query_one(f"#{self.PREFIX}group-detail", Static).update(detail)

    def steps_source_for(self, group: OutcomeGroup | None) -> GroupEpisodesSource:  # type: ignore[override]
        return GroupEpisodesSource(group, self.outcomes, self.names)

    def open_step(self, key: Any) -> None:
        self.post_message(OutcomeRequested(key))

    def update_title(self) -> None:
        kinds = Counter(outcome.kind for outcome in self.outcomes.values())
        text = Text()
        text.append("outcome groups  ", style="bold")
        text.append(f"by {dict(OUTCOME_GROUPINGS)[self.grouping]}  ", style="bold cyan")
        text.append(f"{kinds['failed']} failed", style="bold red" if kinds["failed"] else "")
        text.append(" · ")
        text.append(f"{kinds['errored']} errored", style="bold yellow" if kinds["errored"] else "")
        text.append(f" of {self.total} episodes")
        if kinds["unknown"]:
            text.append(f" · {kinds['unknown']} unknown", style="dim")
        text.append("  o: next grouping", style="dim")
        self.sort_title(text)

    # -- actions ------------------------------------------------------------------------------
    def action_next_grouping(self) -> None:
        names = [key for key, _ in OUTCOME_GROUPINGS]
        self.grouping = names[(names.index(self.grouping) + 1) % len(names)]
        self.regroup()
