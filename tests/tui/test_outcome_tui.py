"""Why a run failed, in the app, driven with keys on the shared tau2 airline file: the browser's
outcome columns and ``f`` (failed → errored → max-steps → all), the stepper's outcome header, the
outcome screen (expected vs actual for the whole task) and the outcome groups.

Counts are computed here from the file itself (its rewards and termination reasons), never from
the reader under test."""

from __future__ import annotations

import json
from pathlib import Path

from replay_tui.tui.screens.browser import BrowserScreen
from tests.conftest import DATA
from tests.tui.conftest import SIZE

TAU2_AIRLINE = (
    DATA / "formats" / "tau2" / "2025-10-05T22-50-14.083933_airline_llm_agent_grok-3_user_simulator_grok-3.json"
)


def simulations(path: Path = TAU2_AIRLINE) -> list[dict]:
    return json.loads(path.read_text())["simulations"]


def failed_ids(path: Path = TAU2_AIRLINE) -> list[str]:
    """The episode ids (task#trial) of the file's failed simulations, from their rewards."""
    return [f"{run['task_id']}#{run['trial']}" for run in simulations(path) if run["reward_info"]["reward"] < 1]


def rows(app) -> list[dict[str, str]]:
    screen = app.screen
    assert isinstance(screen, BrowserScreen)
    keys = [column.key for column in screen.source.columns]
    return [
        dict(zip(keys, (cell.plain for cell in screen.source.cells(i)), strict=True)) for i in range(len(screen.source))
    ]


def title(app) -> str:
    return app.screen.query_one("#browser-title").render().plain


async def test_f_shows_the_failed_simulations_only(build):
    failed = failed_ids()
    assert len(failed) == 9 and len(simulations()) == 20
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        every = rows(app)
        assert len(every) == 20
        assert sum(row["success"] == "✗" for row in every) == 9 and sum(row["success"] == "✓" for row in every) == 11
        assert all(row["reason"] for row in every)  # each simulation says why it ended
        await pilot.press("f")
        await pilot.pause()
        shown = rows(app)
        assert sorted(row["episode"] for row in shown) == sorted(failed)
        assert all(row["success"] == "✗" for row in shown)
        assert "filter: failed" in title(app)
        await pilot.press("f")  # nothing errored in this file: the simulations stopped at the step limit
        await pilot.pause()
        limited = [
            f"{run['task_id']}#{run['trial']}" for run in simulations() if run["termination_reason"] == "max_steps"
        ]
        assert limited and [row["episode"] for row in rows(app)] == limited
        assert all(row["reason"] == "max_steps" for row in rows(app)) and "filter: max-steps" in title(app)
        await pilot.press("f")
        await pilot.pause()
        assert len(rows(app)) == 20 and "filter" not in title(app)


async def test_f_cycles_failed_errored_and_max_steps(build, tmp_path):
    """A copy where one failed simulation hit the step limit and one crashed."""
    raw = json.loads(TAU2_AIRLINE.read_text())
    failing = [run for run in raw["simulations"] if run["reward_info"]["reward"] < 1]
    failing[0]["termination_reason"] = "max_steps"
    failing[1]["termination_reason"] = "error"
    path = tmp_path / "airline.json"
    path.write_text(json.dumps(raw))
    app = build([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        await pilot.pause()
        assert len(rows(app)) == 9 and "filter: failed" in title(app)
        await pilot.press("f")
        await pilot.pause()
        (errored,) = rows(app)
        assert errored["episode"] == f"{failing[1]['task_id']}#{failing[1]['trial']}"
        assert errored["success"] == "!" and errored["reason"] == "error" and "filter: errored" in title(app)
        await pilot.press("f")
        await pilot.pause()
        limited = [f"{run['task_id']}#{run['trial']}" for run in failing if run["termination_reason"] == "max_steps"]
        assert len(limited) >= 2 and sorted(row["episode"] for row in rows(app)) == sorted(limited)
        assert "filter: max-steps" in title(app)
        await pilot.press("f")
        await pilot.pause()
        assert len(rows(app)) == 20


async def test_the_outcome_columns_sort(build):
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.sort_by("success")
        await pilot.pause()
        marks = [row["success"] for row in rows(app)]
        assert marks == ["✗"] * 9 + ["✓"] * 11
        screen.sort_by("reason")
        await pilot.pause()
        reasons = [row["reason"].casefold() for row in rows(app)]
        assert reasons == sorted(reasons)
