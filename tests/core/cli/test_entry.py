"""The light entry point: commands that parse alone give what the full parser gives, without loading it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from replay_tui.cli import commands, entry


def _outcome(run, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str, str]:
    try:
        code: object = run(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", sorted(entry.STANDALONE))
@pytest.mark.parametrize("tail", [["-h"], ["--no-such-flag"], []])
def test_a_standalone_command_parses_as_the_full_parser_does(command, tail, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if command == "mcp" and not tail:
        tail = ["--no-such-flag", "x"]  # mcp with no flag would serve on stdin
    alone = _outcome(entry.main, [command, *tail], capsys)
    full = _outcome(commands.main, [command, *tail], capsys)
    assert alone == full
    assert alone[1] or alone[2]  # something was said


def test_a_standalone_command_does_not_load_the_full_parser(tmp_path):
    script = (
        "import sys\n"
        "from replay_tui.cli import main\n"
        "code = main(['formats'])\n"
        "print('LOADED', 'replay_tui.cli.commands' in sys.modules, 'replay_tui.runner' in sys.modules, code)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "LOADED False False 0"
    assert "webshop-demos" in done.stdout  # the readers' table was printed


def test_other_commands_and_bare_files_still_go_to_the_full_parser(capsys):
    code, out, _ = _outcome(entry.main, ["--version"], capsys)
    assert code == 0 and out.startswith("replay-tui ")
    code, out, _ = _outcome(entry.main, ["replay", "-h"], capsys)
    assert code == 0 and "--demos" in out
