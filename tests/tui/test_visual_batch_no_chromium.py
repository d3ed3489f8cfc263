"""Without Chromium the app's visual batch says so and keeps saying it (issue 34, item 5): every
pair ends failed with the reason, and a banner keeps the one-line fix the CLI prints (the toast
alone vanished and the pairs stayed ``queued`` for good)."""

from __future__ import annotations

import pytest

from replay_tui.tui.visual.batch import BatchSource, VisualBatchApp
from replay_tui.visual import render
from replay_tui.visual.batch import bundled_pairs

SIZE = (130, 36)


@pytest.fixture
def no_chromium(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A machine without Chromium: no known path, nothing on PATH, no REPLAY_TUI_CHROMIUM."""
    monkeypatch.setattr(render, "CHROMIUM_CANDIDATES", ())
    monkeypatch.delenv("REPLAY_TUI_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(render.RenderError):
        render.find_chromium()


async def test_without_chromium_every_pair_fails_with_the_reason_and_a_banner_stays(no_chromium, tmp_path):
    pairs = bundled_pairs()[:4]
    app = VisualBatchApp(pairs, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.batch
        for _ in range(200):
            await pilot.pause(0.05)
            if not screen.scoring:
                break
        await pilot.pause()
        source = screen.table.source
        assert isinstance(source, BatchSource)
        assert [source.pair(i).status for i in range(len(source))] == ["error"] * 4
        assert all("no Chromium found" in (source.pair(i).error or "") for i in range(len(source)))
        app.clear_notifications()  # the toast goes; the banner stays
        await pilot.pause()
        shown = app.export_screenshot().replace("&#160;", " ")
    assert "scoring failed: RenderError: no Chromium found: install Debian" in shown
    assert "queued" not in shown
