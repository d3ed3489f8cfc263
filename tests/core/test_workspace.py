"""Workspace: building a runner changes nothing; recording results names the policy reports use."""

from replay_tui.examples import example_path
from replay_tui.workspace import ReplaySettings, Workspace


def test_make_runner_leaves_the_workspace_alone_and_record_keeps_the_mode(tmp_path):
    workspace = Workspace.open(
        [example_path()], annotations_path=tmp_path / "notes.json", settings=ReplaySettings(mode="heuristic")
    )
    runner = workspace.make_runner()
    assert runner.mode == "heuristic" and workspace.mode_name == "stub" and not workspace.results
    report = runner.run_episode(workspace.demos.session_ids[0])
    workspace.record(report, runner.mode)
    assert workspace.summary().mode == "heuristic" and workspace.summary().episodes_run == 1
    workspace.record(report)  # without a mode: the last one stays
    assert workspace.mode_name == "heuristic"
