"""Hostile paths (issue 27, items 2 and 5): outputs aimed at inputs, and odd files where a file is read.

Every case runs the command in a process of its own (forked from a server that imported the CLI once,
``tests/forked.py``) under a memory cap (``RLIMIT_AS``) and a timeout:
it must end with exit 0, 1 or 2, print no traceback, and change nothing in the test's folder but
what the case expects (the folder is snapshotted before and after; HOME and the XDG folders are in it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from replay_tui.examples import example_path
from replay_tui.policies.cache import Cassette
from replay_tui.policies.llm_cache import DB_NAME
from tests import forked

ROOT = Path(__file__).resolve().parents[2]
MEMORY_BYTES = 3 << 30
"""The address-space cap of each command: a reader that reads /dev/zero or a 3 GiB run file whole fails."""
TIMEOUT_S = 120
"""A hang (a FIFO opened for reading with no writer) fails the test instead of the suite."""
LLM = ["--mode", "llm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
"""An LLM replay whose endpoint is never reached: the output checks come before any request."""

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


def cli(folder: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``replay-tui ARGV`` in ``folder`` with HOME and the XDG folders inside it; asserts the exit
    code is 0, 1 or 2 and no traceback was printed."""
    home = folder / "home"
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("REPLAY_TUI_", "XDG_")) and key not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")
    }
    environment.update(
        PYTHONPATH=str(ROOT),
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_CACHE_HOME=str(home / "cache"),
        OPENAI_API_KEY="test",
        **(env or {}),
    )
    proc = forked.run(
        forked.cli_main, *argv, cwd=folder, env=environment, timeout=TIMEOUT_S, memory=MEMORY_BYTES, argv=argv
    )
    assert proc.returncode in (0, 1, 2), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc


def refused(proc: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one error line of a command that refused its arguments (exit 2)."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "error: " in lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def snapshot(folder: Path) -> dict[str, object]:
    """Every entry under ``folder``: a regular file's SHA-256, a link's target, another file's type
    (never opened: a FIFO would block)."""
    found: dict[str, object] = {}
    for directory, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(directory, name)
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                found[str(path)] = ("link", os.readlink(path))
            elif stat.S_ISREG(mode):
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                found[str(path)] = stat.S_IFMT(mode)
    return found


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return Path(shutil.copy(example_path(), tmp_path / "d.json"))


# -- item 2: outputs never clobber inputs --------------------------------------------------------


def _spelled(tmp_path: Path, target: Path, how: str) -> Path:
    """``target`` as another path naming the same file."""
    if how == "direct":
        return target
    if how == "dotdot":
        (tmp_path / "sub").mkdir(exist_ok=True)
        return tmp_path / "sub" / ".." / target.name
    alias = tmp_path / f"alias-{how}{target.suffix}"
    if how == "symlink":
        alias.symlink_to(target)
    else:
        os.link(target, alias)
    return alias


@pytest.mark.parametrize("how", ["direct", "symlink", "dotdot", "hardlink"])
def test_record_at_the_demo_file_is_refused_and_the_file_is_untouched(tmp_path, demo, how):
    target = _spelled(tmp_path, demo, how)
    before = snapshot(tmp_path)
    proc = cli(tmp_path, "replay", "--demos", str(demo), *LLM, "--record", str(target), "--no-save-run")
    refused(proc, "--record", "is one of the inputs")
    assert snapshot(tmp_path) == before


def test_record_at_the_annotations_sidecar_is_refused(tmp_path, demo):
    sidecar = tmp_path / "d.annotations.json"  # the sidecar the replay reads for its report
    sidecar.write_text('{"annotations": [{"session_id": 0, "step_number": 0, "tags": ["keep"]}]}')
    link = tmp_path / "cassette.jsonl"
    link.symlink_to(sidecar)
    before = snapshot(tmp_path)
    for target in (sidecar, link):
        proc = cli(tmp_path, "replay", "--demos", str(demo), *LLM, "--record", str(target), "--no-save-run")
        refused(proc, "--record", "is the annotations sidecar")
    given = tmp_path / "notes.json"
    given.write_text('{"annotations": []}')
    before = snapshot(tmp_path)
    proc = cli(
        tmp_path, "replay", "--demos", str(demo), "--annotations", str(given), *LLM, "--record", str(given), "-q"
    )
    refused(proc, "is the annotations sidecar")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("suffix", ["", "-wal"])
def test_record_at_the_response_cache_is_refused(tmp_path, demo, suffix):
    cache = tmp_path / "cache"
    cache.mkdir()
    database = cache / f"{DB_NAME}{suffix}"
    database.write_bytes(b"SQLite format 3\x00" + bytes(100))
    before = snapshot(tmp_path)
    argv = ["replay", "--demos", str(demo), *LLM, "--record", str(database), "--no-save-run"]
    refused(cli(tmp_path, *argv, "--cache-dir", str(cache)), "is the LLM response cache")
    refused(cli(tmp_path, *argv, env={"REPLAY_TUI_CACHE_DIR": str(cache)}), "is the LLM response cache")
    batch = ["batch", "export", "--demos", str(demo), *LLM[:4], "--cache-dir", str(cache), "--out", str(database)]
    refused(cli(tmp_path, *batch), "is the LLM response cache")
    assert snapshot(tmp_path) == before


def test_record_and_report_at_one_path_are_refused(tmp_path, demo):
    before = snapshot(tmp_path)
    out = tmp_path / "x.json"
    proc = cli(tmp_path, "replay", "--demos", str(demo), *LLM, "--record", str(out), "--report", str(out))
    refused(proc, "is also the --report output")
    assert snapshot(tmp_path) == before and not out.exists()


def test_the_app_refuses_an_annotations_file_or_a_cassette_that_is_an_input(tmp_path, demo):
    before = snapshot(tmp_path)
    refused(cli(tmp_path, "tui", str(demo), "--annotations", str(demo)), "--annotations", "is one of the inputs")
    refused(cli(tmp_path, str(demo), *LLM, "--record", str(demo)), "--record", "is one of the inputs")
    refused(
        cli(tmp_path, str(demo), *LLM, "--record", str(tmp_path / "d.annotations.json")),
        "is the annotations sidecar",
    )
    assert snapshot(tmp_path) == before


def test_a_cassette_replaces_its_file_only_when_the_recording_ends(tmp_path):
    path = tmp_path / "run.cassette.jsonl"
    path.write_bytes(b"an older file the user keeps\n")
    cassette = Cassette(path, mode="record", model="m")
    cassette.put("k", {"outcome": "failure", "failure": {"kind": "timeout", "message": "x", "raw": None}})
    assert path.read_bytes() == b"an older file the user keeps\n"  # never truncated in place
    cassette.save()
    assert Cassette.load(path).get("k") is not None
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind


# -- item 5: odd files where a file is read --------------------------------------------------------


def _odd(folder: Path, name: str, kind: str) -> Path:
    """A non-regular file at ``folder/name``: a FIFO, a link to /dev/zero, or a Unix socket."""
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    return path


@pytest.mark.parametrize("kind", ["fifo", "zero", "socket"])
def test_a_log_that_is_not_a_regular_file_is_one_line(tmp_path, kind):
    odd = _odd(tmp_path, "log.json", kind)
    refused(cli(tmp_path, "replay", "--demos", str(odd), "--no-save-run"), "log.json", "not a regular file")
    refused(cli(tmp_path, "tui", str(odd)), "not a regular file")


def test_a_fifo_among_a_folders_logs_is_skipped(tmp_path, demo):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.move(demo, logs / "d.json")
    _odd(logs, "pending.jsonl", "fifo")
    proc = cli(tmp_path, "replay", "--demos", str(logs), "--mode", "stub", "--no-save-run", "-q")
    assert proc.returncode == 0


def test_a_browsergym_step_pickle_that_is_a_fifo_is_a_named_problem(tmp_path):
    source = next(p for p in (ROOT / "tests/data/formats/browsergym").iterdir() if (p / "step_1.pkl.gz").is_file())
    experiment = Path(shutil.copytree(source, tmp_path / source.name))
    (experiment / "step_1.pkl.gz").unlink()
    _odd(experiment, "step_1.pkl.gz", "fifo")
    proc = cli(tmp_path, "replay", "--demos", str(experiment), "--allow-pickle", "--mode", "stub", "--no-save-run")
    assert "step_1.pkl.gz" in proc.stderr and "not a regular file (a FIFO)" in proc.stderr


def _sparse(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no disk space."""
    with path.open("wb") as handle:
        os.truncate(handle.fileno(), size)


def _deep_toml() -> bytes:
    return b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n"


CONFIGS = {
    "deep": ("nested too deeply", lambda path: path.write_bytes(_deep_toml())),
    "utf16": ("not UTF-8 text (saved as UTF-16?)", lambda path: path.write_bytes('labels = ["x"]\n'.encode("utf-16"))),
    "fifo": ("not a regular file (a FIFO)", lambda path: os.mkfifo(path)),
    "zero": ("not a regular file (a character device)", lambda path: path.symlink_to("/dev/zero")),
    "huge": ("larger than", lambda path: _sparse(path, 64 << 20)),
}
CONFIG_COMMANDS = {  # every command that reads config.toml, and one that does not
    "replay": ["replay", "--demos", "{demo}", "--no-save-run", "-q"],
    "export": ["export", "--demos", "{demo}", "--no-save-run", "--out", "r.md"],
    "tui": ["tui", "{demo}"],
    "serve": ["serve", "{demo}", "--port", "1"],
    "mcp": ["mcp", "{demo}"],
    "runs": ["runs"],
    "formats": ["formats"],
}
IGNORES_CONFIG = {"runs", "formats"}


@pytest.mark.parametrize("shape", sorted(CONFIGS))
def test_a_bad_config_is_one_line_for_every_command(tmp_path, demo, shape):
    reason, make = CONFIGS[shape]
    config = tmp_path / "home" / "config" / "replay-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    make(config)
    before = snapshot(tmp_path)
    for command, argv in CONFIG_COMMANDS.items():
        proc = cli(tmp_path, *(a.format(demo=demo) for a in argv))
        if command in IGNORES_CONFIG:
            assert proc.returncode == 0
        else:
            refused(proc, "config.toml", reason)
        assert snapshot(tmp_path) == before, command
    refused(cli(tmp_path, "tui", str(demo), "--config", str(config)), reason)


def _run_file(demo_folder: Path, name: str, created: str) -> Path:
    [real] = [p for p in demo_folder.glob("*.json") if not p.name.startswith("odd-")]
    data = json.loads(real.read_text())
    data["run"]["created"] = created
    data["run"]["name"] = name
    path = demo_folder / f"odd-{name}.json"
    path.write_text(json.dumps(data))
    return path


def hostile_runs(folder: Path) -> dict[str, str]:
    """Odd run files beside a real run in ``folder``: name -> ``dated`` (listed as a run) or ``broken``."""
    _run_file(folder, "year-1", "0001-01-01T00:00:00+05:00")
    _run_file(folder, "year-9999", "9999-12-31T23:59:59-05:00")
    _run_file(folder, "first-day-utc", "0001-01-01T00:00:00Z")
    (folder / "odd-bad-utf8.json").write_bytes(b'{"overall_accuracy": 1, "total_steps": 1, "run": {"id": "a\xff"}}')
    _odd(folder, "odd-zero.json", "zero")
    _odd(folder, "odd-fifo.json", "fifo")
    _sparse(folder / "odd-sparse.json", 3 << 30)  # bigger than the memory cap
    return {
        "year-1": "dated",
        "year-9999": "dated",
        "first-day-utc": "dated",
        "odd-bad-utf8.json": "broken",
        "odd-zero.json": "broken",
        "odd-fifo.json": "broken",
        "odd-sparse.json": "broken",
    }


@pytest.mark.parametrize("tz", ["UTC", "America/New_York", "Asia/Tokyo"])
def test_odd_run_files_are_listed_as_rows(tmp_path, demo, tz):
    runs = tmp_path / "runs"
    assert cli(tmp_path, "replay", "--demos", str(demo), "--runs-dir", str(runs), "-q").returncode == 0
    [folder] = runs.iterdir()
    expected = hostile_runs(folder)
    proc = cli(tmp_path, "runs", "--runs-dir", str(runs), env={"TZ": tz, "COLUMNS": "300"})
    assert proc.returncode == 0
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == 1 + len(expected)
    for name, kind in expected.items():
        [row] = [line for line in rows if name in line]
        assert row.rstrip(" │").endswith("broken") == (kind == "broken"), row
    assert any("0001-01-01 00:00+05:00" in row for row in rows)


def test_an_unknown_user_in_the_runs_folder_is_one_line(tmp_path, demo):
    env = {"REPLAY_TUI_RUNS_DIR": "~nosuchuser-replay-tui/runs"}
    refused(cli(tmp_path, "runs", env=env), "~nosuchuser-replay-tui", "no such user")
    refused(cli(tmp_path, "tui", str(demo), env=env), "no such user")
    refused(cli(tmp_path, "runs", "--runs-dir", "~nosuchuser-replay-tui/x"), "--runs-dir", "no such user")
    proc = cli(tmp_path, "replay", "--demos", str(demo), "-q", env=env)
    assert "no such user" in proc.stderr


def test_compare_of_odd_run_paths_is_one_line(tmp_path):
    fifo = _odd(tmp_path, "run.json", "fifo")
    refused(cli(tmp_path, "compare", str(fifo), str(fifo)), "not a file")
    refused(cli(tmp_path, "compare", "~nosuchuser-replay-tui/a.json", "b"), "no such user")


def test_compare_never_writes_its_report_over_the_cache_or_the_config(tmp_path, demo):
    for name, mode in (("a.json", "stub"), ("b.json", "heuristic")):
        argv = ["replay", "--demos", str(demo), "--mode", mode, "--no-save-run", "--report-steps", "--report", name]
        assert cli(tmp_path, *argv).returncode in (0, 1)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / DB_NAME).write_bytes(b"SQLite format 3\x00")
    config = tmp_path / "home" / "config" / "replay-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('labels = ["keep"]\n')
    (tmp_path / "to-cache.json").symlink_to(cache / DB_NAME)  # a name with a report's suffix
    (tmp_path / "to-config.md").symlink_to(config)
    before = snapshot(tmp_path)
    env = {"REPLAY_TUI_CACHE_DIR": str(cache)}
    refused(cli(tmp_path, "compare", "a.json", "b.json", "--report", "to-cache.json", env=env), "response cache")
    refused(cli(tmp_path, "compare", "a.json", "b.json", "--report", "to-config.md"), "is the config file")
    assert snapshot(tmp_path) == before
