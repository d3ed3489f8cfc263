"""The suite's shorter Pilot waits (tests/conftest.py: _quicker_pilot) are safe only while every screen's update
timer ticks within one idle window: otherwise a wait could end between a change and the frame that shows it, and
snapshots would flake. This holds the invariant where Textual builds the timer, on the app's real screens."""

from __future__ import annotations

import textual._wait

from tests.conftest import PILOT_IDLE_WINDOW
from tests.tui.conftest import SIZE


async def test_every_screen_refreshes_within_one_idle_window(build) -> None:
    assert textual._wait.SLEEP_GRANULARITY == PILOT_IDLE_WINDOW
    app = build()  # the bundled example
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")  # the browser, then the stepper: two screens, each with its own timer
        await pilot.pause()
        seen = {type(screen).__name__: screen._update_timer._interval for screen in app.screen_stack}
        assert len(seen) >= 3, seen  # Textual's default screen, the browser, the stepper
        assert all(interval < PILOT_IDLE_WINDOW for interval in seen.values()), seen
