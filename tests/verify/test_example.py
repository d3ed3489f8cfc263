"""The bundled ``verify`` example (issue 16): the README's command runs as written, from a checkout,
and gives the verdicts the example's PROVENANCE.md promises."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from replay_tui.examples import verify_example_paths

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_verify_example_runs_and_reports_5_successes_and_2_failures(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^replay-tui verify --tasks replay_tui/examples/\S+ .*$", readme, re.MULTILINE)
    assert len(commands) == 1, "the README shows the example command once"
    argv = [*shlex.split(commands[0])[1:], "--report", str(tmp_path / "r.json")]
    done = subprocess.run(
        [sys.executable, "-m", "replay_tui", *argv], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr
    assert "7 answer(s) against 7 task(s): 5 success, 2 failure, 0 error" in " ".join(done.stdout.split())
    report = json.loads((tmp_path / "r.json").read_text())
    failed = sorted(r["task_id"] for r in report["results"] if r["status"] != "success")
    assert failed == [107, 319]
    tasks, answers = verify_example_paths()
    assert tasks == ROOT / "replay_tui/examples/verify/tasks.json" and answers.is_file()
