"""inspect_ai samples without a tool call (QA, multiple choice) replayed as one judged decision each:
the recorded reply is the expected answer, its prompt the sample's input messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.cli import main
from replay_tui.env import replay_steps
from replay_tui.episodes.model import Trajectory
from replay_tui.formats.inspect_ai import READER
from replay_tui.matching import AnswerSpec
from replay_tui.sources import open_sources, outcome_of, outcome_of_ref
from tests.formats.test_inspect_ai import POPULARITY, raw_samples

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "inspect_ai"
QA = DATA / "answers_qa.eval"
CHOICE = DATA / "answers_choice.eval"
MMLU = DATA / "mmlu-summary-choices.eval"
NO_TOOL_LOGS = [
    QA,
    CHOICE,
    DATA / "answers_unscored.eval",
    MMLU,
    POPULARITY,
    # the other shared logs whose samples make no tool call
    DATA / "log_formats.json",
    DATA / "log_read_sample.eval",
    DATA / "log_streaming.eval",
]


def samples_of(path: Path) -> dict[tuple[str, int | None], dict[str, Any]]:
    """The samples by id and epoch, read with the standard library (and zstd), not the reader."""
    return {(str(sample["id"]), sample.get("epoch")): sample for sample in raw_samples(path)[1]}


def replay(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("path", NO_TOOL_LOGS, ids=lambda p: p.name)
def test_each_sample_is_one_decision_whose_expected_action_is_the_recorded_reply(path: Path) -> None:
    samples = samples_of(path)
    demos = open_sources([path])
    assert [ref.decision_steps for ref in demos.refs] == [1] * len(samples)  # the browser counts it
    for session_id in demos.session_ids:
        episode = demos.trajectory(session_id)
        (step,) = replay_steps(episode)
        sample = samples[(str(episode.extra["sample_id"]), episode.extra.get("epoch"))]
        reply = next(m for m in reversed(sample["messages"]) if m["role"] == "assistant")
        text = reply["content"] if isinstance(reply["content"], str) else reply["content"][0]["text"]
        assert step.call and step.state == "answer" and step.expected == text
        assert isinstance(step.schema, AnswerSpec)
        assert step.schema.kind == ("choice" if sample.get("choices") else "number" if path == QA else None)
        # the prompt is the sample's input: every message before the reply
        sent = step.recorded["messages"]
        assert [m["role"] for m in sent] == [m["role"] for m in sample["messages"][:-1]]
        assert sent[-1]["content"] == episode.steps[0].observation


@pytest.mark.parametrize("path", NO_TOOL_LOGS, ids=lambda p: p.name)
def test_a_stub_replay_judges_one_decision_per_sample_and_matches_all(capsys, tmp_path: Path, path: Path) -> None:
    report = tmp_path / "report.json"
    code, out, err = replay(capsys, "replay", "--demos", str(path), "--mode", "stub", "--report", str(report), "-q")
    assert code == 0, err
    count = len(samples_of(path))
    assert f"{count} episodes, {count} steps, {count} matched (100.0%); 0 mismatches" in out
    data = json.loads(report.read_bytes())
    assert data["total_steps"] == count and data["steps_by_state"] == {"answer": count}


def test_a_log_whose_samples_hold_no_decision_exits_2_instead_of_0_percent(capsys, tmp_path: Path) -> None:
    """Before: '1 episodes, 0 steps, 0 matched (0.0%)' and exit 0."""
    sample = {
        "id": "q1",
        "epoch": 1,
        "input": "Hello?",
        "target": "hi",
        "messages": [{"role": "user", "content": "Hello?"}],
    }
    log = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "samples": [sample]}
    path = tmp_path / "unanswered.json"
    path.write_bytes(orjson.dumps(log))
    code, out, err = replay(capsys, "replay", "--demos", str(path), "--mode", "stub", "--no-save-run")
    assert code == 2 and "0.0%" not in out
    assert err.strip().splitlines() == [
        "replay-tui replay: error: unanswered.json: nothing judged: the 1 episodes replayed record no decision "
        "(a tool call, an env action or a plain answer) to compare"
    ]


def test_a_sample_with_tool_calls_keeps_its_final_reply_unjudged() -> None:
    (episode,) = [t for t in READER.read(DATA / "log_message_deduplication.eval") if isinstance(t, Trajectory)]
    assert episode.steps[-1].action is None and episode.steps[-1].answer is None
    assert episode.decisions == episode.recorded_calls == 5


def test_the_browser_rows_carry_the_outcome_before_an_episode_is_opened() -> None:
    demos = open_sources([MMLU])
    (ref,) = demos.refs
    outcome = outcome_of_ref(ref)
    # from summaries.json (no sample inflated): the scorer's answer; the completion once opened
    assert (outcome.kind, outcome.target, outcome.answer, outcome.explanation) == ("failed", "A", "C", "ANSWER: C")
    opened = outcome_of(demos.trajectory(demos.session_ids[0]))
    assert (opened.kind, opened.answer) == ("failed", "ANSWER: C")
