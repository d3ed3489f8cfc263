"""KeysFooter: Textual's Footer, with its keys in the screen's first frame and rebuilt only when they change.

Textual's Footer composes empty, then recomposes (mounting a FooterKey per binding, ~30 here)
after the screen's first refresh, and again on every bindings update (each focus move). On a
pushed screen that put the footer a frame or more after the rest of the screen (up to 300 ms on
a busy machine). This one composes its keys at mount and skips a recompose that would show the
same keys.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


def shown_bindings(screen: Screen[Any]) -> tuple[tuple[object, ...], ...]:
    """What a Footer shows of ``screen``'s active bindings: key, label, action, enabled, tooltip."""
    return tuple(
        (binding.key, binding.key_display, binding.description, binding.action, binding.group, enabled, tooltip)
        for (_, binding, enabled, tooltip) in screen.active_bindings.values()
        if binding.show
    )


class KeysFooter(Footer):
    """A Footer whose keys are there from the first frame (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.set_reactive(Footer._bindings_ready, True)
        self._shown: tuple[tuple[object, ...], ...] | None = None

    def compose(self) -> ComposeResult:
        self._shown = shown_bindings(self.screen)
        yield from super().compose()

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if screen is self.screen and self._shown is not None and shown_bindings(screen) == self._shown:
            return  # the same keys: a recompose would remount ~30 widgets to draw what is there
        super().bindings_changed(screen)
