"""General tool-calling steps (any agent's log, teacher-forced): LlmPolicy, StubPolicy and the LangGraph
adapter on recorded steps built from real logs, with the real openai client against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay_tui.episodes.model import ChatMessage, Trajectory, TrajectoryStep, call_text, parse_call_text
from replay_tui.formats import read_trajectories
from replay_tui.policies.base import PolicyFailure
from replay_tui.policies.langgraph_adapter import LangGraphPolicy
from replay_tui.policies.llm import LlmPolicy, request_messages
from replay_tui.policies.stub import StubPolicy
from tests.llm.scripted import Reply, ScriptedServer, completion, tool_reply

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"
TAU2 = FORMATS / "tau2" / "2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json"
AIRLINE = FORMATS / "openai_chat" / "docent__samples__tb_airline.json"


# -- recorded steps as the Runner passes them ----------------------------------------------------------


def first_trajectory(path: Path) -> Trajectory:
    for item in read_trajectories(path):
        if isinstance(item, Trajectory):
            return item
    raise AssertionError(f"{path.name} holds no trajectory")


def openai_dicts(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """Chat messages in the chat-completions request shape (what the Runner's recorded steps carry)."""
    out = []
    for message in messages:
        entry: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            entry["tool_calls"] = [
                {
                    "id": call.id or f"call_{i}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for i, call in enumerate(message.tool_calls)
            ]
            if not message.content:
                entry["content"] = None
        if message.role == "tool":
            entry["tool_call_id"] = message.tool_call_id
        out.append(entry)
    return out


def tools_from_calls(trajectory: Trajectory) -> list[dict[str, Any]]:
    """Tool schemas for a log that recorded none: one per called name, arguments typed as strings."""
    seen: dict[str, list[str]] = {}
    for step in trajectory.steps:
        if step.action is not None:
            keys = seen.setdefault(step.action.name, [])
            keys.extend(key for key in step.action.arguments if key not in keys)
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"{name} (schema inferred from the recorded calls)",
                "parameters": {"type": "object", "properties": {key: {"type": "string"} for key in keys}},
            },
        }
        for name, keys in seen.items()
    ]


def recorded(trajectory: Trajectory, step: TrajectoryStep, tools: list[dict[str, Any]] | None = None) -> dict:
    assert step.action is not None
    inferred = not trajectory.steps[0].tools
    return {
        "tool_call": True,
        "format": trajectory.format,
        "step_number": step.index,
        "step_label": step.label,
        "llm_action_name": step.action.name,
        "llm_action_arguments": dict(step.action.arguments),
        "messages": openai_dicts(step.messages),
        "tools": tools if tools is not None else (step.tools or tools_from_calls(trajectory)),
        "tools_inferred": inferred,
        "observation_before_llm": step.observation,
        "state": step.action.name,
    }


def call_steps(path: Path) -> tuple[Trajectory, list[dict]]:
    trajectory = first_trajectory(path)
    return trajectory, [recorded(trajectory, step) for step in trajectory.steps if step.action is not None]


@pytest.fixture(scope="module")
def tau2() -> list[dict]:
    return call_steps(TAU2)[1]


@pytest.fixture(scope="module")
def airline() -> list[dict]:
    return call_steps(AIRLINE)[1]


def predict(policy: Any, step: dict, **kwargs: Any) -> str:
    observation = step.get("observation_before_llm", "")
    return policy.predict_action(observation, step["state"], [], None, recorded_step=step, **kwargs)


def make(server: ScriptedServer, tmp_path: Path, **settings: Any) -> LlmPolicy:
    return LlmPolicy(
        {
            "model": "M",
            "base_url": server.url,
            "cache_dir": str(tmp_path / "cache"),
            "timeout": 5.0,
            "retries": 0,
            "backoff": 0.0,
            **settings,
        }
    )


def fail(policy: LlmPolicy, step: dict, **kwargs: Any) -> PolicyFailure:
    with pytest.raises(PolicyFailure) as caught:
        predict(policy, step, **kwargs)
    assert policy.last_trace is not None and policy.last_trace["failure"]["kind"] == caught.value.kind
    return caught.value


# -- LlmPolicy ----------------------------------------------------------------------------------------


def test_a_tau2_step_sends_its_recorded_messages_and_tools_and_returns_the_call_text(tau2, tmp_path):
    step = tau2[1]  # get_details_by_id, after a tool result (an assistant message with a call and no text)
    assert step["llm_action_name"] == "get_details_by_id"
    answer = {"id": "L1001", "note": "ünïcode"}
    with ScriptedServer(lambda body: tool_reply("get_details_by_id", answer)) as server:
        policy = make(server, tmp_path, seed=7, max_tokens=64)
        action = predict(policy, step)
        body = server.requests[0]
        assert body["messages"] == step["messages"]
        assert body["tools"] == step["tools"]
        assert body["model"] == "M" and body["tool_choice"] == "required" and body["temperature"] == 0
        assert body["seed"] == 7 and body["max_tokens"] == 64
        assert set(body) == {"model", "messages", "tools", "tool_choice", "temperature", "seed", "max_tokens"}
        silent = [m for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls")]
        assert silent and all(m["content"] is None for m in silent)
        assert all(m["tool_call_id"] for m in body["messages"] if m["role"] == "tool")

        call = parse_call_text(action)
        assert call is not None and call.name == "get_details_by_id" and call.arguments == answer
        assert action == call_text("get_details_by_id", answer)

        trace = policy.last_trace
        assert trace["request"] == body and trace["format"] == "tau2" and trace["tools_inferred"] is True
        assert trace["cache"] == "miss" and trace["cache_hit"] is False and trace["attempts"] == 1
        assert trace["tokens"] == {"prompt": 100, "completion": 10, "total": 110}
        assert trace["tool_call"] == {"name": "get_details_by_id", "arguments": answer}
        assert trace["action"] == action and trace["warnings"] == []
        assert trace["response"]["tool_calls"][0]["name"] == "get_details_by_id"

        assert predict(policy, step) == action  # the same request again: served from the cache
        assert len(server.requests) == 1
        assert policy.last_trace["cache"] == "hit" and policy.last_trace["key"] == trace["key"]
        assert policy.stats() == {"requests_sent": 1, "cache_hits": 1}


def test_every_step_of_an_openai_chat_log_is_asked_with_its_own_prompt(airline, tmp_path):
    def echo_recorded(body: dict) -> Reply:
        # the answer: the call recorded for the step whose prompt this is
        step = next(s for s in airline if s["messages"] == body["messages"])
        return tool_reply(step["llm_action_name"], step["llm_action_arguments"])

    with ScriptedServer(echo_recorded) as server:
        policy = make(server, tmp_path, cache=False)
        actions = [predict(policy, step) for step in airline]
        assert len(server.requests) == len(airline) == 12
        for step, body, action in zip(airline, server.requests, actions, strict=True):
            assert body["messages"] == step["messages"] and body["tools"] == step["tools"]
            assert action == call_text(step["llm_action_name"], step["llm_action_arguments"])
        names = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
        assert names == {"get_user_details", "list_all_airports", "search_direct_flight"} | {
            "search_onestop_flight",
            "book_reservation",
        }


def test_answers_without_a_usable_call_are_failures_of_their_kind(tau2, tmp_path):
    step = tau2[0]
    replies = iter(
        [
            tool_reply("get_details_by_id", '{"id": '),
            tool_reply("get_details_by_id", '["L1001"]'),
            tool_reply("get_details_by_id", '{"amount": NaN}'),
            tool_reply(None, content="Could you give me your phone number?"),
            Reply(body={"error": {"message": "model is loading"}}),
            Reply(body="<html>gateway</html>"),
            Reply(body=completion("", {})),
        ]
    )
    with ScriptedServer(lambda body: next(replies)) as server:
        policy = make(server, tmp_path, cache=False)
        failures = [fail(policy, step) for _ in range(7)]
    assert [f.kind for f in failures] == [
        "invalid_arguments",
        "invalid_arguments",
        "invalid_arguments",
        "no_tool_call",
        "api_error",
        "bad_response",
        "unknown_tool",
    ]
    assert "not JSON" in failures[0].message and "JSON object, got list" in failures[1].message
    assert failures[3].raw == "Could you give me your phone number?"
    assert "it said: Could you give me your phone number?" in failures[3].message


def test_a_tool_not_offered_is_returned_for_the_judge_with_a_warning(tau2, tmp_path):
    with ScriptedServer(lambda body: tool_reply("transfer_to_human_agents", {}, more_calls=1)) as server:
        policy = make(server, tmp_path)
        action = predict(policy, tau2[0])
    assert action == "transfer_to_human_agents({})"
    warnings = policy.last_trace["warnings"]
    assert any("'transfer_to_human_agents', not one of the offered tools" in w for w in warnings)
    assert any("2 tool calls; the first was used" in w for w in warnings)
    assert "failure" not in policy.last_trace


def test_repeat_samples_are_distinct_cache_entries(tau2, tmp_path):
    with ScriptedServer(lambda body: tool_reply("refuel_data", {"gb": 2})) as server:
        policy = make(server, tmp_path)
        for sample in (0, 1, 2):
            predict(policy, tau2[-1], sample=sample)
        keys = set()
        for sample in (0, 1, 2):
            predict(policy, tau2[-1], sample=sample)
            assert policy.last_trace["cache"] == "hit" and policy.last_trace["sample"] == sample
            keys.add(policy.last_trace["key"])
    assert len(server.requests) == 3 and len(keys) == 3
    assert server.requests[0] == server.requests[1] == server.requests[2]  # only the key differs


def test_a_recorded_cassette_replays_general_steps_without_a_server(tau2, tmp_path):
    cassette = tmp_path / "run.json"
    answer = tool_reply("get_customer_by_phone", {"phone_number": "555-123-2002"})
    with (
        ScriptedServer(lambda body: answer) as server,
        make(server, tmp_path, cache=False, record=str(cassette)) as policy,
    ):
        recorded_action = predict(policy, tau2[0])
    replaying = LlmPolicy(replay=str(cassette))
    assert predict(replaying, tau2[0]) == recorded_action
    assert replaying.last_trace["cache"] == "cassette"
    assert fail(replaying, tau2[1]).kind == "not_recorded"


def test_messages_are_sent_in_a_shape_chat_servers_accept(tmp_path):
    messy = [
        {"role": "system", "content": "You help."},
        {"role": "human", "content": "Book it."},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "book", "arguments": {"x": 1}}}]},
        {"role": "tool", "content": None, "name": "book"},
        {"role": "assistant", "content": "Done.", "name": "agent"},
        {"role": "user", "content": {"structured": True}},
    ]
    sent = request_messages(messy)
    assert sent == [
        {"role": "system", "content": "You help."},
        {"role": "user", "content": "Book it."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "book", "arguments": '{"x": 1}'}}],
        },
        {"role": "tool", "content": "", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "Done.", "name": "agent"},
        {"role": "user", "content": '{"structured": true}'},
    ]
    assert request_messages(sent) == sent  # messages already in shape are sent unchanged

    step = {"tool_call": True, "format": "inspect-ai", "messages": messy, "tools": [], "state": "book"}
    step |= {"llm_action_name": "book", "llm_action_arguments": {"x": 1}}
    with ScriptedServer(lambda body: tool_reply("book", {"x": 2})) as server:
        policy = make(server, tmp_path)
        assert predict(policy, step) == 'book({"x":2})'
        body = server.requests[0]
    assert body["messages"] == sent
    # no tools recorded: the recorded call's tool is offered, its schema inferred from the call
    assert [t["function"]["name"] for t in body["tools"]] == ["book"]
    assert body["tools"][0]["function"]["parameters"]["properties"] == {"x": {"type": "integer"}}
    assert any("recorded no tools" in w for w in policy.last_trace["warnings"])


def test_a_step_without_messages_is_asked_with_its_observation(tmp_path):
    step = {"tool_call": True, "format": "swe-agent", "messages": [], "state": "bash"}
    step |= {"tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]}
    with ScriptedServer(lambda body: tool_reply("bash", {"command": "ls"})) as server:
        policy = make(server, tmp_path)
        action = policy.predict_action("$ the repo is checked out", "bash", [], None, recorded_step=step)
        assert action == 'bash({"command":"ls"})'
        assert server.requests[0]["messages"] == [{"role": "user", "content": "$ the repo is checked out"}]
        with pytest.raises(PolicyFailure) as caught:
            policy.predict_action("", "bash", [], None, recorded_step=step)
        assert caught.value.kind == "bad_prompt" and len(server.requests) == 1
        step["messages"] = [{"content": "no role"}]
        with pytest.raises(PolicyFailure, match="message 0") as caught:
            policy.predict_action("obs", "bash", [], None, recorded_step=step)
        assert caught.value.kind == "bad_prompt"


def test_webshop_steps_keep_their_webshop_behaviour(tmp_path):
    prompt = repr([{"role": "system", "content": "You shop."}, {"role": "user", "content": "Page 1 of results"}])
    webshop_step = {"llm_action_name": "select_item", "llm_action_arguments": {"item_id": "B0ABCDEFGH"}}
    with ScriptedServer(lambda body: tool_reply("select_item", {"item_id": "B0ABCDEFGH"})) as server:
        policy = make(server, tmp_path, cache=False)
        for step in (None, webshop_step, {**webshop_step, "tool_call": False}):
            action = policy.predict_action("obs", "Result", ["select_item", "Next"], prompt, recorded_step=step)
            assert action == "click[B0ABCDEFGH]"
            assert "format" not in policy.last_trace and "tools_inferred" not in policy.last_trace
    first, *others = server.requests
    assert all(body == first for body in others)
    assert [t["function"]["name"] for t in first["tools"]] == ["select_item", "Next"]
    assert first["messages"][1] == {"role": "user", "content": "Page 1 of results"}


# -- StubPolicy ---------------------------------------------------------------------------------------


def test_the_stub_returns_the_recorded_call(airline, tau2):
    stub = StubPolicy()
    for step in [*airline, *tau2]:
        action = predict(stub, step)
        call = parse_call_text(action)
        assert call is not None and call.name == step["llm_action_name"]
        assert call.arguments == step["llm_action_arguments"]
    step = {"tool_call": True, "llm_action_name": "bash", "state": "bash"}
    assert predict(stub, {**step, "llm_action_arguments": '{"command": "ls -la"}'}) == 'bash({"command":"ls -la"})'
    assert predict(stub, {**step, "llm_action_arguments": None}) == "bash({})"
    assert predict(stub, {**step, "llm_action_arguments": '{"command": '}) == 'bash({"command": )'
    webshop = {"llm_action_name": "Search", "llm_action_arguments": {"keywords": "red shoes"}}
    assert stub.predict_action("obs", "Search", ["Search"], None, recorded_step=webshop) == "search[red shoes]"


# -- the LangGraph adapter ----------------------------------------------------------------------------


class FakeGraph:
    def __init__(self, output: Any):
        self.output = output
        self.inputs: list[dict] = []

    def invoke(self, data: dict, config: Any = None) -> Any:
        self.inputs.append(data)
        return self.output(data) if callable(self.output) else self.output


def test_a_graph_gets_the_recorded_conversation_and_its_call_comes_back_as_text(tau2):
    step = tau2[1]
    graph = FakeGraph({"tool_call": {"name": "get_details_by_id", "arguments": '{"id": "L1001"}'}})
    policy = LangGraphPolicy(graph)
    assert predict(policy, step) == 'get_details_by_id({"id":"L1001"})'
    data = graph.inputs[0]
    assert data["messages"] == step["messages"] and data["tools"] == step["tools"]
    assert data["available_actions"] == [t["function"]["name"] for t in step["tools"]]
    assert data["state"] is None  # never the recorded tool's name
    assert data["format"] == "tau2" and data["step_label"] == step["step_label"]
    trace = policy.last_trace
    assert trace["format"] == "tau2" and trace["tool_call"] == {
        "name": "get_details_by_id",
        "arguments": {"id": "L1001"},
    }

    answered = FakeGraph(
        lambda data: {
            "messages": [
                *data["messages"],
                {"role": "assistant", "tool_calls": [{"function": {"name": "escalate", "arguments": "{}"}}]},
            ]
        }
    )
    policy = LangGraphPolicy(answered)
    assert predict(policy, step) == "escalate({})"
    assert any("not one of the offered tools" in w for w in policy.last_trace["warnings"])


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        (lambda data: {"messages": data["messages"]}, "no_tool_call"),  # the recorded calls are not its answer
        ({"tool_call": {"name": "get_details_by_id", "arguments": "{oops"}}, "invalid_arguments"),
        ({"failure": {"kind": "timeout", "message": "slow"}}, "timeout"),
    ],
)
def test_graph_failures_on_general_steps_have_kinds(tau2, output, kind):
    policy = LangGraphPolicy(FakeGraph(output))
    with pytest.raises(PolicyFailure) as caught:
        predict(policy, tau2[1])
    assert caught.value.kind == kind and policy.last_trace["failure"]["kind"] == kind
