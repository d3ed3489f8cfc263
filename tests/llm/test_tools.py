"""Tools from available actions, their schemas, and reading a model's answer (no server)."""

import json

import pytest

from replay_tui.episodes.recorded import PromptError
from replay_tui.policies.base import PolicyFailure
from replay_tui.policies.llm import (
    build_messages,
    build_tools,
    decide,
    default_messages,
    interpret_response,
    response_summary,
)
from tests.llm.scripted import completion


def names(tools):
    return [tool.name for tool in tools]


def test_tools_follow_available_actions_and_schemas_come_from_pydantic():
    tools = build_tools(["select_item", "Next", "Prev", "Back_to_Search"], "Result")
    assert names(tools) == ["select_item", "Next", "Prev", "Back_to_Search"]
    select = tools[0].schema()
    assert select["type"] == "function"
    params = select["function"]["parameters"]
    assert params["type"] == "object" and params["required"] == ["item_id"]
    assert params["additionalProperties"] is False
    assert "title" not in json.dumps(params)
    assert tools[1].parameters() == {"additionalProperties": False, "properties": {}, "type": "object"}

    search = build_tools(["Search"], "Search")[0].parameters()
    assert search["required"] == ["keywords"] and set(search["properties"]) == {"keywords", "max_price"}


def test_option_values_become_one_select_option_tool_with_an_enum():
    tools = build_tools(["Description", "Features", "Reviews", "Buy_Now", "Prev", "small", "x-large", "small"], "Item")
    assert names(tools) == ["Description", "Features", "Reviews", "Buy_Now", "Prev", "select_option"]
    value = tools[-1].parameters()["properties"]["value"]
    assert value["enum"] == ["small", "x-large"]


def test_button_labels_and_case_name_tools_and_empty_lists_fall_back_to_the_state():
    assert names(build_tools(["Back to Search", "buy now", "< Prev", "Next >"])) == [
        "Back_to_Search",
        "Buy_Now",
        "Prev",
        "Next",
    ]
    assert names(build_tools([], "Search")) == ["Search"]
    assert names(build_tools([], "Result")) == ["select_item", "Next", "Prev", "Back_to_Search"]


@pytest.mark.parametrize(
    ("name", "arguments", "action"),
    [
        ("Search", '{"keywords": "red shoes", "max_price": "70.00"}', "search[red shoes]"),
        ("Search", {"keywords": "  red shoes "}, "search[red shoes]"),
        ("select_item", '{"item_id": "B0ABCDEFGH"}', "click[B0ABCDEFGH]"),
        ("Next", "", "click[Next >]"),
        ("Prev", None, "click[< Prev]"),
        ("Back_to_Search", "{}", "click[Back to Search]"),
        ("select_option", '{"value": "x-large"}', "click[x-large]"),
    ],
)
def test_valid_calls_format_the_recorded_action(name, arguments, action):
    tools = build_tools(["Search", "select_item", "Next", "Prev", "Back_to_Search", "small", "x-large"])
    assert decide(name, arguments, tools).action == action


@pytest.mark.parametrize(
    ("name", "arguments", "kind", "fragment"),
    [
        ("Buy_Now", "{}", "unknown_tool", "not one of the offered tools"),
        ("search", '{"keywords": "x"}', "unknown_tool", "'search'"),
        (None, "{}", "unknown_tool", "None"),
        ("Search", '{"keywords": "red', "invalid_arguments", "not JSON"),
        ("Search", '["red"]', "invalid_arguments", "JSON object"),
        ("Search", "{}", "invalid_arguments", "keywords: Field required"),
        ("Search", '{"keywords": "   "}', "invalid_arguments", "keywords"),
        ("Search", '{"keywords": "x", "color": "red"}', "invalid_arguments", "color: Extra inputs"),
        ("Search", '{"keywords": "x", "max_price": "cheap"}', "invalid_arguments", "max_price"),
        ("Next", '{"page": 2}', "invalid_arguments", "page"),
        ("select_option", '{"value": "XL"}', "invalid_arguments", "value: Input should be"),
    ],
)
def test_invalid_calls_are_failures_of_their_kind(name, arguments, kind, fragment):
    tools = build_tools(["Search", "Next", "small", "x-large"])
    with pytest.raises(PolicyFailure) as caught:
        decide(name, arguments, tools)
    assert caught.value.kind == kind
    assert fragment in caught.value.message
    assert caught.value.raw is not None


def test_reading_responses():
    tools = build_tools(["select_item", "Next"])
    assert interpret_response(completion("Next", {}), tools).action == "click[Next >]"
    twice = interpret_response(completion("Next", {}, more_calls=1), tools)
    assert twice.action == "click[Next >]" and "2 tool calls" in twice.warnings[0]

    with pytest.raises(PolicyFailure) as caught:
        interpret_response(completion(None, content="I would click Next."), tools)
    assert caught.value.kind == "no_tool_call" and "I would click Next." in caught.value.message
    assert caught.value.raw == "I would click Next."

    legacy = {"choices": [{"message": {"role": "assistant", "function_call": {"name": "Next", "arguments": "{}"}}}]}
    assert interpret_response(legacy, tools).action == "click[Next >]"

    for body, kind in (
        ({"choices": []}, "bad_response"),
        ([1, 2], "bad_response"),
        ({"error": {"message": "model overloaded"}}, "api_error"),
    ):
        with pytest.raises(PolicyFailure) as caught:
            interpret_response(body, tools)
        assert caught.value.kind == kind


def test_response_summary_keeps_content_and_calls():
    summary = response_summary(completion("Next", {}, content="thinking"))
    assert summary == {
        "id": "chatcmpl-scripted",
        "finish_reason": "tool_calls",
        "content": "thinking",
        "tool_calls": [{"name": "Next", "arguments": "{}"}],
    }


def test_messages_come_from_the_recorded_prompt_and_never_from_eval():
    prompt = repr([{"role": "system", "content": "You shop."}, {"role": "user", "content": "Page 1"}])
    tools = build_tools(["Next"])
    assert build_messages(prompt, "obs", "Result", tools) == [
        {"role": "system", "content": "You shop."},
        {"role": "user", "content": "Page 1"},
    ]
    with pytest.raises(PromptError):
        build_messages("[__import__('os').system('echo pwned')]", "obs", "Result", tools)


def test_steps_without_a_prompt_get_default_messages_listing_the_tools():
    tools = build_tools(["Description", "Buy_Now", "large"], "Item")
    messages = build_messages(None, "Instruction:\nbuy a shirt\n[button] Buy Now [button_]", "Item", tools)
    assert messages == default_messages("Instruction:\nbuy a shirt\n[button] Buy Now [button_]", "Item", tools)
    system, user = messages
    assert "a product page" in system["content"]
    assert "- select_option(value):" in system["content"] and "- Buy_Now():" in system["content"]
    assert user["content"].startswith("Current observation:\nInstruction:")
