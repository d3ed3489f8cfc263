"""``replay-tui convert --to atif``: ATIF → ATIF is the identity, every other format's samples become
documents that Harbor's own models accept with the calls, results and sub-agents of the log, and
outputs are checked before anything is written."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from replay_tui.cli import main
from replay_tui.formats.atif_write import base_name, schema

DATA = Path(__file__).parent.parent / "data" / "formats"
ATIF = sorted((DATA / "atif").glob("*.json"))
HARBOR = Path(__file__).parent.parent / "data" / "harbor_atif_models"


@pytest.fixture(scope="module")
def harbor() -> Iterator[Any]:
    """Harbor's ``Trajectory`` model (harbor 0.25.0's own files, the upstream reader)."""
    sys.path.insert(0, str(HARBOR))
    try:
        yield importlib.import_module("harbor.models.trajectories").Trajectory
    finally:
        sys.path.remove(str(HARBOR))
        for name in [n for n in sys.modules if n == "harbor" or n.startswith("harbor.")]:
            del sys.modules[name]


def convert(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main(["convert", "--to", "atif", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def prefix(name: str) -> str:
    """Harbor's naming of a trajectory's sub-agent files: ``<x>trajectory.json`` → ``<x>trajectory.<sub>.json``."""
    return name[: name.rfind("trajectory")]


def refs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for step in doc["steps"]:
        for result in (step.get("observation") or {}).get("results", []):
            found += result.get("subagent_trajectory_ref") or []
    return found


@pytest.mark.parametrize("path", ATIF, ids=lambda p: p.name)
def test_atif_to_atif_is_the_identity(path: Path, tmp_path: Path, capsys, harbor) -> None:
    code, _, err = convert(capsys, path, "--out", tmp_path)
    assert code == 0, err
    written = tmp_path / (base_name(path) + ".trajectory.json")
    original = json.loads(path.read_text(encoding="utf-8"))
    doc = json.loads(written.read_text(encoding="utf-8"))
    assert doc == original
    harbor.model_validate(doc)
    # every sub-agent file the original references is written beside it, the same
    for ref in refs(original):
        child = json.loads((path.parent / (prefix(path.name) + ref["trajectory_path"])).read_text())
        assert json.loads((tmp_path / (prefix(written.name) + ref["trajectory_path"])).read_text()) == child
    assert len(list(tmp_path.iterdir())) == 1 + len(refs(original))


def written_docs(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.iterdir())}


def recorded(doc: dict[str, Any]) -> tuple[int, int]:
    """Calls and results of the agent steps made from the log's steps (those with an ``extra``; the
    agent turns of a first prompt are context, not recorded decisions)."""
    steps = [s for s in doc["steps"] if s["source"] == "agent" and "extra" in s]
    calls = sum(len(s.get("tool_calls") or []) for s in steps)
    results = sum(1 for s in steps for r in (s.get("observation") or {}).get("results", []) if "content" in r)
    return calls, results


CONVERTIBLE = [
    DATA / "claude_code" / "attio-mcp-server__logs_chat__cc1.0.70.jsonl",
    DATA / "claude_code" / "openshrooly__logs_chat__cc2.1.90.jsonl",
    DATA / "codex" / "ship__rollout-2026-03-12T16-36-47-019ce3fb-1087-7980-8f92-8d0171aaea6a.jsonl",
    DATA / "codex" / "MoonMind__rollout-2025-11-13T18-21-11-019a802a-aab1-7c31-9831-d2510c7a74a2.jsonl",
    DATA / "openhands" / "sdk-v1__conv_cd945624_terminal-action",
    DATA / "openhands" / "multi_swe_bench__examples__output.jsonl",
    DATA / "otel_genai" / "openinference__agent_loop.otlp.json",
    DATA / "otel_genai" / "openinference-mastra__weatherAgentSpans.json",
    DATA / "tau2" / "2025-10-05T22-50-14.083933_airline_grok-3__slice_tasks_0_13_19.json",
    DATA / "swe_agent" / "function_calling_simple.traj",
    DATA / "webshop_human" / "20220427_1_17.jsonl",
]


@pytest.mark.parametrize("path", CONVERTIBLE, ids=lambda p: p.name)
def test_a_log_becomes_valid_atif_with_its_calls_results_and_subagents(
    path: Path, tmp_path: Path, capsys, harbor
) -> None:
    code, _, err = convert(capsys, path, "--out", tmp_path)
    assert code == 0, err
    main(["formats", "--json", str(path)])
    (census,) = json.loads(capsys.readouterr().out)
    docs = written_docs(tmp_path)
    validator = jsonschema.Draft202012Validator(schema())
    for name, doc in docs.items():
        assert list(validator.iter_errors(doc)) == [], name
        harbor.model_validate(doc)
        assert doc["schema_version"] == "ATIF-v1.7" and doc["extra"]["source_format"] == census["format"]
    calls = sum(recorded(doc)[0] for doc in docs.values())
    assert calls == census["calls"]
    # sub-agents: one file each, named by exactly one reference of its parent
    referenced = [ref["trajectory_path"] for doc in docs.values() for ref in refs(doc)]
    assert sorted(referenced) == sorted(n for n in docs if ".subagent-" in n)
    assert len(referenced) == census["subagents"]
    assert len(docs) == census["episodes"]
    for episode in census["episode_list"]:
        doc = next(d for d in docs.values() if d["session_id"] == episode["id"])
        if episode["outcome"]["kind"] != "unknown":
            assert doc["extra"]["outcome"]["kind"] == episode["outcome"]["kind"]


def test_the_tool_calls_keep_their_ids_arguments_and_results(tmp_path: Path, capsys) -> None:
    path = DATA / "claude_code" / "big3__logs_chat__cc2.0.49.jsonl"
    assert convert(capsys, path, "--out", tmp_path)[0] == 0
    (doc,) = written_docs(tmp_path).values()
    first_use = None
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        content = (record.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                first_use = first_use or block
    assert first_use is not None
    step = next(s for s in doc["steps"] if any(c["tool_call_id"] == first_use["id"] for c in s.get("tool_calls", [])))
    (call,) = [c for c in step["tool_calls"] if c["tool_call_id"] == first_use["id"]]
    assert call["function_name"] == first_use["name"] and call["arguments"] == first_use["input"]
    (result,) = [r for r in step["observation"]["results"] if r.get("source_call_id") == first_use["id"]]
    assert result["content"]
    assert doc["steps"][0]["source"] == "user"


def test_outputs_are_checked_before_anything_is_written(tmp_path: Path, capsys) -> None:
    session = tmp_path / "session.jsonl"
    session.write_bytes((DATA / "claude_code" / "big3__logs_chat__cc2.0.49.jsonl").read_bytes())
    before = session.read_bytes()
    code, _, err = convert(capsys, session, "-o", session)
    assert code == 2 and "one of the inputs" in err and session.read_bytes() == before
    out = tmp_path / "out"
    assert convert(capsys, session, "--out", out)[0] == 0
    written = out / "session.trajectory.json"
    stamp = written.stat().st_mtime_ns
    code, _, err = convert(capsys, session, "--out", out)
    assert code == 2 and "--force" in err and written.stat().st_mtime_ns == stamp
    assert convert(capsys, session, "--out", out, "--force")[0] == 0
    code, _, err = convert(capsys, session, session, "-o", tmp_path / "one.json")
    assert code == 2 and "-o FILE" in err and err.count("\n") == 1


def test_what_cannot_be_converted_is_named_and_the_rest_is_written(tmp_path: Path, capsys) -> None:
    doc = json.loads((DATA / "atif" / "terminus_2__hello-world-timeout.trajectory.json").read_text())
    doc["steps"][1]["tool_calls"][0]["function_name"] = 7
    bad = tmp_path / "bad.trajectory.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    crashed = DATA / "openai_chat" / "tau_bench_crashed_run.json"
    good = DATA / "atif" / "terminus_2__hello-world.trajectory__ATIF-v1.3.json"
    out = tmp_path / "out"
    code, _, err = convert(capsys, bad, crashed, good, "--out", out)
    assert code == 2
    lines = err.splitlines()
    assert any("bad.trajectory.json" in line and "steps[1].tool_calls[0].function_name" in line for line in lines)
    assert any("tau_bench_crashed_run.json: episode task-0-trial-0: field steps" in line for line in lines)
    assert [p.name for p in out.iterdir()] == ["terminus_2__hello-world.trajectory__ATIF-v1.3.trajectory.json"]


def test_a_document_that_breaks_the_schema_is_refused() -> None:
    from replay_tui.formats.atif_write import check

    doc = json.loads((DATA / "atif" / "terminus_2__hello-world.trajectory__ATIF-v1.2.json").read_text())
    assert check(doc) == []
    doc["steps"][0]["tool_calls"] = []  # a system step with calls
    doc["steps"][2]["step_id"] = 9
    assert [field for field, _ in check(doc)] == ["steps[0].tool_calls"]
    del doc["steps"][0]["tool_calls"]
    assert [field for field, _ in check(doc)] == ["steps[2].step_id"]


def test_the_parallel_calls_of_one_response_are_one_agent_step(tmp_path: Path, capsys) -> None:
    """Claude Code logs a response's calls as records of one ``message.id``; ATIF holds one LLM
    inference per step, so they are one agent step with every call and result."""
    path = DATA / "claude_code" / "big3__logs_chat__cc2.0.49.jsonl"
    responses: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message") or {}
        if record.get("type") == "assistant" and not record.get("isSidechain"):
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    responses.setdefault(message["id"], []).append(block["id"])
    parallel = [ids for ids in responses.values() if len(ids) > 1]
    assert parallel
    assert convert(capsys, path, "--out", tmp_path)[0] == 0
    (doc,) = written_docs(tmp_path).values()
    steps = [[c["tool_call_id"] for c in s.get("tool_calls", [])] for s in doc["steps"] if s["source"] == "agent"]
    for ids in parallel:
        assert ids in steps


def test_codex_sub_agents_become_files_named_by_the_spawn_calls_and_read_back(tmp_path: Path, capsys) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for path in sorted((DATA / "codex").glob("ship__rollout-*.jsonl")):
        (sessions / path.name.removeprefix("ship__")).write_bytes(path.read_bytes())
    out = tmp_path / "out"
    assert convert(capsys, sessions, "--out", out)[0] == 0
    main(["formats", "--json", str(sessions)])
    (before,) = json.loads(capsys.readouterr().out)
    assert before["subagents"] == 3
    (parent,) = [p for p in out.iterdir() if p.name.endswith(".trajectory.json")]
    doc = json.loads(parent.read_text(encoding="utf-8"))
    spawned = {
        result["source_call_id"]: ref
        for step in doc["steps"]
        for call in step.get("tool_calls", [])
        for result in (step.get("observation") or {}).get("results", [])
        if call["function_name"] == "spawn_agent" and result.get("source_call_id") == call["tool_call_id"]
        for ref in result.get("subagent_trajectory_ref", [])
    }
    assert len(spawned) == 3 and all((out / ref["trajectory_path"]).is_file() for ref in spawned.values())
    # replay_tui's own ATIF reader follows the references: the same episodes, calls and sub-agents
    main(["formats", "--json", str(parent)])
    (after,) = json.loads(capsys.readouterr().out)
    assert after["format"] == "atif"
    assert {k: after[k] for k in ("episodes", "calls", "subagents")} == {
        k: before[k] for k in ("episodes", "calls", "subagents")
    }


def test_arguments_nested_past_what_json_writers_take_are_a_named_error(tmp_path: Path, capsys) -> None:
    doc = json.loads((DATA / "atif" / "terminus_2__hello-world-timeout.trajectory.json").read_text())
    deep: Any = "bottom"
    for _ in range(250):
        deep = {"a": deep}
    doc["steps"][1]["tool_calls"][0]["arguments"] = {"nested": deep}
    deep_log = tmp_path / "deep.trajectory.json"
    deep_log.write_text(json.dumps(doc), encoding="utf-8")
    good = DATA / "atif" / "terminus_2__hello-world.trajectory__ATIF-v1.3.json"
    out = tmp_path / "out"
    code, _, err = convert(capsys, deep_log, good, "--out", out)
    assert code == 2 and "deep.trajectory.json: episode" in err and "Traceback" not in err
    assert [p.name for p in out.iterdir()] == ["terminus_2__hello-world.trajectory__ATIF-v1.3.trajectory.json"]


def test_claude_code_sidechains_are_referenced_by_the_task_calls_that_ran_them(tmp_path: Path, capsys) -> None:
    path = DATA / "claude_code" / "attio-mcp-server__logs_chat__cc1.0.70.jsonl"
    assert convert(capsys, path, "--out", tmp_path)[0] == 0
    doc = json.loads((tmp_path / "attio-mcp-server__logs_chat__cc1.0.70.trajectory.json").read_text())
    answered = []
    for step in doc["steps"]:
        calls = {c["tool_call_id"]: c for c in step.get("tool_calls", [])}
        for result in (step.get("observation") or {}).get("results", []):
            for ref in result.get("subagent_trajectory_ref") or []:
                assert calls[result["source_call_id"]]["function_name"] == "Task"
                child = json.loads((tmp_path / ref["trajectory_path"]).read_text())
                assert child["steps"][0]["message"] == calls[result["source_call_id"]]["arguments"]["prompt"]
                answered.append(ref["trajectory_path"])
    assert len(answered) == len(set(answered)) == 7


def test_token_counts_of_llm_spans_become_step_metrics(tmp_path: Path, capsys) -> None:
    path = DATA / "otel_genai" / "openinference__agent_loop.otlp.json"
    prompt = 0
    for resource in json.loads(path.read_text(encoding="utf-8"))["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for attribute in span["attributes"]:
                    if attribute["key"] == "llm.token_count.prompt":
                        prompt += int(attribute["value"]["intValue"])
    assert prompt and convert(capsys, path, "--out", tmp_path)[0] == 0
    docs = written_docs(tmp_path).values()
    assert sum(s.get("metrics", {}).get("prompt_tokens", 0) for d in docs for s in d["steps"]) == prompt
    assert all(d["agent"]["name"] == "otel-genai" for d in docs)


def test_inline_subagents_stay_inline(tmp_path: Path, capsys, harbor) -> None:
    """ATIF v1.7's single-file form: ``subagent_trajectories`` resolved by ``trajectory_id``."""
    child = json.loads((DATA / "atif" / "terminus_2__hello-world-timeout.trajectory.json").read_text())
    child["trajectory_id"] = "sub-1"
    doc = json.loads((DATA / "atif" / "terminus_2__hello-world.trajectory__ATIF-v1.2.json").read_text())
    doc["schema_version"] = "ATIF-v1.7"
    doc["subagent_trajectories"] = [child]
    doc["steps"][2]["observation"]["results"].append({"subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]})
    source = tmp_path / "trajectory.json"
    source.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "out"
    assert convert(capsys, source, "--out", out)[0] == 0
    (written,) = out.iterdir()
    assert json.loads(written.read_text(encoding="utf-8")) == doc
    harbor.model_validate(doc)


def test_one_file_named_with_o_and_its_sub_agents_beside_it(tmp_path: Path, capsys) -> None:
    path = DATA / "claude_code" / "attio-mcp-server__logs_chat__cc1.0.70.jsonl"
    target = tmp_path / "run" / "session.json"
    code, out, _ = convert(capsys, path, "-o", target)
    assert code == 0 and "wrote 8 ATIF files (1 log)" in out
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert sorted(ref["trajectory_path"] for ref in refs(doc)) == sorted(
        p.name for p in target.parent.iterdir() if p != target
    )
    several = DATA / "tau2" / "2025-10-05T22-50-14.083933_airline_grok-3__slice_tasks_0_13_19.json"
    code, _, err = convert(capsys, several, "-o", tmp_path / "one.json")
    assert code == 2 and "3 episodes; -o writes one: give --out DIR" in err and not (tmp_path / "one.json").exists()


def test_step_time_model_and_usage_are_written_and_read_back(tmp_path: Path, capsys, harbor) -> None:
    """A Claude Code session's typed step facts become ATIF ``timestamp``, ``model_name`` and
    ``metrics`` (schema-valid, Harbor's model accepts them) and the ATIF reader reads them back."""
    from replay_tui.episodes.model import Trajectory
    from replay_tui.formats.census import step_calls
    from replay_tui.formats.registry import reader_for

    path = DATA / "claude_code" / "big3__logs_chat__cc2.0.50.jsonl"
    (session,) = [t for t in reader_for("claude-code").read(path) if isinstance(t, Trajectory) and t.parent is None]
    assert convert(capsys, path, "--out", tmp_path)[0] == 0
    written = tmp_path / "big3__logs_chat__cc2.0.50.trajectory.json"
    doc = json.loads(written.read_text(encoding="utf-8"))
    harbor.model_validate(doc)
    jsonschema.validate(doc, schema())
    decisions = [s for s in session.steps if s.action is not None]
    agents = [s for s in doc["steps"] if s["source"] == "agent" and s.get("tool_calls")]
    by_call = {c["tool_call_id"]: s for s in agents for c in s["tool_calls"]}
    assert decisions and all(s.action is not None and s.action.id in by_call for s in decisions)
    for step in decisions:
        entry = by_call[step.action.id]  # type: ignore[union-attr]
        assert step.usage is not None and step.timestamp is not None
        assert entry["metrics"] == {
            "prompt_tokens": step.usage.input,
            "completion_tokens": step.usage.output,
            "cached_tokens": step.usage.cache_read,
        }
        assert entry["model_name"] == step.model
        assert entry["timestamp"] == step.timestamp.isoformat()
    (back,) = [t for t in reader_for("atif").read(written) if isinstance(t, Trajectory)]
    read_back = {call.id: s for s in back.steps for call in step_calls(s)}  # a response's calls: one step
    for step in decisions:
        again = read_back[step.action.id]  # type: ignore[union-attr]
        assert again.timestamp == step.timestamp and again.model == step.model
        assert again.usage is not None and step.usage is not None
        assert (again.usage.input, again.usage.output, again.usage.cache_read) == (
            step.usage.input,
            step.usage.output,
            step.usage.cache_read,
        )
