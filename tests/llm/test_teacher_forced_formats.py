"""Teacher-forced re-prediction of other agents' logs (openai-chat, inspect_ai, tau2) with the real
``openai`` client against a scripted OpenAI-compatible server: every recorded step's messages and
tools go to the model, its tool call is judged against the recorded one, and a second run is
served from the cache with a byte-identical report."""

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
    "openai-chat": DATA / "openai_chat" / "docent__samples__tb_airline.json",
    "tau2": DATA / "tau2" / "2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json",
    "inspect-ai": DATA / "inspect_ai" / "docent__tests_integration__ctf.json",
    "inspect-ai-eval": DATA / "inspect_ai" / "log_message_deduplication.eval",
    "atif": DATA / "atif" / "terminus_2__hello-world.trajectory__ATIF-v1.2.json",
    "openhands": DATA / "openhands" / "sdk-v1__conv_a3f2edad_three-turns",
    "openhands-v0": DATA / "openhands" / "wrong_initial_state.json",
    "otel-genai": DATA / "otel_genai" / "openinference__agent_loop.otlp.json",
}


def _key(messages: list[dict[str, Any]]) -> str:
    """What identifies a step's request: the conversation so far, by role and text."""
    return json.dumps([(m.get("role"), m.get("content") or "") for m in messages])


def _recorded(path: Path) -> list[tuple[str, dict[str, Any], Any]]:
    """(request key, recorded call text, the step) for every call step of the file, in order."""
    demos = open_sources([path])
    found = []
    for session_id in demos.session_ids:
        for step in replay_steps(demos.trajectory(session_id)):
            if step.call:
                found.append((_key(step.recorded["messages"]), step.expected, step))
    return found


class Oracle:
    """Answers each request with the recorded call of its step; ``deviate`` changes chosen steps."""

    def __init__(self, recorded: list[tuple[str, str, Any]]):
        self.by_key = {key: expected for key, expected, _ in recorded}
        self.deviate: dict[str, Reply] = {}

    def __call__(self, body: dict[str, Any]) -> Reply:
        key = _key(body["messages"])
        if key in self.deviate:
            return self.deviate[key]
        call = parse_call_text(self.by_key[key])
        assert call is not None
        return tool_reply(call.name, call.arguments)


def _changed_string_argument(expected: str) -> tuple[str, dict[str, Any]] | None:
    call = parse_call_text(expected)
    if call is None:
        return None
    for name, value in call.arguments.items():
        if isinstance(value, str) and value:
            return name, {**call.arguments, name: value + "-x"}
    return None


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_teacher_forced_llm_replay_judges_typed_arguments_and_reruns_from_the_cache(
    fmt: str, tmp_path: Path, capsys
) -> None:
    path = SAMPLES[fmt]
    if not path.exists():
        pytest.skip(f"{path.name} is not bundled")
    recorded = _recorded(path)
    assert len(recorded) >= 3
    oracle = Oracle(recorded)
    # one step answered with a changed string argument, one with another tool, the rest as recorded
    changed = next((r for r in recorded if _changed_string_argument(r[1])), None)
    assert changed is not None
    argument, arguments = _changed_string_argument(changed[1])  # type: ignore[misc]
    oracle.deviate[changed[0]] = tool_reply(parse_call_text(changed[1]).name, arguments)  # type: ignore[union-attr]
    other = next(r for r in recorded if r[0] != changed[0])
    oracle.deviate[other[0]] = tool_reply("no_such_tool", {})

    reports = [tmp_path / "first.json", tmp_path / "second.json"]
    with ScriptedServer(oracle) as server:
        argv = [
            "replay",
            "--demos",
            str(path),
            "--mode",
            "llm",
            "--base-url",
            server.url,
            "--model",
            "M",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--mismatch",
            "allow",
            "-q",
        ]
        code = main([*argv, "--report", str(reports[0])])
        capsys.readouterr()
        sent = len(server.requests)
        code_again = main([*argv, "--report", str(reports[1])])
        capsys.readouterr()
        assert len(server.requests) == sent, "the second run must come from the cache"
    assert code == code_again == 1
    assert sent == len({key for key, _, _ in recorded})  # a request asked twice is answered by the cache
    first = server.requests[0]
    assert first["model"] == "M" and first["tools"] and first["messages"] == recorded[0][2].recorded["messages"]
    assert reports[0].read_bytes() == reports[1].read_bytes()

    report = json.loads(reports[0].read_bytes())
    deviating = sum(1 for key, _, _ in recorded if key in oracle.deviate)
    assert report["total_steps"] == len(recorded) and report["total_matched"] == len(recorded) - deviating
    mismatches = [m for e in report["episodes"] for m in e["mismatches"]]
    assert len(mismatches) == deviating
    wrong_argument = next(m for m in mismatches if not m["predicted"].startswith("no_such_tool"))
    assert wrong_argument["reason"].startswith(f"arguments.{argument}")
    wrong_tool = next(m for m in mismatches if m["predicted"].startswith("no_such_tool"))
    assert "tool differs" in wrong_tool["reason"]
    assert all(e["episode_id"] for e in report["episodes"])
