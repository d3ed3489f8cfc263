"""KeysFooter: Textual's Footer, with its keys in the screen's first frame and rebuilt only when they change.

Textual's Footer composes empty, then recomposes (mounting a FooterKey per binding, ~30 here)
after the screen's first refresh, and again on every bindings update (each focus move). On a
pushed screen that put the footer a frame or more after the rest of the screen (up to 300 ms on
a busy machine). This one composes its keys at mount and skips a recompose that would show the
same keys.

On a narrow terminal Textual's Footer cuts its keys off at the right edge, where the app's keys
(help, policy, export, visual, quit) are. This one goes compact and leaves out the screen's
less essential keys, last first, so that the essential ones (``ESSENTIAL``) stay.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PALETTE_WIDTH = 13
"""What the command palette's key (``▏^p palette``, docked right) takes."""


def shown_bindings(screen: Screen[Any]) -> tuple[tuple[object, ...], ...]:
    """What a Footer shows of ``screen``'s active bindings: key, label, action, enabled, tooltip."""
    return tuple(
        (binding.key, binding.key_display, binding.description, binding.action, binding.group, enabled, tooltip)
        for (_, binding, enabled, tooltip) in screen.active_bindings.values()
        if binding.show
    )


class KeysFooter(Footer):
    """A Footer whose keys are there from the first frame and whose essential keys fit (see the module)."""

    ESSENTIAL: ClassVar[frozenset[str]] = frozenset(
        {"app.help", "app.settings", "app.export", "app.visual", "app.quit"}
    )
    """Binding ids kept at any width (the keys a new user needs: ? p e v q)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.set_reactive(Footer._bindings_ready, True)
        self._shown: tuple[tuple[object, ...], ...] | None = None
        self._width = 0

    def fitting(self, width: int) -> tuple[bool, list[tuple[Binding, bool, str]]]:
        """(compact, the bindings to show) for ``width`` cells: every one when they fit, else compact
        and without the last non-essential ones until they fit."""
        keys: dict[str, tuple[Binding, bool, str]] = {}
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show:
                keys.setdefault(binding.action, (binding, enabled, tooltip))
        chosen = list(keys.values())
        room = width - (PALETTE_WIDTH if self.app.ENABLE_COMMAND_PALETTE else 0)

        def needed(compact: bool) -> int:
            pad = 2 if compact else 3  # " key desc " vs "key desc "
            return sum(
                cell_len(self.app.get_key_display(binding)) + cell_len(binding.description) + pad
                for binding, _, _ in chosen
            )

        if needed(False) <= room:
            return False, chosen
        for item in reversed(list(chosen)):
            if needed(True) <= room:
                break
            if item[0].id not in self.ESSENTIAL:
                chosen.remove(item)
        return True, chosen

    def compose(self) -> ComposeResult:
        self._shown = shown_bindings(self.screen)
        self._width = self.app.size.width
        compact, chosen = self.fitting(self._width)
        self.set_reactive(Footer.compact, compact)
        self.set_class(compact, "-compact")
        for binding, enabled, tooltip in chosen:
            key = FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
                classes="-compact" if compact else "",
            )
            key.set_reactive(FooterKey.compact, compact)  # styled once at mount, not twice more by the watcher
            yield key.data_bind(compact=Footer.compact)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            try:
                _node, binding, enabled, tooltip = self.screen.active_bindings[self.app.COMMAND_PALETTE_BINDING]
            except KeyError:
                return
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                classes="-command-palette -compact",  # Textual's: never bound, compact from the start
                disabled=not enabled,
                tooltip=binding.tooltip or binding.description,
            )

    def on_resize(self, event: events.Resize) -> None:
        if self._shown is not None and event.size.width != self._width:
            self.call_after_refresh(self.recompose)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if (
            screen is self.screen
            and self._shown is not None
            and shown_bindings(screen) == self._shown
            and self.app.size.width == self._width
        ):
            return  # the same keys: a recompose would remount ~30 widgets to draw what is there
        super().bindings_changed(screen)
