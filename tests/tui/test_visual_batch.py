"""The visual batch screen in the main app: score bundled pairs in real Chromium, sort, open, export."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from replay_tui.cli.visual import inspect_app
from replay_tui.tui.app import VisualBatch
from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.visual.batch import SCORES, BatchSource, VisualBatchApp, VisualBatchScreen
from replay_tui.tui.visual.inspector import InspectorScreen
from replay_tui.visual import render
from replay_tui.visual.batch import bundled_pairs, discover_pairs
from replay_tui.visual.examples import EXAMPLES_DIR, VARIANTS, example_ids
from tests.visual.page_renders import CachedRenderer

SIZE = (130, 36)

# The bundled pages' renders are kept for the worker (tests/visual/page_renders.py): these tests score the same
# pages again and again, and what they check is the screen, not the renders. On one worker, so they share them.
pytestmark = pytest.mark.xdist_group("visual-pages")


@pytest.fixture(autouse=True)
def _kept_renders(_one_browser_a_worker, _session_browsers, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's browser (tests/tui/conftest.py) with the worker's kept renders."""

    def kept(timeout_ms: int | None) -> tuple[CachedRenderer, bool]:
        return CachedRenderer(_session_browsers(timeout_ms)[0]), False

    monkeypatch.setattr(render, "renderer_factory", kept)


def two_pages(tmp_path: Path, *variants: str) -> list[Path]:
    """Copies of bundled folders with two of the pages only (each pair costs renders): 11202, the smallest,
    and 2310, which compat scores no_blocks 0 (the worst)."""
    copies = []
    for variant in variants:
        folder = tmp_path / "pages" / variant
        folder.mkdir(parents=True)
        for name in ("11202.html", "2310.html", "rick.jpg"):
            shutil.copy(EXAMPLES_DIR / variant / name, folder / name)
        copies.append(folder)
    return copies


async def wait_batch(screen: VisualBatchScreen, pilot) -> None:
    """Until the batch is done (a bound in time, not in polls: a loaded machine takes minutes)."""
    deadline = time.monotonic() + 300
    while True:
        await pilot.pause(0.05)
        if not screen.scoring or time.monotonic() > deadline:
            break
    await pilot.pause()


def shown(screen: VisualBatchScreen) -> list:
    source = screen.table.source
    assert isinstance(source, BatchSource)
    return [source.pair(i) for i in range(len(source))]


def test_bundled_pairs_are_every_page_against_every_variant():
    pairs = bundled_pairs()
    assert len(pairs) == len(example_ids()) * len(VARIANTS)
    assert {p.label.split("/")[0] for p in pairs} == set(VARIANTS)
    assert all(p.ref.parent.name == "ref" and p.pred.name == p.ref.name for p in pairs)


def test_discover_pairs_reports_missing_generated_pages(tmp_path):
    pred = tmp_path / "gen"
    pred.mkdir()
    first = example_ids()[0]
    (pred / f"{first}.html").write_text("<p>hello</p>")
    pairs, missing = discover_pairs(EXAMPLES_DIR / "ref", [pred])
    assert [p.label for p in pairs] == [first]
    assert len(missing) == len(example_ids()) - 1 and all(m.startswith("gen/") for m in missing)


@pytest.mark.slow
async def test_visual_screen_scores_sorts_opens_and_exports(build, tmp_path):
    ref, reword, drop = two_pages(tmp_path, "ref", "reword", "drop")
    app = build(visual=VisualBatch(ref, (reword, drop)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("v")
        screen = app.screen
        assert isinstance(screen, VisualBatchScreen)
        await wait_batch(screen, pilot)
        pairs = shown(screen)
        assert len(pairs) == 2 * 2
        assert all(p.report is not None and p.shots is not None for p in pairs), [p.error for p in pairs]
        title = screen.query_one("#batch-title").render().plain
        assert "mean" in title and "Final" in title
        for key in SCORES:  # s cycles pair -> final -> block -> text -> position -> color -> clip
            await pilot.press("s")
            assert screen.sort_key == key
            values = [p.value(key) for p in shown(screen) if p.value(key) is not None]
            assert values == sorted(values), key
        await pilot.press("s", "s")  # back to pair, then final
        assert screen.sort_key == "final"
        await pilot.press("S")
        finals = [p.value("final") for p in shown(screen)]
        assert finals == sorted(finals, reverse=True)
        await pilot.press("S", "g")
        worst = screen.selected()
        assert worst.value("final") == min(finals)
        await pilot.press("enter")
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        assert inspector.done and inspector.result == worst.report.result  # shown at once: no second render
        assert set(inspector.images) == {"ref", "pred"}
        await pilot.press("escape")
        assert app.screen is screen
        while screen.selected().status != "ok":  # the worst pages may have no blocks at all
            await pilot.press("j")
        await pilot.press("enter", "w")
        assert app.screen.selected().kind == "match"
        await pilot.press("escape")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("v")  # scored once, kept
        assert app.screen is screen and not screen.scoring
    saved = json.loads((tmp_path / "visual-batch.json").read_text())
    assert len(saved["rows"]) == len(pairs) and len(saved["pairs"]) == len(pairs)
    assert abs(saved["means"]["final"] - sum(finals) / len(finals)) < 1e-9
    table = (tmp_path / "visual-batch.md").read_text()
    assert table.count("\n| ") == len(pairs) + 3  # header, rule, rows, mean

    reopened = inspect_app([str(tmp_path / "visual-batch.json")], None)
    assert isinstance(reopened, VisualBatchApp)
    assert [p.label for p in reopened.batch.pairs] == [r["name"] for r in saved["rows"]]
    assert all(p.report is not None for p in reopened.batch.pairs)


async def test_a_page_that_fails_is_a_row_not_a_crash(tmp_path):
    ref, gen = tmp_path / "ref", tmp_path / "gen"
    ref.mkdir()
    gen.mkdir()
    (ref / "a.html").write_text("<html><body><h1>Title</h1><p>Some text here</p></body></html>")
    (gen / "a.html").write_text("<html><body><h1>Title</h1><p>Other text here</p></body></html>")
    (ref / "b.html").write_bytes(b"<html><body><p>fine</p></body></html>")
    (gen / "b.html").write_bytes(b"\xff\xfe<not html")
    pairs, _ = discover_pairs(ref, [gen])
    app = VisualBatchApp(pairs, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.batch
        await wait_batch(screen, pilot)
        statuses = {p.label: p.status for p in screen.pairs}
        assert statuses["a"] == "ok"
        assert statuses["b"] != "queued"  # scored (perhaps with no blocks), never stuck
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and app.screen is screen  # esc on the first screen goes nowhere; q quits
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
    assert app.return_code == 0 or app.return_code is None


@pytest.mark.slow
def test_visual_batch_snapshot(snap_compare, tmp_path):
    """The batch screen sorted by final score, worst first (scores from real renders)."""

    async def run_before(pilot):
        await wait_batch(pilot.app.batch, pilot)
        await pilot.press("s", "g")
        pilot.app.clear_notifications()
        await pilot.pause()

    pairs, _ = discover_pairs(EXAMPLES_DIR / "ref", [EXAMPLES_DIR / "reword"])
    app = VisualBatchApp(pairs, export_dir=tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


async def test_the_batch_says_why_a_pair_has_no_blocks_and_shows_the_renormalised_final(tmp_path):
    """Issue 16: the bundled 2310 pairs scored no_blocks 0.000 with no explanation."""
    ref, move = two_pages(tmp_path, "ref", "move")
    pairs, _ = discover_pairs(ref, [move])
    app = VisualBatchApp(pairs, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.batch
        await wait_batch(screen, pilot)
        await pilot.press("s", "g")  # by final, worst first: 2310
        assert screen.selected().label == "2310" and screen.selected().status == "no_blocks"
        status = screen.query_one("#batch-status").render().plain
        assert status.startswith("why no_blocks: the generated page has no text blocks: the repetition cut kept")
        await pilot.press("j")
        assert screen.selected().status == "ok"
        assert screen.query_one("#batch-status").render().plain.startswith("enter opens a pair")
        title = screen.query_one("#batch-title").render().plain
        rows = [p.report.result.scores for p in screen.pairs]
        mean = sum(s.final_renormalised for s in rows) / len(rows)
        assert f"Final (4 metrics, renormalised) {mean:.4f}" in title
        await pilot.press("e")
        await pilot.pause()
    table = (tmp_path / "visual-batch.md").read_text()
    assert "| Final (4 metrics, renormalised) | why |" in table
    assert "| 2310 | no_blocks |" in table and "the repetition cut kept only its first" in table
