"""``replay --report a.json``, ``replay --report b.json``, ``compare a.json b.json``: the first thing a
user tries works, and finds what ``compare`` finds on the saved runs, reasons included (issue 34,
items 3 and 7). The seed's report keys keep their form; what a comparison needs has keys of its own."""

from __future__ import annotations

import json
from pathlib import Path

from replay_tui.examples import example_path
from replay_tui.groups import NO_REASON
from tests.core.cli.runcli import run_cli

SESSIONS = "0-19"


def replay(capsys, tmp_path: Path, mode: str, report: Path) -> Path:
    """Replay the bundled example's first sessions with ``mode``; returns the run file it saved."""
    runs = tmp_path / f"runs-{mode}"
    argv = ["replay", "--demos", str(example_path()), "--mode", mode, "--mismatch", "allow"]
    argv += ["--sessions", SESSIONS, "--report", str(report), "--runs-dir", str(runs), "-q"]
    code, _, err = run_cli(capsys, *argv)
    assert code in (0, 1), err
    (saved,) = runs.rglob("*.json")
    return saved


def compare(capsys, tmp_path: Path, a: Path, b: Path, name: str) -> dict:
    out = tmp_path / f"{name}.json"
    code, _, err = run_cli(capsys, "compare", str(a), str(b), "--report", str(out), "-q")
    assert code == 0, err
    return json.loads(out.read_text())


def _regressions(comparison: dict) -> list[tuple]:
    return [(s["episode"], s["step_label"], s["predicted_b"]) for s in comparison["steps"] if s["flip"] == "regressed"]


def test_compare_reads_plain_json_reports_as_it_reads_saved_runs(capsys, tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run_a = replay(capsys, tmp_path, "stub", a)
    run_b = replay(capsys, tmp_path, "heuristic", b)
    from_reports = compare(capsys, tmp_path, a, b, "reports")
    from_runs = compare(capsys, tmp_path, run_a, run_b, "runs")
    assert _regressions(from_reports) == _regressions(from_runs) != []
    assert from_reports["regression_groups"] == from_runs["regression_groups"]


def test_reopened_seed_runs_keep_the_reasons_replay_printed(capsys, tmp_path: Path) -> None:
    run_a = replay(capsys, tmp_path, "stub", tmp_path / "a.json")
    run_b = replay(capsys, tmp_path, "heuristic", tmp_path / "b.json")
    saved = json.loads(run_b.read_text())
    assert all("reason" not in m for e in saved["episodes"] for m in e["mismatches"])  # the seed's shape
    reasons = [group["sample_reason"] for group in compare(capsys, tmp_path, run_a, run_b, "runs")["regression_groups"]]
    assert reasons and all(reason and reason != NO_REASON for reason in reasons)


def test_the_seed_keys_of_a_plain_report_are_unchanged(capsys, tmp_path: Path) -> None:
    report = tmp_path / "a.json"
    replay(capsys, tmp_path, "heuristic", report)
    data = json.loads(report.read_text())
    assert "steps" not in data["episodes"][0]  # the seed's episode records, as before
    assert all("reason" not in m for e in data["episodes"] for m in e["mismatches"])
    steps = data["step_results"]
    assert len(steps) == data["total_steps"] and all("reason" in step and "trace" not in step for step in steps)
