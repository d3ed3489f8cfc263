"""The replay-tui App and its factory (shared by the CLI, the tests and the screenshot script).

Threading model: replays run in a thread worker that only posts messages (``messages.py``);
the handlers on this App own every state change and tell the visible screen to redraw. The
screens ask for changes with messages too, and read the App only as a ``ReplayState``.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import get_current_worker

from replay_tui.annotations import AnnotationError
from replay_tui.config import Config, default_config_path, load_config, load_state, remember
from replay_tui.episodes.problems import DemoFileError, LoadProblem
from replay_tui.examples import example_path
from replay_tui.runs import RunStore
from replay_tui.sanitize import in_line, strip_control
from replay_tui.sources import IndexingLog
from replay_tui.tui.app_base import stylesheets
from replay_tui.tui.messages import (
    ComparisonFailed,
    ComparisonReady,
    EpisodeNavRequested,
    EpisodeOpenRequested,
    NoteRequested,
    OutcomeGroupsRequested,
    OutcomeRequested,
    ParentReturnRequested,
    Rejudged,
    ReplayCancelRequested,
    ReplayFinished,
    ReplayProgressed,
    ReplayRequested,
    SearchStepRequested,
    StatusRefreshRequested,
    SubagentOpenRequested,
    TagRequested,
)
from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.run_history import RunHistory
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.workspace import ReplaySettings, Workspace

if TYPE_CHECKING:
    from replay_tui.runner import StepResult, SummaryReport
    from replay_tui.search import SearchHit
    from replay_tui.tui.replay.feed import ReplayFeed
    from replay_tui.tui.screens.modals import ExportChoice
    from replay_tui.tui.screens.search import SearchScreen
    from replay_tui.visual.batch import BatchPair


FOLLOW_INTERVAL = 0.5
"""Seconds between two looks at the size of a followed file (``--follow``)."""
VALIDATION_POST_INTERVAL = 0.1
"""Seconds between the background validation's reports of the problems it found (batched)."""
VALIDATION_DELAY = 0.3
"""Seconds the background validation waits after the first refresh before it starts parsing (it
competes for the GIL with the UI thread; the browser's first paint should not wait for it)."""


class ProblemsFound(Message):
    """Malformed episodes the background validation found (recorded in the EpisodeSet already)."""

    def __init__(self, problems: list[LoadProblem]):
        super().__init__()
        self.problems = problems


class ReplayApp(RunHistory):
    """Browse recorded episodes, replay them with a policy, judge, triage and export."""

    TITLE = "replay-tui"
    CSS_PATH = stylesheets("replay.tcss")
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [  # after AppBase's help (? f1)
        Binding("p", "settings", "Policy", id="app.settings"),
        Binding("e", "export", "Export", id="app.export"),
        Binding("v", "visual", "Visual", id="app.visual"),
        Binding("c", "compare", "Compare with a run", show=False, id="app.compare"),
        Binding("M", "groups", "Mismatch groups", show=False, id="app.groups"),
        Binding("H", "runs", "Runs", show=False, id="app.runs"),
        Binding("F", "search", "Find in all episodes", show=False, id="app.search"),
        Binding("ctrl+g,colon", "goto", "Go to session", show=False, id="app.goto"),
        Binding("ctrl+x", "cancel_replay", "Cancel replay", show=False, id="app.cancel_replay"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(
        self,
        workspace: Workspace,
        *,
        config: Config | None = None,
        export_dir: Path | None = None,
        visual: VisualBatch | None = None,
        runs: RunStore | None = None,
        save_runs: bool = True,
        out_dir: Path | None = None,
    ):
        super().__init__(runs, save_runs=save_runs)
        self.workspace = workspace
        self.visual = visual or VisualBatch()
        self.config = config or Config()
        self.out_dir = out_dir.resolve() if out_dir is not None else None
        """The one folder the dialogs may write to (``--out-dir``; serve gives one to every app), or None.
        Set, the settings dialog also keeps the command line's policy spec and LLM base URL."""
        self.export_dir = self.out_dir or export_dir or Path.cwd()
        self.export_dir_given = self.out_dir is not None or export_dir is not None
        """An export folder given by the caller wins over the one remembered from the last export."""
        self.step_results: dict[int, dict[str, StepResult]] = {}
        self.replaying = False
        self.cancel_event = threading.Event()
        self.progress: tuple[int, int] = (0, 0)
        self.current_replay: tuple[int, str] | None = None
        self._feed: ReplayFeed | None = None
        """The running replay's feed (its worker sets it), for the verdicts of the episode it is on."""
        self.validated = threading.Event()
        """Set when the background validation has parsed every episode."""
        self.follow_timer: Timer | None = None
        """Looks for appended episodes (``--follow``, and a big log's index going on: see
        :class:`~replay_tui.sources.IndexingLog`) until no followed file is left."""
        self.indexing = False
        """A log's index is still going (its rows are appended as they are indexed)."""
        self.index_note: str | None = None
        """What the status line says once the index is done (until a replay starts)."""

    def on_mount(self) -> None:
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        self.push_screen(BrowserScreen(self))
        self.reopen_last_run()
        for problem in self.workspace.demos.unreadable:  # the browser lists them too, as file problems
            self.notify(strip_control(problem.one_line()), title="Cannot read", severity="error", markup=False)
        self.call_after_refresh(self.validate_in_background)  # after the first paint
        self.indexing = self._still_indexing()
        if self.indexing:  # the rest of a big log's index, once the first frame is drawn
            self.call_after_refresh(self._index_the_rest)
        if self.workspace.demos.following:
            self.follow_timer = self.set_interval(FOLLOW_INTERVAL, self.read_followed)
        gc.freeze()  # the index (an object per episode) is kept for the app's life: not for the GC to walk

    # -- following files that are still being written (--follow) ---------------------------
    def read_followed(self) -> None:
        """Show the episodes appended to the followed files since the last look (only the new
        bytes are read: :meth:`EpisodeSet.read_new`), and the new steps of episodes whose log grew; a
        file truncated or replaced is said once."""
        demos = self.workspace.demos
        added, problems = demos.read_new()
        for problem in problems:
            if problem.index is None:  # the file, not an episode: truncated, replaced, unreadable
                self.notify(strip_control(problem.one_line()), title="Follow", severity="warning", markup=False)
        browser = self.browser
        if (added or problems) and browser is not None:
            browser.add_episodes(added)
        if demos.changed:  # logs that grew (Claude Code, Codex...): their rows and open steppers
            if browser is not None:
                browser.episodes_grew([demos.ref(session_id) for session_id in demos.changed])
            for screen in self.screen_stack:
                if isinstance(screen, StepperScreen) and screen.session_id in demos.changed:
                    screen.episode_grew()
        if self.indexing:
            self.indexing = self._still_indexing()
            if not self.indexing:
                self.index_note = f"index done: {len(demos):,} episodes"
            self.update_status()
        if not demos.following and self.follow_timer is not None:
            self.follow_timer.stop()

    def _index_the_rest(self) -> None:
        for demo in self.workspace.demos.files:
            if isinstance(demo, IndexingLog):
                demo.start()

    def _still_indexing(self) -> bool:
        return any(isinstance(demo, IndexingLog) and demo.following for demo in self.workspace.demos.files)

    # -- background validation ----------------------------------------------------------------
    def validate_in_background(self) -> None:
        """Parse every episode on a worker thread, so a malformed one shows as a problem row
        before anyone opens it; opening the file only indexed it (the browser is usable at once)."""
        self._validate_worker()

    @work(thread=True, exclusive=True, group="validate", exit_on_error=False)
    def _validate_worker(self) -> None:
        worker = get_current_worker()
        if worker.cancelled_event.wait(VALIDATION_DELAY):  # let the browser paint and settle first
            return
        found: list[LoadProblem] = []
        posted = time.monotonic()
        demos = self.workspace.demos
        end = len(demos.refs)
        batch = demos.validation()  # the episodes listed so far
        while True:  # then, while a log's index goes on, the episodes it adds
            for problem in batch:
                if worker.is_cancelled:
                    return
                if problem is not None:
                    found.append(problem)
                if found and time.monotonic() - posted >= VALIDATION_POST_INTERVAL:
                    self.post_message(ProblemsFound(found))
                    found, posted = [], time.monotonic()
                time.sleep(0)  # let the UI thread take the GIL between episodes
            if not self.indexing and len(demos.refs) == end:
                break
            if worker.cancelled_event.wait(FOLLOW_INTERVAL):
                return
            start, end = end, len(demos.refs)
            batch = demos.validation(start, end)
        if found:
            self.post_message(ProblemsFound(found))
        self.validated.set()

    @on(ProblemsFound)
    def _problems_found(self, message: ProblemsFound) -> None:
        browser = self.browser
        if browser is not None and browser.is_current:
            browser.refresh_rows()

    # -- screens ----------------------------------------------------------------------------
    @property
    def browser(self) -> BrowserScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, BrowserScreen):
                return screen
        return None

    def stepper_for(self, session_id: int) -> StepperScreen | None:
        screen = self.screen
        if isinstance(screen, StepperScreen) and screen.session_id == session_id:
            return screen
        return None

    def open_episode(self, session_id: int, *, replay: bool = False, step_label: str | None = None) -> None:
        self._verdicts_so_far(session_id)
        self.push_screen(StepperScreen(session_id, self, step_label=step_label))
        if replay:
            self.call_after_refresh(self.start_replay, [session_id])

    # -- requests from the screens ----------------------------------------------------------
    @on(EpisodeOpenRequested)
    def _open_requested(self, message: EpisodeOpenRequested) -> None:
        self.open_episode(message.session_id, replay=message.replay, step_label=message.step_label)

    @on(SubagentOpenRequested)
    def _subagent_requested(self, message: SubagentOpenRequested) -> None:
        """A sub-agent's episode in the stepper, in place of its parent's (esc brings that back)."""
        session_id = self.workspace.demos.session_of(message.child)
        if session_id is None:
            self.notify(f"sub-agent episode {message.child} is not among the loaded episodes", severity="warning")
            return
        self._swap_stepper(StepperScreen(session_id, self, back=message.back))

    @on(ParentReturnRequested)
    def _parent_requested(self, message: ParentReturnRequested) -> None:
        back = message.back
        self._swap_stepper(StepperScreen(back.session_id, self, step_label=back.step_label, back=back.then))

    def _swap_stepper(self, stepper: StepperScreen) -> None:
        self._verdicts_so_far(stepper.session_id)
        screen = self.screen
        if isinstance(screen, StepperScreen):
            self.call_next(self._replace_stepper, stepper)
        else:
            self.push_screen(stepper)

    @on(OutcomeRequested)
    def _outcome_requested(self, message: OutcomeRequested) -> None:
        """The outcome screen of an episode; ``enter`` there shows the step it names (in the stepper
        below when it shows that episode, else in a new one)."""
        from replay_tui.tui.replay.outcome import OutcomeScreen

        session_id = message.session_id

        def jump(position: int | None) -> None:
            if position is not None:
                self.show_episode(session_id, position=position)

        if not isinstance(self.screen, OutcomeScreen):
            self.push_screen(OutcomeScreen(session_id, self), jump)

    @on(OutcomeGroupsRequested)
    def _outcome_groups_requested(self) -> None:
        from replay_tui.tui.replay.outcome_groups import OutcomeGroupsScreen

        if not isinstance(self.screen, OutcomeGroupsScreen):
            self.push_screen(OutcomeGroupsScreen(self))

    @on(ReplayRequested)
    def _replay_requested(self, message: ReplayRequested) -> None:
        self.start_replay(message.session_ids)

    @on(ReplayCancelRequested)
    def _cancel_requested(self) -> None:
        self.action_cancel_replay()

    @on(TagRequested)
    def _tag_requested(self, message: TagRequested) -> None:
        self.tag(message.session_id, message.step_label)

    @on(NoteRequested)
    def _note_requested(self, message: NoteRequested) -> None:
        self.note(message.session_id, message.step_label)

    @on(StatusRefreshRequested)
    def _status_requested(self) -> None:
        self.update_status()

    @on(EpisodeNavRequested)
    def _nav_requested(self, message: EpisodeNavRequested) -> None:
        self.episode_neighbour(message.session_id, message.direction, message.mismatching, offer=message.offer)

    @on(SearchStepRequested)
    def _search_step_requested(self, message: SearchStepRequested) -> None:
        self.search_step(message.direction)

    # -- navigation across episodes ---------------------------------------------------------
    def episode_order(self, session_id: int) -> list[int]:
        """The episodes in the order the browser lists them (filtered and sorted), or every
        episode in session order when the browser's list does not hold ``session_id``."""
        browser = self.browser
        if browser is not None and hasattr(browser, "source"):
            shown = [row.session_id for row in browser.source.rows if row.session_id is not None]
            if session_id in shown:
                return shown
        return self.workspace.demos.session_ids

    def first_mismatch(self, session_id: int) -> str | None:
        """The label of the episode's first mismatching step in the latest results (None: none)."""
        report = self.workspace.results.get(session_id)
        if report is None or report.matched:
            return None
        return report.first_mismatch_step or next((s.step_label for s in report.steps if s.is_mismatch), None)

    def episode_neighbour(self, session_id: int, direction: int, mismatching: bool, *, offer: bool = False) -> None:
        """Open the next (previous) episode after ``session_id``, or the next with mismatches at its
        first one; with ``offer``, say which the same key opens instead of opening it."""
        order = self.episode_order(session_id)
        here = order.index(session_id) if session_id in order else -1
        candidates = order[here + 1 :] if direction > 0 else order[:here][::-1] if here >= 0 else []
        target = next((s for s in candidates if not mismatching or self.first_mismatch(s) is not None), None)
        where = "next" if direction > 0 else "previous"
        if target is None:
            what = "episode with mismatches" if mismatching else "episode"
            extra = "" if mismatching or here >= 0 else " (this episode is not in the list)"
            prefix = "no further mismatch in this episode; " if offer else ""
            self.notify(f"{prefix}no {where} {what} in the list{extra}", severity="warning", timeout=3)
            return
        step = self.first_mismatch(target) if mismatching else None
        if offer:
            self.notify(
                f"last mismatch of session {session_id} · press ] again for session {target}'s first "
                f"mismatch (step {step})",
                timeout=4,
                markup=False,
            )
            return
        self.show_episode(target, step_label=step)

    def show_episode(
        self,
        session_id: int,
        *,
        step_label: str | None = None,
        position: int | None = None,
        find: str = "",
        after: bool = False,
    ) -> None:
        """Show an episode at a step: in the stepper on screen when it shows that episode, else in
        a new stepper that takes the place of the one on screen (the stack does not grow)."""
        browser = self.browser
        index = browser.source.index_of(session_id) if browser is not None and hasattr(browser, "source") else None
        if browser is not None and index is not None:
            browser.table.set_cursor(index)  # back in the browser (esc), the row of the last episode seen
        screen = self.screen
        if isinstance(screen, StepperScreen) and screen.session_id == session_id:
            screen.go_to(step_label=step_label, position=position, find=find, after=after)
            return
        stepper = StepperScreen(session_id, self, step_label=step_label, position=position, find=find, after=after)
        if isinstance(screen, StepperScreen):
            screen.remember_pane_sizes()
            self.call_next(self._replace_stepper, stepper)
        else:
            self.push_screen(stepper)

    async def _replace_stepper(self, stepper: StepperScreen) -> None:
        """The stepper on screen gives its place to ``stepper`` (gone first: screens have one id)."""
        with self.batch_update():
            await self.pop_screen()
            await self.push_screen(stepper)

    def action_goto(self) -> None:
        """Ask for a session number and open that episode."""
        from replay_tui.tui.screens.search import GoToModal

        def apply(session_id: int | None) -> None:
            if session_id is not None:
                self.show_episode(session_id)

        if not isinstance(self.screen, ModalScreen):  # not over a dialog (nor over itself)
            self.push_screen(GoToModal(self.workspace.demos), apply)

    # -- search across episodes -------------------------------------------------------------
    @property
    def search_screen(self) -> SearchScreen:
        """The one search screen, kept (installed) with its query and results between showings."""
        from replay_tui.tui.screens.search import SearchScreen

        if not self.is_screen_installed("search"):
            self.install_screen(SearchScreen(self.workspace.demos), name="search")
        screen = self.get_screen("search")
        assert isinstance(screen, SearchScreen)
        return screen

    def action_search(self) -> None:
        """Find text in every step of every episode; enter on a result opens that step."""
        if isinstance(self.screen, ModalScreen):  # not over a dialog (nor over itself)
            return
        below = self.screen
        search = self.search_screen
        search.start(below.session_id if isinstance(below, StepperScreen) else None)
        self.push_screen(search, self.open_hit)

    def open_hit(self, hit: SearchHit | None) -> None:
        if hit is not None:
            find = self.search_screen.query_text if hit.position is not None else ""
            self.show_episode(hit.session_id, position=hit.position, find=find, after=hit.after)

    def search_step(self, direction: int) -> None:
        """Open the next (previous) search result, as ``.``/``,`` in the stepper ask."""
        if not self.is_screen_installed("search") or not self.search_screen.query_text:
            self.notify("no search yet: F finds text in every episode", severity="warning", timeout=2)
            return
        search = self.search_screen
        hit = search.step(direction)
        if hit is None:
            count = len(search.source)
            where = "last" if direction > 0 else "first"
            more = "" if search.finished else " so far (still searching: F shows the list)"
            self.notify(f"{where} of {count} results{more}", severity="warning", timeout=2)
            return
        self.open_hit(hit)
        self.notify(f"result {search.results.cursor + 1}/{len(search.source)}", timeout=1.5)

    # -- status -----------------------------------------------------------------------------
    def update_status(self) -> None:
        if not self.screen_stack:  # a message that arrives while the app shuts down
            return
        line = Text(in_line(self.status_text()))  # file names, the model, a run's note: the user's or a log's
        screen = self.screen
        found = screen.find_status() if isinstance(screen, StepperScreen) else None
        if found is not None:  # the stepper's find box is open: what it found comes first
            line = found + Text("  │  ") + line
        for status in screen.query("#status").results(Static):
            current = status.content
            if not isinstance(current, Text) or current.plain != line.plain:
                # Text, never a markup string: file names, models and policies are the user's text
                status.update(line, layout=False)  # one line, always: no layout pass

    def status_text(self) -> str:
        ws = self.workspace
        if ws.shown_run is not None:  # the loaded run's own settings, then what r would replay with
            parts = [f"run's policy {ws.shown_run.describe()} (r replays with {ws.settings.describe()})"]
        else:
            parts = [f"policy {ws.settings.describe()}"]
        if self.replaying:
            done, total = self.progress
            where = ""
            if self.current_replay is not None:
                where = f" · session {self.current_replay[0]} step {self.current_replay[1]}"
            parts.append(f"replaying {done}/{total}{where} · esc cancels")
        elif self.run_note:
            parts.append(self.run_note)
        if self.indexing:
            parts.append(f"indexing: {len(ws.demos):,} episodes so far")
        elif self.index_note and not self.replaying:
            parts.append(self.index_note)
        totals = ws.totals()
        if totals.episodes:
            from replay_tui.stats import wilson

            low, high = wilson(totals.matched, totals.steps)
            parts.append(
                f"{totals.episodes} replayed · {totals.mismatched} with mismatches · "
                f"step accuracy {totals.matched / max(1, totals.steps):.1%} [{low * 100:.1f}–{high * 100:.1f}%]"
                + (f" · {totals.equivalent} ≈ equivalent" if totals.equivalent else "")
            )
        parts.append(f"notes {ws.annotations.path.name}")
        return "  │  ".join(parts)

    # -- replay -----------------------------------------------------------------------------
    def start_replay(self, session_ids: Sequence[int]) -> None:
        if self.replaying:
            self.notify("a replay is already running (esc cancels it)", severity="warning")
            return
        if not session_ids:
            self.notify("no episodes to replay", severity="warning")
            return
        self.cancel_event = threading.Event()
        self.replaying = True
        self.progress = (0, len(session_ids))
        self.run_note = None
        self.index_note = None
        # earlier results stay until each episode's new one arrives: a cancelled re-run keeps them
        self._replay_worker(list(session_ids), self.cancel_event)
        self.update_status()

    def _verdicts_so_far(self, session_id: int) -> None:
        """A stepper opening on the episode being replayed shows the verdicts judged so far at once (the
        replay sends them with its next step, which a slow model may hold up for long)."""
        feed = self._feed
        steps = feed.so_far(session_id) if feed is not None else []
        if steps:
            self.step_results[session_id] = {step.step_label: step for step in steps}

    def watched_sessions(self) -> frozenset[int]:
        """The sessions open in a stepper, whose steps a replay reports one by one. Read by the replay
        worker: it only reads the stack (a copy) and each screen's id."""
        try:
            return frozenset(screen.session_id for screen in self.screen_stack if isinstance(screen, StepperScreen))
        except Exception:  # pragma: no cover - the app is shutting down
            return frozenset()

    @work(thread=True, exclusive=True, group="replay", exit_on_error=False)
    def _replay_worker(self, session_ids: list[int], cancel: threading.Event) -> None:
        from replay_tui.policies import POLICY_BUILD_ERRORS
        from replay_tui.session import (
            EndpointDown,
            EpisodeDone,
            EpisodeStarted,
            ReplaySession,
            SessionEvent,
            StepReplayed,
        )
        from replay_tui.tui.replay.feed import ReplayFeed

        feed = ReplayFeed(self.post_message, len(session_ids), watched=self.watched_sessions)
        self._feed = feed

        down: list[EndpointDown] = []

        def on_event(event: SessionEvent) -> None:
            if isinstance(event, StepReplayed):
                feed.step(event.result)
            elif isinstance(event, EpisodeStarted):
                feed.begin()
            elif isinstance(event, EpisodeDone):
                if event.report is not None:
                    feed.episode(event.report)
                elif event.problem is not None:
                    feed.failed(event.problem)
            elif isinstance(event, EndpointDown):
                down.append(event)

        ws = self.workspace
        try:
            # a replay allocates much and makes no cycles (see replay_tui.gcpause); the app freezes what
            # it keeps itself (after each batch of results, see _replay_progressed)
            session = ReplaySession(
                ws.demos, ws.settings, session_ids, on_event=on_event, steps=True, cancel=cancel, tenure=False
            )
        except POLICY_BUILD_ERRORS as exc:
            self.post_message(ReplayFinished(cancelled=False, error=str(exc)))
            return
        feed.mode = session.mode
        try:
            session.run()
        except Exception as exc:  # the UI must survive anything a policy or a file throws
            feed.flush()
            self.post_message(ReplayFinished(cancelled=False, error=f"{type(exc).__name__}: {exc}"))
            return
        feed.flush()
        if not down:
            self.post_message(ReplayFinished(cancelled=cancel.is_set()))
            return
        unreachable = down[0].unreachable
        if down[0].streak:
            error = (
                f"{unreachable.message()}. The replay stopped after {unreachable.failures} requests in a row "
                "failed; check the endpoint (p → policy) and press r to replay again."
            )
        else:  # fewer steps than the streak, none of them answered
            error = f"{unreachable.message()}: no request got an answer"
        self.post_message(ReplayFinished(cancelled=False, error=error))

    def action_cancel_replay(self) -> None:
        if self.replaying:
            self.cancel_event.set()
            self.notify("cancelling replay…", timeout=2)

    @work(thread=True, exclusive=True, group="rejudge", exit_on_error=False)
    def _rejudge_worker(self) -> None:
        """Judge the stored predictions again under the new matching settings (no policy call)."""
        reports, changed = self.workspace.rejudged()
        self.post_message(Rejudged(reports, changed, self.workspace.settings.matching.describe()))

    @on(Rejudged)
    def _rejudged(self, message: Rejudged) -> None:
        if self.replaying:  # a replay started meanwhile: its verdicts win
            return
        for report in message.reports.values():
            self.workspace.record(report, in_run=False)
            self.step_results[report.session_id] = {step.step_label: step for step in report.steps}
        browser = self.browser
        if browser is not None and browser.is_current:
            browser.refresh_rows()
        for session_id in message.reports:
            stepper = self.stepper_for(session_id)
            if stepper is not None:
                stepper.refresh_verdicts()
        from replay_tui.tui.replay.groups import GroupsScreen

        if isinstance(self.screen, GroupsScreen):
            self.screen.reload()
        steps = "step verdict" if message.changed == 1 else "step verdicts"
        self.notify(f"judged again under {message.matching}: {message.changed} {steps} changed", timeout=3)
        self.update_status()
        self.save_session_run()

    @on(ReplayProgressed)
    def _replay_progressed(self, message: ReplayProgressed) -> None:
        """A batch from the replay worker: work proportional to the batch, one redraw of each view."""
        ws = self.workspace
        touched: set[int] = set()
        for session_id in message.fresh:
            self.step_results[session_id] = {}  # the episode's first new step: its old verdicts go
        for result in message.steps:
            self.step_results.setdefault(result.session_id, {})[result.step_label] = result
            touched.add(result.session_id)
        for report in message.reports:
            previous = ws.results.get(report.session_id)
            if report.cancelled and previous is not None:
                report = previous  # cancelled part-way: the episode keeps its earlier result
            else:
                ws.record(report, message.mode)
            self.step_results[report.session_id] = {step.step_label: step for step in report.steps}
            touched.add(report.session_id)
        self.progress = (message.done, message.total)
        self.current_replay = message.position
        for problem in message.problems:
            self.notify(strip_control(problem.one_line()), title="Malformed episode", severity="error", markup=False)
            if isinstance(problem.session_id, int):
                touched.add(problem.session_id)
        browser = self.browser
        if browser is not None and browser.is_current:
            if message.problems:
                browser.update_title()  # the problem count
            browser.refresh_sessions(touched)
        screen = self.screen
        if isinstance(screen, StepperScreen) and screen.session_id in touched:
            screen.refresh_verdicts()
        self.update_status()
        # The results recorded so far live as long as the app: keep the cyclic GC from walking them
        # again. Full collections over a growing replay stalled keys for 130-350 ms each; freezing is
        # O(1), frozen objects are still freed by reference counting, and a stepper's unmount
        # unfreezes everything (its widget tree is cyclic garbage once it closes).
        gc.freeze()

    @on(ReplayFinished)
    def _replay_finished(self, message: ReplayFinished) -> None:
        self.replaying = False
        self.current_replay = None
        if message.error:
            self.notify(strip_control(message.error), title="Replay failed", severity="error", markup=False)
        elif message.cancelled:
            self.notify("replay cancelled", severity="warning")
        else:
            done, total = self.progress
            bad = self.workspace.totals().mismatched
            self.notify(
                f"replayed {done}/{total} · {bad} {'episode' if bad == 1 else 'episodes'} with mismatches", timeout=3
            )
        browser = self.browser
        if browser is not None and browser.is_current:  # otherwise it rebuilds when it resumes
            browser.rebuild()
        if isinstance(self.screen, StepperScreen):
            self.screen.refresh_verdicts()
        from replay_tui.tui.replay.groups import GroupsScreen

        if isinstance(self.screen, GroupsScreen):  # otherwise it groups again when it resumes
            self.screen.reload()
        self.update_status()
        # the summary of every result is taken (and written on a thread) once the end is on screen
        self.call_after_refresh(self.save_session_run, complete=not (message.cancelled or message.error))

    def results_replaced(self) -> None:
        """Every result changed (a saved run was opened): redraw the browser and the stepper."""
        browser = self.browser
        if browser is not None and browser.is_current:
            browser.rebuild()
        if isinstance(self.screen, StepperScreen):
            self.screen.refresh_verdicts()
        self.update_status()

    # -- triage -----------------------------------------------------------------------------
    def _target(self, session_id: int, step_label: str | None) -> str:
        return f"session {session_id}" + (f" step {step_label}" if step_label else "")

    def tag(self, session_id: int, step_label: str | None) -> None:
        store = self.workspace.annotations
        current = store.get(session_id, step_label)

        before = list(current.tags) if current else []

        def apply(tags: list[str] | None) -> None:
            if tags is None:
                return
            added = [tag for tag in tags if tag not in before]
            removed = [tag for tag in before if tag not in tags]
            if not added and not removed:
                return
            for tag in [*removed, *added]:  # one edit per change, so a merge with another writer keeps the rest
                store.toggle_tag(session_id, step_label, tag)
            what = [f"tagged {' '.join(added)}"] if added else []
            what += [f"untagged {' '.join(removed)}"] if removed else []
            self._save_annotations(" · ".join(what))

        from replay_tui.tui.screens.modals import TagModal

        self.push_screen(
            TagModal(self._target(session_id, step_label), store.labels, current.tags if current else []), apply
        )

    def note(self, session_id: int, step_label: str | None) -> None:
        store = self.workspace.annotations
        current = store.get(session_id, step_label)

        def apply(text: str | None) -> None:
            if text is None:
                return
            store.set_note(session_id, step_label, text)
            self._save_annotations("note saved")

        from replay_tui.tui.screens.modals import NoteModal

        self.push_screen(NoteModal(self._target(session_id, step_label), current.note if current else ""), apply)

    def _save_annotations(self, what: str) -> None:
        store = self.workspace.annotations
        try:
            path = store.save()
        except (OSError, AnnotationError) as exc:
            self.notify(f"could not save annotations: {exc}", severity="error", markup=False)
            return
        if store.merged_external:
            self.notify(
                f"{what} · {path} had changed elsewhere: merged, {store.merged_external} annotation(s) updated here",
                timeout=6,
                markup=False,
            )
        else:
            self.notify(f"{what} · saved to {path}", timeout=2, markup=False)
        if isinstance(self.screen, StepperScreen):
            self.screen.annotations_changed()
        browser = self.browser
        if browser is not None:
            browser.rebuild()
        self.update_status()

    # -- app actions ------------------------------------------------------------------------
    def action_groups(self) -> None:
        """The mismatch groups of the latest results (grouped again each time the screen shows)."""
        from replay_tui.tui.replay.groups import GroupsScreen

        if not isinstance(self.screen, GroupsScreen):
            self.push_screen(GroupsScreen(self))

    def action_visual(self) -> None:
        """The visual batch screen: page pairs with their Design2Code scores (scored once, kept)."""
        from replay_tui.tui.visual.batch import VisualBatchScreen

        if isinstance(self.screen, VisualBatchScreen):
            return
        if not self.is_screen_installed("visual"):
            try:
                pairs, missing = self.visual.pairs()
            except OSError as exc:
                self.notify(f"visual batch: {exc}", severity="error", markup=False)
                return
            if not pairs:
                self.notify("visual batch: no page pairs found", severity="warning")
                return
            self.install_screen(
                VisualBatchScreen(pairs, mode=self.visual.mode, export_dir=self.export_dir, missing=missing),
                name="visual",
            )
        self.push_screen("visual")

    def action_settings(self) -> None:
        def apply(settings: ReplaySettings | None) -> None:
            if settings is None:
                return
            previous = self.workspace.settings
            self.workspace.settings = settings
            self.notify(f"next replay: {settings.describe()}", timeout=2, markup=False)
            rejudging = settings.matching != previous.matching and bool(self.workspace.results) and not self.replaying
            self.settings_changed(previous, rejudging=rejudging)
            if settings.matching != previous.matching and self.workspace.results:
                if self.replaying:
                    self.notify("the new matching policies judge the next replay", timeout=3)
                else:
                    self._rejudge_worker()
            self.update_status()
            if isinstance(self.screen, StepperScreen):
                self.screen.show_detail()

        from replay_tui.tui.screens.modals import SettingsModal

        self.push_screen(SettingsModal(self.workspace.settings, locked=self.out_dir is not None), apply)

    def action_export(self) -> None:
        from replay_tui.export import write_report
        from replay_tui.tui.screens.modals import ExportModal

        browser = self.browser
        shown = browser.shown_sessions() if browser is not None else None
        remembered = load_state()
        folder = Path(str(remembered.get("export_dir") or self.export_dir))
        start = folder if not self.export_dir_given and folder.is_dir() else self.export_dir

        def apply(choice: ExportChoice | None) -> None:
            if choice is None:
                return
            sessions = shown[1] if choice.only_shown and shown is not None else None
            summary = self.workspace.summary(sessions)
            try:
                written = write_report(choice.path, summary, self.workspace.annotations, choice.fmt)
            except (OSError, ValueError) as exc:
                self.notify(f"export failed: {exc}", severity="error", markup=False)
                return
            try:  # the next export starts where this one went
                remember(export_format=choice.fmt, export_dir=str(choice.path.parent.resolve()))
            except OSError:
                pass
            episodes = len(summary.episodes)
            self.notify(f"exported {episodes} replayed episodes to {written}", timeout=3, markup=False)

        if not self.workspace.results:
            self.notify(
                "nothing replayed yet: the report will list problems only (R replays all)",
                severity="warning",
                timeout=3,
            )
        inputs = [source.path for source in self.workspace.demos.files] + [self.workspace.annotations.path]
        fmt = str(remembered.get("export_format") or "md")
        label = f"only the {len(shown[1])} episodes shown ({shown[0]})" if shown is not None else None
        self.push_screen(ExportModal(start, fmt, inputs=inputs, shown=label, out_dir=self.out_dir), apply)

    # -- compare runs -----------------------------------------------------------------------
    def action_compare(self) -> None:
        """Compare this session's results (B) with a run or report file (A, the baseline)."""
        if not self.workspace.results:
            self.notify("nothing replayed yet: replay (R) before comparing with a run", severity="warning")
            return
        if self.replaying:
            self.notify("a replay is running: compare once it has finished", severity="warning")
            return

        def apply(path: str | None) -> None:
            if path is not None:
                self.compare_with_file(path)

        from replay_tui.tui.compare.runs import ComparePathModal  # (compare loads when first used)

        self.push_screen(ComparePathModal(self.export_dir), apply)

    def compare_runs(self, path_a: str | os.PathLike[str], path_b: str | os.PathLike[str]) -> None:
        """Open the compare view of two saved runs (or ``--report-steps`` reports): B against A."""
        self._compare_worker(Path(path_a), Path(path_b), None)

    def compare_with_file(self, path_a: str | os.PathLike[str]) -> None:
        """Open the compare view of this session's results (B) against a saved run or report (A)."""
        ws = self.workspace
        summary = ws.summary()
        files = [(demo.name, demo.path) for demo in ws.demos.files]
        self._compare_worker(Path(path_a), None, (summary, files))

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def _compare_worker(
        self, path_a: Path, path_b: Path | None, session: tuple[SummaryReport, list[tuple[str, Path]]] | None
    ) -> None:
        """Load the runs, hash this session's demo files, compare; post the comparison or why not."""
        from replay_tui.compare import CompareError, RunSteps, compare_runs, demo_identities, load_run_file

        try:
            a = load_run_file(path_a)
            b_summary: SummaryReport | RunSteps
            if session is not None:
                b_summary, files = session
                b_info = {"name": "this session", "policy": b_summary.mode, "demo_files": demo_identities(files)}
            else:
                assert path_b is not None
                b = load_run_file(path_b)
                b_summary, b_info = b.run, {**(b.info or {}), "source": str(path_b)}
            comparison = compare_runs(a.run, b_summary, a_info={**(a.info or {}), "source": str(path_a)}, b_info=b_info)
        except (CompareError, OSError) as exc:
            self.post_message(ComparisonFailed(str(exc)))
            return
        except Exception as exc:  # the UI must survive anything a file throws
            self.post_message(ComparisonFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(ComparisonReady(comparison))

    @on(ComparisonReady)
    def _comparison_ready(self, message: ComparisonReady) -> None:
        from replay_tui.tui.compare.runs import CompareScreen

        self.push_screen(CompareScreen(message.comparison, self.export_dir, out_dir=self.out_dir))

    @on(ComparisonFailed)
    def _comparison_failed(self, message: ComparisonFailed) -> None:
        self.notify(strip_control(message.reason), title="Cannot compare", severity="error", markup=False)


@dataclass(frozen=True)
class VisualBatch:
    """Where the visual screen's page pairs come from: folders (Design2Code layout) or the bundled pages."""

    ref_dir: Path | None = None
    pred_dirs: tuple[Path, ...] = ()
    mode: str = "compat"

    def pairs(self) -> tuple[list[BatchPair], list[str]]:
        from replay_tui.fileio import require_folder
        from replay_tui.visual.batch import bundled_pairs, discover_pairs

        if self.ref_dir is None:
            return bundled_pairs(), []
        for folder in (self.ref_dir, *self.pred_dirs):
            require_folder(folder)
        return discover_pairs(self.ref_dir, self.pred_dirs)


def make_app(
    demos: Sequence[str | os.PathLike[str]] | None = None,
    *,
    annotations: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | Config | None = None,
    settings: ReplaySettings | None = None,
    export_dir: str | os.PathLike[str] | None = None,
    visual: VisualBatch | None = None,
    require_readable: bool = False,
    fmt: str | None = None,
    allow_pickle: bool = False,
    runs_dir: str | os.PathLike[str] | None = None,
    save_runs: bool = True,
    follow: bool = False,
    out_dir: str | os.PathLike[str] | None = None,
) -> ReplayApp:
    """Build the app on demo files (default: the bundled example). A demo file that cannot be read is
    a problem the app shows (``workspace.demos.unreadable``), unless ``require_readable`` and no file
    can be read at all: then DemoFileError. Raises AnnotationError or ConfigError with one-line
    messages when those inputs are unusable. Runs are saved to and reopened from ``runs_dir`` (default:
    :func:`replay_tui.runs.default_runs_root`); ``save_runs`` False saves none. ``follow``: demo
    files and logs in JSON Lines that are still being written (and Claude Code / Codex session folders)
    show new episodes and steps as they are appended.
    ``out_dir``: the one folder the dialogs may write to (an export path outside it is refused)."""
    conf = config if isinstance(config, Config) else load_config(config)
    specs = list(demos) if demos else [str(example_path())]
    if settings is None:
        settings = ReplaySettings(matching=conf.matching())
    workspace = Workspace.open(
        specs,
        annotations_path=annotations,
        labels=conf.labels,
        settings=settings,
        skip_unreadable=True,
        fmt=fmt,
        allow_pickle=allow_pickle,
        defer_scan=True,  # the browser shows first; the validation worker's first read scans the file
        follow=follow,
        progressive=True,  # a big log lists its first rows at once, the rest as it is indexed
    )
    if require_readable and workspace.demos.unreadable and not workspace.demos.files:
        raise DemoFileError(workspace.demos.unreadable[0].one_line())
    app = ReplayApp(
        workspace,
        config=conf,
        export_dir=Path(export_dir) if export_dir else None,
        visual=visual,
        runs=RunStore(runs_dir),
        save_runs=save_runs,
        out_dir=Path(out_dir) if out_dir else None,
    )
    # the theme chosen with ctrl+p → theme is written to the config file read here (not to a given Config)
    app.remember_theme(None if isinstance(config, Config) else Path(config or default_config_path()), conf.theme)
    return app
