"""Benchmark: moving through the inspector's pair table, cached half-block screenshots vs a naive renderer.

Run by hand (not in CI):

    python bench/bench_inspector.py [--page 9656] [--variant reword] [--presses 40]

Scores one bundled pair once (real Chromium), then drives the inspector headless at 150x42 with a
Pilot: each press of ``j`` selects the next pair, which redraws both screenshots with the new
highlight and scrolls them. Measured at zoom 1 and zoom 4 (``z z``), first with the shipped
renderer (scaled screenshot cached, boxes drawn on the small picture, only the visible rows turned
into cached segments), then with a naive renderer that rescales the full screenshot and builds every
row of segments, one Style per pixel, on each change (what the first version did). Prints ms per
press and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZE = (150, 42)


def naive_widget():
    from PIL import Image
    from rich.color import Color
    from rich.segment import Segment
    from rich.style import Style
    from textual.geometry import Size
    from textual.strip import Strip

    from replay_tui.tui.widgets.halfblock import HalfBlockImage, draw_boxes, scale_image

    def all_rows(image: Image.Image) -> list[list[Segment]]:
        width, height = image.size
        pixels = image.load()
        rows = []
        for top in range(0, height, 2):
            segments = []
            for x in range(width):
                upper = pixels[x, top]
                lower = pixels[x, top + 1] if top + 1 < height else (0, 0, 0)
                segments.append(
                    Segment("▀", Style(color=Color.from_rgb(*upper[:3]), bgcolor=Color.from_rgb(*lower[:3])))
                )
            rows.append(list(Segment.simplify(segments)))
        return rows

    class NaiveHalfBlockImage(HalfBlockImage):
        """Rescale, redraw and rebuild every row on any change."""

        def _prepare(self) -> None:
            width = max(1, self.scrollable_content_region.width)
            key = (id(self.image), width, self.zoom)
            if key == self._key:
                return
            self._key = key
            small = draw_boxes(scale_image(self.image, width, self.zoom), self.boxes)
            self._all = all_rows(small)
            self._pixels = None
            self.virtual_size = Size(small.width, len(self._all))

        @property
        def row_count(self) -> int:
            self._prepare()
            return len(self._all)

        def render_line(self, y: int) -> Strip:
            self._prepare()
            width = self.scrollable_content_region.width
            index = round(self.scroll_offset.y) + y
            if index >= len(self._all):
                return Strip([Segment(" " * width)])
            x = round(self.scroll_offset.x)
            return Strip(self._all[index]).crop_extend(x, x + width, None)

    return NaiveHalfBlockImage


async def drive(report, shots, presses: int, zoom_keys: list[str]) -> tuple[float, float]:
    """(ms per key press through the Pilot, ms of widget work per selection change)."""
    from replay_tui.tui.visual.inspector import InspectorApp
    from replay_tui.tui.widgets.halfblock import HalfBlockImage

    app = InspectorApp(report.ref, report.pred, report=report, export_dir=Path(tempfile.mkdtemp()))
    app.target.shots = shots
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        for key in zoom_keys:
            await pilot.press(key)
            await pilot.pause(0.05)
        started = time.perf_counter()
        for _ in range(presses):
            await pilot.press("j")
            await pilot.pause()
        per_press = (time.perf_counter() - started) / presses * 1000
        screen = app.screen
        views = list(screen.query(HalfBlockImage).results())
        started = time.perf_counter()
        for index in range(presses):  # the same work without the Pilot: highlight, scroll, draw visible rows
            screen.table.cursor = index % len(screen.rows)
            screen._highlight()
            for view in views:
                for y in range(view.size.height):
                    view.render_line(y)
        work = (time.perf_counter() - started) / presses * 1000
        return per_press, work


def main() -> None:
    from PIL import Image

    from replay_tui.tui.widgets import shot_view
    from replay_tui.visual.examples import example_pair
    from replay_tui.visual.pipeline import VisualScorer
    from replay_tui.visual.report import pair_report

    parser = argparse.ArgumentParser()
    parser.add_argument("--page", default="9656")
    parser.add_argument("--variant", default="reword")
    parser.add_argument("--presses", type=int, default=40)
    args = parser.parse_args()
    ref, pred = example_pair(args.page, args.variant)
    with VisualScorer() as scorer:
        results = scorer.score(ref, pred)
    report = pair_report(str(ref), str(pred), results, "compat")
    folder = Path(tempfile.mkdtemp())
    shots = (folder / "ref.png", folder / "pred.png")
    Image.fromarray(results["compat"].ref.image).save(shots[0])
    Image.fromarray(results["compat"].pred.image).save(shots[1])
    height = results["compat"].ref.image.shape[0]
    print(
        f"pair {args.variant}/{args.page}: screenshot 1280x{height}, {len(report.result.matches)} pairs, "
        f"{args.presses} presses of j, {SIZE[0]}x{SIZE[1]}"
    )
    shipped = shot_view.HalfBlockImage
    for label, keys in (("zoom 1", []), ("zoom 4", ["z", "z"])):
        fast, fast_work = asyncio.run(drive(report, shots, args.presses, keys))
        shot_view.HalfBlockImage = naive_widget()
        try:
            slow, slow_work = asyncio.run(drive(report, shots, args.presses, keys))
        finally:
            shot_view.HalfBlockImage = shipped
        print(
            f"{label}: key press through the Pilot {fast:6.1f} ms vs {slow:6.1f} ms naive ({slow / fast:.1f}x); "
            f"screenshot work per selection {fast_work:6.2f} ms vs {slow_work:7.2f} ms "
            f"({slow_work / fast_work:.0f}x)"
        )
    print("(the Pilot floor: a key press in the session browser costs about the same as the shipped inspector)")


if __name__ == "__main__":
    main()
