"""Runner: drives a policy through recorded episodes and scores every step.

The same Runner serves the CLI and the TUI: ``iter_episode`` yields each StepResult as it is
judged (the TUI shows them live), ``run_episode``/``run_all`` aggregate them into reports.
Reports are pydantic models whose JSON is deterministic (sorted keys, no timestamps).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal, Protocol

import orjson
from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from replay_tui.env import MISMATCH_POLICIES, MismatchPolicy, OfflineWebshopEnv, ReplayStep
from replay_tui.episodes.model import OUTCOME_KINDS, Outcome, OutcomeCheck, Trajectory
from replay_tui.episodes.problems import EpisodeLoadError, LoadProblem, unique_problems
from replay_tui.expected import TaskAlignment, align_predicted, align_trajectory
from replay_tui.gcpause import gc_paused, gc_tick
from replay_tui.jobs import fan_out
from replay_tui.matching import MatchSettings, Verdict, judge_step
from replay_tui.policies.base import Policy, Prediction, accepts_recorded_step, call_policy, policy_name
from replay_tui.policies.stub import StubPolicy
from replay_tui.sanitize import excerpt
from replay_tui.sources import EpisodeFacts, facts_of

EXCERPT_CHARS = 400
OUTCOME_TEXT_CHARS = 2_000
"""A report keeps this many characters of an outcome's target, answer, explanation and error (a
SWE-agent submission is a whole patch)."""


class StepResult(BaseModel):
    """One replayed step: what was expected, what the policy predicted, and the verdict."""

    session_id: int
    step_index: int
    step_number: int
    step_label: str
    kind: Literal["decision", "item"] = "decision"
    state: str
    expected: str
    predicted: str
    match: bool = False
    """True only when the verdict is ``match``."""
    verdict: Verdict = "mismatch"
    """The verdict :mod:`replay_tui.matching` gave (match, equivalent or mismatch); views show it as stored."""
    reason: str = ""
    """Why, in one line (which part differed, or which difference was tolerated)."""
    policy: str = "exact"
    """The matching policy that judged the step."""
    reward: float = 0.0
    done: bool = False
    forced: bool = False
    error: str | None = None
    error_kind: str | None = None
    """Why the policy gave no action: a PolicyFailure's kind, or ``exception``."""
    warnings: list[str] = Field(default_factory=list)
    trace: dict[str, Any] | None = None
    """What the policy reported about this call (its ``last_trace``: request, response, tokens...)."""

    @model_validator(mode="before")
    @classmethod
    def _verdict_or_match(cls, data: Any) -> Any:
        """Results written before verdicts existed carry only ``match``; ``match`` follows a verdict."""
        if isinstance(data, dict):
            if data.get("verdict") is None:
                data = {**data, "verdict": "match" if data.get("match") else "mismatch"}
            elif data.get("match") is not (data["verdict"] == "match"):  # (a replay passes both, agreeing)
                data = {**data, "match": data["verdict"] == "match"}
        return data

    @property
    def is_mismatch(self) -> bool:
        return self.verdict == "mismatch"

    @property
    def is_equivalent(self) -> bool:
        return self.verdict == "equivalent"


class Mismatch(BaseModel):
    """A step where the predicted action differs from the recorded one."""

    session_id: int
    step_number: int
    step_label: str
    state: str
    expected: str
    predicted: str
    observation_excerpt: str
    error: str | None = None
    error_kind: str | None = None
    reason: str | None = None
    """Why the step was judged so (reports show it when a matching policy other than exact ran)."""


class ExpectedHitReport(BaseModel):
    """One of the task's reference actions in a report, and what was done about it
    (:class:`replay_tui.expected.ExpectedHit`)."""

    name: str
    status: str
    """matched, different (called with another argument: ``reason`` names it) or missing."""
    step: int | None = None
    reason: str = ""
    requestor: str = "assistant"
    """Who was to make it: the agent (``assistant``) or a simulated ``user``."""


class EpisodeOutcome(BaseModel):
    """What the log says of an episode's task, as reports write it: the *outcome*, never the
    replay's *agreement* with the recording (:class:`replay_tui.episodes.model.Outcome`, cut to size)."""

    kind: str = "unknown"
    """One of :data:`replay_tui.episodes.model.OUTCOME_KINDS`."""
    success: bool | None = None
    score: float | None = None
    reason: str = ""
    """Why the task ended as it did, one line (:attr:`Outcome.reason`)."""
    missed_expected: list[str] = Field(default_factory=list)
    """The agent's reference actions missed or called with other arguments, in the reference's order."""
    expected: list[ExpectedHitReport] = Field(default_factory=list)
    """Every reference action's fate, when the log has a reference."""
    extra_writes: list[str] = Field(default_factory=list)
    """The agent's write-like calls no reference action used, in the log's order (``name(args)``)."""
    status: str | None = None
    error: str | None = None
    target: str | None = None
    answer: str | None = None
    explanation: str | None = None
    checks: list[OutcomeCheck] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _present_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The four fields scripts rely on always; the rest only where the log has them."""
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if key in _OUTCOME_KEYS or value not in (None, [], "")}


_OUTCOME_KEYS = frozenset({"kind", "success", "score", "reason", "missed_expected"})


def _cut_text(text: str | None) -> str | None:
    if text is None or len(text) <= OUTCOME_TEXT_CHARS:
        return text
    return text[: OUTCOME_TEXT_CHARS - 1] + "…"


def recorded_outcome(facts: EpisodeFacts) -> EpisodeOutcome:
    """What an episode's log says of its task, as every report writes it: its outcome, with its
    reference actions aligned with the recorded calls when the log has them."""
    if facts.trajectory is not None:
        return recorded_outcome_of(facts.trajectory)
    return episode_outcome(facts.outcome)


def recorded_outcome_of(trajectory: Trajectory) -> EpisodeOutcome:
    """:func:`recorded_outcome` of a log's episode read as a trajectory (a comparison of two logs)."""
    return episode_outcome(trajectory.outcome, align_trajectory(trajectory))


def episode_outcome(outcome: Outcome, alignment: TaskAlignment | None = None) -> EpisodeOutcome:
    """The report's view of ``outcome``, with the reference actions' ``alignment`` when the log has one."""
    hits = alignment.hits if alignment is not None else []
    return EpisodeOutcome(
        kind=outcome.kind,
        success=outcome.success,
        score=outcome.reward,
        reason=outcome.reason,
        missed_expected=alignment.missed if alignment is not None else [],
        expected=[
            ExpectedHitReport(name=h.name, status=h.status, step=h.step, reason=h.reason, requestor=h.requestor)
            for h in hits
        ],
        extra_writes=[_cut_text(call.call.display()) or "" for call in alignment.extra_writes] if alignment else [],
        status=outcome.status,
        error=_cut_text(outcome.error),
        target=_cut_text(outcome.target),
        answer=_cut_text(outcome.answer),
        explanation=_cut_text(outcome.explanation),
        checks=outcome.checks,
    )


class ReplayExpected(BaseModel):
    """The replay's predicted calls against the task's reference actions (neither agreement, which
    compares them with the recording, nor the log's outcome): what the replayed policy would have hit."""

    matched: int
    """The agent's reference actions the predictions (with the recording's other calls) matched."""
    total: int
    """The agent's reference actions."""
    missed: list[str] = Field(default_factory=list)
    """Those missed or predicted with other arguments, in the reference's order."""


def replay_expected(alignment: TaskAlignment | None) -> ReplayExpected | None:
    if alignment is None:
        return None
    agent = [hit for hit in alignment.hits if hit.requestor != "user"]
    matched = sum(1 for hit in agent if hit.status == "matched")
    return ReplayExpected(matched=matched, total=len(agent), missed=alignment.missed)


class HasOutcome(Protocol):
    """A report's episode: what its log says of the task (None when not known)."""

    @property
    def outcome(self) -> EpisodeOutcome | None: ...


def outcome_counts(episodes: Iterable[HasOutcome]) -> dict[str, int]:
    """How many of ``episodes`` the log says succeeded, failed, errored or does not say
    (:data:`~replay_tui.episodes.model.OUTCOME_KINDS`; an episode without an outcome is unknown)."""
    counts = dict.fromkeys(OUTCOME_KINDS, 0)
    for episode in episodes:
        kind = episode.outcome.kind if episode.outcome is not None else "unknown"
        counts[kind if kind in counts else "unknown"] += 1
    return counts


class EpisodeReport(BaseModel):
    """The replay of one episode (the seed's fields plus where it came from and why it stopped)."""

    session_id: int
    file: str = ""
    instruction: str = ""
    episode_id: str | None = None
    """The episode's id in a log of another format (``session_id`` is then its position in the set);
    None, and not written, for the seed's demo files."""
    steps_total: int
    steps_matched: int
    accuracy: float
    steps_recorded: int
    mismatches: list[Mismatch] = Field(default_factory=list)
    steps_equivalent: int = 0
    """Steps whose difference the matching policy tolerated: neither matched nor mismatched."""
    equivalents: list[Mismatch] = Field(default_factory=list)
    first_mismatch_step: str | None = None
    stopped_early: bool = False
    cancelled: bool = False
    completed_by_backup: bool = False
    success: bool = False
    final_reward: float = 0.0
    warnings: list[str] = Field(default_factory=list)
    steps: list[StepResult] = Field(default_factory=list)
    outcome: EpisodeOutcome | None = None
    """What the log says of the task (None in reports written before outcomes, and not written)."""
    replay_expected: ReplayExpected | None = None
    """The replay's predictions against the task's reference, when the log has one (not written otherwise)."""

    @property
    def matched(self) -> bool:
        """True when every replayed step matched."""
        return not self.mismatches


class SummaryReport(BaseModel):
    """A replay run over many episodes (the seed's fields plus the run's settings)."""

    mode: str
    mismatch_policy: str
    include_item_steps: bool = False
    case: str = "exact"
    files: list[str] = Field(default_factory=list)
    episodes_total: int
    episodes_run: int
    episodes_matched: int
    total_steps: int
    total_matched: int
    overall_accuracy: float
    accuracy_by_state: dict[str, float] = Field(default_factory=dict)
    steps_by_state: dict[str, int] = Field(default_factory=dict)
    failures_by_kind: dict[str, int] = Field(default_factory=dict)
    """Steps where the policy produced no action, counted by PolicyFailure kind."""
    matching: dict[str, Any] | None = None
    """The matching policies (``{"default": ..., "by_state": {...}}``) when any is not ``exact``;
    None for the seed's exact matching, whose reports keep their earlier form byte for byte."""
    total_equivalent: int = 0
    equivalent_by_state: dict[str, int] = Field(default_factory=dict)
    accepted_accuracy: float = 0.0
    """(matched + equivalent) / steps: the accuracy when tolerated differences count as right."""
    accepted_accuracy_by_state: dict[str, float] = Field(default_factory=dict)
    cancelled: bool = False
    episodes: list[EpisodeReport] = Field(default_factory=list)
    problems: list[LoadProblem] = Field(default_factory=list)

    @property
    def total_mismatches(self) -> int:
        return sum(len(episode.mismatches) for episode in self.episodes)

    @property
    def outcomes(self) -> dict[str, int]:
        """The replayed episodes counted by what their logs say of the task (:func:`outcome_counts`)."""
        return outcome_counts(self.episodes)

    @property
    def shows_verdicts(self) -> bool:
        """True when reports carry verdicts and reasons: a matching policy other than exact ran, or
        the episodes are tool calls of other formats (whose reasons name the differing argument)."""
        return self.matching is not None or any(episode.episode_id is not None for episode in self.episodes)

    @property
    def matching_settings(self) -> MatchSettings:
        if not self.matching:
            return MatchSettings.build(self.case)
        return MatchSettings.build(self.matching.get("default", "exact"), self.matching.get("by_state") or {})

    @property
    def matching_label(self) -> str:
        """Which policies produced the figures, e.g. ``exact`` or ``exact, Search=tolerant``."""
        return self.matching_settings.describe()

    def _excludes(self, include_steps: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        """(what the report leaves out, what each episode leaves out) in :meth:`to_dict`."""
        episode_exclude: dict[str, Any] = {} if include_steps else {"steps": True}
        exclude: dict[str, Any] = {}
        if not self.shows_verdicts:
            # seed episodes under exact matching: no verdict fields, so the report is the one the seed's
            # harness wrote (logs of other formats always carry them: the reasons name the arguments)
            exclude = {key: True for key in _MATCHING_SUMMARY_FIELDS}
            episode_exclude.update({key: True for key in _MATCHING_EPISODE_FIELDS})
            episode_exclude["mismatches"] = {"__all__": {"reason"}}
            if include_steps:
                episode_exclude["steps"] = {"__all__": {"verdict", "reason", "policy"}}
        if all(episode.episode_id is None for episode in self.episodes):
            episode_exclude["episode_id"] = True
        if all(episode.outcome is None for episode in self.episodes):
            episode_exclude["outcome"] = True
        if all(episode.replay_expected is None for episode in self.episodes):
            episode_exclude["replay_expected"] = True
        return exclude, episode_exclude

    def to_dict(self, *, include_steps: bool = False, episodes: bool = True) -> dict[str, Any]:
        """The report as JSON data; without ``episodes`` (:meth:`episode_dicts` gives them one by one).

        What a comparison needs is always there, each in a key of its own so the seed's keys keep
        their form: without ``include_steps`` every step result under ``step_results``; with them, in
        the seed's shape (which leaves out verdicts and reasons), the reasons under ``step_reasons``."""
        exclude, episode_exclude = self._excludes(include_steps)
        if not episodes:
            exclude["episodes"] = True
        elif episode_exclude:
            exclude["episodes"] = {"__all__": episode_exclude}
        data = self.model_dump(mode="json", exclude=exclude or None)
        data[OUTCOMES] = self.outcomes
        if not include_steps and episodes and any(episode.steps for episode in self.episodes):
            data[STEP_RESULTS] = [
                step.model_dump(mode="json", exclude={"trace"}) for episode in self.episodes for step in episode.steps
            ]
        elif include_steps and not self.shows_verdicts:
            reasons = {
                str(episode.session_id): {step.step_label: step.reason for step in episode.steps if step.reason}
                for episode in self.episodes
            }
            if any(reasons.values()):
                data[STEP_REASONS] = {session: found for session, found in reasons.items() if found}
        return data

    @model_validator(mode="before")
    @classmethod
    def _steps_from_own_keys(cls, data: Any) -> Any:
        """A report's ``step_results`` and ``step_reasons`` (:meth:`to_dict`) back onto its episodes."""
        if not isinstance(data, dict) or not (STEP_RESULTS in data or STEP_REASONS in data):
            return data
        data = dict(data)
        results, reasons = data.pop(STEP_RESULTS, None), data.pop(STEP_REASONS, None)
        by_session: dict[Any, list[Any]] = {}
        for step in results if isinstance(results, list) else ():
            if isinstance(step, dict):
                by_session.setdefault(step.get("session_id"), []).append(step)
        reasons = reasons if isinstance(reasons, dict) else {}
        episodes = []
        for episode in data.get("episodes") or ():
            if isinstance(episode, dict):
                episode = dict(episode)
                session = episode.get("session_id")
                if not episode.get("steps") and session in by_session:
                    episode["steps"] = by_session[session]
                known = reasons.get(str(session))
                if isinstance(known, dict):
                    episode["steps"] = [_step_with_reason(step, known) for step in episode.get("steps") or ()]
                    episode["mismatches"] = [_with_reason(step, known) for step in episode.get("mismatches") or ()]
            episodes.append(episode)
        data["episodes"] = episodes
        return data

    def episode_dicts(self, *, include_steps: bool = False) -> Iterator[dict[str, Any]]:
        """Each episode as :meth:`to_dict` has it, one at a time: a caller on a worker thread lets other
        threads run between them (one dump of a 20,000-episode report held the GIL for a second)."""
        episode_exclude = self._excludes(include_steps)[1] or None
        for episode in self.episodes:
            yield episode.model_dump(mode="json", exclude=episode_exclude)

    def to_json(self, *, include_steps: bool = False) -> bytes:
        """Deterministic JSON: sorted keys, two-space indent, trailing newline."""
        return (
            orjson.dumps(self.to_dict(include_steps=include_steps), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
            + b"\n"
        )


OUTCOMES = "outcomes"
"""The key of a JSON report's outcome counts (succeeded, failed, errored, unknown: :func:`outcome_counts`)."""
STEP_RESULTS = "step_results"
"""The key of a JSON report's step results when its episodes do not carry them (no --report-steps)."""
STEP_REASONS = "step_reasons"
"""The key of the steps' reasons (session -> step label -> reason) when the seed's shape leaves them out."""


def _step_with_reason(step: Any, reasons: dict[str, Any]) -> Any:
    """:func:`_with_reason` of a step result, its verdict set in the same copy when the report left it
    out (the seed's shape does): :class:`StepResult`'s own check then has nothing to copy (two copies
    of each of 80,000 steps were a fifth of a big comparison's reading)."""
    if not isinstance(step, dict) or step.get("reason"):
        return step
    reason = reasons.get(str(step.get("step_label")))
    if not isinstance(reason, str):
        return step
    if step.get("verdict") is None:
        return {**step, "reason": reason, "verdict": "match" if step.get("match") else "mismatch"}
    return {**step, "reason": reason}


def _with_reason(step: Any, reasons: dict[str, Any]) -> Any:
    """``step`` (a step or mismatch as JSON) with its reason from ``reasons`` when it has none."""
    if not isinstance(step, dict) or step.get("reason"):
        return step
    reason = reasons.get(str(step.get("step_label")))
    return {**step, "reason": reason} if isinstance(reason, str) else step


_MATCHING_SUMMARY_FIELDS = (
    "matching",
    "total_equivalent",
    "equivalent_by_state",
    "accepted_accuracy",
    "accepted_accuracy_by_state",
)
_MATCHING_EPISODE_FIELDS = ("steps_equivalent", "equivalents")


class Cancelled(Exception):
    """Raised inside a run when its cancel event is set."""


UNREACHABLE_STREAK = 5
"""A replay session (:mod:`replay_tui.session`) stops after this many policy calls in a row failed to reach
their endpoint."""


class Unreachable(BaseModel):
    """An endpoint no request got through to: its URL, the last failure's message and how many failed."""

    url: str
    reason: str
    failures: int

    def message(self) -> str:
        """The one line the CLI and the app show: ``endpoint unreachable: URL: REASON``."""
        return f"endpoint unreachable: {self.url}: {self.reason}"


def transport_failure(result: StepResult) -> tuple[str, str] | None:
    """``(endpoint, message)`` when the step's policy call never reached a working endpoint (no
    connection, a timeout, an HTTP 5xx), else None. A 4xx (a bad key or model) or a bad answer means
    the server was reached and said no, which a new endpoint would not fix."""
    trace = result.trace or {}
    failure = trace.get("failure")
    if result.error_kind not in ("connection_error", "timeout", "http_error") or not isinstance(failure, dict):
        return None
    status = failure.get("status")
    if result.error_kind == "http_error" and not (isinstance(status, int) and status >= 500):
        return None
    return str(trace.get("base_url") or "(the default endpoint)"), result.error or result.error_kind


def endpoint_unreachable(steps: Iterable[StepResult]) -> Unreachable | None:
    """The endpoint every policy call of a run failed to reach, or None when one call got an answer
    (or no call went to an endpoint: the stub and oracle modes, a replayed cassette)."""
    found: Unreachable | None = None
    cached = True
    for step in steps:
        failed = transport_failure(step)
        if failed is None:
            return None
        cached = cached and bool((step.trace or {}).get("cache_hit"))
        found = Unreachable(url=failed[0], reason=failed[1], failures=(found.failures if found else 0) + 1)
    if found is not None and cached:  # nothing was asked: the cache holds earlier failures
        found.reason += " (failures kept in the cache from an earlier run: --retry-failures asks again)"
    return found


class EndpointUnreachable(Exception):
    """Raised inside a run whose policy failed to reach its endpoint ``Runner.unreachable_limit`` times in a row."""

    def __init__(self, unreachable: Unreachable):
        super().__init__(unreachable.message())
        self.unreachable = unreachable


class Runner:
    """Replays episodes of ``env`` with ``policy`` and reports step and episode accuracy.

    ``on_step`` is called with every StepResult as soon as it is judged; ``cancel`` (a
    threading.Event) stops a run between steps.
    """

    def __init__(
        self,
        env: OfflineWebshopEnv,
        policy: Policy,
        mismatch_policy: MismatchPolicy | None = None,
        *,
        mode: str | None = None,
        on_step: Callable[[StepResult], None] | None = None,
        cancel: threading.Event | None = None,
        excerpt_chars: int = EXCERPT_CHARS,
    ):
        if mismatch_policy is not None:
            if mismatch_policy not in MISMATCH_POLICIES:
                raise ValueError(f"mismatch_policy must be one of {MISMATCH_POLICIES}")
            env.mismatch_policy = mismatch_policy
        self.env = env
        self.policy = policy
        self.mode = mode or policy_name(policy)
        self.on_step = on_step
        self.cancel = cancel or threading.Event()
        self.excerpt_chars = excerpt_chars
        self.unreachable_limit: int | None = None
        """Raise :class:`EndpointUnreachable` after this many transport failures in a row (the session sets it)."""
        self._unreachable: list[StepResult] = []
        self._pass_step = accepts_recorded_step(policy)
        # the stub itself (not a subclass, which may read more of the recorded step) answers from the step
        self._from_step = policy.predict_from_step if type(policy) is StubPolicy and self._pass_step else None

    @property
    def mismatch_policy(self) -> MismatchPolicy:
        return self.env.mismatch_policy

    def _predict(self, observation: str, step: ReplayStep) -> Prediction:
        """(predicted action, error message, error kind); a failure is a verdict, never a crash.

        The policy is asked about ``step`` (``observation`` is its ``step.observation``)."""
        return call_policy(self.policy, step, pass_step=self._pass_step, from_step=self._from_step)

    def iter_episode(self, session_id: int) -> Iterator[StepResult]:
        """Reset the env to ``session_id`` and yield each step's result as it is judged.

        Raises EpisodeLoadError for a malformed episode and Cancelled when cancelled.
        """
        self.env.reset(session_id)
        while (step := self.env.current) is not None:
            if self.cancel.is_set():
                raise Cancelled
            # The policy sees what the recorded agent saw: the step's observation_before_llm (its
            # prompt was built from it), which may differ in form from the previous step's
            # observation_after_action ("Current observation:" prefix, blank lines collapsed).
            predicted, error, error_kind = self._predict(step.observation, step)
            trace = getattr(self.policy, "last_trace", None)
            # A policy error predicts "", which never matches a recorded action.
            _, reward, done, info = self.env.step(predicted)
            result = StepResult(
                session_id=session_id,
                step_index=step.index,
                step_number=step.step_number,
                step_label=step.label,
                kind=step.kind,
                state=step.state,
                expected=step.expected,
                predicted=predicted,
                verdict=info["verdict"],
                match=info["verdict"] == "match",
                reason=info["reason"],
                policy=info["policy"],
                reward=reward,
                done=done,
                forced=bool(info["forced"]),
                error=error,
                error_kind=error_kind,
                warnings=list(step.warnings),
                trace=dict(trace) if isinstance(trace, dict) else None,
            )
            if self.on_step is not None:
                self.on_step(result)
            yield result
            self._count_transport_failure(result)

    def _count_transport_failure(self, result: StepResult) -> None:
        """Keep the current run of transport failures (across episodes); give up at the limit."""
        if transport_failure(result) is None:
            self._unreachable = []
            return
        self._unreachable.append(result)
        limit = self.unreachable_limit
        if limit is not None and len(self._unreachable) >= limit:
            unreachable = endpoint_unreachable(self._unreachable)
            self._unreachable = []
            assert unreachable is not None
            raise EndpointUnreachable(unreachable)

    def run_episode(self, session_id: int) -> EpisodeReport:
        """Replay one episode to the end (or the first mismatch under ``stop``)."""
        results: list[StepResult] = []
        cancelled = False
        try:
            for result in self.iter_episode(session_id):
                results.append(result)
        except Cancelled:
            cancelled = True
        return self._episode_report(session_id, results, cancelled)

    def _episode_report(self, session_id: int, results: list[StepResult], cancelled: bool) -> EpisodeReport:
        env = self.env
        assert env.replayed is not None
        facts = facts_of(env.replayed)
        steps = env.steps
        trajectory = facts.trajectory
        predicted = align_predicted(trajectory, results) if trajectory is not None else None
        return episode_report(
            EpisodeReport(
                session_id=session_id,
                file=env.demos.ref(session_id).file.name,
                instruction=facts.instruction,
                episode_id=facts.episode_id,
                steps_total=0,
                steps_matched=0,
                accuracy=0.0,
                steps_recorded=len(steps),
                completed_by_backup=facts.completed_by_backup,
                success=facts.succeeded,
                final_reward=facts.reward,
                cancelled=cancelled,
                outcome=recorded_outcome(facts),
                replay_expected=replay_expected(predicted),
            ),
            results,
            lambda r: steps[r.step_index].observation,
            self.excerpt_chars,
        )

    def run_all(
        self,
        session_ids: Iterable[int] | None = None,
        *,
        on_episode: Callable[[EpisodeReport | LoadProblem], None] | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> SummaryReport:
        """Replay many episodes (all by default); malformed ones become problems, not failures.
        ``on_start`` is called with each session id before its episode is loaded."""
        demos = self.env.demos
        ids = list(session_ids) if session_ids is not None else demos.session_ids
        episodes: list[EpisodeReport] = []
        cancelled = False
        with gc_paused():
            for session_id in ids:
                if self.cancel.is_set():
                    cancelled = True
                    break
                gc_tick()
                if on_start is not None:
                    on_start(session_id)
                try:
                    report = self.run_episode(session_id)
                except EpisodeLoadError as exc:
                    if on_episode is not None:
                        on_episode(exc.problem)
                    continue
                episodes.append(report)
                if on_episode is not None:
                    on_episode(report)
                if report.cancelled:
                    cancelled = True
                    break
            return self.summary(episodes, cancelled=cancelled)

    def summary(self, episodes: list[EpisodeReport], *, cancelled: bool = False) -> SummaryReport:
        """The run's report over ``episodes``, with this runner's settings (mode, mismatch, matching)."""
        return summarize_demos(
            episodes,
            self.env.demos,
            mode=self.mode,
            mismatch_policy=self.mismatch_policy,
            include_item_steps=self.env.include_item_steps,
            case=self.env.case,
            matching=self.env.matching,
            cancelled=cancelled,
        )


def episode_report(
    base: EpisodeReport,
    results: list[StepResult],
    observation_of: Callable[[StepResult], str],
    excerpt_chars: int = EXCERPT_CHARS,
) -> EpisodeReport:
    """``base`` (an episode's identity and outcome) with the counts and records of ``results``.

    The one place the verdicts stored on the steps become an episode's mismatches, equivalents and
    accuracy: a replay and a re-judgement build their reports the same way.
    """

    def record(r: StepResult) -> Mismatch:
        return Mismatch(
            session_id=base.session_id,
            step_number=r.step_number,
            step_label=r.step_label,
            state=r.state,
            expected=r.expected,
            predicted=r.predicted,
            error=r.error,
            error_kind=r.error_kind,
            reason=r.reason or None,
            observation_excerpt=excerpt(observation_of(r), excerpt_chars),
        )

    mismatches = [record(r) for r in results if r.is_mismatch]
    equivalents = [record(r) for r in results if r.is_equivalent]
    matched = sum(1 for r in results if r.match)
    return base.model_copy(
        update={
            "steps_total": len(results),
            "steps_matched": matched,
            "accuracy": matched / max(1, len(results)),
            "mismatches": mismatches,
            "steps_equivalent": len(equivalents),
            "equivalents": equivalents,
            "first_mismatch_step": mismatches[0].step_label if mismatches else None,
            "stopped_early": len(results) < base.steps_recorded and not base.cancelled,
            "warnings": sorted({w for r in results for w in r.warnings}),
            "steps": results,
        }
    )


def rejudge(
    report: EpisodeReport,
    matching: MatchSettings,
    observations: Mapping[str, str],
    excerpt_chars: int = EXCERPT_CHARS,
    calls: Mapping[str, Any] | None = None,
) -> EpisodeReport:
    """The same predictions judged again under other matching policies, without calling any policy.

    ``observations`` maps step labels to what the policy saw (for the excerpts of new mismatch
    records); ``calls`` maps the labels of tool-call steps to their tool's schema (or None), which
    are judged as calls. An episode replayed with ``stop`` keeps the steps it ran: a step judged a mismatch now
    may be followed by steps it would have prevented, and one accepted now does not bring back the
    steps a mismatch had stopped.
    """
    steps = []
    last = len(report.steps) - 1
    for position, step in enumerate(report.steps):
        call = calls is not None and step.step_label in calls
        schema = calls.get(step.step_label) if calls is not None else None
        verdict = judge_step(matching, step.expected, step.predicted, step.state, call=call, schema=schema)
        # a mismatch with steps after it was forced (allow); the last step keeps what the run said
        forced = verdict.verdict == "mismatch" and (step.forced or position < last)
        steps.append(
            step.model_copy(
                update={
                    "verdict": verdict.verdict,
                    "match": verdict.match,
                    "reason": verdict.reason,
                    "policy": verdict.policy,
                    "forced": forced,
                }
            )
        )
    previous = {m.step_label: m.observation_excerpt for m in (*report.mismatches, *report.equivalents)}

    def observation_of(step: StepResult) -> str:
        return observations.get(step.step_label) or previous.get(step.step_label, "")

    return episode_report(report, steps, observation_of, excerpt_chars)


def replay_or_problem(runner: Runner, session_id: int) -> EpisodeReport | LoadProblem:
    """One episode of a parallel run (threads, Ray workers): its report, or its problem when malformed."""
    try:
        return runner.run_episode(session_id)
    except EpisodeLoadError as exc:
        return exc.problem


def run_all_parallel(
    make_runner: Callable[[], Runner],
    session_ids: Iterable[int] | None = None,
    *,
    jobs: int = 1,
    on_episode: Callable[[EpisodeReport | LoadProblem], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> SummaryReport:
    """:meth:`Runner.run_all` with up to ``jobs`` episodes replayed at once, on a thread pool.

    ``make_runner`` builds one Runner per worker (each with its own env over the shared, thread-safe
    EpisodeSet; the policy may be shared if it is thread-safe). The report lists episodes in the order
    of ``session_ids``, whatever order they finish in, so it is the same as a sequential run's.
    ``on_episode`` is called on the calling thread as episodes finish. Setting the first runner's
    ``cancel`` event stops every worker between steps (see :func:`replay_tui.jobs.fan_out`). ``on_start``
    is called on the worker's thread as it takes an episode.
    """
    first = make_runner()
    if jobs <= 1:
        return first.run_all(session_ids, on_episode=on_episode, on_start=on_start)
    demos = first.env.demos
    ids = list(session_ids) if session_ids is not None else demos.session_ids

    def worker_runner() -> Runner:
        runner = make_runner()
        runner.cancel = first.cancel
        return runner

    def finished(session_id: int, result: EpisodeReport | LoadProblem) -> None:
        if isinstance(result, EpisodeReport) and result.cancelled:
            first.cancel.set()
        gc_tick()
        if on_episode is not None:
            on_episode(result)

    def replay(runner: Runner, session_id: int) -> EpisodeReport | LoadProblem:
        if on_start is not None:
            on_start(session_id)
        return replay_or_problem(runner, session_id)

    with gc_paused():
        results = fan_out(
            ids,
            replay,
            first,
            worker_runner,
            jobs=jobs,
            cancel=first.cancel,
            on_result=finished,
            name="replay",
        )
        episodes = [result for _, result in results if isinstance(result, EpisodeReport)]
        return first.summary(episodes, cancelled=first.cancel.is_set())


def episodes_total(demos: Any) -> int:
    """Episodes found in the files: the usable ones plus those rejected while indexing."""
    rejected = {(p.file, p.index) for p in demos.problems if p.index is not None}
    usable = {(ref.file.name, ref.index) for ref in demos.refs}
    return len(usable | rejected)


def summarize_demos(
    episodes: list[EpisodeReport],
    demos: Any,
    *,
    mode: str,
    mismatch_policy: str,
    include_item_steps: bool,
    case: str,
    matching: MatchSettings | None = None,
    cancelled: bool = False,
) -> SummaryReport:
    """:func:`summarize` for episodes of a EpisodeSet: its problems, episode count and file names."""
    return summarize(
        episodes,
        demos_problems=demos.problems,
        episodes_total=episodes_total(demos),
        mode=mode,
        mismatch_policy=mismatch_policy,
        include_item_steps=include_item_steps,
        case=case,
        matching=matching,
        files=[demo.name for demo in demos.files],
        cancelled=cancelled,
    )


def summarize(
    episodes: list[EpisodeReport],
    *,
    demos_problems: Iterable[LoadProblem] = (),
    episodes_total: int | None = None,
    mode: str,
    mismatch_policy: str,
    include_item_steps: bool = False,
    case: str = "exact",
    matching: MatchSettings | None = None,
    files: list[str] | None = None,
    cancelled: bool = False,
) -> SummaryReport:
    """Aggregate episode reports into a SummaryReport (also used by the TUI for partial runs).

    ``matching`` (default: ``case`` for every state) says which policies judged the steps; the
    equivalent counts and accepted accuracies are written only when one is not ``exact``.
    """
    settings = matching if matching is not None else MatchSettings.build(case)
    totals: dict[str, int] = {}
    matches: dict[str, int] = {}
    equivalents: dict[str, int] = {}
    failures: dict[str, int] = {}
    for episode in episodes:
        for step in episode.steps:
            totals[step.state] = totals.get(step.state, 0) + 1
            matches[step.state] = matches.get(step.state, 0) + int(step.match)
            equivalents[step.state] = equivalents.get(step.state, 0) + int(step.is_equivalent)
            if step.error_kind:
                failures[step.error_kind] = failures.get(step.error_kind, 0) + 1
    total_steps = sum(e.steps_total for e in episodes)
    total_matched = sum(e.steps_matched for e in episodes)
    total_equivalent = sum(e.steps_equivalent for e in episodes)
    problems = unique_problems(demos_problems)
    return SummaryReport(
        mode=mode,
        mismatch_policy=mismatch_policy,
        include_item_steps=include_item_steps,
        case=settings.default,
        matching=None if settings.is_default else settings.as_dict(),
        total_equivalent=total_equivalent,
        equivalent_by_state={s: equivalents[s] for s in sorted(totals)},
        accepted_accuracy=(total_matched + total_equivalent) / max(1, total_steps),
        accepted_accuracy_by_state={s: (matches[s] + equivalents[s]) / totals[s] for s in sorted(totals)},
        files=list(files or []),
        episodes_total=episodes_total if episodes_total is not None else len(episodes),
        episodes_run=len(episodes),
        episodes_matched=sum(1 for e in episodes if e.matched),
        total_steps=total_steps,
        total_matched=total_matched,
        overall_accuracy=total_matched / max(1, total_steps),
        accuracy_by_state={s: matches[s] / totals[s] for s in sorted(totals)},
        steps_by_state={s: totals[s] for s in sorted(totals)},
        failures_by_kind=dict(sorted(failures.items())),
        cancelled=cancelled,
        episodes=episodes,
        problems=problems,
    )
