"""What ``replay-tui serve`` enforces, shown with real clients against the real server in a subprocess:
the ``Host`` and ``Origin`` it accepts, its token, its bound on app processes, that a closed socket
(or the server's stop) ends its app, the terminal size it clamps; and, driven with Pilot, that a
served app exports only under ``--out-dir`` and keeps the command line's policy spec and base URL."""

from __future__ import annotations

import asyncio
import http.client
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest
from textual.widgets import Input

from replay_tui.cli.commands import build_parser, main, tui_app
from replay_tui.cli.serve_guard import MAX_HEIGHT, MAX_WIDTH
from replay_tui.cli.serve_server import BoundedAppService
from replay_tui.tui.screens.modals import ExportModal
from tests.conftest import good_episode, write_json
from tests.tui.conftest import SIZE
from tests.tui.test_serve import _children, _group_alive, serving


def _parts(url: str) -> tuple[str, int, str]:
    """The host, port and token of the URL serve printed."""
    split = urlsplit(url)
    assert split.hostname and split.port
    return split.hostname, split.port, split.query.removeprefix("token=")


def _get(port: int, path: str, host: str) -> tuple[int, str]:
    """A plain HTTP GET with the given ``Host`` header (as a DNS-rebinding page's request carries)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        conn.close()


async def _ws_status(url: str, origin: str | None, headers: dict[str, str] | None = None) -> int:
    """The HTTP status of a WebSocket handshake (101 when the socket opened; it is closed again)."""
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, origin=origin, headers=headers):
                return 101
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


def _wait_for(condition, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.fixture(scope="module")
def default_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """One ``replay-tui serve`` with the default flags for the tests that only send it requests (starting
    one costs seconds of imports); each test still makes its own clients."""
    with serving(tmp_path_factory.mktemp("serve")) as running:
        yield running


def test_foreign_host_origin_and_missing_token_are_refused_and_start_no_app(default_server) -> None:
    url, server, log = default_server
    host, port, token = _parts(url)
    served = f"{host}:{port}"
    status, body = _get(port, f"/?token={token}", served)
    assert status == 200 and "/ws" in body  # the page, for the right Host and token
    status, body = _get(port, f"/?token={token}", f"rebound.example:{port}")  # DNS rebinding
    assert status == 403 and "Host 'rebound.example:" in body and body.count("\n") == 1
    status, body = _get(port, "/", served)  # no token
    assert status == 403 and "token" in body
    status, _ = _get(port, "/?token=" + token[:-1] + "x", served)  # a wrong token
    assert status == 403
    status, _ = _get(port, "/static/css/xterm.css", served)  # textual-serve's own assets need none
    assert status == 200

    ws = f"ws://{served}/ws?token={token}"
    origin = f"http://{served}"
    assert asyncio.run(_ws_status(ws, "http://evil.example")) == 403  # a page on another site
    assert asyncio.run(_ws_status(ws, None)) == 403
    assert asyncio.run(_ws_status(ws, origin, {"Host": f"rebound.example:{port}"})) == 403
    assert asyncio.run(_ws_status(f"ws://{served}/ws", origin)) == 403  # no token
    assert asyncio.run(_ws_status(f"ws://{served}/ws?token=nottheone0123456789", origin)) == 403
    assert _children(server.pid) == []  # no refused socket started an app
    assert asyncio.run(_ws_status(ws, origin)) == 101  # the served origin with the token opens one
    assert log.read_text().count(token) == 1  # printed once; the access log shows token=…


def test_the_token_is_kept_in_an_http_only_strict_cookie(default_server) -> None:
    async def visit(url: str) -> tuple[int, int, str]:
        host, port, _ = _parts(url)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            async with session.get(url) as first:
                cookie = first.headers.get("Set-Cookie", "")
            async with session.get(f"http://{host}:{port}/") as again:  # the cookie, no query
                return first.status, again.status, cookie

    first, again, cookie = asyncio.run(visit(default_server[0]))
    assert first == 200 and again == 200
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_25_sockets_start_at_most_max_sessions_apps_and_a_closed_socket_ends_its_app(tmp_path: Path) -> None:
    async def crowd(url: str, server: subprocess.Popen[bytes]) -> tuple[int, list[int | None], list[str], int, int]:
        server_pid = server.pid
        host, port, token = _parts(url)
        ws_url, origin = f"ws://{host}:{port}/ws?token={token}&width=100&height=30", f"http://{host}:{port}"
        async with aiohttp.ClientSession() as session:
            sockets = await asyncio.gather(*(session.ws_connect(ws_url, origin=origin) for _ in range(25)))
            refused: list[aiohttp.ClientWebSocketResponse] = []
            said: list[str] = []
            for socket in sockets:  # the refused ones are told why, then closed
                message = await socket.receive(timeout=120)  # an accepted socket: the app's first screen
                if message.type == aiohttp.WSMsgType.BINARY and b"sessions are in use" in message.data:
                    said.append(message.data.decode())
                    closing = await socket.receive(timeout=30)
                    assert closing.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
                    refused.append(socket)
            most = 0
            for _ in range(30):  # the accepted apps start; never more than --max-sessions
                most = max(most, len(_children(server_pid)))
                await asyncio.sleep(0.1)
            codes = [socket.close_code for socket in refused]
            open_sockets = [socket for socket in sockets if socket not in refused]
            assert len(open_sockets) == 2
            await open_sockets[0].close()  # one browser leaves: its app ends, the other stays
            deadline = time.monotonic() + 30
            while len(_children(server_pid)) > 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            left = len(_children(server_pid))
            server.send_signal(signal.SIGTERM)  # the server stops with a session open: it closes the socket
            goodbye = await open_sockets[1].receive(timeout=60)
            while goodbye.type == aiohttp.WSMsgType.BINARY:  # the app's last frames, then the close
                goodbye = await open_sockets[1].receive(timeout=60)
            assert goodbye.type == aiohttp.WSMsgType.CLOSE
            return most, codes, said, left, goodbye.data

    with serving(tmp_path, "--max-sessions", "2") as (url, server, _log):
        most, codes, said, left, goodbye = asyncio.run(crowd(url, server))
        assert most <= 2
        assert len(codes) == 23 and set(codes) == {1013}
        assert said and "all 2 sessions are in use (--max-sessions)" in said[0]
        assert left == 1
        assert goodbye == 1001  # going away
        assert server.wait(timeout=60) == 0
        assert _wait_for(lambda: not _group_alive(server.pid)), "an app outlived the server"


STUBBORN_APP = """
import json, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # an app that ignores quit and SIGTERM
out = open(sys.argv[1], "a")
out.write(json.dumps({"columns": os.environ["COLUMNS"], "rows": os.environ["ROWS"]}) + "\\n"); out.flush()
sys.stdout.write("__GANGLION__\\n"); sys.stdout.flush()
stdin = sys.stdin.buffer
while kind := stdin.read(1):
    payload = stdin.read(int.from_bytes(stdin.read(4), "big"))
    if kind == b"M":
        out.write(payload.decode() + "\\n"); out.flush()
while True:
    time.sleep(1)
"""


def test_an_app_that_ignores_quit_and_sigterm_is_killed_and_sizes_are_clamped(tmp_path: Path, monkeypatch) -> None:
    from replay_tui.cli import serve_server

    # The app ignores both, so each grace period is waited out in full: a shorter one changes nothing checked.
    monkeypatch.setattr(serve_server, "STOP_GRACE", 1.0)
    script = tmp_path / "stubborn.py"
    script.write_text(STUBBORN_APP)
    seen = tmp_path / "seen.jsonl"

    async def session() -> int | None:
        async def sink(_data: object) -> None:
            return None

        from textual_serve.download_manager import DownloadManager

        service = BoundedAppService(
            f"exec {sys.executable} {script} {seen}",
            write_bytes=sink,
            write_str=sink,
            close=lambda: sink(None),
            download_manager=DownloadManager(),
        )
        await service.start(20000, 20000)
        await service.set_terminal_size(20000, 20000)
        for _ in range(300):
            if seen.exists() and "resize" in seen.read_text():
                break
            await asyncio.sleep(0.05)
        process = service._process
        assert process is not None
        await asyncio.wait_for(service.stop(), 60)  # textual-serve's own stop waits forever here
        return process.returncode

    returncode = asyncio.run(session())
    assert returncode == -9  # SIGKILL, after quit and SIGTERM were ignored
    records = [json.loads(line) for line in seen.read_text().splitlines()]
    assert records[0] == {"columns": str(MAX_WIDTH), "rows": str(MAX_HEIGHT)}
    resize = next(r for r in records if r.get("type") == "resize")
    assert (resize["width"], resize["height"]) == (MAX_WIDTH, MAX_HEIGHT)
    assert {"type": "quit"} in records


def test_public_warns_what_anyone_who_reaches_the_port_can_do(tmp_path: Path) -> None:
    with serving(tmp_path, "--public") as (_url, _server, log):
        text = log.read_text(errors="replace")
    warning = next(line for line in text.splitlines() if line.startswith("warning: --public"))
    for can in ("read every log opened", "replay", "LLM API key", f"write exports under {tmp_path / 'out'}"):
        assert can in warning


def test_serve_refuses_a_bad_token_and_an_unnamed_wildcard_host(capsys) -> None:
    assert main(["serve", "--token", "short"]) == 2
    assert "--token must be at least 16 characters" in capsys.readouterr().err
    assert main(["serve", "--host", "0.0.0.0", "--public"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--public-url" in err


async def test_a_served_app_exports_only_under_its_out_dir(tmp_path: Path) -> None:
    """The app built as each served process builds it (``tui`` with serve's ``--out-dir``): a path
    outside, through ``..`` or through a link, is refused in the dialog; a path inside is written."""
    demos = write_json(tmp_path / "three.json", [good_episode(i) for i in (7, 8, 9)])
    out = tmp_path / "out"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    argv = ["tui", str(demos), "--out-dir", str(out), "--annotations", str(tmp_path / "notes.json")]
    argv += ["--runs-dir", str(tmp_path / "runs")]
    app = tui_app(build_parser().parse_args(argv))
    assert out.is_dir()
    (out / "link").symlink_to(outside)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportModal)
        path_input = app.screen.query_one("#export-path", Input)
        assert path_input.value.startswith(str(out))  # the dialog starts in the out-dir
        for typed in (str(outside / "x.md"), f"{out}/../elsewhere/x.md", "link/x.md", "~/x.md"):
            path_input.value = typed
            path_input.focus()
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, ExportModal), typed  # refused: the dialog stays open
            shown = [n.message for n in app._notifications]
            assert any(f"{typed} is outside {out}" in m and "--out-dir" in m for m in shown), shown
        path_input.value = "sub/report.md"  # a relative path goes under the out-dir
        path_input.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ExportModal)
    assert list(outside.iterdir()) == []
    assert (out / "sub" / "report.md").read_text().startswith("#")


def test_serve_passes_its_out_dir_to_every_app(tmp_path: Path) -> None:
    from replay_tui.cli.serve import app_argv
    from tests.tui.test_serve import _subparser

    parser = build_parser()
    served = parser.parse_args(["serve", "--out-dir", str(tmp_path / "o"), "--token", "t" * 20, "--max-sessions", "3"])
    argv = app_argv(served, _subparser(parser, "tui"))
    assert argv == ["--out-dir", str(tmp_path / "o")]  # the token and the server's flags stay with the server


async def test_a_served_app_loads_no_policy_and_sends_no_key_to_what_the_browser_types(tmp_path: Path) -> None:
    """A policy spec is code loaded from a path (an export under ``--out-dir`` could be one), and the
    LLM base URL receives the API key: in a served app both stay those serve was started with."""
    from textual.widgets import RadioButton

    from replay_tui.tui.screens.modals import SettingsModal

    demos = write_json(tmp_path / "three.json", [good_episode(i) for i in (7, 8, 9)])
    argv = ["tui", str(demos), "--out-dir", str(tmp_path / "out"), "--annotations", str(tmp_path / "notes.json")]
    app = tui_app(build_parser().parse_args([*argv, "--runs-dir", str(tmp_path / "runs")]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, SettingsModal)
        spec = app.screen.query_one("#policy-spec", Input)
        base_url = app.screen.query_one("#llm-base-url", Input)
        assert spec.disabled and base_url.disabled  # no key reaches them
        spec.value = str(tmp_path / "out" / "evil.py") + ":policy"  # even set, they are not used
        base_url.value = "http://evil.example/v1"
        app.screen.query_one("#mode-custom", RadioButton).value = True
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SettingsModal)  # custom mode has no spec from the command line
        assert any("custom mode needs a spec" in str(n.message) for n in app._notifications)
        app.screen.query_one("#mode-stub", RadioButton).value = True
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, SettingsModal)
    settings = app.workspace.settings
    assert settings.policy_spec is None and "evil" not in str(settings.llm)


def test_behind_a_proxy_the_public_urls_host_and_origin_are_accepted() -> None:
    from aiohttp.test_utils import make_mocked_request

    from replay_tui.cli.serve_guard import Guard

    token = "t" * 20
    guard = Guard.build("127.0.0.1", 8000, "https://review.example.org:443/replay", token)

    def refusal(host: str, origin: str, path: str = "/ws") -> str | None:
        headers = {"Host": host, "Origin": origin, "Cookie": f"{guard.cookie}={token}"}
        return guard.refusal(make_mocked_request("GET", path, headers=headers))

    assert refusal("review.example.org", "https://review.example.org") is None  # a browser drops :443
    assert refusal("127.0.0.1:8000", "https://review.example.org") is None  # a proxy that rewrites Host
    assert refusal("review.example.org", "http://review.example.org") is not None  # not the served scheme
    assert "Origin" in str(refusal("review.example.org", "https://evil.example"))
    assert "Host" in str(refusal("localhost:8000", "http://localhost:8000"))  # not the name printed


@pytest.mark.parametrize("url", ["ftp://x.example", "https://", "http://x.example:99999", "x.example"])
def test_serve_refuses_a_public_url_it_could_not_check_against(url: str, capsys) -> None:
    assert main(["serve", "--public-url", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--public-url {url}" in err
