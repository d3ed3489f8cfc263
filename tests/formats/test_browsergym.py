"""BrowserGym / AgentLab experiment folders: the real AgentLab runs with and without --allow-pickle,
the restricted unpickler against hostile pickles, screenshots, sniffing."""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from replay_tui.episodes.model import ToolCall, Trajectory, TrajectoryStep
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import detect, read_trajectories, reader_for
from replay_tui.formats.browsergym import (
    BrowserGymReader,
    PickleRefused,
    _final_message,
    flatten_axtree,
    load_pickle,
    parse_action,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "browsergym"
DIALOG = DATA / "2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-dialog_14"
CHECKBOXES = DATA / "2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-checkboxes_20"
ERRORED = DATA / "2024-08-01_10-20-52_GenericAgent_on_miniwob.ascending-numbers_64_e6d2d5"
SAFE = reader_for("browsergym")
ALLOWED = BrowserGymReader(allow_pickle=True)


def load(path: Path, reader=SAFE) -> tuple[list[Trajectory], list[LoadProblem]]:
    items = list(reader.read(path))
    return (
        [item for item in items if isinstance(item, Trajectory)],
        [item for item in items if isinstance(item, LoadProblem)],
    )


def one(path: Path, reader=SAFE) -> tuple[Trajectory, list[LoadProblem]]:
    trajectories, problems = load(path, reader)
    assert len(trajectories) == 1, problems
    return trajectories[0], problems


# -- without --allow-pickle: summary only ------------------------------------------------------


def test_the_safe_default_reads_the_outcome_and_names_allow_pickle() -> None:
    trajectory, problems = one(CHECKBOXES)
    assert trajectory.format == "browsergym" and trajectory.id == CHECKBOXES.name
    assert trajectory.steps == []
    assert trajectory.outcome.reward == 1.0 and trajectory.outcome.success is True
    assert trajectory.outcome.status == "terminated"
    assert trajectory.outcome.scores["n_steps"] == 3 and "stats.cum_cost" in trajectory.outcome.scores
    assert trajectory.task == "miniwob.click-checkboxes"
    assert trajectory.metadata == {
        "agent": "GenericAgent-gpt-4o-mini",
        "task_name": "miniwob.click-checkboxes",
        "seed": 20,
        "started": "2025-01-22_11-03-29",
    }
    [warning] = problems
    assert warning.severity == "warning" and "--allow-pickle" in warning.message
    assert "4 step files" in warning.message and "pickles" in warning.message


def test_an_errored_run_without_steps_is_an_error_outcome() -> None:
    trajectory, problems = one(ERRORED, ALLOWED)
    assert problems == [] and trajectory.steps == []
    assert trajectory.outcome.status == "error" and trajectory.outcome.success is False
    assert trajectory.outcome.reward == 0.0
    assert trajectory.outcome.scores["err_msg"] == "There was a very very bad error"


def test_the_summary_file_itself_reads_its_folder() -> None:
    trajectory, _ = one(DIALOG / "summary_info.json")
    assert trajectory.id == DIALOG.name and trajectory.outcome.reward == 1.0


# -- with --allow-pickle: the steps -------------------------------------------------------------


def test_allow_pickle_reads_steps_with_axtree_actions_thinking_and_prompt() -> None:
    trajectory, problems = one(CHECKBOXES, ALLOWED)
    assert problems == []
    assert trajectory.task == "Select SQkB, ug and click Submit."
    assert trajectory.metadata["model"] == "gpt-4o-mini"
    assert [s.label for s in trajectory.steps] == ["0", "1", "2", "3"]
    assert trajectory.recorded_calls == 3
    first = trajectory.steps[0]
    assert first.action == ToolCall(name="click", arguments={"bid": "18"})
    assert first.action_text == "click('18')"
    assert first.thinking.startswith('I need to select the checkboxes for "SQkB" and "ug"')
    assert first.axtree is not None and "[18] checkbox 'SQkB'" in first.axtree
    assert first.observation.startswith(
        "URL: file:///home/t/miniwob-plusplus/miniwob/html/miniwob/click-checkboxes.html"
    )
    assert "Goal: Select SQkB, ug and click Submit." in first.observation
    assert [m.role for m in first.messages] == ["system", "user"]
    assert "You are an agent trying to solve a web task" in first.messages[0].content
    assert first.content.startswith("<think>") and "<action>" in first.content
    assert first.reward == 0.0 and not first.done
    # the reward of an action is stored with the observation it led to (the next StepInfo)
    third = trajectory.steps[2]
    assert third.action == ToolCall(name="click", arguments={"bid": "33"}) and third.reward == 1.0 and third.done
    last = trajectory.steps[3]
    assert last.action is None and last.done and last.extra["reward_on_arrival"] == 1.0
    assert first.extra["agent_stats"]["input_tokens"] > 0
    assert first.screenshot is None  # AgentLab strips screenshots from the pickles


def test_allow_pickle_reads_the_experiment_settings_from_exp_args() -> None:
    trajectory, _ = one(CHECKBOXES, ALLOWED)
    assert trajectory.metadata["max_steps"] == 5 and trajectory.metadata["seed"] == 20
    assert trajectory.metadata["exp_id"] == "187f0f01-a240-419c-a65e-0058a14f639d"
    exp_args = trajectory.extra["exp_args"]
    assert exp_args["__class__"] == "browsergym.experiments.loop.ExpArgs"
    assert exp_args["exp_dir"].endswith("/2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-checkboxes_20")
    assert exp_args["agent_args"]["flags"]["obs"]["use_ax_tree"] is True


def test_allow_pickle_on_the_single_action_run() -> None:
    trajectory, problems = one(DIALOG, ALLOWED)
    assert problems == [] and trajectory.recorded_calls == 1
    step = trajectory.steps[0]
    assert step.action == ToolCall(name="click", arguments={"bid": "20"}) and step.reward == 1.0 and step.done
    assert "[20] button 'Close'" in (step.axtree or "")


def _copy(tmp_path: Path, source: Path = DIALOG) -> Path:
    target = tmp_path / source.name
    shutil.copytree(source, target)
    for path in target.rglob("*"):
        path.chmod(0o644)
    return target


def _write_step(folder: Path, number: int, value: object) -> None:
    (folder / f"step_{number}.pkl.gz").write_bytes(gzip.compress(pickle.dumps(value)))


def test_an_ndarray_screenshot_becomes_png(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    image = np.zeros((12, 16, 3), dtype=np.uint8)
    image[:, :8] = (255, 0, 0)
    _write_step(
        folder,
        1,
        {
            "step": 1,
            "obs": {"screenshot": image, "url": "http://x", "goal": "g"},
            "action": "fill('5', 'hi')",
            "reward": 1.0,
        },
    )
    trajectory, problems = one(folder, ALLOWED)
    assert problems == []
    step = trajectory.steps[1]
    assert step.screenshot is not None and step.screenshot.startswith(b"\x89PNG")
    decoded = Image.open(io.BytesIO(step.screenshot))
    assert decoded.size == (16, 12) and decoded.getpixel((0, 0)) == (255, 0, 0)
    assert step.action == ToolCall(name="fill", arguments={"bid": "5", "value": "hi"})


def test_a_screenshot_file_next_to_the_step_is_used(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "blue").save(buffer, format="PNG")
    (folder / "screenshot_step_0.png").write_bytes(buffer.getvalue())
    trajectory, _ = one(folder, ALLOWED)
    assert trajectory.steps[0].screenshot == buffer.getvalue()


# -- hostile pickles ----------------------------------------------------------------------------


class _Evil:
    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def test_a_hostile_step_pickle_is_refused_with_its_class_named_and_nothing_runs(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    marker = tmp_path / "pwned"
    _write_step(folder, 0, _Evil(f"echo pwned > {marker}"))
    trajectory, problems = one(folder, ALLOWED)
    assert not marker.exists()
    [refused] = problems
    assert refused.severity == "error" and refused.file == f"{folder.name}/step_0.pkl.gz"
    assert refused.message == f"refused to load pickle class {os.system.__module__}.system: not on the allowlist"
    # the rest of the episode still loads
    assert [s.label for s in trajectory.steps] == ["1"] and trajectory.outcome.reward == 1.0


@pytest.mark.parametrize(
    "payload",
    [
        b"cbuiltins\neval\n(S'1'\ntR.",
        b"csubprocess\nPopen\n(S'true'\ntR.",
        b"cos\nsystem\n(S'true'\ntR.",
        b"cbrowsergym.experiments.loop\n__import__\n.",
    ],
)
def test_the_unpickler_refuses_everything_off_the_allowlist(payload: bytes) -> None:
    with pytest.raises(PickleRefused, match=r"refused to load pickle class .+: not on the allowlist"):
        load_pickle(payload)


def test_stand_ins_never_import_the_original_modules() -> None:
    import sys

    value = load_pickle(pickle.dumps({"a": np.arange(3), "b": (1, 2)}))
    assert value["a"].tolist() == [0, 1, 2]
    before = set(sys.modules)
    one(CHECKBOXES, ALLOWED)
    assert not any(name.startswith(("browsergym", "agentlab")) for name in set(sys.modules) - before)


def test_a_corrupt_step_file_is_a_problem(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "step_1.pkl.gz").write_bytes(b"not gzip")
    trajectory, problems = one(folder, ALLOWED)
    assert len(problems) == 1 and "gzip" in problems[0].message
    assert trajectory.recorded_calls == 1


# -- sniffing and the registry ------------------------------------------------------------------


def test_sniffing() -> None:
    assert SAFE.sniff(DIALOG, b"").score == 1.0
    assert SAFE.sniff(ERRORED, b"").score == 0.9
    head = (DIALOG / "summary_info.json").read_bytes()
    assert SAFE.sniff(DIALOG / "summary_info.json", head).score == 0.9
    assert SAFE.sniff(DIALOG / "package_versions.txt", b"numpy==1").score == 0
    assert SAFE.sniff(Path(__file__).parent, b"").score == 0
    reader, found = detect(DIALOG)
    assert reader.name == "browsergym" and found.score == 1.0


def test_a_study_folder_reads_every_experiment(tmp_path: Path) -> None:
    for source in (DIALOG, CHECKBOXES, ERRORED):
        _copy(tmp_path, source)
    assert SAFE.sniff(tmp_path, b"").score == 0.8
    trajectories = [t for t in read_trajectories(tmp_path) if isinstance(t, Trajectory)]
    assert [t.id for t in trajectories] == sorted(p.name for p in (DIALOG, CHECKBOXES, ERRORED))


# -- actions and trees --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click('20')", ToolCall(name="click", arguments={"bid": "20"})),
        ("click('a1', button='right')", ToolCall(name="click", arguments={"bid": "a1", "button": "right"})),
        (
            "select_option('3', ('a', 'b'))",
            ToolCall(name="select_option", arguments={"bid": "3", "options": ["a", "b"]}),
        ),
        ("go_back()", ToolCall(name="go_back")),
        ("my_tool(1, 2, x=3)", ToolCall(name="my_tool", arguments={"args": [1, 2], "x": 3})),
        ("click('1')\nfill('2', 'x')", ToolCall(name="click", arguments={"code": "click('1')\nfill('2', 'x')"})),
    ],
)
def test_action_strings_become_tool_calls(text: str, expected: ToolCall) -> None:
    assert parse_action(text) == expected


def test_an_axtree_object_flattens_to_text() -> None:
    tree = {
        "nodes": [
            {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "Page"}, "childIds": ["2"]},
            {"nodeId": "2", "ignored": True, "role": {"value": "none"}, "parentId": "1", "childIds": ["3"]},
            {
                "nodeId": "3",
                "role": {"value": "button"},
                "name": {"value": "OK"},
                "parentId": "2",
                "browsergym_id": "7",
            },
        ]
    }
    assert flatten_axtree(tree) == "RootWebArea 'Page'\n\t[7] button 'OK'"


# -- outcome (issue 30): each value checked against summary_info.json ----------------------------


@pytest.mark.parametrize("folder", [ERRORED, CHECKBOXES, DIALOG])
def test_the_outcome_is_summary_info_s_own(folder: Path) -> None:
    summary = json.loads((folder / "summary_info.json").read_text())
    outcome = one(folder, ALLOWED)[0].outcome
    assert outcome.reward == summary["cum_reward"]
    if summary["err_msg"]:
        assert outcome.error is not None and outcome.error.startswith(summary["err_msg"])
        assert outcome.kind == "errored" and outcome.reason == summary["err_msg"].splitlines()[0]
    else:
        assert outcome.error is None and outcome.kind == ("succeeded" if summary["cum_reward"] > 0 else "failed")
    assert outcome.status == ("error" if summary["err_msg"] else "terminated" if summary["terminated"] else "truncated")


def test_an_error_keeps_its_stack_trace(tmp_path: Path) -> None:
    folder = tmp_path / ERRORED.name
    folder.mkdir()
    summary = json.loads((ERRORED / "summary_info.json").read_text())
    summary["stack_trace"] = "Traceback (most recent call last):\nValueError: no page"
    (folder / "summary_info.json").write_text(json.dumps(summary))
    outcome = one(folder)[0].outcome
    assert outcome.error == f"{summary['err_msg']}\n\n{summary['stack_trace']}"


def test_the_agent_s_message_to_the_user_is_its_answer() -> None:
    said = TrajectoryStep(index=0, action=ToolCall(name="send_msg_to_user", arguments={"text": "42 km"}))
    clicked = TrajectoryStep(index=1, action=ToolCall(name="click", arguments={"bid": "3"}))
    assert _final_message([said, clicked]) == "42 km"
    gave_up = TrajectoryStep(index=2, action=ToolCall(name="report_infeasible", arguments={"reason": "no such item"}))
    assert _final_message([said, gave_up]) == "no such item" and _final_message([clicked]) is None


def test_an_uncaught_exception_leads_with_its_type_and_message(tmp_path: Path) -> None:
    """``loop.py`` writes ``Exception uncaught by agent or environment in task T.\\nType:\\nmessage``."""
    folder = tmp_path / ERRORED.name
    folder.mkdir()
    summary = json.loads((ERRORED / "summary_info.json").read_text())
    summary["err_msg"] = (
        "Exception uncaught by agent or environment in task miniwob.ascending-numbers.\n"
        "TimeoutError:\nTimeout 30000ms exceeded.\n=========================== logs ==========================="
    )
    (folder / "summary_info.json").write_text(json.dumps(summary))
    outcome = one(folder)[0].outcome
    assert outcome.reason == "TimeoutError: Timeout 30000ms exceeded."
    assert outcome.error is not None and summary["err_msg"] in outcome.error
