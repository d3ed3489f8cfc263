"""SWE-agent ``.traj`` and mini-swe-agent trajectories: real files from both projects, sniffing,
malformed input as named problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay_tui.episodes.model import ToolCall, Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.examples import example_path
from replay_tui.formats import detect, read_trajectories, reader_for
from replay_tui.formats.base import HEAD_BYTES

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "swe_agent"
READER = reader_for("swe-agent")


def load(path: Path) -> tuple[Trajectory, list[LoadProblem]]:
    items = list(READER.read(path))
    trajectories = [item for item in items if isinstance(item, Trajectory)]
    problems = [item for item in items if isinstance(item, LoadProblem)]
    assert len(trajectories) == 1, problems
    return trajectories[0], problems


def sniff(path: Path) -> float:
    with path.open("rb") as handle:
        return READER.sniff(path, handle.read(HEAD_BYTES)).score


# -- SWE-agent ----------------------------------------------------------------------------------


def test_function_calling_traj_takes_each_step_call_from_the_history() -> None:
    trajectory, problems = load(DATA / "6e44b9__sweagenttestrepo-1c2844.traj")
    assert problems == []
    assert trajectory.format == "swe-agent" and trajectory.id == "SWE-agent__test-repo-i1"
    assert trajectory.task.startswith("SyntaxError: invalid syntax")
    assert len(trajectory.steps) == 5 and trajectory.recorded_calls == 5
    first = trajectory.steps[0]
    assert first.action == ToolCall(
        name="find_file", arguments={"file_name": "missing_colon.py"}, id=first.action.id if first.action else None
    )
    assert first.action is not None and first.action.id and first.action.id.startswith("call_")
    assert first.action_text == "find_file missing_colon.py"
    assert first.thinking.startswith("To start addressing this issue")
    assert first.tool_result is not None and first.tool_result.startswith('Found 1 matches for "missing_colon.py"')
    assert [m.role for m in first.messages] == ["system", "user"]
    assert first.observation.startswith("We're currently solving the following issue")
    second = trajectory.steps[1]
    assert second.observation == first.tool_result  # what the model saw: the previous observation
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "tool"]
    assert second.messages[2].tool_calls[0].name == "find_file"
    # the last step (submit) has no history entry: its command line names the tool
    last = trajectory.steps[-1]
    assert last.action == ToolCall(name="submit", arguments={"command": "submit"}) and last.done
    assert last.tool_result is not None and "diff --git a/tests/missing_colon.py" in last.tool_result
    assert trajectory.outcome.status == "submitted" and trajectory.outcome.success is None
    assert trajectory.outcome.scores["model_stats"]["api_calls"] == 5
    assert trajectory.outcome.scores["submission_length"] == len(trajectory.extra["info"]["submission"])
    assert trajectory.metadata["model"] == "gpt-4o" and trajectory.metadata["environment"] == "main"
    assert "edited_files30" in trajectory.extra["info"] and "replay_config" in trajectory.extra
    assert first.extra["execution_time"] == pytest.approx(0.2814128329991945)


def test_text_actions_are_bash_or_swe_agent_commands() -> None:
    trajectory, problems = load(DATA / "marshmallow-1867__xml_sys-env_window100.traj")
    assert problems == []
    assert trajectory.id == "marshmallow-code__marshmallow-1867"
    assert trajectory.task.startswith("TimeDelta serialization precision")
    assert len(trajectory.steps) == 11
    names = [step.action.name for step in trajectory.steps if step.action]
    assert names[:2] == ["create", "edit"] and names[-1] == "submit"
    edit = trajectory.steps[1]
    assert edit.action is not None and edit.action.arguments["command"].startswith("edit 1:1\nfrom marshmallow.fields")
    assert edit.thinking == "Now let's paste in the example code from the issue."
    assert "<command>" in edit.content  # the raw response keeps the XML-style command
    assert edit.state is not None and '"open_file"' in edit.state

    humaneval, _ = load(DATA / "humanevalfix-python-0.traj")
    assert humaneval.id == "humanevalfix-python-0" and len(humaneval.steps) == 5
    first = humaneval.steps[0]
    assert first.action == ToolCall(name="bash", arguments={"command": "ls -a"}) and first.action_text == "ls -a\n"
    assert first.tool_result == ".\n..\n.git\nmain.py\n"
    assert humaneval.outcome.status == "submitted"


def test_history_only_file_is_read_message_by_message() -> None:
    trajectory, problems = load(DATA / "function_calling_simple.traj")
    assert problems == []
    assert trajectory.id == "function_calling_simple" and len(trajectory.steps) == 5
    assert trajectory.steps[1].action is not None
    assert trajectory.steps[1].action.display() == 'open({"path":"tests/missing_colon.py"})'
    assert trajectory.steps[-1].action == ToolCall(name="submit", id=trajectory.steps[-1].action.id)  # type: ignore[union-attr]
    assert trajectory.steps[0].thinking.startswith("The `SyntaxError` in `missing_colon.py`")
    assert trajectory.outcome.status is None and not trajectory.steps[-1].done


def test_replay_variant_messages_are_cut_before_the_step_answer() -> None:
    trajectory, problems = load(DATA / "marshmallow-1867__function_calling_replace_from_source.traj")
    assert problems == []
    assert len(trajectory.steps) == 13 and trajectory.recorded_calls == 13
    assert [len(step.messages) for step in trajectory.steps[:3]] == [2, 4, 6]
    assert trajectory.steps[0].extra["prompt_source"] == "messages"
    assert trajectory.steps[0].action == ToolCall(
        name="bash", arguments={"command": "ls -F"}, id="call_9diWc1DYm4RLmPfHgIaP2wd"
    )
    assert trajectory.steps[1].action is not None and trajectory.steps[1].action.arguments == {"path": "setup.py"}
    assert trajectory.metadata["model"] == "replay"


# -- mini-swe-agent -----------------------------------------------------------------------------


def test_mini_text_based_message_list() -> None:
    trajectory, problems = load(DATA / "github_issue.traj.json")
    assert problems == []
    assert trajectory.id == "github_issue" and len(trajectory.steps) == 10 and trajectory.recorded_calls == 10
    assert trajectory.task.startswith("Please solve this issue: GitHub Issue: SyntaxError")
    second = trajectory.steps[1]
    assert second.action == ToolCall(name="bash", arguments={"command": "ls -la"})  # a ```mswea_bash_command block
    assert second.observation.startswith("<returncode>1</returncode>")
    assert second.tool_result is not None and second.tool_result.startswith("<returncode>0</returncode>")
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "user"]
    assert trajectory.steps[-1].tool_result is not None and trajectory.steps[-1].tool_result.startswith("diff --git")

    early, problems = load(DATA / "traj__early_2025-07.json")
    assert problems == [] and len(early.steps) == 10
    assert early.steps[-1].action is not None
    assert early.steps[-1].action.arguments["command"].startswith("echo NANO_SWE_AGENT_FINAL_OUTPUT")


def test_mini_failed_runs_keep_their_exit_status_and_task() -> None:
    trajectory, problems = load(DATA / "deepseek_reasoner_dev__pvlib__pvlib-python-1154.traj.json")
    assert problems == []
    assert trajectory.id == "pvlib__pvlib-python-1154" and trajectory.steps == []
    assert trajectory.outcome.status == "Timeout"
    assert trajectory.task.startswith("pvlib.irradiance.reindl() model generates NaNs when GHI = 0")
    assert trajectory.metadata["model"] == "deepseek/deepseek-reasoner"
    assert trajectory.metadata["trajectory_format"] == "mini-swe-agent-1.1"
    assert "litellm.Timeout" in trajectory.extra["info"]["exception_str"]
    other, _ = load(DATA / "deepseek_reasoner_dev__pvlib__pvlib-python-1854.traj.json")
    assert other.outcome.status == "InternalServerError" and other.outcome.scores["submission_length"] == 0


def test_mini_reasoning_and_parallel_tool_calls() -> None:
    trajectory, problems = load(DATA / "synthetic_mini_reasoning.traj.json")
    assert problems == []
    assert trajectory.id == "synthetic__reasoning-1" and trajectory.task == "Make x.py print 2"
    first, second = trajectory.steps
    assert first.thinking.startswith("The task is about x.py") and first.content == "Let me look at x.py and the tests."
    assert first.action == ToolCall(name="bash", arguments={"command": "cat x.py"}, id="call_a")
    assert [call["arguments"]["command"] for call in first.extra["tool_calls"]] == ["cat x.py", "ls tests"]
    assert first.tool_result == "<returncode>0</returncode>\n<output>\nprint(1)\n</output>"
    assert len(first.extra["tool_results"]) == 2
    assert second.observation.count("<returncode>0</returncode>") == 2
    assert second.thinking == "Replace 1 by 2, then submit the diff." and second.tool_result is None and second.done
    assert trajectory.outcome.status == "Submitted" and trajectory.outcome.scores["model_stats"]["api_calls"] == 2


def test_mini_tool_calling_run() -> None:
    trajectory, problems = load(DATA / "deepseek_chat_dev__pvlib__pvlib-python-1154.traj.json")
    assert problems == []
    assert len(trajectory.steps) == 73 == trajectory.outcome.scores["model_stats"]["api_calls"]
    assert trajectory.steps[0].action == ToolCall(
        name="bash",
        arguments={"command": 'find . -type f -name "*.py" | head -20'},
        id="call_00_MyaDZTO9eZv0WGNpbVIEqmeH",
    )
    assert trajectory.steps[0].thinking == ""  # deepseek-chat writes no reasoning_content
    assert trajectory.outcome.status == "Submitted" and trajectory.metadata["mini_version"] == "2.2.7"


# -- sniffing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", sorted(p for p in DATA.iterdir() if p.suffix in (".traj", ".json")), ids=lambda p: p.name
)
def test_every_file_is_detected_as_swe_agent(path: Path) -> None:
    assert sniff(path) >= 0.9
    assert detect(path)[0].name == "swe-agent"
    assert any(isinstance(item, Trajectory) for item in read_trajectories(path))


def test_other_json_scores_zero(tmp_path: Path) -> None:
    openai = tmp_path / "openai.json"
    openai.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": "weather?"},
                    {"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "w", "arguments": "{}"}}]},
                ],
                "tools": [{"type": "function", "function": {"name": "w"}}],
            }
        )
    )
    tau2 = tmp_path / "tau2.json"
    tau2.write_text(json.dumps({"info": {"num_trials": 1}, "simulations": [{"messages": [], "reward_info": {}}]}))
    inspect = tmp_path / "inspect.json"
    inspect.write_text(json.dumps({"version": 2, "status": "success", "eval": {}, "samples": [{"messages": []}]}))
    chat_list = tmp_path / "chat_list.json"
    chat_list.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    for path in (openai, tau2, inspect, chat_list, example_path()):
        assert sniff(path) == 0, path.name
    for name in ("tau2", "inspect_ai", "openai_chat", "webshop_human"):
        for path in (DATA.parent / name).glob("*.json*"):
            assert sniff(path) == 0, path.name


# -- malformed input ----------------------------------------------------------------------------


def test_malformed_files_are_named_problems(tmp_path: Path) -> None:
    def problems_of(name: str, content: str | bytes) -> list[LoadProblem]:
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        items = list(READER.read(path))
        return [item for item in items if isinstance(item, LoadProblem)]

    (problem,) = problems_of("broken.traj", '{"trajectory": [{"action": "ls"')
    assert problem.file == "broken.traj" and problem.message.startswith("not JSON")
    (problem,) = problems_of("number.traj", "42")
    assert "top level is a JSON int" in problem.message
    (problem,) = problems_of("empty.traj", "")
    assert problem.message == "empty file"
    (problem,) = problems_of("other.json", '{"hello": "world"}')
    assert "not a SWE-agent/mini-swe-agent file" in problem.message
    (missing,) = READER.read(tmp_path / "missing.traj")
    assert isinstance(missing, LoadProblem) and missing.message.startswith("cannot read")


def test_bad_fields_are_problems_and_the_rest_still_loads(tmp_path: Path) -> None:
    doc = {
        "environment": "main",
        "trajectory": [
            {"action": "ls", "observation": "a.py", "thought": "look", "response": "look\n```\nls\n```"},
            "not a step",
            {"action": 7, "observation": ["x"], "thought": None, "response": ""},
            {"action": "open a.py", "observation": "[File: a.py]", "thought": "t", "response": "r", "messages": 3},
        ],
        "history": [{"role": "system", "content": "sys"}, 5, {"content": "no role"}],
        "info": {"exit_status": 3, "submission": None, "model_stats": {"api_calls": 3}},
    }
    path = tmp_path / "bad-1.traj"
    path.write_text(json.dumps(doc))
    trajectory, problems = load(path)
    fields = {problem.field for problem in problems}
    assert {
        "trajectory[1]",
        "trajectory[2].action",
        "trajectory[2].observation",
        "trajectory[3].messages",
        "history[1]",
        "history[2].role",
        "info.exit_status",
    } <= fields
    assert all(p.file == "bad-1.traj" and p.index == 0 and p.session_id == "bad-1" for p in problems)
    assert [step.label for step in trajectory.steps] == ["0", "2", "3"]
    assert trajectory.steps[0].action == ToolCall(name="bash", arguments={"command": "ls"})
    assert trajectory.steps[1].action == ToolCall(name="bash", arguments={"command": "7"})
    assert trajectory.steps[2].action == ToolCall(name="open", arguments={"command": "open a.py"})
    assert trajectory.outcome.status == "3"

    mini = {
        "info": {"exit_status": "Submitted"},
        "messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": "no block here"},
            {"role": "user", "content": "Please always provide EXACTLY ONE action"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "bash", "arguments": "{oops"}}]},
            {"role": "assistant", "content": "", "tool_calls": "nope"},
        ],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    path = tmp_path / "mini.traj.json"
    path.write_text(json.dumps(mini))
    trajectory, problems = load(path)
    assert len(trajectory.steps) == 3
    assert trajectory.steps[0].action is None
    assert trajectory.steps[1].action == ToolCall(name="bash", raw_arguments="{oops")
    fields = {problem.field for problem in problems}
    assert {"messages[1]", "messages[3].tool_calls[0].function.arguments", "messages[4].tool_calls"} <= fields


def test_nan_is_read_leniently_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "nan.traj"
    path.write_text(
        '{"trajectory": [{"action": "ls", "observation": "", "thought": "", "response": ""}],'
        ' "info": {"model_stats": {"instance_cost": NaN}}}'
    )
    trajectory, problems = load(path)
    assert len(trajectory.steps) == 1
    assert [p.severity for p in problems] == ["warning"] and "not strict JSON" in problems[0].message


@pytest.mark.parametrize("depth", [300, 1000, 100_000])
def test_deeply_nested_values_never_raise(tmp_path: Path, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    path = tmp_path / "deep.traj"
    path.write_text(f'{{"trajectory": [{{"action": {nested}, "observation": "x", "thought": ""}}]}}')
    items = list(READER.read(path))
    assert items and all(isinstance(item, Trajectory | LoadProblem) for item in items)


# -- key order (issue 31) -----------------------------------------------------------------------


def test_a_mini_run_whose_head_is_one_long_submission_is_still_detected(tmp_path: Path) -> None:
    """Issue 31 (2): mini-swe-agent writes ``info`` first; a submitted patch over 64 KiB at its front
    left no ``"messages"`` key in the head, and the file was not recognised."""
    original = DATA / "deepseek_reasoner_dev__pvlib__pvlib-python-1154.traj.json"
    doc = json.loads(original.read_text())
    hunk = '+    rows.append({"messages": [1], "info": {"exit_status": "x"}})  # quoted keys in a patch\n'
    patch = "diff --git a/pvlib/irradiance.py b/pvlib/irradiance.py\n" + hunk * 1200
    assert len(patch) > HEAD_BYTES
    info = {"submission": patch, **{k: v for k, v in doc["info"].items() if k != "submission"}}
    path = tmp_path / "pvlib-python-1154.traj.json"
    path.write_text(json.dumps({"info": info, **{k: v for k, v in doc.items() if k != "info"}}, indent=2))
    assert b'"messages"' not in path.read_bytes()[:HEAD_BYTES]
    assert sniff(path) >= 0.9
    assert detect(path)[0].name == "swe-agent"
    trajectory, _ = load(path)
    expected, _ = load(original)
    assert trajectory.id == expected.id and trajectory.task == expected.task
    assert trajectory.outcome.scores["submission_length"] == len(patch)


def test_a_long_json_of_another_format_is_not_taken_for_mini(tmp_path: Path) -> None:
    """The search past the head looks for keys, never for text inside values."""
    text = 'see "messages": [ and "info": {"exit_status": "x"} and "trajectory_format": "mini-swe-agent-1.1"'
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"info": {"note": text * 2000}, "rows": [text]}))
    assert sniff(path) == 0


def test_a_turn_with_two_bash_blocks_has_no_call_as_mini_ran_none() -> None:
    """Issue 31 (3): mini's parse_action wants exactly one bash block; with two the turn is a format
    error and nothing runs, but the reader recorded (and a replay judged) its first block as a call."""
    trajectory, problems = load(DATA / "mini_v1_two_bash_blocks.traj.json")
    assert problems == []
    assert [step.action.arguments["command"] if step.action else None for step in trajectory.steps] == [
        "ls",
        None,
        "echo hello > a.txt && cat a.txt",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    ]
    rejected = trajectory.steps[1]
    assert rejected.content.startswith("THOUGHT: create a file and show it.")  # still shown, as a message
    assert rejected.extra["commands"] == ["echo hello > a.txt", "cat a.txt"]
    assert "none ran" in rejected.extra["format_error"]
    assert rejected.tool_result is not None and "EXACTLY ONE action" in rejected.tool_result
    assert trajectory.recorded_calls == 3 and trajectory.outcome.status == "Submitted"


def test_mini2_records_a_rejected_turn_only_in_its_format_error_and_it_is_a_step_without_a_call() -> None:
    """mini 2 keeps no assistant message for a turn with two blocks, only the format error (the
    answer in extra.model_response): the answer is shown as a step, without a call."""
    trajectory, problems = load(DATA / "mini_v2_two_bash_blocks.traj.json")
    assert problems == []
    assert [step.action.arguments["command"] if step.action else None for step in trajectory.steps] == [
        "ls",
        None,
        "echo hello > a.txt && cat a.txt",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    ]
    rejected = trajectory.steps[1]
    assert rejected.content.startswith("THOUGHT: write and show.")
    assert rejected.extra["commands"] == ["echo hello > a.txt", "cat a.txt"]
    assert rejected.tool_result is not None and "Expected exactly 1 action, found 2." in rejected.tool_result
    assert [m.role for m in rejected.messages] == ["system", "user", "assistant", "user"]
    assert trajectory.recorded_calls == 3 and trajectory.outcome.status == "Submitted"


# -- outcome (issue 30): the log's own verdict, each value checked against the file --------------


@pytest.mark.parametrize(
    "name",
    [
        "deepseek_reasoner_dev__pvlib__pvlib-python-1154.traj.json",
        "deepseek_reasoner_dev__pvlib__pvlib-python-1854.traj.json",
    ],
)
def test_a_crashed_mini_run_shows_its_exit_status_and_error(name: str) -> None:
    info = json.loads((DATA / name).read_text())["info"]
    trajectory, _ = load(DATA / name)
    outcome = trajectory.outcome
    assert outcome.status == info["exit_status"]
    assert outcome.error is not None and outcome.error.startswith(info["exception_str"])
    assert info["traceback"].strip() in outcome.error
    assert outcome.kind == "errored" and outcome.reason == info["exception_str"]
    assert outcome.answer is None and outcome.success is None


def test_a_mini_1_crash_names_the_exception_it_saved_as_the_submission(tmp_path: Path) -> None:
    """mini 1's batch runner saves ``str(e)`` as the submission and only a ``traceback`` beside it."""
    doc = json.loads((DATA / "mini_v1_two_bash_blocks.traj.json").read_text())
    trace = 'Traceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: container died'
    doc["info"].update(exit_status="RuntimeError", submission="container died", traceback=trace)
    path = tmp_path / "crash.traj.json"
    path.write_text(json.dumps(doc))
    outcome = load(path)[0].outcome
    assert outcome.status == "RuntimeError" and outcome.kind == "errored"
    assert outcome.reason == "container died" and outcome.answer is None


def test_a_submitted_run_keeps_its_patch_as_the_answer() -> None:
    for name in ("6e44b9__sweagenttestrepo-1c2844.traj", "deepseek_chat_dev__pvlib__pvlib-python-1154.traj.json"):
        info = json.loads((DATA / name).read_text())["info"]
        outcome = load(DATA / name)[0].outcome
        assert outcome.answer == info["submission"] and outcome.status == info["exit_status"]
        assert outcome.error is None and outcome.success is None and outcome.kind == "unknown"


def test_a_swe_agent_error_exit_carries_its_message(tmp_path: Path) -> None:
    """SWE-agent's ``exit_error`` step records ``Exit due to ...`` as its response (``agents.py``)."""
    doc = json.loads((DATA / "humanevalfix-python-0.traj").read_text())
    doc["info"]["exit_status"] = "submitted (exit_error)"
    doc["trajectory"][-1]["response"] = "Exit due to runtime error: the container stopped"
    path = tmp_path / "err.traj"
    path.write_text(json.dumps(doc))
    outcome = load(path)[0].outcome
    assert outcome.kind == "errored" and outcome.reason == "Exit due to runtime error: the container stopped"
    doc["info"]["exit_status"] = "exit_cost"
    path.write_text(json.dumps(doc))
    limited = load(path)[0].outcome
    assert limited.error is None and limited.status == "exit_cost" and limited.kind == "unknown"


def test_a_swebench_report_beside_the_trajectory_decides_success(tmp_path: Path) -> None:
    """The harness's per-instance ``report.json`` (resolved, tests_status) and SWE-agent's
    ``results.json`` (resolved_ids...) in the trajectory's folder or its parent."""
    name = "deepseek_chat_dev__pvlib__pvlib-python-1154.traj.json"
    run = tmp_path / "run" / "pvlib__pvlib-python-1154"
    run.mkdir(parents=True)
    path = run / name
    path.write_bytes((DATA / name).read_bytes())
    assert load(path)[0].outcome.success is None
    tests = {
        "FAIL_TO_PASS": {"success": [], "failure": ["test_reindl_nan"]},
        "PASS_TO_PASS": {"success": ["test_a", "test_b"], "failure": []},
    }
    report = {
        "pvlib__pvlib-python-1154": {"patch_successfully_applied": True, "resolved": False, "tests_status": tests}
    }
    (run / "report.json").write_text(json.dumps(report))
    outcome = load(path)[0].outcome
    assert outcome.success is False and outcome.kind == "failed"
    assert [(c.name, c.passed) for c in outcome.checks] == [("FAIL_TO_PASS", False), ("PASS_TO_PASS", True)]
    assert outcome.reason == "FAIL_TO_PASS: failing: test_reindl_nan"
    (run / "report.json").unlink()
    (tmp_path / "run" / "results.json").write_text(json.dumps({"resolved_ids": ["pvlib__pvlib-python-1154"]}))
    assert load(path)[0].outcome.kind == "succeeded"
    (tmp_path / "run" / "results.json").write_text(json.dumps({"resolved_ids": [], "unresolved_ids": ["x"]}))
    assert load(path)[0].outcome.success is None


def test_an_interactive_mini_crash_keeps_the_exception_of_its_exit_message(tmp_path: Path) -> None:
    """``DefaultAgent.serialize()`` copies only exit_status and submission into ``info``; the
    exception and traceback of an uncaught error are in the ``exit`` message's ``extra``."""
    name = "deepseek_reasoner_dev__pvlib__pvlib-python-1154.traj.json"
    doc = json.loads((DATA / name).read_text())
    for key in ("exception_str", "traceback"):
        del doc["info"][key]
    [ending] = [m["extra"] for m in doc["messages"] if m["role"] == "exit"]
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    trajectory, _ = load(path)
    assert trajectory.outcome.kind == "errored" and trajectory.outcome.reason == ending["exception_str"]
    assert "info" in trajectory.extra and "exception_str" not in trajectory.extra["info"]
