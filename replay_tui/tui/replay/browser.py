"""The session browser: one row per episode (and per rejected episode), filterable and sortable."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input, Static

from replay_tui.episodes.collection import EpisodeRef
from replay_tui.episodes.problems import LoadProblem
from replay_tui.sanitize import one_line, strip_control
from replay_tui.sources import listed_as_pages, listed_outcome, listed_reward, records_backup, records_ending
from replay_tui.tui.messages import (
    EpisodeOpenRequested,
    NoteRequested,
    OutcomeRequested,
    ReplayCancelRequested,
    ReplayRequested,
    ReplayState,
    StatusRefreshRequested,
    TagRequested,
)
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import Column, LazyTable, SortActions

if TYPE_CHECKING:
    from replay_tui.workspace import Workspace

INSTRUCTION_MIN = 30
"""The instruction (task) column keeps this width: at 80 columns tags, backup and replay give way."""
VERDICT = Column("verdict", "replay", 12, min_width=9, drop=1)
TAGS = Column("tags", "tags", 18, min_width=8, drop=2)
BACKUP = Column("backup", "backup", 6, drop=3)
REASON = Column("reason", "reason", 24, min_width=10, drop=3)
"""Why the task ended as the log says (the first failed check, the error, the termination reason)."""
COLUMNS = (
    Column("session", "session", 8, justify="right"),
    Column("instruction", "instruction", flex=True, min_width=INSTRUCTION_MIN),
    Column("steps", "steps", 5, justify="right"),
    Column("reward", "reward", 6, justify="right"),
    Column("success", "ok", 2),
    BACKUP,
    VERDICT,
    TAGS,
)
"""The columns of a set of the seed's demo files only (narrow terminals: see Column.drop)."""
SORTABLE = ("session", "instruction", "steps", "reward", "success", "backup", "verdict", "tags")
EPISODE_ID_WIDTH = (7, 36)
FILE_WIDTH = 30
"""The file column (shown when two files hold the same episode id) is at most this wide."""
"""The episode-id column is as wide as the longest id, within these bounds (longer ids end in …)."""


def browser_columns(refs: Sequence[EpisodeRef]) -> tuple[Column, ...]:
    """The columns for the episodes in the set: the seed's layout when every episode is a seed demo,
    else the log's episode id, task, turns (the rows the stepper lists), recorded calls (what a
    replay judges), score, outcome and its reason (plus the file when two files hold the same episode id, the
    format when the set mixes formats, and WebShop's backup column only when seed episodes are present)."""
    formats = {ref.format for ref in refs}
    if listed_as_pages(refs):
        return COLUMNS
    session_width = max(4, len(str(max((ref.session_id for ref in refs), default=0))))
    longest = max((len(_episode_id(ref)) for ref in refs), default=0)
    columns = [
        Column("session", "#", session_width, justify="right"),
        Column("episode", "episode", max(EPISODE_ID_WIDTH[0], min(EPISODE_ID_WIDTH[1], longest)), min_width=7),
        Column("instruction", "task", flex=True, min_width=INSTRUCTION_MIN),
        Column("turns", "turns", 5, justify="right"),
        Column("calls", "calls", 5, justify="right"),
        Column("reward", "score", 6, justify="right"),
        Column("success", "ok", 2),
        REASON,
    ]
    if shared_ids(refs):
        widest = max(len(ref.file.path.name) for ref in refs)
        columns.insert(2, Column("file", "file", min(widest, FILE_WIDTH), min_width=8))
    if len(formats) > 1:
        columns.append(Column("format", "format", max(len(name) for name in formats), drop=4))
    if any(records_backup(ref) for ref in refs):
        columns.append(BACKUP)
    columns += [VERDICT, TAGS]
    return tuple(columns)


@dataclass(frozen=True)
class EpisodeRow:
    """A browser row for a usable episode."""

    ref: EpisodeRef
    problem: None = None

    @property
    def session_id(self) -> int:
        return self.ref.session_id


@dataclass(frozen=True)
class ProblemRow:
    """A browser row for a problem without an episode of its own (a rejected record, a file error)."""

    problem: LoadProblem
    ref: None = None

    @property
    def session_id(self) -> None:
        return None


Row = EpisodeRow | ProblemRow


OUTCOME_FILTERS = ("failed", "errored", "max-steps")
"""What ``f`` cycles through (then back to every episode), by the log's own outcome: the tasks that
did not succeed (failed or errored), those that ended on an error, those that hit a limit (steps,
turns, cost, context) without succeeding. The last two are skipped when no episode of the set passes them."""


@dataclass
class Filters:
    text: str = ""
    outcome: str = ""
    """One of :data:`OUTCOME_FILTERS`, or "" for every outcome."""
    mismatches: bool = False
    backup: bool = False
    tagged: bool = False

    def describe(self) -> str:
        parts = [self.outcome] if self.outcome else []
        parts += [name for name in ("mismatches", "backup", "tagged") if getattr(self, name)]
        if self.text:
            parts.append(f"/{self.text}")
        return " ".join(parts)


class BrowserSource:
    """The rows the browser shows, after filtering and sorting; cells are made on demand."""

    columns: Sequence[Column] = COLUMNS

    def __init__(
        self,
        workspace: Workspace,
        filters: Filters,
        sort_key: str = "session",
        reverse: bool = False,
        columns: Sequence[Column] | None = None,
    ):
        self.workspace = workspace
        self.rows: list[Row] = []
        self.episode_count = 0  # rows that are episodes (the rest are problems)
        refs = workspace.demos.refs
        self.columns = browser_columns(refs) if columns is None else columns
        self._episodes = [EpisodeRow(ref) for ref in refs]
        self._haystacks = [_haystack(ref) for ref in refs]
        self._outcome_filters: list[str] | None = None
        self._facts: dict[int, tuple[EpisodeRef, OutcomeFacts]] = {}
        self.rebuild(filters, sort_key, reverse)

    def facts(self, ref: EpisodeRef) -> OutcomeFacts:
        """The row's outcome as the browser shows, filters and sorts it, built once per episode: a
        deferred outcome reads its episode again (a tau2 simulation, an ATIF file), and every sort
        by success or reason and every ``f`` asked for all of them again."""
        kept = self._facts.get(id(ref))
        if kept is not None and kept[0] is ref:
            return kept[1]
        facts = OutcomeFacts.of(ref)
        self._facts[id(ref)] = (ref, facts)
        return facts

    def add(self, refs: Sequence[EpisodeRef]) -> None:
        """Episodes appended to a followed file: rows from the next :meth:`rebuild` on."""
        self._episodes += [EpisodeRow(ref) for ref in refs]
        self._haystacks += [_haystack(ref) for ref in refs]
        self._outcome_filters = None

    def grew(self, refs: Sequence[EpisodeRef]) -> None:
        """Episodes whose log grew (``--follow``): their text to filter on, from their new summaries."""
        where = {id(row.ref): n for n, row in enumerate(self._episodes)}
        for ref in refs:
            n = where.get(id(ref))
            if n is not None:
                self._haystacks[n] = _haystack(ref)
            self._facts.pop(id(ref), None)  # its outcome may have changed with it
        self._outcome_filters = None

    def rebuild(self, filters: Filters, sort_key: str, reverse: bool) -> None:
        """Filter and sort; work proportional to the rows, no per-row objects created."""
        ws = self.workspace
        needle = filters.text.lower()
        episodes = self._episodes
        if needle:
            episodes = [row for row, hay in zip(episodes, self._haystacks, strict=True) if needle in hay]
        if filters.outcome:
            episodes = [row for row in episodes if self.facts(row.ref).passes(filters.outcome)]
        if filters.backup:
            episodes = [row for row in episodes if row.ref.completed_by_backup]
        if filters.mismatches:
            results = ws.results
            episodes = [
                row
                for row in episodes
                if (report := results.get(row.ref.session_id)) is not None and not report.matched
            ]
        if filters.tagged:
            tagged = {a.session_id for a in ws.annotations if a.tags}
            episodes = [row for row in episodes if row.ref.session_id in tagged]
        if sort_key != "session" or reverse:
            episodes = sorted(episodes, key=self._sort_key(sort_key), reverse=reverse)
        problems: list[Row] = []
        if not (filters.outcome or filters.mismatches or filters.backup or filters.tagged):
            problems = [ProblemRow(p) for p in ws.rejected() if not needle or needle in p.one_line().lower()]
        self.rows = [*episodes, *problems]
        self.episode_count = len(self.rows) - len(problems)

    def _sort_key(self, key: str):  # a key function for sorted()
        ws = self.workspace
        if key == "instruction":
            return lambda row: (row.ref.task.lower(), row.ref.session_id)
        if key == "steps":
            return lambda row: (row.ref.decision_steps, row.ref.session_id)
        if key == "episode":
            return lambda row: (_episode_id(row.ref).lower(), row.ref.session_id)
        if key == "format":
            return lambda row: (row.ref.format, row.ref.session_id)
        if key == "turns":
            return lambda row: (row.ref.decision_steps + row.ref.sub_events, row.ref.session_id)
        if key == "calls":
            return lambda row: (row.ref.decision_steps, row.ref.session_id)
        if key == "file":
            return lambda row: (row.ref.file.path.name, row.ref.session_id)
        if key == "reward":
            return lambda row: (_score(row.ref), row.ref.session_id)
        if key == "success":
            return lambda row: (_KIND_RANK[self.facts(row.ref).kind], row.ref.session_id)
        if key == "reason":
            return lambda row: (self.facts(row.ref).reason.casefold(), row.ref.session_id)
        if key == "backup":
            return lambda row: (row.ref.completed_by_backup, row.ref.session_id)
        if key == "verdict":

            def verdict_rank(row: EpisodeRow) -> tuple[int, int]:
                report = ws.results.get(row.ref.session_id)
                return (0 if report is None else (2 if report.matched else 1), row.ref.session_id)

            return verdict_rank
        if key == "tags":
            tags: dict[int, str] = {}
            for annotation in ws.annotations:
                if annotation.tags:
                    tags[annotation.session_id] = ",".join(ws.annotations.episode_tags(annotation.session_id))
            return lambda row: (tags.get(row.ref.session_id, ""), row.ref.session_id)
        return lambda row: row.ref.session_id

    def outcome_filters(self) -> list[str]:
        """The outcome filters ``f`` cycles: failed always (as ``f`` always did), the others when
        some episode of the set passes them (looked for once, again after :meth:`add`)."""
        if self._outcome_filters is None:
            refs = [row.ref for row in self._episodes if records_ending(row.ref)]  # the others pass neither
            self._outcome_filters = [
                name
                for name in OUTCOME_FILTERS
                if name == "failed" or any(self.facts(ref).passes(name) for ref in refs)
            ]
        return self._outcome_filters

    def __len__(self) -> int:
        return len(self.rows)

    def index_of(self, session_id: int | None) -> int | None:
        for index, row in enumerate(self.rows):
            if row.session_id == session_id:
                return index
        return None

    def row_style(self, index: int) -> str:
        row = self.rows[index]
        if row.ref is None or self.workspace.demos.problem_for(row.ref.session_id):
            return "red"
        return ""

    def cells(self, index: int) -> Sequence[Text]:
        row = self.rows[index]
        if row.ref is None:
            problem = row.problem
            assert problem is not None
            where = "file" if problem.index is None else f"#{problem.index}"
            message = strip_control(problem.one_line())
            cells = {
                "session": Text(where, style="red"),
                "instruction": Text(message, style="red"),
                "verdict": Text("problem", style="bold red"),
            }
            return [cells.get(column.key, Text("")) for column in self.columns]
        ref = row.ref
        ws = self.workspace
        tags = ws.annotations.episode_tags(ref.session_id)
        facts = self.facts(ref)
        kind = facts.kind
        cells = {
            "session": Text(str(ref.session_id)),
            "episode": Text(strip_control(_episode_id(ref))),
            "instruction": Text(one_line(ref.task)),
            "steps": Text(str(ref.decision_steps)),
            "turns": Text(str(ref.decision_steps + ref.sub_events)),
            "calls": Text(str(ref.decision_steps)),
            "file": Text(strip_control(ref.file.path.name), style="dim"),
            "reward": _reward_cell(ref),
            "success": _outcome_cell(kind),
            "reason": _reason_cell(facts),
            "format": Text(strip_control(ref.format), style="dim"),
            "backup": Text("backup", style="magenta") if ref.completed_by_backup else Text(""),
            "verdict": self._verdict(ref),
            "tags": Text(one_line(" ".join(tags)), style="cyan"),
        }
        return [cells[column.key] for column in self.columns]

    def _verdict(self, ref: EpisodeRef) -> Text:
        problem = self.workspace.demos.problem_for(ref.session_id)
        if problem is not None:
            return Text("problem", style="bold red")
        report = self.workspace.results.get(ref.session_id)
        if report is None:
            return Text("—", style="dim")
        if report.cancelled:
            return Text("cancelled", style="yellow")
        if report.matched:
            if report.steps_equivalent:
                return Text(f"≈ {report.steps_equivalent} equiv.", style="yellow")
            return Text("✓ matched", style="green")
        return Text(f"✗ step {report.first_mismatch_step}", style="bold red")


def _haystack(ref: EpisodeRef) -> str:
    """What "/" searches, lowercased once: the session id, the log's episode id and the instruction."""
    if ref.episode_id is None:
        return f"{ref.session_id} {ref.task.lower()}"
    return f"{ref.session_id} {ref.episode_id.lower()} {ref.task.lower()}"


def _reward(ref: EpisodeRef) -> float:
    reward = listed_reward(ref)
    return reward if reward is not None else 0.0


def shared_ids(refs: Sequence[EpisodeRef]) -> bool:
    """Whether two files hold an episode of the same id (one SWE-bench instance run by two
    models): the browser then names each row's file."""
    files: dict[str, str] = {}
    return any(files.setdefault(_episode_id(ref), ref.file.name) != ref.file.name for ref in refs)


def _episode_id(ref: EpisodeRef) -> str:
    """The episode's id in its own log (the session id for a seed demo)."""
    episode_id = ref.episode_id
    return str(ref.session_id) if episode_id is None else episode_id


def _score(ref: EpisodeRef) -> float:
    """The reward, for sorting: seed demos read a missing reward as 0, other logs sort it first."""
    reward = listed_reward(ref)
    return float("-inf") if reward is None else reward


@dataclass(frozen=True, slots=True)
class OutcomeFacts:
    """What the browser shows, filters and sorts of an episode's outcome: its kind (succeeded,
    failed, errored, unknown), reason and whether it hit a limit, kept per row instead of the whole
    outcome (which can weigh more than its row)."""

    kind: str
    reason: str = ""
    hit_limit: bool = False

    @classmethod
    def of(cls, ref: EpisodeRef) -> OutcomeFacts:
        """Read from the index, never by opening the episode (:func:`~replay_tui.sources.listed_outcome`)."""
        return cls(*listed_outcome(ref))

    def passes(self, name: str) -> bool:
        """Whether the row passes the outcome filter ``name`` (:data:`OUTCOME_FILTERS`)."""
        if name == "failed":
            return self.kind in ("failed", "errored")
        if name == "errored":
            return self.kind == "errored"
        return self.kind != "succeeded" and self.hit_limit


_KIND_RANK = {"unknown": -1, "errored": 0, "failed": 1, "succeeded": 2}


def _reward_cell(ref: EpisodeRef) -> Text:
    reward = listed_reward(ref)
    if reward is None:
        return Text("—", style="dim")
    return Text(f"{reward:.2f}", style="green" if reward == 1.0 else ("yellow" if reward > 0 else "red"))


_KIND_CELLS = {"succeeded": ("✓", "green"), "failed": ("✗", "red"), "errored": ("!", "bold yellow")}
_REASON_STYLES = {"failed": "red", "errored": "yellow"}


def _outcome_cell(kind: str) -> Text:
    mark = _KIND_CELLS.get(kind)
    return Text("") if mark is None else Text(*mark)


def _reason_cell(facts: OutcomeFacts) -> Text:
    return Text(one_line(facts.reason), style=_REASON_STYLES.get(facts.kind, "dim"))


class BrowserScreen(SortActions, Screen):
    """All episodes: open one with enter, replay one or all, filter, sort, tag, export."""

    SORT_KEYS = SORTABLE
    AUTO_FOCUS = "#episodes"
    """The list has the keys from the first frame (Textual's default, the first focusable widget, is the
    filter box: focused, then blurred by on_mount, styled and drawn twice)."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", id="browser.filter"),
        Binding("s", "sort", "Sort", id="browser.sort"),
        Binding("S", "reverse_sort", "Reverse", show=False, id="browser.reverse_sort"),
        Binding(
            "f",
            "cycle_outcome",
            "Failures",
            tooltip="failed, then errored, then max-steps (each when some episode is), then all",
            id="browser.failures",
        ),
        Binding("O", "outcome", "Outcome", show=False, id="browser.outcome"),
        Binding("m", "toggle_filter('mismatches')", "Mismatches", id="browser.mismatches"),
        Binding("b", "toggle_filter('backup')", "Backup", show=False, id="browser.backup"),
        Binding("a", "toggle_filter('tagged')", "Tagged", show=False, id="browser.tagged"),
        Binding("r", "replay_one", "Replay", id="browser.replay"),
        Binding("R", "replay_all", "Replay all", id="browser.replay_all"),
        Binding("t", "tag", "Tag", id="browser.tag"),
        Binding("n", "note", "Note", show=False, id="browser.note"),
        Binding("escape", "clear", "Clear", show=False, id="browser.clear"),
    ]

    def __init__(self, replay_app: ReplayState) -> None:
        super().__init__(id="browser")
        self.replay_app = replay_app  # read only: changes are asked for with messages
        self.filters = Filters()
        self.columns = browser_columns(replay_app.workspace.demos.refs)

    @property
    def sort_keys(self) -> tuple[str, ...]:
        """The seed layout sorts as it always did; other layouts by each of their columns."""
        if self.columns is COLUMNS:
            return SORTABLE
        return tuple(column.key for column in self.columns)

    def compose(self) -> ComposeResult:
        with Horizontal(id="browser-top"):
            yield Static(id="browser-title")
            placeholder = (
                "filter: instruction or session id"
                if self.columns is COLUMNS
                else "filter: task, episode id or session"
            )
            yield Input(placeholder=placeholder, id="filter")
        yield LazyTable(id="episodes", marker=True)
        yield Static(id="status")
        yield KeysFooter()  # one widget, its keys in the first frame (widgets/footer.py)

    def on_mount(self) -> None:
        self.source = BrowserSource(self.replay_app.workspace, self.filters, columns=self.columns)
        table = self.query_one("#episodes", LazyTable)
        table.set_source(self.source, cursor=0)
        table.focus()
        self.update_title()
        self.post_message(StatusRefreshRequested())

    def on_screen_resume(self) -> None:
        if hasattr(self, "source"):
            self.rebuild()
            self.post_message(StatusRefreshRequested())

    @property
    def table(self) -> LazyTable:
        return self.query_one("#episodes", LazyTable)

    def current_session(self) -> int | None:
        if not len(self.source):
            return None
        return self.source.rows[self.table.cursor].session_id

    def rebuild(self, keep: int | None = None) -> None:
        """Re-filter and re-sort, keeping the cursor on the same session when it is still shown."""
        keep = self.current_session() if keep is None else keep
        self.source.rebuild(self.filters, self.sort_key, self.reverse)
        index = self.source.index_of(keep)
        self.table.set_source(self.source, cursor=index if index is not None else 0)
        self.update_title()

    def add_episodes(self, refs: Sequence[EpisodeRef]) -> None:
        """Episodes appended to a followed file (``--follow``), and its new problems: the rows and
        the title now if the browser is shown, else when it is back (:meth:`on_screen_resume`)."""
        if not hasattr(self, "source"):
            return  # not mounted yet: its source is built from the demo set, new episodes included
        self.source.add(refs)
        if self.is_current:
            self.rebuild()

    def episodes_grew(self, refs: Sequence[EpisodeRef]) -> None:
        """Episodes whose log grew (``--follow``): their rows show their new counts (re-filtered
        and re-sorted now if the browser is shown, else when it is back)."""
        if not hasattr(self, "source"):
            return
        self.source.grew(refs)
        if self.is_current:
            self.rebuild()

    def after_sort(self) -> None:
        self.table.show_start_and_cursor()

    def refresh_rows(self) -> None:
        self.table.refresh_rows()
        self.update_title()

    def refresh_sessions(self, session_ids: Collection[int]) -> None:
        """The results of these sessions changed (a replay's batch): redraw the rows only when one of
        them is on screen; the others are drawn with their new results when they scroll in."""
        rows = self.source.rows
        if any(rows[index].session_id in session_ids for index in self.table.visible_rows()):
            self.table.refresh_rows()

    def update_title(self) -> None:
        ws = self.replay_app.workspace
        total = len(ws.demos)
        shown = self.source.episode_count
        problems = ws.problem_count()
        text = Text()
        text.append("replay-tui ", style="bold")
        text.append(f"{shown}/{total} episodes", style="bold")
        if problems:
            text.append(f"  {problems} problems", style="bold red")
        warnings = ws.field_warning_count()
        if warnings:
            text.append(f"  ⚠ {warnings} invalid field{'s' if warnings != 1 else ''} read as defaults", style="yellow")
        arrow = "↓" if self.reverse else "↑"
        text.append(f"  sort: {self.sort_key} {arrow}", style="dim")
        described = self.filters.describe()
        if described:
            text.append(f"  filter: {described}", style="cyan")
        self.query_one("#browser-title", Static).update(text)

    # -- actions ----------------------------------------------------------------------------
    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filters.text = event.value.strip()
        self.rebuild()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    def action_clear(self) -> None:
        filter_input = self.query_one("#filter", Input)
        if self.replay_app.replaying:
            self.post_message(ReplayCancelRequested())
        elif filter_input.has_focus or filter_input.value:
            filter_input.value = ""
            self.table.focus()

    @on(LazyTable.HeaderClicked, "#episodes")
    def _header_clicked(self, event: LazyTable.HeaderClicked) -> None:
        self.sort_by(self.source.columns[event.column].key)

    def action_cycle_outcome(self) -> None:
        """The next outcome filter some episode passes (:data:`OUTCOME_FILTERS`), then every outcome."""
        names = self.source.outcome_filters()
        current = self.filters.outcome
        later = names[names.index(current) + 1 :] if current in names else names
        self.filters.outcome = "" if current and not later else (later[0] if later else "")
        self.rebuild()

    def action_toggle_filter(self, name: str) -> None:
        setattr(self.filters, name, not getattr(self.filters, name))
        self.rebuild()

    @on(LazyTable.Selected, "#episodes")
    def _open(self, event: LazyTable.Selected) -> None:
        row = self.source.rows[event.index]
        if row.ref is not None:
            self.post_message(EpisodeOpenRequested(row.ref.session_id))
        elif row.problem is not None:
            self.notify(strip_control(row.problem.one_line()), title="Load problem", severity="error", markup=False)

    def action_replay_one(self) -> None:
        session = self.current_session()
        if session is not None:
            self.post_message(EpisodeOpenRequested(session, replay=True))

    def action_replay_all(self) -> None:
        sessions = [row.session_id for row in self.source.rows if row.session_id is not None]
        self.post_message(ReplayRequested(sessions))

    def action_outcome(self) -> None:
        session = self.current_session()
        if session is not None:
            self.post_message(OutcomeRequested(session))

    def action_tag(self) -> None:
        session = self.current_session()
        if session is not None:
            self.post_message(TagRequested(session))

    def action_note(self) -> None:
        session = self.current_session()
        if session is not None:
            self.post_message(NoteRequested(session))

    def shown_sessions(self) -> tuple[str, list[int]] | None:
        """(the active filter said in words, the sessions it shows), or None when no filter is on:
        what the export dialog offers as "only the episodes shown"."""
        described = self.filters.describe()
        if not described:
            return None
        return described, [row.session_id for row in self.source.rows if row.session_id is not None]
