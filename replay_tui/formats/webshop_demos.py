"""The seed's WebShop demonstration files (``webshop_demonstrations_{start}-{end}.json``) as trajectories.

The demo loader (:mod:`replay_tui.demos.loader`) does the reading: lazy, tolerant, every bad
episode a LoadProblem. This reader only recognises the format and maps each episode with
:func:`from_webshop_episode` (the seed's model onto the one model).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from replay_tui.demos.loader import DemoFileError, open_demos
from replay_tui.episodes.model import ChatMessage, ToolCall, Trajectory, TrajectoryStep, webshop_outcome
from replay_tui.episodes.problems import EpisodeLoadError, LoadProblem, unique_problems
from replay_tui.formats.base import Detection, ReadItem
from replay_tui.webshop import ITEM

_SESSION = re.compile(rb'"session_id"\s*:')
_STEP = re.compile(rb'"(observation_before_llm|llm_action_name|action_executed_in_env|step_number)"\s*:')


class WebshopDemosReader:
    name = "webshop-demos"
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
        try:
            demos = open_demos([path])
        except DemoFileError as exc:
            yield LoadProblem(file=path.name, message=str(exc))
            return
        for ref in demos.refs:
            try:
                yield from_webshop_episode(demos.episode(ref.session_id))
            except EpisodeLoadError:
                continue  # recorded in demos.problems, yielded below with the indexing problems
        yield from unique_problems(demos.problems)


READER = WebshopDemosReader()


_DECISION_FIELDS = frozenset(
    {
        "step_number",
        "observation_before_llm",
        "llm_prompt",
        "llm_thinking",
        "llm_action_name",
        "llm_action_arguments",
        "state",
        "available_actions",
        "action_executed_in_env",
        "observation_after_action",
        "reward",
        "done",
    }
)
"""A decision step's fields with a place of their own in a :class:`TrajectoryStep`."""
_ITEM_FIELDS = frozenset(
    {"llm_action", "observation_before_action", "available_options", "observation_after_action", "reward", "done"}
)
"""An item-page action's fields with a place of their own (``type`` and any others stay in ``extra``)."""


def from_webshop_episode(episode: Any) -> Trajectory:
    """The seed's WebShop episode (:class:`replay_tui.demos.models.Episode`) as a Trajectory.

    Decision steps become ``decision`` steps (their prompt parsed into messages when it parses,
    the page after the action as ``tool_result``); item-page actions ``item`` steps labelled as a
    replay labels them (``3.1``, ``3.2``... after decision 3); the other sub-events (detail
    exploration, the backup agent...) and an item-page action whose call maps to no env action
    ``event`` steps with the event verbatim in ``extra``; fields without a place of their own, the
    step's and the episode's, in ``extra``.
    """
    from replay_tui.demos.models import DecisionStep, ItemPageAction, PromptError

    steps: list[TrajectoryStep] = []
    last_number, items = 0, 0
    for entry in episode.trajectory:
        if isinstance(entry, DecisionStep):
            last_number, items = entry.step_number, 0
            steps.append(_decision(entry, len(steps), PromptError))
            continue
        dumped = entry.model_dump(mode="json") if isinstance(entry, BaseModel) else dict(entry)
        action = entry.action if isinstance(entry, ItemPageAction) else None
        if isinstance(entry, ItemPageAction) and action is not None:
            items += 1
            steps.append(
                TrajectoryStep(
                    index=len(steps),
                    label=f"{max(last_number, 0)}.{items}",
                    observation=entry.observation_before_action,
                    action=ToolCall(name=entry.llm_action.name, arguments=dict(entry.llm_action.arguments)),
                    action_text=action,
                    tool_result=entry.observation_after_action,
                    reward=entry.reward,
                    done=entry.done,
                    state=ITEM,
                    available_actions=entry.available_options,
                    extra={key: value for key, value in dumped.items() if key not in _ITEM_FIELDS},
                    kind="item",
                )
            )
            continue
        steps.append(TrajectoryStep(index=len(steps), label=f"{max(last_number, 0)}.-", extra=dumped, kind="event"))
    extra = {key: value for key, value in episode.model_dump(mode="json").items() if key not in ("trajectory",)}
    return Trajectory(
        id=str(episode.session_id),
        format="webshop-demos",
        task=episode.instruction,
        steps=steps,
        outcome=webshop_outcome(episode.reward, episode.succeeded, episode.completed_by_backup, episode.trajectory),
        extra=extra,
    )


def _decision(entry: Any, index: int, prompt_error: type[Exception]) -> TrajectoryStep:
    """A seed decision step (:class:`replay_tui.demos.models.DecisionStep`) as a ``decision`` step."""
    try:
        messages = [ChatMessage(role=m.role, content=m.content) for m in entry.prompt_messages()]
    except prompt_error:
        messages = []
    data = entry.model_dump(mode="json")
    extra = {key: value for key, value in data.items() if key not in _DECISION_FIELDS}
    extra["llm_prompt"] = entry.llm_prompt
    return TrajectoryStep(
        index=index,
        label=str(entry.step_number),
        observation=entry.observation_before_llm,
        messages=messages,
        thinking=entry.llm_thinking or "",
        action=ToolCall(name=entry.llm_action_name or "", arguments=dict(entry.llm_action_arguments or {})),
        action_text=entry.expected_action,
        tool_result=entry.observation_after_action,
        reward=entry.reward,
        done=entry.done,
        state=entry.state,
        available_actions=entry.available_actions,
        extra=extra,
        kind="decision",
    )
