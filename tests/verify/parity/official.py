"""Find (or make) a Python that has the official ``webarena-verified`` package, and run it on cases.

Its pinned dependencies (pydantic 2.12.0, python-dateutil 2.9, url-normalize 2.2, ...) conflict with
this project's, so it lives in a side virtual environment: ``$WEBARENA_VERIFIED_PYTHON`` if set (CI
builds one in ``.ci/run``), else ``$WEBARENA_VERIFIED_VENV``, else a venv cached across runs in the
real user's ``~/.cache/replay-tui-tests/webarena-verified-<version>`` (keyed by the version, created
with ``pip install webarena-verified==<version>`` when missing, under a lock: xdist workers share it).
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

VERSION = "1.2.3"
RUNNER = Path(__file__).with_name("official_runner.py")


def _side_venv() -> Path:
    """The side venv's folder; the user's real home, as tests/conftest.py remembers it before it
    points HOME into the session's temporary folder."""
    configured = os.environ.get("WEBARENA_VERIFIED_VENV")
    if configured:
        return Path(configured)
    home = Path(os.environ.get("REPLAY_TUI_TESTS_USER_HOME") or Path.home())
    return home / ".cache" / "replay-tui-tests" / f"webarena-verified-{VERSION}"


SIDE_VENV = _side_venv()


def _has_package(python: str) -> bool:
    probe = subprocess.run(
        [python, "-c", "import webarena_verified.core.evaluation.value_comparator"], capture_output=True, timeout=120
    )
    return probe.returncode == 0


@functools.cache
def official_python() -> tuple[str | None, str]:
    """(path of a Python with the official package, or None; why not). Found once per test process: the probe
    imports the package in a fresh interpreter (~1.3 s of CPU), and four tests ask."""
    configured = os.environ.get("WEBARENA_VERIFIED_PYTHON")
    if configured:
        return (configured, "") if _has_package(configured) else (None, f"{configured} lacks webarena-verified")
    python = SIDE_VENV / "bin" / "python"
    try:
        SIDE_VENV.parent.mkdir(parents=True, exist_ok=True)
        with open(SIDE_VENV.parent / f"{SIDE_VENV.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another xdist worker may be building it right now
            if python.exists() and _has_package(str(python)):
                return str(python), ""
            if not python.exists():
                venv.create(SIDE_VENV, with_pip=True)
            install = subprocess.run(
                [str(python), "-m", "pip", "install", "-q", f"webarena-verified=={VERSION}"],
                capture_output=True,
                text=True,
                timeout=900,
            )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"cannot create {SIDE_VENV}: {exc}"
    if install.returncode != 0 or not _has_package(str(python)):
        tail = (install.stderr or install.stdout).strip().splitlines()[-1:] or ["?"]
        return None, f"pip install webarena-verified=={VERSION} into {SIDE_VENV} failed: {tail[0]}"
    return str(python), ""


def run_official(
    python: str,
    tasks_file: Path,
    cases: list[tuple[int, Any]],
    environments: dict[str, Any] | None = None,
    traces: list[Any] | None = None,
    *,
    untraced: bool = False,
) -> list[dict[str, Any]]:
    """The official verdict for each (task id, answer), in order; with ``traces`` (HAR entries per
    case) the network checks run too; ``untraced``: the whole task evaluated with no trace at all
    (otherwise, without traces, the answer check alone)."""
    payload = "".join(
        json.dumps(
            {"task_id": tid, "answer": answer, "trace": traces[i] if traces else None}
            | ({"untraced": True} if untraced else {})
        )
        + "\n"
        for i, (tid, answer) in enumerate(cases)
    )
    argv = [python, str(RUNNER), str(tasks_file)]
    if environments:
        argv.append(json.dumps(environments))
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        raise RuntimeError(f"official runner failed with exit {done.returncode}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if len(lines) != len(cases):
        raise RuntimeError(f"official runner answered {len(lines)} of {len(cases)} cases")
    return lines


class OfficialSession:
    """One long-running official runner, for many small batches (the property-based tests)."""

    def __init__(self, python: str, tasks_file: Path):
        self.process = subprocess.Popen(
            [python, str(RUNNER), str(tasks_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def judge(self, cases: list[tuple[int, Any]]) -> list[dict[str, Any]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        for tid, answer in cases:
            self.process.stdin.write(json.dumps({"task_id": tid, "answer": answer}) + "\n")
        self.process.stdin.flush()
        lines = []
        for _ in cases:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("official runner stopped")
            lines.append(json.loads(line))
        return lines

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
