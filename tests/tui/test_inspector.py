"""The visual-metric inspector on a bundled page pair, rendered for real in headless Chromium."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PIL import Image

from replay_tui.cli import UsageError
from replay_tui.cli import main as cli_main
from replay_tui.cli.visual import inspect_app
from replay_tui.tui.visual.inspector import VIEWER_ENV, InspectorApp, InspectorScreen
from replay_tui.tui.widgets.shot_view import ShotView
from replay_tui.visual.explain import merged_parts, pair_rows

from .test_visual_batch import _kept_renders  # noqa: F401 (a fixture: the worker's browser with its kept renders)

# What these tests check is the inspector (its rows, picks, overlays, exports), not the renders: the bundled pages'
# renders are kept for the worker (tests/visual/page_renders.py), and the tests stay on one worker to share them
# (11202's reference is scored by six of them).
pytestmark = pytest.mark.xdist_group("visual-inspector")

EXAMPLES = Path(__file__).resolve().parents[2] / "replay_tui" / "visual" / "examples"
SIZE = (140, 44)


async def wait_scored(app: InspectorApp, pilot) -> None:
    await app.workers.wait_for_complete()
    for _ in range(100):
        await pilot.pause(0.05)
        if app.done:
            break
    await pilot.pause()


@pytest.mark.slow
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
        ref_image = screen.query_one("#ref-image", ShotView)
        chosen = [b for b in ref_image.boxes if b.fill]
        assert len(chosen) == 1 and chosen[0].x == worst.ref.bbox[0]
        why = screen.query_one("#why").render().plain  # why the pair scored what it did
        assert f"text {worst.text:.3f}" in why and f"position {worst.position:.3f}" in why and "ΔE2000" in why
        await pilot.press("w")
        assert screen.selected().text >= worst.text
        await pilot.press("s", "w")  # worst by position
        by_position = screen.selected()
        assert by_position.position == min(r.position for r in matched)
        await pilot.press("z")
        assert screen.zoom == 2.0 and ref_image.zoom == 2.0
        await pilot.press("e")
        await pilot.pause()
    report = json.loads((tmp_path / "reword-13470.visual.json").read_text())
    assert report["result"]["scores"]["final"] == screen.result.scores.final
    assert report["schema"].startswith("replay-tui.visual")  # the same document `visual --json` writes
    cli_json = tmp_path / "cli.json"
    ref, gen = EXAMPLES / "ref" / "13470.html", EXAMPLES / "reword" / "13470.html"
    assert cli_main(["visual", str(ref), str(gen), "--json", str(cli_json)]) == 0

    def without_timings(data):
        if isinstance(data, dict):
            return {k: without_timings(v) for k, v in data.items() if k != "seconds"}
        return [without_timings(v) for v in data] if isinstance(data, list) else data

    assert without_timings(report) == without_timings(json.loads(cli_json.read_text()))
    assert "Worst pairs" in (tmp_path / "reword-13470.visual.md").read_text()
    assert (tmp_path / "reword-13470.ref.overlay.png").stat().st_size > 1000


async def test_missing_and_extra_blocks_are_rows(tmp_path):
    app = InspectorApp(EXAMPLES / "ref" / "9656.html", EXAMPLES / "drop" / "9656.html", export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_scored(app, pilot)
        screen = app.screen
        assert any(row.kind == "missing" for row in screen.rows)  # the dropped element
        assert len(screen.table.source) == len(screen.rows)
        missing = next(i for i, row in enumerate(screen.rows) if row.kind == "missing")
        await pilot.press(*["j"] * missing)
        dashed = [b for b in screen.shot("ref").boxes if b.fill]
        assert len(dashed) == 1 and dashed[0].dashed  # the selected missing block, drawn dashed
        assert not any(b.fill for b in screen.shot("pred").boxes)  # nothing to show on the generated side
        await pilot.press("question_mark")
        from replay_tui.tui.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        assert any(row[3] == "inspector.worst" for row in app.screen.rows)
        await pilot.press("escape")
        assert app.screen is screen


def test_inspector_snapshot(snap_compare, tmp_path):
    async def run_before(pilot):
        await wait_scored(pilot.app, pilot)
        await pilot.press("w")
        pilot.app.clear_notifications()  # the "1. worst" toast times out: keep the picture deterministic
        await pilot.pause()

    app = InspectorApp(
        Path("replay_tui/visual/examples/ref/13470.html"),
        Path("replay_tui/visual/examples/reword/13470.html"),
        export_dir=tmp_path,
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


VIEWER = """
import pathlib, shutil, sys
shutil.copy(sys.argv[2], pathlib.Path(sys.argv[1]) / pathlib.Path(sys.argv[2]).name)
"""


async def test_open_the_overlay_in_the_viewer_and_save_it(tmp_path, monkeypatch):
    viewer, seen = tmp_path / "viewer.py", tmp_path / "seen"
    viewer.write_text(VIEWER)
    seen.mkdir()
    monkeypatch.setenv(VIEWER_ENV, f"{sys.executable} {viewer} {seen}")
    out = tmp_path / "out"
    app = InspectorApp(EXAMPLES / "ref" / "11202.html", EXAMPLES / "drop" / "11202.html", export_dir=out)
    async with app.run_test(size=SIZE) as pilot:
        await wait_scored(app, pilot)
        screen = app.screen
        await pilot.press("w")
        row = screen.selected()
        await pilot.press("o")  # the viewer gets both full-resolution overlays
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        screenshot = screen.images["ref"]
    opened = sorted(p.name for p in seen.iterdir())
    assert opened == ["drop-11202.pred.overlay.png", "drop-11202.ref.overlay.png"]
    overlay = Image.open(seen / "drop-11202.ref.overlay.png").convert("RGB")
    assert overlay.size == screenshot.size  # full resolution, not the terminal-sized picture
    x, y, w, h = row.ref.bbox
    centre = (int((x + w / 2) * overlay.width), int((y + h / 2) * overlay.height))
    assert overlay.getpixel(centre) != screenshot.getpixel(centre)  # the selected pair is filled
    saved = Image.open(out / "drop-11202.ref.overlay.png").convert("RGB")
    assert saved.tobytes() == overlay.tobytes()  # ctrl+s saves the same picture


async def test_a_saved_report_is_shown_as_saved(tmp_path, capsys):
    ref, gen = EXAMPLES / "ref" / "11202.html", EXAMPLES / "move" / "11202.html"
    saved = tmp_path / "r.json"
    assert cli_main(["visual", str(ref), str(gen), "--json", str(saved)]) == 0
    data = json.loads(saved.read_text())
    real = data["result"]["scores"]["final"]
    data["result"]["scores"]["final"] = 0.1234  # as if the page changed after the report was written
    saved.write_text(json.dumps(data))
    app = inspect_app([str(saved)], None)
    assert isinstance(app, InspectorApp)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert "0.1234" in screen.query_one("#scores").render().plain  # before any rendering
        await wait_scored(app, pilot)
        assert set(screen.images) == {"ref", "pred"}
        assert screen.result.scores.final == 0.1234
        warnings = [n.message for n in app._notifications]
        assert any("changed since the report" in m and f"{real:.4f}" in m for m in warnings)


def test_inspect_rejects_what_is_not_a_report(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"ref": "a.html"}))
    with pytest.raises(UsageError, match=r"bad\.json: not a visual report"):
        inspect_app([str(bad)], None)
    with pytest.raises(UsageError, match="no such page"):
        inspect_app(["x.html", "y.html"], None)
    with pytest.raises(UsageError, match="inspect takes"):
        inspect_app(["a", "b", "c"], None)
    from replay_tui.tui.visual.batch import VisualBatchApp

    bundled = inspect_app([], None)  # no arguments: the bundled page pairs
    assert isinstance(bundled, VisualBatchApp) and len(bundled.batch.pairs) == 16


def test_merged_blocks_carry_their_pieces():
    from replay_tui.visual.models import BlockModel, MatchModel, ModeResultModel, PageModel, ScoresModel

    def block(i, bbox, sources):
        return BlockModel(id=i, text=f"t{i}", bbox=bbox, color=(0, 0, 0), sources=sources)

    raw = [
        block(0, (0.1, 0.1, 0.2, 0.05), [0]),
        block(1, (0.1, 0.16, 0.2, 0.05), [1]),
        block(2, (0.5, 0.5, 0.1, 0.1), [2]),
    ]
    merged = [block(0, (0.1, 0.1, 0.2, 0.11), [0, 1]), block(1, (0.5, 0.5, 0.1, 0.1), [2])]
    page = PageModel(
        path="p.html",
        width=100,
        height=100,
        text_items=3,
        text_tags=3,
        raw_blocks=raw,
        bbox_merged=merged,
        blocks=merged,
    )
    assert merged_parts(page) == {0: ((0.1, 0.1, 0.2, 0.05), (0.1, 0.16, 0.2, 0.05))}
    result = ModeResultModel(
        mode="compat",
        status="ok",
        matches=[MatchModel(pred=0, ref=1, kept=True, text=0.9, position=0.8, color=0.7, area=0.1)],
        pred=page,
        ref=page,
        scores=ScoresModel(block=1, text=1, position=1, color=1, clip=None, final=0.8, final_partial=True),
    )
    rows = pair_rows(result)
    assert rows[0].pred_parts == merged_parts(page)[0] and rows[0].ref_parts == ()
    missing = [r for r in rows if r.kind == "missing"]
    assert [r.ref.id for r in missing] == [0] and missing[0].ref_parts == merged_parts(page)[0]


def test_the_selected_pair_is_framed_on_both_sides():
    from replay_tui.tui.visual.inspector import HALO, boxes_for
    from replay_tui.visual.models import BlockModel

    ref = BlockModel(id=0, text="a", bbox=(0.2, 0.2, 0.1, 0.1), color=(0, 0, 0))
    pred = BlockModel(id=0, text="a", bbox=(0.5, 0.5, 0.1, 0.1), color=(0, 0, 0))
    from replay_tui.visual.explain import PairRow

    row = PairRow("match", ref, pred, text=1.0, position=1.0, color=1.0, area=0.01)
    other = PairRow("missing", BlockModel(id=1, text="b", bbox=(0, 0, 0.1, 0.1), color=(0, 0, 0)), None)
    assert [b.color for b in boxes_for([row, other], "ref", None)].count(HALO) == 0
    ref_boxes = boxes_for([row, other], "ref", row, aspect=2.0)
    halo = ref_boxes[-1]
    assert halo.color == HALO and halo.x < 0.2 and halo.y < 0.2 and halo.x + halo.w > 0.3
    assert abs((0.2 - halo.x) - 2 * (0.2 - halo.y)) < 1e-9  # as wide on every side of a page twice as tall
    assert [b.dashed for b in ref_boxes[:-1]] == [False, True]  # the missing block is dashed
    assert boxes_for([row, other], "pred", row)[-1].x < 0.5


def test_explanations_give_the_numbers_each_score_is_made_of():
    from replay_tui.visual.explain import PairRow, explain
    from replay_tui.visual.models import BlockModel

    ref = BlockModel(id=0, text="a", bbox=(0.1, 0.1, 0.2, 0.1), color=(10, 20, 30))
    pred = BlockModel(id=0, text="a", bbox=(0.1, 0.15, 0.2, 0.1), color=(10, 20, 40))
    row = PairRow("match", ref, pred, text=0.9, position=0.95, color=0.97, area=0.04)
    why = explain(row, 0.08).plain
    assert "|Δx| 0.000" in why and "|Δy| 0.050" in why  # the centres moved down by 0.05
    assert "ΔE2000 3.0" in why and "rgb(10,20,30)" in why and "rgb(10,20,40)" in why
    assert "(50.0% of Block-Match's total)" in why
    missing = explain(PairRow("missing", ref, None), 0.08).plain
    assert missing.startswith("missing:") and "2.0% of both pages" in missing and "25.0% of Block-Match" in missing
    assert "0.420 < 0.5" in explain(PairRow("dropped", ref, pred, text=0.42), 0.08).plain
    assert explain(PairRow("extra", None, pred), 0.08).plain.startswith("hallucinated:")


FAILING_VIEWER = """
import sys
print("Error: no DISPLAY environment variable specified", file=sys.stderr)
sys.exit(3)
"""


@pytest.mark.parametrize("broken", ["exits", "missing"])
async def test_a_failing_viewer_is_reported_with_the_saved_paths(tmp_path, monkeypatch, broken):
    """``o`` with a viewer that fails (issue 16): the error and where the overlays are, not silence."""
    viewer = tmp_path / "viewer.py"
    viewer.write_text(FAILING_VIEWER)
    command = f"{sys.executable} {viewer}" if broken == "exits" else str(tmp_path / "no-such-viewer")
    monkeypatch.setenv(VIEWER_ENV, command)
    app = InspectorApp(EXAMPLES / "ref" / "11202.html", EXAMPLES / "drop" / "11202.html", export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_scored(app, pilot)
        await pilot.press("o")
        await pilot.pause()
        toasts = [str(n.message) for n in app._notifications]
    failed = [t for t in toasts if t.startswith("the image viewer failed:")]
    assert len(failed) == 1, toasts
    if broken == "exits":
        assert "exited with status 3: Error: no DISPLAY environment variable specified" in failed[0]
    else:
        assert "could not run" in failed[0] and "no-such-viewer" in failed[0]
    folder = failed[0].rsplit(" in ", 1)[1]
    pngs = sorted(p.name for p in Path(folder).glob("*.png"))
    assert len(pngs) == 2 and all(name in failed[0] for name in pngs)


@pytest.mark.slow
async def test_exports_are_named_by_the_pair_and_never_overwrite_without_asking(tmp_path):
    """Issue 16: drop/11202 and move/11202 both used to write 11202.visual.json, the second silently."""
    for variant in ("drop", "move"):
        app = InspectorApp(EXAMPLES / "ref" / "11202.html", EXAMPLES / variant / "11202.html", export_dir=tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await wait_scored(app, pilot)
            screen = app.screen
            assert f"{variant}/11202" in screen.query_one("#scores").render().plain
            titles = [t.render().plain for t in screen.query(".shot-title")]
            assert "ref/11202.html" in titles[0] and f"{variant}/11202.html" in titles[1]
            await pilot.press("e")
            await pilot.pause()
            exported = tmp_path / f"{variant}-11202.visual.json"
            assert json.loads(exported.read_text())["pred"].endswith(f"{variant}/11202.html")
            exported.write_text("kept")
            await pilot.press("e")  # the files exist now: a warning, nothing written
            await pilot.pause()
            assert exported.read_text() == "kept"
            assert any("press e again to replace" in str(n.message) for n in app._notifications)
            await pilot.press("e")  # asked and confirmed
            await pilot.pause()
            assert exported.read_text() != "kept"
    assert json.loads((tmp_path / "drop-11202.visual.json").read_text())["pred"].endswith("drop/11202.html")


@pytest.mark.slow
async def test_a_pair_without_blocks_says_why_and_the_renormalised_final_is_shown(tmp_path):
    app = InspectorApp(EXAMPLES / "ref" / "2310.html", EXAMPLES / "move" / "2310.html", export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_scored(app, pilot)
        scores = app.screen.query_one("#scores").render().plain
    assert "why no_blocks: the generated page has no text blocks: the repetition cut kept only its first" in scores
    assert "Final (4 metrics, renormalised) 0.0000" in scores
    app = InspectorApp(EXAMPLES / "ref" / "13470.html", EXAMPLES / "move" / "13470.html", export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_scored(app, pilot)
        screen = app.screen
        s = screen.result.scores
        scores = screen.query_one("#scores").render().plain
    assert s.clip is None and s.final_renormalised == (s.block + s.text + s.position + s.color) / 4
    renormalised = f"Final (4 metrics, renormalised) {s.final_renormalised:.4f}"
    assert f"Final {s.final:.4f} (partial: no CLIP)\n{renormalised}" in scores
    assert s.final_renormalised > 0.95 > 0.8 > s.final  # the near-perfect pair of the issue
