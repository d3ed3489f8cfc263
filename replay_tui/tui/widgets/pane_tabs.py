"""PaneTabs: the tab bar the stepper shows above its panes when they are too narrow to sit side
by side; it draws the tabs it is given and knows nothing of the panes themselves."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

HINTS = ("1-4/w: pane · z: zoom", "1-4/w · z")
"""The key hint after the tabs, longest first: the first that fits is shown."""


class PaneTabs(Static):
    """One line: ``▶1 observation  2 prompt ...`` with the active tab reversed."""

    def show_tabs(self, titles: Sequence[str], active: int, room: int) -> None:
        """Draw ``titles`` (numbered from 1, ``active`` the index of the shown pane) in ``room`` cells."""
        bar = Text(no_wrap=True, overflow="ellipsis")
        for number, title in enumerate(titles, start=1):
            if number - 1 == active:
                bar.append(f"▶{number} {title}", style="bold reverse")
            else:
                bar.append(f" {number} {title}", style="")
            bar.append(" ")
        for hint in HINTS:
            if bar.cell_len + len(hint) <= room:
                bar.append(hint, style="italic")
                break
        self.update(bar)
