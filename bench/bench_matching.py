"""Benchmark: what a verdict costs, per policy, against the seed's bare string comparison.

Run by hand (not in CI):

    python bench/bench_matching.py

The pairs are the steps of a heuristic replay of the bundled example (93 matches, the rest
differences), so the mix of equal and different actions is a realistic one. The naive baseline
is ``normalize(a) == normalize(b)``, which gives a bool and no reason.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replay_tui.actions import normalize_action  # noqa: E402
from replay_tui.env import OfflineWebshopEnv  # noqa: E402
from replay_tui.examples import example_path  # noqa: E402
from replay_tui.matching import MATCH_POLICIES, judge, lemma  # noqa: E402
from replay_tui.policies.heuristic import HeuristicPolicy  # noqa: E402
from replay_tui.runner import Runner  # noqa: E402


def pairs() -> list[tuple[str, str]]:
    env = OfflineWebshopEnv(example_path(), mismatch_policy="allow")
    summary = Runner(env, HeuristicPolicy()).run_all()
    return [(step.expected, step.predicted) for episode in summary.episodes for step in episode.steps]


def per_step(fn, items: list[tuple[str, str]], rounds: int = 30) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn(items)
        best = min(best, time.perf_counter() - start)
    return best / len(items) * 1e6


def main() -> None:
    items = pairs()
    lemma("warm")  # load the lemmatiser's dictionary before timing
    naive = per_step(lambda xs: [normalize_action(p) == normalize_action(e) for e, p in xs], items)
    print(f"{len(items)} steps; naive string comparison {naive:.1f} µs/step")
    for policy in MATCH_POLICIES:
        cost = per_step(lambda xs, policy=policy: [judge(e, p, policy) for e, p in xs], items)
        print(f"{policy:>9}: {cost:6.1f} µs/step  ({cost / naive:4.1f}x the naive comparison, with a reason)")


if __name__ == "__main__":
    main()
