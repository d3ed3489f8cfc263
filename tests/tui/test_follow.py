"""``--follow`` in the app: episodes appended to a JSON Lines file while it is open appear as rows."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.widgets import Static

from replay_tui.tui.replay.stepper import StepperScreen
from tests.core.test_follow import append, jsonl, line
from tests.tui.conftest import SIZE
from tests.tui.test_flows import browser_rows


def title(app) -> str:
    return str(app.screen.query_one("#browser-title", Static).content)


async def wait_for(pilot, condition: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.1)


async def test_appended_episodes_appear_in_the_browser(build, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "live.jsonl", 20, 21)
    app = build([path], follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [r[0] for r in browser_rows(app)] == ["20", "21"] and "2/2 episodes" in title(app)
        append(path, line(22) + line(23))
        await wait_for(pilot, lambda: "4/4 episodes" in title(app))
        half = len(line(24)) // 2
        append(path, line(24)[:half])  # a line still being written is not a row yet
        await pilot.pause(1.2)
        assert [r[0] for r in browser_rows(app)] == ["20", "21", "22", "23"]
        append(path, line(24)[half:])
        await wait_for(pilot, lambda: "5/5 episodes" in title(app))
        assert [r[0] for r in browser_rows(app)] == ["20", "21", "22", "23", "24"]
        await pilot.press("slash", "2", "4", "enter", "enter")  # open the appended episode
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen) and app.screen.session_id == 24


async def test_a_truncated_file_is_said_and_the_rows_stay(build, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "live.jsonl", 20, 21)
    app = build([path], follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        path.write_bytes(line(30))
        # the background validation may find the rewritten file's episode first (a problem row of its
        # own): the follow timer's notice of the truncation is what this test waits for
        await wait_for(pilot, lambda: any("truncated" in str(n.message) for n in app._notifications))
        assert " problems" in title(app)  # the file's problem; maybe the episode's too
        assert [r[0] for r in browser_rows(app)][:2] == ["20", "21"]
        assert app.follow_timer is not None
        append(path, line(31) * 2)
        await pilot.pause(1.2)
        assert "2/2 episodes" in title(app)
