"""The general episode model: the seed's WebShop episodes map onto it without loss."""

from __future__ import annotations

import json
import re

import pytest

from replay_tui.episodes.model import ToolCall, Trajectory, TrajectoryStep
from replay_tui.examples import example_path
from replay_tui.formats import FormatError, detect, reader_for
from replay_tui.formats.webshop_demos import from_webshop_episode
from replay_tui.formats.webshop_demos.index import open_demos
from replay_tui.sources import outcome_of


@pytest.fixture(scope="module")
def demos():
    return open_demos([str(example_path())])


def test_every_decision_step_maps_with_its_recorded_call(demos) -> None:
    for session_id in demos.session_ids[:30]:
        episode = demos.episode(session_id)
        trajectory = from_webshop_episode(episode)
        assert trajectory.id == str(session_id) and trajectory.task == episode.instruction
        decisions = [s for s in trajectory.steps if s.kind == "decision"]
        assert [s.label for s in decisions] == [str(d.step_number) for d in episode.decision_steps]
        for step, decision in zip(decisions, episode.decision_steps, strict=True):
            assert step.observation == decision.observation_before_llm
            assert step.action_text == decision.expected_action
            assert step.action is not None and step.action.name == decision.llm_action_name
            assert step.action.arguments == dict(decision.llm_action_arguments or {})
            assert step.thinking == (decision.llm_thinking or "") and step.state == decision.state
            assert step.tool_result == decision.observation_after_action
            assert step.available_actions == decision.available_actions
            assert step.prompt_text == decision.llm_prompt
        assert trajectory.outcome.reward == episode.reward and trajectory.outcome.success == episode.succeeded
        sub_events = [s for s in trajectory.steps if s.kind in ("item", "event")]  # steps of their own, in order
        assert len(sub_events) == len(episode.sub_events) and len(trajectory.steps) == len(episode.trajectory)
        for step, entry in zip(trajectory.steps, episode.trajectory, strict=True):
            assert (step.kind == "decision") == (entry in episode.decision_steps)
            if step.kind == "item":  # an item-page action: its call, pages and options typed
                assert step.action_text == entry.action and step.available_actions == entry.available_options
                assert step.observation == entry.observation_before_action
                assert step.tool_result == entry.observation_after_action and step.state == "Item"
            elif step.kind == "event":
                assert step.extra == entry.model_dump(mode="json")


def test_prompts_become_chat_messages(demos) -> None:
    step = from_webshop_episode(demos.episode(0)).steps[0]
    assert [m.role for m in step.messages][:2] == ["system", "user"]
    assert step.messages[1].content


def test_tool_call_display_and_default_labels() -> None:
    call = ToolCall(name="get_weather", arguments={"city": "Paris", "days": 2})
    assert call.display() == 'get_weather({"city":"Paris","days":2})'
    assert ToolCall(name="Next").display() == "Next()"
    assert ToolCall(name="bash", raw_arguments="{broken").display() == "bash({broken)"
    step = TrajectoryStep(index=4, action=call)
    assert step.label == "4" and step.action_text == call.display()
    assert Trajectory(id="x", format="t", steps=[step]).recorded_calls == 1


def test_unknown_format_and_unrecognised_file_are_one_line_errors(tmp_path) -> None:
    with pytest.raises(FormatError, match="unknown format 'nope'; known formats: "):
        reader_for("nope")
    strange = tmp_path / "strange.json"
    strange.write_text('{"hello": "world"}', encoding="utf-8")
    with pytest.raises(FormatError, match=r"^strange.json: no reader recognises this file") as caught:
        detect(strange)
    assert "\n" not in str(caught.value)


# -- the seed's outcome (issue 30): reward, success, backup, the item bought ----------------------


def test_the_seed_s_outcome_names_the_backup_and_the_item_bought(demos) -> None:
    records = {record["session_id"]: record for record in json.loads(example_path().read_text())}
    backups = 0
    for session_id in demos.session_ids:
        record = records[session_id]
        shown = [e.get("observation_after_action", "") for e in record["trajectory"]]
        bought = [m for m in (re.search(r"\nPurchased\nasin\n(\w+)\n", f"\n{text}") for text in shown) if m]
        episode = demos.episode(session_id)
        for outcome in (from_webshop_episode(episode).outcome, outcome_of(demos.replay_episode(session_id))):
            assert outcome.status == ("completed by backup" if record["completed_by_backup"] else None)
            assert outcome.answer is not None and outcome.answer.split(",")[0] == bought[-1].group(1)
            assert outcome.reward == record["final_reward"] and outcome.success is record["success"]
        backups += record["completed_by_backup"]
    assert backups == 12


def test_a_message_view_reads_as_the_list_it_stands_for() -> None:
    import pickle

    from replay_tui.episodes.model import ChatMessage, MessageView, TrajectoryStep, added_messages

    pool = [ChatMessage(role="user" if n % 2 == 0 else "assistant", content=str(n)) for n in range(8)]
    view = MessageView(pool, [(0, 2), (3, 6)])
    eager = [pool[0], pool[1], pool[3], pool[4], pool[5]]
    assert len(view) == 5 and list(view) == eager and view == eager and eager == view
    assert view[2] is pool[3] and view[-1] is pool[5] and list(reversed(view)) == eager[::-1]
    assert view[1:4] == eager[1:4] and MessageView.prefix(pool, 6)[2:] == pool[2:6]
    step = TrajectoryStep(index=0, messages=view)
    assert step.messages is view  # kept, not copied
    assert step.model_dump()["messages"] == [m.model_dump() for m in eager]
    assert TrajectoryStep.model_validate_json(step.model_dump_json()).messages == eager
    assert pickle.loads(pickle.dumps(step)).messages == eager
    shorter, longer = MessageView.prefix(pool, 3), MessageView.prefix(pool, 7)
    assert added_messages(longer, shorter) == pool[3:7] and added_messages(shorter, longer) is None
    assert added_messages(view, shorter) is None  # position 2 is not in the view
    assert added_messages(longer, pool[:3]) == pool[3:7]  # a list: told by identity
    assert MessageView(pool, [(0, 2), (2, 3), (5, 5)]).ranges == ((0, 3),)  # adjacent ranges are one
    assert added_messages(longer, MessageView(pool, [(0, 1), (1, 3)])) == pool[3:7]
