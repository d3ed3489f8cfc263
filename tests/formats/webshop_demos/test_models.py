import pytest
from pydantic import ValidationError

from replay_tui.episodes.recorded import PromptError, parse_prompt
from replay_tui.formats.webshop_demos.contract import (
    AgentBuy,
    BackupAgentEvent,
    DecisionStep,
    ItemPageAction,
    UnknownEvent,
    sub_event_class,
)
from tests.conftest import result_step, search_step


def test_real_log_quirks_are_accepted():
    step = DecisionStep.model_validate(
        search_step(
            "3",
            reward="0.5",
            done="true",
            llm_action_arguments='{"keywords": "red shoes"}',
            action_executed_in_env="search[red shoes]",
        )
    )
    assert step.step_number == 3
    assert step.reward == 0.5
    assert step.done is True
    assert step.llm_action_arguments == {"keywords": "red shoes"}
    assert DecisionStep.model_validate(search_step(0, done="False")).done is False


@pytest.mark.parametrize("missing", ["", None, "drop"])
def test_missing_executed_action_is_rebuilt_from_the_tool_call(missing):
    raw = result_step(1, "Next")
    if missing == "drop":
        del raw["action_executed_in_env"]
    else:
        raw["action_executed_in_env"] = missing
    step = DecisionStep.model_validate(raw)
    assert step.expected_action == "click[Next >]"
    assert step.action_rebuilt


def test_unmappable_empty_action_names_the_problem():
    raw = result_step(1, "Next", action="")
    raw["llm_action_name"] = "Teleport"
    with pytest.raises(ValidationError, match="cannot be rebuilt"):
        DecisionStep.model_validate(raw)


def test_wrong_types_are_rejected():
    with pytest.raises(ValidationError) as info:
        DecisionStep.model_validate(search_step(0, reward="lots"))
    assert info.value.errors()[0]["loc"] == ("reward",)
    with pytest.raises(ValidationError):
        DecisionStep.model_validate(search_step(0, llm_action_arguments="[1, 2]"))


def test_unknown_fields_are_kept():
    step = DecisionStep.model_validate(search_step(0, latency_ms=812))
    assert step.model_dump()["latency_ms"] == 812


def test_sub_events_dispatch_on_type_and_keep_unknown_types_verbatim():
    assert sub_event_class("item_page_action") is ItemPageAction
    assert sub_event_class("agent_buy") is AgentBuy
    assert sub_event_class("backup_agent_search") is BackupAgentEvent
    assert sub_event_class("telemetry") is UnknownEvent
    raw = {"type": "telemetry", "tokens": 12, "nested": {"a": [1, 2]}}
    event = UnknownEvent.model_validate(raw)
    assert event.model_dump() == raw


def test_item_page_action_maps_its_tool_call():
    event = ItemPageAction.model_validate({"type": "item_page_action", "llm_action": {"name": "Buy_Now"}})
    assert event.action == "click[Buy Now]"
    event = ItemPageAction.model_validate(
        {"type": "item_page_action", "llm_action": {"name": "select_option", "arguments": '{"value": "xl"}'}}
    )
    assert event.action == "click[xl]"


def test_prompt_parses_repr_of_chat_dicts_lazily():
    step = DecisionStep.model_validate(search_step(0))
    messages = step.prompt_messages()
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "[button] Search [button_]" in messages[1]["content"]


def test_prompt_parsing_never_evaluates_code(tmp_path):
    marker = tmp_path / "pwned"
    hostile = f"[{{'role': 'user', 'content': __import__('pathlib').Path({str(marker)!r}).touch()}}]"
    with pytest.raises(PromptError):
        parse_prompt(hostile)
    assert not marker.exists()


def test_prompt_size_limit_and_shapes():
    with pytest.raises(PromptError, match="limit"):
        parse_prompt("[" + "{'role': 'user', 'content': 'x'}, " * 1000 + "]", limit=1000)
    assert parse_prompt("just some prose")[0]["content"] == "just some prose"
    assert parse_prompt('[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]')[0]["content"] == "hi"
    with pytest.raises(PromptError):
        parse_prompt("[1, 2]")
    assert parse_prompt(None) == []
