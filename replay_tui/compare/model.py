"""The one result of a comparison of run B against run A (the baseline), whichever kind made it.

A comparison is pairs of A and B, each pair's change of outcome in its kind's words
(:mod:`~replay_tui.compare.vocabulary`), where the two diverge, the paired statistics
(:class:`~replay_tui.stats.PairedStats`) and the keys one run only has. Both kinds fill it:

- replay runs (:class:`~replay_tui.compare.runs.Comparison`): the pairs are the steps both runs
  replayed, paired by (demo file, episode) and step label (the identity alignment), clustered by episode;
- two logs' own runs (:class:`~replay_tui.compare.logs.OutcomeComparison`): the pairs are tasks paired
  by task key, their calls aligned, clustered by task.

What only one kind has (the replay's per-state figures and run identity, the logs' pass^k and aligned
calls) stays on its kind; what every comparison does with its pairs is here, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Generic, Protocol, TypeVar

from replay_tui.compare.vocabulary import Vocabulary
from replay_tui.stats import PairedStats


class CompareError(ValueError):
    """Runs that cannot be compared (other recorded inputs, no steps, not a report); one line."""


class Pair(Protocol):
    """What a comparison reads of one of its pairs."""

    @property
    def change(self) -> str:
        """The change of outcome from A to B, in the kind's words."""
        ...

    @property
    def diverges(self) -> bool:
        """A and B parted here (a reviewer looks at it)."""
        ...


P = TypeVar("P", bound=Pair)


@dataclass(frozen=True)
class Unpaired:
    """The keys only one run has (episodes of replay runs, task keys of logs), each in its run's order."""

    a_only: list[str] = field(default_factory=list)
    b_only: list[str] = field(default_factory=list)


class PairedComparison(Generic[P]):
    """B against A: :attr:`pairs` and their changes (:attr:`vocabulary`'s words), :attr:`figures`,
    :attr:`unpaired`. A kind fills the three; what follows from them is made here for both."""

    vocabulary: ClassVar[Vocabulary]

    @property
    def pairs(self) -> Sequence[P]:
        raise NotImplementedError

    @property
    def figures(self) -> PairedStats:
        """Right in A and in B on the pairs whose outcome both know, McNemar, B − A's bootstrap interval."""
        raise NotImplementedError

    @property
    def unpaired(self) -> Unpaired:
        raise NotImplementedError

    def with_change(self, word: str) -> list[P]:
        """The pairs whose change is ``word`` (one of :attr:`vocabulary`'s), in order."""
        return [pair for pair in self.pairs if pair.change == word]

    @property
    def regressions(self) -> list[P]:
        return self.with_change("regressed")

    @property
    def fixes(self) -> list[P]:
        return self.with_change("fixed")

    @property
    def regression_count(self) -> int:
        """How many pairs regressed (``--fail-on-regression`` reads it)."""
        return sum(1 for pair in self.pairs if pair.change == "regressed")

    @property
    def divergent(self) -> list[P]:
        """The pairs where A and B parted, in order."""
        return [pair for pair in self.pairs if pair.diverges]

    def changes(self) -> dict[str, int]:
        """How many pairs say each of the vocabulary's words."""
        return self.vocabulary.tally(pair.change for pair in self.pairs)
