"""Workspace: the demos, their annotations, the replay settings and the latest results.

Textual-free, so the CLI's ``export`` and the TUI build reports from the same object and the same
functions: for the same run they write the same bytes. The results the app shows are saved as a run
(:mod:`replay_tui.runs`): the workspace's :class:`SessionRun` collects the episodes replayed under the
current settings, and :meth:`Workspace.adopt_run` shows a saved run's verdicts again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay_tui.annotations import AnnotationStore, data_dir, sidecar_path
from replay_tui.env import MismatchPolicy, OfflineWebshopEnv, replay_steps
from replay_tui.episodes.collection import EpisodeRef, EpisodeSet
from replay_tui.episodes.problems import EpisodeLoadError, LoadProblem
from replay_tui.matching import MatchPolicy, MatchSettings
from replay_tui.policies import policy_name
from replay_tui.policies.registry import MODES_BY_NAME, policy_mode
from replay_tui.runs import RunInfo, RunStore, demo_files_info, utc_now
from replay_tui.sources import open_sources

if TYPE_CHECKING:  # the runner is imported by the first replay, not by opening the logs
    from replay_tui.runner import EpisodeReport, Runner, StepResult, SummaryReport


@dataclass
class ReplaySettings:
    """Which policy drives a replay and how mismatches and item steps are handled."""

    mode: str = "stub"
    """``stub``, ``heuristic``, ``llm``, ``langgraph`` (the ``graph_spec``) or ``custom`` (the ``policy_spec``)."""
    policy_spec: str | None = None
    mismatch: MismatchPolicy = "stop"
    item_steps: bool = False
    matching: MatchSettings = field(default_factory=MatchSettings)
    """Which matching policy judges each state's steps (:mod:`replay_tui.matching`)."""
    llm: dict[str, Any] | None = None
    """LLM settings for ``llm`` and ``langgraph`` modes: the fields of
    :class:`replay_tui.policies.llm.LlmSettings` (``model``, ``base_url``, ``temperature``, ``seed``,
    ``timeout``, ``retries``, ``cache``, ``cache_dir``, ``record``, ``replay``...)."""
    graph_spec: str | None = None
    """``module:attr`` or ``file.py:attr`` of a compiled LangGraph graph or a factory for one."""

    def make_policy(self) -> tuple[Any, str]:
        """Build the policy; returns it with the name reports use.

        Raises PolicyLoadError or ValueError (LlmConfigError) with a one-line message.
        """
        mode = policy_mode(self.mode)
        policy = mode.make(self.spec(), self.llm)
        return policy, policy_name(policy)

    def make_runner(
        self,
        demos: EpisodeSet,
        policy: Any,
        mode: str,
        *,
        on_step: Callable[[StepResult], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Runner:
        """A Runner of ``policy`` (named ``mode``) over ``demos`` with these settings' mismatch policy, item
        steps and matching."""
        env = OfflineWebshopEnv(
            demos, mismatch_policy=self.mismatch, include_item_steps=self.item_steps, matching=self.matching
        )
        from replay_tui.runner import Runner

        return Runner(env, policy, mode=mode, on_step=on_step, cancel=cancel)

    def spec(self) -> str | None:
        """The spec the mode loads: the graph spec (langgraph), the policy spec (custom) or None."""
        mode = MODES_BY_NAME.get(self.mode)
        if mode is None or mode.spec is None:
            return None
        return self.graph_spec if mode.spec == "graph" else self.policy_spec

    @property
    def case(self) -> MatchPolicy:
        """The default matching policy (the earlier name of the setting)."""
        return self.matching.default

    def run_fields(self) -> dict[str, Any]:
        """The settings a run records (:class:`replay_tui.runs.RunInfo`): the policy (the mode's name, or
        its spec for ``custom`` and ``langgraph``), the model, temperature and seed of the LLM modes,
        the matching, the mismatch policy and item steps."""
        mode = MODES_BY_NAME.get(self.mode)
        policy = self.mode
        model = temperature = seed = None
        if mode is not None:
            if mode.spec is not None:
                policy = mode.describe(self.spec(), self.llm)
            if mode.needs_llm:
                llm = self.llm or {}
                model = llm.get("model") or None
                temperature = llm.get("temperature", 0.0 if mode.name == "llm" else None)
                seed = llm.get("seed")
        return {
            "policy": policy,
            "model": model,
            "temperature": temperature,
            "seed": seed,
            "matching": self.matching,
            "mismatch_policy": self.mismatch,
            "item_steps": self.item_steps,
        }

    def run_key(self) -> tuple[Any, ...]:
        """:meth:`RunInfo.settings_key` of a run made with these settings."""
        return RunInfo.new(**self.run_fields()).settings_key()

    def describe(self) -> str:
        mode = MODES_BY_NAME.get(self.mode)
        name = self.mode if mode is None else mode.describe(self.spec(), self.llm)
        return (
            f"{name} · {self.mismatch}"
            + (" · item steps" if self.item_steps else "")
            + ("" if self.matching.is_default else f" · match {self.matching.describe()}")
        )


def make_run_info(
    settings: ReplaySettings,
    demo_paths: Sequence[str | os.PathLike[str]],
    *,
    sessions: str | Sequence[int] = "all",
    complete: bool = True,
    run_id: str | None = None,
    created: datetime | None = None,
    name: str | None = None,
) -> RunInfo:
    """The record of a run of ``settings`` over these demo files. Hashes the files (once per process and
    file version): call it off the UI thread. Raises OSError when a file cannot be read."""
    info = RunInfo.new(
        **settings.run_fields(),
        demo_files=demo_files_info(demo_paths),
        sessions="all" if sessions == "all" else [int(s) for s in sessions],
        complete=complete,
        moment=created,
        name=name,
    )
    if run_id is not None:
        info = info.model_copy(update={"id": run_id, "name": name or run_id})
    return info


@dataclass
class SessionRun:
    """The run the app adds to: the episodes replayed (or carried over) under the current settings.

    Its id and time are fixed when it is first saved; every later save rewrites the same run file."""

    episodes: set[int] = field(default_factory=set)
    run_id: str | None = None
    created: datetime | None = None
    name: str | None = None


@dataclass(frozen=True)
class RunSnapshot:
    """What a save of the session run writes, taken on the UI thread; :meth:`save` may run on another."""

    summary: SummaryReport
    settings: ReplaySettings
    demo_paths: tuple[Path, ...]
    sessions: str | tuple[int, ...]
    complete: bool
    run_id: str
    created: datetime
    name: str | None = None

    def info(self) -> RunInfo:
        return make_run_info(
            self.settings,
            self.demo_paths,
            sessions=self.sessions,
            complete=self.complete,
            run_id=self.run_id,
            created=self.created,
            name=self.name,
        )

    def save(self, store: RunStore) -> tuple[Path, RunInfo]:
        info = self.info()
        return store.save(self.summary, info), info


def default_annotations_path(demos: EpisodeSet) -> Path:
    """The sidecar beside the first demo file; the bundled example's lives in the user data dir."""

    return annotations_path_for(demos.files[0].path if demos.files else None)


def annotations_path_for(first: Path | None) -> Path:
    """:func:`default_annotations_path` of demo files whose first is ``first``, before they are opened."""
    from replay_tui.examples import example_path

    first = first if first is not None else Path("replay-tui.json")
    if first.resolve() == example_path().resolve():
        return data_dir() / "annotations" / (first.stem + ".annotations.json")
    return sidecar_path(first)


@dataclass(frozen=True)
class ResultTotals:
    episodes: int
    mismatched: int  # episodes with at least one mismatch
    steps: int
    matched: int  # steps
    equivalent: int = 0  # steps whose difference the matching policy tolerated

    def plus(self, report: EpisodeReport, sign: int = 1) -> ResultTotals:
        """These totals with ``report`` added (``sign`` -1: taken away)."""
        return ResultTotals(
            episodes=self.episodes + sign,
            mismatched=self.mismatched + (0 if report.matched else sign),
            steps=self.steps + sign * report.steps_total,
            matched=self.matched + sign * report.steps_matched,
            equivalent=self.equivalent + sign * report.steps_equivalent,
        )


@dataclass(frozen=True)
class ShownRun:
    """The settings of a saved run whose results are shown while the replay settings are others:
    what the status line and the exports name, until the next replay records a result."""

    policy: str
    mismatch_policy: str
    include_item_steps: bool
    matching: MatchSettings

    @classmethod
    def of(cls, summary: SummaryReport, info: RunInfo) -> ShownRun:
        policy = info.policy + (f" · {info.model}" if info.model else "")
        return cls(policy, summary.mismatch_policy, summary.include_item_steps, summary.matching_settings)

    def describe(self) -> str:
        """As :meth:`ReplaySettings.describe` words the current settings."""
        return (
            f"{self.policy} · {self.mismatch_policy}"
            + (" · item steps" if self.include_item_steps else "")
            + ("" if self.matching.is_default else f" · match {self.matching.describe()}")
        )


@dataclass
class Workspace:
    demos: EpisodeSet
    annotations: AnnotationStore
    settings: ReplaySettings = field(default_factory=ReplaySettings)
    results: dict[int, EpisodeReport] = field(default_factory=dict)
    mode_name: str = "stub"
    session_run: SessionRun = field(default_factory=SessionRun)
    shown_run: ShownRun | None = None
    """The loaded run's own settings, when the results shown are its and they are not the current ones."""
    _rejected: tuple[tuple[int, int], list[LoadProblem]] | None = field(default=None, repr=False)
    _usable: tuple[int, set[tuple[str, int]]] | None = field(default=None, repr=False)
    """(how many refs, their (file, index) pairs): built once, not again each time a problem is found."""
    _totals: ResultTotals | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        specs: Sequence[str | os.PathLike[str]],
        *,
        annotations_path: str | os.PathLike[str] | None = None,
        labels: Iterable[str] | None = None,
        settings: ReplaySettings | None = None,
        skip_unreadable: bool = False,
        fmt: str | None = None,
        allow_pickle: bool = False,
        defer_scan: bool = False,
        follow: bool = False,
        progressive: bool = False,
    ) -> Workspace:
        """Open demo files and the annotations sidecar (beside the first file unless given).

        With ``skip_unreadable`` a file that cannot be read is a problem (``demos.unreadable``), not an error.
        Logs of every format open (detected by content; ``fmt`` forces one, ``allow_pickle`` lets
        BrowserGym's step pickles be read by the restricted unpickler). ``progressive``: a big log
        opens with its first rows, the rest of its index follows (see :func:`open_sources`).
        """
        demos = open_sources(
            specs,
            fmt=fmt,
            allow_pickle=allow_pickle,
            skip_unreadable=skip_unreadable,
            defer_scan=defer_scan,
            follow=follow,
            progressive=progressive,
        )
        if annotations_path is None:
            annotations_path = default_annotations_path(demos)
        store = AnnotationStore.load(annotations_path, labels)
        return cls(demos=demos, annotations=store, settings=settings or ReplaySettings())

    # -- replay -----------------------------------------------------------------------------
    def make_runner(
        self, *, on_step: Callable[[StepResult], None] | None = None, cancel: threading.Event | None = None
    ) -> Runner:
        """A Runner with the settings' policy. Its ``mode`` is the name reports use: pass it to
        :meth:`record` with the results (a replay worker only builds the runner, the App records)."""
        policy, name = self.settings.make_policy()
        return self.settings.make_runner(self.demos, policy, name, on_step=on_step, cancel=cancel)

    def record(self, report: EpisodeReport, mode: str | None = None, *, in_run: bool = True) -> None:
        """Keep an episode's result; ``mode`` names the policy that replayed it (the runner's
        ``mode``), which :meth:`summary` reports. ``in_run``: the result belongs to the session run
        (False for a result judged again, which stays in the run only if it already was). The totals
        follow in constant time (a replay records thousands of episodes, the status line shows them)."""
        previous = self.results.get(report.session_id)
        self.results[report.session_id] = report
        if in_run:
            self.session_run.episodes.add(report.session_id)
            self.shown_run = None  # a result of the current settings: they are what is shown now
        if mode is not None:
            self.mode_name = mode
        if self._totals is not None:
            self._totals = (self._totals if previous is None else self._totals.plus(previous, -1)).plus(report)

    def forget(self, session_id: int) -> None:
        """Drop an episode's result (it is about to be replayed again)."""
        previous = self.results.pop(session_id, None)
        self.session_run.episodes.discard(session_id)
        if self._totals is not None and previous is not None:
            self._totals = self._totals.plus(previous, -1)

    def rejudged(self, cancel: threading.Event | None = None) -> tuple[dict[int, EpisodeReport], int]:
        """The stored predictions judged again under the current matching settings (no policy call),
        and how many step verdicts changed. Matching is deterministic and cheap, so a new policy
        applies to what was already replayed. Pure: :meth:`record` the reports to keep them."""
        from replay_tui.runner import rejudge

        reports: dict[int, EpisodeReport] = {}
        changed = 0
        for session_id, report in list(self.results.items()):
            if cancel is not None and cancel.is_set():
                break
            try:
                episode = self.demos.trajectory(session_id)
            except EpisodeLoadError:
                continue
            steps = replay_steps(episode, include_item_steps=True)
            observations = {s.label: s.observation for s in steps}
            calls = {s.label: s.schema for s in steps if s.call}
            new = rejudge(report, self.settings.matching, observations, calls=calls)
            changed += sum(a.verdict != b.verdict for a, b in zip(report.steps, new.steps, strict=True))
            reports[session_id] = new
        return reports, changed

    def clear_results(self) -> None:
        self.results.clear()
        self.session_run.episodes.clear()
        self._totals = None

    def totals(self) -> ResultTotals:
        """Counts over the results: one pass after they were replaced, then kept up to date by
        :meth:`record` and :meth:`forget`."""
        if self._totals is None:
            results = self.results.values()
            self._totals = ResultTotals(
                episodes=len(self.results),
                mismatched=sum(1 for r in results if not r.matched),
                steps=sum(r.steps_total for r in results),
                matched=sum(r.steps_matched for r in results),
                equivalent=sum(r.steps_equivalent for r in results),
            )
        return self._totals

    def summary(self, session_ids: Collection[int] | None = None) -> SummaryReport:
        """The latest results (of ``session_ids`` only, when given) as one report, in demo-file order
        (what exports write)."""
        from replay_tui.runner import summarize_demos

        episodes = [
            self.results[sid]
            for sid in self.demos.session_ids
            if sid in self.results and (session_ids is None or sid in session_ids)
        ]
        shown = self.shown_run
        matching = self.settings.matching if shown is None else shown.matching
        return summarize_demos(
            episodes,
            self.demos,
            mode=self.mode_name,
            mismatch_policy=self.settings.mismatch if shown is None else shown.mismatch_policy,
            include_item_steps=self.settings.item_steps if shown is None else shown.include_item_steps,
            case=matching.default,
            matching=matching,
        )

    # -- runs -------------------------------------------------------------------------------
    @property
    def demo_paths(self) -> list[Path]:
        """The files (and experiment folders) that opened, in order: what a run's record names."""
        return [demo.path for demo in self.demos.files]

    def new_session_run(self, *, carry: bool = False) -> None:
        """Start another run (the settings changed); ``carry`` keeps its episodes (their results were
        judged again under the new settings)."""
        self.session_run = SessionRun(episodes=set(self.session_run.episodes) if carry else set())

    def session_snapshot(self, *, complete: bool = True) -> RunSnapshot | None:
        """The session run as it is now, to save (None when it holds no episode). Fixes its id on first use."""
        run = self.session_run
        episodes = {sid for sid in run.episodes if sid in self.results}
        if not episodes:
            return None
        if run.run_id is None:
            run.created = utc_now()
            run.run_id = RunInfo.new(**self.settings.run_fields(), moment=run.created).id
        assert run.created is not None
        every = set(self.demos.session_ids)
        return RunSnapshot(
            summary=self.summary(episodes),
            settings=replace(self.settings),
            demo_paths=tuple(self.demo_paths),
            sessions="all" if episodes >= every else tuple(sorted(episodes)),
            complete=complete,
            run_id=run.run_id,
            created=run.created,
            name=run.name,
        )

    def adopt_run(self, summary: SummaryReport, info: RunInfo) -> int:
        """Show a saved run: its episodes' results replace the current ones (episodes not in these files
        are left out). A new session run begins, holding them when the run's settings are the current
        ones (so replaying more adds to them). Returns how many episodes were taken."""
        results = {report.session_id: report for report in summary.episodes if report.session_id in self.demos}
        self.results = results
        self.mode_name = summary.mode
        self._totals = None
        self.session_run = SessionRun()
        self.shown_run = None
        if info.settings_key() == self.settings.run_key():
            self.session_run.episodes = set(results)
        else:
            self.shown_run = ShownRun.of(summary, info)
        return len(results)

    # -- lookups ----------------------------------------------------------------------------
    def rejected(self) -> list[LoadProblem]:
        """Problems of episodes that could not be indexed, and file-level problems (no row of their own).

        Cached until the demo set records another problem or drops one (a followed log's problem
        that is no longer true: :attr:`EpisodeSet.problems_dropped`).
        """
        count = len(self.demos.problems)
        key = (count, self.demos.problems_dropped)
        if self._rejected is None or self._rejected[0] != key:
            if not count:  # the usual case: no set of every episode to build (40k of them a GB)
                self._rejected = (key, [])
            else:
                refs = self.demos.refs
                if self._usable is None or self._usable[0] != len(refs):
                    self._usable = (len(refs), {(ref.file.name, ref.index) for ref in refs})
                usable = self._usable[1]
                self._rejected = (key, [p for p in self.demos.problems if (p.file, p.index) not in usable])
        return self._rejected[1]

    def problem_count(self) -> int:
        """Rejected episodes and file errors, plus indexed episodes found malformed when opened."""
        opened_bad = sum(
            1
            for p in self.demos.problems
            if p.index is not None
            and isinstance(p.session_id, int)
            and p.session_id in self.demos
            and self.demos.problem_for(p.session_id) is p
        )
        return len(self.rejected()) + opened_bad

    def field_warning_count(self) -> int:
        """Invalid fields read as their defaults (their episodes stay usable), found so far."""
        return sum(1 for p in self.demos.problems if p.severity == "warning")

    def ref(self, session_id: int) -> EpisodeRef:
        return self.demos.ref(session_id)
