"""The last line of defence between a log and the terminal: every frame is checked before it is written.

Views strip control sequences from a log's text where they take it (``sanitize.py``), so widths are
right. A call site that forgets would let a log retitle the terminal, write its clipboard (OSC 0/52)
or feed tmux a passthrough: so :class:`~replay_tui.tui.app_base.AppBase` passes each compositor update
through :func:`guard_update` before Textual turns it into terminal bytes. Textual's own sequences
(colours, links, cursor moves) are made from styles after this point; widgets never put an ESC in
their text. What is allowed through: segments marked as controls, and a bare cursor move (how
``textual-image`` places a sixel picture). Anything else that a terminal would act on is removed and
the segment padded to the cells it took, so the frame keeps its layout.

A clean frame (every frame, when the call sites did their part) costs one ``str.isprintable`` over
its text and is passed as it is; only the strips of a frame that fails it are looked at.
"""

from __future__ import annotations

import re
from typing import TypeVar

from rich.cells import cell_len
from rich.segment import Segment
from textual._compositor import ChopsUpdate, InlineUpdate, LayoutUpdate
from textual.strip import Strip

from replay_tui.sanitize import in_line, unsafe_in_line

_CURSOR_MOVE = re.compile(r"\x1b\[\d+;\d+H")
Update = TypeVar("Update")


def safe_segment(segment: Segment) -> Segment:
    """The segment with nothing a terminal would act on, as wide as it was (controls pass as they are)."""
    text = segment.text
    if segment.control is not None or not unsafe_in_line(text) or _CURSOR_MOVE.fullmatch(text):
        return segment
    clean = in_line(text)
    return Segment(clean + " " * max(0, cell_len(text) - cell_len(clean)), segment.style)


def safe_strip(strip: Strip) -> Strip:
    """``strip`` itself when nothing in it could drive the terminal, else a copy with such text removed."""
    if not unsafe_in_line(strip.text):
        return strip
    return Strip([safe_segment(segment) for segment in strip], strip.cell_length)


def _strips(update: object) -> list[Strip]:
    if isinstance(update, ChopsUpdate):
        return [strip for chops in update.chops for strip in chops.values() if strip is not None]
    if isinstance(update, LayoutUpdate):
        return [strip for line in update.strips for strip in line]
    if isinstance(update, InlineUpdate):
        return list(update.strips)
    return []


def guard_update(update: Update) -> Update:
    """A compositor update whose strips are all :func:`safe_strip` (the update changed in place). A
    frame whose whole text is printable (each one, when the views did their part) is passed at once."""
    if "".join([segment.text for strip in _strips(update) for segment in strip]).isprintable():
        return update
    if isinstance(update, ChopsUpdate):
        for chops in update.chops:
            for x, strip in chops.items():
                if strip is not None:
                    chops[x] = safe_strip(strip)  # type: ignore[index]  # a dict the compositor made for this update
    elif isinstance(update, LayoutUpdate):
        update.strips = [[safe_strip(strip) for strip in line] for line in update.strips]
    elif isinstance(update, InlineUpdate):
        update.strips = [safe_strip(strip) for strip in update.strips]
    return update
