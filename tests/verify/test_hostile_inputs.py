"""``verify`` on hostile input: every case is a one-line error (exit 2) or a verdict, never a
traceback, and a catastrophic pattern cannot hold the evaluator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.verify.conftest import TASKS_FILE, same
from tests.verify.test_cli import run

RETRIEVE = '{{"task_id": 0, "response": {{"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": [{}]}}}}\n'


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (RETRIEVE.format("9" * 5000), "Exceeds the limit"),
        (RETRIEVE.format("1e400"), "out of range"),
        (RETRIEVE.format("NaN"), "NaN is not a number"),
        ('{"task_id": 0, "response": ' + "[" * 5000 + "]" * 5000 + "}\n", "nested more than"),
        ('{"task_id": ' + "9" * 3000 + ', "response": "x"}\n', "task_id must be an integer"),
    ],
)
def test_hostile_answers_are_one_line_errors(tmp_path: Path, content: str, reason: str) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(content)
    code, _, err = run(["--tasks", str(TASKS_FILE), "--answers", str(answers), "--report", str(tmp_path / "r.json")])
    assert code == 2 and reason in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()


def test_a_lone_surrogate_is_judged_and_written_back_as_an_escape(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(RETRIEVE.format('"\\ud800x"'))
    code, _, err = run(["--tasks", str(TASKS_FILE), "--answers", str(answers), "--report", str(tmp_path / "r.json")])
    assert (code, err) == (1, "")
    text = (tmp_path / "r.json").read_text(encoding="utf-8")
    assert "\\ud800x" in text and json.loads(text)["summary"]["overall"]["failure"] == 1


def test_a_report_that_cannot_be_written_fails_before_judging(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(RETRIEVE.format('"x"'))
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run(["--tasks", str(TASKS_FILE), "--answers", str(answers), "--report", str(blocker / "r.json")])
    assert code == 2 and "cannot write there" in err and err.count("\n") == 1


def test_a_catastrophic_pattern_is_bounded() -> None:
    # with ``re`` this backtracks for minutes on 40 characters; the regex module's timeout ends it
    assert not same("string", "^(a|aa)+$", "a" * 40 + "b")
    assert same("string", "^(a|aa)+$", "a" * 40)
