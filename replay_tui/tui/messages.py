"""Messages to the App, which owns every state change.

Replay workers post what happened (``ReplayProgressed`` in batches, then ``ReplayFinished``); the replay screens
post what the user asked for (``EpisodeOpenRequested`` ... ``StatusRefreshRequested``) and read
the App's state through :class:`ReplayState`, so no screen imports or calls the App.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from textual.message import Message

from replay_tui.episodes.problems import LoadProblem

if TYPE_CHECKING:
    from replay_tui.compare import Comparison
    from replay_tui.runner import EpisodeReport, StepResult
    from replay_tui.workspace import Workspace


class ReplayProgressed(Message):
    """What a replay worker did since its previous message, posted at most every
    ``REPLAY_BATCH_SECONDS`` (at once after a slow step, so a slow policy's verdicts show as they come):
    the reports of the episodes it finished, the problems of those found malformed, the steps of episodes
    open in a stepper (whose earlier verdicts go when the episode is in ``fresh``), how many episodes are
    done of ``total``, and the session and step it reached. ``mode`` names the policy (what reports say)."""

    def __init__(
        self,
        *,
        reports: list[EpisodeReport],
        problems: list[LoadProblem],
        steps: list[StepResult],
        fresh: set[int],
        done: int,
        total: int,
        position: tuple[int, str] | None,
        mode: str | None = None,
    ):
        super().__init__()
        self.reports = reports
        self.problems = problems
        self.steps = steps
        self.fresh = fresh
        self.done = done
        self.total = total
        self.position = position
        self.mode = mode


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
@dataclass(frozen=True)
class ReturnPoint:
    """Where esc in a sub-agent's stepper goes back to: the parent episode at the step that started
    it (and, for a sub-agent of a sub-agent, where that parent goes back to)."""

    session_id: int
    step_label: str | None
    then: ReturnPoint | None = None


@dataclass
class SubagentOpenRequested(Message):
    """Open the sub-agent episode ``child`` (its id in the log) in the stepper; esc there returns to ``back``."""

    child: str
    back: ReturnPoint


@dataclass
class ParentReturnRequested(Message):
    """Back from a sub-agent's stepper to its parent's, at the step that started it."""

    back: ReturnPoint


@dataclass
class EpisodeOpenRequested(Message):
    """Open an episode in the stepper (at the step labelled ``step_label``, else the first), and
    replay it at once when ``replay``."""

    session_id: int
    replay: bool = False
    step_label: str | None = None


@dataclass
class OutcomeRequested(Message):
    """Show an episode's outcome and its expected vs actual (the outcome screen)."""

    session_id: int


class OutcomeGroupsRequested(Message):
    """Show the episodes that did not succeed grouped by what their logs say (the outcome groups)."""


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


@dataclass
class EpisodeNavRequested(Message):
    """From a stepper: open the next (``direction`` 1) or previous (-1) episode in the browser's
    order, or the next one with mismatches (at its first mismatch) when ``mismatching``. With
    ``offer``, only say which one the same key would open (``]`` at an episode's last mismatch)."""

    session_id: int
    direction: int
    mismatching: bool = False
    offer: bool = False


@dataclass
class SearchStepRequested(Message):
    """From a stepper: open the next (``direction`` 1) or previous (-1) result of the last search."""

    direction: int


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


class ComparisonReady(Message):
    """A comparison was made (worker -> App), to be shown."""

    def __init__(self, comparison: Comparison):
        super().__init__()
        self.comparison = comparison


class ComparisonFailed(Message):
    """Runs could not be compared; ``reason`` is one line."""

    def __init__(self, reason: str):
        super().__init__()
        self.reason = reason
