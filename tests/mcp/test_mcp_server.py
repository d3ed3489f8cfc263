"""``replay-tui mcp`` driven by the SDK's own client over stdio, against a real server subprocess.

The server is started as a user's MCP client would (``python -m replay_tui mcp``) and its answers
checked against the CLI's JSON for the same work. Tests that need no fresh server (each opens its own
logs first) share one per module and set of flags (``plain``, ``annotating``): a start costs ~3 s of
CPU (the SDK's and our imports), most of what these tests cost.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest
import pytest_asyncio

pytest.importorskip("mcp")

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from replay_tui.cli.commands import main
from replay_tui.episodes.model import OUTCOME_KINDS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "replay_tui" / "examples" / "webshop_demonstrations_0-99.json"
TAU2_DIR = ROOT / "tests" / "data" / "formats" / "tau2"
TAU2 = TAU2_DIR / "2025-10-05T22-50-14.083933_airline_grok-3__slice_tasks_0_13_19.json"
OPENHANDS = ROOT / "tests" / "data" / "formats" / "openhands" / "multi_swe_bench__examples__output.jsonl"
PAIRS = ROOT / "tests" / "data" / "compare_pairs" / "tau2"
TOOLS = {
    "open_logs",
    "list_episodes",
    "get_episode",
    "get_step",
    "find",
    "replay",
    "compare",
    "mismatch_groups",
    "export_report",
}


@asynccontextmanager
async def server(tmp_path: Path, *flags: str, env: dict[str, str] | None = None) -> AsyncIterator[Client]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "replay_tui", "mcp", "--runs-dir", str(tmp_path / "runs"), *flags],
        env=env,
        cwd=str(tmp_path),
    )
    async with Client(params) as client:
        yield client


shared_loop = pytest.mark.asyncio(loop_scope="module")
"""For the tests of a shared server: they run in the module's event loop, where its client lives."""


@dataclass(frozen=True)
class Served:
    """A server shared by the module's tests, its client and the folder it runs in (its runs under
    ``folder / "runs"``)."""

    client: Client
    folder: Path


async def _shared(folder: Path, *flags: str) -> AsyncIterator[Served]:
    """One server for the module: held open by a task of its own, since the SDK's client must be left
    in the task it was entered in (a fixture's setup and teardown run in different tasks)."""
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def hold() -> None:
        try:
            async with server(folder, *flags) as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = asyncio.create_task(hold())
    try:
        yield Served(await ready, folder)
    finally:
        stop.set()
        await holder


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    """A server with the default flags."""
    async for served in _shared(tmp_path_factory.mktemp("mcp-plain")):
        yield served


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def annotating(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    """A server with the annotation tools, reports under ``folder / "out"`` and pages of 10 rows."""
    folder = tmp_path_factory.mktemp("mcp-annotating")
    flags = ("--allow-annotate", "--out-dir", str(folder / "out"), "--page-size", "10")
    async for served in _shared(folder, *flags):
        yield served


async def every_row(client: Client, **arguments: Any) -> list[dict[str, Any]]:
    """The rows of every page of ``list_episodes``."""
    page = await call(client, "list_episodes", **arguments)
    rows = list(page["episodes"])
    while page["next_cursor"] is not None:
        page = await call(client, "list_episodes", **arguments, cursor=page["next_cursor"])
        rows.extend(page["episodes"])
    assert len(rows) == page["total"]
    return rows


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def error(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return " ".join(getattr(part, "text", "") for part in result.content)


def cli_json(tmp_path: Path, name: str, *argv: str) -> dict[str, Any]:
    report = tmp_path / name
    assert main([*argv, "--report", str(report)]) in (0, 1)
    return orjson.loads(report.read_bytes())


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@shared_loop
async def test_tools_are_listed_with_schemas(plain: Served) -> None:
    client = plain.client
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
    templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
    assert set(tools) == TOOLS  # tag_step and note only with --allow-annotate
    assert tools["get_step"].input_schema["required"] == ["episode_id", "step"]
    assert "episodes" in tools["list_episodes"].output_schema["properties"]
    read_only = {name for name, tool in tools.items() if tool.annotations and tool.annotations.read_only_hint}
    assert read_only == TOOLS - {"replay", "export_report"}
    assert prompts == ["triage_failures"]
    assert templates == ["replay://runs/{run_id}"]


@shared_loop
async def test_read_tools_open_list_get_find(annotating: Served) -> None:
    client = annotating.client  # pages of 10 rows
    opened = await call(client, "open_logs", paths=[str(EXAMPLE), str(TAU2)])
    failed = await call(client, "list_episodes", outcome="failed")
    pages = [failed]
    while pages[-1]["next_cursor"] is not None:
        pages.append(await call(client, "list_episodes", outcome="failed", cursor=pages[-1]["next_cursor"]))
    tau2 = await call(client, "list_episodes", text="", sort="order", cursor="100")
    episode = await call(client, "get_episode", episode_id=failed["episodes"][0]["episode_id"])
    step = await call(client, "get_step", episode_id=episode["episode_id"], step=0)
    tau2_episode = await call(client, "get_episode", episode_id=tau2["episodes"][0]["episode_id"])
    tau2_step = await call(client, "get_step", episode_id=tau2_episode["episode_id"], step=1, fields=["action"])
    found = await call(client, "find", text="hairpiece")
    assert [(f["format"], f["episodes"]) for f in opened["files"]] == [("webshop-demos", 100), ("tau2", 3)]
    assert opened["episodes"] == 103 and opened["problems"] == []
    demos = orjson.loads(EXAMPLE.read_bytes())
    expected_failed = [str(d["session_id"]) for d in demos if d.get("success") is False]
    listed = [row["episode_id"] for page in pages for row in page["episodes"]]
    assert len(pages) > 1 and all(len(page["episodes"]) <= 10 for page in pages)
    assert listed == expected_failed and failed["total"] == len(expected_failed)
    assert all(row["outcome"] == "failed" for row in failed["episodes"])
    first = next(d for d in demos if str(d["session_id"]) == episode["episode_id"])
    assert episode["task"] == first["instruction"] and not episode["replayed"]
    assert step["fields"]["observation"].startswith(first["trajectory"][0]["observation_before_llm"][:100])
    assert [row["log_id"] is not None for row in tau2["episodes"]] == [True, True, True]
    assert set(tau2_step["fields"]) <= {"action"}
    assert found["hits"] and all(hit["snippet"] for hit in found["hits"])
    assert any(hit["field"] == "task" for hit in found["hits"])


@shared_loop
async def test_episodes_say_why_their_task_ended(plain: Served) -> None:
    """The log's outcome beside the score (issue 30): its reason, and the reference actions missed."""
    client = plain.client
    await call(client, "open_logs", paths=[str(TAU2)])
    listed = await call(client, "list_episodes", sort="order")
    episode = await call(client, "get_episode", episode_id=listed["episodes"][0]["episode_id"])
    assert [row["outcome_reason"] for row in listed["episodes"]] == ["user_stop"] * 3
    assert episode["outcome_reason"] == "user_stop" and episode["missed_expected"] == []


@shared_loop
async def test_list_episodes_filters_on_the_four_outcome_kinds(plain: Served) -> None:
    """succeeded, failed, errored, unknown: the words every report counts outcomes in (issue 30)."""
    client = plain.client
    await call(client, "open_logs", paths=[str(EXAMPLE), str(OPENHANDS)])
    every = await every_row(client)
    by_kind = {kind: await every_row(client, outcome=kind) for kind in OUTCOME_KINDS}
    errored = await call(client, "get_episode", episode_id=by_kind["errored"][0]["episode_id"])
    demos = orjson.loads(EXAMPLE.read_bytes())
    assert sum(len(rows) for rows in by_kind.values()) == len(every) == len(demos) + 3
    for kind, rows in by_kind.items():
        assert {row["outcome"] for row in rows} <= {kind}
        assert [row["episode_id"] for row in rows] == [row["episode_id"] for row in every if row["outcome"] == kind]
    succeeded = [str(d["session_id"]) for d in demos if d.get("success") is True]
    assert [row["episode_id"] for row in by_kind["succeeded"]] == succeeded
    assert len(by_kind["errored"]) == 1 and len(by_kind["unknown"]) == 2
    assert errored["outcome"] == "errored" and errored["outcome_reason"]


@shared_loop
async def test_replay_and_compare_answer_as_the_cli_does(plain: Served, tmp_path: Path) -> None:
    sessions = ["0", "1", "2", "3", "4", "5", "6", "7"]
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    client = plain.client
    await call(client, "open_logs", paths=[str(EXAMPLE)])
    result = await client.call_tool(
        "replay", {"policy": "heuristic", "episodes": sessions}, progress_callback=on_progress
    )
    assert not result.is_error, result.content
    heuristic = result.structured_content
    assert heuristic is not None
    stub = await call(client, "replay", policy="stub", episodes=sessions)
    compared = await call(client, "compare", run_or_log_a=stub["run_id"], run_or_log_b=heuristic["run_id"])
    groups = await call(client, "mismatch_groups")
    listed = await call(client, "list_episodes", mismatched=True)
    judged = await call(client, "get_episode", episode_id="0")
    assert progress[-1] == (len(sessions), len(sessions)) and len(progress) == len(sessions)
    argv = ["replay", "--demos", str(EXAMPLE), "--mode", "heuristic", "--sessions", "0-7", "--no-save-run"]
    cli = cli_json(tmp_path, "h.json", *argv)
    for key in ("episodes_run", "episodes_matched", "total_steps", "total_matched", "overall_accuracy"):
        assert heuristic[key] == cli[key], key
    assert heuristic["accuracy_by_state"] == cli["accuracy_by_state"]
    assert heuristic["failed_episodes"] == [str(e["session_id"]) for e in cli["episodes"] if e["mismatches"]]
    assert groups["run_id"] == stub["run_id"]  # the last replay
    assert {row["episode_id"] for row in listed["episodes"]} <= set(sessions)
    assert judged["replayed"] and any(step["verdict"] for step in judged["steps"])
    runs = sorted((plain.folder / "runs").rglob("*.json"))
    by_id = {path.stem: path for path in runs}
    assert set(by_id) >= {stub["run_id"], heuristic["run_id"]}
    cli_compare = cli_json(tmp_path, "c.json", "compare", str(by_id[stub["run_id"]]), str(by_id[heuristic["run_id"]]))
    assert compared["kind"] == "runs" and compared["logs"] is None
    assert compared["runs"]["flips"] == cli_compare["flips"]
    assert compared["runs"]["episode_flips"] == cli_compare["episode_flips"]
    assert compared["runs"]["accuracy_b"] == cli_compare["overall"]["b"]["rate"]


@shared_loop
async def test_compare_two_logs_answers_as_the_cli_does(plain: Served, tmp_path: Path) -> None:
    """Two logs of agents' own runs of the same tasks are paired by task, as ``compare LOG_A LOG_B``
    pairs them: its JSON report's summary, unpaired keys and regressed tasks."""
    pair = sorted(PAIRS.glob("pair3_*"))
    client = plain.client
    compared = await call(client, "compare", run_or_log_a=str(pair[0]), run_or_log_b=str(pair[1]))
    await call(client, "open_logs", paths=[str(EXAMPLE)])
    run = await call(client, "replay", policy="stub", episodes=["0"])
    mixed = await error(client, "compare", run_or_log_a=run["run_id"], run_or_log_b=str(pair[1]))
    foreign = await error(client, "compare", run_or_log_a=str(pair[0]), run_or_log_b=str(TAU2))
    cli = cli_json(tmp_path, "logs.json", "compare", str(pair[0]), str(pair[1]))
    assert compared["kind"] == "logs" and compared["runs"] is None
    logs = compared["logs"]
    assert logs["summary"] == cli["summary"]
    assert {key: logs["unpaired"][key] for key in ("a_only", "b_only")} == cli["unpaired"]
    assert logs["unpaired"]["b_only"] and logs["formats_a"] == ["tau2"]
    assert logs["regressions"] == [task for task in cli["tasks"] if task["change"] == "regressed"]
    assert logs["regressions"] and all(task["first_divergence"] for task in logs["regressions"])
    assert compared["headline"].startswith("5 paired tasks")
    assert "run_or_log_b" in mixed and "two runs or two logs" in mixed
    assert "share no task key" in foreign


@shared_loop
async def test_export_writes_only_under_out_dir(annotating: Served) -> None:
    out = annotating.folder / "out"  # the server's --out-dir
    outside = annotating.folder / "elsewhere"
    outside.mkdir()
    log = out / "demos.json"  # a log inside the output folder is still not an output
    log.write_bytes(EXAMPLE.read_bytes())
    client = annotating.client
    await call(client, "open_logs", paths=[str(log)])
    run = await call(client, "replay", policy="heuristic", episodes=["0", "1"])
    out.joinpath("escape").symlink_to(outside)
    written = await call(client, "export_report", run=run["run_id"], format="md", path="report.md")
    refused = [
        await error(client, "export_report", run=run["run_id"], format="json", path=str(outside / "r.json")),
        await error(client, "export_report", run=run["run_id"], format="json", path="../elsewhere/r.json"),
        await error(client, "export_report", run=run["run_id"], format="json", path="escape/r.json"),
    ]
    clash = await error(client, "export_report", run=run["run_id"], format="json", path="demos.json")
    resource = await client.read_resource(f"replay://runs/{run['run_id']}")
    assert Path(written["path"]) == (out / "report.md").resolve() and (out / "report.md").stat().st_size > 0
    assert all("path:" in message and "outside the output folder" in message for message in refused)
    assert list(outside.iterdir()) == []
    assert "path:" in clash and log.read_bytes() == EXAMPLE.read_bytes()
    report = orjson.loads(resource.contents[0].text)  # type: ignore[union-attr]
    assert report["episodes_run"] == 2 and report["episodes"][0]["steps"]


async def test_bad_calls_are_tool_errors_and_the_server_keeps_answering(tmp_path: Path) -> None:
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("list_episodes", {}, "open_logs"),
        ("open_logs", {"paths": [str(tmp_path / "missing.json")]}, "paths"),
        ("open_logs", {"paths": []}, "paths"),
    ]
    async with server(tmp_path) as client:
        for tool, arguments, named in bad:
            assert named in await error(client, tool, **arguments)
        await call(client, "open_logs", paths=[str(EXAMPLE)])
        malformed: list[tuple[str, dict[str, Any], str]] = [
            ("get_episode", {"episode_id": "nope"}, "episode_id"),
            ("get_step", {"episode_id": "0", "step": 999}, "step"),
            ("get_step", {"episode_id": "0", "step": 0, "fields": ["secrets"]}, "fields"),
            ("list_episodes", {"cursor": "abc"}, "cursor"),
            ("find", {"text": "  "}, "text"),
            ("replay", {"policy": "os:system"}, "--allow-policy-module"),
            ("replay", {"policy": "llm", "model": "gpt"}, "--allow-llm"),
            ("replay", {"policy": "nonsense"}, "policy"),
            ("replay", {"policy": "heuristic", "match": "fuzzy"}, "match"),
            ("replay", {"policy": "heuristic", "episodes": ["999999"]}, "episode_id"),
            ("compare", {"run_or_log_a": "no-such-run", "run_or_log_b": "no-such-run"}, "run_or_log_a"),
            ("compare", {"run_or_log_a": str(EXAMPLE), "run_or_log_b": "no-such-run"}, "run_or_log_b"),
            ("mismatch_groups", {}, "run"),
            ("export_report", {"run": "x", "format": "pdf", "path": "r.pdf"}, "format"),
            ("export_report", {"run": "x", "format": "md", "path": "r.md"}, "--out-dir"),
            ("get_step", {"episode_id": "0", "step": "zero"}, "step"),
            ("get_step", {"episode_id": "0"}, "step"),
            ("list_episodes", {"outcome": "maybe"}, "outcome"),
        ]
        await call(client, "open_logs", paths=[str(EXAMPLE), str(TAU2)])
        assert "WebShop only" in await error(client, "replay", policy="heuristic", episodes=["0", "101"])
        for index in range(50):
            tool, arguments, named = malformed[index % len(malformed)]
            assert named in await error(client, tool, **arguments), (tool, arguments)
        assert (await call(client, "get_episode", episode_id="0"))["episode_id"] == "0"


async def test_no_tool_returns_more_than_max_chars(tmp_path: Path) -> None:
    limit = 200
    deep = tmp_path / ("d" * 120) / ("e" * 100)
    deep.mkdir(parents=True)
    (deep / "demos.json").write_bytes(EXAMPLE.read_bytes())
    flags = ("--max-chars", str(limit), "--out-dir", str(tmp_path / "out"), "--allow-annotate")
    pair = sorted(PAIRS.glob("pair3_*"))
    async with server(tmp_path, *flags) as client:
        answers = [await call(client, "open_logs", paths=[str(deep / "demos.json"), str(TAU2)])]
        answers.append(await call(client, "list_episodes"))
        answers.append(await call(client, "get_episode", episode_id="0"))
        for step in range(3):
            answers.append(await call(client, "get_step", episode_id="0", step=step))
            answers.append(await call(client, "get_step", episode_id="100", step=step))
        answers.append(await call(client, "find", text="a"))
        run = await call(client, "replay", policy="heuristic", episodes=["0", "1", "2"])
        answers.append(run)
        answers.append(await call(client, "get_step", episode_id="0", step=0))
        answers.append(await call(client, "mismatch_groups"))
        answers.append(await call(client, "compare", run_or_log_a=run["run_id"], run_or_log_b=run["run_id"]))
        answers.append(await call(client, "export_report", run=run["run_id"], format="md", path="r.md"))
        answers.append(await call(client, "compare", run_or_log_a=str(pair[0]), run_or_log_b=str(pair[1])))
        answers.append(await call(client, "tag_step", episode_id="0", step=0, tag="t" * 100))
        answers.append(await call(client, "note", episode_id="0", text="a long note " * 100))
        answers.append(await call(client, "get_episode", episode_id="0"))
        answers.append(await call(client, "list_episodes", outcome="failed", tag="t" * 100))
    texts = [text for answer in answers for text in strings(answer)]
    assert max(map(len, texts)) <= limit
    assert any("… [cut: " in text for text in texts)  # long observations are cut, visibly


@shared_loop
async def test_annotations_only_when_allowed(plain: Served, annotating: Served, tmp_path: Path) -> None:
    demos = tmp_path / "demos.json"
    demos.write_bytes(EXAMPLE.read_bytes())
    names = {tool.name for tool in (await plain.client.list_tools()).tools}
    assert not names & {"tag_step", "note"}
    client = annotating.client  # --allow-annotate
    await call(client, "open_logs", paths=[str(demos)])
    tagged = await call(client, "tag_step", episode_id="3", step=0, tag="wrong\x1b[31m search")
    noted = await call(client, "note", episode_id="3", text="searched\nfor the colour")
    listed = await call(client, "list_episodes", tag="wrong search")
    episode = await call(client, "get_episode", episode_id="3")
    assert "tag" in await error(client, "tag_step", episode_id="3", tag="")
    assert "step" in await error(client, "tag_step", episode_id="3", step=99, tag="x")
    assert tagged["tags"] == ["wrong search"] and tagged["step"] is not None
    assert [row["episode_id"] for row in listed["episodes"]] == ["3"]
    assert episode["note"] == "searched\nfor the colour" and episode["steps"][0]["tags"] == tagged["tags"]
    sidecar = orjson.loads(Path(noted["sidecar"]).read_bytes())
    assert {(a["step_label"], a["note"]) for a in sidecar["annotations"]} == {
        (tagged["step"], ""),
        (None, "searched\nfor the colour"),
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def listening(process: subprocess.Popen[bytes], port: int) -> None:
    for _ in range(600):  # until it listens (a slow machine takes seconds to import)
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        await anyio.sleep(0.1)


async def test_streamable_http_on_loopback_checks_host_and_origin(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "replay_tui", "mcp", "--http", "--port", str(port), "--runs-dir", str(tmp_path)]
    process = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        await listening(process, port)
        async with Client(url) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            opened = await call(client, "open_logs", paths=[str(EXAMPLE)])
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {"accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient() as http:
            rebound = await http.post(url, json=body, headers={**headers, "host": "evil.example"})
            foreign = await http.post(url, json=body, headers={**headers, "origin": "http://evil.example"})
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert names == TOOLS and opened["episodes"] == 100
    assert rebound.status_code == 421 and foreign.status_code == 403


async def test_public_http_warns_as_serve_does_and_serves(tmp_path: Path) -> None:
    """``--public`` says on stderr, before serving, who can reach what (as ``serve --public`` does),
    and the SDK's streamable HTTP client is served."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "replay_tui", "mcp", "--http", "--public", "--port", str(port)]
    argv += ["--runs-dir", str(tmp_path), "--out-dir", str(tmp_path / "out")]
    process = subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        await listening(process, port)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    warning = " ".join(err.decode().split())
    assert names == TOOLS
    assert warning.startswith(f"warning: --public: anyone who reaches 127.0.0.1:{port} can read every log")
    assert str(tmp_path / "out") in warning and "no authentication" in warning


def test_http_refuses_a_public_host_without_public(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--http", "--host", "0.0.0.0"]) == 2
    assert "--public" in capsys.readouterr().err


def test_logs_given_at_start_that_cannot_be_read_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert "missing.json" in err and "Traceback" not in err
