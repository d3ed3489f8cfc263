"""One headless replay: the core the CLI, the app and the MCP server all run a replay through.

Settings, the opened logs and the episodes to replay go in; events (an episode started, a step replayed,
an episode done, a problem found, an endpoint down) come out through one callback, and the report at the
end. What every face needs and none should redo lives here: the policies (one shared, or one per worker
when the mode's policy is not thread-safe; all closed at the end), the cancel event, the cycle collector
paused while the run allocates (:mod:`replay_tui.gcpause`), the stop when an endpoint cannot be reached,
and where the work runs: local threads (``jobs``), Ray (an ``executor``), or each step asked ``repeats``
times (:meth:`ReplaySession.run_repeats`). The faces keep their flags, their printing and their messages.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from replay_tui.episodes.problems import LoadProblem
from replay_tui.gcpause import gc_paused
from replay_tui.policies import Policy, close_policies, policy_mode
from replay_tui.repeat import run_repeats
from replay_tui.repeat_report import RepeatReport
from replay_tui.runner import (
    UNREACHABLE_STREAK,
    EndpointUnreachable,
    EpisodeReport,
    Runner,
    StepResult,
    SummaryReport,
    Unreachable,
    endpoint_unreachable,
    run_all_parallel,
)

if TYPE_CHECKING:
    from replay_tui.episodes.collection import EpisodeSet
    from replay_tui.executors import RayExecutor
    from replay_tui.workspace import ReplaySettings


@dataclass(frozen=True, slots=True)
class EpisodeStarted:
    """An episode is about to be loaded and replayed (on the thread that replays it; none on Ray)."""

    session_id: int


@dataclass(frozen=True, slots=True)
class StepReplayed:
    """A step was judged (only when the session was asked for ``steps``; on the thread that replays it)."""

    result: StepResult


@dataclass(frozen=True, slots=True)
class EpisodeDone:
    """An episode ended: its report, or the problem that kept it from being replayed (``report`` is None
    under :meth:`ReplaySession.run_repeats`, whose steps are reported at the end). On the session's thread."""

    session_id: int | str | None
    report: EpisodeReport | None = None
    problem: LoadProblem | None = None


@dataclass(frozen=True, slots=True)
class ProblemFound:
    """A problem found while replaying (a malformed episode, an invalid field), each once; those found when
    the logs were opened are the caller's to show. On the session's thread, before the episode's
    :class:`EpisodeDone`."""

    problem: LoadProblem


@dataclass(frozen=True, slots=True)
class EndpointDown:
    """No request reached the policy's endpoint: ``streak`` when the run stopped after
    :data:`~replay_tui.runner.UNREACHABLE_STREAK` failures in a row, else the run ended with none answered.
    The last event of its run."""

    unreachable: Unreachable
    streak: bool


class SessionError(Exception):
    """The run could not go on or end cleanly: a Ray worker failed or could not start, or an LLM setting
    was found wrong as the policies closed. One line."""


SessionEvent = EpisodeStarted | StepReplayed | EpisodeDone | ProblemFound | EndpointDown


class ReplaySession:
    """One replay of ``session_ids`` (all episodes by default) of ``demos`` under ``settings``.

    Building it builds the first policy (raises what :data:`replay_tui.policies.POLICY_BUILD_ERRORS` lists,
    with a one-line message); :meth:`run` or :meth:`run_repeats` runs it once and closes the policies (a
    ``--record`` cassette is written then; an LLM setting found wrong only then, or a Ray worker that
    failed, raises :class:`SessionError`). :meth:`cancel` stops it between steps, from any thread.

    ``jobs`` episodes run at once on local threads, or on Ray workers with ``executor`` (not started yet:
    the session starts and stops it; the workers open ``demos``' files themselves, with ``log_format`` and
    ``allow_pickle``). ``tenure=False`` for a caller that freezes what it keeps itself (the app: see
    :func:`replay_tui.gcpause.gc_paused`).
    """

    def __init__(
        self,
        demos: EpisodeSet,
        settings: ReplaySettings,
        session_ids: Sequence[int] | None = None,
        *,
        on_event: Callable[[SessionEvent], object] | None = None,
        steps: bool = False,
        cancel: threading.Event | None = None,
        jobs: int = 1,
        executor: RayExecutor | None = None,
        log_format: str | None = None,
        allow_pickle: bool = False,
        tenure: bool = True,
    ) -> None:
        self.demos = demos
        self.settings = settings
        self.session_ids = list(session_ids) if session_ids is not None else None
        self._on_event = on_event
        self._steps = steps and on_event is not None  # a step event per step costs; only when asked
        self._cancel = cancel if cancel is not None else threading.Event()
        self.jobs = jobs
        self.executor = executor
        self.log_format = log_format
        self.allow_pickle = allow_pickle
        self.tenure = tenure
        self.policy, self.mode = settings.make_policy()
        self._shared = policy_mode(settings.mode).shareable
        self._made: list[Policy] = [self.policy]
        self._first_taken = False
        self.unreachable: Unreachable | None = None
        """The endpoint the run could not reach (its :class:`EndpointDown` event), else None."""
        self.worker_stats: list[dict[str, int] | None] | None = None
        """The LLM request counts of the Ray workers, which sent the requests instead of :attr:`policy`."""
        self._shown = len(demos.problems)  # problems found before the run are the caller's to show
        self._ran = False

    # -- controls ---------------------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the run between steps (any thread); the report says ``cancelled``."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def count(self) -> int:
        """How many episodes the run replays."""
        return len(self.session_ids) if self.session_ids is not None else len(self.demos)

    def llm_counts(self) -> dict[str, int] | None:
        """``requests_sent`` and ``cache_hits`` of the run's LLM policies (summed over Ray's workers), or
        None for a policy that does not count them."""
        stats = getattr(self.policy, "stats", None)
        if not callable(stats):
            return None
        if self.worker_stats is not None:
            return {k: sum(s[k] for s in self.worker_stats if s) for k in ("requests_sent", "cache_hits")}
        return dict(stats())

    # -- runs -------------------------------------------------------------------------------------------
    def run(self) -> SummaryReport:
        """Replay the episodes; the report lists them in the order asked, however they ran. Stopped by an
        unreachable endpoint, it reports the episodes done so far (and :attr:`unreachable` says why)."""
        self._start()
        episodes: list[EpisodeReport] = []
        try:
            first = self._runner()
            with gc_paused(tenure=self.tenure):
                summary = self._on_threads(first, episodes) if self.executor is None else self._on_ray(first)
        except EndpointUnreachable as exc:
            ids = self.session_ids if self.session_ids is not None else self.demos.session_ids
            order = {sid: i for i, sid in enumerate(ids)}
            episodes.sort(key=lambda report: order.get(report.session_id, len(order)))
            self._down(exc.unreachable, streak=True)
            return first.summary(episodes, cancelled=True)
        finally:
            self._close()
        if not self.cancelled:  # fewer failures than the streak, and none of them answered
            found = endpoint_unreachable(step for episode in summary.episodes for step in episode.steps)
            if found is not None:
                self._down(found, streak=False)
        return summary

    def run_repeats(self, repeats: int) -> RepeatReport:
        """Ask the policy ``repeats`` times for every recorded step (:func:`replay_tui.repeat.run_repeats`),
        on local threads."""
        if self.executor is not None:
            raise ValueError("repeats run on local threads, not on an executor")
        self._start()

        def finished(item: int | LoadProblem) -> None:
            if isinstance(item, LoadProblem):
                self._finished(EpisodeDone(item.session_id, problem=item))
            else:
                self._finished(EpisodeDone(item))

        try:
            with gc_paused(tenure=self.tenure):
                return run_repeats(
                    self._take,
                    self.demos,
                    self.session_ids,
                    repeats=repeats,
                    matching=self.settings.matching,
                    include_item_steps=self.settings.item_steps,
                    jobs=self.jobs,
                    mode=self.mode,
                    cancel=self._cancel,
                    on_episode=finished,
                )
        finally:
            self._close()

    # -- strategies -------------------------------------------------------------------------------------
    def _on_threads(self, first: Runner, episodes: list[EpisodeReport]) -> SummaryReport:
        made = [first]

        def make_runner() -> Runner:  # the first call is the first runner; then one per further worker
            return made.pop() if made else self._runner()

        def done(item: EpisodeReport | LoadProblem) -> None:
            if isinstance(item, EpisodeReport):
                episodes.append(item)
            self._finished(self._episode_done(item))

        started = None if self._on_event is None else self._started
        return run_all_parallel(make_runner, self.session_ids, jobs=self.jobs, on_episode=done, on_start=started)

    def _on_ray(self, first: Runner) -> SummaryReport:
        """The episodes replayed by Ray workers that open the same files (by absolute paths) with the same
        settings; ``first`` (the driver's runner) makes the report."""
        from replay_tui.executors import ExecutorError, ReplayRecipe, run_all_on_ray

        executor = self.executor
        assert executor is not None
        recipe = ReplayRecipe.for_workers(
            [source.path for source in self.demos.files], self.settings, self.log_format, self.allow_pickle
        )
        try:
            with executor:
                summary, self.worker_stats = run_all_on_ray(
                    executor,
                    recipe,
                    first,
                    self.session_ids,
                    on_episode=lambda item: self._finished(self._episode_done(item)),
                )
        except ExecutorError as exc:
            raise SessionError(str(exc)) from None
        return summary

    # -- inside -----------------------------------------------------------------------------------------
    def _start(self) -> None:
        if self._ran:
            raise RuntimeError("a replay session runs once")
        self._ran = True

    def _take(self) -> Policy:
        """The first policy, then the shared one again or a new one per worker."""
        if not self._first_taken:
            self._first_taken = True
            return self.policy
        if self._shared:
            return self.policy
        policy, _ = self.settings.make_policy()
        self._made.append(policy)
        return policy

    def _runner(self) -> Runner:
        on_step = self._stepped if self._steps else None
        runner = self.settings.make_runner(self.demos, self._take(), self.mode, on_step=on_step, cancel=self._cancel)
        runner.unreachable_limit = UNREACHABLE_STREAK  # a dead endpoint ends the run, not each step's retries
        return runner

    def _close(self) -> None:
        from replay_tui.policies.llm import LlmConfigError

        try:
            close_policies(*self._made)  # writes a --record cassette, closes HTTP clients
        except LlmConfigError as exc:
            raise SessionError(str(exc)) from None

    def _emit(self, event: SessionEvent) -> None:
        if self._on_event is not None:
            self._on_event(event)

    def _started(self, session_id: int) -> None:
        self._emit(EpisodeStarted(session_id))

    def _stepped(self, result: StepResult) -> None:
        self._emit(StepReplayed(result))

    @staticmethod
    def _episode_done(item: EpisodeReport | LoadProblem) -> EpisodeDone:
        if isinstance(item, LoadProblem):
            return EpisodeDone(item.session_id, problem=item)
        return EpisodeDone(item.session_id, report=item)

    def _finished(self, done: EpisodeDone) -> None:
        """The problems found since the last episode (its own among them), then the episode's end."""
        found = self.demos.problems[self._shown :]
        self._shown += len(found)
        if done.problem is not None and not any(p is done.problem for p in found):
            found.append(done.problem)
        for problem in found:
            self._emit(ProblemFound(problem))
        self._emit(done)

    def _down(self, unreachable: Unreachable, *, streak: bool) -> None:
        self.unreachable = unreachable
        self._emit(EndpointDown(unreachable, streak))
