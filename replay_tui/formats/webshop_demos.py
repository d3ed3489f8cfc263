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


def from_webshop_episode(episode: Any) -> Trajectory:
    """The seed's WebShop episode (:class:`replay_tui.demos.models.Episode`) as a Trajectory.

    Decision steps become steps (their prompt parsed into messages when it parses); sub-events
    (item-page actions, detail exploration, backup agent...) are kept verbatim in the step they
    follow (``extra["sub_events"]``), the episode's own extra fields in ``extra``.
    """
    from replay_tui.demos.models import DecisionStep, PromptError

    steps: list[TrajectoryStep] = []
    leading: list[dict[str, Any]] = []
    for entry in episode.trajectory:
        if not isinstance(entry, DecisionStep):
            dumped = entry.model_dump(mode="json") if isinstance(entry, BaseModel) else entry
            (steps[-1].extra.setdefault("sub_events", []) if steps else leading).append(dumped)
            continue
        try:
            messages = [ChatMessage(role=m.role, content=m.content) for m in entry.prompt_messages()]
        except PromptError:
            messages = []
        known = {
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
        data = entry.model_dump(mode="json")
        extra = {key: value for key, value in data.items() if key not in known}
        extra.update(
            available_actions=entry.available_actions,
            observation_after_action=entry.observation_after_action,
            llm_prompt=entry.llm_prompt,
        )
        steps.append(
            TrajectoryStep(
                index=len(steps),
                label=str(entry.step_number),
                observation=entry.observation_before_llm,
                messages=messages,
                thinking=entry.llm_thinking or "",
                action=ToolCall(name=entry.llm_action_name or "", arguments=dict(entry.llm_action_arguments or {})),
                action_text=entry.expected_action,
                reward=entry.reward,
                done=entry.done,
                state=entry.state,
                extra=extra,
                kind="decision",
            )
        )
    extra = {key: value for key, value in episode.model_dump(mode="json").items() if key not in ("trajectory",)}
    if leading:
        extra["leading_sub_events"] = leading
    return Trajectory(
        id=str(episode.session_id),
        format="webshop-demos",
        task=episode.instruction,
        steps=steps,
        outcome=webshop_outcome(episode.reward, episode.succeeded, episode.completed_by_backup, episode.trajectory),
        extra=extra,
    )
