"""The hostile-input corpus (issue 19): no input gives a traceback, in the loader or the CLI.

Every case of :mod:`tests.hostile` must load as exactly its valid episodes, every other episode a
named problem, and ``replay-tui replay --demos F --all --mode stub`` (with and without ``--report``)
must exit with the case's code (0, or 2 for an unreadable file or one with no usable episode) and
never print a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson
import pytest

from replay_tui.cli import main
from replay_tui.episodes.problems import DemoFileError
from replay_tui.formats.webshop_demos.index import open_demos
from tests import forked
from tests.hostile import BY_NAME, CASES, fixture_cases, write_corpus

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parents[1] / "data" / "hostile"
TABLE_ROWS = {  # one case per row of issue 19's table, and the app's crashes it lists
    "deep_top_array",
    "deep_in_episode",
    "deep_in_step",
    "float_overflow_reward",
    "big_int_session_id",
    "huge_session_id_2_70",
    "session_id_float_fraction",
    "session_id_list",
    "invalid_utf8_in_observation",
    "latin1_file",
    "top_object_wrapper",
    "top_array_numbers",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_corpus(tmp_path_factory.mktemp("hostile"))


def test_the_fixture_files_are_the_corpus():
    kept = {path.name: path.read_bytes() for path in FIXTURES.iterdir() if not path.name.startswith(".")}
    expected = {case.filename: case.data for case in fixture_cases()}
    assert kept == expected
    assert len(CASES) >= 100 and len(expected) >= 90
    assert REAL_PROCESS <= TABLE_ROWS and {BY_NAME[name].exit for name in REAL_PROCESS} == {0, 2}
    assert {case.row for case in CASES} >= {
        "deep nesting",
        "numbers out of range",
        "wrong-typed ids",
        "encodings",
        "top-level shapes",
    }


@pytest.mark.parametrize("name", [case.name for case in CASES])
def test_every_episode_is_valid_or_a_named_problem(corpus, name):
    case = BY_NAME[name]
    path = corpus[name]
    try:
        demos = open_demos(path)
    except DemoFileError as exc:
        assert not case.valid and case.exit == 2
        assert "\n" not in str(exc) and str(path) in str(exc)
        return
    demos.validate_all()
    valid = {sid for sid in demos.session_ids if demos.problem_for(sid) is None}
    assert valid == set(case.valid)
    for sid in valid:
        assert demos.episode(sid).session_id == sid
    for problem in demos.problems:
        assert problem.file == str(path) and problem.message
        assert "\n" not in problem.one_line()
        assert "unexpected error" not in problem.message  # a named reason, not a caught crash
    located = {p.index for p in demos.problems if p.index is not None}
    for ref in demos.refs:
        assert ref.session_id in valid or ref.index in located
    if not valid:
        assert demos.problems  # 0 usable episodes always says why


@pytest.mark.parametrize("name", [case.name for case in CASES])
def test_cli_exit_codes_and_no_traceback(corpus, name, tmp_path, capsys):
    case = BY_NAME[name]
    argv = ["replay", "--demos", str(corpus[name]), "--all", "--mode", "stub", "--no-progress"]
    for extra in ([], ["--report", str(tmp_path / "r.json")]):
        code = main([*argv, *extra])
        out, err = capsys.readouterr()
        assert code == case.exit, err
        assert "Traceback" not in err
        assert "\x1b" not in out + err and "\x9b" not in out + err  # no escape sequence from the log
        if code == 2:
            assert err.rstrip().splitlines()[-1].startswith("replay-tui replay: error: ")
    if case.exit == 0:
        report = orjson.loads((tmp_path / "r.json").read_bytes())
        assert {e["session_id"] for e in report["episodes"]} == set(case.valid)


@pytest.mark.parametrize("name", sorted(TABLE_ROWS))
@pytest.mark.parametrize("suffix", [".md", ".csv", ".html", ".xml"])
def test_every_report_format_is_written(corpus, name, suffix, tmp_path, capsys):
    case = BY_NAME[name]
    out = tmp_path / f"r{suffix}"
    code = main(["replay", "--demos", str(corpus[name]), "--all", "--mode", "stub", "--report", str(out), "-q"])
    assert code == case.exit and "Traceback" not in capsys.readouterr().err
    assert out.exists() == (case.exit == 0)


def _run(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "replay_tui", *argv], capture_output=True, text=True, env=env, check=False, **kwargs
    )


REAL_PROCESS = {"latin1_file", "deep_top_array"}
"""Cases (one exiting 0, one 2) run as a shell runs the command: a fresh ``python -m replay_tui``. The
others run in a process forked from a server that imported the CLI once (``tests/forked.py``)."""


@pytest.mark.parametrize("name", sorted(TABLE_ROWS))
def test_the_installed_command_never_prints_a_traceback(corpus, name, tmp_path):
    case = BY_NAME[name]
    report = tmp_path / "r.json"
    argv = ("replay", "--demos", str(corpus[name]), "--all", "--mode", "stub", "--report", str(report))
    if name in REAL_PROCESS:
        proc = _run(*argv)
    else:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = forked.run(forked.cli_main, *argv, cwd=Path.cwd(), env=env, timeout=120, argv=argv)
    assert proc.returncode == case.exit, proc.stderr
    assert "Traceback" not in proc.stderr
    if case.exit == 2:
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("replay-tui replay: error: ")


def test_problems_name_the_field_and_the_reason(corpus):
    def problems(name: str) -> list[str]:
        demos = open_demos(corpus[name])
        demos.validate_all()
        return [p.one_line() for p in demos.problems]

    [deep] = problems("deep_in_step")
    assert "episode #1" in deep and "nested more than 64 levels deep" in deep
    [overflow] = problems("float_overflow_reward")
    assert "field trajectory[1].reward" in overflow and "number out of range: 1e400" in overflow
    [big] = problems("big_int_session_id")
    assert "field session_id" in big and "5,000 characters" in big
    [huge] = problems("huge_session_id_2_70")
    assert "field session_id" in huge and "64 bits" in huge
    [fraction] = problems("session_id_float_fraction")
    assert "(session 2.5)" in fraction and "field session_id" in fraction
    [listed] = problems("session_id_list")
    assert "field session_id" in listed and "JSON array" in listed
    [latin] = problems("latin1_file")
    assert "field instruction" in latin and "not valid UTF-8: byte 0xE9 at byte" in latin
    offset = int(latin.split("at byte ")[1].split()[0].replace(",", ""))
    assert corpus["latin1_file"].read_bytes()[offset] == 0xE9
    [wrapper] = problems("top_object_wrapper")
    assert "not an episode" in wrapper and "'episodes'" in wrapper
    assert len(problems("top_array_numbers")) == 3
    [odd] = problems("utf16le_odd_length")
    assert "not valid UTF-16-LE" in odd and "3 complete episodes are usable" in odd


def test_an_integral_float_id_is_coerced(corpus):
    demos = open_demos(corpus["session_id_float_integer"])
    assert demos.session_ids == [1, 2, 3] and demos.problems == []
    assert demos.episode(2).session_id == 2


def test_utf16_and_utf32_files_load_like_utf8(corpus):
    reference = open_demos(corpus["utf8_bom"])
    for name in ("utf16le_bom", "utf16be_no_bom", "utf32le_no_bom", "utf32be_bom"):
        demos = open_demos(corpus[name])
        assert demos.files[0].encoding.startswith("utf-")
        assert demos.problems == []
        for sid in (1, 2, 3):
            assert demos.episode(sid) == reference.episode(sid)


def test_a_file_yielding_no_episode_exits_2_with_one_line(corpus, capsys):
    code = main(["replay", "--demos", str(corpus["top_array_numbers"]), "--all"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "no usable episodes" in err and "episode is a JSON number" in err
    assert "(and 2 more problems)" in err


def test_unreadable_file_is_one_line(tmp_path, monkeypatch, capsys):
    locked = tmp_path / "locked.json"
    locked.write_bytes(CASES[0].data)
    _deny(locked, monkeypatch)
    code = main(["replay", "--demos", str(locked), "--all"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Permission denied" in err and "Traceback" not in err


def _deny(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``path`` unreadable: chmod when that works (not root), else the loader's open refuses it."""
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads anything: refuse it where the loader opens files
        import builtins

        import replay_tui.formats.webshop_demos.index as loader
        from replay_tui.fileio import open_regular

        def guarded_open(file, *args, **kwargs):
            if Path(file) == path:
                raise PermissionError(13, "Permission denied", str(file))
            return builtins.open(file, *args, **kwargs)

        def guarded_open_regular(file):
            if Path(file) == path:
                raise PermissionError(13, "Permission denied", str(file))
            return open_regular(file)

        monkeypatch.setattr(loader, "open", guarded_open, raising=False)
        monkeypatch.setattr(loader, "open_regular", guarded_open_regular)


@pytest.mark.skipif(not hasattr(os, "setuid"), reason="needs POSIX users")
def test_permission_denied_in_a_real_process():
    """Outside the test process: the file is mode 000 and the command runs as a user that cannot read it."""
    folder = Path(tempfile.mkdtemp())
    try:
        folder.chmod(0o755)
        locked = folder / "locked.json"
        locked.write_bytes(BY_NAME["trajectory_empty"].data)
        locked.chmod(0)
        as_root = os.geteuid() == 0

        def drop() -> None:
            os.setgid(65534)
            os.setuid(65534)

        try:
            proc = _run("replay", "--demos", str(locked), "--all", preexec_fn=drop if as_root else None)
        except OSError as exc:  # the interpreter itself is out of the unprivileged user's reach
            pytest.skip(f"cannot run Python as an unprivileged user: {exc}")
        if as_root and "locked.json" not in proc.stderr:
            pytest.skip(f"could not run as an unprivileged user: {proc.stderr[-200:]}")
        assert proc.returncode == 2 and "Permission denied" in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    finally:
        locked.chmod(0o644)
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()
