"""LangGraphPolicy: a compiled LangGraph graph (or a factory for one) as a replay policy.

The graph is invoked once per step with this input state (a graph keeps the keys its state schema
declares; LangGraph drops the others)::

    {"observation": str, "state": "Search" | "Result" | "Item", "available_actions": [str, ...],
     "llm_prompt": str | None,            # the recorded prompt (repr of a list of messages)
     "messages": [{"role", "content"}],   # that prompt parsed (or a default one for item pages)
     "tools": [OpenAI tool schemas],      # built from available_actions, as LlmPolicy offers them
     "session_id": int | None, "step_label": str | None}

A step of a general tool-calling log (``recorded_step["tool_call"]``: OpenAI chat, inspect_ai,
tau2-bench...) gets its recorded conversation instead: ``messages`` are the recorded messages (in
the shape :func:`~replay_tui.policies.llm.request_messages` sends), ``tools`` the recorded tool
schemas, ``available_actions`` their names, ``state`` the log's own state name or None (never the
recorded tool's name), plus ``"format"`` (the reader's name). The graph's tool call comes back as
:func:`~replay_tui.episodes.model.call_text` (``name({"a": 1})``), unvalidated: a name outside the
offered tools is a warning, for the judge to score, and arguments that are not a JSON object are
``invalid_arguments``.

The chosen tool call is read from the final state, first found of:

- ``tool_call``: ``{"name": ..., "arguments": {...} | "json"}`` (``args`` and the OpenAI
  ``{"function": {...}}`` shape work too);
- ``messages``: the last assistant message's first tool call (a LangChain ``AIMessage`` or an
  OpenAI-style dict);
- ``action``: an env action string, used as is.

A ``failure`` key (``{"kind", "message", "raw"?}``) or a :class:`PolicyFailure` raised by a node is a
failure of that kind; any other exception is a ``graph_error``. Tool calls are validated against
the offered tools' schemas exactly as LlmPolicy does (``unknown_tool``, ``invalid_arguments``,
``no_tool_call``). A ``trace`` dict in the final state (tokens, raw response...) is kept in
``last_trace["graph"]``.

The adapter itself needs nothing from LangGraph (it calls ``graph.invoke``); loading a graph from a
spec explains how to install the ``langgraph`` extra when it is missing.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from replay_tui.episodes.recorded import PromptError
from replay_tui.policies.base import PolicyFailure, ThreadLocalTrace
from replay_tui.policies.llm import (
    Decision,
    build_messages,
    build_tools,
    decide,
    decide_call,
    is_answer_step,
    is_tool_call_step,
    request_messages,
    request_tools,
    tool_names,
)
from replay_tui.policies.loading import PolicyLoadError, _import_target, resolve_attr, split_spec
from replay_tui.sanitize import excerpt

INSTALL_HINT = "pip install 'replay_tui[langgraph]'"
GRAPH_SETTINGS = ("base_url", "model", "api_key", "temperature", "seed", "max_tokens", "timeout", "retries")
"""Settings the CLI and the TUI offer to a graph factory (each passed only if the factory accepts it)."""


def langgraph_available() -> bool:
    """True when the ``langgraph`` package can be imported."""
    try:
        return importlib.util.find_spec("langgraph") is not None
    except (ImportError, ValueError):
        return False


def require_langgraph() -> None:
    """Raise :class:`PolicyLoadError` with the install hint when LangGraph is missing."""
    if not langgraph_available():
        raise PolicyLoadError(f"LangGraph is not installed: {INSTALL_HINT}")


def call_factory(factory: Callable[..., Any], settings: Mapping[str, Any] | None = None) -> Any:
    """Call ``factory`` with the entries of ``settings`` it accepts (all of them if it takes ``**kwargs``);
    entries whose value is None are left to the factory's defaults."""
    given = {k: v for k, v in dict(settings or {}).items() if v is not None}
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return factory()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return factory(**given)
    accepted = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return factory(**{k: v for k, v in given.items() if k in accepted})


def graph_settings(llm: Mapping[str, Any] | None) -> dict[str, Any]:
    """The keyword arguments a graph factory is offered, from LLM settings (an LlmSettings dict):
    ``base_url``, ``model``, ``api_key`` (read from ``api_key_env``), ``temperature``, ``seed``,
    ``max_tokens``, ``timeout``, ``retries``."""
    data = dict(llm or {})
    out = {key: data[key] for key in GRAPH_SETTINGS if key in data and key != "api_key"}
    key_env = data.get("api_key_env") or "OPENAI_API_KEY"
    out["api_key"] = data.get("api_key") or os.environ.get(key_env)
    return out


def _is_graph(obj: Any) -> bool:
    return callable(getattr(obj, "invoke", None))


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _message_role(message: Any) -> str | None:
    if isinstance(message, Mapping):
        role = message.get("role") or message.get("type")
    else:
        role = getattr(message, "type", None) or getattr(message, "role", None)
    if role in ("ai", "assistant", "AIMessage", "AIMessageChunk"):
        return "assistant"
    return str(role) if role else None


def _calls_of_message(message: Any) -> list[tuple[Any, Any]]:
    calls = []
    for call in _get(message, "tool_calls") or []:
        function = _get(call, "function")
        source = function if function is not None else call
        arguments = _get(source, "arguments")
        if arguments is None:
            arguments = _get(source, "args")
        calls.append((_get(source, "name"), arguments))
    return calls


def _content_of(message: Any) -> str:
    content = _get(message, "content")
    return content if isinstance(content, str) else ("" if content is None else str(content))


class LangGraphPolicy(ThreadLocalTrace):
    """Wraps a compiled graph (anything with ``invoke``) as a policy; see the module docstring.

    ``factory`` (called with the accepted ``factory_kwargs``) builds the graph instead; ``config`` is
    passed to every ``invoke`` (e.g. ``{"recursion_limit": 10}``). Thread-safe when the graph is
    (a compiled graph without a checkpointer is); ``last_trace`` is per thread.
    """

    def __init__(
        self,
        graph: Any = None,
        *,
        factory: Callable[..., Any] | None = None,
        factory_kwargs: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        name: str = "langgraph",
    ):
        if (graph is None) == (factory is None):
            raise ValueError("give a compiled graph or a factory for one, not both")
        if graph is None:
            assert factory is not None
            graph = call_factory(factory, factory_kwargs)
        if not _is_graph(graph) and callable(getattr(graph, "compile", None)):
            graph = graph.compile()  # a StateGraph builder, not yet compiled
        if not _is_graph(graph):
            raise TypeError(f"{type(graph).__name__} is not a compiled LangGraph graph (it has no invoke method)")
        self.graph = graph
        self.config = dict(config or {})
        self.name = name
        self._local = threading.local()

    @classmethod
    def from_spec(cls, spec: str, settings: Mapping[str, Any] | None = None, **kwargs: Any) -> LangGraphPolicy:
        """Load ``module:attr`` or ``file.py:attr`` (attr defaults to ``graph``): a compiled graph, a
        StateGraph builder, a LangGraphPolicy, or a factory called with the ``settings`` it accepts
        (see :data:`GRAPH_SETTINGS`). Raises :class:`PolicyLoadError` with one line."""
        target, attr = split_spec(spec, "graph")
        try:
            module = _import_target(target)
        except PolicyLoadError as exc:
            if not langgraph_available():
                raise PolicyLoadError(f"cannot load {spec!r}: LangGraph is not installed: {INSTALL_HINT}") from None
            raise exc from None
        obj: Any = resolve_attr(module, target, attr)
        try:
            if isinstance(obj, LangGraphPolicy):
                return obj
            if _is_graph(obj) or (not inspect.isfunction(obj) and callable(getattr(obj, "compile", None))):
                return cls(obj, **kwargs)
            if callable(obj):
                built = call_factory(obj, settings)
                if isinstance(built, LangGraphPolicy):
                    return built
                return cls(built, **kwargs)
        except PolicyLoadError:
            raise
        except Exception as exc:
            raise PolicyLoadError(f"building the graph {spec!r} failed: {type(exc).__name__}: {exc}") from None
        raise PolicyLoadError(f"{spec!r} is a {type(obj).__name__}, not a graph or a factory for one")

    # -- the policy protocol ---------------------------------------------------------------------
    def graph_input(
        self,
        observation: str,
        state: str,
        available_actions: list[str],
        llm_prompt_repr: str | None,
        recorded_step: Mapping[str, Any] | None = None,
    ) -> tuple[dict[str, Any], Callable[[Any, Any], Decision], list[str]]:
        """The graph's input state for a step, how a tool call is read (name, arguments -> Decision)
        and warnings about the input; raises PromptError or PolicyFailure (``bad_prompt``)."""
        step = recorded_step or {}
        label = step.get("step_label", step.get("step_number"))
        common = {
            "observation": observation,
            "llm_prompt": llm_prompt_repr,
            "session_id": step.get("session_id"),
            "step_label": None if label is None else str(label),
        }
        if is_tool_call_step(recorded_step):
            seen = observation or step.get("observation_before_llm") or ""
            messages = request_messages(step.get("messages"), seen if isinstance(seen, str) else str(seen))
            schemas, notes = request_tools(
                step.get("tools"), step.get("llm_action_name"), step.get("llm_action_arguments")
            )
            offered = tool_names(schemas)
            log_state = step.get("log_state")
            data = {
                **common,
                "state": log_state if isinstance(log_state, str) else None,
                "available_actions": offered,
                "messages": messages,
                "tools": schemas,
                "format": step.get("format"),
            }
            return data, lambda name, arguments: decide_call(name, arguments, offered), notes
        tools = build_tools(available_actions, state)
        messages = build_messages(llm_prompt_repr, observation, state, tools)
        data = {
            **common,
            "state": state,
            "available_actions": list(available_actions),
            "messages": messages,
            "tools": [tool.schema() for tool in tools],
        }
        return data, lambda name, arguments: decide(name, arguments, tools), []

    def predict_action(
        self,
        observation: str,
        state: str,
        available_actions: list[str],
        llm_prompt_repr: str | None,
        recorded_step: dict[str, Any] | None = None,
    ) -> str:
        self.last_trace = None
        trace: dict[str, Any] = {"policy": "langgraph", "graph": type(self.graph).__name__}
        if is_answer_step(recorded_step):  # the graph contract returns a tool call or an env action
            message = "a plain-answer step (no tool call) is not asked of a graph: use --mode llm or stub"
            raise self.record_failure(trace, PolicyFailure("bad_prompt", message))
        if is_tool_call_step(recorded_step):
            assert recorded_step is not None
            trace["format"] = recorded_step.get("format")
        try:
            data, read_call, notes = self.graph_input(
                observation, state, available_actions, llm_prompt_repr, recorded_step
            )
        except PromptError as exc:
            raise self.record_failure(trace, PolicyFailure("bad_prompt", str(exc))) from exc
        except PolicyFailure as exc:
            raise self.record_failure(trace, exc) from None
        trace["request"] = {"messages": data["messages"], "tools": data["tools"]}
        if notes:
            trace["warnings"] = list(notes)
        started = time.monotonic()
        failure: PolicyFailure | None = None
        try:
            output = self.graph.invoke(data, config=self.config or None)
        except PolicyFailure as exc:
            failure = exc
        except Exception as exc:
            failure = PolicyFailure("graph_error", f"{type(exc).__name__}: {excerpt(str(exc), 300)}")
        trace["latency_ms"] = round((time.monotonic() - started) * 1000, 1)
        if failure is not None:
            raise self.record_failure(trace, failure)
        graph_trace = _get(output, "trace")
        if isinstance(graph_trace, Mapping):
            trace["graph"] = dict(graph_trace)
            for key in ("tokens", "response"):
                if key in graph_trace:
                    trace[key] = graph_trace[key]
        try:
            # A general step's prompt holds the recorded agent's earlier calls: only messages the graph
            # added can hold its answer.
            known = len(data["messages"]) if "format" in data else 0
            action, decision = self._action_from(output, read_call, known)
        except PolicyFailure as exc:
            self.record_failure(trace, exc)
            raise
        tool_call = None if decision is None else {"name": decision.tool, "arguments": decision.arguments}
        trace.update(tool_call=tool_call, action=action)
        if decision is not None and decision.warnings:
            trace["warnings"] = [*notes, *decision.warnings]
        self.last_trace = trace
        return action

    @staticmethod
    def _action_from(
        output: Any, read_call: Callable[[Any, Any], Decision], known: int = 0
    ) -> tuple[str, Decision | None]:
        """The action and the decision behind it (None for an ``action`` string) of a final state;
        ``known`` input messages at the head of its ``messages`` are not read as the graph's answer."""
        if isinstance(output, str):
            return output, None
        failure = _get(output, "failure")
        if isinstance(failure, Mapping) and failure.get("kind"):
            raise PolicyFailure(
                str(failure["kind"]), str(failure.get("message") or failure["kind"]), failure.get("raw")
            )
        call = _get(output, "tool_call")
        if call:
            function = _get(call, "function")
            source = function if function is not None else call
            arguments = _get(source, "arguments")
            if arguments is None:
                arguments = _get(source, "args")
            decision = read_call(_get(source, "name"), arguments)
            return decision.action, decision
        messages = list(_get(output, "messages") or [])
        if known and len(messages) >= known:
            messages = messages[known:]
        for message in reversed(messages):
            if _message_role(message) != "assistant":
                continue
            calls = _calls_of_message(message)
            if not calls:
                content = _content_of(message)
                said = f"; it said: {excerpt(content, 120)}" if content else ""
                raise PolicyFailure(
                    "no_tool_call", f"the graph's last answer has no tool call{said}", excerpt(content, 1000) or None
                )
            decision = read_call(calls[0][0], calls[0][1])
            return decision.action, decision
        action = _get(output, "action")
        if isinstance(action, str) and action.strip():
            return action, None
        keys = sorted(output) if isinstance(output, Mapping) else type(output).__name__
        raise PolicyFailure("no_tool_call", f"the graph returned no tool call (final state: {keys})")
