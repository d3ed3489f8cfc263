"""tests/forked.py gives a command what a process of its own gives: its folder, environment, streams and
exit code, a memory cap it cannot pass, and a hang that ends at the timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import forked

GiB = 1 << 30


def report(name: str) -> int:
    print(f"cwd={os.getcwd()} {name}={os.environ.get(name)} tz={time.tzname[0]} stdin={sys.stdin.read()!r}")
    print("to stderr", file=sys.stderr)
    return 3


def allocate(size: str) -> None:
    bytearray(int(size))


def block(fifo: str) -> None:
    with open(fifo, "rb") as handle:  # no writer: blocks until killed
        handle.read()


def test_a_forked_command_has_its_folder_environment_streams_and_exit_code(tmp_path: Path) -> None:
    env = {"ONLY_THIS": "yes", "TZ": "Asia/Tokyo"}
    proc = forked.run(report, "ONLY_THIS", cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 3
    assert proc.stdout == f"cwd={tmp_path} ONLY_THIS=yes tz=JST stdin=''\n"
    assert proc.stderr == "to stderr\n"
    assert forked.run(report, "HOME", cwd=tmp_path, env={}, timeout=120).stdout.split()[1] == "HOME=None"


def test_the_memory_cap_holds_in_the_forked_process(tmp_path: Path) -> None:
    proc = forked.run(allocate, str(2 * GiB), cwd=tmp_path, env={}, timeout=120, memory=GiB)
    assert proc.returncode == 1 and "MemoryError" in proc.stderr
    assert forked.run(allocate, str(GiB // 8), cwd=tmp_path, env={}, timeout=120, memory=GiB).returncode == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")
def test_a_hang_is_killed_at_the_timeout(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(subprocess.TimeoutExpired):
        forked.run(block, str(fifo), cwd=tmp_path, env={}, timeout=1)


def test_the_cli_runs_as_replay_tui(tmp_path: Path) -> None:
    proc = forked.run(forked.cli_main, "runs", "--no-such-flag", cwd=tmp_path, env={"HOME": str(tmp_path)}, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].startswith("replay-tui runs: error: ")


def process_start() -> None:
    from replay_tui import fileio

    print(fileio.PROCESS_START)


def test_a_forked_command_started_when_it_was_forked(tmp_path: Path) -> None:
    """fileio.PROCESS_START (older temporary files are an earlier process's leftovers) is the child's start,
    not the fork server's."""
    from replay_tui import fileio

    first = forked.run(process_start, cwd=tmp_path, env={}, timeout=120)  # the fork server is running
    earlier = float(first.stdout)  # the first child's start (the server's, if the child kept the server's)
    while time.time() < earlier + 0.05:  # the next child is forked a few clock ticks later
        time.sleep(0.01)
    proc = forked.run(process_start, cwd=tmp_path, env={}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) > earlier + 0.02 and float(proc.stdout) > fileio.PROCESS_START
