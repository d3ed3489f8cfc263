"""Report models (pydantic): the five scores, the final score, every block and match of a scored pair."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import orjson
from pydantic import BaseModel, Field, ValidationError

from replay_tui.visual.blocks import Block

SCHEMA = "replay-tui.visual/1"

Mode = Literal["compat", "fixed"]
Status = Literal[
    "ok", "no_blocks", "no_match", "reference_crash", "error", "too_deep", "too_tall", "timeout", "crashed"
]
# A page the sandbox refused or gave up on (issue 15): the pair is not scored, its scores are 0.
PageFailure = Literal["too_deep", "too_tall", "timeout", "crashed"]
# Statuses of a pair that could not be scored: a batch with any of them exits 1.
FAILED_STATUSES: tuple[str, ...] = ("error", "too_deep", "too_tall", "timeout", "crashed")


class OutOfTime(Exception):
    """Python work on a pair (the repetition scan, quadratic in the distinct text: ~26 s for 200 KB of random
    words; the merge search, in the number of blocks) ran past the pair's deadline: the pair ends ``timeout``
    instead of holding a batch for minutes."""


def as_mode(value: str) -> Mode:
    """``value`` as a :data:`Mode`; raises :class:`ValueError` for anything but ``compat`` and ``fixed``."""
    if value == "compat":
        return "compat"
    if value == "fixed":
        return "fixed"
    raise ValueError(f"unknown mode {value!r}: expected 'compat' or 'fixed'")


class BlockModel(BaseModel):
    id: int
    text: str
    bbox: tuple[float, float, float, float] = Field(description="normalised (x, y, w, h) of the page screenshot")
    color: tuple[float, float, float] = Field(description="mean RGB of the original rendering at the text pixels")
    sources: list[int] = Field(default_factory=list, description="ids of the extracted text items merged into it")


class MatchModel(BaseModel):
    pred: int
    ref: int
    kept: bool = Field(description="text similarity >= 0.5; dropped pairs count as unmatched")
    text: float
    position: float | None = None
    color: float | None = None
    area: float | None = None


class PageModel(BaseModel):
    path: str
    width: int
    height: int
    text_items: int
    text_tags: int
    raw_blocks: list[BlockModel] = Field(description="blocks as extracted (one per text item with pixels)")
    bbox_merged: list[BlockModel] = Field(description="after merge_blocks_by_bbox")
    blocks: list[BlockModel] = Field(description="after the merge search; match ids refer to these")
    dedup_cut_at: int | None = None
    render_errors: list[str] = Field(default_factory=list)
    blocked_requests: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ScoresModel(BaseModel):
    block: float
    text: float
    position: float
    color: float
    clip: float | None
    final: float = Field(description="0.2 x (block + text + position + color + clip); clip counts 0 when missing")
    final_partial: bool = Field(description="true when CLIP is missing: final is then not the paper's number")
    final_renormalised: float | None = Field(
        default=None,
        description="CLIP missing: 'Final (4 metrics, renormalised)', the mean of the other four scores; else null",
    )


class ModeResultModel(BaseModel):
    mode: Mode
    status: Status
    error: str | None = None
    reason: str | None = Field(default=None, description="why the pair ended with its status, when not ok")
    scores: ScoresModel
    matches: list[MatchModel]
    pred: PageModel
    ref: PageModel
    corrections: list[str] = Field(default_factory=list)
    seconds: dict[str, float] = Field(default_factory=dict)
    merge: dict[str, int] = Field(default_factory=dict)


class Disagreement(BaseModel):
    score: str
    compat: float | None
    fixed: float | None
    reasons: list[str]


class PairReport(BaseModel):
    schema_: str = Field(default=SCHEMA, alias="schema")
    ref: str
    pred: str
    mode: Mode
    result: ModeResultModel
    compat: ModeResultModel | None = Field(
        default=None, description="fixed mode: the compat result it is compared with"
    )
    disagreements: list[Disagreement] = Field(default_factory=list)
    sandbox: list[str] = Field(default_factory=list, description="the renderer's isolation layers that were active")

    model_config = {"populate_by_name": True}


class BatchRow(BaseModel):
    name: str
    status: str
    final: float
    block: float
    text: float
    position: float
    color: float
    clip: float | None
    reason: str | None = None
    final_renormalised: float | None = None

    @classmethod
    def from_report(cls, name: str, report: PairReport) -> BatchRow:
        s = report.result.scores
        return cls(
            name=name,
            status=report.result.status,
            final=s.final,
            block=s.block,
            text=s.text,
            position=s.position,
            color=s.color,
            clip=s.clip,
            reason=report.result.reason,
            final_renormalised=s.final_renormalised,
        )

    @classmethod
    def failed(cls, name: str, reason: str) -> BatchRow:
        """A pair whose scoring raised: status ``error``, scores 0."""
        zero = {"final": 0.0, "block": 0.0, "text": 0.0, "position": 0.0, "color": 0.0, "final_renormalised": 0.0}
        return cls(name=name, status="error", clip=None, reason=reason, **zero)


SCORE_COLUMNS = ("final", "block", "text", "position", "color", "clip")


def batch_means(rows: list[BatchRow]) -> dict[str, float | None]:
    """The unweighted mean of each score over the rows (the reference's runner prints these); None when a
    row lacks the score or there are no rows."""
    means: dict[str, float | None] = {}
    for column in SCORE_COLUMNS:
        values = [getattr(r, column) for r in rows]
        means[column] = None if not values or any(v is None for v in values) else sum(values) / len(values)
    return means


def renormalised_mean(rows: list[BatchRow]) -> float | None:
    """The mean "Final (4 metrics, renormalised)" over the rows, when every row has one (no CLIP anywhere)."""
    values = [r.final_renormalised for r in rows]
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None) / len(values)


class ReportFileError(ValueError):
    """A file that is not a saved visual report; the message is one line that names the file."""


def read_report(path: str | os.PathLike[str]) -> PairReport | BatchReport:
    """A saved ``replay-tui visual --json`` report: a pair report, or a batch report (it has ``rows``)."""
    try:
        data = orjson.loads(Path(path).read_bytes())
        if not isinstance(data, dict):
            raise TypeError("the top level is not an object")
        if "rows" in data:
            return BatchReport.model_validate(data)
        return PairReport.model_validate(data)
    except (OSError, orjson.JSONDecodeError, ValidationError, TypeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ReportFileError(f"{path}: not a visual report (replay-tui visual --json): {first}") from None


class BatchReport(BaseModel):
    schema_: str = Field(default=SCHEMA, alias="schema")
    ref_dir: str
    pred_dir: str
    mode: Mode
    rows: list[BatchRow]
    means: dict[str, float | None]
    missing: list[str] = Field(default_factory=list)
    pairs: list[PairReport] = Field(default_factory=list)
    sandbox: list[str] = Field(default_factory=list, description="the renderer's isolation layers that were active")

    model_config = {"populate_by_name": True}


def block_model(k: int, block: Block) -> BlockModel:
    x, y, w, h = block.bbox
    r, g, b = block.color
    return BlockModel(
        id=k,
        text=block.text,
        bbox=(float(x), float(y), float(w), float(h)),
        color=(float(r), float(g), float(b)),
        sources=list(block.sources),
    )


def block_models(blocks: list[Block]) -> list[BlockModel]:
    return [block_model(k, b) for k, b in enumerate(blocks)]
