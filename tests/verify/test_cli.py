"""``replay-tui verify`` through a tiny argparse: exit codes, summary, report, bad input."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from replay_tui.cli import verify as cli
from replay_tui.verify.evaluate import reference_response
from replay_tui.verify.models import Task
from tests.verify.conftest import TASKS_FILE, demo, passing


def run(argv: list[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="replay-tui")
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["verify", *argv])
    out_buffer, err_buffer = io.StringIO(), io.StringIO()
    out = Console(file=out_buffer, width=200, force_terminal=False, color_system=None)
    err = Console(file=err_buffer, width=200, force_terminal=False, color_system=None)
    code = args.func(args, out, err)
    return code, out_buffer.getvalue(), err_buffer.getvalue()


def write_answers(path: Path, answers: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8")
    return path


def test_all_812_expected_answers_succeed(tmp_path: Path, tasks: dict[int, Task]) -> None:
    answers = write_answers(
        tmp_path / "answers.jsonl", [{"task_id": tid, "response": reference_response(t)} for tid, t in tasks.items()]
    )
    code, out, err = run(["--tasks", str(TASKS_FILE), "--answers", str(answers), "--report", str(tmp_path / "r.json")])
    # without traces the 488 tasks with network checks are unverified (never success): exit 1
    assert (code, err) == (1, "")
    assert "verified 812 answer(s) against 812 task(s): 324 success, 0 failure, 0 error, 488 unverified" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert [r["task_id"] for r in report["results"]] == list(tasks)
    assert report["summary"]["overall"]["success"] == 324 and report["summary"]["overall"]["unverified"] == 488
    assert [r["status"] for r in report["results"]] == [passing(t) for t in tasks.values()]


def test_failures_exit_1_with_summary_and_report(tmp_path: Path) -> None:
    answers = write_answers(
        tmp_path / "answers.jsonl",
        [
            {"task_id": 108, "response": demo(108)[0]},
            {"task_id": 107, "response": demo(107)[0]},
            {"task_id": 424242, "response": {}},
        ],
    )
    report_path = tmp_path / "out" / "report.json"
    code, out, err = run(["--tasks", str(TASKS_FILE), "--answers", str(answers), "--report", str(report_path)])
    assert (code, err) == (1, "")
    for text in (
        "1 success, 1 failure, 1 error",
        "per site",
        "shopping_admin",
        "per data type",
        "month",
        "agent_response.task_type_mismatch",
        "unknown task_id 424242",
        "(+1 more)",
    ):
        assert text in out
    raw = report_path.read_bytes()
    report = json.loads(raw)
    assert [(r["line"], r["task_id"], r["status"]) for r in report["results"]] == [
        (1, 108, "success"),
        (2, 107, "failure"),
        (3, 424242, "error"),
    ]
    assert [a["name"] for a in report["results"][1]["evaluators_results"][0]["assertions"]] == [
        "agent_response.task_type_mismatch",
        "retrieved_data_missing_or_null",
    ]
    assert raw == json.dumps(report, sort_keys=True, indent=2, ensure_ascii=False).encode() + b"\n"
    code_again, _, _ = run(["--tasks", str(TASKS_FILE), "--answers", str(answers), "--report", str(report_path)])
    assert code_again == 1 and report_path.read_bytes() == raw


def test_untrusted_text_is_shown_safely(tmp_path: Path) -> None:
    evil = {
        "task_type": "RETRIEVE",
        "status": "SUCCESS",
        "retrieved_data": [{"month": "\x1b]0;pwned\x07[bold]Jan", "count": 1}],
    }
    answers = write_answers(tmp_path / "a.jsonl", [{"task_id": 108, "response": evil}])
    code, out, _ = run(["--tasks", str(TASKS_FILE), "--answers", str(answers)])
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"task_id": 108, "response": {}}', "{not json"], "a.jsonl:2: not valid JSON"),
        (['{"task_id": 108}'], "a.jsonl:1: no 'response' key"),
        (['{"task_id": "one", "response": {}}'], "a.jsonl:1: task_id must be an integer"),
        (['{"task_id": true, "response": {}}'], "a.jsonl:1: task_id must be an integer"),
        (["[1, 2]"], "a.jsonl:1: expected an object"),
        (["", "   "], "a.jsonl: no answers"),
    ],
)
def test_bad_answers_exit_2(tmp_path: Path, lines: list[str], message: str) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text("\n".join(lines) + "\n")
    code, out, err = run(["--tasks", str(TASKS_FILE), "--answers", str(answers)])
    assert code == 2 and out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{oops", "not valid JSON"),
        ('"tasks"', "expected a JSON list of tasks"),
        ('[{"task_id": 1, "eval": []}]', "no AgentResponseEvaluator"),
        (
            '[{"task_id": 1, "eval": [{"evaluator": "AgentResponseEvaluator", '
            '"expected": {"task_type": "x", "status": "SUCCESS"}}]}]',
            "is not one of",
        ),
    ],
)
def test_bad_tasks_exit_2(tmp_path: Path, content: str | None, message: str) -> None:
    tasks = tmp_path / "tasks.json"
    if content is not None:
        tasks.write_text(content)
    answers = write_answers(tmp_path / "a.jsonl", [{"task_id": 1, "response": {}}])
    code, out, err = run(["--tasks", str(tasks), "--answers", str(answers)])
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_bad_site_url_and_unwritable_report(tmp_path: Path) -> None:
    answers = write_answers(tmp_path / "a.jsonl", [{"task_id": 108, "response": demo(108)[0]}])
    code, _, err = run(["--tasks", str(TASKS_FILE), "--answers", str(answers), "--site-url", "gitlab"])
    assert code == 2 and "--site-url expects SITE=URL" in err
    (tmp_path / "dir.json").mkdir()
    code, _, err = run(["--tasks", str(TASKS_FILE), "--answers", str(answers), "--report", str(tmp_path / "dir.json")])
    assert code == 2 and "cannot write there" in err


def test_register_contract() -> None:
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["verify", "--tasks", "t.json", "--answers", "a.jsonl", "--site-url", "map=http://m"])
    assert args.func is cli.run and args.report is None and args.site_url == ["map=http://m"]
    assert cli.parse_site_urls(["__MAP__=http://m:3000", "map=http://n"]) == {"map": ["http://m:3000", "http://n"]}


def test_each_tasks_own_expected_block_pasted_unchanged_succeeds(tmp_path: Path) -> None:
    """The acceptance as a reviewer would run it: the expected block itself, alternatives and all."""
    raw = json.loads(TASKS_FILE.read_text(encoding="utf-8"))
    answers = []
    for task in raw:
        [evaluator] = [e for e in task["eval"] if e["evaluator"] == "AgentResponseEvaluator"]
        answers.append({"task_id": task["task_id"], "response": evaluator["expected"]})
    path = write_answers(tmp_path / "pasted.jsonl", answers)
    code, out, _ = run(["--tasks", str(TASKS_FILE), "--answers", str(path)])
    assert code == 1 and "324 success, 0 failure, 0 error, 488 unverified" in out  # 488 with network checks


def test_the_main_cli_dispatches_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from replay_tui.cli import main

    answers = write_answers(tmp_path / "a.jsonl", [{"task_id": 107, "response": "no json here"}])
    assert main(["verify", "--tasks", str(TASKS_FILE), "--answers", str(answers)]) == 1
    assert "failure" in capsys.readouterr().out


def test_rules_flag_changes_verdicts_and_is_reported(tmp_path: Path, tasks: dict[int, Task]) -> None:
    hedged = reference_response(tasks[231]) | {"retrieved_data": ["^.*$"]}
    answers = write_answers(
        tmp_path / "answers.jsonl",
        [{"task_id": 231, "response": hedged}, {"task_id": 319, "response": reference_response(tasks[319])}],
    )
    verdicts = {}
    for rules in ("strict", "upstream"):
        report_path = tmp_path / f"{rules}.json"
        argv = ["--tasks", str(TASKS_FILE), "--answers", str(answers), "--report", str(report_path)]
        code, out, err = run([*argv, "--rules", rules] if rules == "upstream" else argv)
        assert (code, err) == (1, "")
        assert f"(rules: {rules})" in out
        report = json.loads(report_path.read_text())
        assert report["rules"] == rules and {r["rules"] for r in report["results"]} == {rules}
        verdicts[rules] = [r["status"] for r in report["results"]]
    assert verdicts == {"strict": ["failure", "success"], "upstream": ["success", "failure"]}
    with pytest.raises(SystemExit) as exit_info:  # argparse: usage error, exit 2
        run(["--tasks", str(TASKS_FILE), "--answers", str(answers), "--rules", "lenient"])
    assert exit_info.value.code == 2
