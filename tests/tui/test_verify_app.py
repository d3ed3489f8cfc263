"""The verify browser, driven with keys."""

from __future__ import annotations

import json

from replay_tui.tui.verify.app import VerifyApp, VerifyScreen
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


def make_network_report():
    """Answers whose network checks ran on HAR traces (task 399's request right, then with the
    biography changed; task 390's reply status wrong) and one without a trace."""
    from replay_tui.verify.evaluate import evaluate
    from replay_tui.verify.models import Report
    from replay_tui.verify.network import event_from_har
    from tests.verify.parity.network_cases import SITE_URLS, trace_cases

    tasks = load_tasks(TASKS_FILE)
    sites = {site: [url] for site, url in SITE_URLS.items()}

    def run(tid, variant):
        task = tasks[tid]
        entries = dict(trace_cases(task))[variant] if variant else None
        trace = [event_from_har(e, i) for i, e in enumerate(entries)] if entries is not None else None
        return evaluate(task, reference_response(task), trace=trace, site_urls=sites)

    results = [run(399, "exact"), run(399, "value_off"), run(390, None), run(390, "status_off")]
    for line, result in enumerate(results, start=1):
        result.line = line
    return Report.of(results), tasks


async def test_verify_browser_shows_network_assertions_with_the_offending_request():
    report, tasks = make_network_report()
    app = VerifyApp(report, tasks)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, VerifyScreen)
        # 390 without a trace: its network check could not run, so the task is unverified (issue 30)
        assert [r.status for r in screen.source.rows] == ["success", "failure", "unverified", "failure"]
        cells = [str(screen.source.cells(i)[4]) for i in range(4)]
        assert cells == ["1/1", "0/1", "skipped", "0/1"]
        await pilot.press("j")
        detail = screen.query_one("#assertion-detail", TextPane).text
        lines = detail.splitlines()
        at = lines.index("✗ network_event.post_data.user_biography[biography]_mismatch")
        assert lines[at + 1].startswith(
            "  request   #0 POST http://127.0.0.1:9999/user/MarvelsGrantMan136/edit_biography"
        )
        assert lines[at + 2 : at + 5] == [
            "  field     post_data.user_biography[biography]",
            '  expected  "i am a robot"',
            '  actual    "zzz"',
        ]
        await pilot.press("j")
        assert (
            "skipped (answer-only, no trace): NetworkEventEvaluator"
            in screen.query_one("#assertion-detail", TextPane).text
        )
        await pilot.press("f", "G")
        await pilot.pause()
        detail = screen.query_one("#assertion-detail", TextPane).text
        assert "  field     response_status" in detail and "  actual    500" in detail
        assert "request   #0 POST http://127.0.0.1:8023/a11yproject/a11yproject.com/notes?target_id=72594" in detail
