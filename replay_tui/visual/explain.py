"""Why a page pair scored what it did: the table rows of a scored pair and the numbers behind each score.

Textual-free, so the inspector screen, exports and scripts share it: :func:`pair_rows` turns a scored pair
into one row per kept match, dropped pair, missing and extra block; :func:`explain` gives the numbers each
score is made of; :func:`markdown_summary` writes the five scores and the worst pairs; :func:`score_pair`
renders and scores a pair with its screenshots (blocking).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image
from rich.text import Text

from replay_tui.sanitize import one_line, strip_control
from replay_tui.visual.models import BlockModel, ModeResultModel, PageModel, PairReport
from replay_tui.visual.scores import RENORMALISED

if TYPE_CHECKING:
    import numpy as np

    from replay_tui.visual.pipeline import PairResult

BBox = tuple[float, float, float, float]


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
    ref_parts: tuple[BBox, ...] = ()
    pred_parts: tuple[BBox, ...] = ()

    def score(self, key: str) -> float:
        value = getattr(self, key)
        return -1.0 if value is None else value

    def block(self, side: str) -> BlockModel | None:
        return self.ref if side == "ref" else self.pred

    def parts(self, side: str) -> tuple[BBox, ...]:
        return self.ref_parts if side == "ref" else self.pred_parts


def merged_parts(page: PageModel) -> dict[int, tuple[BBox, ...]]:
    """For each final block made of several extracted items, the boxes of the raw blocks inside it."""
    raw_by_source: dict[int, BlockModel] = {}
    for raw in page.raw_blocks:
        for source in raw.sources:
            raw_by_source.setdefault(source, raw)
    out: dict[int, tuple[BBox, ...]] = {}
    for block in page.blocks:
        if len(block.sources) < 2:
            continue
        seen: dict[int, BBox] = {}
        for source in block.sources:
            piece = raw_by_source.get(source)
            if piece is not None and piece.id not in seen:
                seen[piece.id] = piece.bbox
        if len(seen) > 1:
            out[block.id] = tuple(seen.values())
    return out


def pair_rows(result: ModeResultModel) -> list[PairRow]:
    """Kept matches first (in generated-block order), then dropped pairs, missing and extra blocks."""
    ref_blocks = {b.id: b for b in result.ref.blocks}
    pred_blocks = {b.id: b for b in result.pred.blocks}
    ref_parts, pred_parts = merged_parts(result.ref), merged_parts(result.pred)

    def row(
        kind: str,
        ref: int | None,
        pred: int | None,
        *,
        text: float | None = None,
        position: float | None = None,
        color: float | None = None,
        area: float | None = None,
        colour_index: int = 0,
    ) -> PairRow:
        return PairRow(
            kind,
            ref_blocks.get(ref) if ref is not None else None,
            pred_blocks.get(pred) if pred is not None else None,
            text=text,
            position=position,
            color=color,
            area=area,
            colour_index=colour_index,
            ref_parts=ref_parts.get(ref, ()) if ref is not None else (),
            pred_parts=pred_parts.get(pred, ()) if pred is not None else (),
        )

    rows: list[PairRow] = []
    kept = [m for m in result.matches if m.kept]
    for number, match in enumerate(kept):
        rows.append(
            row(
                "match",
                match.ref,
                match.pred,
                text=match.text,
                position=match.position,
                color=match.color,
                area=match.area,
                colour_index=number,
            )
        )
    rows += [row("dropped", m.ref, m.pred, text=m.text) for m in result.matches if not m.kept]
    matched_ref = {m.ref for m in kept}
    matched_pred = {m.pred for m in kept}
    rows += [row("missing", block.id, None) for block in result.ref.blocks if block.id not in matched_ref]
    rows += [row("extra", None, block.id) for block in result.pred.blocks if block.id not in matched_pred]
    return rows


def block_area(block: BlockModel) -> float:
    return block.bbox[2] * block.bbox[3]


def block_match_total(result: ModeResultModel) -> float:
    """Block-Match's denominator: the area of every block on both pages (matched pairs count both sides)."""
    return sum(block_area(b) for b in result.ref.blocks) + sum(block_area(b) for b in result.pred.blocks)


def centre(block: BlockModel) -> tuple[float, float]:
    x, y, w, h = block.bbox
    return x + w / 2, y + h / 2


def explain(row: PairRow, total_area: float) -> Text:
    """Why this row scored what it did, with the numbers each score is made of."""
    text = Text()

    def weight(area: float) -> str:
        return (
            f"{area:.1%} of both pages' block area ({area / total_area:.1%} of Block-Match's total)"
            if total_area > 0
            else f"{area:.1%} of the pages"
        )

    if row.kind == "match" and row.ref and row.pred:
        (rx, ry), (gx, gy) = centre(row.ref), centre(row.pred)
        colour = row.color if row.color is not None else 0.0
        delta = "≥ 100" if colour <= 0 else f"{100 * (1 - colour):.1f}"
        text.append("text ", style="dim")
        text.append(f"{row.text:.3f}", style="bold")
        text.append(" = difflib ratio of the two texts (below 0.5 the pair is dropped) · ", style="dim")
        text.append("position ", style="dim")
        text.append(f"{row.position:.3f}", style="bold")
        text.append(f" = 1 − max(|Δx| {abs(gx - rx):.3f}, |Δy| {abs(gy - ry):.3f}) of the centres\n", style="dim")
        text.append("colour ", style="dim")
        text.append(f"{colour:.3f}", style="bold")
        text.append(f" = 1 − ΔE2000 {delta} / 100 between ", style="dim")
        for block in (row.ref, row.pred):
            r, g, b = (round(c) for c in block.color)
            text.append("██", style=f"rgb({r},{g},{b})")
            text.append(f" rgb({r},{g},{b}) ", style="dim")
        text.append(f"· area {weight(row.area or 0.0)}", style="dim")
    elif row.kind == "dropped":
        text.append(
            f"dropped: text similarity {row.text:.3f} < 0.5, so the assignment is undone and both "
            "blocks count as unmatched",
            style="yellow",
        )
    elif row.kind == "missing" and row.ref:
        text.append("missing: ", style="bold red")
        text.append(
            f"no generated block matches this reference block; its area {weight(block_area(row.ref))} "
            "lowers Block-Match",
            style="dim",
        )
    elif row.kind == "extra" and row.pred:
        text.append("hallucinated: ", style="bold dark_orange")
        text.append(
            f"the reference has no block for this generated one; its area {weight(block_area(row.pred))} "
            "lowers Block-Match",
            style="dim",
        )
    return text


def markdown_summary(result: ModeResultModel, rows: Sequence[PairRow], *, worst: int = 10) -> str:
    """A Markdown summary: the five scores and the worst pairs by text similarity."""
    s = result.scores
    clip = "n/a" if s.clip is None else f"{s.clip:.4f}"
    lines = [
        "## Visual scores",
        "",
        f"`{strip_control(result.ref.path)}` vs `{strip_control(result.pred.path)}` "
        f"({result.mode} mode, {result.status})",
        "",
        "| Block-Match | Text | Position | Color | CLIP | Final |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {s.block:.4f} | {s.text:.4f} | {s.position:.4f} | {s.color:.4f} | {clip} | {s.final:.4f}"
        f"{' (partial)' if s.final_partial else ''} |",
        "",
        *(
            [f"{RENORMALISED}: {s.final_renormalised:.4f} (no CLIP: the mean of the other four scores)", ""]
            if s.final_renormalised is not None
            else []
        ),
        *([f"Why {result.status}: {strip_control(result.reason)}", ""] if result.reason else []),
        "### Worst pairs",
        "",
        "| kind | reference | generated | text | position | colour |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]

    def cell(block: BlockModel | None) -> str:
        text = one_line(block.text)[:60] if block else "—"
        return text.replace("|", "\\|").replace("`", "'")

    def num(value: float | None) -> str:
        return "" if value is None else f"{value:.3f}"

    for row in sorted(rows, key=lambda r: (r.kind == "match", r.score("text")))[:worst]:
        lines.append(
            f"| {row.kind} | {cell(row.ref)} | {cell(row.pred)} | {num(row.text)} | {num(row.position)} "
            f"| {num(row.color)} |"
        )
    return "\n".join(lines) + "\n"


def screenshots(result: PairResult) -> tuple[Image.Image, Image.Image]:
    """(reference, generated) screenshots of a scored pair; white where a page has none."""

    def image(array: np.ndarray | None) -> Image.Image:
        return Image.fromarray(array) if array is not None else Image.new("RGB", (1280, 720), "white")

    return image(result.ref.image), image(result.pred.image)


def score_pair(
    ref: str | Path,
    pred: str | Path,
    mode: str = "compat",
    *,
    timeout_ms: int = 30_000,
    clip_scorer: object | None = None,
) -> tuple[PairReport, Image.Image, Image.Image]:
    """Render and score the pair in headless Chromium (blocking; run it in a worker)."""
    from replay_tui.visual.pipeline import VisualScorer
    from replay_tui.visual.report import score_and_report

    with VisualScorer(timeout_ms=timeout_ms, clip_scorer=clip_scorer) as scorer:
        report, result = score_and_report(scorer, ref, pred, mode)
    return (report, *screenshots(result))
