"""A reopened run made with other settings is named by its own settings (issue 34, item 3): the
status line said ``policy stub · stop`` beside a loaded heuristic/allow run, and an export mixed
the run's policy with the current mismatch setting."""

from __future__ import annotations

from replay_tui.cli.commands import main
from replay_tui.examples import example_path
from tests.tui.conftest import SIZE, wait_replay


def status(app) -> str:
    return str(app.screen.query_one("#status").render())


async def settle(app, pilot) -> None:
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def test_the_status_line_and_exports_name_the_loaded_runs_settings(build, tmp_path, capsys):
    runs_dir = tmp_path / "runs"
    argv = ["replay", "--demos", str(example_path()), "--mode", "heuristic", "--mismatch", "allow"]
    assert main([*argv, "--sessions", "0-4", "--runs-dir", str(runs_dir), "-q"]) in (0, 1)
    capsys.readouterr()
    app = build(mode="stub", mismatch="stop", runs_dir=runs_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        line = status(app)
        assert "loaded run" in line
        assert "run's policy heuristic · allow (r replays with stub · stop)" in line
        exported = app.workspace.summary()  # what every export of the session writes
        assert (exported.mode, exported.mismatch_policy) == ("heuristic", "allow")
        await pilot.press("r")  # a replay with the current settings: they are what is shown now
        await wait_replay(app, pilot)
        await settle(app, pilot)
        assert "policy stub · stop" in status(app) and "run's policy" not in status(app)
        assert app.workspace.summary().mismatch_policy == "stop"
