"""Hermetic TUI tests: no user config or data dir, a fixed size, cursor blink off."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from replay_tui.matching import MatchSettings
from replay_tui.tui.app import ReplayApp, make_app
from replay_tui.workspace import ReplaySettings

SIZE = (130, 36)


@pytest.fixture(autouse=True)
def _no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Input, "cursor_blink", False, raising=False)


@pytest.fixture
def build(tmp_path: Path):
    """make_app with annotations and exports inside tmp_path."""

    def factory(
        demos=None,
        *,
        mode: str = "stub",
        mismatch: str = "stop",
        policy: str | None = None,
        item_steps: bool = False,
        match: tuple[str, ...] = (),
        **kwargs,
    ) -> ReplayApp:
        settings = ReplaySettings(
            mode="custom" if policy else mode,
            policy_spec=policy,
            mismatch=mismatch,
            item_steps=item_steps,
            matching=MatchSettings.parse(match),
        )
        kwargs.setdefault("annotations", tmp_path / "notes.annotations.json")
        kwargs.setdefault("export_dir", tmp_path)
        return make_app(demos, settings=settings, **kwargs)

    return factory


async def wait_replay(app: ReplayApp, pilot) -> None:
    """Wait until the replay worker has finished and its messages are handled."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    for _ in range(50):
        if not app.replaying:
            break
        await pilot.pause(0.02)
    await pilot.pause()
