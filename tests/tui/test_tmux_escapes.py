"""Hostile logs in a real terminal (tmux): no escape sequence from a log reaches the terminal.

Every text the app shows from a log, a file name, a sidecar or a cassette is the log author's. Here
each of them carries OSC 0/2 (retitle the pane), OSC 52 (write the clipboard), OSC 8 (a link), CSI
(clear the screen, colours), DCS (tmux passthrough) and ``ESC k`` (rename the tmux window); the app is
opened on them in a tmux pane that accepts all of these (``set-clipboard on``, ``allow-rename on``),
driven through its screens by keys, and the pane's title, the window's name and tmux's paste buffers
must be what they were, with no trace of a sequence on screen.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from bench.termdrive import TmuxApp
from tests.tui.hostile_text import SHORT, hostile, hostile_cassette, hostile_chat, hostile_demos, hostile_sidecar
from tests.tui.in_tmux import app_env

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
ROOT = Path(__file__).resolve().parents[2]


def test_hostile_logs_leave_the_pane_title_window_name_and_clipboard_alone(tmp_path: Path) -> None:
    folder = tmp_path / f"logs{SHORT}"
    folder.mkdir()
    demos, chat = hostile_demos(folder), hostile_chat(folder)
    sidecar, cassette = tmp_path / "notes.json", tmp_path / "model.cassette"
    hostile_sidecar(sidecar)
    hostile_cassette(cassette)
    arguments = [
        "-m",
        "replay_tui",
        "tui",
        str(demos),
        str(chat),
        "--annotations",
        str(sidecar),
        "--runs-dir",
        str(tmp_path / "runs"),
        "--mode",
        "llm",
        "--replay",
        str(cassette),
        "--graphics",
        "halfblock",  # auto asks the terminal with an APC, which tmux takes for a title
    ]
    # a launcher, so that the hostile paths reach the app byte for byte (no shell between)
    launcher = tmp_path / "launch.py"
    launcher.write_text(
        f"import os, sys\nos.chdir({str(folder)!r})\nos.execv(sys.executable, {[sys.executable, *arguments]!r})\n"
    )
    env = app_env(tmp_path)
    app = TmuxApp([sys.executable, str(launcher)], width=120, height=36, env=env, poll=0.05)
    try:
        app._tmux("set-option", "-s", "set-clipboard", "on")
        app._tmux("set-option", "-t", app.name, "allow-rename", "on")
        app._tmux("set-window-option", "-t", app.name, "automatic-rename", "off")
        app._tmux("rename-window", "-t", app.name, "safe-window")
        title = app._tmux("display-message", "-p", "-t", app.name, "#{pane_title}")

        leaks: list[str] = []

        def untouched(where: str) -> None:
            """Note what reached the terminal on this screen, then undo it (to tell the screens apart)."""
            screen = app.text()
            now = app._tmux("display-message", "-p", "-t", app.name, "#{pane_title}")
            if now != title:
                leaks.append(f"{where}: the pane title became {now.strip()!r}")
                app._tmux("select-pane", "-t", app.name, "-T", title.strip())
            window = app._tmux("display-message", "-p", "-t", app.name, "#{window_name}").strip()
            if window != "safe-window":
                leaks.append(f"{where}: the window was renamed {window!r}")
                app._tmux("rename-window", "-t", app.name, "safe-window")
            buffers = app._tmux("list-buffers")
            if buffers:
                leaks.append(f"{where}: the clipboard got {buffers.strip()!r}")
                for _ in buffers.splitlines():
                    app._tmux("delete-buffer")
            if "PWNED" in screen or "\x1b" in screen:
                leaks.append(f"{where}: a sequence's text is on screen:\n{screen}")

        app.wait_for(lambda screen: "4/4 episodes" in screen)
        app.settle()
        untouched("the browser")
        for key, where in [
            ("Enter", "the stepper"),
            ("j", "step 2"),
            ("j", "step 3"),
            ("G", "the last step"),
            ("t", "the tag dialog"),
            ("Escape", "back"),
            ("n", "the note dialog"),
            ("Escape", "back"),
            ("Escape", "the browser again"),
            ("G", "the chat episode"),
            ("Enter", "the chat episode's stepper"),
            ("j", "its step"),
            ("Escape", "the browser again"),
            ("g", "the first episode"),
            ("r", "a replay from the cassette"),
            ("M", "the mismatch groups"),
            ("Escape", "the browser again"),
            ("H", "the runs"),
            ("Escape", "the browser again"),
            ("F", "find in episodes"),
            ("red", "its results"),
            ("Escape", "the browser at last"),
        ]:
            # press returns once the screen has stayed the same for its quiet period (as settle() waits for); a
            # frame later than that is still checked, on the next screen (and the last screen settles again)
            app.press(key, timeout=20)
            untouched(where)
        app.settle()
        untouched("the browser, settled")
        app.send("q")
    finally:
        app.close()
    assert not leaks, "\n".join(leaks)


RAW_APP = """
import sys
from rich.text import Text
from textual.app import App
from textual.widgets import Static
from replay_tui.tui.app_base import AppBase


class Raw(AppBase if sys.argv[1] == "guarded" else App):
    # a view that forgets to strip: a log's text drawn as it is
    def compose(self):
        yield Static(Text(HOSTILE))
        yield Static("ready")


Raw().run()
"""


@pytest.mark.parametrize("base", ["guarded", "textual"])
def test_the_frame_guard_alone_keeps_a_forgotten_call_site_from_the_terminal(tmp_path: Path, base: str) -> None:
    """Unstripped text in a widget of an AppBase app leaves the pane alone; the same widget in a plain
    Textual app retitles it and writes the clipboard (what the guard is there for)."""
    script = tmp_path / "raw_app.py"
    script.write_text(f"HOSTILE = {hostile('raw')!r}\n{RAW_APP}")
    env = app_env(tmp_path)
    app = TmuxApp([sys.executable, str(script), base], width=80, height=24, env=env, poll=0.05)
    try:
        app._tmux("set-option", "-s", "set-clipboard", "on")
        title = app._tmux("display-message", "-p", "-t", app.name, "#{pane_title}")
        app.wait_for(lambda screen: "ready" in screen, timeout=60)
        app.settle()
        leaked = (
            app._tmux("display-message", "-p", "-t", app.name, "#{pane_title}") != title,
            app._tmux("list-buffers") != "",
        )
        app.send("C-c")
    finally:
        app.close()
    assert leaked == ((False, False) if base == "guarded" else (True, True))
