"""Compare replay runs of the same recorded inputs: which steps flipped, and is the difference real?

Two runs (A, the baseline, and B, the candidate) are aligned by episode and step label:

- **identity first**: runs over different recorded inputs are refused with a one-line
  :class:`CompareError` (a demo file of the same name with another sha256, no demo file in common, or
  an aligned step that expects another action); runs whose inputs only partly overlap (other
  sessions, other files, item steps in one run only) compare on the overlap and say so;
- **flips per step**: ``regressed`` (✓ in A, ✗ in B), ``fixed`` (✗ → ✓), ``both_wrong_different``
  (wrong in both, with different predictions), ``both_wrong_same`` and ``both_right``. A step is right
  when its stored verdict is ``match``; the ``accepted`` figures also count ``equivalent`` steps as right;
- **flips per episode**, on "every replayed step matched";
- **statistics** (:mod:`replay_tui.stats`): the accuracy of A and of B with Wilson 95 % intervals, the
  difference B − A with a paired bootstrap interval that resamples whole episodes (the steps of one
  episode are correlated, so they are not independent evidence), and the exact McNemar test on the
  discordant steps; overall, per state and on episodes.

Three or more runs (``--repeat`` runs, or several models) give an :class:`Agreement`: for each pair
of runs the share of aligned steps with the same verdict and the same prediction, and the steps on
which all runs agree.

Pure: no Textual, no terminal; the CLI, the app and the reports read the same :class:`Comparison`,
whose JSON is deterministic (sorted keys, no timestamps).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations
from pathlib import Path
from typing import Any, Literal, Protocol

import msgspec
import orjson
from pydantic import BaseModel, Field, ValidationError, computed_field

from replay_tui.groups import MismatchGroup, group_steps
from replay_tui.matching import Verdict
from replay_tui.pairing import join
from replay_tui.repeat_report import RepeatReport
from replay_tui.runner import STEP_REASONS, STEP_RESULTS, EpisodeReport, StepResult, SummaryReport
from replay_tui.sanitize import strip_control
from replay_tui.stats import RESAMPLES, PairedStats, Rate, paired_stats_many

Flip = Literal["regressed", "fixed", "both_wrong_different", "both_wrong_same", "both_right"]
FLIPS: tuple[Flip, ...] = ("regressed", "fixed", "both_wrong_different", "both_wrong_same", "both_right")
FLIP_LABELS: dict[str, str] = {
    "regressed": "regressed ✓→✗",
    "fixed": "fixed ✗→✓",
    "both_wrong_different": "both wrong, different predictions",
    "both_wrong_same": "both wrong, same prediction",
    "both_right": "both right",
}
SHOWN_FLIPS: tuple[Flip, ...] = ("regressed", "fixed", "both_wrong_different")
"""The flips a reviewer looks at (``]``/``[`` in the app visit them): the others change nothing."""
EpisodeFlip = Literal["regressed", "fixed", "both_wrong", "both_right"]
EPISODE_FLIPS: tuple[EpisodeFlip, ...] = ("regressed", "fixed", "both_wrong", "both_right")
STATE_RESAMPLES = 2_000
"""Per-state intervals resample fewer times (there may be many states; the overall figure is the headline)."""
CLUSTER_NOTE = (
    "The step-level difference's interval resamples whole episodes (a paired cluster bootstrap): "
    "the steps of one episode are correlated, so they are not counted as independent evidence."
)


class CompareError(ValueError):
    """Runs that cannot be compared (other recorded inputs, no steps, not a report); one line."""


# --------------------------------------------------------------------------- models


class DemoIdentity(BaseModel):
    """A demo file a run read: its name, and, when the run recorded them, its size and sha256."""

    name: str
    path: str | None = None
    size: int | None = None
    sha256: str | None = None


class RunInfo(BaseModel):
    """What a comparison says about one run."""

    label: str
    """``A``, ``B``, ``C``... in the order the runs were given."""
    name: str
    """The run's name in the history, or its report file's name."""
    source: str = ""
    """Where it was read from (a path or a history name); empty for the app's own results."""
    mode: str = ""
    mismatch_policy: str = ""
    matching: str = "exact"
    include_item_steps: bool = False
    created: str | None = None
    model: str | None = None
    demo_files: list[DemoIdentity] = Field(default_factory=list)
    hashes_known: bool = False
    episodes: int = 0
    steps: int = 0
    outcomes: dict[str, int] = Field(default_factory=dict)
    """The run's episodes by what their logs say of the task, as its own report counts them."""


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


class Comparison(BaseModel):
    """Run B against run A (the baseline) on the steps both replayed."""

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

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def regression_groups(self) -> list[MismatchGroup]:
        """The regressions grouped like a run's mismatches (state, expected tool, B's tool, kind of B's
        reason): what kind of step the change broke. Keys are ``[episode, step_label]``. Made when a
        report or a screen first asks (a third of a big comparison's time went to grouping 60,000
        regressions nobody had asked to see)."""
        return group_steps(
            (step.state, step.expected, step.predicted_b, step.reason_b, step.error_b, [step.episode, step.step_label])
            for step in self.steps
            if step.flip == "regressed"
        )

    @property
    def regressions(self) -> list[StepPair]:
        return [step for step in self.steps if step.flip == "regressed"]

    @property
    def fixes(self) -> list[StepPair]:
        return [step for step in self.steps if step.flip == "fixed"]

    @property
    def shown_steps(self) -> list[StepPair]:
        """Regressed, fixed and both-wrong-different steps, in episode and step order."""
        return [step for step in self.steps if step.shown]

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


# --------------------------------------------------------------------------- loading


class StepLike(Protocol):
    """What a comparison reads of a step result: a :class:`StepResult`, or a :class:`StepRow` read
    straight from a report's JSON."""

    @property
    def step_label(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def expected(self) -> str: ...
    @property
    def predicted(self) -> str: ...
    @property
    def match(self) -> bool: ...
    @property
    def verdict(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def error(self) -> str | None: ...


_VERDICTS = frozenset({"match", "equivalent", "mismatch"})


class StepRow(msgspec.Struct, kw_only=True, gc=False):
    """A step result as a comparison reads it from a report: its narrow schema, decoded without
    pydantic (validating 160,000 :class:`StepResult` models was a third of comparing two 20,000-episode
    runs). ``match`` follows a stored verdict, and the verdict follows ``match`` when the report left it
    out (the seed's shape does), as :class:`StepResult` has them."""

    session_id: int
    step_label: str
    state: str
    expected: str
    predicted: str
    match: bool = False
    verdict: str = ""
    reason: str = ""
    error: str | None = None

    def __post_init__(self) -> None:
        if not self.verdict:
            self.verdict = "match" if self.match else "mismatch"
        elif self.verdict in _VERDICTS:
            self.match = self.verdict == "match"
        else:
            raise ValueError(f"unknown verdict {self.verdict!r}")


@dataclass(frozen=True)
class RunSteps:
    """A run as a comparison reads it: its report (whose episodes' ``steps`` may be left empty) and each
    episode's step results, in the report's episode order."""

    report: SummaryReport
    steps: Sequence[Sequence[StepLike]]

    @classmethod
    def of(cls, summary: SummaryReport | RunSteps) -> RunSteps:
        """A report with its step results (the app's, a ``--repeat`` run's) as a comparison reads it."""
        if isinstance(summary, RunSteps):
            return summary
        return cls(summary, [episode.steps for episode in summary.episodes])

    def episodes(self) -> Iterable[tuple[EpisodeReport, Sequence[StepLike]]]:
        return zip(self.report.episodes, self.steps, strict=True)

    @property
    def step_count(self) -> int:
        return sum(len(steps) for steps in self.steps)


class LoadedRun:
    """A run read from a file: what a comparison reads of it (:class:`RunSteps`), its ``run`` record when
    it has one, and its whole report (:attr:`summary`, validated when first asked: a comparison does not)."""

    def __init__(self, run: RunSteps | SummaryReport, info: dict[str, Any] | None, source: str, *, data: Any = None):
        self.run = RunSteps.of(run)
        self.info = info
        self.source = source
        self._data = data

    @cached_property
    def summary(self) -> SummaryReport:
        """The whole report with its step results (validated here when the run was read from JSON)."""
        if self._data is None:
            return self.run.report
        return _validate(self._data, self.source)


def load_run_file(path: str | os.PathLike[str]) -> LoadedRun:
    """Read a saved run (a report plus its ``"run"`` record) or a plain ``--report-steps`` JSON report.

    Raises :class:`CompareError` (one line naming the file) when it is not such a report, or when it
    holds no step results (a report written without ``--report-steps``)."""
    where = Path(path)
    try:
        data = orjson.loads(where.read_bytes())
    except OSError as exc:
        raise CompareError(f"{where}: {exc.strerror or type(exc).__name__}") from None
    except orjson.JSONDecodeError as exc:
        raise CompareError(f"{where}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return load_run_data(data, str(where))


def load_run_data(data: Any, source: str) -> LoadedRun:
    """:func:`load_run_file` on already-decoded JSON (``source`` names it in errors).

    The report is validated without its step results, which are read by :class:`StepRow`'s narrow
    schema; when either finds a fault, the whole report is validated as before, so the error (or a
    value pydantic accepts and msgspec does not) is the one the report model gives."""
    if not isinstance(data, dict):
        raise CompareError(f"{source}: not a replay report (a JSON object with episodes)")
    if "repeats" in data and "steps" in data and "episodes" not in data:
        raise CompareError(f"{source}: a --repeat report: compare it with `replay-tui compare` as several runs")
    info = data.get("run") if isinstance(data.get("run"), dict) else None
    run = _read_fast(data)
    if run is None:
        whole = _validate(data, source)
        run = RunSteps.of(whole)
    missing = [episode for episode, steps in run.episodes() if episode.steps_total and not steps]
    if missing:
        raise CompareError(
            f"{source}: the report has no step results (episode {missing[0].session_id}): "
            "write it with --report-steps, or save the run"
        )
    return LoadedRun(run, info, source, data=data)


def _validate(data: dict[str, Any], source: str) -> SummaryReport:
    """The whole report as :class:`SummaryReport` (CompareError naming the first faulty field)."""
    body = {key: value for key, value in data.items() if key != "run"}
    if isinstance(body.get("episodes"), list):
        body["episodes"] = [_without(episode, _UNREAD) for episode in body["episodes"]]
    try:
        return SummaryReport.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first.get("loc", ())) or "report"
        raise CompareError(f"{source}: not a replay report ({field}: {first.get('msg', 'invalid')})") from None


_UNREAD = frozenset({"mismatches", "equivalents"})
"""An episode's lists that repeat what its step results say (a comparison reads the steps): left
unread, they cost two runs of 20,000 episodes a third of their validation."""
_HEADER_UNREAD = _UNREAD | {"steps"}


def _without(episode: Any, keys: frozenset[str]) -> Any:
    if not isinstance(episode, dict) or keys.isdisjoint(episode):
        return episode
    return {key: value for key, value in episode.items() if key not in keys}


def _read_fast(data: dict[str, Any]) -> RunSteps | None:
    """The report without its step results as :class:`SummaryReport`, and its steps as :class:`StepRow`
    (a report's ``step_results`` and ``step_reasons`` put back on its episodes as the report model
    does); None when either is faulty."""
    episodes = data.get("episodes")
    if not isinstance(episodes, list) or not all(isinstance(episode, dict) for episode in episodes):
        return None
    body = {key: value for key, value in data.items() if key not in ("run", STEP_RESULTS, STEP_REASONS)}
    body["episodes"] = [_without(episode, _HEADER_UNREAD) for episode in episodes]
    raw_steps = [episode.get("steps", []) for episode in episodes]
    if not all(isinstance(steps, list) for steps in raw_steps):
        return None  # (the whole validation names the faulty field)
    results, reasons = data.get(STEP_RESULTS), data.get(STEP_REASONS)
    if isinstance(results, list):
        by_session: dict[Any, list[Any]] = {}
        for step in results:
            if isinstance(step, dict):
                by_session.setdefault(step.get("session_id"), []).append(step)
        raw_steps = [
            steps or by_session.get(episode.get("session_id"), [])
            for steps, episode in zip(raw_steps, episodes, strict=True)
        ]
    try:
        report = SummaryReport.model_validate(body)
        rows = msgspec.convert(raw_steps, list[list[StepRow]])
    except (ValidationError, msgspec.ValidationError):
        return None
    if isinstance(reasons, dict):
        for episode, steps in zip(report.episodes, rows, strict=True):
            known = reasons.get(str(episode.session_id))
            if isinstance(known, dict):
                for row in steps:
                    if not row.reason:
                        reason = known.get(row.step_label)
                        if isinstance(reason, str):
                            row.reason = reason
    return RunSteps(report, rows)


def repeat_runs(data: Mapping[str, Any], source: str) -> list[LoadedRun]:
    """A ``--repeat K`` report as K runs, one per repetition (for the agreement matrix).

    Each run's step has the verdict the repeat run stored (the one a replay gives it); a report
    written before verdicts were stored is judged as it was then (:func:`replay_tui.matching.actions_match`
    under the state's policy)."""
    from replay_tui.matching import MatchSettings, actions_match

    try:
        report = RepeatReport.model_validate(dict(data))
    except ValidationError as exc:
        raise CompareError(f"{source}: not a --repeat report ({exc.errors()[0].get('msg', 'invalid')})") from None
    specs = [part.strip() for part in report.case.split(",") if part.strip()]
    try:
        settings = MatchSettings.parse(specs)
    except ValueError:
        settings = MatchSettings.build()
    outcomes = {episode.session_id: episode for episode in report.episodes}
    runs: list[LoadedRun] = []
    for run in range(report.repeats):
        episodes: dict[int, list[StepResult]] = {}
        for step in report.steps:
            if run >= len(step.predictions):
                continue
            predicted = step.predictions[run]
            failed = predicted.startswith("!")
            verdict: Verdict
            if run < len(step.verdicts):
                verdict = step.verdicts[run]
            else:
                accepted = not failed and actions_match(predicted, step.expected, settings.policy_for(step.state))
                verdict = "match" if accepted else "mismatch"
            episodes.setdefault(step.session_id, []).append(
                StepResult(
                    session_id=step.session_id,
                    step_index=step.step_index,
                    step_number=step.step_index,
                    step_label=step.step_label,
                    kind="item" if step.kind == "item" else "decision",
                    state=step.state,
                    expected=step.expected,
                    predicted="" if failed else predicted,
                    verdict=verdict,
                    error=(step.errors[run] if run < len(step.errors) else None) if failed else None,
                    error_kind=predicted[1:] if failed else None,
                )
            )
        reports = [
            EpisodeReport(
                session_id=sid,
                outcome=outcomes[sid].outcome if sid in outcomes else None,
                file=report.files[0] if len(report.files) == 1 else "",
                steps_total=len(steps),
                steps_matched=sum(s.match for s in steps),
                accuracy=sum(s.match for s in steps) / max(1, len(steps)),
                steps_recorded=len(steps),
                steps=steps,
            )
            for sid, steps in episodes.items()
        ]
        summary = SummaryReport(
            mode=f"{report.mode} #{run + 1}",
            mismatch_policy="allow",
            include_item_steps=report.include_item_steps,
            case=report.case,
            files=report.files,
            episodes_total=report.episodes_run,
            episodes_run=len(reports),
            episodes_matched=sum(1 for e in reports if e.steps_matched == e.steps_total),
            total_steps=sum(e.steps_total for e in reports),
            total_matched=sum(e.steps_matched for e in reports),
            overall_accuracy=0.0,
            episodes=reports,
        )
        runs.append(LoadedRun(summary, {"name": f"{Path(source).name} run {run + 1}"}, f"{source}#{run + 1}"))
    return runs


def is_repeat_report(data: Any) -> bool:
    """A ``--repeat`` report (its ``episodes`` hold outcomes only; a replay report has a mismatch policy)."""
    return isinstance(data, dict) and "repeats" in data and "steps" in data and "mismatch_policy" not in data


def sha256_file(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def demo_identities(files: Iterable[tuple[str, str | os.PathLike[str]]]) -> list[dict[str, Any]]:
    """``[{"name", "path", "size", "sha256"}]`` for ``(name, path)`` pairs: a run's ``demo_files`` (a
    folder, as some log formats are, gets its name only)."""
    out: list[dict[str, Any]] = []
    for name, path in files:
        where = Path(path)
        item: dict[str, Any] = {"name": name, "path": str(where)}
        try:
            if where.is_file():
                item["size"] = where.stat().st_size
                item["sha256"] = sha256_file(where)
        except OSError:
            pass
        out.append(item)
    return out


# --------------------------------------------------------------------------- run identity


def run_info(
    run: SummaryReport | RunSteps, info: Mapping[str, Any] | None = None, *, label: str, source: str = ""
) -> RunInfo:
    """What the comparison shows of a run: its ``run`` record's fields when it has one, else the report's."""
    steps = RunSteps.of(run)
    summary = steps.report
    info = dict(info or {})
    files: list[DemoIdentity] = []
    raw_files = info.get("demo_files")
    if isinstance(raw_files, list) and raw_files:
        for item in raw_files:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                sha = item.get("sha256")
                size = item.get("size")
                path = item.get("path")
                files.append(
                    DemoIdentity(
                        name=item["name"],
                        path=str(path) if path is not None else None,
                        size=size if isinstance(size, int) else None,
                        sha256=sha.lower() if isinstance(sha, str) and sha else None,
                    )
                )
    if not files:
        files = [DemoIdentity(name=name) for name in summary.files]
    name = info.get("name") if isinstance(info.get("name"), str) and info.get("name") else None
    return RunInfo(
        label=label,
        name=name or (Path(source).name if source else label),
        source=source,
        mode=str(info.get("policy") or summary.mode),
        mismatch_policy=summary.mismatch_policy,
        matching=summary.matching_label,
        include_item_steps=summary.include_item_steps,
        created=str(info["created"]) if info.get("created") else None,
        model=str(info["model"]) if info.get("model") else None,
        demo_files=files,
        hashes_known=bool(files) and all(f.sha256 for f in files),
        episodes=len(summary.episodes),
        steps=steps.step_count,
        outcomes=summary.outcomes,
    )


def _short_hash(sha: str | None) -> str:
    return (sha or "?")[:12]


def _names(files: Sequence[DemoIdentity]) -> str:
    shown = ", ".join(f.name for f in files[:3])
    return shown + (f" and {len(files) - 3} more" if len(files) > 3 else "") if files else "no files"


@dataclass
class _Identity:
    """How two or more runs' demo files correspond: a canonical key per (run, file name)."""

    canonical: list[dict[str, str]]
    common: set[str]
    warnings: list[str]
    shown: dict[str, str]  # canonical key -> a file name to show


def _identity(infos: Sequence[RunInfo]) -> _Identity:
    """Check that the runs read the same recorded inputs; raise CompareError with the reason when not.

    Files are the same when their sha256 is (when every run recorded hashes), else when their names
    are. A file name with two different hashes, or no file in common, is refused."""
    warnings: list[str] = []
    by_hash = all(info.hashes_known for info in infos)
    unknown = [info.label for info in infos if not info.hashes_known]
    if unknown:
        which = ", ".join(unknown)
        warnings.append(
            f"demo file hashes unknown for {which} (a plain report, not a saved run): "
            "the recorded inputs are matched by file name only"
        )
    # the same name with different hashes, between any two runs that know them
    for first, second in combinations(infos, 2):
        hashes = {_basename(f.name): f.sha256 for f in first.demo_files if f.sha256}
        for item in second.demo_files:
            other = hashes.get(_basename(item.name))
            if other and item.sha256 and other != item.sha256:
                raise CompareError(
                    f"different recorded inputs: demo file {_basename(item.name)} has sha256 {_short_hash(other)}… in "
                    f"{first.label} and {_short_hash(item.sha256)}… in {second.label}"
                )
    canonical: list[dict[str, str]] = []
    shown: dict[str, str] = {}
    for info in infos:
        keys: dict[str, str] = {}
        for item in info.demo_files:
            key = f"sha256:{item.sha256}" if by_hash and item.sha256 else f"name:{_basename(item.name)}"
            keys[item.name] = key
            shown.setdefault(key, _basename(item.name))
        canonical.append(keys)
    sets = [set(keys.values()) for keys in canonical]
    common = set.intersection(*sets) if sets else set()
    if not common:
        what = "demo file in common" if by_hash else "demo file name in common"
        listing = "; ".join(
            f"{info.label}: "
            + (
                ", ".join(f"{f.name} sha256 {_short_hash(f.sha256)}…" for f in info.demo_files[:3])
                if by_hash
                else _names(info.demo_files)
            )
            for info in infos
        )
        raise CompareError(f"different recorded inputs: no {what} ({listing})")
    if any(s != common for s in sets):
        warnings.append(
            f"the runs share {len(common)} demo file{'s' if len(common) != 1 else ''} of "
            f"{len(set.union(*sets))}: comparing the episodes of the shared files only"
        )
    return _Identity(canonical, common, warnings, shown)


def _basename(name: str) -> str:
    """A file's name without its folder: runs may name the same file by other paths."""
    return Path(name).name or name


def _episode_key(episode: EpisodeReport, files: Mapping[str, str]) -> tuple[str, str]:
    """An episode's key across runs: its file's canonical key and its id in the log (or its session id)."""
    file_key = files.get(episode.file) or f"name:{_basename(episode.file)}"
    local = f"id:{episode.episode_id}" if episode.episode_id is not None else f"session:{episode.session_id}"
    return file_key, local


def _episode_name(episode: EpisodeReport) -> str:
    return episode.episode_id if episode.episode_id is not None else str(episode.session_id)


def _unique_names(episodes: Sequence[EpisodeReport]) -> dict[int, str]:
    """Each episode's name (by ``id``), qualified by its file's name when two files share an episode id."""
    counts: dict[str, int] = {}
    for episode in episodes:
        counts[_episode_name(episode)] = counts.get(_episode_name(episode), 0) + 1
    return {
        id(episode): _episode_name(episode)
        if counts[_episode_name(episode)] == 1
        else f"{_basename(episode.file)}:{_episode_name(episode)}"
        for episode in episodes
    }


_Episode = tuple[EpisodeReport, Sequence[StepLike]]
"""An episode of a run and its step results."""


def _index(run: RunSteps, files: Mapping[str, str]) -> dict[tuple[str, str], _Episode]:
    index: dict[tuple[str, str], _Episode] = {}
    for episode, steps in run.episodes():
        index.setdefault(_episode_key(episode, files), (episode, steps))
    return index


def _one_line(text: str, limit: int = 80) -> str:
    text = " ".join(strip_control(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_same_inputs(first: EpisodeReport, second: EpisodeReport, labels: tuple[str, str]) -> None:
    if first.instruction and second.instruction and first.instruction != second.instruction:
        raise CompareError(
            f"different recorded inputs: episode {_episode_name(first)} has another instruction in "
            f"{labels[1]} ({_one_line(first.instruction, 50)!r} vs {_one_line(second.instruction, 50)!r})"
        )


def _check_same_step(step_a: StepLike, step_b: StepLike, episode: str, labels: tuple[str, str]) -> None:
    if step_a.expected != step_b.expected:
        raise CompareError(
            f"different recorded inputs: episode {episode} step {step_a.step_label} expects "
            f"{_one_line(step_a.expected, 60)!r} in {labels[0]} and {_one_line(step_b.expected, 60)!r} in {labels[1]}"
        )


# --------------------------------------------------------------------------- two runs


def _flip(a: StepLike, b: StepLike) -> Flip:
    if a.match and b.match:
        return "both_right"
    if a.match:
        return "regressed"
    if b.match:
        return "fixed"
    return "both_wrong_same" if a.predicted == b.predicted else "both_wrong_different"


def _fully_matched(episode: EpisodeReport, steps: Sequence[StepLike]) -> bool:
    """Every step the run replayed in the episode matched (and the replay was not cut short by a cancel)."""
    return not episode.cancelled and all(step.match for step in steps)


def _episode_flip(a: bool, b: bool) -> EpisodeFlip:
    if a and b:
        return "both_right"
    if a:
        return "regressed"
    if b:
        return "fixed"
    return "both_wrong"


def _as_info(value: RunInfo | Mapping[str, Any] | None, summary: SummaryReport | RunSteps, label: str) -> RunInfo:
    if isinstance(value, RunInfo):
        return value.model_copy(update={"label": label})
    source = str(value.get("source", "")) if isinstance(value, Mapping) else ""
    return run_info(summary, value, label=label, source=source)


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
    info_a = _as_info(a_info, run_a, "A")
    info_b = _as_info(b_info, run_b, "B")
    identity = _identity([info_a, info_b])
    warnings = list(identity.warnings)
    files_a, files_b = identity.canonical
    index_a = _index(run_a, files_a)
    index_b = _index(run_b, files_b)
    labels = (info_a.label, info_b.label)

    steps: list[StepPair] = []
    episodes: list[EpisodePair] = []
    runs = join(index_a.items(), index_b)  # episodes by (demo file, episode); steps below by label (identity alignment)
    only_a_steps = sum(len(steps_a) for _, (_, steps_a) in runs.a_only)
    only_b_steps = 0
    names = _unique_names([episode_a for _, (episode_a, _), _ in runs.paired])
    for _, (episode_a, steps_a), (episode_b, steps_b) in runs.paired:
        _check_same_inputs(episode_a, episode_b, labels)
        name = names[id(episode_a)]
        by_label_b = {step.step_label: step for step in steps_b}
        labels_a = {step.step_label for step in steps_a}
        counts: dict[str, int] = dict.fromkeys(FLIPS, 0)
        right_a = right_b = 0
        aligned = join(((step.step_label, step) for step in steps_a), by_label_b).paired
        for _, step_a, step_b in aligned:
            _check_same_step(step_a, step_b, name, labels)
            flip = _flip(step_a, step_b)
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
                flip=_episode_flip(matched_a, matched_b),
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
    flips: dict[str, int] = dict.fromkeys(FLIPS, 0)
    for step in steps:
        flips[step.flip] += 1
    episode_flips: dict[str, int] = dict.fromkeys(EPISODE_FLIPS, 0)
    for episode in episodes:
        episode_flips[episode.flip] += 1
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
    )


# --------------------------------------------------------------------------- more runs


def agreement_matrix(
    runs: Sequence[SummaryReport | RunSteps],
    infos: Sequence[RunInfo | Mapping[str, Any] | None] | None = None,
    *,
    examples: int = 20,
) -> Agreement:
    """Pairwise agreement of two or more runs: same verdict and same prediction on an aligned step.

    Refuses runs over different recorded inputs as :func:`compare_runs` does (every pair is checked)."""
    if len(runs) < 2:
        raise CompareError("an agreement matrix needs at least two runs")
    given = list(infos or [None] * len(runs))
    labels = [run_label(i) for i in range(len(runs))]
    read = [RunSteps.of(run) for run in runs]
    run_infos = [_as_info(info, run, label) for run, info, label in zip(read, given, labels, strict=True)]
    identity = _identity(run_infos)
    indexes: list[dict[tuple[str, str], dict[str, StepLike]]] = []
    names: dict[tuple[str, str], str] = {}
    for run, files in zip(read, identity.canonical, strict=True):
        index: dict[tuple[str, str], dict[str, StepLike]] = {}
        for key, (episode, steps) in _index(run, files).items():
            index[key] = {step.step_label: step for step in steps}
            names.setdefault(key, _episode_name(episode))
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
                _check_same_step(step_i, step_j, names[key], (labels[i], labels[j]))
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


def run_label(index: int) -> str:
    """A, B, ... Z, then R27, R28..."""
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def signed_pp(value: float) -> str:
    """A difference of rates (B − A) in percentage points, signed: ``+1.2 pp``, ``−3.0 pp``, ``±0.0 pp``."""
    points = value * 100
    sign = "+" if points >= 0.05 else ("−" if points <= -0.05 else "±")
    return f"{sign}{abs(points):.1f} pp"
