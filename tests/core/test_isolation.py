"""The suite never writes into the user's files: pytest in a subprocess, its HOME an empty folder that
stays empty (issue 28: a module fixture of test_cli_compare.py once saved runs into the real history)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
# One test of each writer, not their whole files (a pytest subprocess of three files cost 17 s of CPU):
# the module fixture that leaked (three replays saved as runs before any function-scoped fixture ran), a
# replay of the bundled example saved to the default run history, a replay that writes the LLM cache and
# a fresh interpreter that reads it.
TESTS = (
    "tests/core/cli/test_cli_compare.py::test_no_regressions_exits_0_even_with_fail_on_regression_0",
    "tests/core/test_runs.py::test_the_bundled_example_saves_too",
    "tests/llm/test_cache.py::test_a_replay_writes_one_sqlite_file_and_a_new_process_reads_it",
)


def _user_env(home: Path) -> dict[str, str]:
    """The environment of a user who set nothing: HOME, no XDG or replay-tui variables, not inside pytest."""
    drop = ("XDG_", "REPLAY_TUI_", "PYTEST_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.slow
def test_a_test_session_leaves_an_empty_home_empty(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *TESTS],
        cwd=ROOT,
        env=_user_env(home),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{len(TESTS)} passed" in done.stdout, done.stdout[-3000:]  # each one ran: none renamed away
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []
