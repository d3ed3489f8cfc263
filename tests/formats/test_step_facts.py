"""What real logs record of each step (time, length, tokens, cost, model, error) and of sub-agents,
on the typed fields: each reader's values equal the sample file read here with ``json`` alone."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from replay_tui.episodes.model import TokenUsage, Trajectory, parse_timestamp
from replay_tui.formats.registry import reader_for

DATA = Path(__file__).parent.parent / "data" / "formats"


def read(name: str, path: Path) -> list[Trajectory]:
    return [item for item in reader_for(name).read(path) if isinstance(item, Trajectory)]


def iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def jsonl(path: Path) -> list[dict[str, Any]]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-12T22:09:38.510Z", datetime(2026, 3, 12, 22, 9, 38, 510000, tzinfo=UTC)),
        ("2026-03-12T22:09:38", datetime(2026, 3, 12, 22, 9, 38, tzinfo=UTC)),
        (1700000000, datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
        (1700000000123, datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)),
        ("1700000000123456789", datetime(2023, 11, 14, 22, 13, 20, 123457, tzinfo=UTC)),
        ("yesterday", None),
        (float("nan"), None),
        (-5, None),
        (True, None),
        ({"t": 1}, None),
        ("", None),
    ],
)
def test_timestamps_of_every_shape_logs_use_and_bad_ones_are_none(value: Any, expected: datetime | None) -> None:
    assert parse_timestamp(value) == expected


def test_bad_counts_are_no_counts() -> None:
    usage = TokenUsage(input=-1, output=True, total=3.0, cost=float("inf"))  # type: ignore[arg-type]
    assert (usage.input, usage.output, usage.total, usage.cost) == (None, None, 3, None)
    assert TokenUsage.of(input=None, output="many") is None


def test_claude_code_steps_carry_each_response_s_time_model_and_usage() -> None:
    path = DATA / "claude_code" / "big3__logs_chat__cc2.0.50.jsonl"
    first: dict[str, dict[str, Any]] = {}
    last_usage: dict[str, dict[str, Any]] = {}
    call_response: dict[str, str] = {}
    for record in jsonl(path):
        message = record.get("message")
        if record.get("type") != "assistant" or not isinstance(message, dict) or record.get("isSidechain"):
            continue
        if record.get("isApiErrorMessage"):
            continue
        key = message.get("id") or record.get("requestId")
        first.setdefault(key, record)
        if isinstance(message.get("usage"), dict):
            last_usage[key] = message["usage"]
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                call_response[block["id"]] = key
    session = read("claude-code", path)[0]
    checked = 0
    for step in session.steps:
        if step.action is None or step.action.id not in call_response:
            continue
        key = call_response[step.action.id]
        usage = last_usage[key]
        assert step.kind == "decision"
        assert step.timestamp == iso(first[key]["timestamp"])
        assert step.model == first[key]["message"]["model"]
        assert step.usage is not None
        assert (step.usage.input, step.usage.output) == (usage["input_tokens"], usage["output_tokens"])
        assert step.usage.cache_read == usage["cache_read_input_tokens"]
        assert step.usage.cache_write == usage["cache_creation_input_tokens"]
        checked += 1
    assert checked == len(call_response) > 10


def test_claude_code_sub_agents_are_linked_both_ways() -> None:
    path = DATA / "claude_code" / "attio-mcp-server__logs_chat__cc1.0.70.jsonl"
    tasks = set()
    for record in jsonl(path):
        message = record.get("message")
        if record.get("isSidechain") or not isinstance(message, dict) or record.get("type") != "assistant":
            continue
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Task":
                tasks.add(block["id"])
    session, *children = read("claude-code", path)
    assert session.parent is None and len(children) == 7  # the Task calls whose sidechain the file holds
    by_call = {step.action.id: step for step in session.steps if step.action is not None}
    for child in children:
        assert child.parent is not None and child.parent.episode == session.id
        assert child.parent.call_id in tasks and child.parent.source == "Task"
        assert by_call[child.parent.call_id].subagent == child.id


def test_codex_steps_carry_turn_model_line_times_and_token_counts() -> None:
    path = DATA / "codex" / "MoonMind__rollout-2025-11-13T18-21-11-019a802a-aab1-7c31-9831-d2510c7a74a2.jsonl"
    model = None
    calls: dict[str, tuple[str, str | None]] = {}
    response: list[str] = []  # the calls of the model's last response
    responding = False
    usages: dict[str, dict[str, Any]] = {}
    total = None
    for record in jsonl(path):
        payload = record.get("payload") or {}
        kind, item = record.get("type"), payload.get("type")
        if kind == "turn_context":
            model = payload.get("model")
        elif kind == "response_item" and (
            item in ("reasoning", "function_call") or (item == "message" and payload.get("role") == "assistant")
        ):
            if not responding:
                response, responding = [], True
            if item == "function_call":
                calls[payload["call_id"]] = (record["timestamp"], model)
                response.append(payload["call_id"])
        elif kind == "response_item" or (kind == "event_msg" and item in ("error", "turn_aborted")):
            responding = False  # an input, a tool's output or an event ends the response
        elif kind == "event_msg" and item == "token_count" and payload.get("info"):
            for call_id in response:
                usages[call_id] = payload["info"]["last_token_usage"]
            total = payload["info"]["total_token_usage"]
    (rollout,) = read("codex", path)
    steps = {step.action.id: step for step in rollout.steps if step.action is not None}
    assert calls and set(calls) <= set(steps)
    for call_id, (timestamp, named) in calls.items():
        step = steps[call_id]
        assert step.model == named and step.kind == "decision"
        # a response's steps take its first record's time: at most the call's own line
        assert step.timestamp is not None and step.timestamp <= iso(timestamp)
    for call_id, usage in usages.items():
        got = steps[call_id].usage
        assert got is not None and (got.input, got.output, got.total) == (
            usage["input_tokens"],
            usage["output_tokens"],
            usage["total_tokens"],
        )
        assert (got.cache_read, got.reasoning) == (usage["cached_input_tokens"], usage["reasoning_output_tokens"])
    assert total is not None and rollout.usage is not None and rollout.usage.total == total["total_tokens"]


def test_codex_sub_agents_name_their_parent_thread_and_spawn_call() -> None:
    folder = DATA / "codex"
    parent_id = "019ce3fb-1087-7980-8f92-8d0171aaea6a"
    trajectories = {t.id: t for f in sorted(folder.glob("ship__*.jsonl")) for t in read("codex", f)}
    for path in sorted(folder.glob("ship__*.jsonl")):
        meta = jsonl(path)[0]["payload"]
        spawn = (
            (meta.get("source") or {}).get("subagent", {}).get("thread_spawn")
            if isinstance(meta.get("source"), dict)
            else None
        )
        mine = trajectories[meta["id"]]
        if spawn is None:
            assert mine.parent is None
            continue
        assert mine.parent is not None and mine.parent.episode == spawn["parent_thread_id"] == parent_id
        assert mine.parent.source == "thread_spawn"
        spawning = next(s for s in trajectories[parent_id].steps if s.subagent == mine.id)
        assert spawning.action is not None and spawning.action.id == mine.parent.call_id


def test_atif_steps_carry_metrics_model_and_time() -> None:
    for name in (
        "terminus_2__hello-world-timeout.trajectory.json",
        "terminus_2__hello-world.trajectory__ATIF-v1.3.json",
    ):
        path = DATA / "atif" / name
        data = json.loads(path.read_text(encoding="utf-8"))
        trajectory = read("atif", path)[0]
        agents = [step for step in data["steps"] if step["source"] == "agent"]
        assert len(agents) == len(trajectory.steps)
        for raw, step in zip(agents, trajectory.steps, strict=True):
            metrics = raw.get("metrics") or {}
            usage = step.usage or TokenUsage()
            assert usage.input == metrics.get("prompt_tokens") and usage.output == metrics.get("completion_tokens")
            assert usage.cache_read == metrics.get("cached_tokens") and usage.cost == metrics.get("cost_usd")
            assert step.model == (raw.get("model_name") or data["agent"].get("model_name"))
            assert step.timestamp == (iso(raw["timestamp"]) if raw.get("timestamp") else None)
            assert step.kind == ("decision" if raw.get("tool_calls") else "message")
        final = data.get("final_metrics") or {}
        total = trajectory.usage or TokenUsage()
        assert (total.input, total.output, total.cost) == (
            final.get("total_prompt_tokens"),
            final.get("total_completion_tokens"),
            final.get("total_cost_usd"),
        )
        assert trajectory.model == data["agent"].get("model_name")


def test_atif_sub_agents_are_linked_to_the_result_that_names_them() -> None:
    path = DATA / "atif" / "terminus_2__hello-world-context-summarization.trajectory.json"
    parent, *children = read("atif", path)
    assert children and all(c.parent is not None and c.parent.episode == parent.id for c in children)
    spawned = {step.subagent for step in parent.steps if step.subagent}
    assert spawned <= {c.id for c in children}


def otlp_spans(path: Path) -> list[dict[str, Any]]:
    spans = []
    for resource in json.loads(path.read_text(encoding="utf-8"))["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            spans += scope["spans"]
    return spans


def attribute(span: dict[str, Any], key: str) -> Any:
    for item in span.get("attributes", []):
        if item["key"] == key:
            value = item["value"]
            return int(value["intValue"]) if "intValue" in value else next(iter(value.values()))
    return None


def test_otel_llm_spans_give_time_length_usage_and_model() -> None:
    path = DATA / "otel_genai" / "openinference__agent_loop.otlp.json"
    llm = [s for s in otlp_spans(path) if attribute(s, "openinference.span.kind") == "LLM"]
    steps = {step.extra["span_id"]: step for t in read("otel-genai", path) for step in t.steps}
    assert llm and len(steps) == len(llm)
    for span in llm:
        step = steps[span["spanId"]]
        start, end = int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])
        assert step.timestamp == datetime.fromtimestamp(start / 1e9, tz=UTC)
        assert step.duration == pytest.approx((end - start) / 1e9)
        assert step.usage is not None
        assert step.usage.input == attribute(span, "llm.token_count.prompt")
        assert step.usage.output == attribute(span, "llm.token_count.completion")
        assert step.model == attribute(span, "llm.model_name")


def test_otel_sub_agents_name_their_parent() -> None:
    path = DATA / "otel_genai" / "openai-v2__agent_loop.otlp.jsonl"
    trajectories = read("otel-genai", path)
    children = [t for t in trajectories if t.parent is not None]
    assert children and all(c.parent.episode in {t.id for t in trajectories} for c in children)  # type: ignore[union-attr]
    assert all(c.parent.source == "invoke_agent" for c in children)  # type: ignore[union-attr]


def test_tau2_agent_messages_give_time_tokens_cost_and_the_agent_model() -> None:
    path = DATA / "tau2" / "2025-10-05T22-50-14.083933_airline_grok-3__slice_tasks_0_13_19.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    runs = read("tau2", path)
    assert len(runs) == len(data["simulations"])
    for run, raw in zip(runs, data["simulations"], strict=True):
        agent = [m for m in raw["messages"] if m["role"] == "assistant" and (m.get("usage") or m.get("tool_calls"))]
        assert len(agent) == len(run.steps)
        for step, message in zip(run.steps, agent, strict=True):
            usage = step.usage or TokenUsage()
            assert step.timestamp == datetime.fromisoformat(message["timestamp"]).replace(tzinfo=UTC)
            assert (usage.input, usage.output) == (
                message["usage"]["prompt_tokens"],
                message["usage"]["completion_tokens"],
            )
            assert usage.cost == message["cost"]
            assert step.model == data["info"]["agent_info"]["llm"]
            assert step.kind == ("decision" if message.get("tool_calls") else "message")
        assert run.usage is not None and run.usage.cost == raw["agent_cost"]
        assert run.model == data["info"]["agent_info"]["llm"]


def test_inspect_model_events_give_time_working_time_usage_and_model() -> None:
    path = DATA / "inspect_ai" / "2025-05-12T20-27-36-04-00_browser.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for sample, trajectory in zip(data["samples"], read("inspect-ai", path), strict=True):
        events = [e for e in sample["events"] if e["event"] == "model"]
        by_time = {iso(e["timestamp"]): e for e in events}
        assert trajectory.steps
        for step in trajectory.steps:
            event = by_time[step.timestamp]  # type: ignore[index]
            usage = event["output"]["usage"]
            assert step.duration == event["working_time"] and step.model == event["model"]
            assert step.usage is not None
            assert (step.usage.input, step.usage.output, step.usage.total, step.usage.cache_read) == (
                usage["input_tokens"],
                usage["output_tokens"],
                usage["total_tokens"],
                usage.get("input_tokens_cache_read"),
            )
        ((model, totals),) = sample["model_usage"].items()
        assert trajectory.model == model and trajectory.usage is not None
        assert (trajectory.usage.input, trajectory.usage.output) == (totals["input_tokens"], totals["output_tokens"])


def test_openhands_events_give_time_model_and_the_accumulated_usage() -> None:
    path = DATA / "openhands" / "multi_swe_bench__examples__output.jsonl"
    line = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    trajectory = read("openhands", path)[0]
    actions = {e["id"]: e for e in line["history"] if e.get("source") == "agent" and "action" in e}
    with_metrics = [e for e in line["history"] if e.get("llm_metrics")]
    assert trajectory.steps and with_metrics
    for step in trajectory.steps:
        event = actions[step.extra["event_id"]]
        assert step.timestamp == datetime.fromisoformat(event["timestamp"]).replace(tzinfo=UTC)
        metrics = event.get("llm_metrics")
        if metrics:
            assert step.model == metrics["accumulated_token_usage"]["model"]
    last = with_metrics[-1]["llm_metrics"]
    assert trajectory.usage is not None
    assert trajectory.usage.input == last["accumulated_token_usage"]["prompt_tokens"]
    assert trajectory.usage.output == last["accumulated_token_usage"]["completion_tokens"]
    assert trajectory.usage.cost == last["accumulated_cost"]


def test_mini_swe_agent_messages_give_time_cost_usage_and_model() -> None:
    path = DATA / "swe_agent" / "deepseek_chat_dev__pvlib__pvlib-python-1154.traj.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    (trajectory,) = read("swe-agent", path)
    assistants = [m for m in data["messages"] if m["role"] == "assistant"]
    assert len(assistants) == len(trajectory.steps)
    for step, message in zip(trajectory.steps, assistants, strict=True):
        extra = message["extra"]
        usage = extra["response"]["usage"]
        assert step.timestamp == datetime.fromtimestamp(extra["timestamp"], tz=UTC)
        assert step.model == extra["response"]["model"]
        assert step.usage is not None and step.usage.cost == extra["cost"]
        assert (step.usage.input, step.usage.output) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert trajectory.usage is not None and trajectory.usage.cost == data["info"]["model_stats"]["instance_cost"]


def test_swe_agent_steps_time_their_actions() -> None:
    path = DATA / "swe_agent" / "6e44b9__sweagenttestrepo-1c2844.traj"
    data = json.loads(path.read_text(encoding="utf-8"))
    (trajectory,) = read("swe-agent", path)
    assert [s.duration for s in trajectory.steps] == [e.get("execution_time") for e in data["trajectory"]]
    stats = data["info"]["model_stats"]
    assert trajectory.usage is not None
    assert (trajectory.usage.input, trajectory.usage.output) == (stats["tokens_sent"], stats["tokens_received"])


def test_the_seed_s_webshop_steps_are_decisions() -> None:
    from replay_tui.examples import example_path

    trajectories = read("webshop-demos", example_path())
    steps = [s for t in trajectories for s in t.steps]
    decisions = [s for s in steps if "." not in s.label]  # a decision's label is its step number
    assert decisions and all(s.kind == "decision" for s in decisions)
    # the sub-events between them: item-page actions (labelled as a replay labels them), other events
    assert all(s.kind == ("item" if s.action is not None else "event") for s in steps if "." in s.label)
    assert all(s.timestamp is None and s.usage is None for t in trajectories for s in t.steps)  # none recorded
