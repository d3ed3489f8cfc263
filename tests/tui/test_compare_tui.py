"""The compare view, driven by keys: this session's heuristic replay (B) against a run of a policy that
differs from it on known steps (A); the flips shown, ``]`` through each, the Markdown export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input

from replay_tui.cli import main
from replay_tui.compare import Comparison
from replay_tui.examples import example_path
from replay_tui.groups import sort_groups
from replay_tui.tui.compare.runs import (
    CompareGroupsScreen,
    ComparePathModal,
    CompareScreen,
    CompareStepperScreen,
)
from replay_tui.tui.compare.screen import CompareExportModal
from tests.core.cli.test_cli_compare import differ_policy
from tests.tui.conftest import SIZE, wait_replay


def _replay(report: Path, *flags: str) -> dict:
    code = main(
        [
            "replay",
            "--demos",
            str(example_path()),
            "--mismatch",
            "allow",
            "--report",
            str(report),
            "--report-steps",
            "-q",
            *flags,
        ]
    )
    assert code in (0, 1)
    return json.loads(report.read_text())


@pytest.fixture
def baseline(tmp_path: Path) -> dict:
    """Run A: the policy that differs from the heuristic on known steps; and the flips made by hand.

    A differs where B (the heuristic, replayed in the app) is right, so those steps are *fixed* going
    from A to B; where A has the recorded action and the heuristic does not, B *regressed*."""
    heuristic = _replay(tmp_path / "heuristic.json", "--mode", "heuristic")
    spec, chosen = differ_policy(tmp_path, heuristic)
    _replay(tmp_path / "differ.json", "--policy", spec)
    regressions = chosen["fixed"]
    fixes = chosen["regressed"]
    different = chosen["different"]
    every = sorted(regressions + fixes + different, key=lambda key: (int(key[0]), int(key[1])))
    return {"path": tmp_path / "differ.json", "regressions": regressions, "fixes": fixes, "every": every}


async def open_compare(app, pilot, path: Path) -> CompareScreen:
    await pilot.press("R")
    await wait_replay(app, pilot)
    await pilot.press("c")
    await pilot.pause()
    modal = app.screen
    assert isinstance(modal, ComparePathModal)
    modal.query_one(Input).value = str(path)
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, CompareScreen), app.screen
    return screen


def _keys(steps) -> list[tuple[str, str]]:
    return [(step.episode, step.step_label) for step in steps]


async def test_compare_view_shows_the_flips_made_by_hand_and_exports_them(build, baseline, tmp_path) -> None:
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(app, pilot, baseline["path"])
        comparison: Comparison = screen.comparison
        assert comparison.a.name == "differ.json" and comparison.b.name == "this session"
        assert _keys(comparison.regressions) == baseline["regressions"]
        assert _keys(comparison.fixes) == baseline["fixes"]
        assert _keys(comparison.shown_steps) == baseline["every"]
        title = screen.query_one("#compare-title").render().plain
        assert "2 regressed ✓→✗" in title and "2 fixed ✗→✓" in title and "1 both wrong, different" in title

        # the browser of episodes: filter to regressions, then to fixes; A, B and Δ columns
        await pilot.press("minus")
        rows = [[cell.plain for cell in screen.source.cells(i)] for i in range(len(screen.source))]
        assert [row[0] for row in rows] == sorted({e for e, _ in baseline["regressions"]}, key=int)
        assert all("−" in row[5] for row in rows)
        assert rows[0][3].startswith("✓") or rows[0][3].startswith("✗")
        await pilot.press("plus")
        assert [row.episode for row in screen.source.rows] == sorted({e for e, _ in baseline["fixes"]}, key=int)
        await pilot.press("plus")  # the filter toggles off
        assert len(screen.source) == 100

        # ]/[ move between episodes with flips; enter on the first, then ] visits every flip in order
        flip_episodes = list(dict.fromkeys(e for e, _ in baseline["every"]))
        await pilot.press("G", "left_square_bracket")
        assert screen.current_episode().episode == flip_episodes[-1]
        for episode in reversed(flip_episodes[:-1]):
            await pilot.press("left_square_bracket")
            assert screen.current_episode().episode == episode
        await pilot.press("right_square_bracket")
        assert screen.current_episode().episode == flip_episodes[1]
        await pilot.press("left_square_bracket")
        await pilot.press("enter")
        await pilot.pause()
        stepper = app.screen
        assert isinstance(stepper, CompareStepperScreen)
        visited = [(stepper.episode, stepper.current_step().step_label)]
        for _ in range(len(baseline["every"]) - 1):
            await pilot.press("right_square_bracket")
            visited.append((stepper.episode, stepper.current_step().step_label))
        assert visited == baseline["every"]
        await pilot.press("right_square_bracket")  # no further flip: stays
        assert (stepper.episode, stepper.current_step().step_label) == baseline["every"][-1]
        await pilot.press("left_square_bracket")
        assert (stepper.episode, stepper.current_step().step_label) == baseline["every"][-2]
        detail = stepper.query_one("#cmp-detail").render().plain
        assert "expected" in detail and "\nA " in detail and "\nB " in detail

        # the detail of a regression shows the recording and both predictions
        first_regression = baseline["regressions"][0]
        while (stepper.episode, stepper.current_step().step_label) != first_regression:
            await pilot.press("left_square_bracket")
        detail = stepper.query_one("#cmp-detail").render().plain
        assert "regressed ✓→✗" in detail and "✓ match" in detail and "✗ mismatch" in detail

        # export: Markdown by default, listing exactly those regressions
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, CompareExportModal)
        await pilot.press("enter")
        await pilot.pause()
        report = tmp_path / "compare-report.md"
        markdown = report.read_text()
        lines = markdown.splitlines()
        start = lines.index("### Regressions (2)")
        rows = []
        for line in lines[start + 1 :]:
            if line.startswith(("### ", "<details>")):
                break
            if line.startswith("| `"):
                rows.append(tuple(cell.strip().strip("`") for cell in line.split("|")[1:3]))
        assert rows == baseline["regressions"]

        await pilot.press("escape", "escape")
        await pilot.pause()
        assert app.screen.id == "browser"


def _pane_lines(screen, selector: str) -> list[str]:
    return [line.text for line in screen.query_one(selector)._lines]


async def test_the_stepper_shows_each_sides_prediction_and_verdict_in_its_own_pane(build, baseline) -> None:
    """The stepper is the side-by-side screen the log comparison uses: at a regression, A's pane holds
    A's prediction and its match, B's pane B's prediction, its mismatch and what differs from the
    recording; the position line says which flip of how many."""
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await open_compare(app, pilot, baseline["path"])
        await pilot.press("minus", "enter")  # the first episode with a regression, at its first flip
        await pilot.pause()
        stepper = app.screen
        assert isinstance(stepper, CompareStepperScreen)
        regression = min(baseline["regressions"], key=lambda key: (int(key[0]), int(key[1])))
        for _ in baseline["every"]:
            if (stepper.episode, stepper.current_step().step_label) == regression:
                break
            await pilot.press("right_square_bracket")
        step = stepper.current_step()
        number = baseline["every"].index(regression) + 1
        assert f"flip {number} of {len(baseline['every'])}" in stepper.query_one("#cmp-detail").render().plain
        a_side, b_side = _pane_lines(stepper, "#cmp-a"), _pane_lines(stepper, "#cmp-b")
        assert a_side[0] == "✓ match" and step.predicted_a.splitlines()[0] in a_side
        assert b_side[0] == "✗ mismatch" and step.predicted_b.splitlines()[0] in b_side
        assert "against the recording (−recorded +predicted)" in b_side
        assert any(
            line[:1] in ("+", "−") for line in b_side[b_side.index("against the recording (−recorded +predicted)") :]
        )


async def test_compare_needs_a_replay_and_a_usable_file(build, tmp_path) -> None:
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.id == "browser"  # nothing replayed yet: a warning, no dialog
        await pilot.press("R")
        await wait_replay(app, pilot)
        await pilot.press("c")
        await pilot.pause()
        app.screen.query_one(Input).value = str(tmp_path / "missing.json")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.id == "browser"
        assert any("missing.json" in str(n.message) for n in app._notifications)


async def test_compare_runs_opens_two_saved_runs(build, baseline, tmp_path) -> None:
    app = build()
    heuristic = tmp_path / "heuristic.json"
    async with app.run_test(size=SIZE) as pilot:
        app.compare_runs(heuristic, baseline["path"])
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        # from the heuristic (A) to the differing policy (B): the hand-made flips the other way round
        assert _keys(screen.comparison.fixes) == baseline["regressions"]
        assert _keys(screen.comparison.regressions) == baseline["fixes"]


def _rows(table) -> list[list[str]]:
    return [[cell.plain for cell in table.source.cells(i)] for i in range(len(table.source))]


async def test_regression_groups_count_the_regressions_and_open_the_stepper_at_a_step(build, baseline) -> None:
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(app, pilot, baseline["path"])
        comparison: Comparison = screen.comparison
        await pilot.press("M")
        await pilot.pause()
        groups_screen = app.screen
        assert isinstance(groups_screen, CompareGroupsScreen)
        rows = _rows(groups_screen.group_table)
        counts = [int(row[0]) for row in rows]
        assert sum(counts) == len(comparison.regressions) == len(baseline["regressions"]) == 2
        expected = comparison.regression_groups
        assert counts == [g.count for g in expected]
        assert [(row[1], row[3]) for row in rows] == [(g.state, g.reason_kind) for g in expected]
        assert [row[2] for row in rows] == [f"{g.expected_tool} → {g.predicted_tool}" for g in expected]
        assert sorted(tuple(k) for g in expected for k in g.steps) == sorted(baseline["regressions"])
        title = groups_screen.query_one("#cmp-groups-title").render().plain
        assert f"2 regressions ✓→✗ in {len(expected)} " in title and "sort: count ↓" in title

        # s sorts by state, S reverses: the order of replay_tui.groups.sort_groups
        await pilot.press("s")
        assert [g.key for g in groups_screen.groups] == [g.key for g in sort_groups(expected, "state")]
        assert "sort: state ↑" in groups_screen.query_one("#cmp-groups-title").render().plain
        await pilot.press("S")
        assert [g.key for g in groups_screen.groups] == [g.key for g in sort_groups(expected, "state", True)]
        await pilot.press("S", "s", "s", "s")  # back to count, largest first
        assert groups_screen.sort_key == "count" and not groups_screen.reverse
        assert [g.key for g in groups_screen.groups] == [g.key for g in expected]

        # enter on the first group lists its steps: episode, step, expected, A, B
        await pilot.press("home", "enter")
        await pilot.pause()
        first = groups_screen.groups[0]
        assert groups_screen.steps_table.has_focus
        step_rows = _rows(groups_screen.steps_table)
        assert [(row[0], row[1]) for row in step_rows] == [tuple(k) for k in first.steps]
        episode, label = first.steps[0]
        pair = next(s for s in comparison.regressions if (s.episode, s.step_label) == (episode, label))
        assert step_rows[0][2:] == [pair.expected, pair.predicted_a, pair.predicted_b]
        assert pair.predicted_a == pair.expected != pair.predicted_b  # A right, B wrong: a regression

        # enter on its first step opens the compare stepper at that step
        await pilot.press("enter")
        await pilot.pause()
        stepper = app.screen
        assert isinstance(stepper, CompareStepperScreen)
        assert (stepper.episode, stepper.current_step().step_label) == (episode, label)
        detail = stepper.query_one("#cmp-detail").render().plain
        assert f"step {label} " in detail and "regressed ✓→✗" in detail

        # escape: the stepper, then the steps back to the groups, then the compare view
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is groups_screen and groups_screen.steps_table.has_focus
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert app.screen is screen


async def test_regression_groups_of_a_comparison_without_regressions(build, baseline, tmp_path) -> None:
    app = build()
    heuristic = tmp_path / "heuristic.json"
    async with app.run_test(size=SIZE) as pilot:
        app.compare_runs(heuristic, heuristic)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, CompareScreen)
        assert app.screen.comparison.regression_groups == []
        await pilot.press("M")
        await pilot.pause()
        groups_screen = app.screen
        assert isinstance(groups_screen, CompareGroupsScreen)
        assert len(groups_screen.group_table.source) == 0
        assert "No step regressed." in groups_screen.query_one("#cmp-groups-title").render().plain
        await pilot.press("enter")  # nothing to open
        await pilot.pause()
        assert app.screen is groups_screen


def test_compare_view_snapshot(build, baseline, snap_compare, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)  # a relative path keeps the snapshot free of temp directories

    async def run_before(pilot) -> None:
        await open_compare(pilot.app, pilot, Path("differ.json"))
        await pilot.press("minus")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(build(mode="heuristic", mismatch="allow"), terminal_size=SIZE, run_before=run_before)
