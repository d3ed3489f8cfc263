"""A scripted OpenAI-compatible server on 127.0.0.1 for the LLM tests, and an oracle that answers
with the recorded decisions of a demo file.

The server speaks just enough of ``POST /v1/chat/completions`` for the real ``openai`` client: each
request's JSON body goes to a script that returns a :class:`Reply` (status, body, delay, headers).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from replay_tui.env import replay_steps
from replay_tui.episodes.recorded import arguments_from_json
from replay_tui.formats.webshop_demos.index import open_demos
from replay_tui.policies.llm import build_messages, build_tools


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    """A dict/list (sent as JSON), or str/bytes sent as they are."""
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def completion(
    name: str | None = None,
    arguments: Any = None,
    *,
    content: str | None = None,
    more_calls: int = 0,
    model: str = "scripted",
) -> dict[str, Any]:
    """A chat completion body; ``name`` None gives an answer without a tool call."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if name is not None:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
        calls = [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": text}}
            for i in range(1 + more_calls)
        ]
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if name else "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }


def tool_reply(name: str | None, arguments: Any = None, **kwargs: Any) -> Reply:
    return Reply(body=completion(name, arguments, **kwargs))


class ScriptedServer:
    """``with ScriptedServer(script) as server:`` serves on ``server.url`` (``http://127.0.0.1:PORT/v1``);
    ``server.requests`` holds every request body received, in order."""

    def __init__(self, script: Callable[[dict[str, Any]], Reply]):
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes; without this, Nagle's algorithm and delayed ACKs
                # add ~40 ms to every exchange.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(Reply(status=404, body={"error": {"message": f"no route {self.path}"}}))
                    return
                body = json.loads(raw)
                with owner._lock:
                    owner.requests.append(body)
                    owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    reply = owner.script(body)
                except Exception as exc:  # a broken script shows up as a 500, not a hung test
                    reply = Reply(status=500, body={"error": {"message": f"script failed: {exc!r}"}})
                if reply.delay:
                    time.sleep(reply.delay)
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                body = reply.body
                if isinstance(body, (dict, list)):
                    data, kind = json.dumps(body).encode(), "application/json"
                elif isinstance(body, str):
                    data, kind = body.encode(), "text/plain"
                else:
                    data, kind = body or b"", "application/octet-stream"
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", kind)
                    self.send_header("content-length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.headers.clear()

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


def messages_key(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    return json.dumps([messages, sorted(t["function"]["name"] for t in tools)], sort_keys=True)


@dataclass
class RecordedCall:
    session_id: int
    label: str
    name: str
    arguments: dict[str, Any]


def recorded_calls(demo_paths: list[Any], *, item_steps: bool = True) -> dict[str, list[RecordedCall]]:
    """Request key -> the decisions recorded for that prompt and tool set, in recorded order."""
    demos = open_demos(demo_paths)
    by_key: dict[str, list[RecordedCall]] = {}
    for session_id in demos.session_ids:
        for step in replay_steps(demos.trajectory(session_id), include_item_steps=item_steps):
            tools = build_tools(step.available_actions, step.state)
            messages = build_messages(step.llm_prompt, step.observation, step.state, tools)
            recorded = step.recorded
            call = RecordedCall(
                session_id,
                step.label,
                recorded["llm_action_name"],
                arguments_from_json(recorded.get("llm_action_arguments")),
            )
            by_key.setdefault(messages_key(messages, [t.schema() for t in tools]), []).append(call)
    return by_key


class Oracle:
    """Answers each request with the decision recorded for the step whose prompt it carries.

    A prompt recorded several times (the same search page twice) gets its decisions in recorded
    order. ``overrides[(session_id, label)]`` replaces the answer for one step: a Reply, or a
    callable taking the recorded call and returning one.
    """

    def __init__(self, by_key: dict[str, list[RecordedCall]]):
        self.by_key = by_key
        self.served: dict[str, int] = {}
        self.overrides: dict[tuple[int, str], Any] = {}
        self.unknown = Reply(status=400, body={"error": {"message": "unknown prompt"}})
        """The answer to a prompt no step recorded."""
        self._lock = threading.Lock()

    def lookup(self, body: dict[str, Any]) -> RecordedCall | None:
        key = messages_key(body["messages"], body.get("tools") or [])
        calls = self.by_key.get(key)
        if not calls:
            return None
        with self._lock:
            index = self.served.get(key, 0)
            self.served[key] = index + 1
        return calls[min(index, len(calls) - 1)]

    def __call__(self, body: dict[str, Any]) -> Reply:
        call = self.lookup(body)
        if call is None:
            return self.unknown
        override = self.overrides.get((call.session_id, call.label))
        if isinstance(override, Reply):
            return override
        if callable(override):
            return override(call)
        return tool_reply(call.name, call.arguments)
