"""Reproducibility: ask a policy K times for every recorded step and measure how often it agrees
with the recording and with itself, per state.

Every step is judged on its own recorded input (as under ``--mismatch allow``): a step's prompt
does not depend on earlier predictions, so all recorded steps are asked. A policy whose
``predict_action`` accepts ``sample=`` (LlmPolicy) gets the run index, so runs after the first are
distinct cache entries rather than copies of the first answer.

A failed run counts as the prediction ``!kind`` (``!timeout``, ``!no_tool_call``...): it never
matches the recording, and two failures of the same kind agree with each other.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterable
from itertools import combinations
from typing import Any

from replay_tui.actions import normalize_action
from replay_tui.env import ReplayStep, replay_steps
from replay_tui.episodes.collection import EpisodeSet
from replay_tui.episodes.problems import EpisodeLoadError, LoadProblem, unique_problems
from replay_tui.jobs import fan_out
from replay_tui.matching import CasePolicy, MatchSettings, Verdict, judge_step
from replay_tui.policies.base import accepts_recorded_step, call_policy, policy_name
from replay_tui.repeat_report import RepeatEpisode, RepeatReport, RepeatStats, RepeatStep
from replay_tui.runner import recorded_outcome
from replay_tui.sources import facts_of


def _takes_sample(policy: Any) -> bool:
    try:
        parameters = inspect.signature(policy.predict_action).parameters
    except (TypeError, ValueError):
        return False
    return "sample" in parameters


Same = Callable[[str, str], bool]
"""Whether two predictions of one step agree: the step's own verdict, one as the expected action."""


def _agreeing_pairs(keys: list[str], same: Same) -> float:
    pairs = list(combinations(keys, 2))
    if not pairs:
        return 1.0
    agree = sum(1 for a, b in pairs if _same(a, b, same))
    return agree / len(pairs)


def _same(a: str, b: str, same: Same) -> bool:
    if a.startswith("!") or b.startswith("!"):
        return a == b
    return same(a, b)


def _distinct(keys: list[str], same: Same) -> int:
    groups: list[str] = []
    for key in keys:
        if not any(_same(key, other, same) for other in groups):
            groups.append(key)
    return len(groups)


def repeat_episode(
    policy: Any,
    demos: EpisodeSet,
    session_id: int,
    repeats: int,
    *,
    case: CasePolicy = "exact",
    matching: MatchSettings | None = None,
    include_item_steps: bool = False,
    cancel: threading.Event | None = None,
) -> list[RepeatStep]:
    """Ask ``policy`` ``repeats`` times for each recorded step of one episode.

    A prediction agrees when :mod:`replay_tui.matching` accepts it (match or equivalent) under the
    step's state policy in ``matching`` (default: ``case`` for every state).
    Raises EpisodeLoadError for a malformed episode.
    """
    settings = matching if matching is not None else MatchSettings.build(case)
    episode = demos.trajectory(session_id)
    pass_step = accepts_recorded_step(policy)
    pass_sample = _takes_sample(policy)
    results: list[RepeatStep] = []
    for step in replay_steps(episode, include_item_steps=include_item_steps):
        case = settings.policy_for(step.state)

        def verdict(expected: str, predicted: str, step: ReplayStep = step) -> Verdict:
            return judge_step(settings, expected, predicted, step.state, call=step.call, schema=step.schema).verdict

        keys: list[str] = []
        errors: list[str | None] = []
        for run in range(repeats):
            if cancel is not None and cancel.is_set():
                return results
            predicted, error, kind = call_policy(policy, step, pass_step=pass_step, sample=run if pass_sample else None)
            if kind is not None:
                keys.append(f"!{kind}")
                errors.append(f"{kind}: {error}")
            elif step.call:  # a tool call is kept as predicted, as a replay records it
                keys.append(predicted)
                errors.append(None)
            else:
                keys.append(normalize_action(predicted, case if case not in ("typed", "tolerant") else "exact"))
                errors.append(None)
        verdicts: list[Verdict] = ["mismatch" if key.startswith("!") else verdict(step.expected, key) for key in keys]
        matches = sum(1 for v in verdicts if v != "mismatch")

        def same(a: str, b: str, verdict: Callable[[str, str], Verdict] = verdict) -> bool:
            return verdict(a, b) != "mismatch"

        results.append(
            RepeatStep(
                session_id=session_id,
                step_index=step.index,
                step_label=step.label,
                kind=step.kind,
                state=step.state,
                expected=step.expected,
                predictions=keys,
                errors=errors,
                verdicts=verdicts,
                matches=matches,
                distinct=_distinct(keys, same),
                agreement_with_recording=matches / repeats,
                agreement_between_runs=_agreeing_pairs(keys, same),
            )
        )
    return results


def _stats(steps: list[RepeatStep]) -> RepeatStats:
    failures: dict[str, int] = {}
    for step in steps:
        for key in step.predictions:
            if key.startswith("!"):
                failures[key[1:]] = failures.get(key[1:], 0) + 1
    runs = sum(len(step.predictions) for step in steps)
    matched = sum(step.matches for step in steps)
    return RepeatStats(
        steps=len(steps),
        runs=runs,
        matched_runs=matched,
        agreement_with_recording=matched / max(1, runs),
        agreement_between_runs=sum(s.agreement_between_runs for s in steps) / max(1, len(steps)),
        consistent_steps=sum(1 for s in steps if s.consistent),
        always_matched_steps=sum(1 for s in steps if s.matches == len(s.predictions)),
        failures_by_kind=dict(sorted(failures.items())),
    )


def summarize_repeats(
    steps: list[RepeatStep],
    *,
    mode: str,
    repeats: int,
    case: str = "exact",
    include_item_steps: bool = False,
    files: list[str] | None = None,
    episodes_run: int = 0,
    cancelled: bool = False,
    problems: Iterable[LoadProblem] = (),
    episodes: Iterable[RepeatEpisode] = (),
) -> RepeatReport:
    states = sorted({step.state for step in steps})
    return RepeatReport(
        mode=mode,
        repeats=repeats,
        case=case,
        include_item_steps=include_item_steps,
        files=list(files or []),
        episodes_run=episodes_run,
        overall=_stats(steps),
        by_state={state: _stats([s for s in steps if s.state == state]) for state in states},
        cancelled=cancelled,
        steps=steps,
        problems=unique_problems(problems),
        episodes=list(episodes),
    )


def repeated_episode(demos: EpisodeSet, session_id: int) -> RepeatEpisode:
    """What ``session_id``'s log says of its task, for the report (raises EpisodeLoadError)."""
    facts = facts_of(demos.trajectory(session_id))
    return RepeatEpisode(session_id=session_id, episode_id=facts.episode_id, outcome=recorded_outcome(facts))


def run_repeats(
    make_policy: Callable[[], Any],
    demos: EpisodeSet,
    session_ids: Iterable[int] | None = None,
    *,
    repeats: int,
    case: CasePolicy = "exact",
    matching: MatchSettings | None = None,
    include_item_steps: bool = False,
    jobs: int = 1,
    mode: str | None = None,
    cancel: threading.Event | None = None,
    on_episode: Callable[[int | LoadProblem], None] | None = None,
) -> RepeatReport:
    """Repeat every recorded step of the episodes ``repeats`` times; steps are reported in session order.

    ``make_policy`` is called up to ``jobs`` times, so a policy is never used by two threads at once
    (return the same object every time to share a thread-safe one); ``on_episode`` gets each finished
    session id (or the problem of a malformed one), on the calling thread (see
    :func:`replay_tui.jobs.fan_out`).
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    ids = list(session_ids) if session_ids is not None else demos.session_ids
    cancel = cancel or threading.Event()
    first = make_policy()

    def one(policy: Any, session_id: int) -> tuple[list[RepeatStep], RepeatEpisode] | LoadProblem:
        try:
            steps = repeat_episode(
                policy,
                demos,
                session_id,
                repeats,
                case=case,
                matching=matching,
                include_item_steps=include_item_steps,
                cancel=cancel,
            )
            return steps, repeated_episode(demos, session_id)
        except EpisodeLoadError as exc:
            return exc.problem

    def finished(session_id: int, result: tuple[list[RepeatStep], RepeatEpisode] | LoadProblem) -> None:
        if on_episode is not None:
            on_episode(session_id if isinstance(result, tuple) else result)

    results = fan_out(ids, one, first, make_policy, jobs=jobs, cancel=cancel, on_result=finished, name="repeat")
    episodes = [result for _, result in results if isinstance(result, tuple)]
    steps = [step for episode_steps, _ in episodes for step in episode_steps]
    return summarize_repeats(
        steps,
        mode=mode or policy_name(first),
        repeats=repeats,
        case=matching.describe() if matching is not None else case,
        include_item_steps=include_item_steps,
        files=[demo.name for demo in demos.files],
        episodes_run=len(episodes),
        cancelled=cancel.is_set(),
        problems=demos.problems,
        episodes=[episode for _, episode in episodes],
    )
