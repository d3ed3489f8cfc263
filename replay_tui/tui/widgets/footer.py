"""KeysFooter: the screen's keys drawn as one widget, in its first frame, with the essential keys kept.

Textual's Footer mounts a FooterKey widget per binding (~30 on the stepper), composes empty and
recomposes after the first refresh and on every bindings update (each focus move): styling and
laying out those widgets was a third of a screen's start, and the keys came a frame or more after
the rest of the screen. This one draws the same line (Textual's Footer's look: its CSS variables
and paddings, the command palette's key on the right behind a thin rule) as one text, lays it out
again only when the shown keys or the width change, and maps a click or the mouse's hover to the
key under it.

On a narrow terminal Textual's Footer cuts its keys off at the right edge, where the app's keys
(help, policy, export, visual, quit) are. This one goes compact and leaves out the screen's less
essential keys, last first, so that the essential ones (``ESSENTIAL``) stay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import ActiveBinding, Binding
from textual.screen import Screen
from textual.widget import Widget

PALETTE_WIDTH = 13
"""What the command palette's key (``▏^p palette``, on the right) takes, at most."""


def shown_bindings(screen: Screen[Any]) -> tuple[tuple[object, ...], ...]:
    """What the footer shows of ``screen``'s active bindings: key, label, action, group, enabled, tooltip."""
    return _shown(screen.active_bindings)


def _shown(active: Mapping[str, ActiveBinding]) -> tuple[tuple[object, ...], ...]:
    return tuple(
        (binding.key, binding.key_display, binding.description, binding.action, binding.group, enabled, tooltip)
        for (_, binding, enabled, tooltip) in active.values()
        if binding.show
    )


@dataclass(frozen=True)
class PlacedKey:
    """A key as drawn: cells ``start`` to ``end`` (exclusive) of the footer's line."""

    key: str
    display: str
    description: str
    action: str
    enabled: bool
    tooltip: str
    start: int
    end: int


class KeysFooter(Widget, can_focus=False):
    """The screen's keys on one line (see the module); a key is clicked as it is pressed."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "footer-key--key",
        "footer-key--description",
        "footer-key--hover",
        "footer-key--rule",
    }
    DEFAULT_CSS = """
    KeysFooter {
        color: $footer-foreground;
        background: $footer-background;
        dock: bottom;
        height: 1;
        text-wrap: nowrap;
        .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .footer-key--hover {
            background: $block-hover-background;
        }
        .footer-key--rule {
            color: $foreground 20%;
        }
    }
    """

    ESSENTIAL: ClassVar[frozenset[str]] = frozenset(
        {"app.help", "app.settings", "app.export", "app.visual", "app.quit"}
    )
    """Binding ids kept at any width (the keys a new user needs: ? p e v q)."""

    def __init__(self, *, show_command_palette: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.show_command_palette = show_command_palette
        self.compact = False
        """Drawn compact (less space around each key): chosen by the width."""
        self._shown: tuple[tuple[object, ...], ...] | None = None
        self._width = -1
        self._keys: list[PlacedKey] = []
        self._palette: PlacedKey | None = None
        self._hover: PlacedKey | None = None
        self._check_pending = False
        self._styles: dict[str, Style] = {}

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Published on every focus move, often several times in a row: checked once, soon after."""
        if screen is self.screen and not self._check_pending:
            self._check_pending = True
            self.call_later(self._check_bindings)

    def _check_bindings(self) -> None:
        self._check_pending = False
        if self.is_attached and shown_bindings(self.screen) != self._shown:
            self._shown = None  # laid out again at the next render
            self.refresh()

    def fitting(
        self, width: int, active: Mapping[str, ActiveBinding] | None = None
    ) -> tuple[bool, list[tuple[Binding, bool, str]]]:
        """(compact, the bindings to show) for ``width`` cells: every one when they fit, else compact
        and without the last non-essential ones until they fit."""
        keys: dict[str, tuple[Binding, bool, str]] = {}
        for _, binding, enabled, tooltip in (self.screen.active_bindings if active is None else active).values():
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

    @property
    def placed(self) -> list[PlacedKey]:
        """The keys as drawn at the current width, left to right (the palette's key last)."""
        self._layout()
        return self._keys + ([self._palette] if self._palette is not None else [])

    def _layout(self) -> None:
        width = self.size.width or self.app.size.width
        if self._shown is not None and width == self._width:
            return
        active = self.screen.active_bindings  # computed from the focus chain on each read
        self._shown = _shown(active)
        self._width = width
        compact, chosen = self.fitting(width, active)
        self.compact = compact
        placed: list[PlacedKey] = []
        x = 0
        for binding, enabled, tooltip in chosen:
            display = self.app.get_key_display(binding)
            if not binding.description:
                size = cell_len(display)
            else:  # Textual's FooterKey: " key desc " (compact "key desc" and a margin of one)
                size = cell_len(display) + cell_len(binding.description) + (1 if compact else 3)
            placed.append(
                PlacedKey(binding.key, display, binding.description, binding.action, enabled, tooltip, x, x + size)
            )
            x += size + (1 if compact else 0)
        self._keys = placed
        self._palette = self._place_palette(width, active)
        self._hover = None

    def _place_palette(self, width: int, active: Mapping[str, ActiveBinding]) -> PlacedKey | None:
        """The command palette's key at the right end: ``▏^p palette`` and a space (its padding, or
        when compact a margin as Textual's compact footer gives every key)."""
        if not (self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE):
            return None
        try:
            _node, binding, enabled, _tooltip = active[self.app.COMMAND_PALETTE_BINDING]
        except KeyError:
            return None
        display = self.app.get_key_display(binding)
        size = 1 + cell_len(display) + 1 + cell_len(binding.description) + 1
        tooltip = binding.tooltip or binding.description
        end = width - 1 if self.compact else width
        return PlacedKey(
            binding.key, display, binding.description, binding.action, enabled, tooltip, max(0, width - size), end
        )

    def render(self) -> Text:
        self._layout()
        width = self._width
        base = self.rich_style
        parts = ("key", "description", "hover", "rule")
        self._styles = {name: self.get_component_rich_style(f"footer-key--{name}") for name in parts}
        self._styles["base"] = base
        line = Text(no_wrap=True, overflow="crop", end="")
        palette = self._palette
        room = palette.start if palette is not None else width
        for key in self._keys:
            if key.start >= room:
                break
            line.append(" " * (key.start - line.cell_len), base)
            line.append_text(self._key_text(key))
        line.truncate(room)
        line.append(" " * (room - line.cell_len), base)
        if palette is not None:
            rule = self._styles["rule"]
            line.append("▏", Style(color=rule.color, bgcolor=base.bgcolor) + self._over(palette))
            line.append_text(self._key_text(palette, palette=True))
            line.append(" " * (width - line.cell_len), base)
        return line

    def _over(self, key: PlacedKey) -> Style:
        """The hover's background when the mouse is over ``key`` (Textual's FooterKey:hover)."""
        if key is not self._hover:
            return Style()
        return Style(bgcolor=self._styles["hover"].bgcolor)

    def _key_text(self, key: PlacedKey, palette: bool = False) -> Text:
        """``key`` as Textual's FooterKey draws it: `` key desc `` (compact, and the palette's: ``key desc``)."""
        over = self._over(key)
        key_style = self._styles["key"] + over
        description_style = self._styles["description"] + over
        base = self._styles["base"] + (Style(dim=True) if not key.enabled else Style())
        if not key.description:
            text = Text(key.display, key_style)
        elif self.compact or palette:
            text = Text.assemble((key.display, key_style), (" " + key.description, description_style))
            if palette and not self.compact:
                text.append(" ", base + over)  # its padding (compact: the margin, not part of the key)
        else:
            text = Text.assemble((f" {key.display} ", key_style), (f"{key.description} ", description_style))
        text.stylize_before(base)
        return text

    def key_at(self, x: int) -> PlacedKey | None:
        """The key drawn at cell ``x`` of the line (None: between keys)."""
        return next((key for key in reversed(self.placed) if key.start <= x < key.end), None)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        key = self.key_at(event.x)
        if key is not self._hover:
            self._hover = key
            self.tooltip = key.tooltip if key is not None and key.tooltip else None
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self._hover is not None:
            self._hover = None
            self.tooltip = None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        key = self.key_at(event.x)
        if key is None:
            return
        if key.enabled:
            self.app.simulate_key(key.key)
        else:
            self.app.bell()

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width:
            self.refresh()
