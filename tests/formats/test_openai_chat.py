"""The OpenAI chat-completions reader on real tau-bench / Docent transcripts and synthetic shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.examples import example_path
from replay_tui.formats import detect, reader_for
from replay_tui.formats.base import HEAD_BYTES
from replay_tui.formats.openai_chat import PATH_DEPTH, _scan_keys

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "openai_chat"
DOCENT = DATA / "docent__samples__tb_airline.json"
TAU = DATA / "tau_bench_gpt-4o-airline_excerpt.json"
CRASHED = DATA / "tau_bench_crashed_run.json"
SHAPES = DATA / "synthetic_shapes.jsonl"
MESSAGE_LIST = DATA / "synthetic_message_list.json"

READER = reader_for("openai-chat")


def read(path: Path) -> tuple[list[Trajectory], list[LoadProblem]]:
    items = list(READER.read(path))
    return [i for i in items if isinstance(i, Trajectory)], [i for i in items if isinstance(i, LoadProblem)]


def sniff(path: Path) -> float:
    with path.open("rb") as handle:
        return READER.sniff(path, handle.read(HEAD_BYTES)).score


def test_docent_tau_bench_transcript_with_object_arguments() -> None:
    (episode,), problems = read(DOCENT)
    assert problems == []
    assert episode.id == "task-0-trial-0" and episode.format == "openai-chat"
    assert episode.task.startswith("You are mia_li_3668. You want to fly from New York to Seattle on May 20")
    assert episode.outcome.reward == 0.0 and episode.outcome.success is False
    assert episode.outcome.scores["reward_info"]["info"]["r_actions"] == 0.0
    assert len(episode.steps) == 12 == episode.recorded_calls
    names = [s.action.name for s in episode.steps if s.action]
    assert names[:2] == ["get_user_details", "list_all_airports"]
    assert names.count("search_direct_flight") == 4 and names.count("book_reservation") == 2
    first = episode.steps[0]
    assert first.action is not None and first.action.arguments == {"user_id": "mia_li_3668"}
    assert [m.role for m in first.messages] == ["system", "user", "assistant", "user"]
    assert first.observation == " My user ID is mia_li_3668."
    assert first.content.startswith(" Let me check your user details first.") and "mia_li_3668</" in first.content
    assert first.tool_result is not None and '"first_name": "Mia"' in first.tool_result
    # every call id is "0": each result is the tool message right after its call
    booking = episode.steps[8]
    assert booking.action is not None and booking.action.name == "book_reservation"
    assert booking.action.arguments["origin"] == "EWR" and booking.action.arguments["total_baggages"] == 3
    assert booking.tool_result == "Error: not enough seats on flight HAT213"
    assert episode.steps[9].observation == "Error: not enough seats on flight HAT213"
    assert episode.extra["message_count"] == 42 and episode.extra["info"]["source"] == "user"


def test_tau_bench_results_array() -> None:
    episodes, problems = read(TAU)
    assert problems == []
    assert [e.id for e in episodes] == ["task-0-trial-0", "task-1-trial-0", "task-12-trial-0"]
    assert [len(e.steps) for e in episodes] == [8, 0, 2]
    assert [e.outcome.success for e in episodes] == [False, False, True]
    first = episodes[0].steps[0]
    assert first.action is not None and first.action.id == "call_oIHazX6yQrB8hUwl4cRilFKj"
    assert first.action_text == 'get_user_details({"user_id":"mia_li_3668"})'
    assert first.content == "" and first.thinking == ""
    think = episodes[0].steps[5]
    assert think.action is not None and think.action.name == "think" and think.tool_result == ""
    assert episodes[0].steps[3].action is not None
    assert episodes[0].steps[3].action.arguments == {"expression": "152 + 103"}
    assert episodes[0].steps[3].tool_result == "255.0"
    assert episodes[2].task.startswith("You amelia_sanchez_4739 and you want to cancel")
    assert episodes[2].steps[1].action is not None
    assert episodes[2].steps[1].action.arguments == {"reservation_id": "3FRNFB"}
    assert len(episodes[2].steps[1].messages) == 8


def test_a_crashed_tau_bench_run_is_an_episode_without_steps() -> None:
    (episode,), problems = read(CRASHED)
    assert problems == [] and episode.steps == []
    assert episode.outcome.status == "error" and episode.outcome.reward == 0.0
    assert "EOFError" in episode.extra["info"]["traceback"]


def test_parallel_calls_parts_reasoning_and_tool_results() -> None:
    episodes, _ = read(SHAPES)
    weather = episodes[0]
    assert weather.id == "weather-1" and weather.task == "Tell me the weather in Paris and Rome."
    assert weather.outcome.success is True
    (step,) = weather.steps
    assert step.thinking == "Two cities: call the tool twice."
    assert step.observation == "Weather in Paris and Rome?\n[image]"
    assert step.action is not None and step.action.arguments == {"city": "Paris", "days": 2}
    assert step.tool_result == "Paris: 18C"  # matched by tool_call_id, not by position
    (other,) = step.extra["other_tool_calls"]
    assert other["arguments"] == {"city": "Rome"} and other["result"] == "Rome: 25C"
    assert step.tools[0]["function"]["name"] == "get_weather"
    assert weather.extra["final_answer"] == "Paris 18C, Rome 25C."


def test_legacy_function_call_and_broken_arguments() -> None:
    episodes, _ = read(SHAPES)
    legacy = next(e for e in episodes if e.id == "legacy-2")
    assert legacy.outcome.reward == 0.5 and legacy.task == "Look up llamas"
    first, second = legacy.steps
    assert first.action is not None and first.action.name == "lookup" and first.action.arguments == {"q": "llamas"}
    assert first.thinking == "The user wants facts." and first.content == "Searching."
    assert first.tool_result == "Llamas are camelids."
    assert first.tools == [{"type": "function", "function": legacy.steps[0].tools[0]["function"]}]
    assert second.action is not None and second.action.arguments == {}
    assert second.action.raw_arguments == '{"q": "alpacas"'
    assert second.action_text == 'lookup({"q": "alpacas")' and second.tool_result == "Alpacas too."
    assert second.observation == "Llamas are camelids."


def test_responses_api_items() -> None:
    episodes, _ = read(SHAPES)
    responses = next(e for e in episodes if e.id == "responses-5")
    (step,) = responses.steps
    assert step.action is not None and step.action.name == "get_time" and step.action.id == "fc_1"
    assert step.action.arguments == {"tz": "Asia/Tokyo"} and step.tool_result == "09:00"
    assert step.thinking == "Need the time tool."
    assert step.observation == "What time is it in Tokyo?"
    assert step.tools == [
        {"type": "function", "function": {"name": "get_time", "parameters": step.tools[0]["function"]["parameters"]}}
    ]
    assert responses.extra["final_answer"] == "It is 9 am."


def test_malformed_lines_are_named_problems_and_good_lines_still_load() -> None:
    episodes, problems = read(SHAPES)
    assert [e.id for e in episodes] == ["weather-1", "legacy-2", "skips-a-message", "responses-5"]
    errors = [p for p in problems if p.severity == "error"]
    assert [(p.index, p.field) for p in errors] == [(2, "line 3"), (3, "messages")]
    assert errors[0].file == "synthetic_shapes.jsonl" and "not JSON" in errors[0].message
    assert errors[1].session_id == "bad-messages" and "list of messages" in errors[1].message
    (warning,) = [p for p in problems if p.severity == "warning"]
    assert warning.index == 4 and warning.field == "messages[1]" and warning.session_id == "skips-a-message"
    skipped = next(e for e in episodes if e.id == "skips-a-message")
    assert len(skipped.steps) == 1 and skipped.steps[0].extra["message_index"] == 2


def test_a_bare_message_list_is_one_episode() -> None:
    (episode,), problems = read(MESSAGE_LIST)
    assert problems == [] and episode.id == "synthetic_message_list#0" and episode.task == "Add 2 and 3"
    (step,) = episode.steps
    assert step.action is not None and step.action.arguments == {"a": 2, "b": 3} and step.tool_result == "5"


@pytest.mark.parametrize("path", [DOCENT, TAU, SHAPES, MESSAGE_LIST])
def test_detection_picks_the_reader_for_its_files(path: Path) -> None:
    reader, found = detect(path)
    assert reader.name == "openai-chat" and found.score >= 0.9


def test_sniff_refuses_webshop_demos_and_random_json(tmp_path: Path) -> None:
    assert sniff(example_path()) == 0
    strange = tmp_path / "random.json"
    strange.write_text('{"hello": "world", "items": [1, 2, {"role": 3}]}', encoding="utf-8")
    assert sniff(strange) == 0
    text = tmp_path / "notes.txt"
    text.write_text("messages: role content", encoding="utf-8")
    assert sniff(text) == 0


def test_sniff_is_unsure_of_other_formats_holding_chat_messages(tmp_path: Path) -> None:
    mini = tmp_path / "x.traj.json"
    mini.write_text('{"info": {}, "messages": [{"role": "user", "content": "hi"}], "trajectory_format": "m"}')
    assert 0 < sniff(mini) < 0.9
    nested = tmp_path / "tau2.json"
    nested.write_text('{"tasks": [], "simulations": [{"id": "s", "messages": [{"role": "user", "content": "x"}]}]}')
    assert sniff(nested) < 0.5


def test_sniff_decides_from_a_truncated_head(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    line = '{"messages": [{"role": "user", "content": "%s"}, {"role": "assistant", "tool_calls": []}]}\n'
    big.write_text(line % ("x" * 50_000) * 3, encoding="utf-8")
    assert sniff(big) == 1.0


def test_the_key_scanner_cuts_deep_paths_and_skips_strings_whole() -> None:
    """A key's path keeps PATH_DEPTH containers (a whole path per key made a deeply nested head quadratic);
    strings with escaped quotes, backslashes and newlines are skipped whole, truncated ones to the end."""
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    kind, keys = _scan_keys(deep)
    assert kind == "{" and len(keys) == 4000 and {key for _, key in keys} == {"a"}
    assert [path for path, _ in keys[:6]] == [(), ("a",), ("a", "a"), ("a", "a", "a"), ("a",) * 4, (*("a",) * 4, "…")]
    assert max(len(path) for path, _ in keys) == PATH_DEPTH + 1
    text = '{"x": "say \\"k\\": [{\\n", "messages": [{"role": "user", "content": "a\\\\"}], "t": "open'
    assert _scan_keys(text) == (
        "{",
        [((), "x"), ((), "messages"), (("messages", "[]"), "role"), (("messages", "[]"), "content"), ((), "t")],
    )


def test_never_raises_on_hostile_input(tmp_path: Path) -> None:
    cases = {
        "empty.json": "",
        "broken.json": '[{"messages": [',
        "scalar.json": "42",
        "list_of_scalars.json": "[1, 2]",
        "bad_calls.jsonl": '{"messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": 3}}]}]}\n'
        '{"messages": [{"role": "assistant", "tool_calls": "x"}]}\n',
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        items = list(READER.read(path))
        assert items and all(isinstance(i, (Trajectory, LoadProblem)) for i in items), name
    items = list(READER.read(tmp_path / "bad_calls.jsonl"))
    assert [(p.index, p.field) for p in items if isinstance(p, LoadProblem)] == [
        (0, "messages[0].tool_calls[0].function.name"),
        (1, "messages[0].tool_calls"),
    ]


def test_vcr_cassettes_of_real_chat_completions_calls() -> None:
    parallel = DATA / "openllmetry__openai__test_open_ai_function_calls_tools_parallel.yaml"
    history = DATA / "openllmetry__langchain__test_tool_calls_with_history.yaml"
    agno = DATA / "openllmetry__agno__test_agent_with_tools.yaml"
    for path in (parallel, history, agno):
        assert detect(path)[0].name == "openai-chat"
    episodes, problems = read(parallel)
    assert problems == [] and len(episodes) == 2
    (step,) = episodes[0].steps
    assert step.action is not None and step.action.arguments == {"location": "San Francisco"}
    assert step.extra["other_tool_calls"][0]["arguments"] == {"location": "Boston"}
    assert step.tools[0]["function"]["name"] == "get_current_weather"
    assert episodes[0].metadata["model"] == "gpt-3.5-turbo"
    (episode,), _ = read(history)
    (answered,) = episode.steps  # the call in the request's history was written by the test
    assert len(answered.messages) == 5 and answered.messages[2].tool_calls[0].name == "get_weather"
    assert answered.action is not None and answered.action.arguments == {"location": "London"}
    episodes, problems = read(agno)  # the telemetry POST to os-api.agno.com is not an episode
    assert problems == [] and [e.id for e in episodes] == [f"{agno.stem}#0", f"{agno.stem}#1"]
    assert [len(e.steps) for e in episodes] == [1, 1]
    (answer,) = episodes[1].steps  # the model's final answer is its decision there
    assert answer.action is None and answer.content == "The sum of 5 and 7 is 12."
    assert answer.messages[-1].role == "tool" and answer.messages[-1].content == "12" and answer.observation == "12"
    assert episodes[1].extra["final_answer"] == "The sum of 5 and 7 is 12."


def test_in_a_cassette_the_decisions_are_the_responses() -> None:
    """Issue 31 (6): tool calls the test wrote into the request's history were judged as recorded
    decisions with an empty prompt, and the model's real answers were not steps."""
    path = DATA / "openllmetry__openai__test_chat_tool_calls.yaml"
    episodes, problems = read(path)
    assert problems == [] and len(episodes) == 3
    for episode in episodes:
        (step,) = episode.steps
        assert step.action is None and "San Francisco is 70 degrees" in step.content
        assert [m.role for m in step.messages] == ["assistant", "tool"]  # the whole request is the prompt
        assert step.observation == "The weather in San Francisco is 70 degrees and sunny."
        assert episode.recorded_calls == 0


def test_a_streamed_cassette_yields_the_steps_of_its_non_streamed_twin() -> None:
    """Issue 31 (5): a stream=True response (server-sent chunks) lost its tool calls: 0 steps."""
    streamed, problems = read(DATA / "openllmetry__openai__test_open_ai_function_calls_tools_streaming_parallel.yaml")
    plain, _ = read(DATA / "openllmetry__openai__test_open_ai_function_calls_tools_parallel.yaml")
    assert problems == [] and len(streamed) == len(plain) == 2
    assert sum(e.recorded_calls for e in streamed) == 2
    for one, other in zip(streamed, plain, strict=True):
        (step,), (twin,) = one.steps, other.steps
        assert step.action is not None and twin.action is not None
        assert (step.action.name, step.action.arguments) == (twin.action.name, twin.action.arguments)
        assert step.action.id and step.action.id.startswith("call_")
        others = [(c["name"], c["arguments"]) for c in step.extra["other_tool_calls"]]
        assert others == [(c["name"], c["arguments"]) for c in twin.extra["other_tool_calls"]]
        assert step.messages == twin.messages and step.tools == twin.tools and step.content == twin.content
    cities = [c["arguments"]["location"] for e in streamed for c in [e.steps[0].action.model_dump()]]
    assert cities == ["San Francisco", "San Francisco"]


def test_a_stream_is_put_together_by_the_delta_rules(tmp_path) -> None:
    from replay_tui.formats.openai_chat import _stream_message

    def event(delta: dict[str, Any]) -> str:
        return "data: " + json.dumps({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]})

    body = "\n\n".join(
        [
            ": a comment line",
            event({"role": "assistant", "content": "Let me ", "reasoning_content": "think"}),
            event({"content": "look."}),
            event({"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "g"}}]}),
            event({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"x"'}}]}),
            event({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": ": 1}"}}]}),
            event({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}),
            "data: [DONE]",
        ]
    )
    message, note = _stream_message(body)
    assert note is None and message is not None
    assert message["content"] == "Let me look." and message["reasoning_content"] == "think"
    assert message["tool_calls"] == [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
        {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}},
    ]
    message, note = _stream_message(body.rsplit("\n\n", 1)[0])
    assert message is not None and note is not None and "[DONE]" in note


# -- outcome (issue 30): each value checked against the file ------------------------------------


def test_tau_bench_records_carry_reference_actions_and_the_reward_breakdown() -> None:
    records = json.loads(TAU.read_text())
    trajectories, _ = read(TAU)
    for record, trajectory in zip(records, trajectories, strict=True):
        outcome = trajectory.outcome
        task = record["info"]["task"]
        assert [(a.name, a.arguments) for a in outcome.expected_actions] == [
            (a["name"], a["kwargs"]) for a in task["actions"]
        ]
        r_actions = record["info"]["reward_info"]["info"]["r_actions"]
        [check] = outcome.checks
        assert check.name == "actions" and check.value == r_actions and check.passed is (r_actions == 1.0)
        assert outcome.kind == ("succeeded" if record["reward"] == 1.0 else "failed")
        assert outcome.target is None and outcome.error is None  # no required outputs; no crash


def test_a_crashed_tau_bench_run_shows_its_error_and_traceback() -> None:
    [record] = json.loads(CRASHED.read_text())
    [trajectory], _ = read(CRASHED)
    outcome = trajectory.outcome
    assert outcome.kind == "errored" and outcome.status == "error" and outcome.reason == record["info"]["error"]
    assert outcome.error is not None and record["info"]["traceback"].strip() in outcome.error


def test_tau_bench_required_outputs_are_the_target_and_each_a_check(tmp_path: Path) -> None:
    """``RewardOutputInfo`` (``r_outputs``, ``outputs``: each required output and whether it was said)."""
    [record, *_] = json.loads(TAU.read_text())
    record["info"]["task"]["outputs"] = ["327", "1000"]
    record["info"]["reward_info"]["info"] = {"r_outputs": 0.0, "outputs": {"327": True, "1000": False}}
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps([record], indent=2))
    outcome = read(path)[0][0].outcome
    assert outcome.target == "327, 1000"
    assert [(c.name, c.passed) for c in outcome.checks] == [("output 327", True), ("output 1000", False)]
    assert outcome.reason == "output 1000: not said to the user"


CASSETTES = ["openllmetry__openai__test_chat_tool_calls.yaml", "openllmetry__agno__test_agent_with_tools.yaml"]
STREAMED = "openllmetry__openai__test_open_ai_function_calls_tools_streaming_parallel.yaml"


def _finish_reasons(path: Path) -> list[str]:
    """Each recorded chat completion's ``finish_reason`` (a stream's: its last chunk that has one)."""
    import gzip

    import yaml

    reasons = []
    for interaction in yaml.safe_load(path.read_text())["interactions"]:
        if "/chat/completions" not in interaction["request"]["uri"]:
            continue
        body = interaction["response"]["body"]["string"]
        body = gzip.decompress(body).decode() if isinstance(body, bytes) else body
        if not body.lstrip().startswith("data:"):
            reasons.append(json.loads(body)["choices"][0]["finish_reason"])
            continue
        data = [line[5:] for line in body.splitlines() if line.startswith("data:") and "[DONE]" not in line]
        choices = [choice for chunk in map(json.loads, data) for choice in chunk["choices"]]
        reasons.append([choice["finish_reason"] for choice in choices if choice.get("finish_reason")][-1])
    return reasons


@pytest.mark.parametrize("name", [*CASSETTES, STREAMED])
def test_a_cassette_s_finish_reason_is_the_status(name: str) -> None:
    reasons = _finish_reasons(DATA / name)
    trajectories, _ = read(DATA / name)
    assert [t.outcome.status for t in trajectories] == reasons and all(reasons)


def test_a_one_line_array_of_records_is_read_as_its_episodes(tmp_path: Path) -> None:
    """tau-bench results written without indent: one line, an array of records (not one episode)."""
    records = json.loads(TAU.read_text())
    path = tmp_path / "compact.json"
    path.write_text(json.dumps(records))
    compact, problems = read(path)
    indented, _ = read(TAU)
    assert problems == [] and len(compact) == len(records)
    assert [(t.id, t.outcome, len(t.steps)) for t in compact] == [(t.id, t.outcome, len(t.steps)) for t in indented]
