"""StepDetail: the stepper's few lines about the current step, above its panes.

It keeps the screen still while stepping: a layout re-renders the whole screen (33 vs 18 ms of
CPU a step, measured on small steps), so a step's text costs one only when it needs more rows
than the detail has, or, outside stepping, when the detail should shrink to its content.
"""

from __future__ import annotations

from rich.text import Text
from textual.css.scalar import Unit
from textual.widgets import Static


class StepDetail(Static):
    def show_step(self, text: Text, *, stepping: bool = False) -> None:
        """Show ``text``; ``stepping`` (the cursor moved): keep the height unless it must grow."""
        width = self.content_region.width
        self.update(text, layout=False)
        if width <= 0:
            self.refresh(layout=True)
            return
        height = self.get_content_height(self.container_size, self.screen.size, width)
        limit = self.styles.max_height
        if limit is not None and limit.unit == Unit.CELLS:
            height = min(height, int(limit.value))
        shown = self.content_region.height
        if height > shown or (height < shown and not stepping):
            self.refresh(layout=True)
