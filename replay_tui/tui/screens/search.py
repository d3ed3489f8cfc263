"""Find text across episodes (a results list to jump from) and go to a session by its number.

The search runs in a thread worker over :func:`replay_tui.search.search`, one episode at a time:
results stream into the list in batches, a new query cancels the running search, and the screen
stays installed on the App, so ``.``/``,`` in the stepper walk the same results after a jump.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static
from textual.worker import get_current_worker

from replay_tui.episodes.collection import EpisodeSet
from replay_tui.episodes.problems import LoadProblem
from replay_tui.sanitize import one_line, strip_control
from replay_tui.search import SearchHit, search
from replay_tui.tui.widgets.lazy_table import Column, LazyTable

MAX_RESULTS = 5000
"""The search stops once this many results are listed (the status says to narrow the query)."""
POST_INTERVAL = 0.1
"""Seconds between two batches of results posted by the search worker."""
RESULT_COLUMNS = (
    Column("session", "session", 7, justify="right"),
    Column("step", "step", 8),
    Column("field", "field", 11),
    Column("match", "match", flex=True),
)
MATCH_STYLE = "bold reverse"
FIELD_NAMES = {"observation after": "obs. after"}
"""Field names shortened to fit the results list's field column."""


class ResultsSource:
    """The results list: hits appended as the worker finds them; cells made on demand."""

    columns: Sequence[Column] = RESULT_COLUMNS

    def __init__(self) -> None:
        self.hits: list[SearchHit] = []

    def __len__(self) -> int:
        return len(self.hits)

    def row_style(self, index: int) -> str:
        return ""

    def cells(self, index: int) -> Sequence[Text]:
        hit = self.hits[index]
        # Text, never markup: the snippet is the log's text (controls already stripped)
        match = Text(hit.snippet)
        match.stylize(MATCH_STYLE, hit.start, hit.end)
        if hit.count > 1:
            match.append(f"  ×{hit.count}", style="dim")
        field = FIELD_NAMES.get(hit.field, hit.field)
        return [Text(str(hit.session_id)), Text(one_line(hit.step)), Text(field, style="cyan"), match]


@dataclass
class SearchFound(Message):
    """A batch of results of the search for ``query`` (worker -> screen); ``done`` of ``total``
    episodes searched so far; ``finished`` once the search has ended (or stopped at the cap)."""

    query: str
    hits: list[SearchHit]
    problems: list[LoadProblem]
    done: int
    total: int
    finished: bool = False


class SearchScreen(ModalScreen[SearchHit | None]):
    """Type to search every step of every episode (or of one); enter on a result opens it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="search.close"),
        Binding("ctrl+t", "toggle_scope", "All episodes / this episode", id="search.scope"),
        Binding("n", "move(1)", "Next result", show=False, id="search.next"),
        Binding("N", "move(-1)", "Previous result", show=False, id="search.previous"),
        Binding("down", "to_results", "To the results", show=False, id="search.to_results"),
    ]
    DEFAULT_CSS = """
    SearchScreen { align: center middle; }
    SearchScreen > .search-dialog {
        width: 96%; max-width: 160; height: 90%; padding: 0 1; border: thick $accent; background: $surface;
    }
    SearchScreen #search-results { height: 1fr; }
    SearchScreen #search-status { height: auto; }
    """

    def __init__(self, demos: EpisodeSet) -> None:
        super().__init__(id="search")
        self.demos = demos
        self.source = ResultsSource()
        self.query_text = ""
        self.session_id: int | None = None
        """The episode the stepper below shows (the narrow scope), None from the browser."""
        self.this_episode = False
        self.done = 0
        self.total = 0
        self.finished = True
        self.problems: list[LoadProblem] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="search-dialog"):  # not .dialog: as tall and wide as the screen allows
            yield Label(Text("Find in episodes", style="bold"))
            yield Input(placeholder="text to find in every step (case-insensitive)", id="search-query")
            yield Static(id="search-status")
            yield LazyTable(self.source, id="search-results")
            yield Label(
                Text("enter opens · ↓ n N move · ctrl+t scope · esc closes", style="dim"),
                id="search-hint",
            )

    def on_mount(self) -> None:
        self.query_one("#search-query", Input).focus()
        self.update_status()

    def start(self, session_id: int | None) -> None:
        """Called by the App before each showing: the episode on screen below, if any (the scope
        narrows to it only when the user asks with ctrl+t)."""
        if session_id != self.session_id:
            self.session_id = session_id
            if self.this_episode:
                self.this_episode = session_id is not None
                self.restart()
        if self.is_mounted:
            self.query_one("#search-query", Input).focus()
            self.update_status()

    @property
    def results(self) -> LazyTable:
        return self.query_one("#search-results", LazyTable)

    # -- searching --------------------------------------------------------------------------
    @on(Input.Changed, "#search-query")
    def _query_changed(self, event: Input.Changed) -> None:
        if event.value != self.query_text:
            self.query_text = event.value
            self.restart()

    @on(Input.Submitted, "#search-query")
    def _query_submitted(self) -> None:
        if len(self.source):
            self.results.focus()

    def restart(self) -> None:
        """Drop the results and search again for the current query (cancelling the running search)."""
        self.source.hits = []
        self.problems = []
        self.done = 0
        sessions = [self.session_id] if self.this_episode and self.session_id is not None else None
        self.total = len(self.demos) if sessions is None else 1
        self.finished = not self.query_text
        if self.is_mounted:
            self.results.set_source(self.source, cursor=0)
        if self.query_text:
            self._search_worker(self.query_text, sessions)
        else:
            self.workers.cancel_group(self, "search")
        self.update_status()

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search_worker(self, query: str, sessions: list[int] | None) -> None:
        worker = get_current_worker()
        hits: list[SearchHit] = []
        problems: list[LoadProblem] = []
        found = done = 0
        total = len(self.demos) if sessions is None else len(sessions)
        posted = time.monotonic()
        for episode in search(self.demos, query, sessions):
            if worker.is_cancelled:
                return
            done += 1
            room = MAX_RESULTS - found
            hits.extend(episode.hits[:room])
            found += min(room, len(episode.hits))
            if episode.problem is not None:
                problems.append(episode.problem)
            if found >= MAX_RESULTS:
                break
            if (hits or problems) and time.monotonic() - posted >= POST_INTERVAL:
                self.post_message(SearchFound(query, hits, problems, done, total))
                hits, problems, posted = [], [], time.monotonic()
            time.sleep(0)  # let the UI thread take the GIL between episodes
        if not worker.is_cancelled:
            self.post_message(SearchFound(query, hits, problems, done, total, finished=True))

    @on(SearchFound)
    def _found(self, message: SearchFound) -> None:
        if message.query != self.query_text:
            return  # a batch of a search that a newer query replaced
        self.source.hits.extend(message.hits)
        self.problems.extend(message.problems)
        self.done = message.done
        self.finished = message.finished
        self.results.refresh_rows()
        if message.hits and self.results.cursor == 0:
            self.results.set_cursor(0, force=True)
        self.update_status()

    def update_status(self) -> None:
        if not self.is_mounted:
            return
        scope = (
            f"episode {self.session_id}"
            if self.this_episode and self.session_id is not None
            else f"all {len(self.demos)} episodes"
        )
        text = Text(f"in {scope}", style="dim")
        count = len(self.source)
        if self.query_text:
            text.append(f" · {count} {'result' if count == 1 else 'results'}", style="bold")
            if count >= MAX_RESULTS:
                text.append(f" (stopped at {MAX_RESULTS}: narrow the query)", style="yellow")
            elif not self.finished:
                text.append(f" · searching {self.done}/{self.total}…", style="yellow")
            elif not count:
                text.append(" · no match for ")
                text.append(repr(strip_control(self.query_text)), style="yellow")
        if self.problems:
            text.append(f" · {len(self.problems)} unreadable episodes skipped", style="red")
        if self.session_id is not None:
            text.append("  ctrl+t: " + ("all episodes" if self.this_episode else "this episode"), style="dim")
        self.query_one("#search-status", Static).update(text)

    # -- actions ----------------------------------------------------------------------------
    def action_toggle_scope(self) -> None:
        if self.session_id is None:
            self.notify("open an episode to search only in it", severity="warning", timeout=2)
            return
        self.this_episode = not self.this_episode
        self.restart()

    def action_to_results(self) -> None:
        if len(self.source):
            self.results.focus()

    def action_move(self, delta: int) -> None:
        self.results.focus()
        self.results.set_cursor(self.results.cursor + delta)

    def action_close(self) -> None:
        if self.results.has_focus:
            self.query_one("#search-query", Input).focus()
        else:
            self.dismiss(None)

    @on(LazyTable.Selected, "#search-results")
    def _selected(self, event: LazyTable.Selected) -> None:
        self.dismiss(self.source.hits[event.index])

    def step(self, direction: int) -> SearchHit | None:
        """The result after (before) the one last opened, made current; None past either end."""
        index = self.results.cursor + direction if self.is_mounted else -1
        if not 0 <= index < len(self.source):
            return None
        self.results.set_cursor(index)
        return self.source.hits[index]

    @property
    def current(self) -> SearchHit | None:
        if not len(self.source):
            return None
        return self.source.hits[self.results.cursor]


class GoToModal(ModalScreen[int | None]):
    """Type a session number (or a log's episode id) and enter; a bad one is explained in place."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel", id="goto.cancel")]

    def __init__(self, demos: EpisodeSet) -> None:
        super().__init__(id="goto")
        self.demos = demos

    def compose(self) -> ComposeResult:
        ids = self.demos.session_ids
        span = f"sessions {min(ids)}–{max(ids)}" if ids else "no sessions loaded"
        with Vertical(classes="dialog"):
            yield Label(Text("Go to session", style="bold"))
            yield Input(placeholder=f"session number ({span})", id="goto-session")
            yield Static(id="goto-error")
            yield Label(Text("enter opens it · esc cancels", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#goto-session", Input).focus()

    @on(Input.Submitted, "#goto-session")
    def _submitted(self, event: Input.Submitted) -> None:
        session_id, error = resolve_session(self.demos, event.value)
        if session_id is not None:
            self.dismiss(session_id)
            return
        self.query_one("#goto-error", Static).update(Text(error, style="bold red"))


def resolve_session(demos: EpisodeSet, typed: str) -> tuple[int | None, str]:
    """The session ``typed`` names (its number, or a log's episode id), or why none does."""
    value = typed.strip()
    if not value:
        return None, "type a session number"
    shown = repr(strip_control(value)) if len(value) <= 40 else repr(strip_control(value[:39]) + "…")
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is not None and number in demos:
        return number, ""
    by_id = demos.session_of(value)
    if by_id is not None:
        return by_id, ""
    ids = demos.session_ids
    span = f"sessions {min(ids)}–{max(ids)}" if ids else "no sessions loaded"
    if number is None:
        return None, f"not a session number: {shown} (type a number, {span})"
    problem = next((p for p in demos.problems if p.session_id == number), None)
    if problem is not None:
        return None, f"session {number} could not be loaded: {strip_control(problem.one_line())}"
    return None, f"no session {number} in the loaded files ({span})"
