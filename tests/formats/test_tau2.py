"""tau2-bench simulation results: real runs map onto trajectories; bad runs are named problems."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import detect, reader_for
from replay_tui.formats.base import HEAD_BYTES

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "tau2"
TELECOM = DATA / "2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json"
ABORTED = DATA / "2025-10-05T07-40-31.711552_airline_llm_agent_gpt-4.1_user_simulator_gpt-4.1.json"
VOICE_RESULTS = DATA / "voice_experiment__results.json"
AIRLINE = DATA / "2025-10-05T22-50-14.083933_airline_llm_agent_grok-3_user_simulator_grok-3.json"
RELAXED = (
    DATA / "2025-10-07T07-44-20.888691_airline_relaxed_llm_agent_grok-4-fast-reasoning_"
    "user_simulator_grok-4-fast-reasoning.json"
)
VOICE_RUN = DATA / "voice_experiment__simulations__49b22f0c-4a56-41c5-922f-bc2a56e53a23.json"

READER = reader_for("tau2")


def read(path: Path) -> tuple[list[Trajectory], list[LoadProblem]]:
    items = list(READER.read(path))
    return [i for i in items if isinstance(i, Trajectory)], [i for i in items if isinstance(i, LoadProblem)]


def sniff(path: Path) -> float:
    with path.open("rb") as handle:
        return READER.sniff(path, handle.read(HEAD_BYTES)).score


@pytest.fixture(scope="module")
def telecom() -> list[Trajectory]:
    trajectories, problems = read(TELECOM)
    assert problems == []
    return trajectories


def test_telecom_runs_tasks_and_outcomes(telecom) -> None:
    assert len(telecom) == 5
    assert [t.outcome.reward for t in telecom] == [1.0, 1.0, 1.0, 0.0, 1.0]
    assert [t.outcome.success for t in telecom] == [True, True, True, False, True]
    assert {t.outcome.status for t in telecom} == {"user_stop"}
    first = telecom[0]
    assert first.id == "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]#0"
    assert first.format == "tau2"
    assert first.task.startswith("You mobile data is not working properly.")
    assert first.metadata["domain"] == "telecom"
    assert first.metadata["agent_model"] == "xai/grok-3" and first.metadata["user_model"] == "xai/grok-3"
    assert first.metadata["trial"] == 0 and first.metadata["run_id"] == "dac64168-f4bf-4bc8-b02b-7599eb73ea8e"
    assert first.outcome.scores["db_check"] == {"db_match": False, "db_reward": 0.0}
    assert first.extra["task"]["ticket"].startswith("The user is experiencing issues with their mobile data.")


def test_telecom_steps_prompt_action_and_tool_result(telecom) -> None:
    steps = telecom[0].steps
    assert len(steps) == 15 and telecom[0].recorded_calls == 6
    # the scripted greeting is in the prompt but is no step; the first step answers the user in text
    assert steps[0].action is None and steps[0].content.startswith("I'm happy to assist you")
    assert [m.role for m in steps[0].messages] == ["system", "assistant", "user"]
    assert steps[0].messages[1].content == "Hi! How can I help you today?"
    system = steps[0].messages[0].content
    assert system.startswith("<instructions>\nYou are a customer service agent") and "# Telecom Agent Policy" in system
    call = steps[1]
    assert call.action is not None and call.action.name == "get_customer_by_phone"
    assert call.action.arguments == {"phone_number": "555-123-2002"} and call.action.id == "call_98636265"
    assert call.action_text == 'get_customer_by_phone({"phone_number":"555-123-2002"})'
    assert call.observation == "Sure, my phone number is 555-123-2002."
    assert call.tool_result is not None and orjson.loads(call.tool_result)["customer_id"] == "C1001"
    after = steps[2]
    assert after.observation == call.tool_result  # the agent saw the tool result last
    assert after.messages[-1].role == "tool" and after.messages[-1].tool_call_id == "call_98636265"
    assert after.messages[-2].tool_calls[0].name == "get_customer_by_phone"
    assert steps[-1].done and not steps[0].done


def test_user_side_tool_calls_never_reach_the_agent_prompt(telecom) -> None:
    hidden = [(t, s) for t in telecom for s in t.steps if "user_side" in s.extra]
    assert hidden
    trajectory, step = hidden[0]
    calls = [c["name"] for m in step.extra["user_side"] for c in (m.get("tool_calls") or [])]
    assert "run_speed_test" in calls
    user_call_ids = {
        c["id"] for s in trajectory.steps for m in s.extra.get("user_side", []) for c in m.get("tool_calls") or []
    }
    for later in trajectory.steps:
        assert all(m.tool_call_id not in user_call_ids for m in later.messages if m.role == "tool")
        assert all(not m.tool_calls for m in later.messages if m.role == "user")


def test_sniffing_takes_tau2_and_refuses_other_json(tmp_path) -> None:
    assert sniff(TELECOM) == 1.0 and sniff(ABORTED) == 1.0
    assert detect(TELECOM)[0].name == "tau2"
    openai = tmp_path / "chat.json"
    openai.write_bytes(orjson.dumps({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]}))
    assert sniff(openai) == 0.0
    inspect = tmp_path / "log.json"
    inspect.write_bytes(orjson.dumps({"version": 2, "status": "success", "eval": {"task": "x"}, "samples": []}))
    assert sniff(inspect) == 0.0
    assert READER.sniff(tmp_path / "x.jsonl", b"not json").score == 0.0


def test_aborted_run_with_zero_simulations_names_why() -> None:
    trajectories, problems = read(ABORTED)
    assert trajectories == []
    assert len(problems) == 1 and problems[0].field == "simulations"
    assert "0 simulation runs" in problems[0].message and "5 tasks" in problems[0].message


def test_a_malformed_run_is_a_named_problem_and_the_others_load(tmp_path) -> None:
    data = orjson.loads(TELECOM.read_bytes())
    data["simulations"][1]["messages"][4]["tool_calls"][0]["name"] = 7
    data["simulations"][2]["reward_info"]["reward"] = "high"
    data["simulations"][3] = ["not", "a", "run"]
    broken = tmp_path / "broken.json"
    broken.write_bytes(orjson.dumps(data))
    trajectories, problems = read(broken)
    assert [t.outcome.reward for t in trajectories] == [1.0, 1.0]
    assert [(p.index, p.field) for p in problems] == [
        (1, "messages[4].tool_calls[0].name"),
        (2, "reward_info.reward"),
        (3, None),
    ]
    assert problems[0].session_id == data["simulations"][1]["id"]
    assert "episode #1" in problems[0].one_line() and "expected a tool name" in problems[0].one_line()


def test_broken_json_and_wrong_shapes_are_problems_not_tracebacks(tmp_path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_bytes(TELECOM.read_bytes()[:5000])
    (problem,) = READER.read(cut)
    assert isinstance(problem, LoadProblem) and "not valid JSON" in problem.message
    listed = tmp_path / "list.json"
    listed.write_bytes(b"[1, 2]")
    (problem,) = READER.read(listed)
    assert isinstance(problem, LoadProblem) and "top level is a list" in problem.message
    data = orjson.loads(TELECOM.read_bytes())
    data["simulations"][0]["messages"][1]["role"] = "narrator"
    data["simulations"][1]["messages"] = {"oops": 1}
    odd = tmp_path / "odd.json"
    odd.write_bytes(orjson.dumps(data))
    trajectories, problems = read(odd)
    assert len(trajectories) == 3
    assert [(p.index, p.field) for p in problems] == [(0, "messages[1].role"), (1, "messages")]


def test_voice_dir_layout_results_without_its_simulations_folder_is_named() -> None:
    trajectories, problems = read(VOICE_RESULTS)
    assert trajectories == [] and len(problems) == 1
    assert "'dir'-layout results.json" in problems[0].message and "simulations/" in problems[0].message
    assert sniff(VOICE_RESULTS) > 0


def test_experiment_folder_reads_its_simulation_files(tmp_path) -> None:
    data = orjson.loads(TELECOM.read_bytes())
    runs = data.pop("simulations")
    (tmp_path / "simulations").mkdir()
    (tmp_path / "results.json").write_bytes(orjson.dumps(data))
    for run in runs[:2]:
        (tmp_path / "simulations" / f"{run['id']}.json").write_bytes(orjson.dumps(run))
    assert READER.sniff(tmp_path, b"").score == 1.0
    for target in (tmp_path, tmp_path / "results.json"):
        trajectories, problems = read(target)
        assert problems == [] and len(trajectories) == 2
        assert {t.metadata["domain"] for t in trajectories} == {"telecom"}
        assert all(t.task and t.steps[0].messages[0].role == "system" for t in trajectories)
    single = tmp_path / "simulations" / f"{runs[0]['id']}.json"
    assert sniff(single) > 0
    (trajectory,) = READER.read(single)
    assert isinstance(trajectory, Trajectory) and trajectory.task.startswith("You mobile data")


def test_big_airline_run_with_max_steps_and_tool_errors() -> None:
    trajectories, problems = read(AIRLINE)
    assert problems == [] and len(trajectories) == 20
    assert sum(t.outcome.success is True for t in trajectories) == 11
    (stopped,) = [t for t in trajectories if t.outcome.status == "max_steps"]
    assert stopped.id == "6#0" and stopped.outcome.reward == 0.0
    assert sum(bool(s.extra.get("tool_error")) for t in trajectories for s in t.steps) == 2


def test_relaxed_airline_trials_and_parallel_tool_calls() -> None:
    trajectories, problems = read(RELAXED)
    assert problems == []
    assert [t.id for t in trajectories] == ["8#2", "8#1", "8#0", "8#3"]
    assert [t.outcome.reward for t in trajectories] == [1.0, 1.0, 0.0, 1.0]
    (step,) = [s for t in trajectories for s in t.steps if "other_tool_calls" in s.extra]
    assert step.action is not None and step.action.name == "get_reservation_details"
    assert [c["arguments"]["reservation_id"] for c in step.extra["other_tool_calls"]] == [
        "KC18K6",
        "S61CZX",
        "H8Q05L",
        "WUNA5K",
    ]
    assert len(step.extra["other_tool_results"]) == 4 and step.tool_result


def test_full_duplex_voice_run_loads_with_a_warning() -> None:
    assert sniff(VOICE_RUN) > 0
    trajectories, problems = read(VOICE_RUN)
    assert [t.id for t in trajectories] == ["40#0"] and trajectories[0].outcome.status == "user_stop"
    assert len(problems) == 1 and problems[0].severity == "warning" and "973 ticks" in problems[0].message


def test_full_duplex_ticks_with_text_and_tool_calls_become_steps(tmp_path) -> None:
    """Synthetic: the real voice fixture is audio only, so ticks with transcripts are built here."""

    def tick(n: int, agent: str | None = None, user: str | None = None, **more: object) -> dict[str, object]:
        return {
            "tick_id": n,
            "timestamp": f"t{n}",
            "agent_chunk": {"role": "assistant", "content": agent} if agent else None,
            "user_chunk": {"role": "user", "content": user} if user else None,
            **more,
        }

    call = {"id": "c1", "name": "get_user_details", "arguments": {"user_id": "u1"}, "requestor": "assistant"}
    run = {
        "id": "r1",
        "task_id": "7",
        "trial": 0,
        "termination_reason": "agent_stop",
        "mode": "full_duplex",
        "ticks": [
            tick(0, agent="Hello, "),
            tick(1, agent="how can I help?"),
            tick(2, user="My id is u1."),
            tick(
                3,
                agent_tool_calls=[call],
                agent_tool_results=[
                    {"id": "c1", "role": "tool", "content": '{"name": "Ann"}', "requestor": "assistant"}
                ],
            ),
            tick(4, agent="Hi Ann."),
        ],
    }
    path = tmp_path / "run.json"
    path.write_bytes(orjson.dumps(run))
    (trajectory,) = READER.read(path)
    assert isinstance(trajectory, Trajectory)
    assert [s.content for s in trajectory.steps] == ["Hello, how can I help?", "", "Hi Ann."]
    step = trajectory.steps[1]
    assert step.action is not None and step.action.arguments == {"user_id": "u1"}
    assert step.observation == "My id is u1." and step.tool_result == '{"name": "Ann"}'


def test_a_truncated_results_file_keeps_its_complete_runs(tmp_path) -> None:
    raw = TELECOM.read_bytes()
    data = orjson.loads(raw)
    fourth = raw.index(data["simulations"][3]["id"].encode())
    cut = tmp_path / "cut.json"
    cut.write_bytes(raw[: fourth + 2000])
    trajectories, problems = read(cut)
    assert [t.outcome.reward for t in trajectories] == [1.0, 1.0, 1.0]
    assert [(p.index, p.field) for p in problems] == [(3, "simulations")] and "truncated" in problems[0].message


@pytest.mark.parametrize("path", [TELECOM, ABORTED, AIRLINE, RELAXED], ids=lambda p: p.name[:30])
def test_big_files_split_into_runs_give_the_same_trajectories(path, monkeypatch) -> None:
    whole = [item.model_dump() for item in READER.read(path)]
    monkeypatch.setattr("replay_tui.formats.tau2.WHOLE_FILE_LIMIT", 0)
    assert [item.model_dump() for item in READER.read(path)] == whole


def test_split_runs_name_a_malformed_run_too(tmp_path, monkeypatch) -> None:
    data = orjson.loads(TELECOM.read_bytes())
    data["simulations"][1] = 42
    data["simulations"][2]["messages"] = None
    odd = tmp_path / "odd.json"
    odd.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    monkeypatch.setattr("replay_tui.formats.tau2.WHOLE_FILE_LIMIT", 0)
    trajectories, problems = read(odd)
    assert len(trajectories) == 3
    assert [(p.index, p.field) for p in problems] == [(1, None), (2, "messages")]
    assert "got a number" in problems[0].message


# -- the run's own outcome, typed ------------------------------------------------------------------

TELECOM_WORKFLOW = DATA / "2025-10-05T22-26-20.526995_telecom-workflow_llm_agent_grok-3_user_simulator_grok-3.json"
PAIRS = DATA.parents[1] / "compare_pairs" / "tau2"
RESULTS_FILES = sorted(
    path
    for folder in (DATA, PAIRS)
    for path in folder.glob("*.json")
    if orjson.loads(path.read_bytes()).get("simulations")
)


@pytest.mark.parametrize("path", RESULTS_FILES, ids=lambda p: p.name[:40])
def test_outcome_counts_equal_those_of_the_files_rewards(path: Path) -> None:
    rewards = [run["reward_info"]["reward"] for run in orjson.loads(path.read_bytes())["simulations"]]
    kinds = [t.outcome.kind for t in read(path)[0]]
    succeeded = sum(abs(reward - 1) <= 1e-6 for reward in rewards)  # tau2's is_successful
    assert kinds.count("succeeded") == succeeded and kinds.count("failed") == len(rewards) - succeeded


def test_a_failed_airline_run_names_its_checks_and_its_reference() -> None:
    by_id = {t.id: t for t in read(AIRLINE)[0]}
    outcome = by_id["14#0"].outcome
    assert outcome.kind == "failed" and outcome.status == "user_stop" and outcome.reward == 0.0
    assert [(c.name, c.passed, c.counts) for c in outcome.checks] == [
        ("db", False, True),
        ("action 1 cancel_reservation", False, False),  # reward_basis is DB, COMMUNICATE: diagnostic
        ("action 2 book_reservation", False, False),
        ('communicate "327"', True, True),
        ('communicate "1000"', True, True),
        ('communicate "44"', False, True),
    ]
    assert outcome.reason == "db: the end state differs from the reference's (its actions replayed)"
    assert outcome.checks[-1].detail == "Information '44' not communicated."
    assert [a.name for a in outcome.expected_actions] == ["cancel_reservation", "book_reservation"]
    assert outcome.target is not None and len(outcome.target.splitlines()) == 5  # the task's NL assertions
    assert outcome.answer is not None and outcome.answer == [s.content for s in by_id["14#0"].steps if s.content][-1]


def test_a_diagnostic_check_never_names_a_succeeded_runs_reason() -> None:
    outcome = {t.id: t for t in read(AIRLINE)[0]}["13#0"].outcome
    assert outcome.kind == "succeeded"
    assert [(c.name, c.passed) for c in outcome.checks if c.passed is False] == [
        ("action 1 transfer_to_human_agents", False)
    ]
    assert outcome.failed_checks == [] and outcome.reason == "user_stop"


def test_max_steps_and_missing_criteria_are_explained() -> None:
    by_id = {t.id: t for t in read(AIRLINE)[0]}
    stopped = by_id["6#0"].outcome
    assert stopped.kind == "failed" and stopped.status == "max_steps" and stopped.checks == []
    assert stopped.explanation == "Simulation terminated prematurely. Termination reason: TerminationReason.MAX_STEPS"
    assert [a.name for a in stopped.expected_actions] == ["get_reservation_details"]  # from the task, unchecked
    relaxed = read(RELAXED)[0][2].outcome  # a fork's acceptable_outcomes, none matched
    assert relaxed.kind == "failed" and relaxed.explanation == "No acceptable outcome matched"
    assert read(RELAXED)[0][0].outcome.expected_actions[3].name == "book_reservation"  # the ones tau2 checked


def test_telecom_user_side_actions_and_env_assertions() -> None:
    trajectories = read(TELECOM_WORKFLOW)[0]
    assert len(trajectories) == 20
    outcome = next(t.outcome for t in trajectories if t.outcome.kind == "failed")
    assert outcome.failed_checks[0].name.startswith("env assertion ")
    assert all(not c.counts for c in outcome.checks if c.name.startswith(("action", "db")))  # basis: ENV_ASSERTION
    users = [a for t in trajectories for a in t.outcome.expected_actions if getattr(a, "requestor", None) == "user"]
    assert users and all(
        a.name.startswith(("toggle", "set_", "disconnect", "reboot", "reseat", "reset")) for a in users
    )
    side = [(t, c) for t in trajectories for c in t.side_calls]
    assert side and {c.requestor for _, c in side} == {"user"}
    assert all(c.after is None or 0 <= c.after < len(t.steps) for t, c in side)
    named = [c.name for t in trajectories for c in t.outcome.checks if "(user)" in c.name]
    assert len(named) == len(users) and all(name.startswith("action ") for name in named)


@pytest.mark.parametrize(
    ("reason", "info", "kind", "error"),
    [
        (
            "infrastructure_error",
            {"error": "API disconnect", "error_type": "APIError"},
            "errored",
            "APIError: API disconnect",
        ),
        ("user_error", None, "errored", "user_error: the user simulator broke the conversation protocol"),
        ("agent_error", None, "failed", None),
        ("too_many_errors", None, "failed", None),
    ],
)
def test_termination_reasons_that_mean_the_run_broke_are_errored(tmp_path, reason, info, kind, error) -> None:
    data = orjson.loads(TELECOM.read_bytes())
    run = data["simulations"][0]
    run["termination_reason"] = reason
    run["reward_info"] = None if reason == "infrastructure_error" else {"reward": 0.0, "info": {"note": "x"}}
    if info is not None:
        run["info"] = info
    path = tmp_path / "run.json"
    path.write_bytes(orjson.dumps(data))
    outcome = read(path)[0][0].outcome
    assert (outcome.kind, outcome.error, outcome.status) == (kind, error, reason)


def test_malformed_checks_and_reference_actions_are_named_and_the_run_loads(tmp_path) -> None:
    data = orjson.loads(TELECOM.read_bytes())
    data["simulations"][0]["reward_info"]["action_checks"] = "none"
    data["simulations"][0]["reward_info"]["env_assertions"][0] = 7
    task_id = data["simulations"][0]["task_id"]
    task = next(t for t in data["tasks"] if t["id"] == task_id)
    task["evaluation_criteria"]["actions"][1] = {"arguments": {}}
    path = tmp_path / "run.json"
    path.write_bytes(orjson.dumps(data))
    trajectories, problems = read(path)
    assert problems == [] and len(trajectories) == 5
    outcome = trajectories[0].outcome
    unreadable = [(c.name, c.passed) for c in outcome.checks if c.detail.startswith("unreadable")]
    assert unreadable == [
        ("reward_info.env_assertions[0]", None),
        ("reward_info.action_checks", None),
        ("evaluation_criteria.actions[1]", None),
    ]
    assert outcome.expected_actions == []  # never aligned against part of the reference


def test_newer_files_tool_types_reach_the_reference_actions(tmp_path) -> None:
    data = orjson.loads(TELECOM.read_bytes())
    run = data["simulations"][3]
    for check, kind in zip(run["reward_info"]["action_checks"], ("write", "write"), strict=True):
        check["tool_type"] = kind  # ActionCheck.tool_type, written since tau2 1.0 (01e812d, 2026-03)
    path = tmp_path / "run.json"
    path.write_bytes(orjson.dumps(data))
    expected = read(path)[0][3].outcome.expected_actions
    assert [(a.name, getattr(a, "tool_type", None)) for a in expected] == [
        ("toggle_data_saver_mode", "write"),
        ("refuel_data", "write"),
    ]
    assert [getattr(a, "tool_type", None) for a in read(TELECOM)[0][3].outcome.expected_actions] == [None, None]
