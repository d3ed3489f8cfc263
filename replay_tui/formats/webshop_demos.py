"""The seed's WebShop demonstration files (``webshop_demonstrations_{start}-{end}.json``) as trajectories.

The demo loader (:mod:`replay_tui.demos.loader`) does the reading: lazy, tolerant, every bad
episode a LoadProblem. This reader only recognises the format and maps each episode with
:func:`replay_tui.trajectory.from_webshop_episode`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from replay_tui.demos.loader import DemoFileError, open_demos
from replay_tui.demos.problems import EpisodeLoadError, LoadProblem, unique_problems
from replay_tui.formats.base import Detection, ReadItem
from replay_tui.trajectory import from_webshop_episode

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
