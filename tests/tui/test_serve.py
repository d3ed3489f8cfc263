"""``replay-tui serve`` end to end: the real textual-serve server in a subprocess, the real headless
Chromium (Playwright) on its page, keys pressed in the browser's terminal, and no process left behind."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay_tui.cli.commands import build_parser, main
from replay_tui.cli.serve import SERVE_FLAGS, app_argv, app_command
from replay_tui.visual.render import CHROMIUM_ARGS, find_chromium
from tests.conftest import good_episode, write_json

HOOK = "this.terminal.open(e),"
"""Where textual-serve's page opens its xterm.js terminal: the test keeps a handle on it there, to read
the screen from the terminal's own buffer (the page draws it on a canvas, not as DOM text)."""
SCREEN_JS = """() => {
    const term = window.__replayTerm;
    if (!term) return "";
    const buffer = term.buffer.active, lines = [];
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i).translateToString(true));
    return lines.join("\\n");
}"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_listening(port: int, server: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"serve exited with {server.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"serve did not listen on {port}:\n{log.read_text(errors='replace')}")


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux ``/proc``): textual-serve's app processes."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(part) for part in text.split()]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@contextlib.contextmanager
def serving(tmp_path: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """``replay-tui serve`` on three episodes, on a free loopback port, in its own process group, writing
    only under ``tmp_path``; yields the URL it printed (with its token), the server process and its log."""
    demos = write_json(tmp_path / "three.json", [good_episode(i) for i in (7, 8, 9)])
    port = _free_port()
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "replay_tui", "serve", str(demos), "--port", str(port), *extra]
    command += ["--annotations", str(tmp_path / "notes.json"), "--runs-dir", str(tmp_path / "runs")]
    command += ["--out-dir", str(tmp_path / "out")]
    with log.open("wb") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp_path)
    try:
        _wait_listening(port, server, log)
        deadline = time.monotonic() + 20
        while "?token=" not in log.read_text(errors="replace") and time.monotonic() < deadline:
            time.sleep(0.1)
        printed = re.search(r"http://\S+\?token=\S+", log.read_text(errors="replace"))
        assert printed, log.read_text(errors="replace")
        yield printed.group(0), server, log
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        if _group_alive(server.pid):
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    with serving(tmp_path) as running:
        yield running


def _patch_page_script(route) -> None:
    response = route.fetch()
    body = response.text()
    assert HOOK in body, "textual-serve's textual.js changed: update HOOK"
    route.fulfill(response=response, body=body.replace(HOOK, HOOK + "window.__replayTerm=this.terminal,", 1))


@pytest.mark.chromium
def test_serve_in_chromium_browses_and_steps(served, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    url, server, log = served
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.route("**/fonts.googleapis.com/**", lambda route: route.abort())  # no network in tests
            page.route("**/static/js/textual.js", _patch_page_script)
            page.goto(url)

            def screen_with(text: str) -> str:
                page.wait_for_function(f"() => ({SCREEN_JS})().includes({text!r})", timeout=60_000)
                return str(page.evaluate(SCREEN_JS))

            screen = screen_with("3/3 episodes")  # the session browser's title
            assert all(str(i) in screen for i in (7, 8, 9))
            page.locator(".xterm-helper-textarea").focus()
            page.keyboard.press("Enter")
            screen = screen_with("session 7")  # the stepper on the first episode
            assert "step 0  Search" in screen and "expected   search[long clip-in hair extension]" in screen
            page.keyboard.press("j")
            screen_with("step 1  Result")  # the next step, after a key pressed in the browser
            app = _children(server.pid)
            assert len(app) == 1  # one app process for the one browser, started without a shell left behind
            argv = Path(f"/proc/{app[0]}/cmdline").read_bytes().split(b"\0")
            assert argv[1:4] == [b"-m", b"replay_tui", b"tui"]
            assert str(tmp_path / "out").encode() in argv  # the app writes only under serve's --out-dir
        finally:
            browser.close()
    deadline = time.monotonic() + 20
    while _children(server.pid) and time.monotonic() < deadline:  # the browser left: its app ends
        time.sleep(0.1)
    assert _children(server.pid) == []
    # the browser is gone: the server ends its app; then SIGTERM ends the server, leaving no process
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=20) == 0, log.read_text(errors="replace")
    deadline = time.monotonic() + 10
    while _group_alive(server.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _group_alive(server.pid), "an app process outlived the server"


def test_public_bind_needs_public(capsys) -> None:
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--host 0.0.0.0 is not loopback" in err and "--public" in err and "reverse proxy" in err


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.5"])
def test_loopback_hosts_need_no_public(host: str) -> None:
    from replay_tui.cli.serve import check_bind

    check_bind(host, public=False)


def test_each_browser_gets_the_same_app_arguments(tmp_path: Path) -> None:
    """The per-browser command, parsed back as ``tui``, gives every flag and file serve was given."""
    parser = build_parser()
    argv = ["--mode", "heuristic", "--match", "Search=tolerant", "--match", "typed", "--temperature", "0.1", "--follow"]
    argv += ["--no-cache", "--format", "webshop-demos", "--visual-ref-dir", "r", "--visual-pred-dir", "p"]
    argv += ["--port", "9000", "--", "a b.json", "-odd.json", "$(touch x).json"]
    served = parser.parse_args(["serve", *argv])
    tui = _subparser(parser, "tui")
    command = app_command(served, tui)
    assert shlex.split(command) == ["exec", sys.executable, "-m", "replay_tui", "tui", *app_argv(served, tui)]
    again = parser.parse_args(["tui", *app_argv(served, tui)])
    ignored = {"command", "func", *SERVE_FLAGS}
    assert {k: v for k, v in vars(served).items() if k not in ignored} == {
        k: v for k, v in vars(again).items() if k not in ignored
    }


def _subparser(parser, name: str):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    raise AssertionError(name)
