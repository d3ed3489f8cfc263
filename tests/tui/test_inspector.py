"""The visual-metric inspector on a bundled page pair, rendered for real in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

from replay_tui.tui.inspector import InspectorApp, InspectorScreen
from replay_tui.tui.widgets.halfblock import HalfBlockImage

EXAMPLES = Path(__file__).resolve().parents[2] / "replay_tui" / "visual" / "examples"
SIZE = (140, 44)


async def wait_scored(app: InspectorApp, pilot) -> None:
    await app.workers.wait_for_complete()
    for _ in range(100):
        await pilot.pause(0.05)
        if app.done:
            break
    await pilot.pause()


async def test_open_a_pair_find_the_worst_block_and_export(tmp_path):
    app = InspectorApp(EXAMPLES / "ref" / "13470.html", EXAMPLES / "reword" / "13470.html", export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_scored(app, pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen) and screen.result is not None
        kinds = {row.kind for row in screen.rows}
        assert "match" in kinds
        scores = screen.query_one("#scores").render().plain
        assert "Block-Match" in scores and "Final" in scores
        await pilot.press("w")  # worst pair by text similarity
        worst = screen.selected()
        matched = [r for r in screen.rows if r.kind == "match"]
        assert worst.kind == "match" and worst.text == min(r.text for r in matched)
        assert worst.text < 1.0  # a reworded block
        ref_image = screen.query_one("#ref-image", HalfBlockImage)
        chosen = [b for b in ref_image.boxes if b.fill]
        assert len(chosen) == 1 and chosen[0].x == worst.ref.bbox[0]
        await pilot.press("w")
        assert screen.selected().text >= worst.text
        await pilot.press("s", "w")  # worst by position
        by_position = screen.selected()
        assert by_position.position == min(r.position for r in matched)
        await pilot.press("z")
        assert screen.zoom == 2.0 and ref_image.zoom == 2.0
        await pilot.press("e")
        await pilot.pause()
    report = json.loads((tmp_path / "13470.visual.json").read_text())
    assert report["result"]["scores"]["final"] == screen.result.scores.final
    assert report["schema"].startswith("replay-tui.visual")  # the same document `visual --json` writes
    assert "Worst pairs" in (tmp_path / "13470.visual.md").read_text()
    assert (tmp_path / "13470.ref.overlay.png").stat().st_size > 1000


async def test_missing_and_extra_blocks_are_rows(tmp_path):
    app = InspectorApp(EXAMPLES / "ref" / "9656.html", EXAMPLES / "drop" / "9656.html", export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_scored(app, pilot)
        screen = app.screen
        assert any(row.kind == "missing" for row in screen.rows)  # the dropped element
        assert len(screen.table.source) == len(screen.rows)


def test_inspect_reads_a_saved_report(tmp_path):
    from replay_tui.cli import inspect_target

    saved = tmp_path / "r.json"
    saved.write_text(json.dumps({"ref": "a.html", "pred": "b.html", "mode": "fixed"}))
    assert inspect_target([str(saved)], None) == ("a.html", "b.html", "fixed")
    assert inspect_target(["x.html", "y.html"], None) == ("x.html", "y.html", "compat")


def test_inspector_snapshot(snap_compare, tmp_path):
    async def run_before(pilot):
        await wait_scored(pilot.app, pilot)
        await pilot.press("w")
        await pilot.pause()

    app = InspectorApp(Path("replay_tui/visual/examples/ref/13470.html"),
                       Path("replay_tui/visual/examples/reword/13470.html"), export_dir=tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
