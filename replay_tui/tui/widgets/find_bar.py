"""FindBar: the stepper's find box, which says what the user asked for and leaves the search to
its screen.

It posts :class:`FindBar.Search` as the query changes, :class:`FindBar.Step` for the next or
previous match (enter, ↓, ↑) and :class:`FindBar.Close` on escape; the screen owns the panes
and the matches, so the box never reaches into them.
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import Input

PLACEHOLDER = "find in panes (enter: next, ↑/↓: previous/next, esc: close)"


class FindBar(Input):
    """A one-line find box, hidden until :meth:`open`."""

    class Search(Message):
        """The query changed: search the panes for it ("" clears the highlights)."""

        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class Step(Message):
        """Move to the next (1) or previous (-1) match."""

        def __init__(self, direction: int) -> None:
            super().__init__()
            self.direction = direction

    class Close(Message):
        """The user closed the box (escape)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(placeholder=PLACEHOLDER, id=id)
        self.display = False

    def open(self) -> None:
        self.display = True
        self.focus()

    def close(self) -> None:
        """Empty and hide the box; its Search("") clears what the last query highlighted."""
        self.value = ""
        self.display = False

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Search(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Step(1))

    def on_key(self, event: events.Key) -> None:
        if event.key in ("up", "down"):
            self.post_message(self.Step(-1 if event.key == "up" else 1))
            event.stop()
        elif event.key == "escape":
            self.post_message(self.Close())
            event.stop()
