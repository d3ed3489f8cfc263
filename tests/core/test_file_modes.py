"""Written files get ordinary permissions (issue 16): a new report follows the umask like any file
``open()`` creates, and rewriting one keeps the mode it had (mkstemp's 0600 used to stick)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from replay_tui.cli.commands import main
from replay_tui.fileio import atomic_write_text


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask():
    """Set a umask for one test and restore the previous one after it."""
    previous = os.umask(0o022)
    os.umask(previous)

    def set_mask(mask: int) -> None:
        os.umask(mask)

    yield set_mask
    os.umask(previous)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_a_new_file_follows_the_umask(tmp_path: Path, umask, mask: int) -> None:
    umask(mask)
    path = atomic_write_text(tmp_path / "report.md", "hello")
    assert _mode(path) == 0o666 & ~mask
    assert path.read_text() == "hello"


def test_rewriting_a_file_keeps_its_mode(tmp_path: Path, umask) -> None:
    umask(0o077)  # a rewrite must not take the umask's mode either
    path = tmp_path / "report.md"
    path.write_text("old")
    path.chmod(0o644)
    atomic_write_text(path, "new")
    assert _mode(path) == 0o644
    path.chmod(0o640)
    atomic_write_text(path, "newer")
    assert (_mode(path), path.read_text()) == (0o640, "newer")


def test_a_cli_report_is_readable_by_the_group_and_keeps_its_mode_when_rewritten(tmp_path: Path, umask) -> None:
    umask(0o022)
    report = tmp_path / "report.json"
    assert main(["replay", "--sessions", "0,1", "--report", str(report), "-q"]) == 0
    assert _mode(report) == 0o644
    report.chmod(0o664)
    assert main(["replay", "--sessions", "0,1", "--report", str(report), "-q"]) == 0
    assert _mode(report) == 0o664
