"""The verify browser, driven with keys."""

from __future__ import annotations

import json

from replay_tui.tui.verify_app import VerifyApp, VerifyScreen
from replay_tui.tui.widgets.text_pane import TextPane
from replay_tui.verify.evaluate import evaluate_many, reference_response
from replay_tui.verify.models import load_tasks
from tests.tui.conftest import SIZE
from tests.verify.conftest import TASKS_FILE


def make_report():
    tasks = load_tasks(TASKS_FILE)
    good = reference_response(tasks[108])
    wrong = json.loads(json.dumps(good))
    wrong["retrieved_data"][1]["count"] = 999
    answers = [(108, good), (108, wrong), (107, "I could not find it"), (999_999, good)]
    return evaluate_many(tasks, answers), tasks


async def test_verify_browser_lists_verdicts_and_assertions():
    report, tasks = make_report()
    app = VerifyApp(report, tasks)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, VerifyScreen)
        assert [r.status for r in screen.source.rows] == ["success", "failure", "failure", "error"]
        await pilot.press("j")
        detail = screen.query_one("#assertion-detail", TextPane).text
        assert "retrieved_data" in detail and "999" in detail and "expected" in detail
        await pilot.press("f")
        await pilot.pause()
        assert [r.status for r in screen.source.rows] == ["failure", "failure", "error"]
        await pilot.press("G")
        assert "unknown task_id" in screen.query_one("#assertion-detail", TextPane).text


def test_verify_snapshot(snap_compare):
    report, tasks = make_report()
    assert snap_compare(VerifyApp(report, tasks), terminal_size=SIZE, press=["j"])
