"""The inspector in a real pseudo-terminal: sixel when the terminal says it has it, half-blocks otherwise.

The app runs as a child process on a pty, exactly as from a shell. The test plays the terminal: it
answers the primary device attributes query (``ESC [ c``) with or without sixel (attribute 4),
watches what the app draws, then presses ``q``.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import sys
import termios
import time

import pytest

from replay_tui.visual.examples import example_pair

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pty")

SIXEL_START = b"\x1bP"  # a DCS sequence; sixel data is ESC P <params> q ...
HALF_BLOCK = "▀".encode()


def run_in_pty(
    args: list[str], answer: bytes | None, done: bytes, *, timeout: float = 120.0
) -> tuple[int, bytes, bool]:
    """Run ``replay-tui ARGS`` on a 140x40 pty; answer ESC[c with ``answer``; press q once ``done`` shows."""
    ref, gen = example_pair("11202", "move")
    pid, fd = pty.fork()
    if pid == 0:  # the child: replay-tui on the pty
        os.environ["TERM"] = "xterm-256color"
        os.environ.pop("REPLAY_TUI_GRAPHICS", None)
        os.execv(sys.executable, [sys.executable, "-m", "replay_tui", *args, str(ref), str(gen)])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 1400, 800))  # with a pixel size
    output, queried, quit_sent = b"", False, False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    data = os.read(fd, 1 << 16)
                except OSError:  # the child exited and closed the pty
                    break
                if not data:
                    break
                output += data
            if not queried and b"\x1b[c" in output:
                queried = True
                if answer is not None:
                    os.write(fd, answer)
            if not quit_sent and output.count(done) >= 3:
                time.sleep(0.5)
                os.write(fd, b"q")
                quit_sent = True
    finally:
        if not quit_sent:
            os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return os.waitstatus_to_exitcode(status), output, queried


def test_a_sixel_terminal_gets_real_pixels():
    code, output, queried = run_in_pty(["inspect"], b"\x1b[?62;4;22c", SIXEL_START)
    assert queried  # asked before the app started
    assert output.count(SIXEL_START) >= 2  # both screenshots, as sixel images
    assert code == 0


def test_a_terminal_without_graphics_gets_half_blocks():
    code, output, queried = run_in_pty(["inspect"], b"\x1b[?62;22c", HALF_BLOCK)
    assert queried
    assert SIXEL_START + b"0;0;0q" not in output
    assert output.count(HALF_BLOCK) > 100
    assert code == 0


def test_forced_half_blocks_do_not_query_the_terminal():
    code, output, queried = run_in_pty(["inspect", "--graphics", "halfblock"], None, HALF_BLOCK)
    assert not queried
    assert output.count(HALF_BLOCK) > 100
    assert code == 0
