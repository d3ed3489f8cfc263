"""Claude Code session transcripts: real sessions (1.0.70–2.1.90) read into trajectories whose counts
match an independent count of the records, sub-agents as child episodes, errors and compactions kept."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from replay_tui.cli import main
from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import detect, read_trajectories, reader_for

DATA = Path(__file__).parent.parent / "data" / "formats" / "claude_code"
SAMPLES = sorted(DATA.glob("*.jsonl"))
READER = reader_for("claude-code")
ATTIO = DATA / "attio-mcp-server__logs_chat__cc1.0.70.jsonl"
LLM_GUARD = DATA / "llm-guard__logs_chat__cc1.0.72.jsonl"
BIG3 = DATA / "big3__logs_chat__cc2.0.49.jsonl"
WEBAPP = DATA / "openshrooly__webapp_logs_chat__cc2.1.89.jsonl"


def read(path: Path) -> tuple[list[Trajectory], list[LoadProblem]]:
    items = list(READER.read(path))
    return [i for i in items if isinstance(i, Trajectory)], [i for i in items if isinstance(i, LoadProblem)]


def spec_count(path: Path) -> dict[str, int]:
    """Counted from the format as documented, record by record (not with the reader's code)."""
    counts = dict(sessions=0, messages=0, calls=0, results=0, subagents=0)
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") not in ("user", "assistant") or not isinstance(record.get("message"), dict):
            continue
        counts["messages"] += 1
        if record.get("isSidechain"):
            counts["subagents"] += record.get("parentUuid") is None
        else:
            counts["sessions"] = 1  # a session file is one session, whatever sessionIds it holds
        content = record["message"].get("content")
        for block in content if isinstance(content, list) else []:
            counts["calls"] += block.get("type") == "tool_use"
            counts["results"] += block.get("type") == "tool_result"
    return counts


def reader_count(trajectories: list[Trajectory]) -> dict[str, int]:
    return dict(
        sessions=sum(1 for t in trajectories if t.parent is None),
        messages=sum(t.metadata["message_records"] for t in trajectories),
        calls=sum(t.recorded_calls for t in trajectories),
        results=sum(1 for t in trajectories for s in t.steps if s.tool_result is not None),
        subagents=sum(1 for t in trajectories if t.parent is not None),
    )


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_session_reads_with_the_counts_of_the_records(path: Path) -> None:
    trajectories, problems = read(path)
    assert problems == []
    assert reader_count(trajectories) == spec_count(path)
    assert detect(path)[0].name == "claude-code"


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_a_stub_replay_matches_every_recorded_call(path: Path, capsys) -> None:
    code = main(["replay", "--demos", str(path), "--mode", "stub"])
    out = capsys.readouterr().out
    calls = spec_count(path)["calls"]
    assert code == 0
    assert re.search(rf"\b{calls} steps, {calls} matched \(100\.0%\)", " ".join(out.split())), out[-400:]


def test_inline_sidechains_are_child_episodes_linked_to_their_task_call() -> None:
    trajectories, _ = read(ATTIO)
    parent = trajectories[0]
    # one conversation under two sessionIds (a resumed session): one episode, both ids listed
    assert parent.metadata["session_ids"] == [
        "f89f86a1-90f7-4671-8587-88710a331c6f",
        "9fa9888f-c14c-4614-b154-2bcf0b029f18",
    ]
    children = [t for t in trajectories if t.parent is not None and t.parent.episode == parent.id]
    assert len(children) == 7
    spawning = {s.action.id: s for s in parent.steps if s.action is not None and s.action.name == "Task"}
    for child in children:
        assert child.parent is not None
        call = child.parent.call_id
        assert spawning[call].subagent == child.id
        assert (spawning[call].tool_result or "").startswith(f"[sub-agent episode: {child.id}]\n")
        assert child.task == spawning[call].action.arguments["prompt"]  # type: ignore[union-attr]
    # the children follow their parent, in the file's order
    assert trajectories.index(children[0]) == trajectories.index(parent) + 1


def test_a_step_holds_the_messages_before_its_response_shared_with_the_steps_before() -> None:
    trajectories, _ = read(ATTIO)
    steps = [s for s in trajectories[0].steps if s.action is not None]
    first, later = steps[0], steps[5]
    assert first.messages and later.messages[: len(first.messages)] == first.messages
    assert all(a is b for a, b in zip(first.messages, later.messages, strict=False))  # shared, not rebuilt
    assert first.action is not None and first.action.id and first.tool_result is not None
    # the response's own call is not in its prompt; the next step sees it and its result
    assert first.action.id not in {c.id for m in first.messages for c in m.tool_calls}
    following = steps[1]
    if following.messages is not first.messages and len(following.messages) > len(first.messages):
        seen = {m.tool_call_id for m in following.messages if m.role == "tool"}
        assert first.action.id in seen


def test_thinking_tool_errors_api_errors_and_compaction_stay_visible() -> None:
    trajectories, _ = read(LLM_GUARD)
    session = trajectories[0]
    assert any(s.thinking for s in session.steps if s.action is not None)
    errors = [s for s in session.steps if s.extra.get("is_error")]
    assert errors and all(s.tool_result is not None for s in errors)
    assert session.outcome.scores["tool_errors"] == len(errors)
    api = [s for s in session.steps if s.extra.get("event") == "api_error"]
    assert len(api) == 1 and api[0].action is None and session.outcome.scores["api_errors"] == 1
    compaction = [s for s in session.steps if s.extra.get("event") == "compaction"]
    assert len(compaction) == 1 and compaction[0].content.startswith("This session is being continued")
    after = session.steps[compaction[0].index + 1 :]
    first_after = next(s for s in after if s.action is not None)
    # after a compaction the model reads the summary, not the history before it
    assert first_after.messages[0].content.startswith("This session is being continued")


def test_a_session_ending_on_an_api_error_says_so() -> None:
    trajectories, _ = read(BIG3)
    assert trajectories[0].outcome.status == "api_error"


def _subagent_layout(tmp_path: Path) -> tuple[Path, str, str]:
    """The 2.1 layout (``<session>.jsonl`` + ``<session>/subagents/agent-<id>.jsonl``) from real
    records: the 2.1.89 session, and one real Task thread (1.0.70's first sidechain) as the
    transcript of the agent its first Task result names."""
    lines = WEBAPP.read_text(encoding="utf-8").splitlines()
    session = next(json.loads(line)["sessionId"] for line in lines if '"sessionId"' in line)
    agent = next(
        json.loads(line)["toolUseResult"]["agentId"]
        for line in lines
        if '"agentId"' in line and '"toolUseResult"' in line
    )
    project = tmp_path / "-home-me-project"
    (project / session / "subagents").mkdir(parents=True)
    (project / f"{session}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    thread = []
    for line in ATTIO.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("isSidechain") and (record.get("parentUuid") is None and thread):
            break
        if record.get("isSidechain"):
            thread.append(json.dumps({**record, "sessionId": session, "agentId": agent}))
    (project / session / "subagents" / f"agent-{agent}.jsonl").write_text("\n".join(thread) + "\n", encoding="utf-8")
    return project, session, agent


def test_a_2_1_subagent_file_is_a_child_episode_of_the_session_that_started_it(tmp_path: Path) -> None:
    project, session, agent = _subagent_layout(tmp_path)
    items = list(read_trajectories(project / f"{session}.jsonl"))
    trajectories = [i for i in items if isinstance(i, Trajectory)]
    assert [t.id for t in trajectories] == [session, f"{session}/agent-{agent}"]
    parent, child = trajectories
    assert child.parent is not None and child.parent.episode == session and child.recorded_calls == 18
    step = next(s for s in parent.steps if s.subagent == child.id)
    assert step.action is not None and step.action.id == child.parent.call_id
    # a project folder: one episode per session file (the sub-agent still under its parent)
    reader, found = detect(project)
    assert reader.name == "claude-code" and found.score > 0
    assert [t.id for t in reader.read(project) if isinstance(t, Trajectory)] == [session, child.id]


def test_bad_lines_are_problems_naming_the_line_and_the_rest_reads(tmp_path: Path) -> None:
    lines = BIG3.read_text(encoding="utf-8").splitlines()
    damaged = tmp_path / "session.jsonl"
    damaged.write_text(
        "\n".join([*lines[:10], "{not json", *lines[10:]]) + '\n{"type": "user", "mess', encoding="utf-8"
    )
    trajectories, problems = read(damaged)
    assert len(trajectories) == 1 and trajectories[0].recorded_calls == 26
    assert [(p.field, p.severity) for p in problems] == [("line 11", "error"), (f"line {len(lines) + 2}", "warning")]
    assert "incomplete last line" in problems[1].message


def test_other_jsonl_is_not_taken_for_a_claude_code_session(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n', encoding="utf-8")
    assert READER.sniff(chat, chat.read_bytes()).score == 0


def test_a_2_0_project_folder_replays_each_session_once_with_its_agent_files(tmp_path: Path, capsys) -> None:
    """2.0 writes ``agent-<agentId>.jsonl`` beside the sessions: the folder is read whole, so the
    sub-agent is a child of its session and not a second episode of its own."""
    lines = BIG3.read_text(encoding="utf-8").splitlines()
    session = next(json.loads(line)["sessionId"] for line in lines if '"sessionId"' in line)
    project = tmp_path / "-home-me-big3"
    project.mkdir()
    (project / f"{session}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    agent = next(
        json.loads(line)["toolUseResult"]["agentId"]
        for line in lines
        if '"agentId"' in line and '"toolUseResult"' in line
    )
    thread = [
        json.dumps({**record, "sessionId": session, "agentId": agent})
        for record in map(json.loads, LLM_GUARD.read_text(encoding="utf-8").splitlines()[:60])
        if record.get("type") in ("user", "assistant")
    ]
    (project / f"agent-{agent}.jsonl").write_text("\n".join(thread) + "\n", encoding="utf-8")
    code = main(["replay", "--demos", str(project), "--mode", "stub"])
    out = " ".join(capsys.readouterr().out.split())
    child_calls = sum(
        block.get("type") == "tool_use"
        for line in thread
        for block in (json.loads(line)["message"].get("content") or [])
        if isinstance(block, dict)
    )
    calls = spec_count(BIG3)["calls"] + child_calls
    assert code == 0 and child_calls > 0
    assert f"2 episodes, {calls} steps, {calls} matched (100.0%)" in out, out[-300:]


def test_a_session_whose_first_record_outgrows_the_head_is_still_detected(tmp_path: Path) -> None:
    lines = BIG3.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if '"parentUuid"' in line)
    record = json.loads(lines[first])
    record["message"]["content"] = "x" * 100_000  # a pasted log, longer than the sniffed head
    lines[first] = json.dumps(record, separators=(",", ":"))
    session = tmp_path / "session.jsonl"
    session.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert detect(session)[0].name == "claude-code"


def test_an_agent_id_from_the_log_never_names_a_file_outside_the_project(tmp_path: Path) -> None:
    project, session, agent = _subagent_layout(tmp_path)
    transcript = project / session / "subagents" / f"agent-{agent}.jsonl"
    transcript.rename(tmp_path / "secret.jsonl")  # outside the project folder
    (project / "agent-x").mkdir()
    path = project / f"{session}.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace(agent, "x/../../secret"), encoding="utf-8")
    trajectories = [t for t in read_trajectories(path) if isinstance(t, Trajectory)]
    assert [t.id for t in trajectories] == [session]


def test_agent_progress_records_are_the_sub_agent_when_its_file_is_absent(tmp_path: Path) -> None:
    """2.x also writes each sub-agent message into the session as a ``progress`` record
    (``data.type: agent_progress``, ``parentToolUseID`` = the Task call): the sub-agent is built from
    them, a message written twice counted once. Built from real records: the 2.0.50 session and a
    real Task thread (1.0.70's first sidechain) wrapped as its first Task's progress."""
    lines = (DATA / "big3__logs_chat__cc2.0.50.jsonl").read_text(encoding="utf-8").splitlines()
    task = next(
        block
        for line in lines
        for block in (json.loads(line).get("message") or {}).get("content") or []
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Task"
    )
    thread = []
    for line in ATTIO.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("isSidechain") and (record.get("parentUuid") is None and thread):
            break
        if record.get("isSidechain") and record.get("type") in ("user", "assistant"):
            thread.append(record)
    progress = [
        json.dumps(
            {
                "type": "progress",
                "parentToolUseID": task["id"],
                "data": {"type": "agent_progress", "agentId": "a1b2c3", "message": record},
            }
        )
        for record in [*thread, thread[-1]]  # the last one written twice
    ]
    at = next(i for i, line in enumerate(lines) if task["id"] in line and '"tool_result"' in line)
    session = tmp_path / "session.jsonl"
    session.write_text("\n".join([*lines[:at], *progress, *lines[at:]]) + "\n", encoding="utf-8")
    trajectories, problems = read(session)
    assert problems == []
    parent, child = (
        trajectories[0],
        next(t for t in trajectories if t.parent is not None and t.parent.call_id == task["id"]),
    )
    assert child.id == f"{parent.id}/agent-a1b2c3" and child.parent is not None and child.parent.episode == parent.id
    calls = sum(
        block.get("type") == "tool_use"
        for record in thread
        for block in record["message"]["content"]
        if isinstance(block, dict)
    )
    assert child.recorded_calls == calls and child.metadata["message_records"] == len(thread)
    spawning = next(s for s in parent.steps if s.action is not None and s.action.id == task["id"])
    assert spawning.subagent == child.id


# -- outcome (issue 30): each value checked against the file ------------------------------------


def _main_records(path: Path) -> list[dict]:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r.get("type") in ("user", "assistant") and not r.get("isSidechain")]


def test_a_session_ending_on_an_api_error_names_it() -> None:
    last = _main_records(BIG3)[-1]
    assert last["isApiErrorMessage"]
    text = "".join(block["text"] for block in last["message"]["content"] if block["type"] == "text")
    outcome = read(BIG3)[0][0].outcome
    assert outcome.status == "api_error" and outcome.kind == "errored"
    assert outcome.error == f"{last['error']}: {text}" and outcome.reason == outcome.error


@pytest.mark.parametrize("path", [LLM_GUARD, WEBAPP], ids=["1.0.72", "2.1.89"])
def test_the_last_response_without_a_call_is_the_answer(path: Path) -> None:
    records = [r for r in _main_records(path) if r["type"] == "assistant" and not r.get("isApiErrorMessage")]
    key = records[-1]["message"]["id"]
    blocks = [b for r in records if r["message"]["id"] == key for b in r["message"]["content"]]
    assert not any(b["type"] == "tool_use" for b in blocks)
    answer = "\n".join(b["text"] for b in blocks if b["type"] == "text")
    assert read(path)[0][0].outcome.answer == answer


def test_a_session_the_user_stopped_is_interrupted(tmp_path: Path) -> None:
    records = _main_records(LLM_GUARD)
    stop = dict(records[-1], type="user", uuid="stop-1", parentUuid=records[-1]["uuid"])
    stop["message"] = {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]}
    path = tmp_path / "session.jsonl"
    path.write_text(LLM_GUARD.read_text() + json.dumps(stop) + "\n")
    outcome = read(path)[0][0].outcome
    assert outcome.status == "interrupted" and outcome.error is None
