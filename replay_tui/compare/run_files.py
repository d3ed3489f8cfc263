"""Replay runs as a comparison reads them: a saved run or a ``--report-steps`` report, a ``--repeat``
report as K runs, and the demo files' identities a run records.

A report's step results are read by a narrow msgspec schema (:class:`StepRow`), the report without
them by pydantic: validating 160,000 :class:`~replay_tui.runner.StepResult` models was a third of
comparing two 20,000-episode runs. The whole report is validated only when asked (:attr:`LoadedRun.summary`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import msgspec
import orjson
from pydantic import ValidationError

from replay_tui.compare.model import CompareError
from replay_tui.matching import Verdict
from replay_tui.repeat_report import RepeatReport
from replay_tui.runner import STEP_REASONS, STEP_RESULTS, EpisodeReport, StepResult, SummaryReport


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
