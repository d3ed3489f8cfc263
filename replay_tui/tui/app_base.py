"""The base of every replay-tui App: shared styles, the help dialog, the command palette, the keymap.

``AppBase`` is what the replay app and the single-purpose tools have in common; ``ToolApp`` is a
single-purpose tool (visual inspector, visual batch, verify browser), which also quits on ``q``.
Each app adds its own stylesheet from ``styles/`` after ``base.tcss``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.types import CSSPathType

from replay_tui.tui.screens.help import HelpScreen, bound_keys, own_bindings

STYLES = Path(__file__).resolve().parent / "styles"


def stylesheets(*names: str) -> list[str | PurePath]:
    """``base.tcss`` then the named files of ``styles/``: an app's CSS_PATH (absolute, so subclasses
    anywhere find them)."""
    return [STYLES / "base.tcss", *(STYLES / name for name in names)]


class AppBase(App[None]):
    """Dialogs, help and status line styled alike (``base.tcss``), ``?`` for help, every binding in
    the command palette under its description and keys."""

    CSS_PATH: ClassVar[CSSPathType | None] = stylesheets()
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark,f1", "help", "Help", id="app.help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.keymap: dict[str, str] = {}  # binding id -> keys, as the user wrote them

    def set_keymap(self, keymap: Mapping[str, str]) -> None:
        super().set_keymap(dict(keymap))
        self.keymap = dict(keymap)

    def update_keymap(self, keymap: Mapping[str, str]) -> None:
        super().update_keymap(dict(keymap))
        self.keymap = {**self.keymap, **keymap}

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen, self.keymap))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's commands, then every described binding of the screen and the app."""
        yield from super().get_system_commands(screen)
        seen: set[str] = set()
        for owner in (screen, self):
            for binding in own_bindings(owner):
                name = binding.id or binding.action
                if not binding.description or name in seen:
                    continue
                seen.add(name)
                keys = " or ".join(bound_keys(self, binding, self.keymap))
                help_text = f"{binding.tooltip} · press {keys}" if binding.tooltip else f"press {keys}"
                yield SystemCommand(binding.description, help_text, self._command_callback(owner, binding.action))

    def _command_callback(self, owner: Screen | App, action: str):
        async def run() -> None:
            await self.run_action(action, owner)

        return run


class ToolApp(AppBase):
    """A single-purpose tool app (inspector, visual batch, verify browser): ``q`` quits."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", id="app.quit"),
    ]
