"""The browser's words agree with the stepper's (issue 34, items 3 and 4).

A tau2 episode's turns (every row the stepper lists) and its recorded calls (what a replay judges)
are two columns with those names; two files holding the same episode id (one SWE-bench instance
run twice) get a file column so their rows can be told apart.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.stepper import StepperScreen
from tests.tui.conftest import SIZE

DATA = Path(__file__).resolve().parents[1] / "data/formats"
TAU2 = DATA / "tau2/2025-10-05T22-50-14.083933_airline_grok-3__slice_tasks_0_13_19.json"
PVLIB = DATA / "swe_agent/deepseek_reasoner_dev__pvlib__pvlib-python-1154.traj.json"


def _row(screen: BrowserScreen, index: int) -> dict[str, str]:
    cells = screen.source.cells(index)
    return {column.label: cell.plain for column, cell in zip(screen.source.columns, cells, strict=True)}


async def test_turns_count_the_stepper_rows_and_calls_the_recorded_calls(build):
    app = build([str(TAU2)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        header = [column.label for column in browser.source.columns]
        assert "steps" not in header and {"turns", "calls"} <= set(header)
        row = _row(browser, 0)
        shown = app.export_screenshot().replace("&#160;", " ")
        assert "turns" in shown and "calls" in shown
        await pilot.press("enter")
        await pilot.pause()
        stepper = app.screen
        assert isinstance(stepper, StepperScreen)
        rows = stepper.source.rows
        assert int(row["turns"]) == len(rows) > int(row["calls"])
        assert int(row["calls"]) == sum(1 for r in rows if r.step is not None)


async def test_two_files_with_the_same_episode_id_show_their_file(build, tmp_path):
    rerun = tmp_path / "rerun__pvlib__pvlib-python-1154.traj.json"
    shutil.copyfile(PVLIB, rerun)  # the same instance in a second file
    app = build([str(PVLIB), str(rerun)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        first, second = _row(browser, 0), _row(browser, 1)
        assert first["episode"] == second["episode"]
        assert first["file"] != second["file"]
        assert {first["file"], second["file"]} == {PVLIB.name, rerun.name}


async def test_no_file_column_when_every_id_is_distinct(build):
    app = build([str(TAU2)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "file" not in [column.label for column in app.screen.source.columns]
