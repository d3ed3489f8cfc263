"""A seed demo file yields one Trajectory however it is read (issue 29): the webshop-demos reader
(``replay-tui formats``), the app (the parsed episode) and the replay's fast reading
(:func:`replay_tui.formats.webshop_demos.fast.fast_trajectory`, built without validation) give equal Trajectories,
and the views read that one (:func:`replay_tui.sources.trajectory_of`, :func:`~replay_tui.sources.read_trajectory`)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from replay_tui.formats import reader_for
from replay_tui.formats.webshop_demos import from_webshop_episode, synth
from replay_tui.formats.webshop_demos.fast import PromptMessages, fast_trajectory
from replay_tui.formats.webshop_demos.index import DemoFile
from replay_tui.sources import open_sources, read_trajectory, trajectory_of
from tests.hostile import CASES, write_corpus

EXAMPLE = Path(__file__).resolve().parents[3] / "replay_tui" / "examples" / "webshop_demonstrations_0-99.json"


def compare_file(path: Path) -> int:
    """How many episodes of ``path`` read fast; asserts the three readings give one Trajectory."""
    by_reader = {t.id: t for t in reader_for("webshop-demos").read(path) if not hasattr(t, "message")}
    demos = open_sources([path])  # what the app and the CLI open
    fast_count = 0
    for demo in demos.files:
        assert isinstance(demo, DemoFile)
        for ref in demo.episodes:
            fast = demo.read_fast(ref)
            if fast is None:
                continue
            fast_count += 1
            ours = fast_trajectory(fast)
            theirs = from_webshop_episode(demos.episode(ref.session_id))
            assert ours == theirs, (path.name, ref.index)
            assert ours.model_dump() == theirs.model_dump() == by_reader[ours.id].model_dump(), (path.name, ref.index)
            assert [s.kind for s in ours.steps] == [s.kind for s in theirs.steps]
            # what the views read (the stepper, search, the MCP server): the same Trajectory
            assert trajectory_of(demos, ref.session_id).model_dump() == theirs.model_dump(), (path.name, ref.index)
            assert read_trajectory(ref).model_dump() == theirs.model_dump(), (path.name, ref.index)
    return fast_count


def test_the_bundled_example_is_one_trajectory_read_any_way() -> None:
    assert compare_file(EXAMPLE) >= 85


@pytest.mark.parametrize("quirk_rate", [0.0, 0.6])
def test_synthetic_files_are_one_trajectory_read_any_way(tmp_path: Path, quirk_rate: float) -> None:
    path = tmp_path / "synth.json"
    synth.write_demo_file(path, start=0, count=120, seed=11, quirk_rate=quirk_rate)
    assert compare_file(path) > 0


def test_every_hostile_case_read_fast_is_the_reader_s_trajectory(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path)
    checked = 0
    for case in CASES:
        try:
            checked += compare_file(paths[case.name])
        except Exception as exc:  # a file that cannot be opened at all has nothing to read fast
            assert type(exc).__name__ == "DemoFileError", (case.name, exc)
    assert checked > 20


def test_a_prompt_is_parsed_when_read_and_a_bad_one_is_no_message() -> None:
    prompt = PromptMessages("[{'role': 'system', 'content': 'be brief'}, {'role': 'user', 'content': 'hi'}]")
    assert prompt._messages is None  # nothing parsed until read
    assert [m.role for m in prompt] == ["system", "user"] and prompt[1].content == "hi" and len(prompt) == 2
    assert PromptMessages("[{'role': ") == [] and PromptMessages(None) == []
    assert pickle.loads(pickle.dumps(prompt)) == prompt


def test_sub_events_and_prompts_are_typed_fields_read_any_way(tmp_path: Path) -> None:
    """What the views show of a seed step lives in typed fields (issue 29), the same from the fast
    reading and the parsed episode: a sub-event's ``event`` (its type; a nameless one ``UnknownEvent``),
    its most informative page as its observation and the env action it recorded as its action text;
    an item-page action's pages before and after; a decision's prompt text verbatim in
    ``prompt_text``, not in ``extra``."""
    path = tmp_path / "events.json"
    page = {"observation_before_action": "before", "observation_after_action": "after"}
    entries = [
        {
            "step_number": 1,
            "observation_before_llm": "search page",
            "llm_prompt": "[{'role': 'user', 'content': 'find shoes'}]",
            "llm_action_name": "search",
            "llm_action_arguments": {"query": "shoes"},
            "action_executed_in_env": "search[shoes]",
        },
        {"type": "detail_exploration", "action": "click[description]", "observation": "the description"},
        {"type": "item_page_action", "llm_action": {"name": "noop", "arguments": {}}, **page},
        {"observation": "no type"},
    ]
    episode = {"session_id": 5, "instruction": "buy shoes", "trajectory": entries}
    path.write_text(json.dumps([episode]))
    demos = open_sources([path])
    fast = [demo.read_fast(ref) for demo in demos.files for ref in demo.episodes]
    readings = [from_webshop_episode(demos.episode(5))] + [fast_trajectory(f) for f in fast if f is not None]
    assert len(readings) == 2  # the episode is clean: the replay reads it fast
    for trajectory in readings:
        decision, detail, unmapped, nameless = trajectory.steps
        assert decision.prompt_text == entries[0]["llm_prompt"] and "llm_prompt" not in decision.extra
        assert [m.content for m in decision.messages] == ["find shoes"]
        assert (detail.kind, detail.event, detail.observation) == ("event", "detail_exploration", "the description")
        assert detail.action_text == "click[description]" and detail.extra["type"] == "detail_exploration"
        assert (unmapped.event, unmapped.observation, unmapped.tool_result) == ("item_page_action", "before", "after")
        assert unmapped.action_text == ""  # its call maps to no env action
        assert (nameless.event, nameless.observation) == ("UnknownEvent", "no type")
