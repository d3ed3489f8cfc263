"""Three or more replay runs (``--repeat`` runs, or several models): how often each pair of runs agrees.

An :class:`Agreement`: for each pair of runs the share of aligned steps with the same verdict and the
same prediction, and the steps on which all runs agree. Runs are paired as two are
(:mod:`~replay_tui.compare.identity`), every pair checked for the same recorded inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import orjson
from pydantic import BaseModel, Field

from replay_tui.compare.identity import RunInfo, as_info, check_same_step, episode_name, identity_of, index_episodes
from replay_tui.compare.model import CompareError
from replay_tui.compare.run_files import RunSteps, StepLike
from replay_tui.compare.vocabulary import run_label
from replay_tui.runner import SummaryReport
from replay_tui.stats import Rate


class Agreement(BaseModel):
    """Three or more runs: how often each pair agrees (same verdict and same prediction) on the steps both
    replayed, and on how many steps replayed by every run all of them agree."""

    runs: list[RunInfo]
    warnings: list[str] = Field(default_factory=list)
    matrix: list[list[float]]
    """``matrix[i][j]``: agreeing steps / steps aligned between run i and run j (1.0 on the diagonal)."""
    pair_steps: list[list[int]]
    """Steps aligned between run i and run j."""
    common_steps: int
    """Steps every run replayed."""
    all_agree: int
    """Of those, steps where every run gave the same verdict and the same prediction."""
    all_right: int
    all_wrong: int
    accuracy: list[Rate]
    """Each run's accuracy on the common steps."""
    disagreements: list[dict[str, Any]] = Field(default_factory=list)
    """The first common steps the runs disagree on: episode, step, state, expected, and each run's prediction."""

    def to_json(self) -> bytes:
        return orjson.dumps(self.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def agreement_matrix(
    runs: Sequence[SummaryReport | RunSteps],
    infos: Sequence[RunInfo | Mapping[str, Any] | None] | None = None,
    *,
    examples: int = 20,
) -> Agreement:
    """Pairwise agreement of two or more runs: same verdict and same prediction on an aligned step.

    Refuses runs over different recorded inputs as :func:`~replay_tui.compare.runs.compare_runs` does
    (every pair is checked)."""
    if len(runs) < 2:
        raise CompareError("an agreement matrix needs at least two runs")
    given = list(infos or [None] * len(runs))
    labels = [run_label(i) for i in range(len(runs))]
    read = [RunSteps.of(run) for run in runs]
    run_infos = [as_info(info, run, label) for run, info, label in zip(read, given, labels, strict=True)]
    identity = identity_of(run_infos)
    indexes: list[dict[tuple[str, str], dict[str, StepLike]]] = []
    names: dict[tuple[str, str], str] = {}
    for run, files in zip(read, identity.canonical, strict=True):
        index: dict[tuple[str, str], dict[str, StepLike]] = {}
        for key, (episode, steps) in index_episodes(run, files).items():
            index[key] = {step.step_label: step for step in steps}
            names.setdefault(key, episode_name(episode))
        indexes.append(index)
    size = len(runs)
    matrix = [[1.0] * size for _ in range(size)]
    pair_steps = [[0] * size for _ in range(size)]
    for i in range(size):
        pair_steps[i][i] = sum(len(steps) for steps in indexes[i].values())
    for i, j in combinations(range(size), 2):
        total = agree = 0
        for key, steps_i in indexes[i].items():
            steps_j = indexes[j].get(key)
            if steps_j is None:
                continue
            for label, step_i in steps_i.items():
                step_j = steps_j.get(label)
                if step_j is None:
                    continue
                check_same_step(step_i, step_j, names[key], (labels[i], labels[j]))
                total += 1
                agree += _agree(step_i, step_j)
        pair_steps[i][j] = pair_steps[j][i] = total
        matrix[i][j] = matrix[j][i] = agree / total if total else 0.0
    common = all_agree = all_right = all_wrong = 0
    right = [0] * size
    disagreements: list[dict[str, Any]] = []
    for key, steps_0 in indexes[0].items():
        others = [index.get(key) for index in indexes[1:]]
        if any(other is None for other in others):
            continue
        for label, step_0 in steps_0.items():
            row = [step_0, *(other.get(label) for other in others if other is not None)]
            if len(row) != size or any(step is None for step in row):
                continue
            found = [step for step in row if step is not None]
            common += 1
            for position, step in enumerate(found):
                right[position] += step.match
            if all(_agree(step_0, step) for step in found[1:]):
                all_agree += 1
            elif len(disagreements) < examples:
                disagreements.append(
                    {
                        "episode": names[key],
                        "step_label": label,
                        "state": step_0.state,
                        "expected": step_0.expected,
                        "predicted": [step.predicted for step in found],
                        "verdicts": [step.verdict for step in found],
                    }
                )
            all_right += all(step.match for step in found)
            all_wrong += not any(step.match for step in found)
    warnings = list(identity.warnings)
    if any(pair_steps[i][j] != common for i, j in combinations(range(size), 2)) or any(
        pair_steps[i][i] != common for i in range(size)
    ):
        warnings.append(
            f"the runs overlap partially: {common} steps replayed by every run; each pair is compared on "
            "the steps both replayed"
        )
    return Agreement(
        runs=run_infos,
        warnings=warnings,
        matrix=matrix,
        pair_steps=pair_steps,
        common_steps=common,
        all_agree=all_agree,
        all_right=all_right,
        all_wrong=all_wrong,
        accuracy=[Rate.of(count, common) for count in right],
        disagreements=disagreements,
    )


def _agree(a: StepLike, b: StepLike) -> bool:
    return a.verdict == b.verdict and a.predicted == b.predicted
