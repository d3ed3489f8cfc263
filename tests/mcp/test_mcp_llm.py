"""``replay-tui mcp``'s replay in the llm mode: the real ``openai`` client in the server subprocess
against the scripted OpenAI-compatible server on 127.0.0.1, and a client's cancellation stopping a run."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

pytest.importorskip("mcp")

from tests.llm.scripted import Oracle, Reply, ScriptedServer, recorded_calls
from tests.mcp.test_mcp_server import EXAMPLE, call, cli_json, error, server

HANG_S = 300
"""A hang guard, not a timing: requests still coming this long after a cancellation fail the test."""
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@pytest.fixture(scope="module")
def oracle_calls() -> Any:
    return recorded_calls([EXAMPLE], item_steps=True)


@pytest.fixture
def llm_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The server's environment: no key, no proxy, the cache in the test's folder."""
    saved = {name: os.environ.pop(name) for name in (*PROXIES, "OPENAI_API_KEY") if name in os.environ}
    yield {"NO_PROXY": "127.0.0.1,localhost", "REPLAY_TUI_CACHE_DIR": str(tmp_path / "cache")}
    os.environ.update(saved)


async def test_llm_replay_only_with_allow_llm_through_the_real_client(
    tmp_path: Path, oracle_calls: Any, llm_env: dict[str, str]
) -> None:
    with ScriptedServer(Oracle(oracle_calls)) as scripted:
        env = {**llm_env, "OPENAI_BASE_URL": scripted.url}
        async with server(tmp_path, env=env) as client:
            await call(client, "open_logs", paths=[str(EXAMPLE)])
            refused = await error(client, "replay", policy="llm", model="M", episodes=["0"])
        assert scripted.requests == []
        async with server(tmp_path, "--allow-llm", env=env) as client:
            await call(client, "open_logs", paths=[str(EXAMPLE)])
            replayed = await call(client, "replay", policy="llm", model="M", episodes=["0", "1", "2"])
            episode = await call(client, "get_episode", episode_id="1")
        requests = len(scripted.requests)
    assert "policy: the llm mode" in refused and "--allow-llm" in refused
    assert replayed["mode"] == "llm:M" and replayed["episodes_run"] == 3
    assert requests >= replayed["total_steps"] > 0 and {body["model"] for body in scripted.requests} == {"M"}
    assert replayed["total_mismatches"] == 0 and episode["replayed"] and episode["accuracy"] == 1.0
    with ScriptedServer(Oracle(oracle_calls)) as scripted:  # the CLI's run of the same work, uncached
        argv = ["replay", "--demos", str(EXAMPLE), "--sessions", "0-2", "--mode", "llm", "--no-save-run"]
        argv += ["--base-url", scripted.url, "--model", "M", "--cache-dir", str(tmp_path / "cli-cache")]
        cli = cli_json(tmp_path, "llm.json", *argv)
    for key in ("episodes_run", "episodes_matched", "total_steps", "total_matched", "overall_accuracy"):
        assert replayed[key] == cli[key], key


@pytest.mark.slow
async def test_a_cancelled_replay_stops(tmp_path: Path, oracle_calls: Any, llm_env: dict[str, str]) -> None:
    """The SDK's request cancellation stops a running replay: the scripted server hears no more
    requests once the one in flight is answered, far fewer than the whole run makes, and the server
    goes on answering (with nothing recorded of the cancelled run)."""
    oracle = Oracle(oracle_calls)
    arrivals: list[float] = []

    def slow(body: dict[str, Any]) -> Reply:
        arrivals.append(time.monotonic())
        return replace(oracle(body), delay=0.2)

    progressed = anyio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progressed.set()

    with ScriptedServer(slow) as scripted:
        env = {**llm_env, "OPENAI_BASE_URL": scripted.url}
        async with server(tmp_path, "--allow-llm", env=env) as client:
            opened = await call(client, "open_logs", paths=[str(EXAMPLE)])
            async with anyio.create_task_group() as group:

                async def replay_all() -> None:
                    await client.call_tool("replay", {"policy": "llm", "model": "M"}, progress_callback=on_progress)

                group.start_soon(replay_all)
                await progressed.wait()  # one episode done: the run is under way
                group.cancel_scope.cancel()
            at_cancel = len(scripted.requests)
            # The run has stopped when no request came for three times the longest gap between two of its
            # requests (a reply's delay and the step after it; longer on a loaded machine), at least 1 s.
            gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
            quiet = max(1.0, 3 * max(gaps, default=1.0))
            cancelled = time.monotonic()
            while time.monotonic() - max(arrivals[-1] if arrivals else 0.0, cancelled) < quiet:
                assert time.monotonic() - cancelled < HANG_S, "requests kept coming after the cancellation"
                await anyio.sleep(0.05)
            heard = len(scripted.requests)
            listed = await call(client, "list_episodes", mismatched=False)
            runs = list((tmp_path / "runs").rglob("*.json"))
    steps = sum(len(demo["trajectory"]) for demo in orjson.loads(EXAMPLE.read_bytes()))
    assert opened["episodes"] == 100
    assert heard <= at_cancel + 2 and heard < steps // 4
    assert listed["total"] == 0 and runs == []  # the cancelled run neither recorded nor saved


async def test_an_unreachable_endpoint_is_a_tool_error_not_a_run(tmp_path: Path, llm_env: dict[str, str]) -> None:
    """The replay session's check (the CLI's and the app's): a run in which no request got an answer (a
    503 each) is one error saying so, not a run at 0 %; nothing is recorded or saved."""
    with ScriptedServer(lambda body: Reply(status=503, body={"error": {"message": "no capacity"}})) as scripted:
        env = {**llm_env, "OPENAI_BASE_URL": scripted.url}
        async with server(tmp_path, "--allow-llm", env=env) as client:
            await call(client, "open_logs", paths=[str(EXAMPLE)])
            failed = await error(client, "replay", policy="llm", model="M", episodes=["0", "1", "2"])
            listed = await call(client, "list_episodes", mismatched=False)
    assert "endpoint unreachable: (the default endpoint): HTTP 503" in failed, failed  # the URL is the env's
    assert listed["total"] == 0 and list((tmp_path / "runs").rglob("*.json")) == []
