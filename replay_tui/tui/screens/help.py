"""The help screen: every binding of the app and the screen below, with its id for remapping."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def binding_rows(screen: Screen) -> list[tuple[str, str, str, str]]:
    """(group, keys, description, id) for the app's, the screen's and its widgets' bindings."""
    from replay_tui.tui.widgets.lazy_table import LazyTable
    from replay_tui.tui.widgets.text_pane import TextPane

    rows: list[tuple[str, str, str, str]] = []
    app = screen.app
    groups = [("app", app.BINDINGS), (screen.id or "screen", getattr(type(screen), "BINDINGS", []))]
    groups += [("tables", LazyTable.BINDINGS), ("panes", TextPane.BINDINGS)]
    keymap = getattr(app, "_keymap", {}) or {}
    for group, bindings in groups:
        for binding in bindings:
            if not isinstance(binding, Binding):
                continue
            keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
            shown = ", ".join(app.get_key_display(Binding(k.strip(), "")) for k in keys.split(","))
            rows.append((group, shown, binding.description or binding.action, binding.id or ""))
    return rows


class HelpScreen(ModalScreen[None]):
    """Lists every binding; escape, q or ? closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss(None)", "Close", id="help.close"),
    ]

    def __init__(self, below: Screen):
        super().__init__(id="help")
        self.rows = binding_rows(below)

    def compose(self) -> ComposeResult:
        table = Table(title="replay-tui keys", expand=True, show_lines=False)
        table.add_column("where", style="dim")
        table.add_column("keys", style="bold cyan")
        table.add_column("does")
        table.add_column("binding id (remap in config.toml [keymap])", style="dim")
        for group, keys, description, binding_id in self.rows:
            table.add_row(group, Text(keys), Text(description), Text(binding_id))
        with VerticalScroll(classes="dialog help-dialog"):
            yield Static(table)
            yield Static(Text("Every action is also in the command palette (ctrl+p).", style="dim"))


class ToolApp(App[None]):
    """Base of the single-purpose apps (inspector, visual batch): the main app's styles, help and quit."""

    CSS_PATH = str(Path(__file__).resolve().parent.parent / "app.tcss")  # absolute: subclasses live elsewhere
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark,f1", "help", "Help", id="tool.help"),
        Binding("q", "quit", "Quit", id="tool.quit"),
    ]

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))
