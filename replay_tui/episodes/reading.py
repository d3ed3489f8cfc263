"""What a replay reads of a clean seed episode without building its Trajectory: the fast reading.

A stub replay's cost is mostly reading episodes, so a seed demo file gives a clean episode as one
typed decode (``formats/webshop_demos/fast.py``) instead of its Trajectory. The engines read that
decode through the protocols below, never through the reader's module: the collection hands it out
(:meth:`~replay_tui.episodes.collection.EpisodeSet.replay_episode`), the env replays its entries and
the reports read its header. Anything that is not a :class:`~replay_tui.episodes.model.Trajectory`
there is a fast reading.

Its fields are the seed contract's, as its JSON names them, decoded with their exact types (a
field the JSON left out holds the contract's default once decoded, hence ``Any`` below).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

ACTION_REBUILT = "action_executed_in_env empty; rebuilt from the tool call"
"""A decision's warning when its ``action_executed_in_env`` was empty and was rebuilt from its call."""


class FastStep(Protocol):
    """One trajectory entry of a fast reading: a decision step or a sub-event."""

    @property
    def is_decision(self) -> bool: ...

    @property
    def is_item_action(self) -> bool:
        """A sub-event that is an item-page action (replayed as an ``item`` step when asked)."""
        ...

    @property
    def llm_prompt(self) -> Any: ...

    @property
    def llm_action_name(self) -> Any: ...

    @property
    def llm_action_arguments(self) -> Any: ...

    @property
    def llm_action(self) -> Any:
        """An item-page action's call (``name`` and ``arguments``)."""
        ...

    @property
    def observation_after_action(self) -> Any: ...

    def decision_dump(self) -> dict[str, Any]:
        """The decision step as the seed contract dumps it: what a policy receives as ``recorded_step``."""
        ...


class FastReading(Protocol):
    """A clean seed episode as a replay reads it: its header and its entries."""

    @property
    def instruction(self) -> str: ...

    @property
    def final_reward(self) -> float | None: ...

    @property
    def success(self) -> bool | None: ...

    @property
    def completed_by_backup(self) -> bool: ...

    @property
    def trajectory(self) -> Sequence[FastStep]: ...

    @property
    def reward(self) -> float:
        """``final_reward``, or the last non-zero reward of its entries (0.0)."""
        ...

    @property
    def succeeded(self) -> bool:
        """``success``, or LASER's definition on :attr:`reward` (1.0)."""
        ...
