"""PairResult -> report models, and why compat and fixed disagree on a pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from replay_tui.visual.models import (
    Disagreement,
    MatchModel,
    ModeResultModel,
    PageModel,
    PairReport,
    ScoresModel,
    as_mode,
    block_models,
)
from replay_tui.visual.pipeline import Page, PairResult, SharedRenders, VisualScorer, modes_for
from replay_tui.visual.scores import final_renormalised

SCORE_NAMES = ("block", "text", "position", "color", "clip", "final")
TOLERANCE = 1e-9


def page_model(page: Page, blocks, bbox_merged) -> PageModel:
    return PageModel(
        path=page.path,
        width=page.width,
        height=page.height,
        text_items=len(page.items),
        text_tags=page.text_tags,
        raw_blocks=block_models(page.raw_blocks),
        bbox_merged=block_models(bbox_merged),
        blocks=block_models(blocks),
        dedup_cut_at=page.dedup.cut_at if page.dedup else None,
        render_errors=page.render_errors,
        blocked_requests=page.blocked_requests[:50],
        notes=page.notes,
    )


def mode_model(result: PairResult) -> ModeResultModel:
    s = result.scores
    matches = [
        MatchModel(pred=p.pred, ref=p.ref, kept=True, text=p.text, position=p.position, color=p.color, area=p.area)
        for p in s.pairs
    ]
    matches += [MatchModel(pred=i, ref=j, kept=False, text=t) for i, j, t in s.dropped]
    matches.sort(key=lambda m: (m.pred, m.ref))
    stats = result.merge_stats
    merge = (
        {"outer_iterations": stats.outer_iterations, "trials": stats.trials, "lsa_calls": stats.lsa_calls}
        if stats
        else {}
    )
    return ModeResultModel(
        mode=result.mode,
        status=result.status,
        error=result.error,
        reason=result.reason,
        scores=ScoresModel(
            block=s.block,
            text=s.text,
            position=s.position,
            color=s.color,
            clip=result.clip,
            final=result.final,
            final_partial=result.final_partial,
            final_renormalised=final_renormalised(s.block, s.text, s.position, s.color, result.clip),
        ),
        matches=matches,
        pred=page_model(result.pred, result.pred_blocks, result.pred_bbox_merged),
        ref=page_model(result.ref, result.ref_blocks, result.ref_bbox_merged),
        corrections=result.corrections,
        seconds={k: round(v, 4) for k, v in result.seconds.items()},
        merge=merge,
    )


def _value(result: PairResult, name: str) -> float | None:
    if name == "clip":
        return result.clip
    if name == "final":
        return result.final
    return getattr(result.scores, name)


def _same_image(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and bool(np.array_equal(a, b))


def explain(compat: PairResult, fixed: PairResult) -> list[Disagreement]:
    """One entry per score that differs, with the corrections that were active on this pair."""
    active: list[str] = []
    compat_cut = compat.pred.dedup.cut_at if compat.pred.dedup else None
    fixed_cut = fixed.pred.dedup.cut_at if fixed.pred.dedup else None
    if compat_cut != fixed_cut:
        active.append(f"dedup-visible-text: compat cut the prediction at {compat_cut}, fixed at {fixed_cut}")
    if compat.status in ("reference_crash", "error"):
        active.append(f"no-page-loss: the reference fails on this pair ({compat.error})")
    lost = [n for page in (compat.pred, compat.ref) for n in page.notes if "lost" in n or "blank" in n]
    if lost:
        active.append("no-page-loss: " + "; ".join(lost))
    long_texts = [
        b.text for b in (compat.ref_blocks or compat.ref_bbox_merged) + (fixed.ref_blocks or []) if len(b.text) >= 200
    ]
    if long_texts:
        active.append(f"no-autojunk: {len(long_texts)} reference block text(s) of 200+ characters")
    relaid = [
        side
        for side, a, b in (("generated", compat.pred, fixed.pred), ("reference", compat.ref, fixed.ref))
        if a.html == b.html and not _same_image(a.image, b.image)
    ]
    if relaid:
        active.append(
            "same-layout-colours: the bs4 round trip renders differently from the raw page (" + ", ".join(relaid) + ")"
        )
    out = []
    for name in SCORE_NAMES:
        a, b = _value(compat, name), _value(fixed, name)
        if a is None and b is None:
            continue
        if a is None or b is None or abs(a - b) > TOLERANCE:
            reasons = list(active)
            if name in ("color", "final") and compat.scores.pairs and fixed.scores.pairs:
                reasons.append("ciede2000-sharma: colour differences use Sharma's formula")
            if name in ("clip", "final") and a is not None and b is not None and compat.clip != fixed.clip:
                reasons.append("symmetric-clip-masks")
            if name != "final" and not reasons:
                reasons.append("unexplained: block or matching differences without a listed cause")
            out.append(Disagreement(score=name, compat=a, fixed=b, reasons=reasons or ["follows the sub-scores"]))
    return out


def score_and_report(
    scorer: VisualScorer, ref: str | Path, pred: str | Path, mode: str, shared: SharedRenders | None = None
) -> tuple[PairReport, PairResult]:
    """Score a pair in ``mode`` with ``scorer``: the report and the mode's result (with its screenshots)."""
    results = scorer.score(ref, pred, modes_for(mode), shared=shared)
    report = pair_report(str(ref), str(pred), results, mode)
    report.sandbox = list(scorer.renderer.isolation)
    return report, results[mode]


def pair_report(ref: str, pred: str, results: dict[str, PairResult], mode: str) -> PairReport:
    main = results[mode]
    report = PairReport(ref=ref, pred=pred, mode=as_mode(mode), result=mode_model(main))
    if mode == "fixed" and "compat" in results:
        report.compat = mode_model(results["compat"])
        report.disagreements = explain(results["compat"], main)
    return report
