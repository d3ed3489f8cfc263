"""Opening a log's first step imports only what the browser and the stepper show (issue 29: a long
trajectory opens at once; most of the app's launch was importing engines no first screen uses).

Checked as behaviour, never as a timing: a fresh interpreter runs ``replay-tui LOG`` headless through
the full parser, presses enter on the session list like a user, and lists what ``sys.modules`` holds
once the stepper shows step 0. Each module named here is imported when its feature is first used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "data" / "formats" / "swe_agent" / "synthetic_mini_reasoning.traj.json"

NOT_AT_START = (
    # other packages: LLM clients, the visual metrics, the executor, the browser
    "openai",
    "httpx",
    "scipy",
    "numpy",
    "PIL",
    "ray",
    "playwright",
    "mcp",
    # the typed normalisers' parsers: a comparison's, not an episode's (matching imports them when it judges)
    "regex",
    "unidecode",
    # the replay engine (the first replay imports it) and the engines of other commands and screens
    "replay_tui.runner",
    "replay_tui.expected",
    "replay_tui.compare",
    "replay_tui.compare.logs",
    "replay_tui.pairing",
    "replay_tui.export.run",
    "replay_tui.export.comparison",
    "replay_tui.groups",
    "replay_tui.repeat",
    "replay_tui.repeat_report",
    "replay_tui.session",
    "replay_tui.search",
    "replay_tui.stats",
    "replay_tui.executors",
    "replay_tui.verify.types",
    "replay_tui.verify.models",
    "replay_tui.verify.evaluate",
    "replay_tui.visual.pipeline",
    "replay_tui.policies.llm",
    # screens and dialogs opened by a key
    "replay_tui.tui.screens.modals",
    "replay_tui.tui.screens.search",
    "replay_tui.tui.replay.groups",
    "replay_tui.tui.replay.outcome",
    "replay_tui.tui.replay.outcome_groups",
    "textual.widgets._text_area",
)

SCRIPT = """
import asyncio, json, sys
from replay_tui.cli.commands import build_parser, tui_app

app = tui_app(build_parser().parse_args(["tui", "--no-save-run", sys.argv[1]]))

async def first_step():
    async with app.run_test(size=(160, 48)) as pilot:
        from replay_tui.tui.replay.stepper import StepperScreen

        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen), app.screen
        assert "step 0" in str(app.screen.query_one("#step-detail").render())
        print(json.dumps(sorted(sys.modules)))

asyncio.run(first_step())
"""


def test_the_first_step_imports_no_engine_of_another_feature(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(LOG)], capture_output=True, text=True, cwd=ROOT, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "replay_tui.tui.replay.stepper" in loaded and "replay_tui.formats.swe_agent" in loaded
    imported = [name for name in NOT_AT_START if name in loaded]
    assert imported == []
