"""One compare (issue 32): the replay comparison and the log comparison fill one result model, their
outcome words come from one table, and the replay case pairs by (file, episode) with the identity alignment."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay_tui.compare import PairedComparison, Unpaired, compare_outcomes, compare_runs
from replay_tui.compare.vocabulary import EPISODES, STEPS, TASKS, change_of
from replay_tui.pairing import load_pair
from tests.core.test_compare import CASE, demo_info, make_report

PAIR = sorted((Path(__file__).resolve().parents[1] / "data" / "compare_pairs" / "tau2").glob("pair2_*.json"))


def test_both_kinds_fill_the_one_comparison_model() -> None:
    """Pairs, their changes, regressions, figures and what did not pair read the same way of both kinds."""
    replay = compare_runs(make_report(CASE, 4), make_report(CASE, 5), a_info=demo_info(), b_info=demo_info())
    logs = compare_outcomes(load_pair([str(path) for path in PAIR]), resamples=500)
    for comparison, pairs, figures, counts in (
        (replay, replay.steps, replay.overall, replay.flips),
        (logs, logs.tasks, logs.stats, logs.counts),
    ):
        assert isinstance(comparison, PairedComparison)
        assert comparison.pairs == pairs and comparison.figures == figures
        assert comparison.changes() == counts
        assert comparison.regressions == [pair for pair in pairs if pair.change == "regressed"]
        assert comparison.regression_count == counts["regressed"] == len(comparison.regressions)
        assert comparison.fixes == [pair for pair in pairs if pair.change == "fixed"]
    assert replay.divergent == replay.shown_steps
    assert logs.divergent == [task for task in logs.tasks if task.divergence is not None]
    assert logs.unpaired == Unpaired(logs.a_only, logs.b_only)


def test_a_replay_comparison_names_the_episodes_one_run_only_replayed() -> None:
    """The replay case's unpaired keys are its episodes (its JSON still counts them only, as before)."""
    a = make_report([row for row in CASE if row[0] != 2], 4)
    b = make_report([row for row in CASE if row[0] != 5], 5)
    result = compare_runs(a, b, a_info=demo_info(), b_info=demo_info())
    assert result.unpaired == Unpaired(["5"], ["2"])
    assert (result.overlap.episodes_only_a, result.overlap.episodes_only_b) == (1, 1)
    assert b"unpaired" not in result.to_json()


@pytest.mark.parametrize(
    ("a", "b", "step", "episode", "task"),
    [
        (True, True, "both_right", "both_right", "both_succeeded"),
        (True, False, "regressed", "regressed", "regressed"),
        (False, True, "fixed", "fixed", "fixed"),
        (False, False, "both_wrong_different", "both_wrong", "both_failed"),
        (None, True, "unknown", "unknown", "unknown"),
    ],
)
def test_one_table_gives_each_kind_its_words(a, b, step, episode, task) -> None:
    assert (STEPS.word(a, b), EPISODES.word(a, b), TASKS.word(a, b)) == (step, episode, task)
    assert change_of(a, b) in ("both_right", "regressed", "fixed", "both_wrong", "unknown")
    if step == "both_wrong_different":
        assert STEPS.word(a, b, same=True) == "both_wrong_same"
    assert list(STEPS.tally([])) == list(STEPS.order) and list(TASKS.tally([task])) == list(TASKS.order)
