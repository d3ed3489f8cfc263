"""Fast draws from an episode's ``random.Random`` (one C-level draw each where the stdlib takes
several): the generator's hot path, and what keeps every episode a pure function of its seed."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any


def choice(rng: random.Random, seq: Sequence[Any]) -> Any:
    """A fast ``rng.choice`` (one C-level draw)."""
    return seq[int(rng.random() * len(seq))]


def two(rng: random.Random, seq: Sequence[Any]) -> list[Any]:
    """A fast ``rng.sample(seq, 2)``."""
    n = len(seq)
    i = int(rng.random() * n)
    j = int(rng.random() * (n - 1))
    return [seq[i], seq[j + 1 if j >= i else j]]


def pick(rng: random.Random, weighted: Sequence[tuple[Any, float]]) -> Any:
    """A value of ``(value, weight)`` pairs drawn by weight (one draw)."""
    x = rng.random() * sum(w for _, w in weighted)
    for value, w in weighted:
        x -= w
        if x < 0:
            return value
    return weighted[-1][0]
