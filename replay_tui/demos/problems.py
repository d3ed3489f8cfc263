"""Load problems: errors as values, so one bad episode never hides the others."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class LoadProblem(BaseModel):
    """Something wrong in a demo file, located as precisely as the file allows.

    ``index`` is the episode's position in its file (0-based); ``field`` is a path inside the
    episode such as ``trajectory[3].reward``. ``index`` is None for file-level problems.
    """

    file: str
    message: str
    index: int | None = None
    session_id: int | str | None = None
    field: str | None = None
    severity: Literal["error", "warning"] = "error"

    def one_line(self) -> str:
        """A single human-readable line: ``file: episode #i (session s): field: message``."""
        parts = [self.file]
        if self.index is not None:
            where = f"episode #{self.index}"
            if self.session_id is not None:
                where += f" (session {self.session_id})"
            parts.append(where)
        if self.field:
            parts.append(f"field {self.field}")
        text = ": ".join(parts) + ": " + self.message
        return " ".join(text.split())

    def __str__(self) -> str:
        return self.one_line()


class EpisodeLoadError(Exception):
    """Raised when an indexed episode turns out malformed on parsing; carries the problem."""

    def __init__(self, problem: LoadProblem):
        super().__init__(problem.one_line())
        self.problem = problem


class DemoFileError(Exception):
    """A demo file that cannot be read at all (missing, empty, not JSON); message is one line."""
