"""An endpoint no request reaches (issue 16): the CLI exits 2 with ``endpoint unreachable: URL: REASON``
instead of a 0 % replay and exit 1 (which CI reads as a regression), and gives up after a few
failures in a row instead of retrying every step of every episode."""

from __future__ import annotations

import json
import socket

from replay_tui.cli import main
from replay_tui.examples import example_path
from replay_tui.runner import UNREACHABLE_STREAK
from tests.llm.scripted import Reply, ScriptedServer

BUNDLED = str(example_path())


def closed_port_url() -> str:
    """A local URL nothing listens on (a port bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def replay(url, tmp_path, capsys, *extra):
    report = tmp_path / "r.json"
    code = main(
        [
            "replay",
            "--demos",
            BUNDLED,
            "--mode",
            "llm",
            "--base-url",
            url,
            "--model",
            "M",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--timeout",
            "2",
            "--retries",
            "1",
            "--backoff",
            "0",
            "--report",
            str(report),
            *extra,
        ]
    )
    out, err = capsys.readouterr()
    return code, out, err, report


def test_a_closed_port_exits_2_with_one_line_naming_the_endpoint(tmp_path, capsys):
    url = closed_port_url()
    code, out, err, report = replay(url, tmp_path, capsys, "--no-save-run")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"replay-tui replay: error: endpoint unreachable: {url}: cannot reach the server")
    assert "0.0%" not in out and "accuracy" not in out.lower()
    assert not report.exists()  # a run that never reached the model is no report


def test_a_server_answering_503_exits_2_after_a_few_requests_not_every_step(tmp_path, capsys):
    with ScriptedServer(lambda body: Reply(status=503, body={"error": {"message": "no capacity"}})) as server:
        code, _, err, _ = replay(server.url, tmp_path, capsys, "--no-save-run")
        sent = len(server.requests)
    assert code == 2
    assert f"endpoint unreachable: {server.url}: HTTP 503" in err
    # 100 episodes, hundreds of steps: it gave up after UNREACHABLE_STREAK steps of 2 attempts each
    assert sent == UNREACHABLE_STREAK * 2


def test_a_short_run_that_never_reached_the_server_exits_2_too(tmp_path, capsys):
    """Fewer steps than the streak (one 3-step episode): the end-of-run check says it."""
    with ScriptedServer(lambda body: Reply(status=502, body="bad gateway")) as server:
        code, _, err, _ = replay(server.url, tmp_path, capsys, "--sessions", "2", "--no-save-run")
        assert 0 < len(server.requests) < UNREACHABLE_STREAK * 2
    assert code == 2 and "endpoint unreachable:" in err and "HTTP 502" in err


def test_a_server_that_answers_some_requests_is_a_replay_with_failures_not_unreachable(
    server,
    oracle,
    tmp_path,
    capsys,
):
    oracle.overrides[(0, "1")] = Reply(status=503, body={"error": {"message": "busy"}})
    code, _, err, report = replay(server.url, tmp_path, capsys, "--sessions", "0-1", "--no-save-run")
    assert code == 1 and "unreachable" not in err
    assert json.loads(report.read_text())["failures_by_kind"] == {"http_error": 1}


def test_failures_served_from_the_cache_say_so(tmp_path, capsys):
    """A rerun gets the cached failures without asking anyone: the line says how to ask again."""
    with ScriptedServer(lambda body: Reply(status=503, body="down")) as server:
        url = server.url
        assert replay(url, tmp_path, capsys, "--sessions", "2", "--no-save-run")[0] == 2
        asked = len(server.requests)
    code, _, err, _ = replay(url, tmp_path, capsys, "--sessions", "2", "--no-save-run")
    assert asked and code == 2
    assert err.count("\n") == 1 and "kept in the cache from an earlier run: --retry-failures asks again" in err
