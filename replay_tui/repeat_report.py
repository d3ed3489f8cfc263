"""The schema of a ``--repeat K`` report: what :mod:`replay_tui.repeat` writes and
:mod:`replay_tui.compare.run_files` reads back as K runs.

It sits one floor below both (they share a floor and may not import each other), so the report is
declared once and a comparison validates the very model the repeat run wrote.
"""

from __future__ import annotations

import orjson
from pydantic import BaseModel, Field, computed_field

from replay_tui.episodes.problems import LoadProblem
from replay_tui.matching import Verdict
from replay_tui.runner import EpisodeOutcome, outcome_counts


class RepeatStep(BaseModel):
    """One recorded step asked ``repeats`` times."""

    session_id: int
    step_index: int
    step_label: str
    kind: str
    state: str
    expected: str
    predictions: list[str]
    """One per run: the predicted action, or ``!kind`` for a failed run."""
    errors: list[str | None] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    """One per run: the verdict a replay gives that prediction (:func:`replay_tui.matching.judge_step`;
    ``mismatch`` for a failed run). Empty in reports written before verdicts were kept."""
    matches: int
    """Runs whose prediction the recording accepts (``match`` or ``equivalent``)."""
    distinct: int
    """Different predictions among the runs."""
    agreement_with_recording: float
    agreement_between_runs: float
    """Share of pairs of runs that agree (1.0 for a single run)."""

    @property
    def consistent(self) -> bool:
        return self.distinct <= 1


class RepeatEpisode(BaseModel):
    """A repeated episode and what its log says of the task: the *outcome*, as a replay report
    writes it, never the runs' agreement."""

    session_id: int
    episode_id: str | None = None
    outcome: EpisodeOutcome = Field(default_factory=EpisodeOutcome)


class RepeatStats(BaseModel):
    """Agreement over a set of steps (one state, or all)."""

    steps: int = 0
    runs: int = 0
    matched_runs: int = 0
    agreement_with_recording: float = 0.0
    """Matched runs / runs."""
    agreement_between_runs: float = 0.0
    """Mean over steps of the share of agreeing pairs of runs."""
    consistent_steps: int = 0
    """Steps where every run gave the same prediction."""
    always_matched_steps: int = 0
    """Steps where every run matched the recording."""
    failures_by_kind: dict[str, int] = Field(default_factory=dict)


class RepeatReport(BaseModel):
    """A ``--repeat K`` run: agreement with the recording and between runs, overall and per state."""

    mode: str
    repeats: int
    case: str = "exact"
    include_item_steps: bool = False
    files: list[str] = Field(default_factory=list)
    episodes_run: int = 0
    overall: RepeatStats = Field(default_factory=RepeatStats)
    by_state: dict[str, RepeatStats] = Field(default_factory=dict)
    cancelled: bool = False
    steps: list[RepeatStep] = Field(default_factory=list)
    problems: list[LoadProblem] = Field(default_factory=list)
    episodes: list[RepeatEpisode] = Field(default_factory=list)
    """Each repeated episode's outcome, in session order (empty in reports written before outcomes)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcomes(self) -> dict[str, int]:
        """The repeated episodes by what their logs say of the task, as a replay report counts them."""
        return outcome_counts(self.episodes)

    @property
    def all_matched(self) -> bool:
        return self.overall.matched_runs == self.overall.runs

    def to_json(self) -> bytes:
        """Deterministic JSON: sorted keys, two-space indent, trailing newline."""
        return orjson.dumps(self.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
