"""The replay app's run history: reopen the last run on start, save the session run, the runs screen.

Every replay in the app adds to the *session run* (:class:`replay_tui.workspace.SessionRun`), saved to
the runs folder of the open files after each replay worker finishes (not after each step), off the UI
thread and atomically. On start the newest run of these files whose fingerprints match the files now
open is loaded into the results. Changing the replay settings starts another session run.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message

from replay_tui.runs import RunError, RunInfo, RunStore, demo_files_info, local_date, parse_time
from replay_tui.sanitize import strip_control
from replay_tui.tui.app_base import AppBase
from replay_tui.tui.replay.runs import RunDeleted, RunOpenRequested, RunRenamed, RunsScreen
from replay_tui.workspace import ReplaySettings, RunSnapshot, Workspace

if TYPE_CHECKING:
    from replay_tui.runner import StepResult, SummaryReport


class RunLoaded(Message):
    """A saved run was read (worker -> App); ``at_start`` when it is the last run, reopened on start."""

    def __init__(self, summary: SummaryReport, info: RunInfo, path: Path, *, at_start: bool):
        super().__init__()
        self.summary = summary
        self.info = info
        self.path = path
        self.at_start = at_start


class RunSaved(Message):
    def __init__(self, path: Path, info: RunInfo):
        super().__init__()
        self.path = path
        self.info = info


class RunProblem(Message):
    """A run could not be saved, read or opened; ``message`` is one line."""

    def __init__(self, message: str, *, title: str = "Runs"):
        super().__init__()
        self.message = message
        self.title = title


def run_label(info: RunInfo) -> str:
    """``NAME (2026-11-23 20:59)``, the time local."""
    when = local_date(parse_time(info.created), "date unknown")
    return f"{info.name} ({when})"


class RunHistory(AppBase):
    """What the replay app adds for runs. The app provides the workspace, the replay state and
    :meth:`results_replaced` (redraw after the results were swapped)."""

    workspace: Workspace
    replaying: bool
    step_results: dict[int, dict[str, StepResult]]

    def __init__(self, runs: RunStore | None = None, *, save_runs: bool = True) -> None:
        super().__init__()
        self.runs = runs
        """Where runs are saved and found; None: no run history at all."""
        self.save_runs = save_runs and runs is not None
        self.run_note: str | None = None
        """``loaded run NAME (DATE)``, shown in the status line until the next replay."""
        self.last_saved: tuple[Path, RunInfo] | None = None
        self._save_lock = threading.Lock()
        self._save_requested = 0
        self._save_written = 0

    def results_replaced(self) -> None:
        raise NotImplementedError

    @property
    def runs_folder(self) -> Path | None:
        if self.runs is None or not self.workspace.demo_paths:
            return None
        return self.runs.for_demos(self.workspace.demo_paths)

    # -- on start: the last run -------------------------------------------------------------
    def reopen_last_run(self) -> None:
        if self.runs_folder is not None:
            self._load_last_run_worker()

    @work(thread=True, exclusive=True, group="runs-load", exit_on_error=False)
    def _load_last_run_worker(self) -> None:
        store, folder = self.runs, self.runs_folder
        assert store is not None and folder is not None
        if not any(not entry.broken for entry in store.list(folder)):
            return  # no run yet: the files need not be hashed
        try:
            files = demo_files_info(self.workspace.demo_paths)
            entry = store.latest(folder, files)
            if entry is None:
                return
            summary, info = store.load(entry.path)
        except (OSError, RunError) as exc:
            self.post_message(RunProblem(f"last run not loaded: {exc}"))
            return
        self.post_message(RunLoaded(summary, info, entry.path, at_start=True))

    # -- opening a run from the runs screen -------------------------------------------------
    @work(thread=True, exclusive=True, group="runs-load", exit_on_error=False)
    def _open_run_worker(self, path: Path) -> None:
        assert self.runs is not None
        try:
            summary, info = self.runs.load(path)
            if info.demo_files and not info.same_files(demo_files_info(self.workspace.demo_paths)):
                self.post_message(
                    RunProblem(f"{info.name} was replayed on other contents of the files: not opened", title="Open")
                )
                return
        except (OSError, RunError) as exc:
            self.post_message(RunProblem(str(exc), title="Open"))
            return
        self.post_message(RunLoaded(summary, info, path, at_start=False))

    def on_run_open_requested(self, message: RunOpenRequested) -> None:
        if self.replaying:
            self.notify("a replay is running: open the run once it has finished", severity="warning")
            return
        self._open_run_worker(message.path)

    def on_run_loaded(self, message: RunLoaded) -> None:
        ws = self.workspace
        if message.at_start and (self.replaying or ws.results):
            return  # a replay started before the last run was read: its results win
        if self.replaying:
            self.notify("a replay is running: open the run once it has finished", severity="warning")
            return
        count = ws.adopt_run(message.summary, message.info)
        self.step_results.clear()
        for report in ws.results.values():
            self.step_results[report.session_id] = {step.step_label: step for step in report.steps}
        self.run_note = f"{'loaded' if message.at_start else 'opened'} run {run_label(message.info)}"
        if not message.at_start:
            self.notify(f"{self.run_note}: {count} episodes", timeout=3, markup=False)
            if isinstance(self.screen, RunsScreen):
                self.pop_screen()
        self.results_replaced()

    # -- saving the session run -------------------------------------------------------------
    def save_session_run(self, *, complete: bool = True) -> None:
        """Save the session run (when there is one and saving is on), off the UI thread."""
        if not self.save_runs:
            return
        snapshot = self.workspace.session_snapshot(complete=complete)
        if snapshot is None:
            return
        self._save_requested += 1
        self._save_run_worker(snapshot, self._save_requested)

    @work(thread=True, group="runs-save", exit_on_error=False)
    def _save_run_worker(self, snapshot: RunSnapshot, number: int) -> None:
        assert self.runs is not None
        with self._save_lock:
            if number < self._save_written:
                return  # a later save of the session run already wrote newer results
            try:
                path, info = snapshot.save(self.runs)
            except (OSError, RunError) as exc:
                self.post_message(RunProblem(f"could not save the run: {exc}"))
                return
            self._save_written = number
        self.post_message(RunSaved(path, info))

    def on_run_saved(self, message: RunSaved) -> None:
        self.last_saved = (message.path, message.info)
        for screen in self.screen_stack:
            if isinstance(screen, RunsScreen):
                screen.reload(current=message.info.id)

    def on_run_problem(self, message: RunProblem) -> None:
        self.notify(strip_control(message.message), title=message.title, severity="error", markup=False)

    def settings_changed(self, previous: ReplaySettings, *, rejudging: bool) -> None:
        """New settings start another session run; when only the matching changed and the results are
        being judged again, they stay in it (judged anew, saved when the judging is done)."""
        settings = self.workspace.settings
        if settings.run_key() == previous.run_key():
            return
        only_matching = _without_matching(settings.run_fields()) == _without_matching(previous.run_fields())
        self.workspace.new_session_run(carry=rejudging and only_matching)

    def on_run_renamed(self, message: RunRenamed) -> None:
        run = self.workspace.session_run
        if run.run_id == message.info.id:
            run.name = message.info.name  # later saves keep the name

    def on_run_deleted(self, message: RunDeleted) -> None:
        if self.last_saved is not None and self.last_saved[0] == message.path:
            self.last_saved = None
            self.workspace.new_session_run(carry=True)  # a later save writes a new run, not the deleted one

    # -- the runs screen --------------------------------------------------------------------
    def action_runs(self) -> None:
        """The runs of the open files: open, rename, delete, compare two."""
        if isinstance(self.screen, RunsScreen):
            return
        folder = self.runs_folder
        if self.runs is None or folder is None:
            self.notify("no run history: no runs folder or no readable files", severity="warning")
            return
        names = [path.name for path in self.workspace.demo_paths]
        files = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        self.push_screen(RunsScreen(self.runs, folder, files, current=self.workspace.session_run.run_id))

    async def action_quit(self) -> None:
        """Quit once the run being saved is written."""
        saving = [worker for worker in self.workers if worker.group == "runs-save"]
        if saving:
            await self.workers.wait_for_complete(saving)
        self.exit()


def _without_matching(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if key != "matching"}
