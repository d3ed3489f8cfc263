"""The replay's progress bar: on a terminal, for a run of at least PROGRESS_MIN_EPISODES episodes, advanced by the
session's episode-done events to the whole count; never with --no-progress, -q or off a terminal."""

from __future__ import annotations

import pytest

from replay_tui.examples import example_path
from tests.core.cli.runcli import run_cli


def replay(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str]:
    code, _, err = run_cli(capsys, "replay", "--demos", str(example_path()), "--mode", "stub", "--no-save-run", *flags)
    return code, err


def test_a_terminal_sees_the_bar_count_every_episode(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # Rich treats stderr as a terminal
    code, err = replay(capsys)
    assert code == 0
    assert "replaying" in err
    assert "0/100" in err and "100/100" in err  # started at none, ended at every episode of the example


@pytest.mark.parametrize("flag", ["--no-progress", "-q"])
def test_no_bar_when_asked_for_none(capsys: pytest.CaptureFixture[str], monkeypatch, flag: str) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, err = replay(capsys, flag)
    assert code == 0
    assert "replaying" not in err


def test_no_bar_off_a_terminal(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    code, err = replay(capsys)
    assert code == 0
    assert "replaying" not in err


def test_no_bar_for_a_few_episodes(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, err = replay(capsys, "--sessions", "0-4")
    assert code == 0
    assert "replaying" not in err
