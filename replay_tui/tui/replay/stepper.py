"""The episode stepper: step list beside observation, prompt and thinking; expected vs predicted.

Every episode is shown from its :class:`~replay_tui.episodes.model.Trajectory`'s typed fields. A
seed demo file's keeps the seed's page panes (:func:`replay_tui.sources.shown_as_pages`: the recorded
prompt text parsed, its sub-events by their ``event`` and fields); another log's gets a fourth pane, the action
(the model's text, the call as the log shows it, long arguments indented, the tool result), its
prompt as chat messages with their tool calls, and, when its steps hold screenshots, a screenshot
pane (``i`` toggles it).
"""

from __future__ import annotations

import gc
import weakref
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.screen import Screen
from textual.visual import VisualType
from textual.widgets import Static

from replay_tui.episodes.model import Trajectory, TrajectoryStep
from replay_tui.episodes.problems import EpisodeLoadError, LoadProblem, problems_at
from replay_tui.gcpause import gc_paused
from replay_tui.sanitize import strip_control
from replay_tui.sources import field_problems, is_call_judged, shown_as_pages, trajectory_of
from replay_tui.tui.messages import (
    EpisodeNavRequested,
    NoteRequested,
    OutcomeRequested,
    ParentReturnRequested,
    ReplayCancelRequested,
    ReplayRequested,
    ReplayState,
    ReturnPoint,
    SearchStepRequested,
    StatusRefreshRequested,
    SubagentOpenRequested,
    TagRequested,
)
from replay_tui.tui.replay.episode_title import episode_title
from replay_tui.tui.replay.step_detail_text import detail_text, with_field_problems
from replay_tui.tui.replay.step_list import (
    STEPS_WIDTH,
    StepList,
    StepRow,
    StepsSource,
    build_rows,
    row_marks,
    shared_warnings,
)
from replay_tui.tui.replay.step_panes import PANES, StepPanes
from replay_tui.tui.widgets.find_bar import FindBar
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.outcome_text import outcome_detail
from replay_tui.tui.widgets.pane_tabs import PaneTabs
from replay_tui.tui.widgets.step_detail import StepDetail

if TYPE_CHECKING:  # Pillow loads at the first screenshot, the runner at the first replay, not at the app's launch
    from replay_tui.runner import StepResult


class StepperScreen(Screen):
    """One episode, step by step, with the live verdict of the current replay."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "step(1)", "Next step", show=False, id="stepper.next"),
        Binding("k", "step(-1)", "Prev step", show=False, id="stepper.prev"),
        Binding("g", "first", "First", show=False, id="stepper.first"),
        Binding("G", "last", "Last", show=False, id="stepper.last"),
        Binding("right_square_bracket", "mismatch(1)", "Next mismatch", id="stepper.next_mismatch"),
        Binding("left_square_bracket", "mismatch(-1)", "Prev mismatch", show=False, id="stepper.prev_mismatch"),
        Binding(
            "right_curly_bracket",
            "mismatch(1, True)",
            "Next difference (≈ too)",
            show=False,
            id="stepper.next_difference",
        ),
        Binding(
            "left_curly_bracket",
            "mismatch(-1, True)",
            "Prev difference (≈ too)",
            show=False,
            id="stepper.prev_difference",
        ),
        Binding("r", "replay", "Replay", id="stepper.replay"),
        Binding("O", "outcome", "Outcome", show=False, id="stepper.outcome"),
        Binding("a", "subagent", "Open the sub-agent this step started", show=False, id="stepper.subagent"),
        Binding("z", "maximize_pane", "Zoom", id="stepper.zoom"),
        Binding("backslash", "toggle_steps", "Steps list", show=False, id="stepper.toggle_steps"),
        Binding("w", "cycle_pane(1)", "Next pane", show=False, id="stepper.next_pane"),
        Binding("W", "cycle_pane(-1)", "Previous pane", show=False, id="stepper.previous_pane"),
        Binding("1", "pane(0)", "Pane 1", show=False, id="stepper.pane_1"),
        Binding("2", "pane(1)", "Pane 2", show=False, id="stepper.pane_2"),
        Binding("3", "pane(2)", "Pane 3", show=False, id="stepper.pane_3"),
        Binding("4", "pane(3)", "Pane 4", show=False, id="stepper.pane_4"),
        Binding("ctrl+f", "find", "Find", id="stepper.find"),
        Binding("f3", "find_next(1)", "Find next", show=False, id="stepper.find_next"),
        Binding("shift+f3", "find_next(-1)", "Find previous", show=False, id="stepper.find_previous"),
        Binding("h", "toggle_sub_events", "Sub-events", show=False, id="stepper.sub_events"),
        Binding("o", "toggle_after", "Obs before/after", show=False, id="stepper.after"),
        Binding("x", "toggle_trace", "Policy call", show=False, id="stepper.trace"),
        Binding("i", "toggle_screenshot", "Screenshot", id="stepper.screenshot"),
        Binding("t", "tag_step", "Tag step", id="stepper.tag_step"),
        Binding("T", "tag_episode", "Tag episode", show=False, id="stepper.tag_episode"),
        Binding("n", "note_step", "Note", show=False, id="stepper.note_step"),
        Binding("N", "note_episode", "Episode note", show=False, id="stepper.note_episode"),
        Binding("escape", "back", "Back", id="stepper.back"),
        Binding("J", "episode(1)", "Next episode", show=False, id="stepper.next_episode"),
        Binding("K", "episode(-1)", "Prev episode", show=False, id="stepper.prev_episode"),
        Binding(
            "right_parenthesis", "episode(1, True)", "Next episode with mismatches", show=False, id="stepper.next_bad"
        ),
        Binding(
            "left_parenthesis", "episode(-1, True)", "Prev episode with mismatches", show=False, id="stepper.prev_bad"
        ),
        Binding("full_stop", "search_result(1)", "Next search result", show=False, id="stepper.next_result"),
        Binding("comma", "search_result(-1)", "Prev search result", show=False, id="stepper.prev_result"),
    ]

    def __init__(
        self,
        session_id: int,
        replay_app: ReplayState,
        *,
        step_label: str | None = None,
        position: int | None = None,
        find: str = "",
        after: bool = False,
        back: ReturnPoint | None = None,
    ):
        super().__init__(id="stepper")
        self.back = back
        """Set in a sub-agent's stepper opened with ``a``: esc returns to the parent's step."""
        self.session_id = session_id
        self.start_label = step_label  # the step the cursor starts on (None: the first entry)
        self.start_position = position  # or the trajectory entry it starts on (a search result)
        self.start_find = find  # the find box's query on opening (a search result's)
        self.offered_at: int | None = None  # the cursor where ] offered the next episode's first mismatch
        self.replay_app = replay_app  # read only: changes are asked for with messages
        self.trajectory: Trajectory | None = None
        """The episode shown, as the one model (None when it could not be read: :attr:`problem`)."""
        self.field_problems: list[LoadProblem] = []
        """The invalid fields of its steps, each read as its default (a seed file's)."""
        self.problem: LoadProblem | None = None
        self.rows: list[StepRow] = []
        self.show_sub_events = True
        self.show_after = after
        self.show_trace = False
        self.find_hits: list[tuple[str, int]] = []
        self.find_index = -1
        self.show_shot = True
        self.has_screenshots = False  # set once the episode is loaded
        self.shared_warnings: set[str] = set()  # said once per file (say_shared_warnings), not per step
        self._reloading = False
        self.steps_collapsed = False  # backslash hides the step list (j/k still step)
        self.tabbed = False  # the panes one at a time (set from the width, see layout_width)
        self.active_pane = "observation"  # the tab shown, and what z zooms from the step list
        self._steps_content_width = STEPS_WIDTH[0]  # until the rows are known
        self._listed_width = 0  # the step list's width as last laid out (0: hidden)

    @property
    def general(self) -> bool:
        """True for an episode of another format: the stepper shows the log's own fields."""
        return self.trajectory is not None and not shown_as_pages(self.trajectory)

    def compose(self) -> ComposeResult:
        yield Static(id="episode-title")
        yield Static(id="outcome-detail")
        with Horizontal(id="stepper-body"):
            yield StepList(id="steps")
            with Vertical(id="stepper-right"):
                yield StepDetail(id="step-detail")
                yield PaneTabs(id="pane-tabs")
                yield StepPanes(id="panes")
        yield FindBar(id="find")
        yield Static(self._status_below(), id="status")
        yield KeysFooter()

    def _status_below(self) -> VisualType:
        """The status line as the screen this one covers shows it: the App's status, the same on
        every screen, so the first frame has it; the App's refresh (StatusRefreshRequested, on
        mount) comes a frame later."""
        below = [screen for screen in self.app.screen_stack if screen is not self]
        if below:
            for status in below[-1].query("#status").results(Static):
                return status.content
        return ""

    def on_mount(self) -> None:
        # the episode, its rows and panes live as long as the screen: built with the collector off,
        # and frozen (the end of _mount) before it is back (a 2,000-step trajectory's new objects
        # were walked by ~60 young collections on the way, 10-25 ms of its first step)
        with gc_paused(tenure=False):
            self._mount()

    def _mount(self) -> None:
        self.load()
        self.rows = build_rows(self.trajectory) if self.trajectory is not None else []
        trajectory = self.trajectory
        if self.general and trajectory is not None:
            self.has_screenshots = any(step.screenshot for step in trajectory.steps)
            self.panes.set_general()
        self.layout_panes()
        self.panes.hint_sizes(self._pane_sizes.get(self._layout_key(), {}))
        start = next((n for n, row in enumerate(self.rows) if row.label == self.start_label), 0)
        # the panes follow the cursor in the same call (not through the table's Highlighted
        # message, a hop later): the step list, the detail and the panes change in one frame
        self.watch(self.steps_table, "cursor", self._cursor_moved, init=False)
        self.say_shared_warnings()
        self.reload_steps(cursor=start if self.start_label is not None else 0)
        self.update_title()
        self.steps_collapsed, self.active_pane = self._layout_kept.get(self.app, (False, self.active_pane))
        self.layout_width()
        self.layout_panes()
        if self.steps_collapsed:
            self.show_pane(self.active_pane)
        else:
            self.steps_table.focus()
        self.post_message(StatusRefreshRequested())
        if self.start_position is not None or self.start_find:
            self.go_to(position=self.start_position, find=self.start_find, after=self.show_after)
        # Everything alive now (the workspace, this screen, the episode) outlives the keys pressed
        # here: keep the cyclic GC from walking it again and again (a full collection over it cost
        # ~100 ms of CPU every few keys). Unfrozen when the screen goes, so nothing of it leaks.
        gc.freeze()

    def on_unmount(self) -> None:
        gc.unfreeze()

    def load(self) -> bool:
        """Read the episode (through the EpisodeSet's cache): False, and nothing changed, when it
        cannot be read (its problem is set if nothing was shown yet)."""
        demos = self.replay_app.workspace.demos
        try:
            self.trajectory = trajectory_of(demos, self.session_id)
            self.field_problems = field_problems(demos, self.session_id)
        except EpisodeLoadError as exc:
            if self.trajectory is None:
                self.problem = exc.problem
            return False
        self.problem = None
        return True

    def remember_pane_sizes(self) -> None:
        """Keep the panes' sizes for the next stepper of this layout (see TextPane.size_hint)."""
        if self.maximized is None:
            sizes = self.panes.sizes()
            if sizes and all(size.width > 0 for size in sizes.values()):
                StepperScreen._pane_sizes[self._layout_key()] = sizes

    _layout_kept: ClassVar[weakref.WeakKeyDictionary[object, tuple[bool, str]]] = weakref.WeakKeyDictionary()
    _files_warned: ClassVar[weakref.WeakKeyDictionary[object, set[tuple[str, str]]]] = weakref.WeakKeyDictionary()
    """Per app, the (file, warning) pairs already said: a warning every step carries is said once per file."""

    def say_shared_warnings(self) -> None:
        """A warning every replayable step of the episode carries (WebShop human logs record no
        available actions: every step infers them) is said once per file, not on each step."""
        self.shared_warnings = shared_warnings(self.rows)
        if not self.shared_warnings:
            return
        file = self.replay_app.workspace.demos.ref(self.session_id).file.path.name
        said = self._files_warned.setdefault(self.app, set())
        for warning in sorted(self.shared_warnings):
            if (file, warning) not in said:
                said.add((file, warning))
                self.notify(f"{file}: every step: {warning}", severity="warning", timeout=8, markup=False)

    """Per app: the step list hidden or not and the tab shown, kept for the next episode opened."""

    _pane_sizes: ClassVar[dict[tuple[object, ...], dict[str, Size]]] = {}
    """The panes' content sizes when a stepper of this layout last closed: the next one wraps for them."""

    def _layout_key(self) -> tuple[object, ...]:
        return (self.app.size, self.general, self.with_shot)

    # -- state ------------------------------------------------------------------------------
    @property
    def steps_table(self) -> StepList:
        return self.query_one("#steps", StepList)

    @property
    def source(self) -> StepsSource:
        """The rows listed (sub-events hidden or not) and their verdicts."""
        return self.steps_table.steps

    def verdicts(self) -> dict[str, StepResult]:
        return self.replay_app.step_results.get(self.session_id, {})

    def reload_steps(self, cursor: int | None = None) -> None:
        trajectory = self.trajectory
        calls = self.general and trajectory is not None and is_call_judged(trajectory.format)
        source = StepsSource(self.rows, self.verdicts(), self.show_sub_events, general=self.general, calls=calls)
        source.marks = self.step_marks
        self._reloading = True  # the cursor may move on the way: show the step once, below
        try:
            self.steps_table.show_rows(source, cursor=cursor)
        finally:
            self._reloading = False
        self._steps_content_width = self.steps_table.content_width()
        self.layout_width()
        self.show_current()

    def episode_grew(self) -> None:
        """The episode's log grew (``--follow``): its steps are listed again, the cursor stays on
        the row it was on (steps are only appended; the last one may have gained its result)."""
        if not self.load() or self.trajectory is None:
            return  # what was shown stays; the problem is in the browser's list
        self.rows = build_rows(self.trajectory)
        self.panes.forget_lines()
        self.reload_steps(cursor=self.steps_table.cursor if len(self.source) else 0)
        self.update_title()

    def refresh_verdicts(self) -> None:
        """A verdict arrived: redraw the marks and the detail of the current step."""
        self.steps_table.set_verdicts(self.verdicts())
        self.show_detail()
        self.update_title()
        self.refresh_model_output()

    def current_row(self) -> StepRow | None:
        return self.steps_table.current_row

    def update_title(self) -> None:
        annotations = self.replay_app.workspace.annotations
        title = episode_title(
            self.session_id,
            self.trajectory if self.problem is None else None,
            general=self.general,
            invalid_fields=len(self.field_problems),
            verdicts=self.verdicts(),
            tags=annotations.episode_tags(self.session_id),
            note=annotations.get(self.session_id, None),
        )
        self.query_one("#episode-title", Static).update(title)
        if self.problem is None:
            self.update_outcome()

    def update_outcome(self) -> None:
        """The outcome's particulars under the title (target, answer, explanation, checks, error),
        wrapped at word boundaries; hidden when the log records none (and for a seed demo)."""
        trajectory = self.trajectory
        detail = outcome_detail(trajectory.outcome) if self.general and trajectory is not None else None
        widget = self.query_one("#outcome-detail", Static)
        widget.display = detail is not None
        widget.update(detail if detail is not None else "")

    def _cursor_moved(self) -> None:
        self.offered_at = None  # ] offers the next episode again before it opens it
        if not self._reloading:
            self.show_current(stepping=True)

    def show_current(self, *, stepping: bool = False) -> None:
        """Show the step under the cursor: the detail and the panes, as one update of the screen."""
        with self.app.batch_update():
            self.show_panes()
            self.show_detail(stepping=stepping)

    @property
    def panes(self) -> StepPanes:
        return self.query_one("#panes", StepPanes)

    def show_panes(self) -> None:
        row = self.current_row()
        verdict = self.verdicts().get(row.label) if row is not None and row.label else None
        self.panes.show_step(
            row, verdict, problem=self.problem is not None, after=self.show_after, trace=self.show_trace
        )
        if self.find_bar.value:
            self._collect_hits()  # set_text already searched each pane for the find box's query

    def source_step(self, row: StepRow) -> TrajectoryStep | None:
        """The step behind ``row`` whose log's own fields are shown (an episode of another format's)."""
        return row.entry if self.general else None

    # -- screenshot -------------------------------------------------------------------------
    def action_toggle_screenshot(self) -> None:
        self.show_shot = not self.show_shot
        self.layout_panes()
        if self.show_shot:
            self.panes.show_screenshot(self.current_row())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_screenshot":
            return self.has_screenshots  # hidden from the footer for episodes without screenshots
        return True

    def refresh_model_output(self) -> None:
        """A verdict arrived: show the replayed model's output under the current step's thinking
        (only that pane, and only when its call is new; the other panes keep their scroll)."""
        row = self.current_row()
        if row is None or self.show_trace or self.problem is not None or not row.decision:
            return
        self.panes.refresh_thinking(row, self.verdicts().get(row.label) if row.label else None)

    def action_toggle_trace(self) -> None:
        self.show_trace = not self.show_trace
        self.show_panes()

    def show_detail(self, *, stepping: bool = False) -> None:
        """The current step's detail; ``stepping`` (the cursor moved) keeps the panes below still
        (see :class:`StepDetail`)."""
        detail = self.query_one("#step-detail", StepDetail)
        if self.problem is not None:
            text = Text("⚠ ", style="bold red")
            text.append(strip_control(self.problem.one_line()), style="red")
            detail.update(text)
            return
        row = self.current_row()
        if row is None:
            detail.update(Text("this episode has no trajectory entries", style="dim"))
            return
        text = detail_text(
            row,
            self.verdicts().get(row.label) if row.label else None,
            general=self.general,
            not_replayed=self.not_replayed,
            annotation=self.replay_app.workspace.annotations.get(self.session_id, self.note_label(row)),
            shared_warnings=self.shared_warnings,
        )
        detail.show_step(with_field_problems(text, problems_at(self.field_problems, row.position)), stepping=stepping)

    def not_replayed(self) -> Text:
        """Why a step has no verdict: the replay stopped before it, or there was none yet."""
        report = self.replay_app.workspace.results.get(self.session_id)
        if report is not None and report.stopped_early and not report.cancelled:
            stopped_at = report.first_mismatch_step or "?"
            return Text(
                f"— not reached: the replay stopped at the first mismatch (step {stopped_at}); "
                "p → mismatch: allow to continue past mismatches",
                style="dim italic",
            )
        return Text(
            "— not replayed yet (r replays with " + self.replay_app.workspace.settings.describe() + ")",
            style="dim italic",
        )

    # -- navigation -------------------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        self.steps_table.set_cursor(self.steps_table.cursor + delta)

    def action_first(self) -> None:
        self.steps_table.set_cursor(0)

    def action_last(self) -> None:
        self.steps_table.set_cursor(len(self.source) - 1)

    def action_mismatch(self, direction: int, equivalents: bool = False) -> None:
        """Move to the next (previous) mismatch; with ``equivalents``, also stop at tolerated steps."""
        cursor = self.steps_table.cursor
        index = self.steps_table.next_mismatch(direction, equivalents)
        if index is not None:
            self.steps_table.set_cursor(index)
            return
        if direction > 0 and not equivalents and self.verdicts():
            # the episode's last mismatch: offer the next episode's first; the same key again opens it
            self.post_message(
                EpisodeNavRequested(self.session_id, 1, mismatching=True, offer=self.offered_at != cursor)
            )
            self.offered_at = cursor
            return
        what = "mismatch or equivalent step" if equivalents else "mismatch"
        self.notify(
            f"no further {what}" if self.verdicts() else "replay first (r) to find mismatches",
            severity="warning",
            timeout=2,
        )

    def action_episode(self, direction: int, mismatching: bool = False) -> None:
        """The next (previous) episode of the browser's list; with ``mismatching``, the next one
        with mismatches, at its first mismatch."""
        self.post_message(EpisodeNavRequested(self.session_id, direction, mismatching=mismatching))

    def action_search_result(self, direction: int) -> None:
        self.post_message(SearchStepRequested(direction))

    def go_to(
        self, *, step_label: str | None = None, position: int | None = None, find: str = "", after: bool = False
    ) -> None:
        """Move to a step (by label or trajectory position) and show ``find`` highlighted in the
        panes (a search result: the observation after the action when ``after``)."""
        if position is not None and not self.show_sub_events and position not in {r.position for r in self.source.rows}:
            self.show_sub_events = True  # the result is in a sub-event the list hides
            self.reload_steps(cursor=0)
        if after != self.show_after:
            self.show_after = after
            self.show_panes()
        index = self.steps_table.index_of(position=position, label=step_label)
        if index is not None:
            self.steps_table.set_cursor(index)
        if find:
            box = self.find_bar
            box.display = True
            if box.value == find:
                self.run_find(find)
                self.action_find_next(1)
            else:
                box.value = find  # its Search message searches the panes and shows the first match
            self.steps_table.focus()

    def action_toggle_sub_events(self) -> None:
        row = self.current_row()
        self.show_sub_events = not self.show_sub_events
        self.reload_steps(cursor=0)
        if row is not None:
            for index, candidate in enumerate(self.source.rows):
                if candidate.position >= row.position:
                    self.steps_table.set_cursor(index)
                    break

    def action_toggle_after(self) -> None:
        self.show_after = not self.show_after
        self.show_panes()

    def action_maximize_pane(self) -> None:
        """Zoom the focused pane; from the step list, the pane last used (the tab shown): at 80
        columns that is the way to read a pane whole. j/k still step while zoomed."""
        if self.maximized is not None:
            self.minimize()
            return
        shot = self.panes.shot
        focused = self.focused
        if focused is not None and (focused is shot or shot in focused.ancestors):
            self.maximize(shot, container=False)
            return
        if focused is None or focused.id not in PANES:
            names = self.panes.names(with_shot=self.with_shot)
            name = self.active_pane if self.active_pane in names else names[0]
            if name == "shot":
                self.maximize(shot, container=False)
                return
            focused = self.panes.pane(name)
            focused.display = True
            focused.focus()
        self.maximize(focused)

    def action_outcome(self) -> None:
        self.post_message(OutcomeRequested(self.session_id))

    def action_replay(self) -> None:
        self.post_message(ReplayRequested([self.session_id]))

    def action_back(self) -> None:
        if self.replay_app.replaying:
            self.post_message(ReplayCancelRequested())
        elif self.find_bar.display:
            self.close_find()
        elif self.maximized is not None:
            self.minimize()
        elif self.back is not None:
            self.remember_pane_sizes()
            self.post_message(ParentReturnRequested(self.back))
        else:
            self.remember_pane_sizes()
            self.app.pop_screen()

    def action_subagent(self) -> None:
        """Open the sub-agent episode the step under the cursor started (esc there comes back here)."""
        row = self.current_row()
        step = self.source_step(row) if row is not None else None
        if row is None or step is None or not step.subagent:
            self.notify("this step started no sub-agent", severity="warning", timeout=2)
            return
        self.remember_pane_sizes()
        self.post_message(SubagentOpenRequested(step.subagent, ReturnPoint(self.session_id, row.label, self.back)))

    # -- layout -----------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        self.layout_width()

    def layout_width(self) -> None:
        """Size the step list to its content within its bounds (or hide it), and show the panes as
        tabs when each would be narrower than PANE_MIN_WIDTH."""
        width = self.size.width
        if width <= 0:
            return
        steps = self.steps_table
        listed = 0 if self.steps_collapsed else steps.width_within(width, self._steps_content_width)
        steps.display = not self.steps_collapsed
        self._listed_width = listed
        if listed and steps.styles.width != listed:
            steps.styles.width = listed
        tabbed = self.panes.wants_tabs(width - listed, self.size.height, with_shot=self.with_shot)
        if tabbed != self.tabbed:
            self.tabbed = tabbed
            self.layout_panes()

    @property
    def with_shot(self) -> bool:
        """The screenshot pane is shown: the episode has screenshots and ``i`` has not hidden it."""
        return self.show_shot and self.has_screenshots

    def layout_panes(self) -> None:
        """Show the episode's panes side by side, or only the active one with a tab bar above."""
        names = self.panes.names(with_shot=self.with_shot)
        if self.active_pane not in names:
            self.active_pane = names[1] if names[0] == "shot" and len(names) > 1 else names[0]
        self.panes.show_only(names, tabbed=self.tabbed, active=self.active_pane, with_shot=self.with_shot)
        tabs = self.query_one("#pane-tabs", PaneTabs)
        tabs.display = self.tabbed
        if self.tabbed:
            titles = self.panes.tab_titles(names)
            tabs.show_tabs(titles, names.index(self.active_pane), room=self.size.width - self._listed_width - 2)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        name = event.widget.id
        if name in PANES or name == "shot":
            self.active_pane = name
            self._layout_kept[self.app] = (self.steps_collapsed, name)

    def action_pane(self, number: int) -> None:
        """Show pane ``number`` (its tab, when tabbed) and focus it."""
        names = self.panes.names(with_shot=self.with_shot)
        if not 0 <= number < len(names):
            return
        self.show_pane(names[number])

    def action_cycle_pane(self, delta: int) -> None:
        names = self.panes.names(with_shot=self.with_shot)
        current = names.index(self.active_pane) if self.active_pane in names else 0
        self.show_pane(names[(current + delta) % len(names)])

    def show_pane(self, name: str, *, focus: bool = True) -> None:
        self.active_pane = name
        self._layout_kept[self.app] = (self.steps_collapsed, name)
        if self.tabbed:
            self.layout_panes()
            if name == "shot":
                self.panes.show_screenshot(self.current_row())
        if focus and self.maximized is None:
            self.query_one(f"#{name}").focus()

    def action_toggle_steps(self) -> None:
        """Hide or show the step list (j/k, [ and ] still step): the panes get its width."""
        self.steps_collapsed = not self.steps_collapsed
        self._layout_kept[self.app] = (self.steps_collapsed, self.active_pane)
        if self.steps_collapsed and self.steps_table.has_focus:
            self.show_pane(self.active_pane)
        self.layout_width()
        if not self.steps_collapsed:
            self.steps_table.focus()

    # -- find -------------------------------------------------------------------------------
    @property
    def find_bar(self) -> FindBar:
        return self.query_one("#find", FindBar)

    def action_find(self) -> None:
        self.find_bar.open()

    def close_find(self) -> None:
        self.find_bar.close()
        self.run_find("")
        self.steps_table.focus()

    @on(FindBar.Search)
    def _find_changed(self, event: FindBar.Search) -> None:
        self.run_find(event.query)
        if self.find_hits:
            self.action_find_next(1)

    @on(FindBar.Step)
    def _find_step(self, event: FindBar.Step) -> None:
        self.action_find_next(event.direction)

    @on(FindBar.Close)
    def _find_closed(self) -> None:
        self.close_find()

    def on_key(self, event: Any) -> None:
        if event.key == "i" and not self.has_screenshots and not self.find_bar.has_focus:
            # the binding is off (and out of the footer) for an episode without screenshots: say why
            self.notify("no screenshot recorded in this episode", severity="warning", timeout=4)
            event.stop()

    def run_find(self, query: str) -> int:
        self.panes.find(query)
        return self._collect_hits()

    def _collect_hits(self) -> int:
        """The matches the panes hold for the current query, in pane order; none is current yet."""
        self.find_hits = self.panes.matches()
        self.find_index = -1
        self.update_find_status()
        return len(self.find_hits)

    def action_find_next(self, direction: int) -> None:
        if not self.find_hits:
            self.update_find_status()
            return
        self.find_index = (self.find_index + direction) % len(self.find_hits)
        current_pane, current_number = self.find_hits[self.find_index]
        if self.tabbed and current_pane != self.active_pane:
            self.show_pane(current_pane, focus=False)  # the match is on another tab
        self.panes.show_match(current_pane, current_number)
        self.update_find_status()

    def update_find_status(self) -> None:
        message = self.find_status()
        if message is None:
            self.post_message(StatusRefreshRequested())
            return
        self.query_one("#status", Static).update(message)

    def find_status(self) -> Text | None:
        """What the find box found, for the status line (None while it holds no query); the App
        puts it before its own status when it redraws the line. None too while the screen is not
        composed yet or already taken down: a replay's progress redraws the line at any moment."""
        boxes = self.query("#find").results(FindBar)
        box = next(boxes, None)
        query = box.value if box is not None else ""
        if not query:
            return None
        if not self.find_hits:
            return Text(f"find: no match for {query!r}", style="yellow")
        pane, _ = self.find_hits[max(0, self.find_index)]
        return Text(f"find: match {max(0, self.find_index) + 1}/{len(self.find_hits)} in {pane}")

    # -- triage -----------------------------------------------------------------------------
    def note_label(self, row: StepRow) -> str:
        """The label a row's tags and note are stored under: a replayed step's label; for a row
        not replayed (an assistant reply, a tool result), the step label the log gives it (the
        one the list and the header show), else its place in the trajectory (``entry N``)."""
        if row.label is not None:
            return row.label
        source_step = self.source_step(row) if self.general else None
        return source_step.label if source_step is not None and source_step.label else f"entry {row.position}"

    def _step_label(self) -> str | None:
        row = self.current_row()
        return None if row is None else self.note_label(row)

    def action_tag_step(self) -> None:
        label = self._step_label()
        if label is not None:
            self.post_message(TagRequested(self.session_id, label))

    def action_tag_episode(self) -> None:
        self.post_message(TagRequested(self.session_id))

    def action_note_step(self) -> None:
        label = self._step_label()
        if label is not None:
            self.post_message(NoteRequested(self.session_id, label))

    def action_note_episode(self) -> None:
        self.post_message(NoteRequested(self.session_id))

    def annotations_changed(self) -> None:
        self.show_detail()
        self.update_title()
        self.steps_table.refresh_rows()  # the tag and note marks

    # -- marks: tags, notes, invalid fields ---------------------------------------------------
    def step_marks(self, row: StepRow) -> Text | None:
        """The step list's marks of ``row``: its invalid fields, tags and note."""
        annotation = self.replay_app.workspace.annotations.get(self.session_id, self.note_label(row))
        return row_marks(bool(problems_at(self.field_problems, row.position)), annotation)
