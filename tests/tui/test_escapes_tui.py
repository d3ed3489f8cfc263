"""Every screen's frame holds no control sequence from a log, before the last guard sees it.

The app writes each frame through ``output_guard`` (the tmux test shows the terminal is safe); this
checks the views did their part at the data boundary, so text is stripped where it is taken and widths
are right: the whole screen is composed as Textual would write it, and no line may hold a control
character, a tab or a newline. Logs, file and folder names, the sidecar and a cassette are hostile
(``hostile_text.py``); the app is driven through its screens by keys.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.strip import Strip
from textual.widgets import TextArea

from replay_tui.cli.commands import main
from replay_tui.matching import MatchSettings
from replay_tui.sanitize import show_control, strip_control, unsafe_in_line
from replay_tui.tui.app import ReplayApp, make_app
from replay_tui.workspace import ReplaySettings
from tests.tui.conftest import SIZE
from tests.tui.hostile_text import SHORT, hostile_cassette, hostile_chat, hostile_demos, hostile_sidecar


def unsafe_lines(app: ReplayApp) -> list[str]:
    """The lines of the composed screen that hold something a terminal would act on (shown escaped)."""
    compositor = app.screen._compositor
    chops = compositor._render_chops(compositor.size.region, lambda y: True)
    lines = [Strip.join(chop.values()).text for chop in chops]
    return [show_control(line) for line in lines if unsafe_in_line(line)]


async def settle(app: ReplayApp, pilot) -> None:
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


def hostile_app(tmp_path: Path, mode: str) -> ReplayApp:
    folder = tmp_path / f"logs{SHORT}"
    folder.mkdir()
    sidecar, cassette = tmp_path / f"notes{SHORT}.json", tmp_path / "model.cassette"
    hostile_sidecar(sidecar)
    hostile_cassette(cassette)
    settings = ReplaySettings(
        mode=mode,
        mismatch="allow",
        matching=MatchSettings.parse(()),
        llm={"replay": str(cassette)} if mode == "llm" else None,
    )
    logs = [str(hostile_demos(folder)), str(hostile_chat(folder))]
    if mode == "stub":  # a run with other settings to compare with (the runs screen's c)
        runs = ["--runs-dir", str(tmp_path / "runs"), "-q"]
        assert main(["replay", "--demos", *logs, "--mode", "stub", "--mismatch", "stop", *runs]) in (0, 1)
    return make_app(
        logs,
        annotations=sidecar,
        settings=settings,
        export_dir=tmp_path,
        runs_dir=tmp_path / "runs",
    )


BROWSER_AND_STEPPER = [
    "t",
    "escape",
    "n",
    "escape",
    "t",
    "2",
    "enter",  # saved: a toast names the sidecar
    "enter",
    "j",
    "j",
    "t",
    "escape",
    "n",
    "escape",
    "G",
    "escape",
]
BROWSER_AND_STEPPER += ["G", "enter", "j", "escape", "g"]  # the chat transcript's episode
ELSEWHERE = ["F", "P", "W", "N", "E", "D", "down", "escape", "colon", "escape", "question_mark", "escape"]
ELSEWHERE += ["p", "escape", "e", "escape", "O", "escape"]  # ... the outcome screen
REPLAYS = ["R", "M", "enter", "escape", "escape", "R", "H", "space", "space", "c", "M", "escape", "enter", "j"]
REPLAYS += ["escape", "escape", "escape"]  # groups, runs, compare, the compared episode
REPLAYS += ["M", "o", "o", "enter", "escape", "escape", "escape"]  # the outcome groups


@pytest.mark.parametrize(
    ("mode", "keys"),
    [("llm", ["r", "enter", "j", "escape"]), ("stub", BROWSER_AND_STEPPER + ELSEWHERE + REPLAYS)],
)
async def test_no_screen_shows_a_control_sequence_from_hostile_inputs(tmp_path, mode, keys):
    app = hostile_app(tmp_path, mode)
    seen: list[str] = []
    async with app.run_test(size=SIZE, notifications=True, tooltips=True) as pilot:
        await settle(app, pilot)
        leaks = {"start": unsafe_lines(app)}
        for number, key in enumerate(keys):
            await pilot.press(key)
            await settle(app, pilot)
            seen.append(type(app.screen).__name__)
            found = unsafe_lines(app)
            if found:
                leaks[f"key {number} {key!r} on {type(app.screen).__name__}"] = found
        assert app.is_running
    assert not {where: lines for where, lines in leaks.items() if lines}, "\n".join(
        f"{where}:\n  " + "\n  ".join(lines) for where, lines in leaks.items() if lines
    )
    print(seen)


async def test_a_note_opened_and_saved_unedited_keeps_what_the_sidecar_holds(tmp_path):
    """The editor shows the note stripped; saving it unedited must not rewrite the sidecar's text."""
    app = hostile_app(tmp_path, "stub")
    sidecar = app.workspace.annotations.path
    before = json.loads(sidecar.read_text())["annotations"][0]["note"]
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("n")
        await settle(app, pilot)
        assert "\x1b" not in app.screen.query_one(TextArea).text
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert app.workspace.annotations.get(0, None).note == before
        await pilot.press("n", "end", "!", "ctrl+s")  # edited: the text as the editor has it
        await settle(app, pilot)
        assert app.workspace.annotations.get(0, None).note == strip_control(before) + "!"
