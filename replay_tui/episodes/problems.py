"""Load problems: errors as values, so one bad episode never hides the others."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, field_validator

SESSION_LABEL_LIMIT = 60
"""Longest text kept for a session id that is not an integer (a problem names what the file held)."""


def session_label(value: Any) -> int | str | None:
    """A session id as a problem shows it: an integer that fits in 64 bits as it is, anything else
    (a float, a list, a huge number, text) as a short text, so a problem can always be made."""
    if value is None or (type(value) is int and -(2**63) <= value < 2**63):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        digits = int(value.bit_length() * 0.30103) + 1
        return f"{'-' if value < 0 else ''}<a {digits:,}-digit integer>"
    text = value if isinstance(value, str) else _short_repr(value)
    if len(text) > SESSION_LABEL_LIMIT:
        text = text[: SESSION_LABEL_LIMIT - 1] + "…"
    return text


def _short_repr(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, dict)):
        kind = "array" if isinstance(value, list) else "object"
        try:
            shown = repr(value)
        except (RecursionError, ValueError):  # nested deep, or an integer of thousands of digits
            shown = ""
        return f"<a JSON {kind}> {shown[:SESSION_LABEL_LIMIT]}".rstrip()
    return f"<{type(value).__name__}>"


class LoadProblem(BaseModel):
    """Something wrong in a demo file, located as precisely as the file allows.

    ``index`` is the episode's position in its file (0-based); ``field`` is a path inside the
    episode such as ``trajectory[3].reward``. ``index`` is None for file-level problems.
    ``session_id`` is what the file holds there: an integer, or a short text when it is not one.
    """

    file: str
    message: str
    index: int | None = None
    session_id: int | str | None = None
    field: str | None = None
    severity: Literal["error", "warning"] = "error"

    @field_validator("session_id", mode="before")
    @classmethod
    def _label(cls, value: Any) -> int | str | None:
        return session_label(value)

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


def problems_at(problems: Iterable[LoadProblem], position: int) -> list[LoadProblem]:
    """The problems of the trajectory entry at ``position`` (a field under ``trajectory[N]``)."""
    prefix = f"trajectory[{position}]"
    return [p for p in problems if p.field and (p.field == prefix or p.field.startswith(prefix + "."))]


def unique_problems(problems: Iterable[LoadProblem]) -> list[LoadProblem]:
    """Each problem once (by its one-line text, the last of equal ones kept), in file and episode order."""
    return sorted(
        {p.one_line(): p for p in problems}.values(),
        key=lambda p: (p.file, -1 if p.index is None else p.index, p.field or "", p.message),
    )


class EpisodeLoadError(Exception):
    """Raised when an indexed episode turns out malformed on parsing; carries the problem."""

    def __init__(self, problem: LoadProblem):
        super().__init__(problem.one_line())
        self.problem = problem


class DemoFileError(Exception):
    """A demo file that cannot be read at all (missing, empty, not JSON); message is one line."""
