"""OCR-free text blocks from the two recoloured renders, vectorised (numpy/OpenCV), each image decoded once.

For the same inputs this gives exactly the blocks of the reference's ``get_blocks_ocr_free``:

* diff pixels: ``abs(((a + 50) % 256) - b) <= 8`` on every channel, as a mask instead of a Python pixel loop;
* per item colour ``c`` (BGR), ``lower = c - 4`` and ``upper = c + 4`` in uint8 (so a channel at 0-3 or 252-255
  wraps and matches nothing), ``inRange`` AND diff mask instead of ``intersect1d``;
* bbox from the min/max row/column, normalised by the recoloured screenshot's own size;
* colour = ``mean`` of the *original* screenshot's RGB at those pixels, truncated with ``astype(int)`` (integer
  sums are exact in float64, so the order of summation does not matter);
* any error while building blocks (e.g. the original screenshot is shorter than the recoloured one) loses the
  whole page, as in the reference (``strict=True``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(slots=True)
class Block:
    """A text block: lower-cased text, normalised (x, y, w, h), mean RGB colour (floats).

    ``sources`` lists the ids of the extracted items that were merged into it (for the report).
    """

    text: str
    bbox: tuple[float, float, float, float]
    color: tuple[float, float, float]
    sources: list[int] = field(default_factory=list)

    def copy(self) -> Block:
        return Block(self.text, self.bbox, self.color, list(self.sources))


class BlockError(Exception):
    """The reference would return no blocks for this page (its bare ``except``)."""


def diff_mask(img0: np.ndarray, img1: np.ndarray) -> np.ndarray | None:
    """Text pixels: every channel of ``img1`` is within 8 of ``img0 + 50 (mod 256)``. None when sizes differ."""
    if img0.shape != img1.shape:
        return None
    a = img0.astype(np.int16)
    b = img1.astype(np.int16)
    return (np.abs(((a + 50) % 256) - b) <= 8).all(axis=-1)


def parse_hex_bgr(colour: str) -> tuple[int, int, int]:
    """The reference's ``hex_to_bgr``: ``lstrip('#')``, then ``int(s[i:i+2], 16)`` for i in 0, 2, 4."""
    digits = colour.lstrip("#")
    rgb = tuple(int(digits[i : i + 2], 16) for i in (0, 2, 4))
    return rgb[2], rgb[1], rgb[0]


@dataclass
class _ColourGroups:
    """Diff pixels grouped by their exact recoloured-render colour, with per-group statistics."""

    codes: np.ndarray  # (U,) sorted 24-bit RGB codes of the recoloured render
    colours: np.ndarray  # (U, 3) int16, RGB of the recoloured render
    count: np.ndarray  # (U,)
    row_min: np.ndarray
    row_max: np.ndarray
    col_min: np.ndarray
    col_max: np.ndarray
    sums: np.ndarray  # (U, 3) float64 sums of the original screenshot's RGB (exact integers)
    out_of_range: np.ndarray  # (U,) bool: some pixel lies outside the original screenshot
    inside: np.ndarray  # (U,) number of pixels inside the original screenshot


def _group(img_p: np.ndarray, mask: np.ndarray, original: np.ndarray) -> _ColourGroups:
    rows, cols = np.nonzero(mask)
    pix = img_p[rows, cols].astype(np.int32)
    codes = (pix[:, 0] << 16) | (pix[:, 1] << 8) | pix[:, 2]
    uniq, inverse = np.unique(codes, return_inverse=True)
    u = len(uniq)
    count = np.bincount(inverse, minlength=u)
    row_min = np.full(u, np.iinfo(np.int64).max, dtype=np.int64)
    col_min = row_min.copy()
    row_max = np.full(u, -1, dtype=np.int64)
    col_max = row_max.copy()
    np.minimum.at(row_min, inverse, rows)
    np.maximum.at(row_max, inverse, rows)
    np.minimum.at(col_min, inverse, cols)
    np.maximum.at(col_max, inverse, cols)
    oh, ow = original.shape[:2]
    inside = (rows < oh) & (cols < ow)
    inside_count = np.bincount(inverse, weights=inside.astype(np.float64), minlength=u).astype(np.int64)
    out_of_range = inside_count < count
    safe_rows = np.where(inside, rows, 0)
    safe_cols = np.where(inside, cols, 0)
    orig = original[safe_rows, safe_cols].astype(np.float64) * inside[:, None]
    sums = np.stack([np.bincount(inverse, weights=orig[:, k], minlength=u) for k in range(3)], axis=1)
    colours = np.stack([(uniq >> 16) & 255, (uniq >> 8) & 255, uniq & 255], axis=1).astype(np.int16)
    return _ColourGroups(
        uniq.astype(np.int64), colours, count, row_min, row_max, col_min, col_max, sums, out_of_range, inside_count
    )


def blocks_from_renders(
    items: list[tuple[str, str]], img_p: np.ndarray, img_p1: np.ndarray, original: np.ndarray, strict: bool = True
) -> list[Block]:
    """Blocks for the (text, colour) items of a page.

    Raises :class:`BlockError` where the reference's bare ``except`` returns no blocks; returns [] where it finds
    no diff pixels or the two recoloured renders differ in size. With ``strict=False`` (fixed mode) pixels outside
    the original screenshot are left out of the colour mean instead (a block with none inside is dropped).
    """
    mask = diff_mask(img_p, img_p1)
    if mask is None or not mask.any():
        return []
    groups = _group(img_p, mask, original)
    height, width = img_p.shape[:2]
    parsed: list[tuple[int, int, int] | None] = []
    for _, colour in items:
        try:
            parsed.append(parse_hex_bgr(colour))
        except Exception:
            parsed.append(None)
    distinct = sorted({c for c in parsed if c is not None})
    stats = _select_all(groups, distinct, strict)
    blocks: list[Block] = []
    for index, ((text, _), bgr) in enumerate(zip(items, parsed, strict=True)):
        if bgr is None or stats.get(bgr) is None:
            continue
        r0, r1, c0, c1, mean, out = stats[bgr]
        if out:
            raise BlockError("a text pixel lies outside the original screenshot (IndexError in the reference)")
        bbox = (c0 / width, r0 / height, (c1 - c0 + 1) / width, (r1 - r0 + 1) / height)
        blocks.append(Block(text.lower(), bbox, mean, [index]))
    return blocks


def _select_all(groups: _ColourGroups, colours: list[tuple[int, int, int]], strict: bool) -> dict:
    """Statistics of the diff pixels whose recoloured colour lies in each item colour's +-4 box.

    The groups' 24-bit codes are sorted, so for each red value in [r-4, r+4] the codes with green in [g-4, g+4]
    form one contiguous run (found with ``searchsorted``); only blue is filtered. A BGR channel at 0-3 or
    252-255 wraps in uint8 (``lower > upper``) and matches nothing, as in the reference.
    """
    out: dict[tuple[int, int, int], tuple | None] = {c: None for c in colours}
    usable = [c for c in colours if all(4 <= v <= 251 for v in c)]
    if not usable or len(groups.codes) == 0:
        return out
    rgb = np.array([c[::-1] for c in usable], dtype=np.int64)  # BGR -> RGB, as the codes are built
    reds = rgb[:, 0:1] + np.arange(-4, 5)[None, :]  # (K, 9)
    lo = np.searchsorted(groups.codes, (reds << 16) | ((rgb[:, 1:2] - 4) << 8), side="left")
    hi = np.searchsorted(groups.codes, (reds << 16) | ((rgb[:, 1:2] + 4) << 8) | 255, side="right")
    blue = groups.colours[:, 2]
    counts_source = groups.count if strict else groups.inside
    for k, colour in enumerate(usable):
        runs = [np.arange(lo[k, t], hi[k, t]) for t in range(9) if hi[k, t] > lo[k, t]]
        if not runs:
            continue
        idx = np.concatenate(runs)
        idx = idx[np.abs(blue[idx] - rgb[k, 2]) <= 4]
        if idx.size == 0:
            continue
        count = int(counts_source[idx].sum())
        if count == 0:
            continue
        mean = tuple(float(int(v)) for v in (groups.sums[idx].sum(axis=0) / count))
        out[colour] = (
            int(groups.row_min[idx].min()),
            int(groups.row_max[idx].max()),
            int(groups.col_min[idx].min()),
            int(groups.col_max[idx].max()),
            mean,
            strict and bool(groups.out_of_range[idx].any()),
        )
    return out


def merge_blocks_by_bbox(blocks: list[Block]) -> list[Block]:
    """Fuse blocks with the same bbox tuple: text joined with a space, colour = pairwise float mean in order.

    The reference mutates the first block of each group; this works on copies.
    """
    merged: dict[tuple[float, float, float, float], Block] = {}
    for block in blocks:
        existing = merged.get(block.bbox)
        if existing is None:
            merged[block.bbox] = block.copy()
        else:
            existing.text = existing.text + " " + block.text
            (r1, g1, b1), (r2, g2, b2) = existing.color, block.color
            existing.color = ((r1 + r2) / 2, (g1 + g2) / 2, (b1 + b2) / 2)
            existing.sources.extend(block.sources)
    return list(merged.values())
