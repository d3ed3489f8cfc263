"""Teacher-forced LLM replay of inspect_ai logs without tool calls, with the real ``openai`` client
against a scripted OpenAI-compatible server on 127.0.0.1: each sample's recorded input is asked
again (no tools) and the new answer is judged against the recorded one by matching, never a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replay_tui.cli import main
from replay_tui.env import replay_steps
from replay_tui.sources import open_sources
from tests.llm.scripted import Reply, ScriptedServer, completion

DATA = Path(__file__).parent.parent / "data" / "formats" / "inspect_ai"
CHOICE = DATA / "answers_choice.eval"
QA = DATA / "answers_qa.eval"


def recorded(path: Path) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """The recorded answer and prompt of each sample, by the prompt's last message."""
    demos = open_sources([path])
    found = {}
    for session_id in demos.session_ids:
        (step,) = replay_steps(demos.trajectory(session_id))
        found[step.recorded["messages"][-1]["content"]] = (step.expected, step.recorded["messages"])
    return found


def run(path: Path, answers: dict[str, str], tmp_path: Path, *flags: str) -> tuple[int, dict[str, Any], list[Any]]:
    def script(body: dict[str, Any]) -> Reply:
        return Reply(body=completion(content=answers[body["messages"][-1]["content"]]))

    report = tmp_path / f"report{len(list(tmp_path.iterdir()))}.json"
    with ScriptedServer(script) as server:
        code = main(
            [
                "replay", "--demos", str(path), "--mode", "llm", "--base-url", server.url, "--model", "M",
                "--no-cache", "--no-save-run", "--report", str(report), "-q", *flags,
            ]
        )  # fmt: skip
        requests = list(server.requests)
    return code, json.loads(report.read_bytes()), requests


def test_each_sample_is_asked_again_with_its_input_and_no_tools(tmp_path: Path, capsys) -> None:
    steps = recorded(CHOICE)
    answers = {key: expected for key, (expected, _) in steps.items()}
    code, report, requests = run(CHOICE, answers, tmp_path)
    capsys.readouterr()
    assert code == 0 and report["total_steps"] == report["total_matched"] == 2
    assert len(requests) == 2
    for body in requests:
        assert "tools" not in body and "tool_choice" not in body
        assert body["messages"] == steps[body["messages"][-1]["content"]][1]  # the recorded input, as sent


def test_a_new_answer_is_judged_exactly_or_by_the_declared_type(tmp_path: Path, capsys) -> None:
    steps = recorded(CHOICE)
    # one answer the same letter in other words, one another letter
    capital = next(k for k in steps if "France" in k)
    planet = next(k for k in steps if "planet" in k)
    answers = {capital: "Paris it is.\nANSWER: b", planet: "ANSWER: C"}
    code, report, _ = run(CHOICE, answers, tmp_path)
    capsys.readouterr()
    mismatches = [m for e in report["episodes"] for m in e["mismatches"]]
    assert code == 1 and report["total_matched"] == 0 and len(mismatches) == 2  # exact: both differ
    code, report, _ = run(CHOICE, answers, tmp_path, "--match", "answer=typed")
    capsys.readouterr()
    (same,) = [m for e in report["episodes"] for m in e["equivalents"]]
    assert (same["predicted"], same["reason"]) == ("Paris it is.\nANSWER: b", "same answer read as choice B")
    (other,) = [m for e in report["episodes"] for m in e["mismatches"]]
    assert other["predicted"] == "ANSWER: C"
    assert other["reason"] == "answer differs as a choice: expected choice A, got choice C"
    assert code == 1


def test_numbers_are_read_as_numbers_where_the_scorer_is_numeric(tmp_path: Path, capsys) -> None:
    steps = recorded(QA)
    answers = {key: f"It is {expected.split()[-1]}.0" for key, (expected, _) in steps.items()}
    code, report, _ = run(QA, answers, tmp_path, "--match", "typed")
    capsys.readouterr()
    assert code == 0 and report["total_equivalent"] == 3
    assert {s["reason"] for e in report["episodes"] for s in e["equivalents"]} == {
        "same answer read as number 4.0", "same answer read as number 10.0", "same answer read as number 8.0"
    }  # fmt: skip
