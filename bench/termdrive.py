"""Drive a real terminal app in tmux and time what the user sees: key -> first change -> settled screen.

Used by the benchmarks that measure what a user feels (``bench_keys.py``). Pilot timings skip the
terminal: the driver, the escape-sequence writer and the terminal's own parsing. Here the app runs
in a tmux pane of a fixed size; the screen is read with ``capture-pane -e`` (text and colours, so a
moved highlight counts as a change) every ``poll`` seconds.

A press is measured as:
  * ``first``: send-keys -> the first capture that differs from the screen before the key;
  * ``settled``: send-keys -> the last change before the screen stayed the same for ``quiet`` seconds;
  * ``changes``: how many distinct screens were seen in between (repaints the user could notice).
"""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

FLOOR_APP = r'''
"""The floor: the smallest Textual app that redraws a list cursor and a text pane on each key."""
from textual.app import App, ComposeResult
from textual.widgets import Footer, Static


class Floor(App):
    BINDINGS = [("j", "step(1)", "next"), ("k", "step(-1)", "prev"), ("q", "quit", "quit")]

    def compose(self) -> ComposeResult:
        yield Static(id="list")
        yield Static(id="pane")
        yield Footer()

    def on_mount(self) -> None:
        self.n = 0
        self.show()

    def show(self) -> None:
        rows = "\n".join(("> " if i == self.n % 20 else "  ") + f"step {i}" for i in range(20))
        self.query_one("#list", Static).update(rows)
        self.query_one("#pane", Static).update(f"observation of step {self.n}\n" + "lorem ipsum " * 200)

    def action_step(self, d: int) -> None:
        self.n += d
        self.show()


Floor().run()
'''


@dataclass
class Press:
    key: str
    first: float | None  # seconds to the first visible change; None when nothing changed
    settled: float | None  # seconds to the last change before the screen went quiet
    changes: int


def summary(values: Sequence[float]) -> tuple[float, float]:
    """Median and p95 (nearest rank) in milliseconds."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return statistics.median(ordered) * 1000, p95 * 1000


class TmuxApp:
    """One app in a detached tmux session of ``width`` x ``height``."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        width: int = 160,
        height: int = 48,
        env: dict[str, str] | None = None,
        poll: float = 0.01,
        quiet: float = 0.25,
    ) -> None:
        self.name = f"bench-{uuid.uuid4().hex[:8]}"
        self.socket = f"replay-bench-{os.getpid()}-{self.name}"
        self.poll = poll
        self.quiet = quiet
        environment = {"TERM": "xterm-256color", "COLORTERM": "truecolor", **(env or {})}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in environment.items())
        shell = f"{exports} exec {' '.join(shlex.quote(c) for c in command)}"
        self.started = time.perf_counter()
        self._tmux("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), shell)
        self._tmux("set-option", "-t", self.name, "remain-on-exit", "on")

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False)
        if out.returncode:
            raise RuntimeError(f"tmux {args[0]} failed: {out.stderr.strip()}")
        return out.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-e", "-t", self.name)

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def wait_for(self, predicate: Callable[[str], bool], timeout: float = 60.0) -> float:
        """Seconds since the session started until ``predicate(plain text)`` holds."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if predicate(self.text()):
                return time.perf_counter() - self.started
            time.sleep(self.poll)
        raise TimeoutError(f"screen never matched; last screen:\n{self.text()}")

    def settle(self, timeout: float = 60.0) -> None:
        """Wait until the screen stops changing for ``quiet`` seconds."""
        last, since = self.screen(), time.perf_counter()
        deadline = since + timeout
        while time.perf_counter() < deadline:
            time.sleep(self.poll)
            now = self.screen()
            if now != last:
                last, since = now, time.perf_counter()
            elif time.perf_counter() - since >= self.quiet:
                return

    def press(self, key: str, timeout: float = 30.0, quiet: float | None = None, *, expect: bool = False) -> Press:
        """Send one key and time the screen's answer to it. With ``expect`` (a key that always
        changes the screen), the quiet period only starts at the first change: an answer slower
        than ``quiet`` is timed, not taken for "nothing changed" (0 ms)."""
        quiet = self.quiet if quiet is None else quiet
        before = self.screen()
        sent = time.perf_counter()
        self._tmux("send-keys", "-t", self.name, key)
        first = last_change = None
        changes = 0
        last = before
        deadline = sent + timeout
        while True:
            now_t = time.perf_counter()
            screen = self.screen()
            if screen != last:
                changes += 1
                last = screen
                last_change = now_t
                if first is None:
                    first = now_t
            if last_change is None and expect:
                if now_t > deadline:
                    break
                time.sleep(self.poll)
                continue
            reference = last_change if last_change is not None else sent
            if now_t - reference >= quiet or now_t > deadline:
                break
            time.sleep(self.poll)
        return Press(
            key,
            None if first is None else first - sent,
            None if last_change is None else last_change - sent,
            changes,
        )

    def send(self, key: str) -> None:
        self._tmux("send-keys", "-t", self.name, key)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)


def installed_bytecode() -> dict[str, str]:
    """Compile the package's bytecode as ``pip install`` does, and the environment that lets the app
    use it: a user's installed app reads ``.pyc`` files, while a shell with PYTHONDONTWRITEBYTECODE set
    (this sandbox's) would compile every module from source at every launch (~0.1 s more)."""
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "replay_tui"), quiet=1)
    return {"PYTHONDONTWRITEBYTECODE": ""}  # empty is unset for Python
