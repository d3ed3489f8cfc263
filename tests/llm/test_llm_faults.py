"""LLM mode against faulty servers: the cache never answers for another server, a request has an
overall deadline (not a per-read timeout), and an oversized answer is refused, not cached."""

import socket
import threading
import time

import pytest

from replay_tui.policies.base import PolicyFailure
from replay_tui.policies.llm import LlmPolicy, endpoint_identity
from tests.llm.scripted import ScriptedServer, tool_reply

PROMPT = repr([{"role": "system", "content": "You shop."}, {"role": "user", "content": "Page 1 of results"}])


def ask(policy):
    return policy.predict_action("obs", "Result", ["select_item", "Next", "Back_to_Search"], PROMPT)


class RawServer:
    """A TCP server on 127.0.0.1 that reads one HTTP request per connection and answers with
    ``behaviour(conn)``, which writes whatever bytes it likes (until the client hangs up)."""

    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.connections = 0
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self):
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            length = next((int(x.split(b":")[1]) for x in lines if x.lower().startswith(b"content-length")), 0)
            while len(body) < length:
                body += conn.recv(65536)
            try:
                self.behaviour(conn, self.stop)
            except OSError:  # the client gave up: what a deadline is for
                pass

    def close(self):
        self.stop.set()
        self.sock.close()


def trickle_body(conn, stop):
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n")
    while not stop.is_set():
        conn.sendall(b" ")
        time.sleep(0.2)


def trickle_headers(conn, stop):
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    while not stop.is_set():
        conn.sendall(b"x")
        time.sleep(0.2)


def endless_chunks(conn, stop):
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
    while not stop.is_set():
        conn.sendall(b"1\r\n \r\n")
        time.sleep(0.05)


def huge_body(conn, stop):
    size = 20 * 2**20
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % size)
    block = b" " * 2**20
    for _ in range(20):
        conn.sendall(block)


@pytest.mark.parametrize("behaviour", [trickle_body, trickle_headers, endless_chunks])
def test_a_trickling_server_is_cut_at_the_deadline_and_recorded_as_timeout(tmp_path, behaviour):
    server = RawServer(behaviour)
    try:
        policy = LlmPolicy(model="M", base_url=server.url, cache_dir=str(tmp_path / "cache"), timeout=1.0, retries=0)
        started = time.monotonic()
        with pytest.raises(PolicyFailure) as caught:
            ask(policy)
        elapsed = time.monotonic() - started
        assert caught.value.kind == "timeout" and "1 s" in caught.value.message
        assert elapsed < 2.5, f"the request was held {elapsed:.1f} s past a 1 s deadline"
        # recorded: the same run again is answered from the cache, as the same timeout
        again = LlmPolicy(model="M", base_url=server.url, cache_dir=str(tmp_path / "cache"), timeout=1.0, retries=0)
        with pytest.raises(PolicyFailure) as cached:
            ask(again)
        assert cached.value.kind == "timeout" and again.last_trace["cache"] == "hit"
        assert server.connections == 1
    finally:
        server.close()


def test_an_oversized_answer_is_a_bad_response(tmp_path):
    server = RawServer(huge_body)
    try:
        policy = LlmPolicy(model="M", base_url=server.url, cache=False, timeout=20.0, retries=0)
        with pytest.raises(PolicyFailure) as caught:
            ask(policy)
        assert caught.value.kind == "bad_response" and "larger than 16 MiB" in caught.value.message
    finally:
        server.close()


def test_the_cache_never_answers_for_another_server(tmp_path):
    cache = str(tmp_path / "cache")
    with (
        ScriptedServer(lambda body: tool_reply("Next", {})) as first,
        ScriptedServer(lambda body: tool_reply("Back_to_Search", {})) as second,
    ):
        assert ask(LlmPolicy(model="M", base_url=first.url, cache_dir=cache, retries=0)) == "click[Next >]"
        other = LlmPolicy(model="M", base_url=second.url, cache_dir=cache, retries=0)
        assert ask(other) == "click[Back to Search]"
        assert len(second.requests) == 1 and other.last_trace["cache"] == "miss"
        again = LlmPolicy(model="M", base_url=first.url + "/", cache_dir=cache, retries=0)
        assert ask(again) == "click[Next >]" and again.last_trace["cache"] == "hit"
        assert len(first.requests) == 1


def test_endpoint_identity_normalises_case_and_slashes(monkeypatch):
    assert endpoint_identity("HTTP://LocalHost:8000/v1/") == "http://localhost:8000/v1"
    assert endpoint_identity("http://a/v1") != endpoint_identity("http://b/v1")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert endpoint_identity(None) == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy/v1")
    assert endpoint_identity(None) == "http://proxy/v1"
