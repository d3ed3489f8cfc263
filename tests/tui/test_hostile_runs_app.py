"""The runs screen (``H``) on odd run files (issue 27, item 5): dated year 1 or 9999, invalid UTF-8, a
link to /dev/zero, a FIFO, a 3 GiB sparse file. The app stays up and lists each as a row, the
unreadable ones as broken."""

from __future__ import annotations

import os

import pytest

from replay_tui.cli.commands import main
from replay_tui.runs import RunStore
from replay_tui.tui.replay.runs import RunsScreen
from tests.core.test_hostile_paths import hostile_runs
from tests.tui.conftest import SIZE
from tests.tui.test_runs_tui import settle


@pytest.mark.parametrize("tz", ["UTC", "America/New_York"])
async def test_odd_run_files_are_rows_and_the_app_stays_up(build, tmp_path, demo_file, monkeypatch, tz):
    monkeypatch.setenv("TZ", tz)
    if hasattr(os, "tzset"):
        os.tzset()
    assert main(["replay", "--demos", str(demo_file), "-q"]) == 0
    folder = RunStore(tmp_path / "runs").for_demos([demo_file])
    expected = hostile_runs(folder)
    app = build([demo_file])
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press("H")
            await settle(app, pilot)
            screen = app.screen
            assert isinstance(screen, RunsScreen) and screen.loaded and app.is_running
            rows = [[cell.plain for cell in screen.table.source.cells(i)] for i in range(len(screen.entries))]
            assert len(rows) == 1 + len(expected)
            for name, kind in expected.items():
                [row] = [row for row in rows if name in row[2]]
                assert (row[-1] == "broken") == (kind == "broken"), row
            await pilot.press("escape")
            await pilot.pause()
            assert app.is_running
    finally:
        monkeypatch.undo()
        if hasattr(os, "tzset"):
            os.tzset()


async def test_an_export_path_of_an_unknown_user_is_a_toast_and_the_dialog_stays(tmp_path):
    from replay_tui.tui.app import make_app
    from replay_tui.tui.screens.modals import ExportModal

    app = make_app(annotations=tmp_path / "a.json", save_runs=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportModal)
        await pilot.press("tab", "ctrl+a", "ctrl+k", *"~nosuchuser-replay-tui/r.md", "enter")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, ExportModal)
        assert any("no such user" in str(n.message) for n in app._notifications)
