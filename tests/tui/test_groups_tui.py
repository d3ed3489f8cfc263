"""The mismatch groups screen, driven with keys: M after an in-app replay, sorting, a group's steps,
a step opened in the stepper; the same on a tool-calling log; one SVG snapshot."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from replay_tui.groups import group_mismatches
from replay_tui.matching import MatchSettings
from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.groups import GroupsScreen
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.screens.help import HelpScreen
from tests.conftest import DATA
from tests.tui.conftest import SIZE, wait_replay

AIRLINE = DATA / "formats" / "openai_chat" / "docent__samples__tb_airline.json"
ALTERING_POLICY = '''
from replay_tui.policies.base import PolicyFailure
from replay_tui.episodes.model import call_text, parse_call_text


def altering(observation, state, actions, prompt, recorded_step=None):
    """The recorded call, altered by tool: another origin, another tool, a timeout."""
    call = parse_call_text(recorded_step["action_executed_in_env"])
    if call.name == "search_direct_flight":
        return call_text(call.name, {**call.arguments, "origin": "ORD"})
    if call.name == "search_onestop_flight":
        return call_text("search_flights", call.arguments)
    if call.name == "book_reservation":
        raise PolicyFailure("timeout", "no answer in 60 s")
    return recorded_step["action_executed_in_env"]
'''


def shown_rows(table) -> list[list[str]]:
    """The cells a LazyTable shows, as plain text."""
    return [[cell.plain for cell in table.source.cells(i)] for i in range(len(table.source))]


def title(app) -> str:
    return app.screen.query_one("#groups-title").render().plain


async def replay_all_then_groups(app, pilot) -> GroupsScreen:
    await pilot.press("R")
    await wait_replay(app, pilot)
    await pilot.press("M")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, GroupsScreen)
    return screen


async def test_groups_after_an_in_app_heuristic_replay_sum_to_the_mismatches(build):
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        screen = await replay_all_then_groups(app, pilot)
        summary = app.workspace.summary()
        rows = shown_rows(screen.group_table)
        assert summary.total_mismatches > 300
        assert sum(int(row[0]) for row in rows) == summary.total_mismatches
        assert len(rows) == len(group_mismatches(summary))
        assert f"{summary.total_mismatches} mismatches in {len(rows)} groups" in title(app)
        assert re.search(r"step accuracy 21\.6% \[[\d.]+–[\d.]+%\]", title(app))
        assert rows[0][1:4] == ["Result", "Next → select_item", "argument type differs (button → item id)"]
        counts = [int(row[0]) for row in rows]
        assert counts == sorted(counts, reverse=True)

        # enter on a group: its steps, in the table below
        await pilot.press("down", "enter")
        await pilot.pause()
        group = screen.groups[1]
        assert screen.steps_table.has_focus
        steps = shown_rows(screen.steps_table)
        assert len(steps) == group.count == int(rows[1][0])
        assert [(int(s[0]), s[1]) for s in steps] == group.steps
        detail = screen.query_one("#group-detail").render().plain
        assert group.reason_kind in detail and "sample" in detail

        # enter on a step: the stepper, at that step
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        stepper = app.screen
        assert isinstance(stepper, StepperScreen)
        session_id, label = group.steps[2]
        assert stepper.session_id == session_id
        row = stepper.current_row()
        assert row is not None and row.label == label
        verdict = stepper.source.verdict(stepper.steps_table.cursor)
        assert verdict is not None and verdict.is_mismatch

        # back to the groups (cursor kept), then to the browser
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and screen.group_table.cursor == 1
        await pilot.press("escape")  # the steps table has the focus: back to the groups
        assert screen.group_table.has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)


async def test_sort_cycles_count_state_tool_reason_and_reverses(build):
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        screen = await replay_all_then_groups(app, pilot)
        assert screen.sort_key == "count" and "sort: count ↓" in title(app)
        await pilot.press("s")
        states = [row[1] for row in shown_rows(screen.group_table)]
        assert screen.sort_key == "state" and states == sorted(states) and "sort: state ↑" in title(app)
        await pilot.press("s")
        tools = [row[2].split(" → ")[0].lower() for row in shown_rows(screen.group_table)]
        assert screen.sort_key == "tool" and tools == sorted(tools)
        await pilot.press("s")
        reasons = [row[3] for row in shown_rows(screen.group_table)]
        assert screen.sort_key == "reason" and reasons == sorted(reasons, key=str.casefold)
        await pilot.press("s", "S")
        counts = [int(row[0]) for row in shown_rows(screen.group_table)]
        assert screen.sort_key == "count" and counts == sorted(counts) and "sort: count ↑" in title(app)


async def test_groups_follow_a_change_of_matching_policy(build):
    """Judged again under tolerant search matching, the 'same words' searches leave the groups."""
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        screen = await replay_all_then_groups(app, pilot)
        assert "search keywords differ (same words)" in [row[3] for row in shown_rows(screen.group_table)]
        settings = app.workspace.settings
        app.workspace.settings = replace(settings, matching=MatchSettings.parse(["Search=tolerant"]))
        app._rejudge_worker()  # what applying the settings dialog starts
        await app.workers.wait_for_complete()
        await pilot.pause()
        rows = shown_rows(screen.group_table)
        summary = app.workspace.summary()
        assert summary.total_equivalent > 0
        assert sum(int(row[0]) for row in rows) == summary.total_mismatches
        assert "search keywords differ (same words)" not in [row[3] for row in rows]


async def test_groups_before_any_replay_and_after_one(build):
    app = build(mode="heuristic")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("M")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, GroupsScreen)
        assert not len(screen.source) and "nothing replayed yet" in title(app)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("r")  # replay the first episode (mismatch policy stop)
        await wait_replay(app, pilot)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("M")
        await pilot.pause()
        summary = app.workspace.summary()
        assert summary.episodes_run == 1 and summary.total_mismatches == 1
        assert [row[0] for row in shown_rows(app.screen.group_table)] == ["1"]


async def test_groups_of_a_tool_calling_log_replayed_by_a_policy_that_alters_calls(build, tmp_path: Path):
    spec = tmp_path / "altering.py"
    spec.write_text(ALTERING_POLICY)
    app = build([str(AIRLINE)], policy=f"{spec}:altering", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        screen = await replay_all_then_groups(app, pilot)
        summary = app.workspace.summary()
        rows = shown_rows(screen.group_table)
        assert sum(int(row[0]) for row in rows) == summary.total_mismatches == 10
        by_reason = {row[3]: row for row in rows}
        assert by_reason["argument arguments.origin differs"][:3] == [
            "4",
            "search_direct_flight",
            "search_direct_flight → search_direct_flight",
        ]
        assert by_reason["tool differs"][2] == "search_onestop_flight → search_flights"
        assert by_reason["policy error: timeout"][2] == "book_reservation → <no action: timeout>"
        # the failures' steps say why there is no action; the log's episode id names the episode
        index = next(n for n, row in enumerate(rows) if row[3] == "policy error: timeout")
        for _ in range(index):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        steps = shown_rows(screen.steps_table)
        assert screen.steps_table.source.columns[0].label == "episode"
        assert all(s[0] == summary.episodes[0].episode_id and s[3].startswith("timeout:") for s in steps)
        await pilot.press("enter")
        await pilot.pause()
        stepper = app.screen
        assert isinstance(stepper, StepperScreen)
        assert stepper.current_row().label == screen.groups[index].steps[0][1]


async def test_the_binding_is_listed_in_help_and_the_status_line_has_the_interval(build):
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert ("app", "M", "Mismatch groups", "app.groups") in app.screen.rows
        await pilot.press("escape", "R")
        await wait_replay(app, pilot)
        assert re.search(r"step accuracy 21\.6% \[18\.0–25\.7%\]", app.status_text())


def test_groups_screen_snapshot(build, snap_compare):
    async def run_before(pilot):
        await pilot.press("R")
        await wait_replay(pilot.app, pilot)
        await pilot.press("M")
        await pilot.pause()
        await pilot.press("down", "down", "enter")
        pilot.app.clear_notifications()  # the replay's 3 s toast: shown or gone by then, as the machine is fast
        await pilot.pause()

    assert snap_compare(build(mode="heuristic", mismatch="allow"), terminal_size=SIZE, run_before=run_before)
