"""Where the work of a replay or a visual batch runs: here (``--executor local``: the thread pools of
:func:`replay_tui.jobs.fan_out` and :func:`replay_tui.visual.batch.score_pairs`) or on Ray (``--executor ray``).

On Ray, a pool of actors (one per CPU, or ``--jobs``) each builds its own resource once per map, from a picklable
recipe: a Runner over the demo files it opens itself, or a VisualScorer with its own Chromium. The actors
outlive the map: the next map in the same Ray session (another batch, the A/B batch's second side, another
replay) reuses them rather than paying a process and the package's imports for each. Items (session
ids, page pairs) go to whichever actor is free, two queued per actor so none waits for the driver, and come
back in the order of the items, so reports are the local run's. Ray is imported only here, only when used;
Textual-free.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import logging
import pickle
import signal
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from replay_tui.env import OfflineWebshopEnv
from replay_tui.policies import close_policies
from replay_tui.runner import EpisodeReport, Runner, SummaryReport, replay_or_problem
from replay_tui.sources import open_sources

if TYPE_CHECKING:
    from replay_tui.episodes.problems import LoadProblem
    from replay_tui.visual.batch import BatchPair
    from replay_tui.visual.models import PairReport
    from replay_tui.visual.pipeline import VisualScorer
    from replay_tui.workspace import ReplaySettings

RAY_MISSING = "--executor ray needs the ray extra: pip install 'replay_tui[ray]'"
QUEUED_PER_WORKER = 2
"""Items handed to an actor at once: one running, one waiting, so an actor never idles on a round trip."""
AHEAD_PER_WORKER = 8
"""How far past the first undelivered item the actors may run (per actor): a slow item holds back at most this
many finished results, and a cancel stops within them."""

Item = TypeVar("Item")
Result = TypeVar("Result")
Resource = TypeVar("Resource")


class ExecutorError(Exception):
    """Ray is missing, unreachable, or a worker could not build its resource; one line for the CLI."""


def ray_installed() -> bool:
    return importlib.util.find_spec("ray") is not None


@dataclass(frozen=True)
class _Failed:
    """An exception raised on a worker, carried back as a value (so the driver re-raises the original)."""

    error: BaseException


class _Worker(Generic[Resource]):
    """The body of a Ray actor, kept for the Ray session (:class:`_ActorPool`): for each map, one resource built
    once from the map's recipe, serving the map's items one at a time, closed at the map's end (or, for a map
    that keeps it, when the next map needs another or the executor exits)."""

    def __init__(self) -> None:
        self.resource: Resource | None = None
        self.recipe: Callable[[], Resource] | None = None
        self.finish: Callable[[Resource], Any] | None = None  # a kept resource's, run when it is released

    def begin(self, recipe: Callable[[], Resource]) -> str | None:
        """Build the map's resource (or take the one kept from a map of an equal recipe); why it could not be
        built, as one line (raised by the driver), else None."""
        if self.resource is not None and self.recipe == recipe:
            return None
        with contextlib.suppress(Exception):  # another recipe's kept resource: closed first
            self.release()
        self.resource = self.recipe = None
        try:
            self.resource = recipe()
        except Exception as exc:
            return f"a ray worker could not start: {_one_line(exc)}"
        self.recipe = recipe
        return None

    def run(self, work: Callable[[Resource, Any], Any], item: Any) -> Any:
        try:
            return work(self.resource, item)  # type: ignore[arg-type]
        except Exception as exc:
            return _Failed(_picklable(exc))

    def close(self, finish: Callable[[Resource], Any] | None, keep: bool = False) -> Any:
        """Run ``finish`` on the resource (it closes it and may return what the driver sums up); the actor then
        holds nothing of the map. With ``keep``, the resource stays for a next map of an equal recipe and
        ``finish`` runs when it is released."""
        if keep:
            self.finish = finish
            return None
        resource, self.resource, self.recipe, self.finish = self.resource, None, None, None
        if resource is None or finish is None:
            return None
        return finish(resource)

    def release(self) -> None:
        """Close a kept resource."""
        self.close(self.finish)


@dataclass
class _Pooled:
    actor: Any
    cpus: float


class _ActorPool:
    """The idle actors of this process's Ray session, lent to one map at a time and taken back after it.

    Starting an actor costs a process and the package's imports in it (over a second of CPU each); a second
    batch, a second replay in the same Ray session reuses the first's actors. Kept per session (the job and
    node ids): actors of a session that ended are dropped, never used. A map that fails kills the actors it
    held (their state is unknown); an actor that died while idle is replaced when its map begins."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._session: tuple[str, str] | None = None
        self._idle: list[_Pooled] = []
        self._actor_class: Any = None

    def lend(self, ray: Any, count: int, cpus: float) -> list[tuple[Any, bool]]:
        """``count`` actors of ``cpus`` CPUs each, as (actor, reused); idle ones of another size are killed,
        so the new ones fit in the cluster."""
        session = _session_of(ray)
        with self._lock:
            if session is None or session != self._session:
                self._idle, self._actor_class = [], None  # a session that ended: its handles are dead
                self._session = session
            if self._actor_class is None:
                self._actor_class = ray.remote(_Worker)
            fitting = [pooled for pooled in self._idle if pooled.cpus == cpus]
            for pooled in self._idle:
                if pooled.cpus != cpus:
                    _kill(ray, pooled.actor)
            lent, self._idle = fitting[:count], fitting[count:]
            actor_class = self._actor_class
        fresh = [actor_class.options(num_cpus=cpus).remote() for _ in range(count - len(lent))]
        return [(pooled.actor, True) for pooled in lent] + [(actor, False) for actor in fresh]

    def new(self, ray: Any, cpus: float) -> Any:
        """A fresh actor (in place of a lent one that died idle)."""
        with self._lock:
            if self._actor_class is None:
                self._actor_class = ray.remote(_Worker)
            actor_class = self._actor_class
        return actor_class.options(num_cpus=cpus).remote()

    def take_back(self, ray: Any, actors: Iterable[Any], cpus: float) -> None:
        session = _session_of(ray)
        with self._lock:
            if session is None or session != self._session:
                for actor in actors:
                    _kill(ray, actor)
                return
            self._idle.extend(_Pooled(actor, cpus) for actor in actors)

    def reclaim(self, actors: Iterable[Any]) -> list[_Pooled]:
        """Those of ``actors`` that are idle, taken out of the pool (to release what they keep)."""
        wanted = {id(actor) for actor in actors}
        with self._lock:
            found = [pooled for pooled in self._idle if id(pooled.actor) in wanted]
            self._idle = [pooled for pooled in self._idle if id(pooled.actor) not in wanted]
        return found

    def clear(self) -> None:
        """Forget every actor (the Ray session is ending: its shutdown stops them)."""
        with self._lock:
            self._idle, self._actor_class, self._session = [], None, None


def _session_of(ray: Any) -> tuple[str, str] | None:
    """This process's Ray session (a new local Ray has a new node, a new connection a new job); None when Ray
    cannot say (then no actor is kept)."""
    try:
        context = ray.get_runtime_context()
        return str(context.get_job_id()), str(context.get_node_id())
    except Exception:
        return None


def _kill(ray: Any, actor: Any) -> None:
    with contextlib.suppress(Exception):
        ray.kill(actor)


_POOL = _ActorPool()


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _picklable(exc: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


class RayExecutor:
    """A Ray connection for one command: ``address`` (``auto``, ``ray://host:10001``) or a local Ray started
    in-process with ``jobs`` CPUs (all cores when ``jobs`` is 1), shut down on exit when it was started here.
    A Ray already initialised in this process (a test session's) is used as it is."""

    def __init__(self, address: str | None = None, jobs: int = 1) -> None:
        self.address = address
        self.jobs = jobs
        self.workers = max(1, jobs)
        self.ray: Any = None
        self._started = False
        self._keeping: list[Any] = []  # actors left holding a resource by a map with ``keep``

    def __enter__(self) -> RayExecutor:
        if not ray_installed():
            raise ExecutorError(RAY_MISSING)
        import ray

        self.ray = ray
        if not ray.is_initialized():
            quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
            on_term = signal.getsignal(signal.SIGTERM)
            try:
                with warnings.catch_warnings():  # Ray Client warns before it raises: the one line says it
                    warnings.simplefilter("ignore")
                    if self.address is None:
                        # "local": our own Ray, even when another one runs on this machine (ray.init() would join it)
                        cpus = self.jobs if self.jobs > 1 else None
                        ray.init(address="local", num_cpus=cpus, include_dashboard=False, **quiet)
                    else:
                        ray.init(address=self.address, **quiet)
            except Exception as exc:
                where = f"connect to --ray-address {self.address}" if self.address else "start a local Ray"
                raise ExecutorError(f"could not {where}: {_one_line(exc)}") from None
            finally:
                # Ray's core dumps a stack trace on SIGTERM; the command's own handler ends it cleanly instead
                if on_term is not None and threading.current_thread() is threading.main_thread():
                    signal.signal(signal.SIGTERM, on_term)
            self._started = True
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = self.jobs if self.jobs > 1 else max(1, cpus)
        self._cpus = max(1, cpus)
        return self

    def __exit__(self, *exc: object) -> None:
        self._release_kept()
        if self._started:
            _POOL.clear()  # the shutdown stops the kept actors
            self.ray.shutdown()
            self._started = False

    def _release_kept(self) -> None:
        """Close what this executor's maps kept on the actors (a Chromium each), so nothing outlives the command."""
        keeping, self._keeping = self._keeping, []
        for pooled in _POOL.reclaim(keeping):
            try:
                self._get(pooled.actor.release.remote())
            except ExecutorError:
                _kill(self.ray, pooled.actor)
            else:
                _POOL.take_back(self.ray, [pooled.actor], pooled.cpus)

    def map(
        self,
        items: Iterable[Item],
        recipe: Callable[[], Resource],
        work: Callable[[Resource, Item], Result],
        *,
        cancel: threading.Event | None = None,
        on_start: Callable[[Item], object] | None = None,
        on_result: Callable[[Item, Result], object] | None = None,
        on_error: Callable[[Item, Exception], object] | None = None,
        finish: Callable[[Resource], Any] | None = None,
        keep: bool = False,
    ) -> tuple[list[tuple[Item, Result]], list[Any]]:
        """``work(resource, item)`` for every item on the actors, like :func:`replay_tui.jobs.fan_out`.

        ``recipe`` and ``work`` must be picklable (module-level functions, dataclasses of paths and
        settings); each actor calls ``recipe()`` once. ``on_start`` runs as an item is handed out,
        ``on_result`` / ``on_error`` on the calling thread in item order as results arrive. An exception
        of ``work`` goes to ``on_error`` (the map goes on) or, without it, is raised again in order. A set
        ``cancel`` hands out no further item. Returns the ``(item, result)`` pairs in item order and what
        ``finish(resource)`` returned on each actor (it runs once per actor at the end, to close things).
        With ``keep``, the actors keep their resource for this executor's next map of an equal recipe (the A/B
        batch's second side) and ``finish`` runs when the executor exits (its results are not returned).
        """
        ray = self.ray
        todo = list(items)
        if not todo:  # no actor (no files opened, no Chromium started) for nothing
            return [], []
        workers = max(1, min(self.workers, len(todo)))
        cpus = min(1.0, self._cpus / workers)  # --jobs beyond the CPUs shares them rather than waiting
        actors = self._begin(_POOL.lend(ray, workers, cpus), recipe, finish, cpus)
        keep = keep and _session_of(ray) is not None  # no pool (Ray cannot name its session): nothing is kept
        slots = deque(actor for actor in actors for _ in range(QUEUED_PER_WORKER))
        pending: dict[Any, tuple[int, Any]] = {}
        arrived: dict[int, Any] = {}
        done: list[tuple[Item, Result]] = []
        handed = delivered = 0
        finished: list[Any] = []
        clean = False
        try:
            while True:
                ahead = delivered + AHEAD_PER_WORKER * workers
                while slots and handed < min(len(todo), ahead) and not (cancel is not None and cancel.is_set()):
                    actor = slots.popleft()
                    if on_start is not None:
                        on_start(todo[handed])
                    pending[actor.run.remote(work, todo[handed])] = (handed, actor)
                    handed += 1
                if not pending:
                    break
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    index, actor = pending.pop(ref)
                    slots.append(actor)
                    arrived[index] = self._get(ref)
                while delivered in arrived:
                    item, value = todo[delivered], arrived.pop(delivered)
                    delivered += 1
                    if isinstance(value, _Failed):
                        if on_error is None or isinstance(value.error, ExecutorError):
                            raise value.error
                        on_error(item, value.error)  # type: ignore[arg-type]
                        continue
                    done.append((item, value))
                    if on_result is not None:
                        on_result(item, value)
            finished = self._get([actor.close.remote(finish, keep) for actor in actors])
            if keep:
                self._keeping.extend(actor for actor in actors if actor not in self._keeping)
                finished = []
            clean = True
        finally:
            if clean:  # every actor idle again, holding nothing of this map: kept for the next
                _POOL.take_back(ray, actors, cpus)
            else:
                for ref in pending:  # an exception or Ctrl-C: start nothing more
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=False)
                for actor in actors:
                    _kill(ray, actor)
        return done, finished

    def _begin(
        self, lent: list[tuple[Any, bool]], recipe: Callable[[], Any], finish: Callable[[Any], Any] | None, cpus: float
    ) -> list[Any]:
        """The lent actors once each has built the map's resource, before any item is handed out; a kept actor
        that died idle is replaced by a fresh one. A recipe that fails is one line, and its map's actors are
        kept (they hold nothing); any other failure kills them."""
        ray = self.ray
        actors = [actor for actor, _ in lent]
        starting = {actor.begin.remote(recipe): (actor, reused) for actor, reused in lent}
        broken: str | None = None
        try:
            while starting:
                ready, _ = ray.wait(list(starting), num_returns=1)
                for ref in ready:
                    actor, reused = starting.pop(ref)
                    try:
                        broken = ray.get(ref) or broken
                    except ray.exceptions.RayError as exc:
                        if not (reused and isinstance(exc, ray.exceptions.RayActorError)):
                            raise ExecutorError(f"a ray worker failed: {_one_line(exc)}") from None
                        fresh = _POOL.new(ray, cpus)  # it died since its last map
                        actors[actors.index(actor)] = fresh
                        starting[fresh.begin.remote(recipe)] = (fresh, False)
        except BaseException:
            for actor in actors:
                _kill(ray, actor)
            raise
        if broken is not None:
            try:  # the other actors' resources (a Chromium each) closed as after a map
                self._get([actor.close.remote(finish) for actor in actors])
            except ExecutorError:
                for actor in actors:
                    _kill(ray, actor)
            else:
                _POOL.take_back(ray, actors, cpus)
            raise ExecutorError(broken)
        return actors

    def _get(self, refs: Any) -> Any:
        try:
            return self.ray.get(refs)
        except self.ray.exceptions.RayError as exc:  # a worker died (out of memory, killed): one line
            raise ExecutorError(f"a ray worker failed: {_one_line(exc)}") from None


# -- replay -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayRecipe:
    """What a worker needs to build its Runner: the demo files (paths readable on the worker, in the
    driver's order, so session ids agree), how to read them, and the replay settings."""

    files: tuple[str, ...]
    settings: ReplaySettings
    fmt: str | None = None
    allow_pickle: bool = False

    @classmethod
    def for_workers(
        cls, files: Iterable[Path], settings: ReplaySettings, fmt: str | None = None, allow_pickle: bool = False
    ) -> ReplayRecipe:
        """The recipe with every path made absolute (demo files, a ``file.py:attr`` spec, the LLM cache folder
        and cassette): a worker's working directory need not be the driver's."""
        llm = dict(settings.llm or {})
        for key in ("cache_dir", "replay", "record"):
            if llm.get(key):
                llm[key] = str(Path(llm[key]).resolve())
        absolute = dataclasses.replace(
            settings,
            policy_spec=_absolute_spec(settings.policy_spec),
            graph_spec=_absolute_spec(settings.graph_spec),
            llm=llm or None,
        )
        return cls(tuple(str(Path(f).resolve()) for f in files), absolute, fmt, allow_pickle)

    def __call__(self) -> Runner:
        demos = open_sources(list(self.files), fmt=self.fmt, allow_pickle=self.allow_pickle)
        if demos.file_errors:
            raise ExecutorError(demos.file_errors[0])
        policy, mode = self.settings.make_policy()
        env = OfflineWebshopEnv(
            demos,
            mismatch_policy=self.settings.mismatch,
            include_item_steps=self.settings.item_steps,
            matching=self.settings.matching,
        )
        return Runner(env, policy, mode=mode)


def _absolute_spec(spec: str | None) -> str | None:
    """``file.py:attr`` with the file's absolute path; a ``module:attr`` spec as it is."""
    if spec is None:
        return None
    target, colon, attr = spec.rpartition(":") if ":" in spec else (spec, "", "")
    if not target.endswith(".py"):
        return spec
    return f"{Path(target).resolve()}{colon}{attr}"


def _close_runner(runner: Runner) -> dict[str, int] | None:
    """Close the worker's policy; its LLM request counts, when it has them, for the driver's stats line."""
    stats = getattr(runner.policy, "stats", None)
    numbers = dict(stats()) if callable(stats) else None
    close_policies(runner.policy)
    return numbers


def run_all_on_ray(
    executor: RayExecutor,
    recipe: ReplayRecipe,
    first: Runner,
    session_ids: Iterable[int] | None = None,
    *,
    on_episode: Callable[[EpisodeReport | LoadProblem], None] | None = None,
) -> tuple[SummaryReport, list[dict[str, int] | None]]:
    """:func:`replay_tui.runner.run_all_parallel` on Ray: the episodes replayed by the workers, the report made
    here by ``first`` (the driver's Runner over the same files and settings). Also returns each worker's LLM
    request counts (None for a policy without them)."""
    ids = list(session_ids) if session_ids is not None else first.env.demos.session_ids

    def finished(_session_id: int, result: EpisodeReport | LoadProblem) -> None:
        if on_episode is not None:
            on_episode(result)

    results, stats = executor.map(
        ids, recipe, replay_or_problem, cancel=first.cancel, on_result=finished, finish=_close_runner
    )
    episodes = [result for _, result in results if isinstance(result, EpisodeReport)]
    return first.summary(episodes, cancelled=first.cancel.is_set()), stats


# -- visual batch -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScorerRecipe:
    """A worker's VisualScorer: its own Chromium (kept for every pair the worker scores) and CLIP when the
    weights are readable there."""

    timeout_ms: int
    clip_weights: str | None = None
    pair_timeout_ms: int | None = None

    def __call__(self) -> VisualScorer:
        from replay_tui.visual.pipeline import VisualScorer

        clip_scorer = None
        if self.clip_weights:
            from replay_tui.visual.clip import ClipUnavailable, load_clip_scorer

            try:
                clip_scorer = load_clip_scorer(self.clip_weights)
            except ClipUnavailable:  # the driver has warned already; the final score is partial, as there
                clip_scorer = None
        return VisualScorer(
            timeout_ms=self.timeout_ms, clip_scorer=clip_scorer, pair_timeout_ms=self.pair_timeout_ms
        ).__enter__()


def _score_pair(scorer: VisualScorer, job: tuple[int, Path, Path, str]) -> PairReport:
    """The report of pair ``job`` (index, ref, pred, mode); its screenshots stay on the worker (a batch
    report does not carry them)."""
    from replay_tui.visual.report import score_and_report

    _, ref, pred, mode = job
    return score_and_report(scorer, ref, pred, mode)[0]


def _close_scorer(scorer: VisualScorer) -> None:
    scorer.close()


def score_pairs_on_ray(
    executor: RayExecutor,
    recipe: ScorerRecipe,
    pairs: Sequence[BatchPair],
    mode: str,
    *,
    cancel: threading.Event | None = None,
    on_start: Callable[[int], object] | None = None,
    on_scored: Callable[[int, PairReport], object] | None = None,
    on_error: Callable[[int, Exception], object] | None = None,
) -> None:
    """:func:`replay_tui.visual.batch.score_pairs` on Ray, with the same callbacks in pair order (``on_scored``
    without the screenshots)."""
    jobs = [(index, pair.ref, pair.pred, mode) for index, pair in enumerate(pairs)]
    executor.map(
        jobs,
        recipe,
        _score_pair,
        cancel=cancel,
        on_start=None if on_start is None else lambda job: on_start(job[0]),
        on_result=None if on_scored is None else lambda job, report: on_scored(job[0], report),
        on_error=None if on_error is None else lambda job, exc: on_error(job[0], exc),
        finish=_close_scorer,
        keep=True,  # the A/B batch's second side scores with the first's Chromium
    )
