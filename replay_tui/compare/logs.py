"""Two agents' own runs of the same tasks compared: outcomes paired by task, trajectories aligned.

The log kind of the one comparison (:class:`~replay_tui.compare.model.PairedComparison`): its pairs
are the task keys both logs ran (:mod:`replay_tui.pairing`), each with A's and B's outcome (success,
score; its change in :data:`~replay_tui.compare.vocabulary.TASKS`' words) and their calls aligned
(:mod:`~replay_tui.compare.alignment`), the first divergence marked. Over the pairs: success of A and B
with Wilson intervals, the exact McNemar test on the discordant keys, a bootstrap of B − A clustered by
task (its trials are not independent), and tau2's pass^k per run for every k the trials allow. When the
task carries its reference actions (:mod:`replay_tui.expected`), both runs' calls are aligned with that
one reference, so each reference action says which run hit it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from math import comb
from typing import Any, ClassVar, Literal

from replay_tui.compare.alignment import (
    Conversation,
    Divergence,
    Row,
    RowKind,
    TimelineRow,
    align,
    conversation_of,
    located_calls,
    timeline,
)
from replay_tui.compare.model import PairedComparison, Unpaired
from replay_tui.compare.vocabulary import TASKS, Vocabulary
from replay_tui.episodes.model import ToolCall, Trajectory
from replay_tui.expected import align_trajectory
from replay_tui.pairing import Pairing
from replay_tui.stats import RESAMPLES, PairedStats, Rate, paired_stats


def success_of(trajectory: Trajectory) -> bool | None:
    """The episode succeeded: the log's own success, else reward ≥ 1 (tau2's rule); None when unknown."""
    outcome = trajectory.outcome
    if outcome.success is not None:
        return outcome.success
    if outcome.reward is not None:
        return outcome.reward >= 1
    return None


def score_of(trajectory: Trajectory) -> float | None:
    """The episode's score for the bootstrap: its reward, else 1/0 for success."""
    if trajectory.outcome.reward is not None:
        return float(trajectory.outcome.reward)
    success = success_of(trajectory)
    return None if success is None else float(success)


@dataclass(frozen=True)
class ExpectedPair:
    """One reference action of a paired task and what each run did about it: ``matched``,
    ``different`` (the tool, other arguments) or ``missing`` (:data:`replay_tui.expected.EXPECTED_STATUSES`)."""

    position: int
    name: str
    action: str
    requestor: str
    a: str
    b: str

    @property
    def change(self) -> str:
        """``lost`` (A hit it, B did not), ``gained``, ``both`` (both hit it) or ``neither``."""
        a, b = self.a == "matched", self.b == "matched"
        if a != b:
            return "lost" if a else "gained"
        return "both" if a else "neither"


def expected_pairs(a: Trajectory, b: Trajectory) -> list[ExpectedPair]:
    """Both runs' calls aligned with one reference: A's log's expected actions, else B's (the same
    task's reference; A is the baseline). Empty when neither log carries one."""
    reference = a.outcome.expected_actions or b.outcome.expected_actions
    if not reference:
        return []
    a_hits = align_trajectory(a, reference=reference)
    b_hits = align_trajectory(b, reference=reference)
    if a_hits is None or b_hits is None:
        return []
    return [
        ExpectedPair(x.position, x.name, x.expected.display(), x.requestor, x.status, y.status)
        for x, y in zip(a_hits.hits, b_hits.hits, strict=True)
    ]


@dataclass
class TaskPair:
    """One paired task key: outcomes, the alignment and its summary."""

    key: str
    task: str
    a_success: bool | None
    b_success: bool | None
    a_score: float | None
    b_score: float | None
    a_status: str | None
    b_status: str | None
    rows: list[Row]
    a_calls: list[ToolCall]
    b_calls: list[ToolCall]
    divergence: Divergence | None
    a_steps: list[int] = field(default_factory=list)
    """The step (index into A's trajectory) each of A's calls was made in."""
    b_steps: list[int] = field(default_factory=list)
    a_trajectory: Trajectory | None = field(default=None, repr=False)
    """A's whole episode, for views that show a call's step (observation, thinking, result)."""
    b_trajectory: Trajectory | None = field(default=None, repr=False)
    expected: list[ExpectedPair] = field(default_factory=list)
    """The task's reference actions and which run hit each (empty without a reference)."""

    def expected_hit(self, side: Literal["a", "b"]) -> tuple[int, int]:
        """``(matched, total)`` of the reference actions that are the agent's to make (a simulated
        user's are not), for run ``side``."""
        own = [pair for pair in self.expected if pair.requestor != "user"]
        return sum(1 for pair in own if getattr(pair, side) == "matched"), len(own)

    @property
    def first_lost_expected(self) -> str | None:
        """The first of the agent's reference actions A hit and B did not (its tool), if any."""
        return next((p.name for p in self.expected if p.requestor != "user" and p.change == "lost"), None)

    @property
    def divergent_rows(self) -> list[int]:
        """The alignment rows that are not the same call, in order."""
        return [index for index, row in enumerate(self.rows) if row.kind != "same"]

    @property
    def divergent_tool(self) -> str:
        """The tool of the first divergent call (A's, else B's); ``(same calls)`` when none differs."""
        found = self.divergence
        if found is None:
            return "(same calls)"
        if found.a_call is not None:
            return self.a_calls[found.a_call].name
        return self.b_calls[found.b_call or 0].name

    @property
    def differs_when_both_failed(self) -> bool:
        """Both runs failed the task, and not by the same calls."""
        return self.change == "both_failed" and self.divergence is not None

    @property
    def change(self) -> str:
        """``regressed`` (A ✓, B ✗), ``fixed``, ``both_succeeded``, ``both_failed`` or ``unknown``."""
        return TASKS.word(self.a_success, self.b_success)

    @property
    def diverges(self) -> bool:
        """The two runs' calls part somewhere."""
        return self.divergence is not None

    def count(self, kind: RowKind) -> int:
        return sum(1 for row in self.rows if row.kind == kind)

    @cached_property
    def conversations(self) -> tuple[Conversation, Conversation]:
        """A's and B's messages and where their calls fall among them (made when a view first asks)."""
        empty = Conversation([], [])
        return (
            conversation_of(self.a_trajectory) if self.a_trajectory is not None else empty,
            conversation_of(self.b_trajectory) if self.b_trajectory is not None else empty,
        )

    @cached_property
    def timeline(self) -> list[TimelineRow]:
        """The calls' rows with both runs' messages between them, aligned by role (:func:`timeline`)."""
        return timeline(self.rows, *self.conversations, len(self.a_calls), len(self.b_calls))


def pair_task(key: str, task: str, a: Trajectory, b: Trajectory) -> TaskPair:
    """Outcomes and aligned calls of one task key."""
    a_located, b_located = located_calls(a), located_calls(b)
    a_calls, b_calls = [call for _, call in a_located], [call for _, call in b_located]
    rows = align(a_calls, b_calls)
    divergence = None
    for index, row in enumerate(rows):
        if row.kind != "same":
            divergence = Divergence(
                index,
                row.kind,
                row.a,
                row.b,
                None if row.a is None else a_calls[row.a].display(),
                None if row.b is None else b_calls[row.b].display(),
            )
            break
    return TaskPair(
        key,
        task,
        success_of(a),
        success_of(b),
        score_of(a),
        score_of(b),
        a.outcome.status,
        b.outcome.status,
        rows,
        a_calls,
        b_calls,
        divergence,
        [step for step, _ in a_located],
        [step for step, _ in b_located],
        a,
        b,
        expected_pairs(a, b),
    )


@dataclass(frozen=True)
class PassK:
    """tau2's pass^k of each run on the paired tasks that have at least k trials, and B − A."""

    k: int
    tasks: int
    a: float
    b: float

    @property
    def difference(self) -> float:
        return self.b - self.a


def pass_hat_k(trials: Sequence[tuple[int, int]], k: int) -> float:
    """Mean over tasks of C(c, k) / C(n, k) for a task with n trials and c successes (tau2's pass^k:
    the chance that k trials drawn without replacement all succeed)."""
    usable = [(n, c) for n, c in trials if n >= k]
    if not usable:
        return 0.0
    return sum(comb(c, k) / comb(n, k) for n, c in usable) / len(usable)


@dataclass
class OutcomeComparison(PairedComparison[TaskPair]):
    """Everything ``compare LOG_A LOG_B`` reports: the log kind of the one comparison, its pairs the
    paired tasks, its figures :attr:`stats`."""

    vocabulary: ClassVar[Vocabulary] = TASKS

    a_path: str
    b_path: str
    tasks: list[TaskPair]
    a_only: list[str]
    b_only: list[str]
    counts: dict[str, int]
    stats: PairedStats
    """Success of A and B on the paired tasks whose outcome both know, McNemar's test on them, and the
    bootstrap of B − A on their scores clustered by task (the figures a replay comparison states)."""
    pass_k: list[PassK]
    warnings: list[str] = field(default_factory=list)

    @property
    def pairs(self) -> list[TaskPair]:
        return self.tasks

    @property
    def figures(self) -> PairedStats:
        return self.stats

    @property
    def unpaired(self) -> Unpaired:
        return Unpaired(self.a_only, self.b_only)

    def grouped_regressions(self, by: Literal["tool", "reference", "status"]) -> dict[str, list[str]]:
        """The regressed task keys in groups, largest first (ties by name): ``tool``, the tool at the
        first divergence (A's call, else B's); ``reference``, the first reference action A hit and B
        did not (``(none)`` when B hit every one A hit; tasks without a reference are left out);
        ``status``, B's termination reason (``unknown`` when the log gives none)."""
        groups: dict[str, list[str]] = {}
        for task in self.regressions:
            if by == "tool":
                name = task.divergent_tool
            elif by == "reference":
                if not task.expected:
                    continue
                name = task.first_lost_expected or "(none)"
            else:
                name = task.b_status or "unknown"
            groups.setdefault(name, []).append(task.key)
        return dict(sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])))

    def regression_groups(self) -> dict[str, int]:
        """Regressions by the tool at their first divergence (A's call, else B's), most first."""
        return {name: len(keys) for name, keys in self.grouped_regressions("tool").items()}

    def summary(self) -> dict[str, Any]:
        """The report's ``summary``: counts as integers, ``mcnemar_p`` a float, rates and intervals."""
        return {
            "paired": len(self.tasks),
            "regressions": self.counts["regressed"],
            "fixes": self.counts["fixed"],
            "both_succeeded": self.counts["both_succeeded"],
            "both_failed": self.counts["both_failed"],
            "unknown_outcome": self.counts["unknown"],
            "mcnemar_p": float(self.stats.mcnemar_p),
            "a_success": _rate(self.stats.a),
            "b_success": _rate(self.stats.b),
            "difference": {
                "b_minus_a": self.stats.difference,
                "low": self.stats.low,
                "high": self.stats.high,
                "clusters": self.stats.clusters,
                "resamples": self.stats.resamples,
                "clustered_by": "task",
            },
            "regressions_by_tool": self.regression_groups(),
            "regressions_by_missed_reference": {
                name: len(keys) for name, keys in self.grouped_regressions("reference").items()
            },
            "regressions_by_status": {name: len(keys) for name, keys in self.grouped_regressions("status").items()},
            "expected_actions": self.expected_summary(),
            "pass_k": [
                {"k": p.k, "tasks": p.tasks, "a": p.a, "b": p.b, "b_minus_a": p.difference} for p in self.pass_k
            ],
        }

    def expected_summary(self) -> dict[str, int]:
        """Over the paired tasks with reference actions, the agent's actions: how many each run hit,
        and how many A hit and B did not (``lost``) or B hit and A did not (``gained``)."""
        own = [pair for task in self.tasks for pair in task.expected if pair.requestor != "user"]
        return {
            "tasks": sum(1 for task in self.tasks if task.expected),
            "actions": len(own),
            "a_matched": sum(1 for pair in own if pair.a == "matched"),
            "b_matched": sum(1 for pair in own if pair.b == "matched"),
            "lost": sum(1 for pair in own if pair.change == "lost"),
            "gained": sum(1 for pair in own if pair.change == "gained"),
        }

    def headline(self) -> str:
        a, b = self.stats.a, self.stats.b
        return (
            f"{len(self.tasks)} paired tasks: A {a.right}/{a.total}, B {b.right}/{b.total}; "
            f"{self.counts['regressed']} regressed, {self.counts['fixed']} fixed, "
            f"{self.counts['both_failed']} both failed; McNemar p = {self.stats.mcnemar_p:.3g}"
        )


def _rate(rate: Rate) -> dict[str, Any]:
    return {"successes": rate.right, "n": rate.total, "rate": rate.rate, "low": rate.low, "high": rate.high}


def compare_outcomes(pairing: Pairing, *, resamples: int = RESAMPLES, seed: int = 0) -> OutcomeComparison:
    """Pair outcomes and trajectories of two logs' shared task keys; the statistics over those whose
    outcome both logs know."""
    tasks = []
    for key in pairing.paired:
        a, b = pairing.a.episodes[key], pairing.b.episodes[key]
        tasks.append(pair_task(key, a.key.task, a.trajectory, b.trajectory))
    counts = TASKS.tally(task.change for task in tasks)
    known = [task for task in tasks if task.change != "unknown"]
    a_scores = [task.a_score if task.a_score is not None else float(bool(task.a_success)) for task in known]
    b_scores = [task.b_score if task.b_score is not None else float(bool(task.b_success)) for task in known]
    stats = paired_stats(
        [bool(task.a_success) for task in known],
        [bool(task.b_success) for task in known],
        [task.task for task in known],
        scores=(a_scores, b_scores),
        resamples=resamples,
        seed=seed,
    )
    trials: dict[str, list[tuple[bool, bool]]] = {}
    for task in known:
        trials.setdefault(task.task, []).append((bool(task.a_success), bool(task.b_success)))
    pass_k = []
    most = max((len(runs) for runs in trials.values()), default=0)
    for k in range(1, most + 1):
        a_trials = [(len(runs), sum(a for a, _ in runs)) for runs in trials.values()]
        b_trials = [(len(runs), sum(b for _, b in runs)) for runs in trials.values()]
        usable = sum(1 for runs in trials.values() if len(runs) >= k)
        pass_k.append(PassK(k, usable, pass_hat_k(a_trials, k), pass_hat_k(b_trials, k)))
    warnings = [*pairing.a.warnings, *pairing.b.warnings]
    if counts["unknown"]:
        warnings.append(
            f"{counts['unknown']} paired task(s) without a known outcome in A or B: left out of the statistics"
        )
    return OutcomeComparison(
        a_path=pairing.a.path,
        b_path=pairing.b.path,
        tasks=tasks,
        a_only=pairing.a_only,
        b_only=pairing.b_only,
        counts=counts,
        stats=stats,
        pass_k=pass_k,
        warnings=warnings,
    )


@dataclass
class RunsComparison:
    """``compare LOG_A LOG_B LOG_C…``: each later log against A (the baseline), paired by task as two
    logs are (each pair's own keys and statistics), and every run's success on the task keys all of
    them share (``common``), so the runs' rates are read on the same tasks."""

    labels: list[str]
    """A, then the label of each compared log, in ``comparisons``' order."""
    comparisons: list[OutcomeComparison]
    common: list[str]
    """The task keys every compared log shares with A, in A's order."""
    rates: list[Rate]
    """Each run's successes, n and Wilson interval on the common keys whose outcome every run knows."""
    warnings: list[str] = field(default_factory=list)

    @property
    def baseline(self) -> str:
        return self.comparisons[0].a_path

    @property
    def paths(self) -> list[str]:
        return [self.baseline, *(c.b_path for c in self.comparisons)]

    @property
    def regression_count(self) -> int:
        """The most tasks any log regressed on against A (``--fail-on-regression`` reads it)."""
        return max(c.regression_count for c in self.comparisons)

    def runs(self) -> list[dict[str, Any]]:
        """Each run's row of the combined table: its label, log, pairs with A and rate on the common keys."""
        rows = []
        for index, (label, path) in enumerate(zip(self.labels, self.paths, strict=True)):
            versus = self.comparisons[index - 1] if index else None
            rows.append(
                {
                    "label": label,
                    "log": path,
                    "paired_with_baseline": len(versus.tasks) if versus else None,
                    "regressions": versus.counts["regressed"] if versus else None,
                    "fixes": versus.counts["fixed"] if versus else None,
                    "mcnemar_p": float(versus.stats.mcnemar_p) if versus else None,
                    "success_on_common": _rate(self.rates[index]),
                }
            )
        return rows

    def headline(self) -> str:
        parts = [
            f"{label} {c.counts['regressed']} regressed, {c.counts['fixed']} fixed (p = {c.stats.mcnemar_p:.3g})"
            for label, c in zip(self.labels[1:], self.comparisons, strict=True)
        ]
        rates = ", ".join(f"{label} {r.right}/{r.total}" for label, r in zip(self.labels, self.rates, strict=True))
        return (
            f"{len(self.labels)} runs against {self.labels[0]}: "
            + "; ".join(parts)
            + (f"; on the {len(self.common)} tasks all share: {rates}")
        )


def compare_many(
    pairings: Sequence[Pairing], labels: Sequence[str], *, resamples: int = RESAMPLES, seed: int = 0
) -> RunsComparison:
    """Each pairing (the baseline with one later log) compared as two logs are; the common keys' rates."""
    comparisons = [compare_outcomes(pairing, resamples=resamples, seed=seed) for pairing in pairings]
    by_key = [{task.key: task for task in c.tasks} for c in comparisons]
    common = [task.key for task in comparisons[0].tasks if all(task.key in tasks for tasks in by_key)]
    known = [key for key in common if all(tasks[key].change != "unknown" for tasks in by_key)]
    successes = [sum(1 for key in known if by_key[0][key].a_success)]
    successes += [sum(1 for key in known if tasks[key].b_success) for tasks in by_key]
    warnings = [warning for c in comparisons for warning in c.warnings]
    return RunsComparison(
        labels=list(labels),
        comparisons=comparisons,
        common=common,
        rates=[Rate.of(right, len(known)) for right in successes],
        warnings=list(dict.fromkeys(warnings)),
    )
