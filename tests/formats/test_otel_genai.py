"""OpenTelemetry GenAI traces: counts against a walk written from the conventions, every file shape,
and fixtures regenerated with the real instrumentation."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import detect, reader_for
from replay_tui.formats.otel_genai import any_value

DATA = Path(__file__).parent.parent / "data" / "formats" / "otel_genai"
SAMPLES = sorted(p for p in DATA.iterdir() if p.name != "PROVENANCE.md")
RUNS = [
    "openai-v2__agent_loop.otlp.jsonl",
    "openinference__agent_loop.otlp.json",
    "openllmetry__agent_loop.otlp.jsonl",
    "openinference-mastra__weatherAgentSpans.json",
]
TOOL_CALL = re.compile(r"llm\.output_messages\.\d+\.message\.tool_calls\.\d+\.tool_call\.id")


def load(path: Path) -> tuple[list[Trajectory], list[LoadProblem]]:
    items = list(reader_for("otel-genai").read(path))
    return [i for i in items if isinstance(i, Trajectory)], [i for i in items if isinstance(i, LoadProblem)]


def spans_of(path: Path) -> list[dict[str, Any]]:
    """Spans as {trace, id, parent, name, start, attrs}, from the OTLP/JSON spec or a plain dump."""
    text = path.read_text()
    try:
        documents = [json.loads(text)]
    except json.JSONDecodeError:
        documents = [json.loads(line) for line in text.splitlines() if line.strip()]
    out = []
    for document in documents:
        if isinstance(document, dict) and "resourceSpans" in document:
            for resource in document["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        attrs = {a["key"]: any_value(a["value"]) for a in span.get("attributes", [])}
                        out.append(
                            {
                                "trace": span["traceId"],
                                "id": span["spanId"],
                                "parent": span.get("parentSpanId"),
                                "start": int(span["startTimeUnixNano"]),
                                "attrs": attrs,
                            }
                        )
        else:
            for span in document:
                start = span["startTime"][0] * 10**9 + span["startTime"][1]
                out.append({"trace": None, "id": None, "parent": None, "start": start, "attrs": span["attributes"]})
                out[-1]["name"] = span["name"]
    return out


def kind(span: dict[str, Any]) -> str:
    attrs = span["attrs"]
    if attrs.get("traceloop.span.kind") in ("tool", "agent"):
        return attrs["traceloop.span.kind"]
    if attrs.get("gen_ai.operation.name") == "chat" or attrs.get("openinference.span.kind") == "LLM":
        return "llm"
    if span.get("name", "").endswith(".doStream"):
        return "llm"
    if attrs.get("gen_ai.operation.name") == "execute_tool" or attrs.get("openinference.span.kind") == "TOOL":
        return "tool"
    if span.get("name") == "ai.toolCall":
        return "tool"
    if attrs.get("gen_ai.operation.name") == "invoke_agent" or attrs.get("openinference.span.kind") == "AGENT":
        return "agent"
    return "other"


def input_count(attrs: dict[str, Any]) -> int:
    if "gen_ai.input.messages" in attrs:
        messages = json.loads(attrs["gen_ai.input.messages"])
        return sum(max(1, sum(p["type"] == "tool_call_response" for p in m["parts"])) for m in messages)
    if "ai.prompt.messages" in attrs:
        messages = json.loads(attrs["ai.prompt.messages"])
        return sum(
            max(1, sum(p.get("type") == "tool-result" for p in m["content"])) if isinstance(m["content"], list) else 1
            for m in messages
        )
    return len({key.split(".")[2] for key in attrs if key.startswith("llm.input_messages.")})


def call_count(attrs: dict[str, Any]) -> int:
    if "gen_ai.output.messages" in attrs:
        return sum(p["type"] == "tool_call" for m in json.loads(attrs["gen_ai.output.messages"]) for p in m["parts"])
    if "ai.response.toolCalls" in attrs:
        return len(json.loads(attrs["ai.response.toolCalls"]))
    return sum(bool(TOOL_CALL.fullmatch(key)) for key in attrs)


def spec_counts(path: Path) -> dict[str, int]:
    """The GenAI conventions read by hand: a trace is an episode and so is an agent span under another
    agent span; an LLM span's output tool calls are calls, a tool span a result; the messages of an
    episode are its last LLM span's input plus its answer."""
    spans = spans_of(path)
    by_id = {s["id"]: s for s in spans if s["id"]}

    def agents_above(span: dict[str, Any]) -> list[str]:
        found, node = [], by_id.get(span["parent"])
        while node is not None:
            if kind(node) == "agent":
                found.append(node["id"])
            node = by_id.get(node["parent"])
        return found

    def owner(span: dict[str, Any]) -> str:
        chain = ([span["id"]] if kind(span) == "agent" else []) + agents_above(span)
        return chain[0] if len(chain) >= 2 else f"trace {span['trace']}"

    episodes = {f"trace {s['trace']}" for s in spans} | {owner(s) for s in spans if kind(s) == "agent"}
    last: dict[str, dict[str, Any]] = {}
    for span in sorted(spans, key=lambda s: s["start"]):
        if kind(span) == "llm":
            last[owner(span)] = span
    return {
        "episodes": len(episodes),
        "subagents": len(episodes) - len({s["trace"] for s in spans}),
        "calls": sum(call_count(s["attrs"]) for s in spans if kind(s) == "llm"),
        "results": sum(kind(s) == "tool" for s in spans),
        "messages": sum(input_count(s["attrs"]) + 1 for s in last.values()),
    }


def reader_counts(trajectories: list[Trajectory]) -> dict[str, int]:
    return {
        "episodes": len(trajectories),
        "subagents": sum(t.parent is not None for t in trajectories),
        "calls": sum(len(s.extra.get("tool_calls", [])) or s.action is not None for t in trajectories for s in t.steps),
        "results": sum(t.metadata["results"] for t in trajectories),
        "messages": sum(t.metadata["messages"] for t in trajectories),
    }


@pytest.mark.parametrize("name", RUNS)
def test_counts_equal_an_independent_walk_of_the_conventions(name: str) -> None:
    trajectories, problems = load(DATA / name)
    assert problems == []
    assert reader_counts(trajectories) == spec_counts(DATA / name)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_is_detected_and_read(path: Path) -> None:
    assert detect(path)[0].name == "otel-genai"
    trajectories, problems = load(path)
    assert trajectories and problems == []


@pytest.mark.parametrize("name", RUNS[:3])
def test_the_agent_loop_maps_onto_steps_results_and_a_sub_agent(name: str) -> None:
    (run, clock), _ = load(DATA / name)
    first, second, third, answer = run.steps
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.action is not None and first.action.display() == 'get_weather({"city":"Paris"})'
    assert first.tool_result == '{"city": "Paris", "weather": "sunny, 21 \\u00b0C"}'
    assert [c["name"] for c in second.extra["tool_calls"]] == ["get_weather", "get_time"]
    assert len(second.extra["tool_results"]) == 2
    assert [m.role for m in third.messages][-3:] == ["assistant", "tool", "tool"]
    assert third.action is not None and third.action.arguments == {"city": "Oslo"} and third.tool_result
    assert answer.action is None and answer.content.startswith("It is sunny")
    assert {t["function"]["name"] for t in first.tools} == {"get_weather", "get_time"}
    assert clock.parent is not None and clock.parent.episode == run.id and clock.task == "Time in Paris?"
    assert run.task == "What is the weather in Paris and Rome, and the time in Paris?"


def test_any_value_kinds() -> None:
    assert any_value({"intValue": "120"}) == 120 and any_value({"doubleValue": 0.5}) == 0.5
    assert any_value({"boolValue": True}) is True and any_value({"bytesValue": "aGk="}) == "hi"
    assert any_value({"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "1"}]}}) == ["a", 1]
    assert any_value({"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}}) == {"k": "v"}
    assert any_value({}) is None


def test_a_broken_line_is_a_problem_and_the_other_lines_load(tmp_path: Path) -> None:
    lines = (DATA / RUNS[0]).read_text().splitlines()
    target = tmp_path / "traces.jsonl"
    target.write_text("\n".join([*lines[:2], lines[2][:50], *lines[3:]]))
    trajectories, problems = load(target)
    assert len(problems) == 1 and problems[0].message.startswith("line 3: not valid JSON")
    assert trajectories and sum(len(t.steps) for t in trajectories) >= 3


_PACKAGES = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.json.file", "openinference.instrumentation.openai")


def _missing() -> str | None:
    for package in _PACKAGES:
        try:
            if importlib.util.find_spec(package) is None:
                return package
        except ModuleNotFoundError:
            return package
    try:
        import opentelemetry.instrumentation.openai_v2  # noqa: F401
    except Exception as exc:  # an instrumentation that does not import is as good as absent
        return f"opentelemetry-instrumentation-openai-v2 ({type(exc).__name__})"
    return None


@pytest.mark.skipif(_missing() is not None, reason=f"regenerating needs the OTel instrumentation: {_missing()} absent")
def test_regenerated_fixtures_read_like_the_committed_ones(tmp_path: Path) -> None:
    from tests.formats import make_otel_fixtures

    make_otel_fixtures.main(tmp_path)
    for name in make_otel_fixtures.FILES:
        fresh, problems = load(tmp_path / name)
        assert problems == []
        assert reader_counts(fresh) == reader_counts(load(DATA / name)[0]) == spec_counts(tmp_path / name)


def _otlp(spans: list[dict[str, Any]]) -> str:
    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        return {"stringValue": v}

    for span in spans:
        span["attributes"] = [{"key": k, "value": value(v)} for k, v in span["attributes"].items()]
        for event in span.get("events", []):
            event["attributes"] = [{"key": k, "value": value(v)} for k, v in event["attributes"].items()]
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]})


def test_openllmetry_indexed_attributes_and_older_message_events(tmp_path: Path) -> None:
    """OpenLLMetry before the current semconv (``gen_ai.prompt.N.*``, ``llm.request.functions.N.*``) and
    the older semconv's ``gen_ai.*.message`` / ``gen_ai.choice`` span events; an error status."""
    base = {"traceId": "ab" * 16, "startTimeUnixNano": "1", "endTimeUnixNano": "2"}
    indexed = {
        **base,
        "spanId": "01" * 8,
        "name": "openai.chat",
        "attributes": {
            "llm.request.type": "chat",
            "gen_ai.prompt.0.role": "user",
            "gen_ai.prompt.0.content": "weather in Oslo?",
            "gen_ai.completion.0.role": "assistant",
            "gen_ai.completion.0.tool_calls.0.id": "c1",
            "gen_ai.completion.0.tool_calls.0.name": "get_weather",
            "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Oslo"}',
            "llm.request.functions.0.name": "get_weather",
            "llm.request.functions.0.parameters": '{"type": "object"}',
        },
    }
    events = {
        **base,
        "spanId": "02" * 8,
        "startTimeUnixNano": "3",
        "name": "chat gpt",
        "status": {"code": 2, "message": "boom"},
        "attributes": {"gen_ai.operation.name": "chat"},
        "events": [
            {"name": "gen_ai.system.message", "attributes": {"content": "be brief"}},
            {"name": "gen_ai.user.message", "attributes": {"content": "weather in Oslo?"}},
            {
                "name": "gen_ai.choice",
                "attributes": {"message": json.dumps({"role": "assistant", "content": "Cold."})},
            },
        ],
    }
    target = tmp_path / "trace.json"
    target.write_text(_otlp([indexed, events]))
    (trajectory,), problems = load(target)
    assert problems == []
    first, second = trajectory.steps
    assert first.messages[0].content == "weather in Oslo?" and first.action is not None
    assert first.action.display() == 'get_weather({"city":"Oslo"})' and first.action.id == "c1"
    assert first.tools == [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    assert [m.role for m in second.messages] == ["system", "user"] and second.content == "Cold."
    assert trajectory.outcome.status == "error" and trajectory.outcome.scores["error_spans"] == ["chat gpt"]


# -- outcome (issue 30): a trace's own verdict, each value checked against the file ----------------

AGENT_LOOP = DATA / "openai-v2__agent_loop.otlp.jsonl"


def _otlp_spans(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [span for line in lines for rs in line["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]]


def _value(span: dict[str, Any], key: str) -> Any:
    return next(a["value"] for a in span["attributes"] if a["key"] == key)


def _travel(path: Path) -> Trajectory:
    trajectories, _ = load(path)
    return next(t for t in trajectories if "parent" not in t.metadata)


def test_the_last_answer_without_a_call_is_the_answer() -> None:
    lines = [json.loads(line) for line in AGENT_LOOP.read_text().splitlines()]
    spans = [s for s in _otlp_spans(lines) if s["name"].startswith("chat") and s["parentSpanId"] == "87dd98b250e4fe5f"]
    last = max(spans, key=lambda s: int(s["startTimeUnixNano"]))
    [message] = json.loads(_value(last, "gen_ai.output.messages")["stringValue"])
    outcome = _travel(AGENT_LOOP).outcome
    assert outcome.answer == message["parts"][0]["content"] and outcome.status == "ok"


def test_an_error_span_and_an_evaluation_event_make_the_outcome(tmp_path: Path) -> None:
    """A failed tool span (status ERROR, ``error.type``, an ``exception`` event) and a
    ``gen_ai.evaluation.result`` event on the final answer's span, as the conventions define them."""
    lines = [json.loads(line) for line in AGENT_LOOP.read_text().splitlines()]
    spans = {s["spanId"]: s for s in _otlp_spans(lines)}
    failed = spans["eac8f39adfa0da9d"]
    failed["status"] = {"code": 2, "message": "weather service unavailable"}
    failed["attributes"].append({"key": "error.type", "value": {"stringValue": "TimeoutError"}})
    trace = "Traceback (most recent call last):\n  ...\nTimeoutError: weather service unavailable"
    failed["events"] = [
        {
            "name": "exception",
            "timeUnixNano": failed["endTimeUnixNano"],
            "attributes": [{"key": "exception.stacktrace", "value": {"stringValue": trace}}],
        }
    ]
    evaluation = {
        "gen_ai.evaluation.name": "correctness",
        "gen_ai.evaluation.score.value": {"doubleValue": 0.25},
        "gen_ai.evaluation.score.label": "incorrect",
        "gen_ai.evaluation.explanation": "Oslo's weather is missing",
    }
    spans["02ac002f6721688e"]["events"] = [
        {
            "name": "gen_ai.evaluation.result",
            "timeUnixNano": spans["02ac002f6721688e"]["endTimeUnixNano"],
            "attributes": [
                {"key": key, "value": value if isinstance(value, dict) else {"stringValue": value}}
                for key, value in evaluation.items()
            ],
        }
    ]
    path = tmp_path / "trace.otlp.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    outcome = _travel(path).outcome
    assert outcome.status == "error" and outcome.kind == "errored"
    assert outcome.error == f"TimeoutError: weather service unavailable\n\n{trace}"
    [check] = outcome.checks
    assert (check.name, check.passed, check.value) == ("correctness", False, 0.25)
    assert check.detail == evaluation["gen_ai.evaluation.explanation"]
    assert outcome.success is False and outcome.reward == 0.25 and outcome.explanation == "Oslo's weather is missing"


def test_a_lone_carriage_return_is_found_anywhere(tmp_path: Path) -> None:
    """JSON Lines are split on ``\\n`` only when no ``\\r`` ends a line of its own (else the file is
    one document): a file without any ``\\r`` is answered without reading it a line at a time."""
    from replay_tui.formats.otel_genai import _has_lone_cr

    cases = {
        b'{"a": 1}\n{"b": 2}\n': False,
        b'{"a": 1}\r\n{"b": 2}\r\n': False,
        b'{"a": 1}\r{"b": 2}\n': True,
        b'{"a": 1}\r\r\n{"b": 2}\n': True,  # bytes.splitlines splits at the first \r too
        b"x" * (17 << 20) + b'\n{"a": 1}\r\n': False,  # past the first chunk
        b"x" * (17 << 20) + b'\n{"a": 1}\r{"b": 2}\n': True,
    }
    for number, (data, lone) in enumerate(cases.items()):
        path = tmp_path / f"{number}.jsonl"
        path.write_bytes(data)
        assert _has_lone_cr(path) is lone, number
