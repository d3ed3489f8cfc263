"""Intervals and tests of replay accuracies, checked against scipy and statsmodels-free definitions."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats

from replay_tui.stats import mcnemar_exact, paired_bootstrap, wilson


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (431, 500), (1, 1)])
def test_wilson_matches_scipy_binomtest_wilson_interval(k: int, n: int) -> None:
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = wilson(k, n)
    assert math.isclose(low, expected.low, abs_tol=1e-9) and math.isclose(high, expected.high, abs_tol=1e-9)
    assert low <= k / n <= high


def test_wilson_of_nothing_is_the_whole_range() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def test_exact_mcnemar_is_a_two_sided_binomial_test_on_the_discordant_pairs() -> None:
    # a constructed case: 40 pairs, 9 right only in A, 2 right only in B
    a = [True] * 20 + [True] * 9 + [False] * 2 + [False] * 9
    b = [True] * 20 + [False] * 9 + [True] * 2 + [False] * 9
    only_a = sum(x and not y for x, y in zip(a, b, strict=True))
    only_b = sum(y and not x for x, y in zip(a, b, strict=True))
    assert (only_a, only_b) == (9, 2)
    # by hand: P = 2 * sum_{i<=2} C(11, i) / 2**11
    by_hand = 2 * sum(math.comb(11, i) for i in range(3)) / 2**11
    assert math.isclose(mcnemar_exact(only_a, only_b), by_hand)
    assert math.isclose(mcnemar_exact(only_a, only_b), stats.binomtest(2, 11, 0.5).pvalue)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(5, 5) == 1.0


@pytest.mark.parametrize(
    ("b", "c"),
    [
        (0, 1),
        (1, 0),
        (1, 2),
        (3, 7),
        (10, 10),
        (10, 11),
        (0, 40),
        (17, 250),
        (499, 501),
        (62_987, 0),
        (4_100, 3_900),
        (120_000, 119_000),
        (250_000, 1),
    ],
)
def test_exact_mcnemar_equals_scipys_binomial_test_small_and_huge(b: int, c: int) -> None:
    want = stats.binomtest(min(b, c), b + c, 0.5, alternative="two-sided").pvalue
    assert mcnemar_exact(b, c) == pytest.approx(want, rel=1e-9, abs=1e-300)
    assert mcnemar_exact(b, c) == mcnemar_exact(c, b)


def test_paired_bootstrap_is_deterministic_and_covers_the_observed_difference() -> None:
    rng = random.Random(7)
    a = [rng.random() < 0.6 for _ in range(400)]
    b = [x if rng.random() < 0.85 else not x for x in a]
    first = paired_bootstrap(a, b, resamples=2000)
    again = paired_bootstrap(a, b, resamples=2000)
    assert first == again
    assert math.isclose(first.difference, np.mean(b) - np.mean(a))
    assert first.low <= first.difference <= first.high
    # scipy's own percentile bootstrap of the paired difference agrees within Monte-Carlo error
    delta = np.asarray(b, float) - np.asarray(a, float)
    theirs = stats.bootstrap((delta,), np.mean, n_resamples=2000, method="percentile", random_state=1)
    assert abs(theirs.confidence_interval.low - first.low) < 0.01
    assert abs(theirs.confidence_interval.high - first.high) < 0.01


def test_clustered_resampling_widens_the_interval_of_correlated_steps() -> None:
    rng = random.Random(3)
    a: list[bool] = []
    b: list[bool] = []
    episodes: list[int] = []
    for episode in range(60):  # whole episodes flip together: their steps are not independent
        flip = rng.random() < 0.3
        for _ in range(8):
            right = rng.random() < 0.7
            a.append(right)
            b.append((not right) if flip else right)
            episodes.append(episode)
    plain = paired_bootstrap(a, b, resamples=3000)
    clustered = paired_bootstrap(a, b, episodes, resamples=3000)
    assert clustered.clusters == 60 and plain.clusters == len(a)
    assert (clustered.high - clustered.low) > (plain.high - plain.low)


def test_paired_samples_must_pair() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap([True], [True, False])
    assert paired_bootstrap([], []).resamples == 0


def test_bootstraps_drawn_together_are_each_the_bootstrap_alone() -> None:
    """Samples with as many clusters share their resamples' draws; each figure is bit for bit the one
    ``paired_bootstrap`` gives alone, clustered or not, with other cluster counts in the same call."""
    from replay_tui.stats import paired_bootstraps

    rng = random.Random(7)
    steps = [(rng.random() < 0.7, rng.random() < 0.5, f"e{i // 3}") for i in range(300)]  # 100 clusters
    episodes = [(rng.random() < 0.6, rng.random() < 0.4) for _ in range(100)]  # 100 single items
    scores = [(rng.random(), rng.random(), f"t{i % 40}") for i in range(120)]  # 40 clusters
    samples = [
        ([a for a, _, _ in steps], [b for _, b, _ in steps], [c for _, _, c in steps]),
        ([a for a, _ in episodes], [b for _, b in episodes], None),
        ([a for a, _, _ in scores], [b for _, b, _ in scores], [c for _, _, c in scores]),
        ([], [], None),
    ]
    together = paired_bootstraps(samples, resamples=500, seed=3)
    assert together == [paired_bootstrap(a, b, c, resamples=500, seed=3) for a, b, c in samples]
    assert [d.clusters for d in together] == [100, 100, 40, 0]
