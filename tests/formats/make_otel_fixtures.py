"""Write the OTLP/JSON fixtures of ``tests/data/formats/otel_genai/`` with the real instrumentation.

A four-step tool-calling agent loop drives the real ``openai`` client against a scripted
OpenAI-compatible server on 127.0.0.1 (``tests/llm/scripted.py``): the model asks for the weather
(one call), then for the weather and the time (two parallel calls), then for one more city, then
answers. The loop wraps
the run in an agent span and each tool execution in a tool span, the way agent SDKs do; the LLM
spans come from the instrumentation itself:

- ``openai-v2__agent_loop.otlp.jsonl``: ``opentelemetry-instrumentation-openai-v2`` (GenAI semantic
  conventions, latest experimental: ``gen_ai.input.messages`` on the span), ``invoke_agent`` and
  ``execute_tool`` spans; written by ``opentelemetry-exporter-otlp-json-file`` with a simple span
  processor: one OTLP/JSON object per line, as the collector's file exporter writes;
- ``openinference__agent_loop.otlp.json``: ``openinference-instrumentation-openai`` (OpenInference
  ``llm.input_messages.N.*``), AGENT and TOOL spans; one batch, so one OTLP/JSON object;
- ``openllmetry__agent_loop.otlp.jsonl``: OpenLLMetry's ``opentelemetry-instrumentation-openai``
  (``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``), ``traceloop.span.kind`` agent and tool spans
  (which carry no call id: results pair with calls by tool name, in order); one span per line.

Run: ``python tests/formats/make_otel_fixtures.py [OUT_DIR]`` (needs opentelemetry-sdk,
opentelemetry-exporter-otlp-json-file, opentelemetry-instrumentation-openai-v2,
openinference-instrumentation-openai, opentelemetry-instrumentation-openai and openai).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "data" / "formats" / "otel_genai"
FILES = (
    "openai-v2__agent_loop.otlp.jsonl",
    "openinference__agent_loop.otlp.json",
    "openllmetry__agent_loop.otlp.jsonl",
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city now.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "The local time in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
]


def _calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fixture",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if calls else "stop",
                "message": {
                    "role": "assistant",
                    "content": None if calls else "It is sunny and 21 °C in Paris; 14:05 there. Rome: cloudy.",
                    "tool_calls": [
                        {"id": ident, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                        for ident, name, args in calls
                    ]
                    or None,
                },
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140},
    }


SCRIPT = [
    _calls(("call_w1", "get_weather", {"city": "Paris"})),
    _calls(("call_w2", "get_weather", {"city": "Rome"}), ("call_t1", "get_time", {"city": "Paris"})),
    _calls(),  # the clock sub-agent's answer, asked inside the get_time tool
    _calls(("call_w3", "get_weather", {"city": "Oslo"})),
    _calls(),
]


SpanFor = Callable[[str, str, str], AbstractContextManager[Any]]


def agent_loop(
    base_url: str,
    agent_span: AbstractContextManager[Any],
    tool_span: SpanFor,
    result_key: str,
    sub_agent_span: AbstractContextManager[Any],
) -> None:
    """The agent: ask, run every tool call the model makes (each in a tool span), until it answers.
    ``get_time`` is answered by a sub-agent (one LLM call of its own inside the tool span)."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="fixture")

    def _tool(name: str, arguments: dict[str, Any]) -> str:
        city = arguments.get("city", "?")
        if name == "get_weather":
            return json.dumps({"city": city, "weather": "sunny, 21 °C"})
        with sub_agent_span:
            client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[
                    {"role": "system", "content": "You are a clock. Answer with the local time."},
                    {"role": "user", "content": f"Time in {city}?"},
                ],
            )
        return json.dumps({"city": city, "time": "14:05"})

    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a travel assistant. Use the tools."},
        {"role": "user", "content": "What is the weather in Paris and Rome, and the time in Paris?"},
    ]
    with agent_span:
        for _ in range(len(SCRIPT) - 1):
            reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            for call in message.tool_calls:
                arguments = json.loads(call.function.arguments)
                with tool_span(call.function.name, call.id, call.function.arguments) as span:
                    result = _tool(call.function.name, arguments)
                    span.set_attribute(result_key, result)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def _server() -> Any:
    sys.path.insert(0, str(HERE.parent.parent))
    from tests.llm.scripted import Reply, ScriptedServer

    replies = iter(SCRIPT)
    return ScriptedServer(lambda body: Reply(body=next(replies)))


def make_openai_v2(path: Path) -> None:
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    path.unlink(missing_ok=True)
    exporter = FileSpanExporter(path)
    provider = TracerProvider(resource=Resource.create({"service.name": "fixture-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("fixture.agent")
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)

    def tool_span(name: str, call_id: str, arguments: str) -> AbstractContextManager[Any]:
        return tracer.start_as_current_span(
            f"execute_tool {name}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.call.arguments": arguments,
                "gen_ai.tool.type": "function",
            },
        )

    agent = tracer.start_as_current_span(
        "invoke_agent travel",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "travel",
            "gen_ai.provider.name": "openai",
        },
    )
    try:
        with _server() as server:
            sub_agent = tracer.start_as_current_span(
                "invoke_agent clock", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "clock"}
            )
            agent_loop(server.url, agent, tool_span, "gen_ai.tool.call.result", sub_agent)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def make_openinference(path: Path) -> None:
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    path.unlink(missing_ok=True)
    provider = TracerProvider(resource=Resource.create({"service.name": "fixture-agent"}))
    provider.add_span_processor(BatchSpanProcessor(FileSpanExporter(path), max_export_batch_size=512))
    tracer = provider.get_tracer("fixture.agent")
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)

    def tool_span(name: str, call_id: str, arguments: str) -> AbstractContextManager[Any]:
        return tracer.start_as_current_span(
            name,
            attributes={
                "openinference.span.kind": "TOOL",
                "tool.name": name,
                "tool_call.id": call_id,
                "input.value": arguments,
                "input.mime_type": "application/json",
            },
        )

    agent = tracer.start_as_current_span(
        "travel", attributes={"openinference.span.kind": "AGENT", "agent.name": "travel"}
    )
    try:
        with _server() as server:
            sub_agent = tracer.start_as_current_span(
                "clock", attributes={"openinference.span.kind": "AGENT", "agent.name": "clock"}
            )
            agent_loop(server.url, agent, tool_span, "output.value", sub_agent)
    finally:
        instrumentor.uninstrument()
        provider.force_flush()
        provider.shutdown()


def make_openllmetry(path: Path) -> None:
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
    path.unlink(missing_ok=True)
    provider = TracerProvider(resource=Resource.create({"service.name": "fixture-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    tracer = provider.get_tracer("fixture.agent")
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)

    def tool_span(name: str, call_id: str, arguments: str) -> AbstractContextManager[Any]:
        return tracer.start_as_current_span(
            f"{name}.tool",
            attributes={
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": name,
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": json.loads(arguments)}),
            },
        )

    agent = tracer.start_as_current_span(
        "travel.agent", attributes={"traceloop.span.kind": "agent", "traceloop.entity.name": "travel"}
    )
    try:
        with _server() as server:
            sub_agent = tracer.start_as_current_span(
                "clock.agent", attributes={"traceloop.span.kind": "agent", "traceloop.entity.name": "clock"}
            )
            agent_loop(server.url, agent, tool_span, "traceloop.entity.output", sub_agent)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def main(out: Path = OUT) -> None:
    out.mkdir(parents=True, exist_ok=True)
    make_openai_v2(out / FILES[0])
    make_openinference(out / FILES[1])
    make_openllmetry(out / FILES[2])


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
