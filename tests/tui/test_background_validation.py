"""Opening a file only indexes it; the app parses every episode in the background and the browser
shows the malformed ones as problems as they are found, before anyone opens them."""

from __future__ import annotations

from replay_tui.cli import main
from replay_tui.tui.replay.browser import BrowserScreen
from tests.conftest import episode, good_episode, search_step, write_json
from tests.tui.conftest import SIZE


def _rows(app) -> list[list[str]]:
    screen = app.screen
    assert isinstance(screen, BrowserScreen)
    return [[cell.plain for cell in screen.source.cells(i)] for i in range(len(screen.source))]


async def _validated(app, pilot) -> None:
    """Wait until the background validation (started after the first refresh) has finished."""
    for _ in range(500):
        if app.validated.is_set():
            break
        await pilot.pause(0.01)
    else:  # pragma: no cover - a hung validation fails the test here
        raise AssertionError("the background validation did not finish")
    await pilot.pause()


def _mixed(tmp_path):
    # sessions 3 and 5 index fine (header and trajectory shape are right) and fail only when parsed
    return write_json(
        tmp_path / "mixed.json",
        [
            good_episode(1),
            good_episode(2),
            episode(3, [search_step(0, llm_action_arguments=[1])]),
            good_episode(4),
            episode(5, [search_step("zero")]),
        ],
    )


async def test_malformed_episodes_appear_as_problems_without_being_opened(build, tmp_path):
    app = build([_mixed(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await _validated(app, pilot)
        rows = _rows(app)
        assert [row[0] for row in rows] == ["1", "2", "3", "4", "5"]
        assert [row[6] for row in rows] == ["—", "—", "problem", "—", "problem"]
        assert "2 problems" in str(app.screen.query_one("#browser-title").render())
        problems = app.workspace.demos.problems
        assert [(p.session_id, p.field) for p in problems] == [
            (3, "trajectory[0].llm_action_arguments"),
            (5, "trajectory[0].step_number"),
        ]
        assert isinstance(app.screen, BrowserScreen)  # nothing was opened


async def test_the_browser_is_usable_while_validation_runs(build, tmp_path, monkeypatch):
    """Validation held up on its worker: the rows are there and keys work; problems come after."""
    import threading

    from replay_tui.episodes.collection import EpisodeSet

    release = threading.Event()
    original = EpisodeSet.validation

    def held(self):
        release.wait(10)
        yield from original(self)

    monkeypatch.setattr(EpisodeSet, "validation", held)
    app = build([_mixed(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [row[6] for row in _rows(app)] == ["—"] * 5
        await pilot.press("down", "down")
        assert app.screen.current_session() == 3
        release.set()
        await _validated(app, pilot)
        assert [row[6] for row in _rows(app)] == ["—", "—", "problem", "—", "problem"]
        assert app.screen.current_session() == 3  # the refresh keeps the cursor


def test_the_cli_still_names_every_malformed_episode(tmp_path, capsys):
    path = _mixed(tmp_path)
    code = main(["replay", "--demos", str(path), "--all", "--mode", "stub", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0
    assert "episode #2" in err and "session 3" in err and "trajectory[0].llm_action_arguments" in err
    assert "episode #4" in err and "session 5" in err and "trajectory[0].step_number" in err


async def test_a_log_of_one_episode_is_read_once_validation_and_open_alike(build, tmp_path):
    """A long trajectory alone in its file (mini-swe-agent, SWE-agent) is parsed by the validation;
    opening it later takes that parse instead of reading the file again (issue 29: reading 40 MB twice
    doubled the wait for the first step of a user who looked at the list for a moment first)."""
    import shutil
    from pathlib import Path

    from replay_tui.tui.replay.stepper import StepperScreen

    sample = (
        Path(__file__).resolve().parents[1] / "data" / "formats" / "swe_agent" / "synthetic_mini_reasoning.traj.json"
    )
    log = tmp_path / "run.traj.json"
    shutil.copy(sample, log)
    app = build([str(log)])
    async with app.run_test(size=SIZE) as pilot:
        await _validated(app, pilot)
        log.unlink()  # what is shown next cannot come from the file
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        assert screen.problem is None
        assert "step 0" in str(screen.query_one("#step-detail").render())
