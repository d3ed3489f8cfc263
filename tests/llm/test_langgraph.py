"""The LangGraph adapter: graphs in, validated tool calls out; the example graph against the scripted server."""

import json
import sys
from pathlib import Path

import pytest

from replay_tui.cli import main
from replay_tui.examples import example_path
from replay_tui.policies.base import PolicyFailure
from replay_tui.policies.langgraph_adapter import LangGraphPolicy, call_factory, graph_settings, langgraph_available
from replay_tui.policies.loading import PolicyLoadError
from replay_tui.workspace import ReplaySettings
from tests.llm.scripted import Reply, tool_reply

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_agent.py"
PROMPT = repr([{"role": "user", "content": "Page 1"}])


class FakeGraph:
    """Anything with ``invoke`` will do: records its inputs, returns a scripted final state."""

    def __init__(self, output):
        self.output = output
        self.inputs = []

    def invoke(self, data, config=None):
        self.inputs.append(data)
        if isinstance(self.output, Exception):
            raise self.output
        return self.output


def predict(policy, actions=("select_item", "Next")):
    return policy.predict_action("obs", "Result", list(actions), PROMPT, recorded_step={"step_number": 3})


def test_the_graph_gets_messages_tools_and_state_and_its_tool_call_is_validated():
    graph = FakeGraph(
        {
            "tool_call": {"name": "select_item", "arguments": '{"item_id": "B0ABCDEFGH"}'},
            "trace": {"tokens": {"total": 5}},
        }
    )
    policy = LangGraphPolicy(graph)
    assert predict(policy) == "click[B0ABCDEFGH]"
    data = graph.inputs[0]
    assert data["messages"] == [{"role": "user", "content": "Page 1"}] and data["state"] == "Result"
    assert [t["function"]["name"] for t in data["tools"]] == ["select_item", "Next"]
    assert data["available_actions"] == ["select_item", "Next"] and data["step_label"] == "3"
    trace = policy.last_trace
    assert trace["policy"] == "langgraph" and trace["tokens"] == {"total": 5}
    assert trace["tool_call"] == {"name": "select_item", "arguments": {"item_id": "B0ABCDEFGH"}}
    assert trace["request"]["messages"] == data["messages"] and trace["latency_ms"] >= 0


def test_tool_calls_are_read_from_langchain_messages_and_openai_dicts():
    from langchain_core.messages import AIMessage, HumanMessage

    ai = AIMessage(content="", tool_calls=[{"name": "Next", "args": {}, "id": "1"}])
    assert predict(LangGraphPolicy(FakeGraph({"messages": [HumanMessage("hi"), ai]}))) == "click[Next >]"
    openai_style = {"role": "assistant", "tool_calls": [{"function": {"name": "Next", "arguments": "{}"}}]}
    assert predict(LangGraphPolicy(FakeGraph({"messages": [openai_style]}))) == "click[Next >]"
    assert predict(LangGraphPolicy(FakeGraph({"action": "click[Next >]"}))) == "click[Next >]"


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        ({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Next!"}]}, "no_tool_call"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "no_tool_call"),
        ({"tool_call": {"name": "Buy_Now", "arguments": {}}}, "unknown_tool"),
        ({"tool_call": {"name": "select_item", "args": {"id": "B0"}}}, "invalid_arguments"),
        ({"failure": {"kind": "timeout", "message": "slow"}}, "timeout"),
        (RuntimeError("node exploded"), "graph_error"),
        (PolicyFailure("rate_limited", "429"), "rate_limited"),
    ],
)
def test_graph_failures_have_kinds(output, kind):
    policy = LangGraphPolicy(FakeGraph(output))
    with pytest.raises(PolicyFailure) as caught:
        predict(policy)
    assert caught.value.kind == kind and policy.last_trace["failure"]["kind"] == kind


def test_factories_get_the_settings_they_accept():
    def factory(model, base_url=None):
        return FakeGraph({"tool_call": {"name": "Next", "arguments": {}}, "trace": {"built_with": [model, base_url]}})

    policy = LangGraphPolicy(factory=factory, factory_kwargs={"model": "M", "seed": 3, "base_url": None})
    predict(policy)
    assert policy.last_trace["graph"] == {"built_with": ["M", None]}
    assert call_factory(lambda **kw: kw, {"a": 1, "b": None}) == {"a": 1}
    assert graph_settings({"model": "M", "api_key_env": "NOPE", "cache": False}) == {"model": "M", "api_key": None}
    with pytest.raises(ValueError):
        LangGraphPolicy()
    with pytest.raises(TypeError):
        LangGraphPolicy(object())


def test_the_example_graph_replays_against_the_scripted_server(server, oracle, tmp_path, capsys):
    report = tmp_path / "lg.json"
    code = main(
        [
            "replay",
            "--demos",
            str(example_path()),
            "--sessions",
            "0,1,9",
            "--mode",
            "langgraph",
            "--graph",
            f"{EXAMPLE}:build_graph",
            "--base-url",
            server.url,
            "--model",
            "M",
            "--report",
            str(report),
            "-q",
        ]
    )
    data = json.loads(report.read_text())
    assert code == 0 and data["overall_accuracy"] == 1.0 and data["mode"] == "langgraph"
    assert all(body["tool_choice"] == "required" and body["model"] == "M" for body in server.requests)

    # No tool call: the example asks once more with a reminder, then the step fails as no_tool_call.
    oracle.overrides[(9, "1")] = tool_reply(None, content="hmm")
    oracle.unknown = tool_reply(None, content="still hmm")  # the reminder's prompt is no recorded one
    oracle.overrides[(1, "1")] = Reply(status=404, body={"error": {"message": "no such model"}})
    server.reset()
    code = main(
        [
            "replay",
            "--demos",
            str(example_path()),
            "--sessions",
            "1,9",
            "--mode",
            "langgraph",
            "--graph",
            f"{EXAMPLE}:build_graph",
            "--base-url",
            server.url,
            "--model",
            "M",
            "--report",
            str(report),
            "-q",
            "--jobs",
            "2",
        ]
    )
    data = json.loads(report.read_text())
    assert code == 1 and data["failures_by_kind"] == {"http_error": 1, "no_tool_call": 1}
    reminders = [body for body in server.requests if body["messages"][-1]["content"].startswith("Call exactly")]
    assert len(reminders) == 1


def test_the_example_also_loads_as_a_plain_policy_configured_from_the_environment(server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("REPLAY_TUI_MODEL", "M")
    assert main(["replay", "--sessions", "9", "--policy", f"{EXAMPLE}:policy", "-q"]) == 0
    assert "(100.0%)" in capsys.readouterr().out


def test_workspace_settings_build_the_langgraph_policy(server):
    settings = ReplaySettings(
        mode="langgraph", graph_spec=f"{EXAMPLE}:build_graph", llm={"model": "M", "base_url": server.url}
    )
    policy, name = settings.make_policy()
    assert isinstance(policy, LangGraphPolicy) and name == "langgraph"
    assert settings.describe().startswith("langgraph ")
    with pytest.raises(ValueError, match="graph spec"):
        ReplaySettings(mode="langgraph").make_policy()


def test_a_missing_langgraph_is_explained(monkeypatch, capsys):
    for name in [m for m in sys.modules if m == "langgraph" or m.startswith("langgraph.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "langgraph", None)
    assert not langgraph_available()
    with pytest.raises(PolicyLoadError, match=r"LangGraph is not installed: pip install 'replay_tui\[langgraph\]'"):
        LangGraphPolicy.from_spec(f"{EXAMPLE}:build_graph", {"model": "M"})
    assert (
        main(["replay", "--sessions", "0", "--mode", "langgraph", "--graph", f"{EXAMPLE}:build_graph", "--model", "M"])
        == 2
    )
    assert "pip install 'replay_tui[langgraph]'" in capsys.readouterr().err


def test_bad_graph_specs_are_one_line_errors(tmp_path):
    target = tmp_path / "graphs.py"
    target.write_text("answer = 42\n\ndef broken(model):\n    raise RuntimeError('no graph today')\n")
    for spec, message in (
        (f"{target}:nothing", "has no attribute"),
        (f"{target}:answer", "not a graph"),
        (f"{target}:broken", "no graph today"),
        (":x", "must look like"),
    ):
        with pytest.raises(PolicyLoadError, match=message):
            LangGraphPolicy.from_spec(spec, {"model": "M"})


def test_a_plain_answer_step_is_a_failure_naming_the_modes_that_ask_it():
    """A step without a tool call (an inspect_ai QA answer): the graph contract has no answer text."""
    graph = FakeGraph({"tool_call": {"name": "select_item", "arguments": "{}"}})
    policy = LangGraphPolicy(graph)
    with pytest.raises(PolicyFailure) as failure:
        policy.predict_action("Q?", "answer", [], None, recorded_step={"answer": True, "messages": []})
    assert failure.value.kind == "bad_prompt" and "use --mode llm or stub" in str(failure.value)
    assert graph.inputs == []  # never asked
