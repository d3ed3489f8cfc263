"""LlmPolicy: ask an LLM behind any OpenAI-compatible endpoint for each recorded step's decision.

For every step the policy sends the recorded prompt (``llm_prompt``, parsed with ``ast.literal_eval``,
never ``eval``) with tools generated from the step's ``available_actions``. Each tool's JSON schema
comes from a pydantic model (an explicit format specification): ``Search{keywords, max_price?}``,
``select_item{item_id}``, ``Next``, ``Prev``, ``Back_to_Search``, ``Description``, ``Features``,
``Reviews``, ``Buy_Now`` (no arguments) and ``select_option{value}`` whose value is one of the page's
options. ``tool_choice`` is ``required``; the call that comes back is validated against its schema
and formatted as the env action the demos record.

A step whose decision is a plain answer (``recorded_step["answer"]``: an inspect_ai QA or
multiple-choice sample) is re-asked with its recorded messages and no tools; the model's text is
the predicted answer.

A step of any other tool-calling agent's log (``recorded_step["tool_call"]`` true: OpenAI chat,
inspect_ai, tau2-bench...) is re-predicted teacher-forced instead: the recorded ``messages`` and
``tools`` are sent (normalised only as far as a chat-completions server needs, see
:func:`request_messages`) and the model's first tool call comes back as
:func:`~replay_tui.episodes.model.call_text` (``name({"a": 1})``), not validated against the tools: a
name the step did not offer is a warning, for the judge to score.

Anything that keeps the model from producing a valid action is raised as a :class:`PolicyFailure`
of one kind (``timeout``, ``http_error``, ``connection_error``, ``bad_response``, ``api_error``,
``no_tool_call``, ``unknown_tool``, ``invalid_arguments``, ``bad_prompt``, ``not_recorded``): the
Runner records it on the step and counts it in ``SummaryReport.failures_by_kind``.

Every exchange goes through the SQLite :class:`~replay_tui.policies.llm_cache.ResponseCache` (unless
disabled) and, optionally, a :class:`~replay_tui.policies.cache.Cassette` that records a whole run
or replays one without any network.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from types import ModuleType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, create_model

from replay_tui.actions import CANONICAL_TOOLS, format_env_action
from replay_tui.episodes.model import ToolCall, call_text, infer_tools
from replay_tui.episodes.recorded import PromptError, arguments_from_json, parse_prompt
from replay_tui.policies.base import PolicyFailure, ThreadLocalTrace
from replay_tui.policies.cache import Cassette, CassetteError, request_key
from replay_tui.policies.llm_cache import ResponseCache
from replay_tui.policies.retry import retry_after_seconds, retry_delay
from replay_tui.sanitize import excerpt
from replay_tui.webshop import ITEM, RESULT, SEARCH

DUMMY_API_KEY = "sk-no-key-needed"
"""Sent when no API key is set and a ``base_url`` points at a local server (which ignores it)."""

RAW_CHARS = 1000
"""How much of a raw response a failure or a trace keeps."""

FAILURE_KINDS: tuple[str, ...] = (
    "timeout",
    "http_error",
    "connection_error",
    "bad_response",
    "api_error",
    "no_tool_call",
    "unknown_tool",
    "invalid_arguments",
    "bad_prompt",
    "not_recorded",
)


MAX_RESPONSE_BYTES = 16 * 2**20
"""A chat completion is a few KB; a body past this is a broken or hostile server, not an answer to cache."""


class _TooLarge(Exception):
    """An answer over :data:`MAX_RESPONSE_BYTES`, cut while streaming."""


class _Deadline(Exception):
    """No complete answer within the request's deadline."""


class LlmConfigError(ValueError):
    """Settings an LlmPolicy cannot work with (no model, no API key, openai missing...); one line."""


# -- tools: the explicit format specification ------------------------------------------------------

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchArguments(_Arguments):
    keywords: NonEmpty = Field(description="a short keyword query for the product catalogue")
    max_price: float | None = Field(default=None, description="optional budget in dollars")


class SelectItemArguments(_Arguments):
    item_id: NonEmpty = Field(description="the ID of a listed item, exactly as shown (e.g. B0XXXXXXXX)")


class NoArguments(_Arguments):
    pass


class OptionArguments(_Arguments):
    value: NonEmpty = Field(description="the option value, exactly as shown on the page")


TOOL_DESCRIPTIONS: dict[str, str] = {
    "Search": "Search the catalogue with a short keyword query.",
    "select_item": "Open the product page of a listed item by its ID.",
    "Next": "Show the next page of search results.",
    "Prev": "Go back one page: the previous page of results, or from a product page to the results.",
    "Back_to_Search": "Return to the search page to try different keywords.",
    "Description": "Read the product's description.",
    "Features": "Read the product's features.",
    "Reviews": "Read the product's reviews.",
    "Buy_Now": "Buy the product with the options selected so far.",
    "select_option": "Choose one of the product's options (size, colour, ...) by its exact value.",
}

_ARGUMENT_MODELS: dict[str, type[BaseModel]] = {
    "Search": SearchArguments,
    "select_item": SelectItemArguments,
    "select_option": OptionArguments,
}

_STATE_TOOLS: dict[str, tuple[str, ...]] = {
    SEARCH: ("Search",),
    RESULT: ("select_item", "Next", "Prev", "Back_to_Search"),
    ITEM: ("Description", "Features", "Reviews", "Buy_Now", "Prev", "Back_to_Search"),
}


def _fold(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in " _-.\t")


_TOOL_BY_FOLD: dict[str, str] = {_fold(tool): tool for tool in CANONICAL_TOOLS} | {"<prev": "Prev", "next>": "Next"}


def tool_for_available_action(entry: str) -> str | None:
    """The canonical tool an ``available_actions`` entry names (``"Back to Search"`` too), or None when
    the entry is something else: an option value on an item page."""
    return _TOOL_BY_FOLD.get(_fold(entry))


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


@lru_cache(maxsize=512)
def _option_model(values: tuple[str, ...]) -> type[BaseModel]:
    choice = Literal[values]  # type: ignore[valid-type]
    return create_model(
        "OptionChoice",
        __base__=_Arguments,
        value=(choice, Field(description="one of the option values shown on the page, exactly")),
    )


@lru_cache(maxsize=512)
def _parameters(model: type[BaseModel]) -> str:
    return json.dumps(_strip_titles(model.model_json_schema()), sort_keys=True)


@dataclass(frozen=True)
class ToolSpec:
    """One tool offered to the model: its name, description and argument model (the schema)."""

    name: str
    description: str
    arguments: type[BaseModel]

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments (pydantic's, without titles)."""
        return json.loads(_parameters(self.arguments))

    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters()},
        }

    def validate(self, arguments: Any) -> dict[str, Any]:
        """The validated arguments (None values dropped); raises pydantic's ValidationError."""
        return self.arguments.model_validate(arguments).model_dump(exclude_none=True)

    def action(self, arguments: Mapping[str, Any]) -> str:
        """The env action string for validated arguments."""
        return format_env_action(self.name, arguments)


def build_tools(available_actions: Sequence[str], state: str | None = None) -> list[ToolSpec]:
    """The tools for a step, in the order of ``available_actions``.

    Entries naming a tool (any case, ``Back to Search`` or ``Back_to_Search``) become that tool;
    every other entry is an option value, gathered into one ``select_option`` tool whose ``value``
    must be one of them. With no usable entry, the state's usual tools are offered.
    """
    names: list[str] = []
    options: list[str] = []
    for entry in available_actions:
        text = str(entry).strip()
        if not text:
            continue
        tool = tool_for_available_action(text)
        if tool is None:
            if text not in options:
                options.append(text)
        elif tool not in names:
            names.append(tool)
    if not names and not options:
        names = list(_STATE_TOOLS.get(state or "", CANONICAL_TOOLS))
        names = [n for n in names if n != "select_option"]
    if options and "select_option" not in names:
        names.append("select_option")
    tools = []
    for name in names:
        if name == "select_option" and options:
            model = _option_model(tuple(options))
        else:
            model = _ARGUMENT_MODELS.get(name, NoArguments)
        tools.append(ToolSpec(name=name, description=TOOL_DESCRIPTIONS[name], arguments=model))
    return tools


# -- messages ---------------------------------------------------------------------------------------

_PAGES = {SEARCH: "the search page", RESULT: "a page of search results", ITEM: "a product page"}
_MESSAGE_KEYS = ("name", "tool_calls", "tool_call_id")


def _signature(tool: ToolSpec) -> str:
    return f"{tool.name}({', '.join(tool.arguments.model_fields)})"


def default_messages(observation: str, state: str | None, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Messages for a step that recorded no prompt (item-page actions): a system prompt in the demos'
    style listing the tools, and the observation."""
    lines = [
        "You are a meticulous online shopping assistant operating the WebShop website for a customer. "
        "Your goal is to buy the single product that best satisfies the customer's instruction: the right "
        "product type, every requested attribute and option, and a price below the stated budget.",
        f"You are on {_PAGES.get(state or '', 'a WebShop page')}. Available tools:",
        *(f"- {_signature(tool)}: {tool.description}" for tool in tools),
        "Rules:",
        "- Call exactly one of the available tools per turn; do not answer in plain text.",
        "- Base every decision on the current observation.",
    ]
    text = (
        observation
        if observation.lstrip().startswith("Current observation:")
        else (f"Current observation:\n{observation}")
    )
    return [{"role": "system", "content": "\n".join(lines)}, {"role": "user", "content": text}]


def build_messages(
    llm_prompt_repr: str | None, observation: str, state: str | None, tools: Sequence[ToolSpec]
) -> list[dict[str, Any]]:
    """The chat messages for a step: the recorded prompt when there is one, else :func:`default_messages`.

    Raises :class:`~replay_tui.formats.webshop_demos.contract.PromptError` for a prompt that cannot be parsed.
    """
    if llm_prompt_repr and llm_prompt_repr.strip():
        messages = []
        for message in parse_prompt(llm_prompt_repr):
            data: dict[str, Any] = {"role": message["role"], "content": message["content"]}
            data.update({key: message[key] for key in _MESSAGE_KEYS if key in message})
            messages.append(data)
        if messages:
            return messages
    return default_messages(observation, state, tools)


# -- reading a response -----------------------------------------------------------------------------


@dataclass
class Decision:
    """A validated tool call and the env action it maps to."""

    tool: str
    arguments: dict[str, Any]
    action: str
    warnings: list[str] = field(default_factory=list)


def _raw(value: Any, limit: int = RAW_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        parts.append(f"{location}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)


def response_message(response: Any) -> dict[str, Any]:
    """The first choice's message of a chat completion body (``{}`` when there is none)."""
    if not isinstance(response, dict):
        return {}
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        return message if isinstance(message, dict) else {}
    return {}


def _tool_calls(message: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    calls = []
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            function = call.get("function")
            if not isinstance(function, dict):
                function = call
            calls.append((function.get("name"), function.get("arguments", function.get("args"))))
    legacy = message.get("function_call")
    if not calls and isinstance(legacy, dict):
        calls.append((legacy.get("name"), legacy.get("arguments")))
    return calls


def decide(name: Any, arguments: Any, tools: Sequence[ToolSpec]) -> Decision:
    """Validate one tool call against the offered tools and format its env action.

    ``arguments`` may be a JSON string (the OpenAI wire format), a mapping, or None. Raises
    :class:`PolicyFailure` of kind ``unknown_tool`` or ``invalid_arguments``.
    """
    offered = {tool.name: tool for tool in tools}
    call_raw = _raw({"name": name, "arguments": arguments})
    if not isinstance(name, str) or name not in offered:
        raise PolicyFailure(
            "unknown_tool",
            f"the model called {name!r}, not one of the offered tools ({', '.join(offered)})",
            call_raw,
        )
    tool = offered[name]
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            raise PolicyFailure("invalid_arguments", f"{name}: arguments are not JSON ({exc})", call_raw) from None
    if not isinstance(arguments, Mapping):
        raise PolicyFailure(
            "invalid_arguments", f"{name}: arguments must be a JSON object, got {type(arguments).__name__}", call_raw
        )
    try:
        validated = tool.validate(dict(arguments))
    except ValidationError as exc:
        raise PolicyFailure("invalid_arguments", f"{name}: {_validation_message(exc)}", call_raw) from None
    return Decision(tool=name, arguments=validated, action=tool.action(validated))


def _answer_message(response: Any) -> dict[str, Any]:
    """The first choice's message of a chat completion body; raises :class:`PolicyFailure`
    (``bad_response``, ``api_error``) when the body is not one or is the server's error."""
    if not isinstance(response, dict):
        raise PolicyFailure(
            "bad_response", f"the answer is a JSON {type(response).__name__}, not an object", _raw(response)
        )
    if "choices" not in response and isinstance(response.get("error"), (dict, str)):
        error = response["error"]
        message = error.get("message", error) if isinstance(error, dict) else error
        raise PolicyFailure("api_error", f"the server answered with an error: {_raw(message, 200)}", _raw(response))
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices:
        raise PolicyFailure("bad_response", "the answer has no choices", _raw(response))
    message = response_message(response)
    return message


def response_calls(response: Any) -> list[tuple[Any, Any]]:
    """The ``(name, arguments)`` tool calls of a chat completion body, at least one; raises
    :class:`PolicyFailure` (``bad_response``, ``api_error``, ``no_tool_call``) when there is none."""
    message = _answer_message(response)
    calls = _tool_calls(message)
    if not calls:
        content = message.get("content")
        said = f"; it said: {excerpt(str(content), 120)}" if content else ""
        raise PolicyFailure(
            "no_tool_call", f"the model answered without a tool call{said}", _raw(content if content else response)
        )
    return calls


def interpret_response(response: Any, tools: Sequence[ToolSpec]) -> Decision:
    """Turn a chat completion body into a :class:`Decision`, or raise :class:`PolicyFailure`."""
    calls = response_calls(response)
    name, arguments = calls[0]
    decision = decide(name, arguments, tools)
    if len(calls) > 1:
        decision.warnings.append(f"the model made {len(calls)} tool calls; the first was used")
    return decision


# -- general tool-calling steps (any agent's log, teacher-forced) ----------------------------------

OPENAI_ROLES = frozenset({"system", "user", "assistant", "tool", "developer"})
"""Roles a chat-completions request may carry; a message of another role is sent as ``user``."""


def is_tool_call_step(recorded_step: Mapping[str, Any] | None) -> bool:
    """True for a step of a general tool-calling log (``recorded_step["tool_call"]``), False for WebShop."""
    return isinstance(recorded_step, Mapping) and bool(recorded_step.get("tool_call"))


def is_answer_step(recorded_step: Mapping[str, Any] | None) -> bool:
    """True for a step whose decision is a plain answer (``recorded_step["answer"]``), no tool call."""
    return isinstance(recorded_step, Mapping) and bool(recorded_step.get("answer"))


def interpret_answer_response(response: Any) -> Decision:
    """A chat completion body's text as a plain-answer step's :class:`Decision` (the action is the
    text; a tool call the model made instead is ignored with a warning), or raise
    :class:`PolicyFailure` (``bad_response``, ``api_error``) when there is no text."""
    message = _answer_message(response)
    content = message.get("content")
    if isinstance(content, list):  # content parts: their text
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(content, str) or not content.strip():
        raise PolicyFailure("bad_response", "the model gave no answer text", _raw(response))
    warnings = ["the model also made a tool call; its text was used"] if _tool_calls(message) else []
    return Decision(tool="", arguments={}, action=content, warnings=warnings)


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    if arguments is None:
        return "{}"
    return json.dumps(arguments, ensure_ascii=False, default=str)


def _content_text(content: Any) -> Any:
    if content is None or isinstance(content, (str, list)):
        return content  # a list: content parts, sent as recorded
    return json.dumps(content, ensure_ascii=False, default=str)


def request_messages(messages: Any, observation: str = "") -> list[dict[str, Any]]:
    """A recorded prompt (OpenAI chat message dicts) in a shape chat-completions servers accept.

    Messages already in that shape are sent unchanged. Otherwise: an assistant message with tool
    calls and no text gets ``content: null``; every call an ``id`` (``call_<n>`` when it had none),
    ``type: "function"`` and JSON-string arguments; a tool result without ``tool_call_id`` the id of
    the oldest call not yet answered; other content ``""`` (``None``) or JSON text; roles outside
    :data:`OPENAI_ROLES` become ``user``. With no messages, the observation is the one user message.
    Raises :class:`PolicyFailure` (``bad_prompt``) when there is nothing to send.
    """
    if messages is None or (isinstance(messages, (list, tuple)) and not messages):
        if not observation.strip():
            raise PolicyFailure("bad_prompt", "the step recorded no messages and no observation")
        return [{"role": "user", "content": observation}]
    if not isinstance(messages, (list, tuple)):
        raise PolicyFailure("bad_prompt", f"the recorded messages are a {type(messages).__name__}, not a list")
    out: list[dict[str, Any]] = []
    pending: list[str] = []
    counter = 0
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise PolicyFailure("bad_prompt", f"recorded message {index} is not a chat message with a role")
        role = message["role"] if message["role"] in OPENAI_ROLES else "user"
        entry: dict[str, Any] = {"role": role, "content": _content_text(message.get("content"))}
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls:
            sent = []
            for call in calls if isinstance(calls, list) else []:
                if not isinstance(call, Mapping):
                    continue
                function = call.get("function")
                source = function if isinstance(function, Mapping) else call
                counter += 1
                given = call.get("id")
                call_id = given if isinstance(given, str) and given else f"call_{counter}"
                pending.append(call_id)
                arguments = source.get("arguments", source.get("args"))
                sent.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": str(source.get("name") or ""), "arguments": _arguments_text(arguments)},
                    }
                )
            if sent:
                entry["tool_calls"] = sent
                if not entry["content"]:
                    entry["content"] = None
        if entry["content"] is None and "tool_calls" not in entry:
            entry["content"] = ""
        if role == "tool":
            answered = message.get("tool_call_id")
            if isinstance(answered, str) and answered:
                if answered in pending:
                    pending.remove(answered)
            else:
                answered = pending.pop(0) if pending else f"call_{counter}"
            entry["tool_call_id"] = answered
        name = message.get("name")
        if isinstance(name, str) and name and role != "tool":
            entry["name"] = name
        out.append(entry)
    return out


def inferred_tool(name: str, arguments: Any) -> dict[str, Any]:
    """An OpenAI tool schema for one recorded call (:func:`replay_tui.episodes.model.infer_tools` on it)."""
    try:
        values = arguments_from_json(arguments)
    except ValueError:
        values = {}
    values = values if isinstance(values, Mapping) else {}
    return infer_tools([ToolCall(name=name, arguments={str(key): value for key, value in values.items()})])[0]


def request_tools(
    tools: Any, recorded_name: Any = None, recorded_arguments: Any = None
) -> tuple[list[dict], list[str]]:
    """The recorded tool schemas as OpenAI ``tools`` entries, and warnings about what was left out.

    Entries in the OpenAI shape are sent unchanged; a bare ``{"name", "description", "parameters"}``
    is wrapped; entries without a name are dropped. With no tool left, the recorded call's tool is
    offered (its schema inferred from the call) so the model can still answer with a call.
    """
    out: list[dict[str, Any]] = []
    warnings: list[str] = []
    dropped = 0
    for tool in tools if isinstance(tools, (list, tuple)) else []:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str) and function["name"]:
            out.append({**tool, "type": tool.get("type") or "function"})
        elif isinstance(tool, Mapping) and isinstance(tool.get("name"), str) and tool["name"]:
            spec = {key: tool[key] for key in ("name", "description", "parameters", "strict") if key in tool}
            out.append({"type": "function", "function": spec})
        else:
            dropped += 1
    if dropped:
        warnings.append(f"{dropped} recorded tool(s) without a name were not offered")
    if not out and isinstance(recorded_name, str) and recorded_name:
        out.append(inferred_tool(recorded_name, recorded_arguments))
        warnings.append(f"the step recorded no tools; offered {recorded_name} with a schema inferred from its call")
    return out, warnings


def tool_names(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names of OpenAI ``tools`` entries, in order."""
    names = []
    for tool in tools:
        function = tool.get("function")
        name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decide_call(name: Any, arguments: Any, offered: Sequence[str]) -> Decision:
    """One tool call of a general step as its canonical text (``name({"a": 1})``), unvalidated.

    A name outside ``offered`` is returned all the same (the judge scores it) with a warning.
    Raises :class:`PolicyFailure`: ``unknown_tool`` when the call has no name, ``invalid_arguments``
    when its arguments are not a JSON object.
    """
    call_raw = _raw({"name": name, "arguments": arguments})
    if not isinstance(name, str) or not name.strip():
        raise PolicyFailure("unknown_tool", f"the model's tool call has no name ({name!r})", call_raw)
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments, parse_constant=_no_constants)
        except (ValueError, RecursionError) as exc:
            raise PolicyFailure("invalid_arguments", f"{name}: arguments are not JSON ({exc})", call_raw) from None
    if not isinstance(arguments, Mapping):
        raise PolicyFailure(
            "invalid_arguments", f"{name}: arguments must be a JSON object, got {type(arguments).__name__}", call_raw
        )
    arguments = dict(arguments)
    try:
        action = call_text(name, arguments)
    except TypeError as exc:  # orjson: an integer beyond 64 bits, nesting too deep
        raise PolicyFailure(
            "invalid_arguments", f"{name}: arguments cannot be written as JSON ({exc})", call_raw
        ) from None
    decision = Decision(tool=name, arguments=arguments, action=action)
    if name not in offered:
        listed = excerpt(", ".join(offered), 200) if offered else "none"
        decision.warnings.append(f"the model called {name!r}, not one of the offered tools ({listed})")
    return decision


def interpret_call_response(response: Any, offered: Sequence[str]) -> Decision:
    """A chat completion body's first tool call as a general step's :class:`Decision`, or raise
    :class:`PolicyFailure` (see :func:`response_calls` and :func:`decide_call`)."""
    calls = response_calls(response)
    name, arguments = calls[0]
    decision = decide_call(name, arguments, offered)
    if len(calls) > 1:
        decision.warnings.append(f"the model made {len(calls)} tool calls; the first was used")
    return decision


def _tokens(response: Any) -> dict[str, int] | None:
    usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict):
        return None
    tokens = {name: usage.get(f"{name}_tokens") for name in ("prompt", "completion", "total")}
    return {k: v for k, v in tokens.items() if isinstance(v, int)} or None


def response_summary(response: Any) -> dict[str, Any]:
    """What a trace keeps of a response: id, finish reason, content excerpt, tool calls, usage."""
    message = response_message(response)
    choices = response.get("choices") if isinstance(response, dict) else None
    finish = (
        choices[0].get("finish_reason")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict)
        else None
    )
    content = message.get("content")
    summary = {
        "id": response.get("id") if isinstance(response, dict) else None,
        "finish_reason": finish,
        "content": _raw(content, 2000) if content else None,
        "tool_calls": [
            {"name": name, "arguments": _raw(args, 2000) if args is not None else None}
            for name, args in _tool_calls(message)
        ],
    }
    reasoning = message.get("reasoning_content") or message.get("reasoning")  # vLLM, DeepSeek, OpenRouter
    if reasoning:  # (only when sent: a trace without it stays as it was)
        summary["reasoning"] = _raw(reasoning, 4000)
    return summary


# -- settings ---------------------------------------------------------------------------------------


@dataclass
class LlmSettings:
    """Everything an LlmPolicy needs; JSON-friendly (``to_dict``/``from_dict``) for the TUI and configs."""

    model: str = ""
    base_url: str | None = None
    """An OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1`` (default: ``$OPENAI_BASE_URL``,
    else OpenAI)."""
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int | None = None
    tool_choice: str = "required"
    timeout: float = 60.0
    """Seconds to wait for one answer."""
    retries: int = 2
    """Further attempts after a timeout, a connection error, HTTP 408/409/429 or 5xx."""
    backoff: float = 1.0
    """The bound of the first retry's wait, doubled for each further one; each wait is drawn uniformly
    below its bound (full jitter). A Retry-After or retry-after-ms header wins (see retry.py)."""
    max_backoff: float = 30.0
    cache: bool = True
    cache_dir: str | None = None
    retry_failures: bool = False
    """Ask again for requests whose cached outcome is a transport failure (timeout, HTTP error...)."""
    record: str | None = None
    """Write every exchange of the run to this cassette file (on ``close()``)."""
    replay: str | None = None
    """Answer only from this cassette; never contact a server."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> LlmSettings:
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise LlmConfigError(f"unknown LLM setting(s): {', '.join(unknown)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def check(self) -> None:
        """Raise :class:`LlmConfigError` for values no request could use."""
        if self.record and self.replay:
            raise LlmConfigError("--record and --replay exclude each other")
        if not self.model and not self.replay:
            raise LlmConfigError("LLM mode needs a model name (--model)")
        if self.timeout <= 0:
            raise LlmConfigError("--timeout must be positive")
        if self.retries < 0:
            raise LlmConfigError("--retries must be 0 or more")
        if self.backoff < 0 or self.max_backoff < 0:
            raise LlmConfigError("--backoff must be 0 or more")
        if self.temperature < 0:
            raise LlmConfigError("--temperature must be 0 or more")
        if self.tool_choice not in ("required", "auto"):
            raise LlmConfigError("tool_choice must be 'required' or 'auto'")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise LlmConfigError("--max-tokens must be at least 1")

    def describe(self) -> str:
        where = self.base_url or "OpenAI"
        source = f" · replay {self.replay}" if self.replay else ""
        return f"llm {self.model or '?'} @ {where}{source}"


def endpoint_identity(base_url: Any) -> str:
    """The server a policy talks to, as the cache scopes it: the base URL (``$OPENAI_BASE_URL`` or
    OpenAI's own when none is given), lower-cased scheme and host, without a trailing slash."""
    text = str(base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").strip()
    scheme, sep, rest = text.partition("://")
    if sep:
        host, slash, path = rest.partition("/")
        text = f"{scheme.lower()}://{host.lower()}{slash}{path}"
    return text.rstrip("/")


def _openai() -> ModuleType:
    try:
        import openai
    except ImportError:
        raise LlmConfigError("LLM mode needs the openai package: pip install 'replay_tui[llm]'") from None
    return openai


# -- the policy -------------------------------------------------------------------------------------


class LlmPolicy(ThreadLocalTrace):
    """A policy that asks an OpenAI-compatible chat endpoint for each step's tool call.

    Thread-safe: one instance may serve several replay workers (``--jobs``); ``last_trace`` is per
    thread. Call :meth:`close` after a run to write a ``record`` cassette and release the client.

    ``last_trace`` (a dict, set after every call, failures included) holds: ``policy``, ``model``,
    ``base_url``, ``request`` (the exact request body: model, messages, tools, tool_choice,
    temperature, seed, max_tokens), ``sample``, ``key`` (the cache key), ``cache`` (``hit``, ``miss``,
    ``off`` or ``cassette``), ``cache_hit``, ``latency_ms`` and ``attempts`` (of the original request;
    a cache hit reports the recorded ones), ``response`` (id, finish_reason, content excerpt,
    tool_calls), ``tokens`` (prompt/completion/total when the server reports usage), ``tool_call``
    (the validated name and arguments), ``action``, ``failure`` (kind, message, raw) and ``warnings``;
    a general tool-calling step's trace adds ``format`` and ``tools_inferred``.
    """

    def __init__(
        self,
        settings: LlmSettings | Mapping[str, Any] | None = None,
        *,
        client: Any = None,
        sleep: Any = time.sleep,
        **overrides: Any,
    ):
        base = settings.to_dict() if isinstance(settings, LlmSettings) else dict(settings or {})
        settings = LlmSettings.from_dict({**base, **overrides})  # a copy: the caller's object is never changed
        self.settings = settings
        self.cassette: Cassette | None = None
        if settings.replay:
            try:
                self.cassette = Cassette.load(settings.replay)
            except CassetteError as exc:
                raise LlmConfigError(str(exc)) from None
            if not settings.model and self.cassette.model:
                settings.model = self.cassette.model
        settings.check()
        if settings.record:
            self.cassette = Cassette(settings.record, mode="record", model=settings.model)
        self.cache = ResponseCache(settings.cache_dir) if settings.cache and not settings.replay else None
        self.name = f"llm:{settings.model}"
        self._sleep = sleep
        self._random = random.Random()  # the jitter of retries (retry.py)
        self._local = threading.local()
        self._lock = threading.Lock()
        self.requests_sent = 0
        self.cache_hits = 0
        self._openai: ModuleType | None = None
        self.client = client
        if client is None and not settings.replay:
            self._openai = _openai()
            self.client = self._openai.OpenAI(
                api_key=self._api_key(), base_url=settings.base_url, timeout=settings.timeout, max_retries=0
            )
        elif client is not None:
            self._openai = _openai()
        self.endpoint = endpoint_identity(getattr(self.client, "base_url", None) or settings.base_url)

    def cache_key(self, key: str) -> str:
        """Where the response cache keeps a request's answer: the request key scoped to the endpoint,
        so two servers (or a fault server and the real one) never answer for each other. Cassettes
        and traces keep the bare request key: a cassette replays offline, wherever it was recorded."""
        return request_key({"endpoint": self.endpoint, "request": key})

    @classmethod
    def from_settings(cls, settings: LlmSettings | Mapping[str, Any] | None, **overrides: Any) -> LlmPolicy:
        """Build from an :class:`LlmSettings` or its dict (what ``ReplaySettings.llm`` holds)."""
        return cls(settings, **overrides)

    def _api_key(self) -> str:
        key = os.environ.get(self.settings.api_key_env or "OPENAI_API_KEY")
        if key:
            return key
        if self.settings.base_url or os.environ.get("OPENAI_BASE_URL"):
            return DUMMY_API_KEY
        raise LlmConfigError(f"set {self.settings.api_key_env} (or give --base-url for a local server)")

    # -- requests --------------------------------------------------------------------------------
    def build_request(self, messages: list[dict[str, Any]], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        """The request body (``chat.completions.create`` keyword arguments) for a step."""
        return self.request_body(messages, [tool.schema() for tool in tools])

    def request_body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The request body for messages and OpenAI ``tools`` entries: model, messages, tools,
        tool_choice (both left out when there is no tool), temperature, then seed and max_tokens
        when set."""
        s = self.settings
        request: dict[str, Any] = {"model": s.model, "messages": messages}
        if tools:
            request.update(tools=tools, tool_choice=s.tool_choice)
        request["temperature"] = float(s.temperature)
        if s.seed is not None:
            request["seed"] = s.seed
        if s.max_tokens is not None:
            request["max_tokens"] = s.max_tokens
        return request

    @staticmethod
    def key_for(request: Mapping[str, Any], sample: int = 0) -> str:
        """The cache key: everything in the request, plus the sample index of ``--repeat`` runs after the first."""
        material = dict(request)
        if sample:
            material["sample"] = sample
        return request_key(material)

    def _failure_entry(
        self, kind: str, message: str, raw: str | None, started: float, attempts: int, **extra: Any
    ) -> dict[str, Any]:
        return {
            "outcome": "failure",
            "failure": {"kind": kind, "message": message, "raw": raw, **extra},
            "latency_ms": round((time.monotonic() - started) * 1000, 1),
            "attempts": attempts,
        }

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        return retry_delay(attempt, self.settings.backoff, self.settings.max_backoff, retry_after, self._random)

    def _send(self, request: dict[str, Any]) -> str:
        """One attempt's response body, cut at ``timeout`` seconds overall (not per read) and at
        :data:`MAX_RESPONSE_BYTES`.

        httpx's timeout bounds each read, so a server trickling a byte a second, or an endless chunked
        body, would hold a step forever. The body is streamed and the deadline checked between
        chunks; the attempt runs on a daemon thread so even a server that trickles its headers cannot
        hold the replay past the deadline (the abandoned thread ends with its connection).
        """
        timeout = self.settings.timeout
        deadline = time.monotonic() + timeout
        outcome: dict[str, Any] = {}

        def attempt() -> None:
            try:
                create = self.client.chat.completions.with_streaming_response.create
                with create(**request, timeout=timeout) as raw:
                    chunks: list[bytes] = []
                    size = 0
                    for chunk in raw.iter_bytes():
                        size += len(chunk)
                        if size > MAX_RESPONSE_BYTES:
                            outcome["error"] = _TooLarge(
                                f"the server's answer is larger than {MAX_RESPONSE_BYTES // 2**20} MiB"
                            )
                            return
                        if time.monotonic() > deadline:
                            return
                        chunks.append(chunk)
                    outcome["text"] = b"".join(chunks).decode("utf-8", errors="replace")
            except BaseException as exc:  # handed to the caller, which sorts it into a failure kind
                outcome["error"] = exc

        worker = threading.Thread(target=attempt, name="llm-request", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()) + 0.05)
        if "error" in outcome:
            raise outcome["error"]
        if "text" not in outcome:
            raise _Deadline
        text: str = outcome["text"]
        return text

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request with retries; return the cache entry for its outcome (never raises)."""
        openai = self._openai
        # Set whenever a server can be asked: only a replayed cassette leaves it None, and exchange() answers
        # those from the cassette without calling ask().
        assert openai is not None, "ask() needs the openai package (a replaying policy never asks)"
        s = self.settings
        started = time.monotonic()
        entry: dict[str, Any] = {}
        for attempt in range(s.retries + 1):
            retry_after: float | None = None
            retryable = True
            with self._lock:
                self.requests_sent += 1
            try:
                text = self._send(request)
            except (openai.APITimeoutError, _Deadline):
                entry = self._failure_entry(
                    "timeout", f"no complete answer within {s.timeout:g} s", None, started, attempt + 1
                )
            except _TooLarge as exc:
                return self._failure_entry("bad_response", str(exc), None, started, attempt + 1)
            except openai.APIStatusError as exc:
                status = exc.status_code
                retryable = status in (408, 409, 429) or status >= 500
                body = _raw(exc.response.text) if getattr(exc, "response", None) is not None else None
                detail = exc.message if isinstance(getattr(exc, "message", None), str) else str(exc)
                entry = self._failure_entry(
                    "http_error", f"HTTP {status}: {excerpt(detail, 200)}", body, started, attempt + 1, status=status
                )
                retry_after = retry_after_seconds(getattr(getattr(exc, "response", None), "headers", None))
            except openai.APIConnectionError as exc:
                entry = self._failure_entry(
                    "connection_error", f"cannot reach the server: {excerpt(str(exc), 200)}", None, started, attempt + 1
                )
            except openai.OpenAIError as exc:
                retryable = False
                entry = self._failure_entry(
                    "api_error", f"{type(exc).__name__}: {excerpt(str(exc), 200)}", None, started, attempt + 1
                )
            else:
                try:
                    response = json.loads(text)
                except ValueError:
                    return self._failure_entry(
                        "bad_response", "the server's answer is not JSON", _raw(text), started, attempt + 1
                    )
                return {
                    "outcome": "response",
                    "response": response,
                    "latency_ms": round((time.monotonic() - started) * 1000, 1),
                    "attempts": attempt + 1,
                }
            if not retryable or attempt >= s.retries:
                break
            self._sleep(self._delay(attempt, retry_after))
        return entry

    def exchange(self, request: dict[str, Any], *, sample: int = 0) -> tuple[str, dict[str, Any], str]:
        """``(key, entry, source)`` for a request: from the cassette, the cache or the server.

        ``source`` is ``cassette``, ``hit`` (cache), ``miss`` (asked and cached) or ``off`` (asked, no cache).
        """
        key = self.key_for(request, sample)
        cassette = self.cassette
        if cassette is not None and cassette.mode == "replay":
            entry = cassette.get(key)
            if entry is None:
                now = time.monotonic()
                entry = self._failure_entry(
                    "not_recorded", f"this request is not in the replayed cassette {str(cassette.path)!r}", None, now, 0
                )
                entry["latency_ms"] = 0.0
            return key, entry, "cassette"
        entry = None
        if self.cache is not None:
            entry = self.cache.answer(self.cache_key(key), retry_failures=self.settings.retry_failures)
        if entry is not None:
            source = "hit"
            with self._lock:
                self.cache_hits += 1
        else:
            entry = self.ask(request)
            entry["request"] = request
            if sample:
                entry["sample"] = sample
            source = "off"
            if self.cache is not None:
                self.cache.put(self.cache_key(key), entry)
                source = "miss"
        if cassette is not None:
            cassette.put(key, entry)
        return key, entry, source

    # -- the policy protocol ---------------------------------------------------------------------
    def predict_action(
        self,
        observation: str,
        state: str,
        available_actions: list[str],
        llm_prompt_repr: str | None,
        recorded_step: dict[str, Any] | None = None,
        *,
        sample: int = 0,
    ) -> str:
        """The env action the model chooses; raises :class:`PolicyFailure` when it cannot give one.

        A general tool-calling step (``recorded_step["tool_call"]``) is asked with its recorded
        ``messages`` and ``tools`` instead, and answered with the call's text ``name({...})``.
        ``sample`` (used by ``--repeat``) makes runs after the first distinct cache entries.
        """
        self.last_trace = None
        if is_answer_step(recorded_step):
            assert recorded_step is not None
            return self._predict_answer(observation, recorded_step, sample)
        if is_tool_call_step(recorded_step):
            assert recorded_step is not None
            return self._predict_call(observation, recorded_step, sample)
        s = self.settings
        trace: dict[str, Any] = {"policy": "llm", "model": s.model, "base_url": s.base_url, "sample": sample}
        tools = build_tools(available_actions, state)
        try:
            messages = build_messages(llm_prompt_repr, observation, state, tools)
        except PromptError as exc:
            raise self.record_failure(trace, PolicyFailure("bad_prompt", str(exc))) from None
        request = self.build_request(messages, tools)
        return self._decide(trace, request, sample, lambda response: interpret_response(response, tools))

    def _predict_call(self, observation: str, step: Mapping[str, Any], sample: int) -> str:
        """A general tool-calling step: the recorded messages and tools sent as they are; the model's
        first tool call comes back as its canonical text (:func:`decide_call`)."""
        s = self.settings
        trace: dict[str, Any] = {
            "policy": "llm",
            "model": s.model,
            "base_url": s.base_url,
            "sample": sample,
            "format": step.get("format"),
            "tools_inferred": bool(step.get("tools_inferred")),
        }
        seen = observation or step.get("observation_before_llm") or ""
        try:
            messages = request_messages(step.get("messages"), seen if isinstance(seen, str) else str(seen))
        except PolicyFailure as exc:
            raise self.record_failure(trace, exc) from None
        tools, notes = request_tools(step.get("tools"), step.get("llm_action_name"), step.get("llm_action_arguments"))
        offered = tool_names(tools)
        request = self.request_body(messages, tools)
        return self._decide(trace, request, sample, lambda response: interpret_call_response(response, offered), notes)

    def _predict_answer(self, observation: str, step: Mapping[str, Any], sample: int) -> str:
        """A plain-answer step (a QA or multiple-choice reply): the recorded messages sent again
        without tools; the model's text is the answer, judged by :func:`replay_tui.matching.judge_answer`."""
        s = self.settings
        trace: dict[str, Any] = {
            "policy": "llm",
            "model": s.model,
            "base_url": s.base_url,
            "sample": sample,
            "format": step.get("format"),
        }
        seen = observation or step.get("observation_before_llm") or ""
        try:
            messages = request_messages(step.get("messages"), seen if isinstance(seen, str) else str(seen))
        except PolicyFailure as exc:
            raise self.record_failure(trace, exc) from None
        return self._decide(trace, self.request_body(messages, []), sample, interpret_answer_response)

    def _decide(
        self,
        trace: dict[str, Any],
        request: dict[str, Any],
        sample: int,
        interpret: Callable[[Any], Decision],
        notes: Sequence[str] = (),
    ) -> str:
        """Exchange ``request`` (cassette, cache or server), read the answer with ``interpret`` and
        fill ``trace``; returns the action or raises :class:`PolicyFailure`."""
        key, entry, source = self.exchange(request, sample=sample)
        trace.update(
            request=request,
            key=key,
            cache=source,
            cache_hit=source in ("hit", "cassette"),
            latency_ms=entry.get("latency_ms"),
            attempts=entry.get("attempts"),
            warnings=list(notes),
        )
        if entry.get("outcome") == "failure":
            failure = dict(entry.get("failure") or {})
            trace.update(response=None, tokens=None, failure=failure)
            self.last_trace = trace
            raise PolicyFailure(
                str(failure.get("kind") or "api_error"), str(failure.get("message") or "failed"), failure.get("raw")
            )
        response = entry.get("response")
        trace.update(response=response_summary(response), tokens=_tokens(response))
        try:
            decision = interpret(response)
        except PolicyFailure as exc:
            self.record_failure(trace, exc)
            raise
        trace.update(
            tool_call={"name": decision.tool, "arguments": decision.arguments} if decision.tool else None,
            action=decision.action,
            warnings=[*notes, *decision.warnings],
        )
        self.last_trace = trace
        return decision.action

    def stats(self) -> dict[str, int]:
        """Requests sent to the server (retries included) and answers served from the cache."""
        with self._lock:
            return {"requests_sent": self.requests_sent, "cache_hits": self.cache_hits}

    def close(self) -> None:
        """Write the ``record`` cassette, if any, commit the cache and close the HTTP client."""
        if self.cache is not None:
            self.cache.flush()
        if self.cassette is not None and self.cassette.mode == "record":
            try:
                self.cassette.save()
            except CassetteError as exc:
                raise LlmConfigError(str(exc)) from None
        close = getattr(self.client, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> LlmPolicy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
