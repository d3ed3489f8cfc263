"""The export dialog (issue 16): it remembers the last format and folder, and under a filter it
offers to export only the episodes shown."""

from __future__ import annotations

import json

from replay_tui.config import state_path
from replay_tui.tui.app import make_app
from replay_tui.tui.screens.modals import ExportModal
from replay_tui.workspace import ReplaySettings
from tests.tui.conftest import SIZE, wait_replay


async def test_export_only_the_filtered_episodes_and_reopen_with_the_last_format_and_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default folder: the current one
    reports = tmp_path / "reports"
    reports.mkdir()
    settings = ReplaySettings(mode="heuristic")
    app = make_app(settings=settings, annotations=tmp_path / "a.json", save_runs=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await wait_replay(app, pilot)
        replayed = len(app.workspace.results)
        await pilot.press("m")  # only the episodes with mismatches
        await pilot.pause()
        shown = [row.session_id for row in app.screen.source.rows]
        assert 0 < len(shown) < replayed
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportModal)
        checkbox = dialog.query_one("#export-shown")
        assert f"only the {len(shown)} episodes shown (mismatches)" in str(checkbox.label)
        await pilot.press("end")  # JUnit
        await pilot.press("tab", "ctrl+a", "ctrl+k", *str(reports / "mine.xml"))
        await pilot.press("tab", "space", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, ExportModal)
    xml = (reports / "mine.xml").read_text()
    assert xml.count("<testcase") == len(shown) + xml.count('classname="load-problem"')
    assert json.loads(state_path().read_text()) == {"export_dir": str(reports), "export_format": "junit"}

    again = make_app(settings=settings, annotations=tmp_path / "a.json", save_runs=False)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await pilot.pause()
        dialog = again.screen
        assert isinstance(dialog, ExportModal)
        assert dialog.query_one("#export-path").value == str(reports / "replay-report.xml")
        assert dialog.fmt == "junit"
        assert not dialog.query("#export-shown")  # no filter, nothing to offer
