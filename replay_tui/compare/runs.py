"""Replay runs of the same recorded inputs compared: which steps flipped, and is the difference real?

The replay kind of the one comparison (:class:`~replay_tui.compare.model.PairedComparison`): run B
against run A (the baseline), episodes paired by (demo file, episode) (:mod:`~replay_tui.compare.identity`)
and their steps by label, the identity alignment (:func:`replay_tui.pairing.join` both times):

- **identity first**: runs over different recorded inputs are refused with a one-line
  :class:`~replay_tui.compare.model.CompareError`; runs whose inputs only partly overlap (other
  sessions, other files, item steps in one run only) compare on the overlap and say so;
- **flips per step** (:data:`~replay_tui.compare.vocabulary.STEPS`): ``regressed`` (✓ in A, ✗ in B),
  ``fixed`` (✗ → ✓), ``both_wrong_different`` (wrong in both, with different predictions),
  ``both_wrong_same`` and ``both_right``. A step is right when its stored verdict is ``match``; the
  ``accepted`` figures also count ``equivalent`` steps as right;
- **flips per episode**, on "every replayed step matched";
- **statistics** (:mod:`replay_tui.stats`): the accuracy of A and of B with Wilson 95 % intervals, the
  difference B − A with a paired bootstrap interval that resamples whole episodes (the steps of one
  episode are correlated, so they are not independent evidence), and the exact McNemar test on the
  discordant steps; overall, per state and on episodes.

Pure: no Textual, no terminal; the CLI, the app and the reports read the same :class:`Comparison`,
whose JSON is deterministic (sorted keys, no timestamps).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar, cast

import orjson
from pydantic import BaseModel, Field, computed_field

from replay_tui.compare.identity import (
    RunInfo,
    as_info,
    check_same_inputs,
    check_same_step,
    episode_name,
    identity_of,
    index_episodes,
    unique_names,
)
from replay_tui.compare.model import CompareError, PairedComparison, Unpaired
from replay_tui.compare.run_files import RunSteps, StepLike
from replay_tui.compare.vocabulary import (
    EPISODES,
    FLIPS,
    SHOWN_FLIPS,
    STEPS,
    EpisodeFlip,
    Flip,
    Vocabulary,
    signed_pp,
)
from replay_tui.groups import MismatchGroup, group_steps
from replay_tui.pairing import join
from replay_tui.runner import EpisodeReport, SummaryReport
from replay_tui.stats import RESAMPLES, PairedStats, paired_stats_many

STATE_RESAMPLES = 2_000
"""Per-state intervals resample fewer times (there may be many states; the overall figure is the headline)."""
CLUSTER_NOTE = (
    "The step-level difference's interval resamples whole episodes (a paired cluster bootstrap): "
    "the steps of one episode are correlated, so they are not counted as independent evidence."
)


@dataclasses.dataclass(slots=True, kw_only=True)
class StepPair:
    """One aligned step: the recorded action and each run's prediction and verdict.

    A dataclass, not a model: a comparison builds one per aligned step from step results already
    validated (80,000 pydantic models took a second of a big comparison); a comparison read back from
    JSON still validates them as :class:`Comparison`'s fields."""

    episode: str
    """The episode as a person reads it: the log's episode id, or the session id."""
    session_a: int
    session_b: int
    step_label: str
    state: str
    expected: str
    predicted_a: str
    predicted_b: str
    verdict_a: str
    verdict_b: str
    reason_a: str = ""
    reason_b: str = ""
    error_a: str | None = None
    error_b: str | None = None
    flip: Flip

    @property
    def right_a(self) -> bool:
        return self.verdict_a == "match"

    @property
    def right_b(self) -> bool:
        return self.verdict_b == "match"

    @property
    def shown(self) -> bool:
        """A flip worth looking at: regressed, fixed, or both wrong in different ways."""
        return self.flip in SHOWN_FLIPS

    @property
    def change(self) -> str:
        return self.flip

    @property
    def diverges(self) -> bool:
        return self.shown


@dataclasses.dataclass(slots=True, kw_only=True)
class EpisodePair:
    """One episode replayed in both runs: its aligned steps' flips and whether each run matched it all
    (a dataclass, as :class:`StepPair`)."""

    episode: str
    file: str = ""
    session_a: int
    session_b: int
    episode_id: str | None = None
    instruction: str = ""
    steps: int
    """Aligned steps."""
    steps_only_a: int = 0
    steps_only_b: int = 0
    right_a: int
    right_b: int
    flips: dict[str, int] = dataclasses.field(default_factory=dict)
    """Aligned steps per flip (every key of :data:`FLIPS`)."""
    matched_a: bool
    """Every step A replayed in this episode matched."""
    matched_b: bool
    flip: EpisodeFlip
    success_a: bool = False
    success_b: bool = False

    @property
    def regressed(self) -> int:
        return self.flips.get("regressed", 0)

    @property
    def fixed(self) -> int:
        return self.flips.get("fixed", 0)

    @property
    def shown(self) -> int:
        return sum(self.flips.get(name, 0) for name in SHOWN_FLIPS)


class Overlap(BaseModel):
    """What the two runs have in common; ``partial`` when either replayed something the other did not."""

    files_common: list[str] = Field(default_factory=list)
    files_only_a: list[str] = Field(default_factory=list)
    files_only_b: list[str] = Field(default_factory=list)
    episodes_common: int = 0
    episodes_only_a: int = 0
    episodes_only_b: int = 0
    steps_common: int = 0
    steps_only_a: int = 0
    """Steps A replayed that B did not (in shared episodes or not)."""
    steps_only_b: int = 0

    @property
    def partial(self) -> bool:
        return bool(
            self.files_only_a
            or self.files_only_b
            or self.episodes_only_a
            or self.episodes_only_b
            or self.steps_only_a
            or self.steps_only_b
        )

    def describe(self) -> str:
        """One sentence: what was compared, and what was left out."""
        text = f"compared on {self.steps_common} steps of {self.episodes_common} episodes"
        if not self.partial:
            return text + " (every replayed step of both runs)"
        left = []
        if self.episodes_only_a or self.episodes_only_b:
            left.append(f"episodes only in A {self.episodes_only_a}, only in B {self.episodes_only_b}")
        if self.steps_only_a or self.steps_only_b:
            left.append(f"steps only in A {self.steps_only_a}, only in B {self.steps_only_b}")
        if self.files_only_a or self.files_only_b:
            left.append(f"demo files only in A {len(self.files_only_a)}, only in B {len(self.files_only_b)}")
        return text + ": the runs overlap partially (" + "; ".join(left) + ")"


class Comparison(BaseModel, PairedComparison[StepPair]):
    """Run B against run A (the baseline) on the steps both replayed: the replay kind of the one
    comparison, its pairs the aligned steps, its figures :attr:`overall`."""

    vocabulary: ClassVar[Vocabulary] = STEPS

    a: RunInfo
    b: RunInfo
    overlap: Overlap
    warnings: list[str] = Field(default_factory=list)
    flips: dict[str, int]
    """Aligned steps per flip (every key of :data:`FLIPS`)."""
    episode_flips: dict[str, int]
    """Episodes per episode flip (every key of :data:`EPISODE_FLIPS`), on "every step matched"."""
    overall: PairedStats
    """Step accuracy (right = verdict ``match``), the interval clustered by episode."""
    accepted: PairedStats
    """The same with ≈ equivalent steps counted as right."""
    by_state: dict[str, PairedStats] = Field(default_factory=dict)
    episodes_stats: PairedStats
    """Episodes where every replayed step matched."""
    outcome_changes: int = 0
    """Episodes whose recorded outcome (success) differs between the runs: replays keep the recorded
    outcome, so this is 0 unless the runs read different logs of the same episodes."""
    episodes: list[EpisodePair] = Field(default_factory=list)
    steps: list[StepPair] = Field(default_factory=list)
    seed: int = 0
    note: str = CLUSTER_NOTE
    unpaired_episodes: Unpaired = Field(default_factory=Unpaired, exclude=True, repr=False)
    """The episodes one run only replayed: not in the JSON, which counts them in :attr:`overlap` (its
    bytes are the reports' contract), so a comparison read back from JSON has none."""

    @property
    def pairs(self) -> list[StepPair]:
        return self.steps

    @property
    def figures(self) -> PairedStats:
        return self.overall

    @property
    def unpaired(self) -> Unpaired:
        return self.unpaired_episodes

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def regression_groups(self) -> list[MismatchGroup]:
        """The regressions grouped like a run's mismatches (state, expected tool, B's tool, kind of B's
        reason): what kind of step the change broke. Keys are ``[episode, step_label]``. Made when a
        report or a screen first asks (a third of a big comparison's time went to grouping 60,000
        regressions nobody had asked to see)."""
        return group_steps(
            (step.state, step.expected, step.predicted_b, step.reason_b, step.error_b, [step.episode, step.step_label])
            for step in self.regressions
        )

    @property
    def shown_steps(self) -> list[StepPair]:
        """Regressed, fixed and both-wrong-different steps, in episode and step order."""
        return self.divergent

    def steps_of(self, episode: str) -> list[StepPair]:
        return [step for step in self.steps if step.episode == episode]

    def headline(self) -> str:
        """One line: the flips and the accuracies, e.g. for a status line or a verdict."""
        o = self.overall
        return (
            f"{self.flips['regressed']} regressed, {self.flips['fixed']} fixed, "
            f"{self.flips['both_wrong_different']} both wrong (different) of {o.n} steps; "
            f"accuracy A {o.a.rate:.1%} → B {o.b.rate:.1%} ({signed_pp(o.difference)}, McNemar p={o.mcnemar_p:.3g})"
        )

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json(self) -> bytes:
        """Deterministic JSON: sorted keys, two-space indent, trailing newline."""
        return orjson.dumps(self.to_dict(), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def _fully_matched(episode: EpisodeReport, steps: Sequence[StepLike]) -> bool:
    """Every step the run replayed in the episode matched (and the replay was not cut short by a cancel)."""
    return not episode.cancelled and all(step.match for step in steps)


def compare_runs(
    a: SummaryReport | RunSteps,
    b: SummaryReport | RunSteps,
    *,
    a_info: RunInfo | Mapping[str, Any] | None = None,
    b_info: RunInfo | Mapping[str, Any] | None = None,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Comparison:
    """Run ``b`` against run ``a`` (the baseline) on the steps both replayed.

    ``a_info``/``b_info``: a run's ``"run"`` record (a mapping, optionally with ``source``) or a
    :class:`RunInfo`; without one the report's own fields are used (file names only, no hashes).
    Raises :class:`CompareError` when the runs did not replay the same recorded inputs, or share no step.
    """
    run_a, run_b = RunSteps.of(a), RunSteps.of(b)
    info_a = as_info(a_info, run_a, "A")
    info_b = as_info(b_info, run_b, "B")
    identity = identity_of([info_a, info_b])
    warnings = list(identity.warnings)
    files_a, files_b = identity.canonical
    index_a = index_episodes(run_a, files_a)
    index_b = index_episodes(run_b, files_b)
    labels = (info_a.label, info_b.label)

    steps: list[StepPair] = []
    episodes: list[EpisodePair] = []
    runs = join(index_a.items(), index_b)  # episodes by (demo file, episode); steps below by label (identity alignment)
    only_a_steps = sum(len(steps_a) for _, (_, steps_a) in runs.a_only)
    only_b_steps = 0
    names = unique_names([episode_a for _, (episode_a, _), _ in runs.paired])
    for _, (episode_a, steps_a), (episode_b, steps_b) in runs.paired:
        check_same_inputs(episode_a, episode_b, labels)
        name = names[id(episode_a)]
        by_label_b = {step.step_label: step for step in steps_b}
        labels_a = {step.step_label for step in steps_a}
        counts: dict[str, int] = dict.fromkeys(FLIPS, 0)
        right_a = right_b = 0
        aligned = join(((step.step_label, step) for step in steps_a), by_label_b).paired
        for _, step_a, step_b in aligned:
            check_same_step(step_a, step_b, name, labels)
            flip = cast(Flip, STEPS.word(step_a.match, step_b.match, same=step_a.predicted == step_b.predicted))
            counts[flip] += 1
            right_a += step_a.match
            right_b += step_b.match
            steps.append(
                StepPair(
                    episode=name,
                    session_a=episode_a.session_id,
                    session_b=episode_b.session_id,
                    step_label=step_a.step_label,
                    state=step_a.state,
                    expected=step_a.expected,
                    predicted_a=step_a.predicted,
                    predicted_b=step_b.predicted,
                    verdict_a=step_a.verdict,
                    verdict_b=step_b.verdict,
                    reason_a=step_a.reason,
                    reason_b=step_b.reason,
                    error_a=step_a.error,
                    error_b=step_b.error,
                    flip=flip,
                )
            )
        only_a_steps += len(labels_a) - len(aligned)
        only_b_steps += len(by_label_b) - len(aligned)
        matched_a, matched_b = _fully_matched(episode_a, steps_a), _fully_matched(episode_b, steps_b)
        episodes.append(
            EpisodePair(
                episode=name,
                file=episode_a.file,
                session_a=episode_a.session_id,
                session_b=episode_b.session_id,
                episode_id=episode_a.episode_id,
                instruction=episode_a.instruction,
                steps=len(aligned),
                steps_only_a=len(labels_a) - len(aligned),
                steps_only_b=len(by_label_b) - len(aligned),
                right_a=right_a,
                right_b=right_b,
                flips=counts,
                matched_a=matched_a,
                matched_b=matched_b,
                flip=cast(EpisodeFlip, EPISODES.word(matched_a, matched_b)),
                success_a=episode_a.success,
                success_b=episode_b.success,
            )
        )
    only_b_steps += sum(len(steps_b) for _, (_, steps_b) in runs.b_only)
    if not steps:
        raise CompareError(
            f"the runs share no replayed step ({info_a.label}: {info_a.episodes} episodes, "
            f"{info_b.label}: {info_b.episodes} episodes, {len(episodes)} in common)"
        )
    all_a, all_b = set(files_a.values()), set(files_b.values())
    overlap = Overlap(
        files_common=sorted(identity.shown[key] for key in identity.common),
        files_only_a=sorted(identity.shown[key] for key in all_a - identity.common),
        files_only_b=sorted(identity.shown[key] for key in all_b - identity.common),
        episodes_common=len(episodes),
        episodes_only_a=len(runs.a_only),
        episodes_only_b=len(runs.b_only),
        steps_common=len(steps),
        steps_only_a=only_a_steps,
        steps_only_b=only_b_steps,
    )
    if overlap.partial:
        warnings.append(overlap.describe())
    if run_a.report.matching_label != run_b.report.matching_label:
        warnings.append(
            "the runs were judged under different matching: "
            f"A {run_a.report.matching_label}, B {run_b.report.matching_label}"
        )
    if run_a.report.include_item_steps != run_b.report.include_item_steps:
        warnings.append("item-page steps were replayed in one run only: those steps are not compared")

    clusters = [step.episode for step in steps]
    verdicts_a, verdicts_b = [s.verdict_a for s in steps], [s.verdict_b for s in steps]
    steps_right_a = [verdict == "match" for verdict in verdicts_a]
    steps_right_b = [verdict == "match" for verdict in verdicts_b]
    accepted_a = [verdict != "mismatch" for verdict in verdicts_a]
    accepted_b = [verdict != "mismatch" for verdict in verdicts_b]
    same = accepted_a == steps_right_a and accepted_b == steps_right_b  # none judged equivalent: the same figures
    chosen: dict[str, list[int]] = {}
    for position, step in enumerate(steps):
        chosen.setdefault(step.state, []).append(position)
    states = sorted(chosen)
    figures = paired_stats_many(
        [
            (steps_right_a, steps_right_b, clusters),
            ([e.matched_a for e in episodes], [e.matched_b for e in episodes], None),
            *(
                (
                    [steps_right_a[i] for i in chosen[state]],
                    [steps_right_b[i] for i in chosen[state]],
                    [clusters[i] for i in chosen[state]],
                )
                for state in states
            ),
            *([] if same else [(accepted_a, accepted_b, clusters)]),
        ],
        resamples=[
            resamples,
            resamples,
            *(min(resamples, STATE_RESAMPLES) for _ in states),
            *([] if same else [resamples]),
        ],
        seed=seed,
    )  # figures with as many clusters and resamples (steps by episode, episodes, a state every episode has) draw once
    overall, episodes_stats = figures[0], figures[1]
    by_state: dict[str, PairedStats] = dict(zip(states, figures[2 : 2 + len(states)], strict=True))
    accepted = overall.model_copy() if same else figures[-1]
    flips = STEPS.tally(step.flip for step in steps)
    episode_flips = EPISODES.tally(episode.flip for episode in episodes)
    return Comparison(
        a=info_a,
        b=info_b,
        overlap=overlap,
        warnings=warnings,
        flips=flips,
        episode_flips=episode_flips,
        overall=overall,
        accepted=accepted,
        by_state=by_state,
        episodes_stats=episodes_stats,
        outcome_changes=sum(1 for e in episodes if e.success_a != e.success_b),
        episodes=episodes,
        steps=steps,
        seed=seed,
        unpaired_episodes=Unpaired(
            [episode_name(episode) for _, (episode, _) in runs.a_only],
            [episode_name(episode) for _, (episode, _) in runs.b_only],
        ),
    )
