"""Workspace: the demos, their annotations, the replay settings and the latest results.

Textual-free, so the CLI's ``export`` and the TUI build reports from the same object and the same
functions: for the same run they write the same bytes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replay_tui.annotations import AnnotationStore, data_dir, sidecar_path
from replay_tui.demos.loader import DemoSet, EpisodeRef
from replay_tui.demos.problems import EpisodeLoadError, LoadProblem
from replay_tui.env import MismatchPolicy, OfflineWebshopEnv, replay_steps
from replay_tui.matching import MatchPolicy, MatchSettings
from replay_tui.policies import policy_name
from replay_tui.policies.registry import MODES_BY_NAME, policy_mode
from replay_tui.runner import EpisodeReport, Runner, StepResult, SummaryReport, rejudge, summarize_demos
from replay_tui.sources import open_sources


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

    def describe(self) -> str:
        mode = MODES_BY_NAME.get(self.mode)
        name = self.mode if mode is None else mode.describe(self.spec(), self.llm)
        return (
            f"{name} · {self.mismatch}"
            + (" · item steps" if self.item_steps else "")
            + ("" if self.matching.is_default else f" · match {self.matching.describe()}")
        )


def default_annotations_path(demos: DemoSet) -> Path:
    """The sidecar beside the first demo file; the bundled example's lives in the user data dir."""
    from replay_tui.examples import example_path

    first = demos.files[0].path if demos.files else Path("replay-tui.json")
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


@dataclass
class Workspace:
    demos: DemoSet
    annotations: AnnotationStore
    settings: ReplaySettings = field(default_factory=ReplaySettings)
    results: dict[int, EpisodeReport] = field(default_factory=dict)
    mode_name: str = "stub"
    _rejected: tuple[int, list[LoadProblem]] | None = field(default=None, repr=False)
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
    ) -> Workspace:
        """Open demo files and the annotations sidecar (beside the first file unless given).

        With ``skip_unreadable`` a file that cannot be read is a problem (``demos.unreadable``), not an error.
        Logs of every format open (detected by content; ``fmt`` forces one, ``allow_pickle`` lets
        BrowserGym's step pickles be read by the restricted unpickler).
        """
        demos = open_sources(specs, fmt=fmt, allow_pickle=allow_pickle, skip_unreadable=skip_unreadable)
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
        env = OfflineWebshopEnv(
            self.demos,
            mismatch_policy=self.settings.mismatch,
            include_item_steps=self.settings.item_steps,
            matching=self.settings.matching,
        )
        return Runner(env, policy, mode=name, on_step=on_step, cancel=cancel)

    def record(self, report: EpisodeReport, mode: str | None = None) -> None:
        """Keep an episode's result; ``mode`` names the policy that replayed it (the runner's
        ``mode``), which :meth:`summary` reports."""
        self.results[report.session_id] = report
        if mode is not None:
            self.mode_name = mode
        self._totals = None

    def forget(self, session_id: int) -> None:
        """Drop an episode's result (it is about to be replayed again)."""
        self.results.pop(session_id, None)
        self._totals = None

    def rejudged(self, cancel: threading.Event | None = None) -> tuple[dict[int, EpisodeReport], int]:
        """The stored predictions judged again under the current matching settings (no policy call),
        and how many step verdicts changed. Matching is deterministic and cheap, so a new policy
        applies to what was already replayed. Pure: :meth:`record` the reports to keep them."""
        reports: dict[int, EpisodeReport] = {}
        changed = 0
        for session_id, report in list(self.results.items()):
            if cancel is not None and cancel.is_set():
                break
            try:
                episode = self.demos.episode(session_id)
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
        self._totals = None

    def totals(self) -> ResultTotals:
        """Counts over the results, in one pass and only after they changed (the status line asks on every
        replayed step)."""
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

    def summary(self) -> SummaryReport:
        """The latest results as one report, in demo-file order (what exports write)."""
        episodes = [self.results[sid] for sid in self.demos.session_ids if sid in self.results]
        return summarize_demos(
            episodes,
            self.demos,
            mode=self.mode_name,
            mismatch_policy=self.settings.mismatch,
            include_item_steps=self.settings.item_steps,
            case=self.settings.case,
            matching=self.settings.matching,
        )

    # -- lookups ----------------------------------------------------------------------------
    def rejected(self) -> list[LoadProblem]:
        """Problems of episodes that could not be indexed, and file-level problems (no row of their own).

        Cached until the demo set records another problem (problems are only ever appended).
        """
        count = len(self.demos.problems)
        if self._rejected is None or self._rejected[0] != count:
            usable = {(ref.file.name, ref.index) for ref in self.demos.refs}
            self._rejected = (count, [p for p in self.demos.problems if (p.file, p.index) not in usable])
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

    def ref(self, session_id: int) -> EpisodeRef:
        return self.demos.ref(session_id)
