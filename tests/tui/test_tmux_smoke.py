"""The app in a real terminal (tmux, 80x24): open an episode, find text across episodes, jump, export.

Pilot skips the terminal (driver, escape sequences, the terminal's parsing); this drives the real
``replay-tui tui`` process with keys sent by tmux and reads the screen back as text.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from replay_tui.examples import example_path
from tests.tui.in_tmux import in_tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_open_find_across_episodes_jump_and_export_at_80x24(tmp_path: Path) -> None:
    app = in_tmux(tmp_path, f"-m replay_tui tui {example_path()}", width=80, height=24)
    try:
        app.wait_for(lambda screen: "100/100 episodes" in screen, timeout=60)
        app.send("Enter")  # open session 0
        app.wait_for(lambda screen: "session 0" in screen, timeout=30)
        app.send("F")
        app.wait_for(lambda screen: "Find in episodes" in screen, timeout=30)
        app.send("volleyball")
        app.wait_for(lambda screen: re.search(r"\d+ results\b", screen) is not None and "searching" not in screen)
        app.settle()  # the last key's search has listed everything
        found = re.search(r"in all 100 episodes · (\d+) results", app.text())
        assert found is not None and int(found.group(1)) > 1, app.text()
        app.press("Enter")  # into the results (each press waits for the screen to settle)
        app.press("G")  # the last result: another episode than the one open
        app.press("Enter")
        # the last result is in another episode than the one open: the stepper now shows that one,
        # with the match found in its panes
        app.wait_for(lambda screen: re.search(r"session (?!0\b)\d+", screen) is not None, timeout=30)
        app.wait_for(lambda screen: "find: match 1/" in screen, timeout=30)
        app.send("e")  # export the report (nothing replayed: the problems only) as Markdown here
        app.wait_for(lambda screen: "Export the replay report" in screen, timeout=30)
        app.send("Enter")
        report = tmp_path / "replay-report.md"
        app.wait_for(lambda screen: report.exists(), timeout=30)
        assert report.read_text(encoding="utf-8").strip()
        app.send("Escape")
        app.send("q")
    finally:
        app.close()
