"""The visual-metric inspector: both screenshots with their blocks, and why each pair scored what it did.

Scoring runs in a worker (one Chromium for the pair); the screen shows the reference and the
generated screenshot side by side (half-block renderer: the same in every terminal and in
snapshots), matched blocks outlined in one colour on both sides, missing reference blocks in red,
hallucinated generated blocks in orange, and one table row per pair. Selecting a row highlights
the pair on both pictures and scrolls them to it.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from PIL import Image
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from replay_tui.fileio import atomic_write_bytes, atomic_write_text
from replay_tui.sanitize import strip_control
from replay_tui.tui.widgets.halfblock import Box, HalfBlockImage, draw_boxes
from replay_tui.tui.widgets.lazy_table import Column, LazyTable
from replay_tui.visual.models import BlockModel, ModeResultModel, PairReport

PALETTE: tuple[tuple[int, int, int], ...] = (
    (31, 119, 180), (44, 160, 44), (148, 103, 189), (23, 190, 207), (140, 86, 75), (227, 119, 194),
    (127, 127, 127), (188, 189, 34), (57, 106, 177), (62, 150, 81),
)
MISSING = (214, 39, 40)  # a reference block the generated page lacks
EXTRA = (255, 127, 14)  # a generated block the reference does not have
SORT_KEYS = ("text", "position", "color", "area")


@dataclass(frozen=True)
class PairRow:
    """A table row: a kept match, a dropped pair (text < 0.5), a missing or an extra block."""

    kind: str  # match | dropped | missing | extra
    ref: BlockModel | None
    pred: BlockModel | None
    text: float | None = None
    position: float | None = None
    color: float | None = None
    area: float | None = None
    colour_index: int = 0

    def score(self, key: str) -> float:
        value = getattr(self, key)
        return -1.0 if value is None else value


def pair_rows(result: ModeResultModel) -> list[PairRow]:
    """Kept matches first (in generated-block order), then dropped pairs, missing and extra blocks."""
    ref_blocks = {b.id: b for b in result.ref.blocks}
    pred_blocks = {b.id: b for b in result.pred.blocks}
    rows: list[PairRow] = []
    kept = [m for m in result.matches if m.kept]
    for number, match in enumerate(kept):
        rows.append(PairRow("match", ref_blocks.get(match.ref), pred_blocks.get(match.pred), match.text,
                            match.position, match.color, match.area, number))
    for match in result.matches:
        if not match.kept:
            rows.append(PairRow("dropped", ref_blocks.get(match.ref), pred_blocks.get(match.pred), match.text))
    matched_ref = {m.ref for m in kept}
    matched_pred = {m.pred for m in kept}
    rows += [PairRow("missing", block, None) for block in result.ref.blocks if block.id not in matched_ref]
    rows += [PairRow("extra", None, block) for block in result.pred.blocks if block.id not in matched_pred]
    return rows


def boxes_for(rows: Sequence[PairRow], side: str, selected: PairRow | None) -> list[Box]:
    """The outlines to draw on one side ("ref" or "pred"); the selected pair filled and thicker."""
    boxes = []
    for row in rows:
        block = row.ref if side == "ref" else row.pred
        if block is None or row.kind == "dropped":
            continue
        colour = PALETTE[row.colour_index % len(PALETTE)] if row.kind == "match" else (
            MISSING if row.kind == "missing" else EXTRA)
        chosen = row is selected
        boxes.append(Box(*block.bbox, color=colour, width=2 if chosen else 1, fill=chosen))
    return boxes


def markdown_summary(result: ModeResultModel, rows: Sequence[PairRow], *, worst: int = 10) -> str:
    """A Markdown summary: the five scores and the worst pairs by text similarity."""
    s = result.scores
    clip = "n/a" if s.clip is None else f"{s.clip:.4f}"
    lines = [
        "## Visual scores", "",
        f"`{strip_control(result.ref.path)}` vs `{strip_control(result.pred.path)}` "
        f"({result.mode} mode, {result.status})",
        "", "| Block-Match | Text | Position | Color | CLIP | Final |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {s.block:.4f} | {s.text:.4f} | {s.position:.4f} | {s.color:.4f} | {clip} | {s.final:.4f}"
        f"{' (partial)' if s.final_partial else ''} |", "",
        "### Worst pairs", "", "| kind | reference | generated | text | position | colour |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]

    def cell(block: BlockModel | None) -> str:
        text = " ".join(strip_control(block.text).split())[:60] if block else "—"
        return text.replace("|", "\\|").replace("`", "'")

    def num(value: float | None) -> str:
        return "" if value is None else f"{value:.3f}"

    for row in sorted(rows, key=lambda r: (r.kind == "match", r.score("text")))[:worst]:
        lines.append(f"| {row.kind} | {cell(row.ref)} | {cell(row.pred)} | {num(row.text)} | {num(row.position)} "
                     f"| {num(row.color)} |")
    return "\n".join(lines) + "\n"


class RowsSource:
    columns: Sequence[Column] = (
        Column("kind", "kind", 7),
        Column("ref", "reference text", flex=True),
        Column("pred", "generated text", flex=True),
        Column("text", "text", 5, justify="right"),
        Column("position", "pos", 5, justify="right"),
        Column("color", "colour", 6, justify="right"),
        Column("area", "area", 6, justify="right"),
        Column("swatch", "ref gen", 7),
    )

    def __init__(self, rows: list[PairRow]):
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def row_style(self, index: int) -> str:
        kind = self.rows[index].kind
        return {"missing": "red", "extra": "dark_orange", "dropped": "dim"}.get(kind, "")

    def cells(self, index: int) -> Sequence[Text]:
        row = self.rows[index]

        def text(block: BlockModel | None) -> Text:
            return Text(" ".join(strip_control(block.text).split()) if block else "—")

        def num(value: float | None) -> Text:
            return Text("" if value is None else f"{value:.2f}", style="bold red" if value is not None
                        and value < 0.5 else "")

        swatch = Text()
        for block in (row.ref, row.pred):
            if block is None:
                swatch.append("   ")
            else:
                r, g, b = (round(c) for c in block.color)
                swatch.append("██ ", style=f"rgb({r},{g},{b})")
        colour = PALETTE[row.colour_index % len(PALETTE)] if row.kind == "match" else (
            MISSING if row.kind == "missing" else EXTRA)
        kind = Text("■ ", style="rgb({},{},{})".format(*colour)) if row.kind != "dropped" else Text("  ")
        kind.append(row.kind)
        area = Text("" if row.area is None else f"{row.area:.1%}")
        return [kind, text(row.ref), text(row.pred), num(row.text), num(row.position), num(row.color), area, swatch]


class Scored(Message):
    def __init__(self, result: ModeResultModel | None, ref: Image.Image | None, pred: Image.Image | None,
                 error: str | None = None, report: PairReport | None = None):
        super().__init__()
        self.result = result
        self.report = report
        self.ref = ref
        self.pred = pred
        self.error = error


class InspectorScreen(Screen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("w", "worst", "Worst", id="inspector.worst"),
        Binding("s", "sort", "Sort by", id="inspector.sort"),
        Binding("z", "zoom", "Zoom", id="inspector.zoom"),
        Binding("o", "open_overlay", "Open PNG", id="inspector.open"),
        Binding("e", "export", "Export", id="inspector.export"),
        Binding("escape,q", "app.quit", "Quit", id="inspector.quit"),
    ]

    def __init__(self) -> None:
        super().__init__(id="inspector")
        self.result: ModeResultModel | None = None
        self.rows: list[PairRow] = []
        self.images: dict[str, Image.Image] = {}
        self.sort_key = "text"
        self.zoom = 1.0
        self._worst_position: int | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("scoring the pair in headless Chromium…", style="italic"), id="scores")
        with Horizontal(id="shots"):
            with Vertical():
                yield Static(Text("reference", style="bold"), classes="shot-title")
                yield HalfBlockImage(id="ref-image")
            with Vertical():
                yield Static(Text("generated", style="bold"), classes="shot-title")
                yield HalfBlockImage(id="pred-image")
        yield LazyTable(id="pairs")
        yield Footer()

    @property
    def table(self) -> LazyTable:
        return self.query_one("#pairs", LazyTable)

    def show(self, result: ModeResultModel, ref: Image.Image, pred: Image.Image) -> None:
        self.result = result
        self.images = {"ref": ref, "pred": pred}
        self.rows = pair_rows(result)
        self.query_one("#ref-image", HalfBlockImage).set_image(ref)
        self.query_one("#pred-image", HalfBlockImage).set_image(pred)
        self.table.set_source(RowsSource(self.rows), cursor=0)
        self.table.focus()
        self.update_scores()

    def update_scores(self) -> None:
        if self.result is None:
            return
        s = self.result.scores
        text = Text()
        for name, value in (("Block-Match", s.block), ("Text", s.text), ("Position", s.position),
                            ("Color", s.color), ("CLIP", s.clip)):
            text.append(f"{name} ", style="dim")
            text.append("n/a  " if value is None else f"{value:.4f}  ", style="bold")
        text.append("Final ", style="dim")
        text.append(f"{s.final:.4f}", style="bold green")
        if s.final_partial:
            text.append(" (partial: no CLIP)", style="yellow")
        kinds = {k: sum(1 for r in self.rows if r.kind == k) for k in ("match", "dropped", "missing", "extra")}
        text.append(f"\n{self.result.mode} · {self.result.status} · {kinds['match']} matched, {kinds['missing']} "
                    f"missing, {kinds['extra']} extra, {kinds['dropped']} dropped · sort: {self.sort_key}",
                    style="dim")
        self.query_one("#scores", Static).update(text)

    def selected(self) -> PairRow | None:
        source = self.table.source
        if not isinstance(source, RowsSource) or not len(source):
            return None
        return source.rows[self.table.cursor]

    @on(LazyTable.Highlighted, "#pairs")
    def _highlight(self) -> None:
        row = self.selected()
        for side in ("ref", "pred"):
            image = self.query_one(f"#{side}-image", HalfBlockImage)
            image.set_boxes(boxes_for(self.rows, side, row))
            block = None if row is None else (row.ref if side == "ref" else row.pred)
            if block is not None:
                image.scroll_to_box(Box(*block.bbox, color=(0, 0, 0)))

    def action_sort(self) -> None:
        self.sort_key = SORT_KEYS[(SORT_KEYS.index(self.sort_key) + 1) % len(SORT_KEYS)]
        self._worst_position = None
        self.update_scores()

    def action_worst(self) -> None:
        """Jump to the lowest-scoring pair by the current key (then the next worst on each press)."""
        source = self.table.source
        if not isinstance(source, RowsSource):
            return
        ranked = sorted((i for i, r in enumerate(source.rows) if r.kind == "match"),
                        key=lambda i: (source.rows[i].score(self.sort_key), i))
        if not ranked:
            self.notify("no matched pairs", severity="warning")
            return
        current = self.table.cursor
        position = self._worst_position
        if position is not None and position < len(ranked) and ranked[position] == current:
            position = (position + 1) % len(ranked)  # pressed again: the next worst
        else:
            position = 0
        self._worst_position = position
        self.table.set_cursor(ranked[position])

    def action_zoom(self) -> None:
        self.zoom = {1.0: 2.0, 2.0: 4.0}.get(self.zoom, 1.0)
        row = self.selected()
        for side in ("ref", "pred"):
            image = self.query_one(f"#{side}-image", HalfBlockImage)
            image.set_zoom(self.zoom)
            block = None if row is None else (row.ref if side == "ref" else row.pred)
            if block is not None:
                image.scroll_to_box(Box(*block.bbox, color=(0, 0, 0)))
        self.notify(f"zoom {self.zoom:.0f}x", timeout=1)

    def overlay(self, side: str) -> Image.Image:
        """The full-resolution screenshot with every block outlined (the selected one filled)."""
        return draw_boxes(self.images[side], boxes_for(self.rows, side, self.selected()))

    def action_open_overlay(self) -> None:
        if not self.images:
            return
        directory = Path(tempfile.mkdtemp(prefix="replay-tui-overlay-"))
        paths = []
        for side in ("ref", "pred"):
            path = directory / f"{side}.png"
            self.overlay(side).save(path)
            paths.append(path)
        opener = shutil.which("xdg-open") or shutil.which("open")
        if opener is None:
            self.notify(f"overlays saved to {directory} (no image viewer found)", timeout=4, markup=False)
            return
        with self.app.suspend():
            for path in paths:
                subprocess.run([opener, str(path)], check=False)

    def action_export(self) -> None:
        """Write the JSON report, a Markdown summary and both overlay PNGs to the export folder."""
        app = self.app
        if self.result is None or not isinstance(app, InspectorApp):
            return
        out = app.export_dir
        out.mkdir(parents=True, exist_ok=True)
        stem = Path(self.result.pred.path).stem
        report = app.report.model_dump_json(by_alias=True, indent=2) if app.report else self.result.model_dump_json(
            indent=2)
        atomic_write_bytes(out / f"{stem}.visual.json", report.encode("utf-8"))  # as `visual --json` writes it
        atomic_write_text(out / f"{stem}.visual.md", markdown_summary(self.result, self.rows))
        for side in ("ref", "pred"):
            buffer = io.BytesIO()
            self.overlay(side).save(buffer, format="PNG")
            atomic_write_bytes(out / f"{stem}.{side}.overlay.png", buffer.getvalue())
        self.notify(f"exported {stem}.visual.json, .md and overlays to {out}", timeout=3, markup=False)


class InspectorApp(App[None]):
    """``replay-tui visual REF GEN --tui`` / ``replay-tui inspect RESULT.json``."""

    TITLE = "replay-tui visual inspector"
    CSS = """
    #scores { height: 2; padding: 0 1; }
    #shots { height: 3fr; }
    #shots Vertical { width: 1fr; }
    .shot-title { height: 1; padding: 0 1; }
    #pairs { height: 2fr; border-top: hkey $panel; }
    """

    def __init__(self, ref: str | Path, pred: str | Path, *, mode: str = "compat", export_dir: Path | None = None,
                 timeout_ms: int = 30_000):
        super().__init__()
        self.ref = str(ref)
        self.pred = str(pred)
        self.mode = mode
        self.export_dir = export_dir or Path.cwd()
        self.timeout_ms = timeout_ms
        self.done = False
        self.report: PairReport | None = None

    def on_mount(self) -> None:
        self.push_screen(InspectorScreen())
        self._score()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _score(self) -> None:
        from replay_tui.visual.pipeline import VisualScorer
        from replay_tui.visual.report import pair_report

        try:
            modes = ("compat", "fixed") if self.mode == "fixed" else ("compat",)
            with VisualScorer(timeout_ms=self.timeout_ms) as scorer:
                results = scorer.score(self.ref, self.pred, modes)
            result = results[self.mode]
            blank = Image.new("RGB", (1280, 720), "white")
            ref_img = Image.fromarray(result.ref.image) if result.ref.image is not None else blank
            pred_img = Image.fromarray(result.pred.image) if result.pred.image is not None else blank
            report = pair_report(self.ref, self.pred, results, self.mode)
            self.post_message(Scored(report.result, ref_img, pred_img, report=report))
        except Exception as exc:  # rendering failures are shown, not raised
            self.post_message(Scored(None, None, None, f"{type(exc).__name__}: {exc}"))

    @on(Scored)
    def _scored(self, message: Scored) -> None:
        self.done = True
        screen = self.screen
        if message.error or message.result is None or not isinstance(screen, InspectorScreen):
            self.notify(strip_control(message.error or "scoring failed"), severity="error", markup=False)
            return
        self.report = message.report
        screen.show(message.result, message.ref, message.pred)
