"""The help screen: every binding of the app and the screen below, with its id for remapping."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import ClassVar

from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def own_bindings(node: DOMNode) -> Iterator[Binding]:
    """The bindings a node's own classes declare, base classes first (Textual's built-in ones left out).

    A binding redeclared by a subclass (same id, or same key and action) is listed once, where the
    base class put it: the order the footer shows.
    """
    seen: set[str] = set()
    for cls in reversed(type(node).__mro__):
        if cls.__module__.partition(".")[0] == "textual":
            continue
        for binding in cls.__dict__.get("BINDINGS", []):
            if not isinstance(binding, Binding):
                continue
            key = binding.id or f"{binding.key}:{binding.action}"
            if key not in seen:
                seen.add(key)
                yield binding


def bound_keys(app: App, binding: Binding, keymap: Mapping[str, str]) -> list[str]:
    """A binding's keys as the user reads them (``?``, ``f1``, ``^p``), after the user's keymap."""
    keys = keymap.get(binding.id, binding.key) if binding.id else binding.key
    return [app.get_key_display(Binding(key.strip(), "")) for key in keys.split(",") if key.strip()]


def binding_rows(screen: Screen, keymap: Mapping[str, str] | None = None) -> list[tuple[str, str, str, str]]:
    """(group, keys, description, id) for the app's, the screen's and its widgets' bindings, and
    the search dialog's (its input takes ``?``, so its keys are listed here, from every screen)."""
    from replay_tui.tui.screens.search import GoToModal, SearchScreen
    from replay_tui.tui.widgets.lazy_table import LazyTable
    from replay_tui.tui.widgets.text_pane import TextPane

    rows: list[tuple[str, str, str, str]] = []
    app = screen.app
    groups: list[tuple[str, list[BindingType]]] = [
        ("app", list(own_bindings(app))),
        (screen.id or "screen", list(own_bindings(screen))),
    ]
    groups += [("tables", LazyTable.BINDINGS), ("panes", TextPane.BINDINGS)]
    dialogs = [("search", SearchScreen.BINDINGS), ("goto", GoToModal.BINDINGS)]
    groups += [(group, bindings) for group, bindings in dialogs if group != screen.id]
    for group, bindings in groups:
        for binding in bindings:
            if not isinstance(binding, Binding):
                continue
            shown = ", ".join(bound_keys(app, binding, keymap or {}))
            rows.append((group, shown, binding.description or binding.action, binding.id or ""))
    return rows


class HelpScreen(ModalScreen[None]):
    """Lists every binding; escape, q or ? closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "dismiss(None)", "Close", id="help.close"),
    ]

    def __init__(self, below: Screen, keymap: Mapping[str, str] | None = None):
        super().__init__(id="help")
        self.rows = binding_rows(below, keymap)

    def compose(self) -> ComposeResult:
        # Rich reads a str title or header as markup, which would swallow "[keymap]": escape them.
        table = Table(title=escape(f"{self.app.title} keys"), expand=True, show_lines=False)
        table.add_column("where", style="dim")
        table.add_column("keys", style="bold cyan")
        table.add_column("does")
        table.add_column(escape("binding id (remap in config.toml [keymap])"), style="dim")
        for group, keys, description, binding_id in self.rows:
            table.add_row(group, Text(keys), Text(description), Text(binding_id))
        with VerticalScroll(classes="dialog help-dialog"):
            yield Static(table)
            yield Static(Text("Every action is also in the command palette (ctrl+p).", style="dim"))
