"""Messages to the App, which owns every state change.

Replay workers post what happened (``StepReplayed`` ... ``ReplayFinished``); the replay screens
post what the user asked for (``EpisodeOpenRequested`` ... ``StatusRefreshRequested``) and read
the App's state through :class:`ReplayState`, so no screen imports or calls the App.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from textual.message import Message

from replay_tui.demos.problems import LoadProblem
from replay_tui.runner import EpisodeReport, StepResult

if TYPE_CHECKING:
    from replay_tui.workspace import Workspace


class StepReplayed(Message):
    """One step's verdict, as soon as it is judged."""

    def __init__(self, result: StepResult):
        super().__init__()
        self.result = result


class EpisodeReplayed(Message):
    """An episode's report; ``mode`` names the policy that replayed it (what reports say)."""

    def __init__(self, report: EpisodeReport, done: int, total: int, mode: str | None = None):
        super().__init__()
        self.report = report
        self.done = done
        self.total = total
        self.mode = mode


class EpisodeFailed(Message):
    """An episode turned out malformed while replaying; its problem is shown instead."""

    def __init__(self, problem: LoadProblem, done: int, total: int):
        super().__init__()
        self.problem = problem
        self.done = done
        self.total = total


class ReplayFinished(Message):
    def __init__(self, cancelled: bool, error: str | None = None):
        super().__init__()
        self.cancelled = cancelled
        self.error = error


class Rejudged(Message):
    """Stored predictions were judged again under new matching settings (worker -> App)."""

    def __init__(self, reports: dict[int, EpisodeReport], changed: int, matching: str):
        super().__init__()
        self.reports = reports
        self.changed = changed
        self.matching = matching


# -- from the screens ---------------------------------------------------------------------------
@dataclass
class EpisodeOpenRequested(Message):
    """Open an episode in the stepper (at the step labelled ``step_label``, else the first), and
    replay it at once when ``replay``."""

    session_id: int
    replay: bool = False
    step_label: str | None = None


@dataclass
class ReplayRequested(Message):
    session_ids: list[int]


class ReplayCancelRequested(Message):
    """Cancel the running replay, if any."""


@dataclass
class TagRequested(Message):
    """Toggle a tag on an episode (``step_label`` None) or on one of its steps."""

    session_id: int
    step_label: str | None = None


@dataclass
class NoteRequested(Message):
    """Edit the note of an episode (``step_label`` None) or of one of its steps."""

    session_id: int
    step_label: str | None = None


class StatusRefreshRequested(Message):
    """Redraw the status line of the current screen (one pending request is enough)."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StatusRefreshRequested)


class ReplayState(Protocol):
    """What the replay screens read and never change (the App implements it)."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def step_results(self) -> Mapping[int, dict[str, StepResult]]: ...

    @property
    def replaying(self) -> bool: ...
