"""The statistics and the alignment of a comparison of two logs, each figure checked against scipy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from scipy import special, stats

from replay_tui.compare import align, compare_outcomes, pass_hat_k
from replay_tui.episodes.model import Outcome, ToolCall, Trajectory, TrajectoryStep
from replay_tui.pairing import Episode, KeyExpr, LoadedLog, PairingError, TaskKey, pair_logs, task_key


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name=name, arguments=dict(arguments))


def trajectory(tid: str, success: bool | None, calls: Sequence[ToolCall] = (), **metadata: object) -> Trajectory:
    steps = [TrajectoryStep(index=i, action=c) for i, c in enumerate(calls)]
    return Trajectory(id=tid, format="tau2", metadata=metadata, steps=steps, outcome=Outcome(success=success))


def log(name: str, outcomes: dict[tuple[str, int], bool]) -> LoadedLog:
    loaded = LoadedLog(name)
    for (task, trial), success in outcomes.items():
        found = task_key(trajectory(f"{task}#{trial}", success, task_id=task, trial=trial))
        assert isinstance(found, TaskKey)
        loaded.episodes[found.key] = Episode(found, trajectory(found.key, success, task_id=task, trial=trial))
    return loaded


def test_alignment_scores_same_call_over_same_tool_over_another_tool():
    a = [call("search", q="x"), call("get", id=1), call("book", id=1), call("pay")]
    b = [call("search", q="x"), call("get", id=2), call("pay")]
    rows = align(a, b)
    assert [(r.kind, r.a, r.b) for r in rows] == [
        ("same", 0, 0),
        ("arguments", 1, 1),
        ("a_only", 2, None),
        ("same", 3, 2),
    ]
    assert [r.kind for r in align([call("x")], [call("y")])] == ["tool"]
    assert [r.kind for r in align([], [call("y")])] == ["b_only"]


def test_first_divergence_and_counts_of_a_pair():
    a = log("a", {})
    b = log("b", {})
    a.episodes["t"] = Episode(TaskKey("t", "t"), trajectory("t", True, [call("s"), call("get", id=1), call("done")]))
    b.episodes["t"] = Episode(TaskKey("t", "t"), trajectory("t", False, [call("s"), call("get", id=2)]))
    result = compare_outcomes(pair_logs(a, b), resamples=1000)
    (task,) = result.tasks
    assert task.change == "regressed"
    assert task.divergence is not None and task.divergence.kind == "arguments"
    assert (task.divergence.a, task.divergence.b) == ('get({"id":1})', 'get({"id":2})')
    assert (task.count("a_only"), task.count("b_only"), task.count("arguments")) == (1, 0, 1)
    assert result.regression_groups() == {"get": 1}
    assert result.summary()["regressions_by_tool"] == {"get": 1}


def test_counts_wilson_and_mcnemar_against_scipy():
    rng = np.random.default_rng(7)
    a_out = {(f"t{t}", k): bool(rng.random() < 0.6) for t in range(30) for k in range(3)}
    b_out = {key: bool(rng.random() < 0.45) for key in a_out}
    result = compare_outcomes(pair_logs(log("a", a_out), log("b", b_out)), resamples=2000)
    summary = result.summary()
    regressions = sum(1 for k in a_out if a_out[k] and not b_out[k])
    fixes = sum(1 for k in a_out if b_out[k] and not a_out[k])
    assert (summary["regressions"], summary["fixes"]) == (regressions, fixes)
    n = regressions + fixes
    exact = min(1.0, 2 * stats.binom.cdf(min(regressions, fixes), n, 0.5))
    assert summary["mcnemar_p"] == pytest.approx(exact, rel=1e-9)
    for run, outcomes in (("a_success", a_out), ("b_success", b_out)):
        right = sum(outcomes.values())
        ci = stats.binomtest(right, len(outcomes)).proportion_ci(method="wilson")
        assert summary[run]["successes"] == right
        assert (summary[run]["low"], summary[run]["high"]) == pytest.approx((ci.low, ci.high), abs=1e-6)


def test_pass_hat_k_against_scipy_comb():
    trials = [(4, 4), (4, 2), (4, 1), (4, 0), (3, 2)]
    for k in range(1, 5):
        usable = [(n, c) for n, c in trials if n >= k]
        want = sum(special.comb(c, k, exact=True) / special.comb(n, k, exact=True) for n, c in usable) / len(usable)
        assert pass_hat_k(trials, k) == pytest.approx(want)


def test_clustered_bootstrap_within_monte_carlo_error_of_scipy():
    rng = np.random.default_rng(3)
    a_out = {(f"t{t}", k): bool(rng.random() < 0.5) for t in range(60) for k in range(3)}
    b_out = {key: bool(rng.random() < (0.7 if int(key[0][1:]) % 2 else 0.4)) for key in a_out}
    result = compare_outcomes(pair_logs(log("a", a_out), log("b", b_out)), resamples=10_000)
    tasks = sorted({task for task, _ in a_out})
    sums = np.array([sum(b_out[(t, k)] - a_out[(t, k)] for k in range(3)) for t in tasks], dtype=float)
    sizes = np.full(len(tasks), 3.0)
    reference = stats.bootstrap(
        (sums, sizes),
        lambda s, z, axis=-1: s.sum(axis=axis) / z.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=10_000,
        random_state=11,
    ).confidence_interval
    assert result.stats.clusters == 60
    assert result.stats.difference == pytest.approx(sums.sum() / sizes.sum())
    assert (result.stats.low, result.stats.high) == pytest.approx((reference.low, reference.high), abs=0.02)


def test_nothing_paired_is_refused_and_keys_from_fields():
    with pytest.raises(PairingError, match="share no task key"):
        pair_logs(log("a", {("x", 0): True}), log("b", {("y", 0): True}))
    with pytest.raises(PairingError, match=r"^empty: no episode to pair"):
        pair_logs(log("a", {("x", 0): True}), log("empty", {}))
    expr = KeyExpr.parse("metadata.task_id + metadata.trial")
    assert task_key(trajectory("e", True, task_id="7", trial=2), expr) == TaskKey("7#2", "7")
    assert task_key(trajectory("e", True, task_id="7"), expr) == "metadata.trial"
    for bad in ("__import__('os')", "metadata.task_id or 1", "steps.0"):
        with pytest.raises(PairingError):
            KeyExpr.parse(bad)


def test_one_join_pairs_tasks_replay_episodes_and_replay_steps():
    """The one pairing of every comparison: A's order, a repeated key of A paired each time, what one
    side only has kept with its value; a replay comparison's overlap is exactly what it gives."""
    from replay_tui.compare import compare_runs
    from replay_tui.pairing import join
    from tests.core.test_compare import CASE, make_report

    joined = join([("t2", 1), ("t1", 2), ("t9", 3), ("t2", 4)], {"t1": "x", "t2": "y", "t7": "z"})
    assert joined.paired == [("t2", 1, "y"), ("t1", 2, "x"), ("t2", 4, "y")]
    assert (joined.a_only, joined.b_only) == ([("t9", 3)], [("t7", "z")])

    run_a = make_report(CASE, 4, skip={(2, "0"), (2, "1"), (2, "2"), (3, "0")})
    run_b = make_report(CASE, 5, skip={(6, "2"), (1, "3"), (4, "0")})
    overlap = compare_runs(run_a, run_b, resamples=200).overlap
    episodes = join(
        [((e.file, e.session_id), e) for e in run_a.episodes], {(e.file, e.session_id): e for e in run_b.episodes}
    )
    assert (overlap.episodes_common, overlap.episodes_only_a, overlap.episodes_only_b) == (
        len(episodes.paired),
        len(episodes.a_only),
        len(episodes.b_only),
    )
    steps = [
        join([(s.step_label, s) for s in a.steps], {s.step_label: s for s in b.steps}) for _, a, b in episodes.paired
    ]
    assert overlap.steps_common == sum(len(j.paired) for j in steps)
    assert overlap.steps_only_a == sum(len(j.a_only) for j in steps) + sum(len(e.steps) for _, e in episodes.a_only)
    assert overlap.steps_only_b == sum(len(j.b_only) for j in steps) + sum(len(e.steps) for _, e in episodes.b_only)
    assert overlap.episodes_only_b == 1 and overlap.steps_only_a > 0


@pytest.mark.parametrize("suffix", ["json", "md", "csv", "xml", "html"])
def test_a_comparison_of_logs_is_written_by_the_one_writer_of_comparisons(tmp_path, suffix):
    """One report family: ``write_comparison`` writes a comparison of logs (and of replay runs), the
    bytes those logs' own renderer gives, in the format the suffix names."""
    from replay_tui.compare import compare_runs
    from replay_tui.export.comparison import render_comparison, write_comparison
    from replay_tui.export.outcomes import render
    from replay_tui.export.text import format_for_path
    from tests.core.test_compare import CASE, make_report

    a = log("a", {("t1", 0): True, ("t2", 0): True, ("t3", 0): False})
    b = log("b", {("t1", 0): False, ("t2", 0): True, ("t3", 0): True})
    logs = compare_outcomes(pair_logs(a, b), resamples=500)
    runs = compare_runs(make_report(CASE, 4), make_report(CASE, 5), resamples=500)
    fmt = format_for_path(f"x.{suffix}")
    written = write_comparison(tmp_path / f"logs.{suffix}", logs, title="T")
    assert written.read_bytes() == render(logs, fmt, title="T")
    written = write_comparison(tmp_path / f"runs.{suffix}", runs, title="T")
    assert written.read_bytes() == render_comparison(runs, fmt, title="T")
