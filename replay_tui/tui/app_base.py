"""The base of every replay-tui App: shared styles, the help dialog, the command palette, the keymap.

``AppBase`` is what the replay app and the single-purpose tools have in common; ``ToolApp`` is a
single-purpose tool (visual inspector, visual batch, verify browser), which also quits on ``q``.
Each app adds its own stylesheet from ``styles/`` after ``base.tcss``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import ClassVar

from rich.console import RenderableType
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme
from textual.types import CSSPathType
from textual.widget import AwaitMount

from replay_tui.config import ConfigError, default_config_path, load_config, save_theme
from replay_tui.sanitize import strip_control
from replay_tui.tui.output_guard import guard_update
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
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # noqa: RUF012 (App declares it as a ClassVar | None)
    """Screens get ``-short`` below 32 rows (an 80x24 terminal): the stylesheets give panes the rows."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark,f1", "help", "Help", id="app.help"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.keymap: dict[str, str] = {}  # binding id -> keys, as the user wrote them
        self.theme_config: Path | None = None
        """The config file a chosen theme is written to (None: not remembered)."""
        self._config_theme: str | None = None

    def breakpoint_classes(self, screen: Screen) -> dict[str, bool]:
        """The breakpoint classes Textual gives ``screen`` on its first Resize, at the app's size now."""
        classes: dict[str, bool] = {}
        width, height = self.size
        for own, shared, dimension in (
            (screen.HORIZONTAL_BREAKPOINTS, self.HORIZONTAL_BREAKPOINTS, width),
            (screen.VERTICAL_BREAKPOINTS, self.VERTICAL_BREAKPOINTS, height),
        ):
            points = sorted((shared if own is None else own) or [], reverse=True)
            classes.update((name, False) for _, name in points)
            reached = next((name for point, name in points if dimension >= point), None)
            if reached is not None:
                classes[reached] = True
        return classes

    def _get_screen(self, screen: Screen | str) -> tuple[Screen, AwaitMount]:
        """A screen about to be pushed or switched to gets its breakpoint classes (``-short``/``-tall``)
        before it is styled: Textual sets them on the screen's first Resize, after its first frame, which
        styled every widget of the screen again and drew the whole screen twice."""
        target = self.get_screen(screen)
        if not target.is_running:
            target.update_classes(self.breakpoint_classes(target), update=False)
        return super()._get_screen(target)

    def _display(self, screen: Screen, renderable: RenderableType | None) -> None:
        """Every frame passes :func:`~replay_tui.tui.output_guard.guard_update` on its way to the terminal:
        no text in it (a log's, a file name's) can drive the terminal, whatever view drew it."""
        super()._display(screen, guard_update(renderable))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification (screens' and widgets' come here too) without control sequences: they
        name files, runs and errors, which are often a log's or a file system's text."""
        message, title = strip_control(message), strip_control(title)
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def remember_theme(self, config_path: Path | None, theme: str | None) -> None:
        """Start in ``theme`` (the config's) and write each theme chosen later (ctrl+p → theme) to
        ``config_path``, so the next start looks the same."""
        self.theme_config = config_path
        self._config_theme = theme

    def theme_from_config(self) -> AppBase:
        """Start in the user's config theme and remember the one chosen (as the replay app does), for
        the tools the CLI opens on their own (inspector, visual batch, verify). A config that cannot
        be read leaves the theme as it is: those tools do not read the rest of the config."""
        path = default_config_path()
        try:
            theme = load_config().theme
        except ConfigError:
            return self
        self.remember_theme(path, theme)
        return self

    def on_mount(self) -> None:
        theme = self._config_theme
        if theme is not None:
            if theme in self.available_themes:
                self.theme = theme
            else:
                known = ", ".join(sorted(self.available_themes))
                self.notify(f"config theme {theme!r} is not a theme: one of {known}", severity="warning", markup=False)
        self.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, theme: Theme) -> None:
        if self.theme_config is None or theme.name == self._config_theme:
            return
        try:
            save_theme(self.theme_config, theme.name)
        except ConfigError as exc:
            self.notify(f"theme not remembered: {exc}", severity="error", markup=False)
            return
        self._config_theme = theme.name

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
