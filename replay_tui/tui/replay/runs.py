"""The runs screen: the saved runs of the open files; open, rename, delete, mark two and compare.

Renames and deletions are file operations done here (they are quick); opening a run and keeping the
App's session run in step are asked of the App with messages (:class:`RunOpenRequested`,
:class:`RunRenamed`, :class:`RunDeleted`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Label, Static

from replay_tui.runs import RunEntry, RunError, RunInfo, RunStore
from replay_tui.sanitize import in_line, one_line, strip_control
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.lazy_table import Column, LazyTable

MAX_MARKED = 2
RUN_COLUMNS = (
    Column("mark", "", 2),
    Column("date", "date", 16),
    Column("name", "name", flex=True),
    Column("policy", "policy · model", 28),
    Column("accuracy", "accuracy", 8, justify="right"),
    Column("episodes", "episodes", 8, justify="right"),
    Column("steps", "steps", 7, justify="right"),
    Column("complete", "complete", 9),
)


# -- messages to the App ---------------------------------------------------------------------------
@dataclass
class RunOpenRequested(Message):
    """Show a saved run's results in place of the current ones."""

    path: Path


@dataclass
class RunRenamed(Message):
    path: Path
    info: RunInfo


@dataclass
class RunDeleted(Message):
    path: Path


# -- dialogs ---------------------------------------------------------------------------------------
class RunNameModal(ModalScreen[str | None]):
    """A run's new name: enter saves, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel", id="run_name.cancel")]

    def __init__(self, current: str):
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Rename the run", style="bold"))
            yield Input(self.current, id="run-name")
            yield Label(Text("enter saves · esc cancels", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submit(self) -> None:
        value = " ".join(self.query_one(Input).value.split())
        if not value:
            self.notify("give the run a name", severity="error")
            return
        self.dismiss(value)


class ConfirmModal(ModalScreen[bool]):
    """A yes/no question: y or enter confirms, n or escape declines."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "dismiss(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "dismiss(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str):
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(self.question, style="bold"))
            yield Label(Text("y or enter: yes · n or esc: no", style="dim"))


# -- the screen ------------------------------------------------------------------------------------
class RunsSource:
    """The runs as table rows (newest first), with the marks."""

    columns: Sequence[Column] = RUN_COLUMNS

    def __init__(self, entries: list[RunEntry], marked: list[Path], current: str | None):
        self.entries = entries
        self.marked = marked
        self.current = current

    def __len__(self) -> int:
        return len(self.entries)

    def row_style(self, index: int) -> str:
        return "red" if self.entries[index].broken else ""

    def cells(self, index: int) -> Sequence[Text]:
        entry = self.entries[index]
        mark = Text("")
        if entry.path in self.marked:
            mark = Text("AB"[self.marked.index(entry.path)], style="bold reverse")
        elif entry.id == self.current:
            mark = Text("●", style="cyan")
        if entry.broken:
            cells = {
                "date": Text(entry.date, style="dim"),
                "name": Text(f"{strip_control(entry.path.name)}: {one_line(entry.error or '')}", style="red"),
                "complete": Text("broken", style="bold red"),
            }
        else:
            accuracy = "—" if entry.accuracy is None else f"{entry.accuracy:.1%}"
            cells = {
                "date": Text(entry.date),
                "name": Text(strip_control(one_line(entry.name))),
                "policy": Text(strip_control(one_line(entry.describe_policy))),
                "accuracy": Text(accuracy, style="green" if entry.accuracy == 1.0 else ""),
                "episodes": Text("" if entry.episodes is None else str(entry.episodes)),
                "steps": Text("" if entry.steps is None else str(entry.steps)),
                "complete": Text("✓", style="green") if entry.complete else Text("cancelled", style="yellow"),
            }
        cells["mark"] = mark
        return [cells.get(column.key, Text("")) for column in self.columns]


class RunsScreen(Screen):
    """The runs of the open files, newest first. ``current`` is the id of the run the app is writing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", id="runs.open"),
        Binding("n,f2", "rename", "Rename", id="runs.rename"),
        Binding("d", "delete", "Delete", id="runs.delete"),
        Binding("space", "mark", "Mark", id="runs.mark"),
        Binding("c", "compare", "Compare marked", id="runs.compare"),
        Binding("escape", "close", "Back", id="runs.close"),
    ]

    def __init__(self, store: RunStore, folder: Path, files: str, current: str | None = None):
        super().__init__(id="runs")
        self.store = store
        self.folder = folder
        self.files = files
        self.current = current
        self.entries: list[RunEntry] = []
        self.marked: list[Path] = []
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield Static(id="runs-title")
        yield LazyTable(id="runs-table")
        yield Static(id="status")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.table.focus()
        self.reload()

    @property
    def table(self) -> LazyTable:
        return self.query_one("#runs-table", LazyTable)

    def reload(self, current: str | None = None) -> None:
        """List the folder again (off the UI thread: listing reads every run file's head)."""
        if current is not None:
            self.current = current
        self._list_worker()

    @work(thread=True, exclusive=True, group="runs-list", exit_on_error=False)
    def _list_worker(self) -> None:
        entries = self.store.list(self.folder)
        self.app.call_from_thread(self.show_entries, entries)

    def show_entries(self, entries: list[RunEntry]) -> None:
        keep = self.selected()
        self.entries = entries
        paths = [entry.path for entry in entries]
        self.marked = [path for path in self.marked if path in paths]
        cursor = paths.index(keep.path) if keep is not None and keep.path in paths else 0
        self.table.set_source(RunsSource(entries, self.marked, self.current), cursor=cursor)
        self.loaded = True
        self.update_title()

    def update_title(self) -> None:
        text = Text()
        text.append("runs ", style="bold")
        text.append(f"of {in_line(self.files)}", style="bold")
        text.append(f"  {len(self.entries)} saved", style="dim")
        if self.marked:
            text.append(f"  marked {len(self.marked)}/{MAX_MARKED}", style="cyan")
        text.append(f"  {in_line(str(self.folder))}", style="dim")
        self.query_one("#runs-title", Static).update(text)
        hint = "enter opens · n renames · d deletes · space marks two · c compares them · esc goes back"
        self.query_one("#status", Static).update(Text(hint))

    def selected(self) -> RunEntry | None:
        if not self.entries:
            return None
        index = self.table.cursor
        return self.entries[index] if 0 <= index < len(self.entries) else None

    # -- actions ----------------------------------------------------------------------------
    @on(LazyTable.Selected, "#runs-table")
    def _selected(self) -> None:
        self.action_open()

    def action_open(self) -> None:
        entry = self.selected()
        if entry is None:
            return
        if entry.broken:
            self.notify(f"{entry.path.name}: {entry.error}", title="Broken run", severity="error", markup=False)
            return
        self.post_message(RunOpenRequested(entry.path))

    def action_rename(self) -> None:
        entry = self.selected()
        if entry is None or entry.broken:
            return

        def apply(name: str | None) -> None:
            if name is None or name == entry.name:
                return
            try:
                info = self.store.rename(entry.path, name)
            except RunError as exc:
                self.notify(str(exc), title="Rename failed", severity="error", markup=False)
                return
            self.post_message(RunRenamed(entry.path, info))
            self.notify(f"renamed to {name}", timeout=2, markup=False)
            self.reload()

        self.app.push_screen(RunNameModal(entry.name), apply)

    def action_delete(self) -> None:
        entry = self.selected()
        if entry is None:
            return

        def apply(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self.store.delete(entry.path)
            except RunError as exc:
                self.notify(str(exc), title="Delete failed", severity="error", markup=False)
                return
            self.post_message(RunDeleted(entry.path))
            self.notify(f"deleted {entry.name}", timeout=2, markup=False)
            self.reload()

        self.app.push_screen(ConfirmModal(f"Delete the run {one_line(entry.name)}?"), apply)

    def action_mark(self) -> None:
        entry = self.selected()
        if entry is None:
            return
        if entry.path in self.marked:
            self.marked.remove(entry.path)
        elif entry.broken:
            self.notify("a broken run cannot be compared", severity="warning")
            return
        else:
            if len(self.marked) >= MAX_MARKED:
                self.marked.pop(0)
            self.marked.append(entry.path)
        self.table.refresh_rows()
        self.update_title()
        if self.table.cursor < len(self.entries) - 1:
            self.table.set_cursor(self.table.cursor + 1)

    def action_compare(self) -> None:
        if len(self.marked) != MAX_MARKED:
            self.notify("mark two runs to compare (space)", severity="warning")
            return
        compare = getattr(self.app, "compare_runs", None)
        if not callable(compare):
            self.notify("compare view not available", severity="warning")
            return
        by_path = {entry.path: entry for entry in self.entries}
        # the older run is the baseline (A), the newer one the candidate (B)
        a, b = sorted(self.marked, key=lambda path: by_path[path].created)
        compare(a, b)

    def action_close(self) -> None:
        self.app.pop_screen()
