"""Write SVG screenshots of the main screens to screenshots/, from the app factory.

    python scripts/screenshots.py

Uses the bundled example, the heuristic policy and a throwaway annotations file, so the
pictures are reproducible.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replay_tui.tui.app import ReplayApp, make_app  # noqa: E402
from replay_tui.workspace import ReplaySettings  # noqa: E402

SIZE = (150, 42)
OUT = ROOT / "screenshots"


async def settle(app: ReplayApp, pilot) -> None:
    await app.workers.wait_for_complete()
    for _ in range(100):
        await pilot.pause(0.02)
        if not app.replaying:
            break
    await pilot.pause(0.1)


async def shoot(
    name: str, keys: list[str], *, mode: str = "heuristic", mismatch: str = "allow", size: tuple[int, int] = SIZE
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        app = make_app(
            settings=ReplaySettings(mode=mode, mismatch=mismatch),
            annotations=Path(scratch) / "demo.annotations.json",
            export_dir="reports",
            runs_dir=Path(scratch) / "runs",  # no earlier run reopened: every shot starts the same
        )
        async with app.run_test(size=size) as pilot:
            for key in keys:
                await pilot.press(key)
                await settle(app, pilot)
            app.clear_notifications()
            await pilot.pause(0.1)
            app.save_screenshot(filename=f"{name}.svg", path=str(OUT))
    print(f"wrote screenshots/{name}.svg")


async def main() -> None:
    os.environ.setdefault("XDG_DATA_HOME", tempfile.mkdtemp())
    OUT.mkdir(exist_ok=True)
    await shoot("browser", [])
    await shoot("browser-replayed", ["R", "f"])
    await shoot("stepper-mismatch", ["enter", "r", "g", "right_square_bracket", "right_square_bracket"])
    # a laptop terminal in tmux: the step list narrows, the panes become tabs (1-4, w), z zooms one
    await shoot("stepper-80x24", ["enter", "r", "g", "right_square_bracket"], size=(80, 24))
    await shoot("find", ["enter", "ctrl+f", *"volleyball", "enter"])
    await shoot("tag", ["enter", "r", "g", "right_square_bracket", "t"])
    await shoot("export", ["R", "e", "down"])
    await shoot("help", ["question_mark"])
    await shoot_verify()
    await shoot_inspector()
    await shoot_visual_batch()


async def shoot_visual_batch() -> None:
    """The main app's visual screen (v) on every bundled pair, sorted by final score, best first: a
    representative pair leads (worst first, the 2310 pairs' no_blocks rows would, with the reason
    on the status line)."""
    with tempfile.TemporaryDirectory() as scratch:
        app = make_app(
            annotations=Path(scratch) / "demo.annotations.json", export_dir=scratch, runs_dir=Path(scratch) / "runs"
        )
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("v")
            screen = app.screen
            for _ in range(2400):
                await pilot.pause(0.05)
                if not getattr(screen, "scoring", False):
                    break
            await pilot.press("s", "S", "g")
            app.clear_notifications()
            await pilot.pause(0.1)
            app.save_screenshot(filename="visual-batch.svg", path=str(OUT))
    print("wrote screenshots/visual-batch.svg")


async def shoot_inspector() -> None:
    """The visual-metric inspector on a bundled pair, at its worst-matched block."""
    from replay_tui.tui.visual.inspector import InspectorApp

    examples = ROOT / "replay_tui" / "visual" / "examples"
    app = InspectorApp(
        examples / "ref" / "13470.html", examples / "reword" / "13470.html", export_dir=Path(tempfile.mkdtemp())
    )
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        for _ in range(100):
            await pilot.pause(0.05)
            if app.done:
                break
        await pilot.press("w")
        app.clear_notifications()
        await pilot.pause(0.1)
        app.save_screenshot(filename="inspector.svg", path=str(OUT))
    print("wrote screenshots/inspector.svg")


async def shoot_verify() -> None:
    """The verify browser on the bundled test tasks, with one right and two wrong answers."""
    import copy

    from replay_tui.tui.verify.app import VerifyApp
    from replay_tui.verify.evaluate import evaluate_many, reference_response
    from replay_tui.verify.models import load_tasks

    tasks = load_tasks(ROOT / "tests" / "verify" / "data" / "webarena-verified.json")
    good = reference_response(tasks[108])
    wrong = copy.deepcopy(good)
    wrong["retrieved_data"][1]["count"] = 999
    report = evaluate_many(tasks, [(108, good), (108, wrong), (107, "I could not find it")])
    app = VerifyApp(report, tasks)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("j")
        await pilot.pause(0.1)
        app.save_screenshot(filename="verify.svg", path=str(OUT))
    print("wrote screenshots/verify.svg")


if __name__ == "__main__":
    asyncio.run(main())
