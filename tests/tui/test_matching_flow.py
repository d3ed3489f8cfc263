"""One verdict per step, wherever it is shown: step list, detail pane and the exported report agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Select, Static

from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.screens.modals import SettingsModal
from tests.tui.conftest import SIZE, wait_replay

LOWERCASING_POLICY = """
class Lower:
    def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None):
        return recorded_step["action_executed_in_env"].lower()
"""


async def choose_typed_everywhere(pilot) -> None:
    """In the p dialog, set the Search, Result and Item policies to typed, by keys only."""
    await pilot.press("p")
    await pilot.pause()
    assert isinstance(pilot.app.screen, SettingsModal)
    await pilot.press(*["tab"] * 6)  # policy, spec, base URL, model, mismatch, item steps -> Search
    for state in ("Search", "Result", "Item"):
        assert pilot.app.focused is pilot.app.screen.query_one(f"#match-{state}", Select)
        await pilot.press("enter", "down", "down", "down", "enter")  # exact -> lower -> env -> typed
        await pilot.pause()
        await pilot.press("tab")
    await pilot.press("ctrl+s")
    await pilot.pause()


@pytest.mark.parametrize("policy", ["exact", "typed"])
async def test_lowercased_actions_get_one_verdict_everywhere(build, tmp_path: Path, policy: str) -> None:
    spec = tmp_path / "lower_policy.py"
    spec.write_text(LOWERCASING_POLICY, encoding="utf-8")
    app = build(policy=f"{spec}:Lower", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        if policy == "typed":
            await choose_typed_everywhere(pilot)
        assert app.workspace.settings.matching.policy_for("Result") == policy
        await pilot.press("enter", "r")  # session 0: a search, Next > clicks and item ids
        await wait_replay(app, pilot)
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        await pilot.press("g")
        marks: dict[str, str] = {}
        details: dict[str, str] = {}
        for _ in range(len(screen.source)):
            await pilot.pause()
            index = screen.steps_table.cursor
            row = screen.source.rows[index]
            if row.label is not None and row.step is not None and not row.is_sub_event:
                marks[row.label] = screen.source.cells(index)[0].plain
                details[row.label] = str(screen.query_one("#step-detail", Static).content)
            await pilot.press("j")
        await pilot.press("escape", "e", "home", "enter")  # export JSON
        await pilot.pause()
    report = json.loads((tmp_path / "replay-report.json").read_text(encoding="utf-8"))
    (episode,) = report["episodes"]
    mismatched = {m["step_label"] for m in episode["mismatches"]}
    equivalent = {e["step_label"] for e in episode.get("equivalents", [])}
    assert marks and set(marks) == set(details)
    for label, mark in marks.items():
        if label in mismatched:
            assert mark == "✗" and "✗ mismatch" in details[label] and "≈" not in details[label], label
        elif label in equivalent:
            assert mark == "≈" and f"≈ equivalent under {policy}" in details[label], label
        else:
            assert mark == "✓" and "✓ match" in details[label], label
    # session 0 records search[...] (already lower case), click[Next >] and item ids
    assert "0" not in mismatched | equivalent
    if policy == "exact":
        assert not equivalent and "equivalents" not in episode  # exact reports keep their earlier form
        assert {"1", "2"} <= mismatched
        assert "differs only in letter case" in details["1"]
    else:
        assert "1" in equivalent and "same button up to letter case" in details["1"]
        assert "2" in mismatched and "item id differs in letter case" in details["2"]
        assert report["matching"]["by_state"] == {"Item": "typed", "Result": "typed", "Search": "typed"}
        assert report["total_equivalent"] == len(equivalent)


async def test_next_difference_stops_at_equivalents_and_next_mismatch_skips_them(build, tmp_path: Path) -> None:
    spec = tmp_path / "lower_policy.py"
    spec.write_text(LOWERCASING_POLICY, encoding="utf-8")
    app = build(policy=f"{spec}:Lower", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await choose_typed_everywhere(pilot)
        await pilot.press("enter", "r")
        await wait_replay(app, pilot)
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        await pilot.press("g", "right_square_bracket")
        await pilot.pause()
        assert screen.source.verdict(screen.steps_table.cursor).verdict == "mismatch"
        assert screen.source.rows[screen.steps_table.cursor].label == "2"
        await pilot.press("g", "right_curly_bracket")
        await pilot.pause()
        assert screen.source.verdict(screen.steps_table.cursor).verdict == "equivalent"
        assert screen.source.rows[screen.steps_table.cursor].label == "1"


async def test_changing_the_matching_policy_judges_stored_predictions_again(build) -> None:
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down", "down", "enter", "r")  # session 3: its search drops stop words
        await wait_replay(app, pilot)
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        await pilot.press("g")
        await pilot.pause()
        assert screen.source.cells(screen.steps_table.cursor)[0].plain == "✗"
        before = app.workspace.results[3]
        await pilot.press("p")
        await pilot.pause()
        await pilot.press(*["tab"] * 6, "enter", *["down"] * 4, "enter", "ctrl+s")  # Search: exact -> tolerant
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert app.workspace.settings.matching.policy_for("Search") == "tolerant"
        after = app.workspace.results[3]
        assert after.steps[0].verdict == "equivalent" and after.steps_equivalent == 1
        assert len(after.mismatches) == len(before.mismatches) - 1
        assert [s.predicted for s in after.steps] == [s.predicted for s in before.steps]  # the same predictions
        assert screen.source.cells(screen.steps_table.cursor)[0].plain == "≈"
        assert "same search keywords up to stop words" in str(screen.query_one("#step-detail", Static).content)
        await pilot.press("escape")
        await pilot.pause()
        replay_cell = next(c.plain for c in app.screen.source.cells(3) if "equiv" in c.plain or "step" in c.plain)
        assert replay_cell.startswith("✗")  # Result steps still mismatch
