"""The launch keeps the cycle collector away from what it builds (issue 29: a long trajectory opens at once).

Importing the app and indexing a log allocate what the app keeps for its life and free almost nothing; a
collection in the middle walked it all (a full one took 20-45 ms of a 2,000-step trajectory's first step).
``replay-tui LOG`` runs in a real terminal (tmux) with a ``gc.callbacks`` hook that writes down every
collection made while the entry point imports the full parser or ``tui_app`` builds the app: there must be
none; and opening an episode builds its stepper (the episode, its rows, its panes) with the collector
off too. Checked as behaviour, never as a timing."""

from __future__ import annotations

import gc
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tui.in_tmux import in_tmux

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "data" / "formats" / "swe_agent" / "synthetic_mini_reasoning.traj.json"

HOOK = """
import gc, sys

OUT = open(sys.argv[1], "a", buffering=1)

def launching():
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "tui_app" and code.co_filename.endswith("commands.py"):
            return "tui_app"
        caller = frame.f_back
        if caller is not None and caller.f_code.co_name == "main" and caller.f_code.co_filename.endswith("entry.py"):
            if "importlib" in code.co_filename:  # the entry point importing the full parser
                return "entry import"
        frame = caller
    return None

def hook(phase, info):
    if phase == "start" and (where := launching()) is not None:
        OUT.write(f"generation {info['generation']} during {where}\\n")

gc.callbacks.append(hook)
sys.argv = ["replay-tui", *sys.argv[2:]]
from replay_tui.cli import main
sys.exit(main())
"""


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_no_cycle_collection_while_the_app_is_imported_and_the_log_indexed(tmp_path: Path) -> None:
    hook = tmp_path / "hook.py"
    hook.write_text(HOOK, encoding="utf-8")
    found = tmp_path / "collections.txt"
    found.touch()
    app = in_tmux(tmp_path, f"{hook} {found} {LOG}", width=120, height=30)
    try:
        app.wait_for(lambda screen: "1/1 episodes" in screen, timeout=120)
        app.send("Enter")  # the stepper opens: the app runs on (its own collections are not the launch's)
        app.wait_for(lambda screen: "step 0" in screen, timeout=60)
    finally:
        app.close()
    assert found.read_text(encoding="utf-8").splitlines() == []


def _in_stepper_mount() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name in ("on_mount", "_mount") and code.co_filename.endswith("stepper.py"):
            return True
        frame = frame.f_back
    return False


async def test_opening_an_episode_builds_its_stepper_with_no_cycle_collection(build) -> None:
    from replay_tui.tui.replay.stepper import StepperScreen
    from tests.tui.conftest import SIZE

    app = build([str(LOG)])
    collected: list[int] = []

    def hook(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and _in_stepper_mount():
            collected.append(info["generation"])

    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        gc.callbacks.append(hook)
        try:
            await pilot.press("enter")
            await pilot.pause()
        finally:
            gc.callbacks.remove(hook)
        assert isinstance(app.screen, StepperScreen)
        assert "step 0" in app.screen.query_one("#step-detail").render().plain
    assert collected == []
