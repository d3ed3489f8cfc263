"""Benchmark: the session browser on 100 000 episodes, lazy rows vs a naive DataTable.

Run by hand (not in CI):

    python bench/bench_browser.py [--episodes 100000]

Measures, headless at 130x36: time to the first screen (index + browser built), time to filter by
typing one key, time to sort, and the same "first screen" with Textual's DataTable holding every
row (what a straightforward browser would do), printing the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZE = (130, 36)


def make_file(path: Path, episodes: int) -> None:
    with path.open("w") as handle:
        for sid in range(episodes):
            handle.write(
                json.dumps(
                    {
                        "session_id": sid,
                        "instruction": f"i need item {sid} in a medium size and natural colour",
                        "trajectory": [],
                        "final_reward": (sid % 4) / 4,
                        "success": sid % 4 == 0,
                        "completed_by_backup": sid % 10 == 0,
                    }
                )
                + "\n"
            )


async def lazy(path: Path) -> dict[str, float]:
    from replay_tui.tui.app import make_app

    start = time.perf_counter()
    app = make_app([path], annotations=path.with_suffix(".notes.json"), runs_dir=path.parent / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = time.perf_counter() - start
        t = time.perf_counter()
        await pilot.press("slash", "7")
        await pilot.pause()
        filtered = time.perf_counter() - t
        t = time.perf_counter()
        await pilot.press("escape", "s", "s", "s")  # three sorts: instruction, steps, reward
        await pilot.pause()
        sort = (time.perf_counter() - t) / 3
    return {"first_screen": first, "filter_key": filtered, "sort": sort}


async def naive(path: Path) -> dict[str, float]:
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    from replay_tui.formats.webshop_demos.index import open_demos

    class Naive(App):
        def compose(self) -> ComposeResult:
            yield DataTable()

        def on_mount(self) -> None:
            demos = open_demos(path)
            table = self.query_one(DataTable)
            for name in ("session", "instruction", "steps", "reward", "ok", "backup"):
                table.add_column(name, key=name)
            table.add_rows(
                (
                    ref.session_id,
                    ref.task,
                    ref.decision_steps,
                    ref.reward,
                    ref.success,
                    ref.completed_by_backup,
                )
                for ref in demos.refs
            )

    start = time.perf_counter()
    app = Naive()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = time.perf_counter() - start
        t = time.perf_counter()
        app.query_one(DataTable).sort("reward")
        await pilot.pause()
        sort = time.perf_counter() - t
    return {"first_screen": first, "sort": sort}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=100_000)
    args = parser.parse_args()
    os.environ.setdefault("XDG_DATA_HOME", tempfile.mkdtemp())
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "many.jsonl"
        make_file(path, args.episodes)
        print(f"{args.episodes:,} episodes, {path.stat().st_size / 2**20:.1f} MB")
        ours = await lazy(path)
        base = await naive(path)
    print(
        f"lazy browser : first screen {ours['first_screen']:.2f} s, filter keystroke {ours['filter_key']:.3f} s, "
        f"sort {ours['sort']:.3f} s"
    )
    print(f"DataTable    : first screen {base['first_screen']:.2f} s, sort {base['sort']:.3f} s")
    first = _ratio(base["first_screen"], ours["first_screen"])
    print(f"ratios       : first screen {first}, sort {_ratio(base['sort'], ours['sort'])}")


def _ratio(baseline: float, ours: float) -> str:
    """``2.3x faster`` or ``2.3x slower`` (never "0.4x faster" for a slowdown)."""
    if ours <= 0 or baseline <= 0:
        return "n/a"
    if baseline >= ours:
        return f"{baseline / ours:.1f}x faster"
    return f"{ours / baseline:.1f}x slower"


if __name__ == "__main__":
    asyncio.run(main())
