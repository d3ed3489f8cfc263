"""The app in a real terminal (tmux, ``bench/termdrive.TmuxApp``), started as the tmux tests start it: from a
shell in the test's folder, with this checkout first on the path, its config and data folders and its
annotations and runs in the test's folder, saving no run."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.termdrive import TmuxApp

ROOT = Path(__file__).resolve().parents[2]


def app_env(tmp_path: Path) -> dict[str, str]:
    """This checkout on the path; the app's config and data in the test's folder."""
    return {"PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path)}


def in_tmux(tmp_path: Path, python_args: str, *, width: int, height: int) -> TmuxApp:
    """``python PYTHON_ARGS --annotations … --runs-dir … --no-save-run`` (e.g. ``-m replay_tui tui LOG``) in
    tmux, ``width`` x ``height``."""
    command = [
        "sh",
        "-c",
        f"cd {tmp_path} && exec {sys.executable} {python_args} "
        f"--annotations {tmp_path / 'notes.json'} --runs-dir {tmp_path / 'runs'} --no-save-run",
    ]
    return TmuxApp(command, width=width, height=height, env=app_env(tmp_path), poll=0.05)
