"""A big log lists its first rows before its index is done (issue 31): the app opens with the
first screenful indexed, the rest follows from a thread, the status line says the index is still
going (rows so far) and when it is done. The index is held by a test-only reader registered
through the normal registry (``tests/tui/gated_index.py``), never by a sleep in the product."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Static

from replay_tui.formats import registry
from replay_tui.sources import open_sources
from replay_tui.tui.replay.stepper import StepperScreen
from tests.tui import gated_index
from tests.tui.conftest import SIZE
from tests.tui.test_follow import title, wait_for
from tests.tui.test_formats_tui import browser_rows

EPISODES = 300


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    info = registry.FormatInfo("gated-index", "tests.tui.gated_index", gated_index.GatedIndexReader.label)
    monkeypatch.setattr(registry, "FORMATS", (*registry.FORMATS, info))
    registry.reader_for.cache_clear()
    gated_index.GATE.clear()
    yield
    gated_index.GATE.set()  # a failed test leaves no index thread waiting
    gated_index.FAIL = False
    registry.reader_for.cache_clear()


def chats(path: Path, count: int) -> Path:
    """``count`` openai-chat episodes, one a line, each one recorded call."""
    with path.open("w") as out:
        for number in range(count):
            function = {"name": "search", "arguments": json.dumps({"q": number})}
            call = {"id": "c1", "type": "function", "function": function}
            messages = [
                {"role": "user", "content": f"task {number}"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
            ]
            out.write(json.dumps({"id": f"ep-{number}", "messages": messages}) + "\n")
    return path


def status(app) -> str:
    return str(app.screen.query_one("#status", Static).content)


async def test_the_first_rows_show_while_the_index_goes_on(build, tmp_path: Path, gated: None) -> None:
    log = chats(tmp_path / "big.jsonl", EPISODES)
    app = build([str(log)], fmt="gated-index")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        rows = browser_rows(app)
        assert 0 < len(rows) <= gated_index.HOLD_AFTER < EPISODES  # the index is held: not all of it
        assert rows[0][:2] == ["0", "ep-0"]
        await wait_for(pilot, lambda: f"{gated_index.HOLD_AFTER}/{gated_index.HOLD_AFTER} episodes" in title(app))
        assert f"indexing: {gated_index.HOLD_AFTER} episodes so far" in status(app)
        await pilot.press("enter")  # an episode listed opens while the index goes on
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen) and app.screen.session_id == 0
        await pilot.press("escape")
        await pilot.pause()
        gated_index.GATE.set()
        await wait_for(pilot, lambda: f"{EPISODES}/{EPISODES} episodes" in title(app))
        await wait_for(pilot, lambda: f"index done: {EPISODES} episodes" in status(app))
        rows = browser_rows(app)
        assert [row[:2] for row in rows] == [[str(number), f"ep-{number}"] for number in range(EPISODES)]
        assert "indexing" not in status(app)


def test_the_cli_reads_the_whole_index(tmp_path: Path) -> None:
    """Without ``progressive`` (every command but the app) the index is whole when the set opens,
    and a progressive open ends with the same ids and counts."""
    log = chats(tmp_path / "big.jsonl", EPISODES)
    whole = open_sources([log])
    progressive = open_sources([log], progressive=True)
    assert len(whole) == EPISODES and len(progressive) <= EPISODES
    (indexing,) = progressive.files
    assert indexing.wait(10)
    progressive.read_new()
    assert [(r.session_id, r.episode_id, r.decision_steps) for r in progressive.refs] == [
        (r.session_id, r.episode_id, r.decision_steps) for r in whole.refs
    ]


def test_a_reader_failing_midway_is_one_problem_and_the_rows_stay(tmp_path: Path, gated: None) -> None:
    gated_index.FAIL = True
    log = chats(tmp_path / "big.jsonl", EPISODES)
    demos = open_sources([log], fmt="gated-index", progressive=True)
    (indexing,) = demos.files
    first = len(demos)
    gated_index.GATE.set()
    assert indexing.wait(10)
    added, problems = demos.read_new()
    assert 0 < first < gated_index.HOLD_AFTER == len(demos) and len(added) == gated_index.HOLD_AFTER - first
    assert [p.one_line() for p in problems] == [f"{log}: gated-index reader failed: the disk went away"]
    assert demos.problems == problems and not demos.following
