"""How a comparison's outcomes read: one change of outcome, and one table of the words each kind says it in.

Every comparison says of a pair (a step both runs replayed, an episode, a task both logs ran) how its
outcome went from A (the baseline) to B, as one :data:`Change`: ``regressed`` (right in A, wrong in B),
``fixed``, ``both_right``, ``both_wrong``, or ``unknown`` (a log that does not say). Reports state it
in their kind's words, which scripts read and which stay as they were: a replay's steps say
``both_right`` and split ``both_wrong`` by whether the two predictions are the same, its episodes say
``both_wrong``, two logs' tasks ``both_succeeded`` and ``both_failed``. :data:`STEPS`,
:data:`EPISODES` and :data:`TASKS` are those words; the comparisons classify through them, nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

Change = Literal["regressed", "fixed", "both_right", "both_wrong", "unknown"]


def change_of(a: bool | None, b: bool | None) -> Change:
    """How a pair's outcome went from A (``a``: right or not, None when unknown) to B."""
    if a is None or b is None:
        return "unknown"
    if a == b:
        return "both_right" if a else "both_wrong"
    return "regressed" if a else "fixed"


@dataclass(frozen=True)
class Vocabulary:
    """The words one kind of pair reads in: ``words`` for each change, ``order`` the words as its reports
    count them, ``labels`` what a person reads; ``split_wrong`` (same, different) when a pair wrong in
    both runs is told apart by whether the two runs answered alike."""

    words: Mapping[Change, str]
    order: tuple[str, ...]
    labels: Mapping[str, str] = field(default_factory=dict)
    split_wrong: tuple[str, str] | None = None

    def word(self, a: bool | None, b: bool | None, *, same: bool = False) -> str:
        """The word of the change from ``a`` to ``b`` (``same``: both runs answered alike)."""
        change = change_of(a, b)
        if change == "both_wrong" and self.split_wrong is not None:
            return self.split_wrong[0 if same else 1]
        return self.words[change]

    def tally(self, words: Iterable[str]) -> dict[str, int]:
        """How many pairs say each word (every word of :attr:`order`, in that order)."""
        counts = dict.fromkeys(self.order, 0)
        for word in words:
            counts[word] += 1
        return counts


Flip = Literal["regressed", "fixed", "both_wrong_different", "both_wrong_same", "both_right"]
EpisodeFlip = Literal["regressed", "fixed", "both_wrong", "both_right"]
TaskChange = Literal["regressed", "fixed", "both_succeeded", "both_failed", "unknown"]

_SAME: dict[Change, str] = {name: name for name in ("regressed", "fixed", "both_right", "both_wrong", "unknown")}

STEPS = Vocabulary(
    words=_SAME,
    order=("regressed", "fixed", "both_wrong_different", "both_wrong_same", "both_right"),
    labels={
        "regressed": "regressed ✓→✗",
        "fixed": "fixed ✗→✓",
        "both_wrong_different": "both wrong, different predictions",
        "both_wrong_same": "both wrong, same prediction",
        "both_right": "both right",
    },
    split_wrong=("both_wrong_same", "both_wrong_different"),
)
"""A replayed step: right is the verdict ``match``."""
EPISODES = Vocabulary(words=_SAME, order=("regressed", "fixed", "both_wrong", "both_right"))
"""A replayed episode: right is "every replayed step matched"."""
TASKS = Vocabulary(
    words={**_SAME, "both_right": "both_succeeded", "both_wrong": "both_failed"},
    order=("regressed", "fixed", "both_succeeded", "both_failed", "unknown"),
)
"""A task both logs ran: right is the log's own success."""

FLIPS = cast("tuple[Flip, ...]", STEPS.order)
FLIP_LABELS: Mapping[str, str] = STEPS.labels
SHOWN_FLIPS: tuple[Flip, ...] = ("regressed", "fixed", "both_wrong_different")
"""The flips a reviewer looks at (``]``/``[`` in the app visit them): the others change nothing."""
EPISODE_FLIPS = cast("tuple[EpisodeFlip, ...]", EPISODES.order)
TASK_CHANGES = cast("tuple[TaskChange, ...]", TASKS.order)


def run_label(index: int) -> str:
    """A, B, ... Z, then R27, R28..."""
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def signed_pp(value: float) -> str:
    """A difference of rates (B − A) in percentage points, signed: ``+1.2 pp``, ``−3.0 pp``, ``±0.0 pp``."""
    points = value * 100
    sign = "+" if points >= 0.05 else ("−" if points <= -0.05 else "±")
    return f"{sign}{abs(points):.1f} pp"
