"""The visual-metric inspector: both screenshots with their blocks, and why each pair scored what it did.

Scoring runs in a worker (one Chromium for the pair); the screen shows the reference and the
generated screenshot side by side, matched blocks outlined in one colour on both sides, missing
reference blocks dashed red, hallucinated generated blocks solid orange, merged blocks with their
pieces drawn inside, and one table row per pair. Selecting a row highlights the pair on both
pictures and scrolls them to it. The screen is self-contained so the standalone
:class:`InspectorApp` and the main app's visual batch screen push the same thing. The rows, the
explanations and the scoring are :mod:`replay_tui.visual.explain`'s; this module draws them.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from PIL import Image
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from replay_tui.fileio import atomic_write_bytes, atomic_write_text
from replay_tui.sanitize import one_line, strip_control
from replay_tui.tui.app_base import STYLES, ToolApp
from replay_tui.tui.widgets.footer import KeysFooter
from replay_tui.tui.widgets.halfblock import Box, draw_boxes
from replay_tui.tui.widgets.lazy_table import Column, LazyTable
from replay_tui.tui.widgets.shot_view import ShotView
from replay_tui.visual.explain import PairRow, block_match_total, explain, markdown_summary, pair_rows, score_pair
from replay_tui.visual.models import BlockModel, ModeResultModel, PairReport
from replay_tui.visual.scores import RENORMALISED

PALETTE: tuple[tuple[int, int, int], ...] = (
    (31, 119, 180),
    (44, 160, 44),
    (148, 103, 189),
    (23, 190, 207),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (57, 106, 177),
    (62, 150, 81),
)
MISSING = (214, 39, 40)  # a reference block the generated page lacks (drawn dashed)
EXTRA = (255, 127, 14)  # a generated block the reference does not have (drawn solid)
HALO = (255, 221, 0)  # a frame around the selected pair, so a small block stands out at any zoom
HALO_MARGIN = 0.012  # of the page width
SORT_KEYS = ("text", "position", "color", "area")
VIEWER_ENV = "REPLAY_TUI_VIEWER"


def row_colour(row: PairRow) -> tuple[int, int, int]:
    if row.kind == "match":
        return PALETTE[row.colour_index % len(PALETTE)]
    return MISSING if row.kind == "missing" else EXTRA


def boxes_for(rows: Sequence[PairRow], side: str, selected: PairRow | None, *, aspect: float = 1.0) -> list[Box]:
    """The outlines to draw on one side ("ref" or "pred"); the selected pair filled, thicker and framed.

    ``aspect`` is the page's height / width, so the frame is as wide on every side."""
    boxes = []
    halo = None
    for row in rows:
        block = row.block(side)
        if block is None or row.kind == "dropped":
            continue
        chosen = row is selected
        boxes.append(
            Box(
                *block.bbox,
                color=row_colour(row),
                width=2 if chosen else 1,
                fill=chosen,
                dashed=row.kind == "missing",
                parts=row.parts(side),
            )
        )
        if chosen:
            x, y, w, h = block.bbox
            dx, dy = HALO_MARGIN, HALO_MARGIN / max(aspect, 1e-6)
            halo = Box(x - dx, y - dy, w + 2 * dx, h + 2 * dy, color=HALO, width=1)
    if halo is not None:
        boxes.append(halo)  # drawn last: on top of neighbours
    return boxes


class RowsSource:
    columns: Sequence[Column] = (
        Column("kind", "kind", 11),
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
            return Text(one_line(block.text) if block else "—")

        def num(value: float | None) -> Text:
            return Text(
                "" if value is None else f"{value:.2f}", style="bold red" if value is not None and value < 0.5 else ""
            )

        swatch = Text()
        for block in (row.ref, row.pred):
            if block is None:
                swatch.append("   ")
            else:
                r, g, b = (round(c) for c in block.color)
                swatch.append("██ ", style=f"rgb({r},{g},{b})")
        marker = {"missing": "┄ ", "dropped": "  "}.get(row.kind, "■ ")
        kind = Text(marker, style="rgb({},{},{})".format(*row_colour(row)))
        kind.append(row.kind)
        merged = max(len(row.ref_parts), len(row.pred_parts))
        if merged:
            kind.append(f" ⊕{merged}", style="dim")
        area = Text("" if row.area is None else f"{row.area:.1%}")
        return [kind, text(row.ref), text(row.pred), num(row.text), num(row.position), num(row.color), area, swatch]


@dataclass
class InspectTarget:
    """What to inspect: a page pair, optionally with its saved report and already rendered screenshots."""

    ref: str
    pred: str
    mode: str = "compat"
    report: PairReport | None = None  # shown at once; the pages are rendered again only for the screenshots
    shots: tuple[Path, Path] | None = None  # (reference, generated) screenshot PNGs from the same scoring
    timeout_ms: int = 30_000
    clip_scorer: object | None = None
    export_dir: Path = field(default_factory=Path.cwd)

    @property
    def name(self) -> str:
        """The pair, named by its generated page and that page's folder (the variant: ``move/11202``)."""
        pred = Path(self.pred)
        return f"{pred.parent.name}/{pred.stem}" if pred.parent.name else pred.stem

    @property
    def file_stem(self) -> str:
        """:attr:`name` as a file name (``move-11202``), so exports of two variants never collide."""
        return re.sub(r"[^\w.-]+", "-", strip_control(self.name)).strip("-.") or "pair"


class Scored(Message):
    """The worker's result: the report and both screenshots, or an error."""

    def __init__(
        self, report: PairReport | None, ref: Image.Image | None, pred: Image.Image | None, error: str | None = None
    ):
        super().__init__()
        self.report = report
        self.ref = ref
        self.pred = pred
        self.error = error


def viewer_command() -> list[str] | None:
    """The image viewer: ``$REPLAY_TUI_VIEWER`` (a command line), else xdg-open / open."""
    configured = os.environ.get(VIEWER_ENV, "").strip()
    if configured:
        return shlex.split(configured)
    opener = shutil.which("xdg-open") or shutil.which("open")
    return [opener] if opener else None


class InspectorScreen(Screen):
    """One page pair: scores, both screenshots with their blocks, the pair table."""

    CSS_PATH = STYLES / "inspector.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("w", "worst", "Worst", id="inspector.worst"),
        Binding("W", "worst(-1)", "Previous worst", show=False, id="inspector.previous_worst"),
        Binding("s", "sort", "Rank by", id="inspector.sort"),
        Binding("z", "zoom", "Zoom", id="inspector.zoom"),
        Binding("o", "open_overlay", "Open PNG", id="inspector.open"),
        Binding("ctrl+s", "save_overlay", "Save PNG", id="inspector.save"),
        Binding("e", "export", "Export", id="inspector.export"),
        Binding("escape", "close", "Back", id="inspector.close"),
    ]

    def __init__(self, target: InspectTarget, *, quit_on_close: bool = False) -> None:
        super().__init__(id="inspector")
        self.target = target
        self.quit_on_close = quit_on_close
        self.report: PairReport | None = target.report
        self.result: ModeResultModel | None = None
        self.rows: list[PairRow] = []
        self.images: dict[str, Image.Image] = {}
        self.sort_key = "text"
        self.zoom = 1.0
        self.done = False
        self._worst_position: int | None = None
        self._overwrite: tuple[Path, ...] = ()  # files the user was told exist: the same key again replaces them

    def compose(self) -> ComposeResult:
        yield Static(Text("scoring the pair in headless Chromium…", style="italic"), id="scores")
        with Horizontal(id="shots"):
            with Vertical():
                yield Static(Text("reference", style="bold"), classes="shot-title")
                yield ShotView(id="ref-image")
            with Vertical():
                yield Static(Text("generated", style="bold"), classes="shot-title")
                yield ShotView(id="pred-image")
        yield Static(id="why")
        yield LazyTable(id="pairs")
        yield KeysFooter()

    def on_mount(self) -> None:
        titles = self.query(".shot-title").results(Static)
        for title, (label, path) in zip(
            titles, (("reference", self.target.ref), ("generated", self.target.pred)), strict=False
        ):
            line = Text(label, style="bold")
            page = Path(path)
            line.append(f"  {strip_control(page.parent.name + '/' if page.parent.name else '')}", style="dim")
            line.append(strip_control(page.name), style="dim")
            title.update(line)
        shots = self.target.shots
        if self.report is not None:
            images = None
            if shots is not None:
                try:
                    images = (Image.open(shots[0]).convert("RGB"), Image.open(shots[1]).convert("RGB"))
                except OSError as exc:
                    self.notify(f"screenshots unreadable, rendering again: {exc}", severity="warning", markup=False)
            self.show(self.report.result, *(images or (None, None)))
            if images is not None:
                self.done = True
                return
        self._score()

    # -- scoring ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="inspector")
    def _score(self) -> None:
        try:
            target = self.target
            report, ref_img, pred_img = score_pair(
                target.ref, target.pred, target.mode, timeout_ms=target.timeout_ms, clip_scorer=target.clip_scorer
            )
        except Exception as exc:  # rendering failures are shown, not raised
            self.post_message(Scored(None, None, None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(Scored(report, ref_img, pred_img))

    @on(Scored)
    def _scored(self, message: Scored) -> None:
        self.done = True
        if message.error or message.report is None:
            self.notify(strip_control(message.error or "scoring failed"), severity="error", markup=False)
            if self.result is None:
                self.query_one("#scores", Static).update(
                    Text(strip_control(message.error or "scoring failed"), style="bold red")
                )
            return
        if self.result is not None:  # a saved report: keep its numbers, take the screenshots
            saved, now = self.result.scores.final, message.report.result.scores.final
            if abs(saved - now) > 1e-9:
                self.notify(
                    f"the pages changed since the report was written: final {saved:.4f} saved, {now:.4f} now",
                    severity="warning",
                    timeout=6,
                    markup=False,
                )
            self.set_images(message.ref, message.pred)
            return
        self.report = message.report
        self.show(message.report.result, message.ref, message.pred)

    # -- display ------------------------------------------------------------------------------
    @property
    def table(self) -> LazyTable:
        return self.query_one("#pairs", LazyTable)

    def shot(self, side: str) -> ShotView:
        return self.query_one(f"#{side}-image", ShotView)

    def show(self, result: ModeResultModel, ref: Image.Image | None, pred: Image.Image | None) -> None:
        self.result = result
        self.rows = pair_rows(result)
        self.table.set_source(RowsSource(self.rows), cursor=0)
        self.table.focus()
        self.update_scores()
        self.set_images(ref, pred, highlight=False)  # set_source posted a Highlighted that draws the boxes

    def set_images(self, ref: Image.Image | None, pred: Image.Image | None, *, highlight: bool = True) -> None:
        self.images = {side: image for side, image in (("ref", ref), ("pred", pred)) if image is not None}
        for side in ("ref", "pred"):
            self.shot(side).set_image(self.images.get(side))
        if highlight:
            self._highlight()

    def update_scores(self) -> None:
        if self.result is None:
            return
        s = self.result.scores
        text = Text()
        for name, value in (
            ("Block-Match", s.block),
            ("Text", s.text),
            ("Position", s.position),
            ("Color", s.color),
            ("CLIP", s.clip),
        ):
            text.append(f"{name} ", style="dim")
            text.append("n/a  " if value is None else f"{value:.4f}  ", style="bold")
        text.append("Final ", style="dim")
        text.append(f"{s.final:.4f}", style="bold green")
        if s.final_partial:
            text.append(" (partial: no CLIP)", style="yellow")
        if s.final_renormalised is not None:
            text.append(f"\n{RENORMALISED} ", style="dim")
            text.append(f"{s.final_renormalised:.4f}", style="bold")
            text.append(" (CLIP absent: the mean of the other four; Final counts CLIP as 0)", style="dim")
        kinds = {k: sum(1 for r in self.rows if r.kind == k) for k in ("match", "dropped", "missing", "extra")}
        text.append(f"\n{strip_control(self.target.name)}", style="bold")
        text.append(
            f" · {self.result.mode} · {self.result.status} · {kinds['match']} matched, {kinds['missing']} "
            f"missing, {kinds['extra']} extra, {kinds['dropped']} dropped · rank by: {self.sort_key}",
            style="dim",
        )
        if self.result.reason:
            text.append(f"\nwhy {self.result.status}: {strip_control(self.result.reason)}", style="yellow")
        self.query_one("#scores", Static).update(text)

    def aspect(self, side: str) -> float:
        """Height / width of one side's screenshot (of the page model until the image is there)."""
        image = self.images.get(side)
        if image is not None:
            return image.height / max(1, image.width)
        if self.result is not None:
            page = self.result.ref if side == "ref" else self.result.pred
            return page.height / max(1, page.width)
        return 1.0

    def selected(self) -> PairRow | None:
        source = self.table.source
        if not isinstance(source, RowsSource) or not len(source):
            return None
        return source.rows[self.table.cursor]

    @on(LazyTable.Highlighted, "#pairs")
    def _highlight(self) -> None:
        row = self.selected()
        why = Text() if row is None or self.result is None else explain(row, block_match_total(self.result))
        self.query_one("#why", Static).update(why)
        for side in ("ref", "pred"):
            view = self.shot(side)
            view.set_boxes(boxes_for(self.rows, side, row, aspect=self.aspect(side)))
            block = None if row is None else row.block(side)
            if block is not None:
                view.scroll_to_box(Box(*block.bbox, color=(0, 0, 0)))

    # -- actions ------------------------------------------------------------------------------
    def action_close(self) -> None:
        if self.quit_on_close:
            # The first screen of a standalone app: esc goes back, and there is nowhere to go; q quits.
            self.notify("this is the first screen: q quits", timeout=2)
        else:
            self.dismiss()

    def action_sort(self) -> None:
        self.sort_key = SORT_KEYS[(SORT_KEYS.index(self.sort_key) + 1) % len(SORT_KEYS)]
        self._worst_position = None
        self.update_scores()

    def action_worst(self, step: int = 1) -> None:
        """Jump to the lowest-scoring pair by the current key, then the next worst on each press."""
        source = self.table.source
        if not isinstance(source, RowsSource):
            return
        ranked = sorted(
            (i for i, r in enumerate(source.rows) if r.kind == "match"),
            key=lambda i: (source.rows[i].score(self.sort_key), i),
        )
        if not ranked:
            self.notify("no matched pairs", severity="warning")
            return
        position = self._worst_position
        if position is not None and position < len(ranked) and ranked[position] == self.table.cursor:
            position = (position + step) % len(ranked)  # pressed again: the next (or previous) worst
        else:
            position = 0 if step > 0 else len(ranked) - 1
        self._worst_position = position
        self.table.set_cursor(ranked[position])
        self.notify(f"{position + 1}. worst by {self.sort_key} of {len(ranked)}", timeout=1)

    def action_zoom(self) -> None:
        self.zoom = {1.0: 2.0, 2.0: 4.0}.get(self.zoom, 1.0)
        row = self.selected()
        for side in ("ref", "pred"):
            view = self.shot(side)
            view.set_zoom(self.zoom)
            block = None if row is None else row.block(side)
            if block is not None:
                view.scroll_to_box(Box(*block.bbox, color=(0, 0, 0)))
        self.notify(f"zoom {self.zoom:.0f}x", timeout=1)

    def overlay(self, side: str) -> Image.Image:
        """The full-resolution screenshot with every block outlined (the selected one filled)."""
        return draw_boxes(self.images[side], boxes_for(self.rows, side, self.selected(), aspect=self.aspect(side)))

    def _overlay_paths(self, folder: Path) -> list[Path]:
        return [folder / f"{self.target.file_stem}.{side}.overlay.png" for side in ("ref", "pred")]

    def _write_overlays(self, folder: Path) -> list[Path]:
        paths = []
        for side, path in zip(("ref", "pred"), self._overlay_paths(folder), strict=True):
            buffer = io.BytesIO()
            self.overlay(side).save(buffer, format="PNG")
            paths.append(atomic_write_bytes(path, buffer.getvalue()))
        return paths

    def _may_write(self, paths: Sequence[Path], key: str) -> bool:
        """False, with a warning, when some of ``paths`` exist and the user has not pressed ``key`` again
        (a second press replaces them): an export never overwrites without asking."""
        existing = tuple(p for p in paths if p.exists())
        if not existing or existing == self._overwrite:
            self._overwrite = ()
            return True
        self._overwrite = existing
        names = ", ".join(p.name for p in existing)
        self.notify(
            f"{names} already in {existing[0].parent}: press {key} again to replace",
            severity="warning",
            timeout=5,
            markup=False,
        )
        return False

    def action_open_overlay(self) -> None:
        """Write both full-resolution overlays to a temp folder and open them in the image viewer."""
        if len(self.images) < 2:
            self.notify("no screenshots yet", severity="warning")
            return
        try:
            paths = self._write_overlays(Path(tempfile.mkdtemp(prefix="replay-tui-overlay-")))
        except OSError as exc:
            self.notify(f"could not save the overlays: {exc}", severity="error", markup=False)
            return
        saved = f"{paths[0].name} and {paths[1].name} in {paths[0].parent}"
        command = viewer_command()
        if command is None:
            self.notify(f"overlays saved: {saved} (no image viewer: set ${VIEWER_ENV})", timeout=6, markup=False)
            return
        try:
            with self.app.suspend():  # a terminal viewer gets the terminal; a GUI one returns at once
                failure = self._run_viewer(command, paths)
        except SuspendNotSupported:  # headless or web driver: nothing to hand over
            failure = self._run_viewer(command, paths)
        if failure is not None:  # say so: a silent failure looked like nothing happened
            self.notify(
                f"the image viewer failed: {failure}. The overlays are saved: {saved}",
                title="Open PNG",
                severity="error",
                timeout=10,
                markup=False,
            )
        else:
            self.notify(f"opened {saved}", timeout=3, markup=False)

    def _run_viewer(self, command: list[str], paths: list[Path]) -> str | None:
        """Open each path with ``command``; why it failed (its error output or exit status), or None."""
        for path in paths:
            try:
                done = subprocess.run([*command, str(path)], check=False, timeout=120, stderr=subprocess.PIPE)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"could not run {command[0]}: {exc}"
            if done.returncode != 0:
                said = strip_control(done.stderr.decode("utf-8", "replace")).strip().splitlines()
                return f"{command[0]} exited with status {done.returncode}" + (f": {said[-1][:200]}" if said else "")
        return None

    def action_save_overlay(self) -> None:
        if len(self.images) < 2:
            self.notify("no screenshots yet", severity="warning")
            return
        if not self._may_write(self._overlay_paths(self.target.export_dir), "ctrl+s"):
            return
        try:
            paths = self._write_overlays(self.target.export_dir)
        except OSError as exc:
            self.notify(f"save failed: {exc}", severity="error", markup=False)
            return
        self.notify(f"saved {paths[0].name} and {paths[1].name} to {paths[0].parent}", timeout=3, markup=False)

    def action_export(self) -> None:
        """Write the JSON report, a Markdown summary and both overlay PNGs to the export folder."""
        if self.result is None:
            return
        out = self.target.export_dir
        stem = self.target.file_stem
        files = [out / f"{stem}.visual.json", out / f"{stem}.visual.md"]
        if not self._may_write(files + (self._overlay_paths(out) if len(self.images) == 2 else []), "e"):
            return
        report = (
            self.report.model_dump_json(by_alias=True, indent=2)
            if self.report
            else self.result.model_dump_json(indent=2)
        )
        try:
            atomic_write_text(files[0], report)  # as `visual --json` writes it
            atomic_write_text(files[1], markdown_summary(self.result, self.rows))
            if len(self.images) == 2:
                self._write_overlays(out)
        except OSError as exc:
            self.notify(f"export failed: {exc}", severity="error", markup=False)
            return
        self.notify(f"exported {stem}.visual.json, .md and overlays to {out}", timeout=3, markup=False)


class InspectorApp(ToolApp):
    """``replay-tui visual REF GEN --tui`` / ``replay-tui inspect RESULT.json``."""

    TITLE = "replay-tui visual inspector"

    def __init__(
        self,
        ref: str | Path,
        pred: str | Path,
        *,
        mode: str = "compat",
        export_dir: Path | None = None,
        timeout_ms: int = 30_000,
        report: PairReport | None = None,
        clip_scorer: object | None = None,
    ):
        super().__init__()
        self.target = InspectTarget(
            str(ref),
            str(pred),
            mode=mode,
            report=report,
            timeout_ms=timeout_ms,
            clip_scorer=clip_scorer,
            export_dir=export_dir or Path.cwd(),
        )

    @property
    def done(self) -> bool:
        screen = self.screen
        return isinstance(screen, InspectorScreen) and screen.done

    def on_mount(self) -> None:
        self.push_screen(InspectorScreen(self.target, quit_on_close=True))
