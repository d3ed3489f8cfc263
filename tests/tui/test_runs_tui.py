"""Run history in the app, driven by keys: reopened on restart, kept by a cancelled re-run, the runs screen."""

from __future__ import annotations

import json
from pathlib import Path

from replay_tui.cli.commands import main
from replay_tui.runs import RunStore
from replay_tui.tui.compare.runs import CompareScreen
from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.runs import ConfirmModal, RunNameModal, RunsScreen
from replay_tui.tui.replay.stepper import StepperScreen
from tests.tui.conftest import SIZE, wait_replay

SLOW_WHEN_ASKED = """
import os
import time

class Slow:
    def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None):
        time.sleep(float(os.environ.get("REPLAY_TUI_TEST_DELAY", "0")))
        return recorded_step["action_executed_in_env"]
"""


def verdicts(app) -> list[str]:
    screen = app.screen
    assert isinstance(screen, BrowserScreen)
    column = [c.key for c in screen.source.columns].index("verdict")
    return [screen.source.cells(i)[column].plain for i in range(len(screen.source))]


def status(app) -> str:
    return str(app.screen.query_one("#status").render())


async def settle(app, pilot) -> None:
    """Wait for every worker (replay, run save, run load, listing) and the messages they posted."""
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


def run_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json"))


async def test_restarting_the_app_shows_the_last_runs_verdicts(build, tmp_path, monkeypatch):
    runs_dir = tmp_path / "my-runs"
    app = build(mode="heuristic", runs_dir=runs_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("R")
        await wait_replay(app, pilot)
        await settle(app, pilot)
        before = verdicts(app)
        assert all(v != "—" for v in before) and any(v.startswith("✗") for v in before)
        results = {sid: report.model_dump() for sid, report in app.workspace.results.items()}
        await pilot.press("q")
    (saved,) = run_files(runs_dir)
    data = json.loads(saved.read_text())
    assert data["episodes_run"] == 100 and data["run"]["complete"] and data["run"]["sessions"] == "all"

    again = build(mode="heuristic", runs_dir=runs_dir)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert verdicts(again) == before
        assert f"loaded run {data['run']['name']}" in status(again)
        assert {sid: r.steps_total for sid, r in again.workspace.results.items()} == {
            sid: r["steps_total"] for sid, r in results.items()
        }
        await pilot.press("enter")  # the stepper shows the loaded verdicts too
        await pilot.pause()
        assert isinstance(again.screen, StepperScreen) and again.step_results[0]
        await pilot.press("escape")
        await pilot.pause()
        assert again.workspace.session_run.episodes == set(results)  # same settings: replays add to it

    stub = build(runs_dir=runs_dir)  # other settings: the verdicts are shown, not carried into a new run
    async with stub.run_test(size=SIZE) as pilot:
        await settle(stub, pilot)
        assert verdicts(stub) == before and not stub.workspace.session_run.episodes


async def test_a_cancelled_rerun_of_all_keeps_the_results_it_did_not_reach(build, tmp_path, monkeypatch):
    policy = tmp_path / "slow.py"
    policy.write_text(SLOW_WHEN_ASKED)
    app = build(policy=f"{policy}:Slow")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("R")  # the first run: no delay
        await wait_replay(app, pilot)
        await settle(app, pilot)
        earlier = dict(app.workspace.results)
        assert len(earlier) == 100
        monkeypatch.setenv("REPLAY_TUI_TEST_DELAY", "0.03")
        await pilot.press("R")
        await pilot.pause(0.5)
        assert app.replaying
        await pilot.press("escape")
        await wait_replay(app, pilot)
        await settle(app, pilot)
        results = app.workspace.results
        assert len(results) == 100
        rerun = [sid for sid in earlier if results[sid] is not earlier[sid]]
        kept = [sid for sid in earlier if results[sid] is earlier[sid]]
        assert 0 < len(rerun) < 100 and len(kept) == 100 - len(rerun)
        assert rerun == sorted(rerun) and max(rerun) < min(kept)  # replayed in order until cancelled
        assert not any(report.cancelled for report in results.values())
        assert all(v == "✓ matched" for v in verdicts(app))
        assert app.workspace.totals().episodes == 100
    (saved,) = run_files(tmp_path / "runs")  # one session run, saved after each replay
    data = json.loads(saved.read_text())
    assert data["episodes_run"] == 100 and data["run"]["complete"] is False


async def test_runs_screen_lists_renames_deletes_opens_and_compares(build, tmp_path, demo_file, capsys):
    assert main(["replay", "--demos", str(demo_file), "--mismatch", "allow", "-q"]) == 0
    assert main(["replay", "--demos", str(demo_file), "--mode", "heuristic", "-q"]) == 1
    store = RunStore(tmp_path / "runs")
    folder = store.for_demos([demo_file])
    stub_run, heuristic_run = sorted(folder.glob("*.json"), key=lambda p: json.loads(p.read_text())["run"]["created"])
    (folder / "broken.json").write_text("{")
    app = build([demo_file])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "loaded run" in status(app) and heuristic_run.stem in status(app)  # the newest run
        loaded = dict(app.workspace.results)
        await pilot.press("H")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen) and screen.loaded
        rows = [[cell.plain for cell in screen.table.source.cells(i)] for i in range(len(screen.entries))]
        names = [row[2] for row in rows]
        assert names[:2] == [heuristic_run.stem, stub_run.stem] and "broken.json" in names[2]
        assert rows[2][-1] == "broken" and rows[1][3] == "stub" and rows[0][3] == "heuristic"
        assert rows[1][4] == "100.0%" and rows[0][-1] == "✓"

        await pilot.press("n")  # rename the newest
        await pilot.pause()
        assert isinstance(app.screen, RunNameModal)
        await pilot.press("ctrl+u", *"baseline", "enter")
        await settle(app, pilot)
        assert app.screen is screen and screen.entries[0].name == "baseline"
        assert json.loads(heuristic_run.read_text())["run"]["name"] == "baseline"

        await pilot.press("c")  # nothing marked
        await pilot.press("space", "space")  # marks the first two rows
        assert screen.marked == [heuristic_run, stub_run]
        await pilot.press("c")
        for _ in range(100):  # the comparison is computed in a worker
            await pilot.pause(0.05)
            if isinstance(app.screen, CompareScreen):
                break
        assert isinstance(app.screen, CompareScreen)
        comparison = app.screen.comparison
        assert (comparison.a.name, comparison.b.name) == (stub_run.stem, "baseline")  # the older is the baseline
        assert comparison.flips["regressed"] > 0 and comparison.flips["fixed"] == 0  # stub → heuristic
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is screen

        await pilot.press("G", "d")  # delete the broken file
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await settle(app, pilot)
        assert not (folder / "broken.json").exists() and len(screen.entries) == 2
        await pilot.press("d", "n")  # declined
        await settle(app, pilot)
        assert len(screen.entries) == 2

        await pilot.press("G", "enter")  # open the stub run
        await settle(app, pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert f"opened run {stub_run.stem}" in status(app)
        assert all(v == "✓ matched" for v in verdicts(app)) and app.workspace.results != loaded
        await pilot.press("H")
        await settle(app, pilot)
        await pilot.press("g", "d", "y")  # delete the renamed run
        await settle(app, pilot)
        assert not heuristic_run.exists() and [e.path for e in app.screen.entries] == [stub_run]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
