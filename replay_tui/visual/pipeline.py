"""Score a generated page against a reference page: the whole Design2Code pipeline, compat or fixed.

compat (default) reproduces ``visual_eval_v3_multi`` for one prediction: the prediction is pre-processed (dedup
cut, ``make_html``, bs4 round trip with repeated-element truncation); the reference is rendered raw; each page
gets two recoloured renders; blocks; ``merge_blocks_by_bbox``; merge search; the 0.5 cut; sub-scores; CLIP on the
inpainted screenshots. Inputs on which the reference would crash are reported (``status='reference_crash'``,
scores 0, as the batch runner records them). A page that fails to render is reported; compat then uses the
reference's blank 1280x960 stand-in so the numbers stay comparable. A page the sandbox refuses or gives up on
(nested too deep, too tall, out of time, renderer crashed: issue 15) ends the pair with that status in both
modes, scores 0; a pair's renders share one deadline (``VisualScorer(pair_timeout_ms=...)``), the Python stages
that grow faster than linearly (repetition check, merge search) stop at it too, and a page that failed in
compat is not rendered again for fixed.

fixed applies the corrections in :data:`FIXES` and reports each one.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from replay_tui.visual import htmlproc, render
from replay_tui.visual.blocks import Block, BlockError, blocks_from_renders, merge_blocks_by_bbox
from replay_tui.visual.dedup import DedupResult, check_repetitive_compat, check_repetitive_fixed
from replay_tui.visual.match import MergeStats, RatioCache, find_possible_merge
from replay_tui.visual.models import Mode, OutOfTime, PageFailure, Status
from replay_tui.visual.render import Renderer, RenderResult, blank_image
from replay_tui.visual.scores import SubScores, final_score, sub_scores

MODES: tuple[Mode, ...] = ("compat", "fixed")
PAIR_TIMEOUTS = 4  # a pair's deadline, in render timeouts, when not given


def modes_for(mode: str) -> tuple[Mode, ...]:
    """The modes to run for a report in ``mode``: fixed also runs compat, to say where the two disagree."""
    return ("compat", "fixed") if mode == "fixed" else ("compat",)


FIXES = {
    "no-autojunk": "difflib ratios use autojunk=False: long reference texts no longer lose their frequent "
    "characters as match seeds (a 300-char text with one typo scores 0.997, not 0.5)",
    "dedup-visible-text": "the repetition cut looks only at visible text with whitespace collapsed (no CSS/JS, "
    "no prettifier indentation) and maps the cut to a file offset correctly",
    "ciede2000-sharma": "colour difference uses Sharma, Wu & Dalal's CIEDE2000 (mean hue and zero-chroma cases) "
    "instead of python-colormath's variant",
    "no-page-loss": "no input loses a page or the whole evaluation: more than 4096 text tags are coloured in "
    "rounds, unparseable colours fall back to the parent's, pixels outside the original "
    "screenshot are ignored instead of dropping every block, render failures are errors",
    "same-layout-colours": "text colours are sampled from a render of the same bs4 round trip as the recoloured "
    "renders, for the reference page too, so layouts agree",
    "symmetric-clip-masks": "CLIP masks the blocks of both pages as extracted (the reference masks merged "
    "prediction boxes but unmerged reference boxes)",
}


@dataclass
class Page:
    """One side of a pair after extraction."""

    path: str
    html: str
    width: int = 0
    height: int = 0
    image: np.ndarray | None = None
    items: list[tuple[str, str]] = field(default_factory=list)
    raw_blocks: list[Block] = field(default_factory=list)
    text_tags: int = 0
    dedup: DedupResult | None = None
    render_errors: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    crash: str | None = None  # the reference raises here (compat)
    error: str | None = None  # unusable page (fixed), or why it failed
    failure: PageFailure | None = None  # the sandbox refused or gave up on the page (both modes)


@dataclass
class PairResult:
    mode: Mode
    status: Status
    scores: SubScores
    clip: float | None
    final: float
    final_partial: bool
    pred: Page
    ref: Page
    pred_blocks: list[Block] = field(default_factory=list)  # after merge_blocks_by_bbox and merge search
    ref_blocks: list[Block] = field(default_factory=list)
    pred_bbox_merged: list[Block] = field(default_factory=list)  # after merge_blocks_by_bbox only
    ref_bbox_merged: list[Block] = field(default_factory=list)
    matching: list[tuple[int, int]] = field(default_factory=list)
    error: str | None = None
    reason: str | None = None  # why the status, when it is not ok (shown in the batch table and the inspector)
    seconds: dict[str, float] = field(default_factory=dict)
    merge_stats: MergeStats | None = None
    corrections: list[str] = field(default_factory=list)


def read_html(path: str | Path) -> tuple[str, bytes]:
    data = Path(path).read_bytes()
    return data.decode("utf-8", errors="surrogateescape"), data


class SharedRenders:
    """Renders kept across the pairs of a batch, for the pages that several pairs share (a reference page scored
    against the pages of several generated folders, or of several variants). Thread-safe: the first pair to need
    a render makes it, a pair that needs it meanwhile waits for it (``score_pairs(jobs=N)``). Each entry belongs to
    a page (``owner``, its path) and is dropped by :meth:`release` once the last pair of that page is done.
    Renders are deterministic (the batch test checks that reports do not depend on them being shared)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], Future[RenderResult]] = {}
        self._owners: dict[str, set[tuple[str, str]]] = {}

    def claim(self, key: tuple[str, str], owner: str) -> tuple[Future[RenderResult], bool]:
        """The entry for ``key`` and whether the caller must render it (and then resolve the future)."""
        with self._lock:
            if key in self._entries:
                return self._entries[key], False
            future: Future[RenderResult] = Future()
            self._entries[key] = future
            self._owners.setdefault(owner, set()).add(key)
            return future, True

    def forget(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def release(self, owner: str) -> None:
        with self._lock:
            for key in self._owners.pop(owner, set()):
                self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)


class RenderCache:
    """Renders keyed by (content sha256, folder): compat and fixed share identical renders, and a batch of
    sources is rendered concurrently (:meth:`prefetch`). With ``shared``, the renders of the page ``shared_owner``
    (the reference) come from, and go to, the batch's :class:`SharedRenders`."""

    def __init__(self, renderer: Renderer, shared: SharedRenders | None = None, shared_owner: str = "") -> None:
        self.renderer = renderer
        self._cache: dict[tuple[str, str], RenderResult] = {}
        self.seconds = 0.0  # this cache's rendering time (the renderer's own total counts every thread's)
        self.shared = shared
        self.shared_owner = shared_owner

    @staticmethod
    def _key(source: tuple) -> tuple[str, str]:
        _, html, base, _stem = source
        return (hashlib.sha256(html.encode("utf-8", errors="surrogateescape")).hexdigest(), str(Path(base).resolve()))

    def prefetch(
        self, sources: Sequence[tuple], shareable: Sequence[tuple] = (), deadline: float | None = None
    ) -> None:
        """Render what ``sources`` and ``shareable`` (the shared page's sources) need, in one concurrent batch, none
        of them past ``deadline`` (``time.monotonic()``)."""
        missing: dict[tuple[str, str], tuple] = {}
        promised: dict[tuple[str, str], Future[RenderResult]] = {}
        waiting: dict[tuple[str, str], Future[RenderResult]] = {}
        for source, share in [(s, False) for s in sources] + [(s, True) for s in shareable]:
            key = self._key(source)
            if key in self._cache or key in missing or key in waiting:
                continue
            if share and self.shared is not None:
                future, mine = self.shared.claim(key, self.shared_owner)
                if not mine:
                    waiting[key] = future
                    continue
                promised[key] = future
            missing[key] = source
        started = time.perf_counter()
        if missing:
            try:
                # one concurrent batch, each text rendered through a copy beside its page
                results = self.renderer.render_texts([(s[1], s[2], s[3]) for s in missing.values()], deadline)
            except BaseException as exc:
                for key, future in promised.items():
                    if self.shared is not None:
                        self.shared.forget(key)
                    future.set_exception(exc)
                raise
            for key, result in zip(missing, results, strict=True):
                self._cache[key] = result
                if key in promised:
                    promised[key].set_result(result)
        for key, future in waiting.items():
            self._cache[key] = future.result()
        self.seconds += time.perf_counter() - started

    def get(self, source: tuple) -> RenderResult:
        key = self._key(source)
        if key not in self._cache:
            self.prefetch([source])
        return self._cache[key]


def _image_or_blank(result: RenderResult, page: Page, what: str, mode: str) -> np.ndarray | None:
    """The render's image; or, for a failed render: None with ``page.failure`` set when the sandbox gave up on
    the page, else the reference's blank stand-in (compat) or None (fixed)."""
    if result.ok:
        return result.image
    page.render_errors.append(f"{what}: {result.error}")
    if result.status in ("timeout", "crashed", "too_tall"):
        page.failure = result.status
        return None
    if mode == "compat":
        page.notes.append(f"{what} failed to render; the reference's blank 1280x960 image stands in")
        return blank_image()
    return None


@dataclass
class PagePlan:
    """What a page needs rendered, after the HTML processing (no browser yet)."""

    page: Page
    mode: str
    original: tuple | None = None
    rounds: list[htmlproc.PerturbedHtml] = field(default_factory=list)

    def round_sources(self, k: int) -> tuple[tuple, tuple]:
        """The two recoloured renders of colour round ``k``."""
        base, stem = Path(self.page.path).parent, Path(self.page.path).stem
        variants = self.rounds[k]
        return ("html", variants.variant0, base, stem + "_p"), ("html", variants.variant1, base, stem + "_p_1")

    def sources(self) -> list[tuple]:
        out = [self.original] if self.original else []
        for k in range(len(self.rounds)):
            out.extend(self.round_sources(k))
        return out


def plan_page(path: str | Path, *, is_pred: bool, mode: str, deadline: float | None = None) -> PagePlan:
    """Pre-process (predictions only) and build the recoloured variants; the repetition check stops at
    ``deadline`` (the page then fails ``timeout``)."""
    path = Path(path)
    base = path.parent.resolve()
    text, _raw = read_html(path)
    page = Page(path=str(path), html=text)
    plan = PagePlan(page=page, mode=mode)
    try:
        if is_pred:
            if mode == "compat" and _has_surrogates(text):
                raise htmlproc.ReferenceCrash("the file is not valid UTF-8 (UnicodeDecodeError in the reference)")
            page.dedup = (check_repetitive_compat if mode == "compat" else check_repetitive_fixed)(text, deadline)
            if page.dedup.cut:
                page.notes.append(f"dedup cut the page at offset {page.dedup.cut_at} of {len(text)}")
                text = text[: page.dedup.cut_at]
            text = htmlproc.make_html(text)
            text = htmlproc.truncate_repeated_elements(htmlproc.parse(text))
        page.html = text
        # The original screenshot: compat renders the reference raw (``text`` is still the file as read, and
        # surrogateescape gives back its exact bytes) and the prediction as pre-processed; fixed renders the same
        # bs4 round trip that the recoloured variants come from.
        if mode == "fixed":
            plan.original = ("html", str(htmlproc.parse(text)), base, path.stem)
        else:
            plan.original = ("html", text, base, path.stem)
        if mode == "compat":
            plan.rounds = [htmlproc.perturb(text, strict_pool=True)]
        else:
            first = htmlproc.perturb(text, chunk=0, strict_pool=False)
            plan.rounds = [first]
            for k in range(1, (first.total_text_tags + htmlproc.POOL_SIZE - 1) // htmlproc.POOL_SIZE):
                plan.rounds.append(htmlproc.perturb(text, chunk=k, strict_pool=False))
    except htmlproc.TooDeep as exc:
        page.failure, page.error = "too_deep", f"too_deep: {exc}"
    except OutOfTime as exc:
        page.failure, page.error = "timeout", f"timeout: {exc}"
    except htmlproc.PoolExhausted as exc:
        page.crash = f"NotImplementedError in the reference's ColorPool: {exc}"
    except htmlproc.ReferenceCrash as exc:
        page.crash = str(exc)
    except RecursionError as exc:
        if mode == "fixed":
            page.error = f"RecursionError while processing the HTML: {exc}"
        else:
            page.crash = f"RecursionError while processing the HTML: {exc}"
    if page.crash or page.error:
        plan.original, plan.rounds = None, []
    return plan


def known_failure(plan: PagePlan, failure: tuple[PageFailure, str] | None) -> PagePlan:
    """``plan`` not to be rendered when its page already failed (in an earlier mode of the pair)."""
    if failure is not None:
        plan.page.failure, plan.page.error = failure
        plan.original, plan.rounds = None, []
    return plan


def finish_page(plan: PagePlan, cache: RenderCache) -> Page:
    """Screenshots -> blocks (renders come from the cache, fetched in one batch beforehand)."""
    page, mode = plan.page, plan.mode
    if plan.original is None:
        return page
    original = cache.get(plan.original)
    page.blocked_requests.extend(original.blocked)
    image = _image_or_blank(original, page, "screenshot", mode)
    if image is None:
        page.error = page.render_errors[-1]
        return page
    page.image = image
    page.height, page.width = image.shape[:2]
    blocks: list[Block] = []
    try:
        for k, variants in enumerate(plan.rounds):
            page.text_tags += variants.text_tags
            source0, source1 = plan.round_sources(k)
            r0 = cache.get(source0)
            r1 = cache.get(source1)
            img0 = _image_or_blank(r0, page, "recoloured render", mode)
            img1 = _image_or_blank(r1, page, "second recoloured render", mode)
            if img0 is None or img1 is None:
                page.error = page.render_errors[-1]
                return page
            items = _items(variants.variant0, mode)
            offset = len(page.items)
            page.items.extend(items)
            if img0.shape != img1.shape:
                page.notes.append("the two recoloured renders differ in size: no blocks (reference behaviour)")
                continue
            try:
                found = blocks_from_renders(items, img0, img1, image, strict=(mode == "compat"))
            except BlockError as exc:
                page.notes.append(f"all blocks lost: {exc}")
                found = []
            for block in found:
                block.sources = [offset + s for s in block.sources]
            if len(plan.rounds) > 1:
                page.notes.append(f"colour round {k + 1}/{len(plan.rounds)}: {len(found)} blocks")
            blocks.extend(found)
    except htmlproc.ReferenceCrash as exc:
        page.crash = str(exc)
        return page
    page.raw_blocks = blocks
    return page


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _items(html: str, mode: str) -> list[tuple[str, str]]:
    if mode == "compat":
        return htmlproc.extract_text_with_color(html)
    return htmlproc.extract_text_with_color(html, lenient=True)


def score_pages(
    pred: Page, ref: Page, mode: Mode = "compat", clip_scorer=None, deadline: float | None = None
) -> PairResult:
    """Match and score two extracted pages; the merge search stops at ``deadline`` (status ``timeout``)."""
    started = time.perf_counter()
    ratio = RatioCache(autojunk=(mode == "compat"))
    colour_formula = "colormath" if mode == "compat" else "sharma"
    corrections = sorted(FIXES) if mode == "fixed" else []

    def result(status: Status, scores: SubScores, clip: float | None, **kw) -> PairResult:
        out = PairResult(
            mode=mode,
            status=status,
            scores=scores,
            clip=clip,
            final=final_score(scores.block, scores.text, scores.position, scores.color, clip),
            final_partial=clip is None,
            pred=pred,
            ref=ref,
            corrections=corrections,
            **kw,
        )
        out.seconds["match_and_score"] = time.perf_counter() - started
        return out

    for side, page in (("generated", pred), ("reference", ref)):
        if page.failure is not None:
            return result(page.failure, SubScores(), None, error=page.error, reason=f"{side} page: {page.error}")
    crash = pred.crash or ref.crash
    if crash:
        side = "generated" if pred.crash else "reference"
        return result("reference_crash", SubScores(), None, error=crash, reason=f"{side} page: {crash}")
    error = pred.error or ref.error
    if error:
        side = "generated" if pred.error else "reference"
        return result("error", SubScores(), None, error=error, reason=f"{side} page: {error}")
    ref_merged = merge_blocks_by_bbox(ref.raw_blocks)
    if not pred.raw_blocks or not ref_merged:
        clip = _clip(clip_scorer, pred, ref, pred.raw_blocks, ref_merged)
        return result(
            "no_blocks",
            SubScores(),
            clip,
            ref_bbox_merged=ref_merged,
            pred_bbox_merged=[b.copy() for b in pred.raw_blocks],
            reason="; ".join(
                no_blocks_reason(side, page, mode)
                for side, page in (("generated", pred), ("reference", ref))
                if not page.raw_blocks
            ),
        )
    pred_merged = merge_blocks_by_bbox(pred.raw_blocks)
    pred_bbox_merged = [b.copy() for b in pred_merged]
    stats = MergeStats()
    try:
        pred_m, ref_m, matching = find_possible_merge(
            pred_merged, [b.copy() for b in ref_merged], ratio, stats=stats, deadline=deadline
        )
    except OutOfTime as exc:
        reason = f"{exc} ({len(pred_merged)} generated x {len(ref_merged)} reference blocks)"
        return result("timeout", SubScores(), None, error=reason, reason=reason)
    scores = sub_scores(pred_m, ref_m, matching, ratio, colour_formula)
    if mode == "compat":
        clip = _clip(clip_scorer, pred, ref, pred_m, ref_merged)  # quirk Q7: merged pred boxes, unmerged ref
    else:
        clip = _clip(clip_scorer, pred, ref, pred_bbox_merged, ref_merged)
    status: Status = "ok" if scores.matched else "no_match"
    return result(
        status,
        scores,
        clip,
        reason=None
        if scores.matched
        else f"none of the {len(pred_m)} x {len(ref_m)} block pairs has text similarity 0.5 or more",
        pred_blocks=pred_m,
        ref_blocks=ref_m,
        matching=matching,
        pred_bbox_merged=pred_bbox_merged,
        ref_bbox_merged=ref_merged,
        merge_stats=stats,
    )


def no_blocks_reason(side: str, page: Page, mode: str) -> str:
    """Why ``page`` gave no text blocks, in the words a user can act on (issue 16)."""
    dedup = page.dedup
    if not page.items and dedup is not None and dedup.cut_at is not None:
        quirk = (
            " (a compat quirk: CSS, script and indentation count as repeated text; --mode fixed looks at the "
            "visible text only)"
            if mode == "compat"
            else ""
        )
        return (
            f"the {side} page has no text blocks: the repetition cut kept only its first {dedup.cut_at:,} of "
            f"{dedup.original_length:,} characters, with no text left{quirk}"
        )
    if not page.items:
        return f"the {side} page has no text blocks: no text under <body>"
    lost = [n for n in page.notes if "lost" in n or "differ in size" in n or "blank" in n]
    if lost:
        return f"the {side} page has no text blocks: " + "; ".join(lost)
    return (
        f"the {side} page has no text blocks: none of its {len(page.items)} text items has pixels that changed "
        "colour between the two recoloured renders (hidden, transparent or image text)"
    )


def _clip(clip_scorer, pred: Page, ref: Page, pred_blocks: list[Block], ref_blocks: list[Block]) -> float | None:
    if clip_scorer is None or pred.image is None or ref.image is None:
        return None
    return clip_scorer.similarity(pred.image, ref.image, [b.bbox for b in pred_blocks], [b.bbox for b in ref_blocks])


class VisualScorer:
    """Scores pairs with one browser for the whole run. :meth:`score` may run on several threads at once (the
    renderer is shared; everything else is per call). ``pair_timeout_ms`` bounds all the renders of a pair
    (both modes) together; each render is also bounded by the renderer's own ``timeout_ms``."""

    def __init__(
        self,
        renderer: Renderer | None = None,
        clip_scorer=None,
        timeout_ms: int | None = None,
        pair_timeout_ms: int | None = None,
    ) -> None:
        self._own = False
        if renderer is None:
            renderer, self._own = render.renderer_factory(timeout_ms)
        self.renderer = renderer
        self.clip_scorer = clip_scorer
        # every render of a pair within this, both modes together (default: four renders' worth)
        self.pair_timeout_ms = pair_timeout_ms or PAIR_TIMEOUTS * renderer.timeout_ms

    def __enter__(self) -> VisualScorer:
        self.renderer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._own:
            self.renderer.close()

    def close(self) -> None:
        if self._own:
            self.renderer.close()

    def score(
        self,
        ref_path: str | Path,
        pred_path: str | Path,
        modes: tuple[Mode, ...] = ("compat",),
        shared: SharedRenders | None = None,
    ) -> dict[str, PairResult]:
        """Score a pair in each of ``modes``. With ``shared`` (a batch's), the reference page's renders are
        taken from, or left for, the other pairs of the batch that score against the same reference."""
        cache = RenderCache(self.renderer, shared, str(Path(ref_path).resolve()))
        deadline = time.monotonic() + self.pair_timeout_ms / 1000
        failed: dict[bool, tuple[PageFailure, str]] = {}  # is_pred -> how that page failed in an earlier mode
        out: dict[str, PairResult] = {}
        for mode in modes:
            started = time.perf_counter()
            renders_before = cache.seconds
            # Python stages get the pair's time each, counted from their start: waiting for the browser while
            # other pairs hold it never makes a good pair time out.
            budget = self.pair_timeout_ms / 1000
            pred_plan = plan_page(pred_path, is_pred=True, mode=mode, deadline=time.monotonic() + budget)
            pred_plan = known_failure(pred_plan, failed.get(True))
            ref_plan = known_failure(plan_page(ref_path, is_pred=False, mode=mode), failed.get(False))
            if pred_plan.page.failure or ref_plan.page.failure:  # the pair ends with it: nothing to render
                pred, ref = pred_plan.page, ref_plan.page
            else:
                cache.prefetch(pred_plan.sources(), ref_plan.sources(), deadline)  # both pages in one batch
                pred = finish_page(pred_plan, cache)
                ref = finish_page(ref_plan, cache)
            for is_pred, page in ((True, pred), (False, ref)):
                if page.failure is not None:
                    failed[is_pred] = (page.failure, page.error or page.failure)
            extracted = time.perf_counter()
            res = score_pages(pred, ref, mode, self.clip_scorer, time.monotonic() + budget)
            res.seconds["render"] = cache.seconds - renders_before
            res.seconds["extract"] = extracted - started - res.seconds["render"]
            res.seconds["total"] = time.perf_counter() - started
            out[mode] = res
        return out
