"""What a log's index says of an episode before it is read: :class:`EpisodeSummary`, the one summary
every reader's index lists (the seed's demo files' too) and every view reads of an episode not yet
opened (through its :class:`~replay_tui.episodes.collection.EpisodeRef`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replay_tui.episodes.model import Outcome, Trajectory


@dataclass(slots=True)
class EpisodeSummary:
    """What the session browser shows about an episode before it is opened, and where it lives.

    Not frozen: an index builds one per episode (40,000 for a 1 GB demo file), and a frozen
    dataclass's ``__init__`` costs a call per field; no one changes a summary once listed (a log that
    grew gets a new one).

    A reader that can find one episode again without reading the whole file (an offset into a JSON
    Lines file, a member of a zip) lists these from its index
    (:meth:`replay_tui.formats.base.IndexingReader.index`) so a 1 GB log opens to a browsable list
    without holding every episode in memory.
    """

    id: str
    """The episode's id in its log."""
    record: int
    """The episode's position in the file (0-based): what a LoadProblem names."""
    task: str = ""
    steps: int = 0
    """Steps that carry a recorded tool call or plain answer (what a replay will judge): the
    browser's calls."""
    turns: int | None = None
    """Every step of the episode, with a call or without (a reply, a message): the rows the
    stepper lists, the browser's turns. None: the same as ``steps``."""
    reward: float | None = None
    success: bool | None = None
    outcome: Outcome | None = None
    """The log's whole outcome when the reader has it at index time (None: only ``reward`` and
    ``success`` are known before the episode is loaded)."""
    deferred_outcome: Callable[[], Outcome] | None = field(default=None, compare=False, repr=False)
    """How to build the whole outcome when first asked (:meth:`full_outcome`), for a reader that
    has it at index time but not cheaply: a 100,000-sample inspect_ai log lists its rows without
    building 100,000 outcomes, and the browser builds those it shows."""
    locator: Any = None
    """Reader-specific: how :meth:`replay_tui.formats.base.IndexingReader.load` finds the episode
    again (offsets, a name)."""
    status: str | None = None
    """The log's termination status when the index knows it without the whole outcome (a seed
    demo's :data:`~replay_tui.episodes.model.BACKUP_STATUS`)."""

    def full_outcome(self) -> Outcome | None:
        """The log's whole outcome, built now when the reader deferred it; None when only ``reward``
        and ``success`` are known before the episode is loaded."""
        if self.outcome is None and self.deferred_outcome is not None:
            return self.deferred_outcome()
        return self.outcome

    @classmethod
    def of(cls, trajectory: Trajectory, record: int, locator: Any = None) -> EpisodeSummary:
        """The summary of an episode already read whole."""
        return cls(
            id=trajectory.id,
            record=record,
            task=trajectory.task,
            steps=trajectory.decisions,
            turns=len(trajectory.steps),
            reward=trajectory.outcome.reward,
            success=trajectory.outcome.success,
            outcome=trajectory.outcome,
            locator=locator,
        )
