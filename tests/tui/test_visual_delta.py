"""Two generated folders on the visual batch screen: B − A per score (paired intervals) and per page."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from replay_tui.cli.visual import inspect_app
from replay_tui.tui.visual.batch import BatchSource, VisualBatchApp, VisualBatchScreen, page_key
from replay_tui.visual.batch import LABELS, discover_pairs
from replay_tui.visual.compare import VisualComparison, compare_batches
from replay_tui.visual.examples import EXAMPLES_DIR
from tests.visual.page_renders import CachedRenderer

from .test_visual_batch import SIZE, _kept_renders, shown, wait_batch  # noqa: F401 (a fixture: the kept renders)

pytestmark = pytest.mark.xdist_group("visual-pages")  # the renders of test_visual_batch.py's pages

PAGES = ("11202", "2310")  # two of the bundled pages: the smallest, and one that compat scores 0 either way


def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Copies of the bundled ref, move and reword folders with :data:`PAGES` only (each pair costs renders)."""
    copies = []
    for variant in ("ref", "move", "reword"):
        folder = tmp_path / "pages" / variant
        folder.mkdir(parents=True)
        for name in (*(f"{page}.html" for page in PAGES), "rick.jpg"):
            shutil.copy(EXAMPLES_DIR / variant / name, folder / name)
        copies.append(folder)
    return copies[0], copies[1], copies[2]


def summary_lines(screen: VisualBatchScreen) -> list[str]:
    return screen.query_one("#batch-delta").render().plain.splitlines()


def assert_summary_shows(screen: VisualBatchScreen, expected: VisualComparison) -> None:
    lines = summary_lines(screen)
    assert "B − A" in lines[0] and "B = reword · A = move" in lines[0]
    assert f"{expected.pages} pages" in lines[0]
    assert len(expected.scores) >= 5  # final and the four components (CLIP only with weights)
    for score in expected.scores:
        line = next(line for line in lines if line.startswith(LABELS[score.score] + " "))
        assert f"A {score.mean_a:.4f}  B {score.mean_b:.4f}" in line, line
        assert f"B − A {score.difference:+.4f} [{score.low:+.4f}, {score.high:+.4f}]" in line, line
        assert f"better {score.better} · worse {score.worse} · same {score.same}" in line, line


def delta_cells(screen: VisualBatchScreen) -> dict[str, str]:
    source = screen.table.source
    assert isinstance(source, BatchSource)
    assert source.columns[-1].label == "Δ final"
    return {source.pair(i).label: source.cells(i)[-1].plain for i in range(len(source))}


@pytest.mark.slow
async def test_two_folders_show_b_minus_a_per_score_and_a_delta_final_column(tmp_path, monkeypatch):
    ref, move, reword = folders(tmp_path)
    pairs, missing = discover_pairs(ref, [move, reword])
    assert not missing and len(pairs) == 2 * len(PAGES) == 4
    app = VisualBatchApp(pairs, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.batch
        assert "waiting for both folders" in summary_lines(screen)[0]
        await wait_batch(screen, pilot)
        assert all(p.report is not None for p in screen.pairs), [p.error for p in screen.pairs]

        # the same figures as compare_batches on the screen's rows, split by folder
        reports = screen.folder_reports()
        assert reports is not None
        first, second = reports
        assert first.pred_dir == str(move) and second.pred_dir == str(reword)
        assert sorted(r.name for r in first.rows) == sorted(r.name for r in second.rows) == sorted(PAGES)
        expected = compare_batches(first, second)
        assert expected.pages == 2 and not expected.only_a and not expected.only_b
        assert screen.comparison == expected
        assert_summary_shows(screen, expected)

        # Δ final on each reword (B) row: B − A of that page's final score; nothing on move (A) rows
        by_page = {pair.name: pair.delta("final") for pair in expected.pairs}
        cells = delta_cells(screen)
        for page in PAGES:
            assert cells[f"move/{page}"] == ""
            assert cells[f"reword/{page}"] == f"{by_page[page]:+.3f}"
            finals = {p.label: p.value("final") for p in screen.pairs}
            assert abs(finals[f"reword/{page}"] - finals[f"move/{page}"] - by_page[page]) < 1e-12

        await pilot.press("s", "S")  # sorted by final, best first: the deltas stay with their rows
        assert screen.sort_key == "final" and delta_cells(screen) == cells

        # a re-score (r) recomputes the comparison when it is done; its renders (kept from the first
        # scoring: instant) wait until the screen has been seen scoring
        seen = threading.Event()
        render_texts = CachedRenderer.render_texts

        def held(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            seen.wait(60)
            return render_texts(self, *args, **kwargs)

        monkeypatch.setattr(CachedRenderer, "render_texts", held)
        await pilot.press("g", "r")
        assert screen.scoring and "scoring again" in summary_lines(screen)[0]
        seen.set()
        await wait_batch(screen, pilot)
        assert "scoring again" not in summary_lines(screen)[0]
        rescored = compare_batches(*screen.folder_reports())  # type: ignore[misc]
        assert screen.comparison == rescored
        assert_summary_shows(screen, rescored)

        await pilot.press("e")  # export, reopened below: both folders' pairs already scored
        await pilot.pause()

    reopened = inspect_app([str(tmp_path / "visual-batch.json")], None)
    assert isinstance(reopened, VisualBatchApp)
    async with reopened.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = reopened.batch
        assert not screen.scoring
        assert screen.comparison is not None
        assert screen.comparison.scores == rescored.scores  # compared at once, no Chromium
        assert_summary_shows(screen, screen.comparison)
        assert delta_cells(screen) == {
            pair.label: "" if pair.pred.parent == move else f"{by_page[page_key(pair)]:+.3f}" for pair in screen.pairs
        }


async def test_one_folder_shows_no_comparison(tmp_path):
    ref, _, reword = folders(tmp_path)
    pairs, _ = discover_pairs(ref, [reword])
    app = VisualBatchApp(pairs, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.batch
        await wait_batch(screen, pilot)
        assert screen.folders is None and screen.folder_reports() is None and screen.comparison is None
        assert not screen.query("#batch-delta")
        source = screen.table.source
        assert isinstance(source, BatchSource)
        assert [c.key for c in source.columns][-1] == "clip" and len(source.cells(0)) == len(source.columns)
        assert all(p.report is not None for p in shown(screen))
