"""In a real terminal, text holding non-ASCII characters wraps at spaces like ASCII text does.

tau2's user simulator writes typographic apostrophes (``I’d``); the stepper's panes used to cut such
lines at the pane's edge, mid-word ("fligh" / "t"). This drives ``replay-tui`` in tmux on a slice
of a real tau2 airline run at three widths and reads each pane's rows back from the screen.
"""

from __future__ import annotations

import json
import re
import shutil
from itertools import pairwise
from pathlib import Path

import pytest

from tests.tui.in_tmux import in_tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
ROOT = Path(__file__).resolve().parents[2]
TAU2 = ROOT / "tests/data/formats/tau2/2025-10-05T22-50-14.083933_airline_grok-3__slice_tasks_0_13_19.json"
WORD = re.compile(r"[\w’'-]+$")


def _vocabulary() -> set[str]:
    """Every whitespace-separated word of the file's messages (what a pane may show whole)."""
    data = json.loads(TAU2.read_text(encoding="utf-8"))
    words: set[str] = set()
    for simulation in data["simulations"]:
        for message in simulation["messages"]:
            words.update((message.get("content") or "").split())
    return words


def _pane_columns(screen: str) -> dict[int, list[tuple[int, str]]]:
    """Each pane's rows: the text between two box edges ``│``, keyed by the column it starts at,
    with its screen row (consecutive rows of a key are consecutive rows of one pane)."""
    columns: dict[int, list[tuple[int, str]]] = {}
    for y, line in enumerate(screen.splitlines()):
        edges = [x for x, char in enumerate(line) if char == "│"]
        for left, right in pairwise(edges):
            if right - left > 2:
                columns.setdefault(left, []).append((y, line[left + 1 : right]))
    return columns


def _broken_words(screen: str, vocabulary: set[str]) -> list[str]:
    """Words split across two rows of a pane: the end of one row and the start of the next make a
    word of the log while the first half alone is none."""
    broken = []
    for rows in _pane_columns(screen).values():
        for (y1, upper), (y2, lower) in pairwise(rows):
            if y2 != y1 + 1 or not upper.split() or not lower.split():
                continue
            head, tail = upper.split()[-1], lower.split()[0]
            if WORD.match(head) and (head + tail) in vocabulary and head not in vocabulary:
                broken.append(f"{head}/{tail}")
    return broken


@pytest.mark.parametrize("width", [80, 120, 160])
def test_the_stepper_wraps_tau2_text_with_curly_apostrophes_at_spaces(tmp_path: Path, width: int) -> None:
    app = in_tmux(tmp_path, f"-m replay_tui tui {TAU2}", width=width, height=40)
    vocabulary = _vocabulary()
    try:
        app.wait_for(lambda screen: "3/3 episodes" in screen, timeout=60)
        app.send("Enter")  # the first simulation: its user writes "I’d like to cancel…"
        app.wait_for(lambda screen: "Emma" in screen, timeout=30)
        app.settle()
        screen = app.text()
        assert "’" in screen  # the panes show the curly apostrophes this is about
        assert _broken_words(screen, vocabulary) == [], screen
    finally:
        app.close()
