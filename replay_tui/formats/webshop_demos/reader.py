"""The seed's WebShop demonstration files (``webshop_demonstrations_{start}-{end}.json``) as trajectories.

The demo loader (:mod:`.index`) does the reading: lazy, tolerant, every bad episode a LoadProblem.
This reader recognises the format, lists the loader's index (:meth:`WebshopDemosReader.index`: no
episode parsed) and maps each episode onto the one model: a clean episode from the replay's fast
reading (:func:`.fast.fast_trajectory`), any other from its parsed model
(:func:`.trajectory.from_webshop_episode`), one Trajectory either way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from replay_tui.episodes.collection import EpisodeSet
from replay_tui.episodes.model import ToolCall, Trajectory, TrajectoryStep
from replay_tui.episodes.problems import DemoFileError, EpisodeLoadError, LoadProblem, unique_problems
from replay_tui.formats.base import Detection, EpisodeSummary, ReadItem
from replay_tui.formats.webshop_demos.index import FORMAT, open_demos
from replay_tui.formats.webshop_demos.trajectory import from_webshop_episode as from_webshop_episode

_SESSION = re.compile(rb'"session_id"\s*:')
_STEP = re.compile(rb'"(observation_before_llm|llm_action_name|action_executed_in_env|step_number)"\s*:')


class WebshopDemosReader:
    name = FORMAT
    label = "WebShop demonstration files"
    description = (
        "observation = observation_before_llm, prompt = llm_prompt (parsed), thinking = llm_thinking, "
        "action = llm_action_name + llm_action_arguments (action_executed_in_env as its text)"
    )

    def sniff(self, path: Path, head: bytes) -> Detection:
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text[:1] not in (b"[", b"{"):
            return Detection.no("not JSON")
        if not _SESSION.search(head):
            return Detection.no("no session_id field in the first records")
        if not _STEP.search(head):
            return Detection(0.3, "session_id but no decision-step fields in the first records")
        return Detection.yes("episodes with session_id and decision steps (observation_before_llm, llm_action_name)")

    def read(self, path: Path) -> Iterator[ReadItem]:
        demos = _opened(path)
        if isinstance(demos, LoadProblem):
            yield demos
            return
        for ref in demos.refs:
            try:
                yield _trajectory(demos, ref.session_id)
            except EpisodeLoadError:
                continue  # recorded in demos.problems, yielded below with the indexing problems
        yield from unique_problems(demos.problems)

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every episode's summary from the loader's index (the summary its ref holds: its header
        and step counts, no episode parsed), then the file's problems; a summary's locator is the
        opened set and the session id, so :meth:`load` reads the episode from the same index."""
        demos = _opened(path)
        if isinstance(demos, LoadProblem):
            yield demos
            return
        for ref in demos.refs:
            yield replace(ref.summary, locator=(demos, ref.session_id))
        yield from unique_problems(demos.problems)

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        demos, session_id = summary.locator
        try:
            return _trajectory(demos, session_id)
        except EpisodeLoadError as exc:
            return exc.problem


def _opened(path: Path) -> EpisodeSet | LoadProblem:
    """The file's index (episodes found, none parsed), or the one problem that keeps it from opening."""
    try:
        return open_demos([path])
    except DemoFileError as exc:
        return LoadProblem(file=path.name, message=str(exc))


def _trajectory(demos: EpisodeSet, session_id: int) -> Trajectory:
    """The episode as a Trajectory (:meth:`EpisodeSet.trajectory`: from the replay's fast reading when it
    is clean, else from its parsed model, its invalid fields recorded in the set's problems). Raises
    EpisodeLoadError naming the episode's problem."""
    return demos.trajectory(session_id)


READER = WebshopDemosReader()


class SeedStep:
    """A webshop-demos Trajectory's decision or item step as a replay reads it: the step, and (for a
    decision) the recorded step in the shape the seed's policies always received."""

    __slots__ = ("_fields", "step")

    def __init__(self, step: TrajectoryStep) -> None:
        self.step = step
        self._fields: dict[str, Any] | None = None

    @property
    def fields(self) -> dict[str, Any]:
        """The recorded step (:func:`recorded_step`; none for an item step), made on first use: a
        stub replay reads a step's call, not its whole dump."""
        if self._fields is None:
            self._fields = recorded_step(self.step) if self.step.kind == "decision" else {}
        return self._fields

    def call_fields(self) -> tuple[bool, str | None, list[Any]]:
        """(judged as a tool call, its label, the tool schemas): a seed decision step may carry
        ``tool_call``/``step_label``/``tools`` as fields of its own (the contract keeps unknown
        fields, here in ``extra``) and is judged as a tool call then."""
        extra = self.step.extra
        if self.step.kind != "decision" or not extra.get("tool_call"):
            return False, None, []
        label, tools = extra.get("step_label"), extra.get("tools")
        return True, label if isinstance(label, str) else None, tools if isinstance(tools, list) else []

    @property
    def llm_prompt(self) -> str | None:
        """The recorded prompt text, verbatim (the seed's ``llm_prompt``)."""
        return self.step.prompt_text

    @property
    def llm_action_name(self) -> str:
        return self.step.action.name if self.step.action is not None else ""

    @property
    def llm_action_arguments(self) -> dict[str, Any]:
        return self.step.action.arguments if self.step.action is not None else {}

    @property
    def llm_action(self) -> ToolCall:
        """An item-page action's call (name and arguments, as ``ItemPageAction.llm_action``)."""
        return self.step.action if self.step.action is not None else ToolCall(name="")


def recorded_step(step: TrajectoryStep) -> dict[str, Any]:
    """A seed decision step (a ``decision`` step of a webshop-demos Trajectory) in the shape of
    ``DecisionStep.model_dump()``: the contract's fields in its order, then the step's own extra
    fields in the file's order: what a policy receives as ``recorded_step``."""
    data: dict[str, Any] = {
        "step_number": int(step.label),
        "observation_before_llm": step.observation,
        "llm_prompt": step.prompt_text,
        "llm_thinking": step.thinking or None,
        "llm_action_name": step.action.name if step.action is not None else "",
        "llm_action_arguments": dict(step.action.arguments) if step.action is not None else {},
        "state": step.state,
        "available_actions": None if step.available_actions is None else list(step.available_actions),
        "action_executed_in_env": step.action_text,
        "observation_after_action": step.tool_result or "",
        "reward": step.reward if step.reward is not None else 0.0,
        "done": step.done,
    }
    data.update(step.extra)
    return data


def is_seed(trajectory: Trajectory) -> bool:
    """True for a seed demo file's episode: its steps are shown and searched as the seed's entries
    (its prompt text whole, its sub-events by their ``type``)."""
    return trajectory.format == READER.name


def completed_by_backup(trajectory: Trajectory) -> bool:
    """True when the seed's backup agent had to finish the episode."""
    return bool(trajectory.extra.get("completed_by_backup")) if is_seed(trajectory) else False
