"""Teacher-forced replay of coding-agent logs (Claude Code, Codex) against a model server on
127.0.0.1: each recorded call's prompt is sent as a valid chat-completions request (every tool
message answers a call made before it), with the tools inferred from the log, and the model's
answer is judged against the recorded call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay_tui.cli import main
from replay_tui.env import replay_steps
from replay_tui.episodes.model import parse_call_text
from replay_tui.sources import open_sources
from tests.llm.scripted import Reply, ScriptedServer, tool_reply

DATA = Path(__file__).parent.parent / "data" / "formats"
SAMPLES = {
    "claude-code": DATA / "claude_code" / "openshrooly__logs_chat__cc2.1.90.jsonl",
    "codex": DATA / "codex" / "ocodex__rollout-2025-08-23T16-52-59-84b6da18-7357-4ad0-89d6-64f637ddde0d.jsonl",
}
ROLES = {"system", "developer", "user", "assistant", "tool"}


def _key(messages: list[dict[str, Any]]) -> str:
    return json.dumps([(m.get("role"), m.get("content") or "", m.get("tool_call_id")) for m in messages])


def _invalid(body: dict[str, Any]) -> str | None:
    """Why a strict chat-completions server would refuse ``body`` (None when it would not)."""
    open_calls: set[str] = set()
    for number, message in enumerate(body["messages"]):
        if message.get("role") not in ROLES:
            return f"messages[{number}]: role {message.get('role')!r}"
        for call in message.get("tool_calls") or []:
            if not call.get("id") or not call["function"]["name"]:
                return f"messages[{number}]: a tool call without an id or a name"
            json.loads(call["function"]["arguments"])
            open_calls.add(call["id"])
        if message["role"] == "tool" and message.get("tool_call_id") not in open_calls:
            return f"messages[{number}]: a tool result answering no call before it"
    names = {tool["function"]["name"] for tool in body.get("tools") or []}
    return None if names else "no tools"


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_every_recorded_call_is_asked_again_as_a_valid_request(fmt: str, tmp_path: Path, capsys) -> None:
    path = SAMPLES[fmt]
    demos = open_sources([path])
    recorded: dict[str, list[str]] = {}
    steps = 0
    for session_id in demos.session_ids:
        for step in replay_steps(demos.trajectory(session_id)):
            if step.call:
                recorded.setdefault(_key(step.recorded["messages"]), []).append(step.expected)
                steps += 1
    refused: list[str] = []

    def oracle(body: dict[str, Any]) -> Reply:
        why = _invalid(body)
        if why is not None:
            refused.append(why)
            return Reply(status=400, body={"error": {"message": why}})
        call = parse_call_text(recorded[_key(body["messages"])][0])
        assert call is not None
        return tool_reply(call.name, call.arguments)

    report = tmp_path / "report.json"
    with ScriptedServer(oracle) as server:
        argv = ["replay", "--demos", str(path), "--mode", "llm", "--base-url", server.url, "--model", "M"]
        main([*argv, "--no-cache", "--mismatch", "allow", "-q", "--report", str(report)])
        capsys.readouterr()
    assert refused == []
    data = json.loads(report.read_bytes())
    # calls of one response share its prompt, so the model is asked once per prompt and its answer
    # matches the first of them (the others are judged against the same answer)
    first_of_each = sum(1 for calls in recorded.values() for call in calls if call == calls[0])
    assert data["total_steps"] == steps and data["total_matched"] == first_of_each
    assert len(server.requests) == steps
