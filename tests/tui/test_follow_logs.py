"""``--follow`` on coding-agent logs, driven with keys: a Codex rollout or a Claude Code session
that grows while the app runs shows its new steps (in the browser's counts and in an open stepper,
whose cursor stays where it was); a half-written line waits for its end; a new session file in a
followed Claude Code project folder is a new row."""

from __future__ import annotations

from pathlib import Path

from replay_tui.formats import read_trajectories
from replay_tui.tui.replay.stepper import StepperScreen
from tests.conftest import DATA
from tests.tui.conftest import SIZE
from tests.tui.test_follow import title, wait_for
from tests.tui.test_formats_tui import browser_rows

CODEX = DATA / "formats" / "codex" / "ocodex__rollout-2025-08-23T16-52-59-84b6da18-7357-4ad0-89d6-64f637ddde0d.jsonl"
CLAUDE = DATA / "formats" / "claude_code" / "openshrooly__logs_chat__cc2.1.90.jsonl"
CLAUDE_OTHER = DATA / "formats" / "claude_code" / "big3__logs_chat__cc2.0.49.jsonl"


def lines_of(sample: Path) -> list[bytes]:
    return sample.read_bytes().splitlines(keepends=True)


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def turns(path: Path) -> int:
    """The rows a stepper lists for the file's first episode, read whole (independently of following)."""
    return len(next(t for t in read_trajectories(path) if not isinstance(t, Exception)).steps)


def stepper(app) -> StepperScreen:
    screen = app.screen
    assert isinstance(screen, StepperScreen)
    return screen


async def grows_in_an_open_stepper(build, tmp_path: Path, sample: Path, first: int) -> None:
    lines = lines_of(sample)
    live = tmp_path / sample.name
    live.write_bytes(b"".join(lines[:first]))
    expected_first = turns(live)
    app = build([str(live)], follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert len(browser_rows(app)) == 1
        await pilot.press("enter")
        await pilot.pause()
        assert len(stepper(app).rows) == expected_first
        await pilot.press("j")  # the cursor on the second row: it stays there as steps are appended
        await pilot.pause()
        append(live, b"".join(lines[first:]))
        whole = turns(live)
        assert whole > expected_first
        await wait_for(pilot, lambda: len(stepper(app).rows) == whole)
        assert stepper(app).steps_table.cursor == 1
        assert len(stepper(app).source) == whole  # the step list shows them
        await pilot.press("G")  # the last step is reachable by keys
        await pilot.pause()
        assert stepper(app).steps_table.cursor == whole - 1
        await pilot.press("escape")
        await pilot.pause()
        ref = app.workspace.demos.ref(0)
        assert ref.decision_steps + ref.sub_events == whole  # the browser's counts grew too


async def test_a_codex_rollout_shows_steps_appended_while_the_app_runs(build, tmp_path: Path) -> None:
    await grows_in_an_open_stepper(build, tmp_path, CODEX, 20)


async def test_a_claude_code_session_shows_steps_appended_while_the_app_runs(build, tmp_path: Path) -> None:
    await grows_in_an_open_stepper(build, tmp_path, CLAUDE, 30)


async def test_a_half_written_line_waits_for_its_end(build, tmp_path: Path) -> None:
    lines = lines_of(CODEX)
    live = tmp_path / CODEX.name
    live.write_bytes(b"".join(lines[:20]))
    before = turns(live)
    cut, after = 20, before  # the first line after them that makes a step
    while after == before:
        cut += 1
        grown = tmp_path / f"whole-{cut}" / CODEX.name
        grown.parent.mkdir()
        grown.write_bytes(b"".join(lines[:cut]))
        after = turns(grown)
    last = lines[cut - 1]
    app = build([str(live)], follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        append(live, b"".join(lines[20 : cut - 1]) + last[:25])  # the last line cut in the middle of a value
        await pilot.pause(1.5)  # three looks at the file
        assert len(stepper(app).rows) == before
        assert app.workspace.demos.problems == []  # a line still being written is no problem
        append(live, last[25:])
        await wait_for(pilot, lambda: len(stepper(app).rows) == after)
        assert app.workspace.demos.problems == []


async def test_a_new_session_file_in_a_followed_project_folder_is_a_new_row(build, tmp_path: Path) -> None:
    project = tmp_path / "-home-me-project"
    project.mkdir()
    (project / CLAUDE.name).write_bytes(CLAUDE.read_bytes())
    app = build([str(project)], follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = [row[1] for row in browser_rows(app)]
        assert len(first) == 1 and "1/1 episodes" in title(app)
        other = next(t for t in read_trajectories(CLAUDE_OTHER) if not isinstance(t, Exception))
        (project / CLAUDE_OTHER.name).write_bytes(CLAUDE_OTHER.read_bytes())
        await wait_for(pilot, lambda: len(browser_rows(app)) == 2)
        assert [row[1] for row in browser_rows(app)] == [*first, other.id]
        await pilot.press("down", "enter")  # the new session opens
        await pilot.pause()
        assert stepper(app).session_id == 1 and len(stepper(app).rows) == len(other.steps)


OPENHANDS = DATA / "formats" / "openhands" / "sdk-v1__goal-fixture__events.jsonl"


async def test_a_line_cut_at_open_is_a_problem_row_until_its_end_is_written(build, tmp_path: Path) -> None:
    """An OpenHands events file (read whole again as it grows) opened while a line is being written
    lists that line as a problem; once the line is whole the problem row and count go."""
    lines = lines_of(OPENHANDS)
    live = tmp_path / OPENHANDS.name
    live.write_bytes(b"".join(lines[:4]) + lines[4][:30])
    app = build([str(live)], follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "1 problems" in title(app) and len(browser_rows(app)) == 2  # the episode and the problem
        append(live, lines[4][30:])
        await wait_for(pilot, lambda: "problems" not in title(app))
        assert len(browser_rows(app)) == 1
