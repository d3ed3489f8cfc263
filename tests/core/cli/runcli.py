"""The CLI run in-process, as the CLI tests drive it (one copy for every test file)."""

from __future__ import annotations

import pytest

from replay_tui.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)``'s exit code with what it printed to stdout and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
