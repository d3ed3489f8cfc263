"""The suite never writes into the user's files: pytest in a subprocess, its HOME an empty folder that
stays empty (issue 28: a module fixture of test_cli_compare.py once saved runs into the real history)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
# The file that leaked, one that saves runs through the store, one that writes the LLM cache.
FILES = ("test_cli_compare.py", "test_runs.py", "test_cache.py")


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
    files = [str(next(ROOT.glob(f"tests/**/{name}"))) for name in FILES]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *files],
        cwd=ROOT,
        env=_user_env(home),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []
