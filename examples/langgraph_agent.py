"""An example LangGraph agent for replay-tui, talking to any OpenAI-compatible endpoint.

One ``agent`` node asks the model for a tool call (``tool_choice="required"``) with the messages and
tools replay-tui puts in the graph's input; when the answer has no tool call, the graph loops once
more with a reminder. Transport failures end the graph with a ``failure`` the replay counts by kind.

Run it (needs ``pip install 'replay_tui[langgraph]'``)::

    replay-tui replay --mode langgraph --graph examples/langgraph_agent.py:build_graph \\
        --base-url http://127.0.0.1:8000/v1 --model my-model --sessions 0-9

or as a plain policy, configured from the environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``REPLAY_TUI_MODEL``)::

    replay-tui replay --policy examples/langgraph_agent.py:policy
"""

from __future__ import annotations

import os
import time
from typing import Any, TypedDict

import openai
from langgraph.graph import END, START, StateGraph

REMINDER = "Call exactly one of the available tools; do not answer in plain text."


class AgentState(TypedDict, total=False):
    # What replay-tui puts in (see replay_tui/policies/langgraph_adapter.py).
    observation: str
    state: str
    available_actions: list[str]
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    # What the graph produces.
    tool_call: dict[str, Any]
    failure: dict[str, Any]
    attempts: int
    trace: dict[str, Any]


def build_graph(
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    temperature: float = 0.0,
    seed: int | None = None,
    timeout: float = 60.0,
    retries: int = 1,
    max_attempts: int = 2,
) -> Any:
    """The compiled graph; replay-tui passes ``--base-url``, ``--model``, ``--temperature``... as keywords."""
    model = model or os.environ.get("REPLAY_TUI_MODEL") or ""
    if not model:
        raise ValueError("no model: give --model or set REPLAY_TUI_MODEL")
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    key = api_key or os.environ.get("OPENAI_API_KEY") or ("sk-no-key-needed" if base_url else None)
    client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=retries)

    def agent(state: AgentState) -> dict[str, Any]:
        attempts = state.get("attempts", 0) + 1
        request: dict[str, Any] = {
            "model": model,
            "messages": state["messages"],
            "tools": state["tools"],
            "tool_choice": "required",
            "temperature": temperature,
        }
        if seed is not None:
            request["seed"] = seed
        started = time.monotonic()
        try:
            completion = client.chat.completions.create(**request)
        except openai.APITimeoutError:
            return {"attempts": attempts, "failure": {"kind": "timeout", "message": f"no answer within {timeout:g} s"}}
        except openai.APIStatusError as exc:
            return {
                "attempts": attempts,
                "failure": {"kind": "http_error", "message": f"HTTP {exc.status_code}: {exc.message}"},
            }
        except openai.APIConnectionError as exc:
            return {"attempts": attempts, "failure": {"kind": "connection_error", "message": str(exc)}}
        latency = round((time.monotonic() - started) * 1000, 1)
        usage = completion.usage
        trace = {
            "latency_ms": latency,
            "attempts": attempts,
            "model": completion.model,
            "tokens": {
                "prompt": usage.prompt_tokens,
                "completion": usage.completion_tokens,
                "total": usage.total_tokens,
            }
            if usage
            else None,
        }
        message = completion.choices[0].message if completion.choices else None
        calls = (message.tool_calls or []) if message else []
        if calls:
            function = calls[0].function
            trace["response"] = {
                "content": message.content,
                "tool_calls": [{"name": c.function.name, "arguments": c.function.arguments} for c in calls],
            }
            return {
                "attempts": attempts,
                "trace": trace,
                "tool_call": {"name": function.name, "arguments": function.arguments},
            }
        said = {"role": "assistant", "content": (message.content if message else None) or ""}
        messages = [*state["messages"], said]
        if attempts < max_attempts:
            messages.append({"role": "user", "content": REMINDER})
        trace["response"] = {"content": said["content"], "tool_calls": []}
        return {"attempts": attempts, "trace": trace, "messages": messages}

    def route(state: AgentState) -> str:
        if state.get("tool_call") or state.get("failure") or state.get("attempts", 0) >= max_attempts:
            return END
        return "agent"

    graph = StateGraph(AgentState)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["agent", END])
    return graph.compile()


def policy() -> Any:
    """A LangGraphPolicy configured from the environment, for ``--policy examples/langgraph_agent.py:policy``."""
    from replay_tui.policies.langgraph_adapter import LangGraphPolicy

    return LangGraphPolicy(factory=build_graph, name="langgraph-example")
