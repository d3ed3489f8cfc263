"""Logs of every format in one EpisodeSet: episodes replayed from their trajectories, tool calls judged as calls."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from replay_tui.env import OfflineWebshopEnv, replay_steps
from replay_tui.episodes.model import (
    ChatMessage,
    ToolCall,
    Trajectory,
    call_text,
    infer_tools,
    openai_messages,
    parse_call_text,
)
from replay_tui.episodes.problems import DemoFileError
from replay_tui.examples import example_path
from replay_tui.formats import FormatError, read_trajectories
from replay_tui.matching import MatchSettings, judge_step
from replay_tui.policies.base import FunctionPolicy
from replay_tui.runner import Runner, rejudge
from replay_tui.sources import RECORDED_KEYS, LogDecision, TrajectoryFile, is_decision, open_sources

DATA = Path(__file__).parents[1] / "data" / "formats"
TAU2 = DATA / "tau2" / "2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json"
AIRLINE = DATA / "openai_chat" / "docent__samples__tb_airline.json"
HUMAN = DATA / "webshop_human" / "20220427_1_17.jsonl"
SWE = DATA / "swe_agent" / "function_calling_simple.traj"


def recorded(observation, state, actions, prompt, recorded_step=None):
    """The recorded action, whatever the format: a policy that must score 100 %."""
    return recorded_step["action_executed_in_env"]


def _trajectories(path: Path) -> list[Trajectory]:
    return [t for t in read_trajectories(path) if isinstance(t, Trajectory)]


def test_call_text_round_trips_and_broken_arguments_are_kept() -> None:
    text = call_text("book", {"flights": [{"n": "HAT1"}], "insurance": False, "count": 2})
    call = parse_call_text(text)
    assert call is not None and call.name == "book" and call.arguments["flights"] == [{"n": "HAT1"}]
    assert parse_call_text("book({not json)") == ToolCall(name="book", raw_arguments="{not json")
    assert parse_call_text("search[shoes]") is None
    assert parse_call_text("noop()") == ToolCall(name="noop")


def test_tools_are_inferred_from_the_recorded_calls_with_json_types() -> None:
    calls = [
        ToolCall(name="get_user", arguments={"user_id": "a"}),
        ToolCall(name="book", arguments={"n": 1, "ok": True, "items": []}),
        ToolCall(name="book", arguments={"n": 2.5, "ok": False}),
    ]
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in infer_tools(calls)}
    assert list(tools) == ["get_user", "book"]
    user = {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}
    assert tools["get_user"] == user
    book = {"n": {"type": "number"}, "ok": {"type": "boolean"}, "items": {"type": "array"}}
    assert tools["book"]["properties"] == book
    assert tools["book"]["required"] == ["n", "ok"]


def test_openai_messages_pair_tool_results_with_their_calls() -> None:
    messages = [
        ChatMessage(role="system", content="be nice"),
        ChatMessage(role="assistant", tool_calls=[ToolCall(name="f", arguments={"a": 1})]),
        ChatMessage(role="tool", content="42"),
        ChatMessage(role="environment", content="odd role"),
    ]
    sent = openai_messages(messages)
    call_id = sent[1]["tool_calls"][0]["id"]
    assert sent[1]["content"] is None and sent[1]["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"a":1}'}
    assert sent[2] == {"role": "tool", "content": "42", "tool_call_id": call_id}
    assert sent[3]["role"] == "user"


def test_a_tau2_file_becomes_episodes_with_positions_as_session_ids_and_the_logs_ids_kept() -> None:
    demos = open_sources([TAU2])
    trajectories = _trajectories(TAU2)
    assert demos.session_ids == list(range(len(trajectories)))
    assert [ref.episode_id for ref in demos.refs] == [t.id for t in trajectories]
    assert all(ref.format == "tau2" for ref in demos.refs)
    episode = demos.trajectory(0)
    assert episode == trajectories[0]  # the reader's Trajectory, replayed as it is
    decisions = replay_steps(episode)
    assert len(decisions) == trajectories[0].recorded_calls
    assert [d.trajectory_index for d in decisions] == [i for i, s in enumerate(episode.steps) if is_decision(s)]
    first, recorded = decisions[0].source, decisions[0].recorded
    assert isinstance(first, LogDecision) and tuple(recorded)[: len(RECORDED_KEYS)] == RECORDED_KEYS
    assert recorded["tool_call"] is True and recorded["tools_inferred"] is True
    assert decisions[0].state == first.llm_action_name
    assert decisions[0].expected == call_text(first.llm_action_name, first.llm_action_arguments)
    assert first.messages and first.messages[0]["role"] in ("system", "user")
    assert {tool["function"]["name"] for tool in recorded["tools"]} >= {first.llm_action_name}


def test_every_sample_of_every_format_replays_at_100_percent_with_the_recorded_calls() -> None:
    samples = [p for p in sorted(DATA.glob("*/*")) if p.name != "PROVENANCE.md"]
    replayed = 0
    for sample in samples:
        demos = open_sources([sample], allow_pickle=True)
        runner = Runner(OfflineWebshopEnv(demos, mismatch_policy="allow"), FunctionPolicy(recorded), mode="recorded")
        summary = runner.run_all()
        assert summary.total_matched == summary.total_steps, sample.name
        replayed += summary.total_steps
    assert replayed > 100


def test_tool_calls_are_judged_by_name_and_typed_arguments_under_the_tools_policy() -> None:
    exact = MatchSettings.build("exact")
    expected = call_text("search_flights", {"origin": "ORD", "passengers": 2})
    assert judge_step(exact, expected, expected, "search_flights", call=True).verdict == "match"
    swapped = '{"passengers": 2, "origin": "ORD"}'
    assert judge_step(exact, expected, f"search_flights({swapped})", "search_flights", call=True).verdict == "match"
    wrong = judge_step(exact, expected, call_text("search_flights", {"origin": "JFK", "passengers": 2}), "x", call=True)
    assert wrong.verdict == "mismatch" and "arguments.origin" in wrong.reason
    assert "tool differs" in judge_step(exact, expected, call_text("book", {}), "search_flights", call=True).reason
    assert "not a tool call" in judge_step(exact, expected, "I will search now", "search_flights", call=True).reason
    as_text = call_text("search_flights", {"origin": "ord", "passengers": "2"})
    schema = {"parameters": {"type": "object", "properties": {"passengers": {"type": "integer"}}}}
    assert judge_step(exact, expected, as_text, "search_flights", call=True, schema=schema).verdict == "mismatch"
    typed = MatchSettings.build("exact", {"search_flights": "typed"})
    assert judge_step(typed, expected, as_text, "search_flights", call=True, schema=schema).verdict == "equivalent"


def test_a_per_tool_policy_rejudges_stored_predictions_without_calling_the_policy() -> None:
    demos = open_sources([AIRLINE])
    episode = demos.trajectory(0)
    steps = replay_steps(episode)
    target = steps[0]
    call = parse_call_text(target.expected)
    assert call is not None and call.arguments
    key, value = next((k, v) for k, v in call.arguments.items() if isinstance(v, str))
    changed = call_text(call.name, {**call.arguments, key: value.upper() + "  "})

    def upper_first(observation, state, actions, prompt, recorded_step=None):
        if recorded_step["step_number"] == target.step_number:
            return changed
        return recorded_step["action_executed_in_env"]

    runner = Runner(OfflineWebshopEnv(demos, mismatch_policy="allow"), FunctionPolicy(upper_first), mode="f")
    report = runner.run_episode(0)
    assert report.steps[0].verdict == "mismatch" and f"arguments.{key}" in report.steps[0].reason
    assert report.episode_id == episode.id
    calls = {s.label: s.schema for s in steps if s.call}
    again = rejudge(report, MatchSettings.build("exact", {target.state: "typed"}), {}, calls=calls)
    assert again.steps[0].verdict == "equivalent" and again.steps_matched == report.steps_matched


def test_webshop_session_logs_keep_webshop_actions_and_pages() -> None:
    demos = open_sources([HUMAN])
    steps = replay_steps(demos.trajectory(0))
    assert [s.state for s in steps][:2] == ["Search", "Result"] and not any(s.call for s in steps)
    assert steps[0].expected.startswith("search[")


def test_reports_of_other_formats_carry_the_log_id_and_seed_reports_do_not() -> None:
    demos = open_sources([SWE])
    summary = Runner(OfflineWebshopEnv(demos), FunctionPolicy(recorded), mode="r").run_all()
    data = orjson.loads(summary.to_json())
    assert data["episodes"][0]["episode_id"] == _trajectories(SWE)[0].id
    seed = Runner(OfflineWebshopEnv(open_sources([example_path()])), FunctionPolicy(recorded), mode="r")
    assert "episode_id" not in orjson.loads(seed.run_all([0]).to_json())["episodes"][0]


def test_session_ids_continue_across_files_of_other_formats(tmp_path: Path) -> None:
    demos = open_sources([example_path(), TAU2, AIRLINE])
    seed_ids = [ref.session_id for ref in demos.refs if ref.format == "webshop-demos"]
    others = [ref.session_id for ref in demos.refs if ref.format != "webshop-demos"]
    assert others == list(range(max(seed_ids) + 1, max(seed_ids) + 1 + len(others)))
    assert not [p for p in demos.problems if "duplicate" in p.message]


def test_a_folder_of_logs_opens_every_log_and_a_browsergym_folder_is_one_experiment(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(TAU2, folder)
    shutil.copy(SWE, folder)
    (folder / "notes.txt").write_text("not a log")
    demos = open_sources([folder])
    assert {ref.format for ref in demos.refs} == {"tau2", "swe-agent"}
    experiment = next(p for p in (DATA / "browsergym").iterdir() if "click-dialog" in p.name)
    demos = open_sources([experiment], allow_pickle=True)
    assert len(demos) == 1 and demos.refs[0].format == "browsergym"


def test_unknown_format_names_and_empty_folders_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="unknown format"):
        open_sources([TAU2], fmt="nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DemoFileError, match="holds no log files"):
        open_sources([tmp_path / "empty"])
    demos = open_sources([tmp_path / "empty", TAU2], skip_unreadable=True)
    assert len(demos.unreadable) == 1 and len(demos) > 0


class _Broken:
    name = "broken"
    label = "a reader that fails half way"
    description = ""

    def sniff(self, path, head):  # pragma: no cover - not asked
        raise AssertionError

    def read(self, path):
        yield from _trajectories(TAU2)[:2]
        raise RuntimeError("disk on fire")


def test_a_reader_that_fails_half_way_keeps_what_it_read() -> None:
    source = TrajectoryFile(TAU2, _Broken(), first_id=10)
    assert [ref.session_id for ref in source.episodes] == [10, 11]
    assert source.problems and "disk on fire" in source.problems[0].message
    assert source.read_trajectory(source.episodes[1]).id == _trajectories(TAU2)[1].id
