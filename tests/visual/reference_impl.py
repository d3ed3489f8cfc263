"""A straightforward re-implementation of the reference algorithm, for tests and the benchmark.

This is the slow shape of Design2Code's metric, written from its description: a new browser per screenshot, PNG
files on disk re-decoded per block, a pure-Python pixel loop for the diff, ``np.intersect1d`` on structured
views, dict blocks with ``deepcopy``, the cost matrix rebuilt cell by cell with a new ``SequenceMatcher`` for every
matching and every merge trial, and the context adjustment as a per-cell loop. It shares only the bs4-based HTML
rewriting (:mod:`replay_tui.visual.htmlproc`) and the colour formula with the fast engine. Do not use it for real
work: 100 blocks a side take minutes.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from copy import deepcopy
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image
from scipy.optimize import linear_sum_assignment

from replay_tui.visual import htmlproc
from replay_tui.visual.color import delta_e_colormath, srgb_to_lab
from replay_tui.visual.render import CHROMIUM_ARGS, VIEWPORT, find_chromium

# -- rendering: one browser per screenshot -----------------------------------------------------------------------


def screenshot(html_path: str, png_path: str, executable: str | None = None, browser: Any = None) -> bool:
    """Launch a browser, capture one full-page screenshot, close it. On failure write a blank 1280x960 PNG.

    Given a launched ``browser`` (:func:`evaluate`'s ``one_browser``), the screenshot is taken in a new window
    (context) of it instead, which the reference's capture cannot tell apart: same flags, same fresh state."""
    try:
        if browser is not None:
            _capture(browser, html_path, png_path)
            return True
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            launched = p.chromium.launch(executable_path=find_chromium(executable), args=CHROMIUM_ARGS)
            try:
                _capture(launched, html_path, png_path)
            finally:
                launched.close()
        return True
    except Exception:
        Image.new("RGB", (1280, 960), "white").save(png_path)
        return False


def _capture(browser: Any, html_path: str, png_path: str) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        context.route(
            "**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort()
        )
        page = context.new_page()
        page.goto("file://" + os.path.abspath(html_path), timeout=60000)
        page.screenshot(path=png_path, full_page=True, animations="disabled", timeout=60000)
    finally:
        context.close()


@contextmanager
def _one_browser(executable: str | None, wanted: bool) -> Iterator[Any]:
    """A browser for every screenshot of one :func:`evaluate` (``wanted``), else None: one per screenshot."""
    if not wanted:
        yield None
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(executable), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


# -- dedup (no quick-ratio filter) ----------------------------------------------------------------------------------


def check_repetitive_content(
    content: str, chunk_size: int = 100, repetition_threshold: int = 5, similarity_threshold: float = 0.8
) -> int | None:
    import re

    clean = re.sub("<.*?>", "", content)
    position_map = []
    index = 0
    for char in clean:
        while content[index] != char:
            index += 1
        position_map.append(index)
        index += 1
    chunks = [clean[i : i + chunk_size] for i in range(0, len(clean), chunk_size)]
    seen: dict[str, list[int]] = {}
    start = len(clean)
    for i, chunk in enumerate(chunks):
        for seen_chunk, indexes in seen.items():
            if difflib.SequenceMatcher(None, chunk, seen_chunk).ratio() >= similarity_threshold:
                indexes.append(i)
                if len(indexes) >= repetition_threshold:
                    clean_start = min(start, indexes[0] * chunk_size)
                    candidate = position_map[clean_start] if clean_start < len(position_map) else len(content)
                    if candidate < start:
                        start = candidate
                break
        else:
            seen[chunk] = [i]
    return start if start != len(clean) else None


# -- blocks ------------------------------------------------------------------------------------------------------


def find_different_pixels(png0: str, png1: str):
    img1 = Image.open(png0)
    img2 = Image.open(png1)
    if img1.size != img2.size:
        return None
    img1 = img1.convert("RGB")
    img2 = img2.convert("RGB")
    p1 = img1.load()
    p2 = img2.load()
    out = []
    for x in range(img1.size[0]):
        for y in range(img1.size[1]):
            r1, g1, b1 = p1[x, y]
            r2, g2, b2 = p2[x, y]
            if abs((r1 + 50) % 256 - r2) <= 8 and abs((g1 + 50) % 256 - g2) <= 8 and abs((b1 + 50) % 256 - b2) <= 8:
                out.append((y, x))
    return np.stack(out) if out else None


def average_color(png: str, coords) -> tuple:
    image = np.array(Image.open(png).convert("RGB"))
    colours = [image[x, y] for x, y in coords]
    return tuple(np.mean(colours, axis=0).astype(int))


def blocks_from_pngs(png_p: str, png_original: str, items, diff) -> list[dict]:
    image = cv2.imread(png_p)
    rows, cols = image.shape[0], image.shape[1]

    def intersect(a, b):
        av = a.view([("", a.dtype)] * a.shape[1])
        bv = b.view([("", b.dtype)] * b.shape[1])
        common = np.intersect1d(av, bv)
        return common.view(a.dtype).reshape(-1, a.shape[1])

    blocks = []
    for text, colour in items:
        try:
            digits = colour.lstrip("#")
            rgb = tuple(int(digits[i : i + 2], 16) for i in (0, 2, 4))
            bgr = np.array(rgb[::-1], dtype="uint8")
        except Exception:
            continue
        lower = bgr - np.uint8(4)
        upper = bgr + np.uint8(4)
        mask = cv2.inRange(image, lower, upper)
        coords = np.column_stack(np.where(mask > 0))
        coords = intersect(coords.astype(diff.dtype), diff)
        if coords.size == 0:
            continue
        r_min, c_min = np.min(coords, axis=0)
        r_max, c_max = np.max(coords, axis=0)
        mean = average_color(png_original, coords)
        blocks.append(
            {
                "text": text.lower(),
                "bbox": (c_min / cols, r_min / rows, (c_max - c_min + 1) / cols, (r_max - r_min + 1) / rows),
                "color": mean,
            }
        )
    return blocks


def get_blocks(
    html_text: str, png_original: str, workdir: str, base_dir: str, executable: str | None = None, browser: Any = None
) -> list[dict]:
    """Everything after the original screenshot: two recoloured files, two browsers, pixel loop, blocks."""
    variants = htmlproc.perturb(html_text)
    paths = []
    for k, text in enumerate((variants.variant0, variants.variant1)):
        html_path = os.path.join(base_dir, f".ref-impl-{os.getpid()}-{k}.html")
        png_path = os.path.join(workdir, f"p{k}.png")
        Path(html_path).write_bytes(text.encode("utf-8", errors="surrogateescape"))
        try:
            screenshot(html_path, png_path, executable, browser)
        finally:
            os.unlink(html_path)
        paths.append(png_path)
    diff = find_different_pixels(paths[0], paths[1])
    if diff is None:
        return []
    items = htmlproc.extract_text_with_color(variants.variant0)
    try:
        return blocks_from_pngs(paths[0], png_original, items, diff)
    except Exception:
        return []


# -- matching ----------------------------------------------------------------------------------------------------


def cost_matrix(a: list[dict], b: list[dict], autojunk: bool = True) -> np.ndarray:
    out = np.zeros((len(a), len(b)))
    for i in range(len(a)):
        for j in range(len(b)):
            out[i, j] = -difflib.SequenceMatcher(None, a[i]["text"], b[j]["text"], autojunk=autojunk).ratio()
    return out


def adjust_cost_for_context(cost: np.ndarray, bonus: float, window: int) -> np.ndarray:
    if window <= 0:
        return cost
    n, m = cost.shape
    adjusted = np.copy(cost)
    for i in range(n):
        for j in range(m):
            if adjusted[i][j] >= -0.5:
                continue
            near = cost[max(0, i - window) : min(n, i + window + 1), max(0, j - window) : min(m, j + window + 1)]
            ordered = np.sort(near.flatten())[::-1]
            ordered = np.delete(ordered, np.where(ordered == cost[i, j])[0][0])
            adjusted[i][j] += bonus * np.sum(ordered[-window * 2 :])
    return adjusted


def maximum_matching(a, b, bonus, window, autojunk=True):
    cost = adjust_cost_for_context(cost_matrix(a, b, autojunk), bonus, window)
    rows, cols = linear_sum_assignment(cost)
    return list(zip(rows, cols, strict=True)), cost[rows, cols].tolist(), cost


def merge_two(b1: dict, b2: dict) -> dict:
    x_min = min(b1["bbox"][0], b2["bbox"][0])
    y_min = min(b1["bbox"][1], b2["bbox"][1])
    x_max = max(b1["bbox"][0] + b1["bbox"][2], b2["bbox"][0] + b2["bbox"][2])
    y_max = max(b1["bbox"][1] + b1["bbox"][3], b2["bbox"][1] + b2["bbox"][3])
    return {
        "text": b1["text"] + " " + b2["text"],
        "bbox": (x_min, y_min, x_max - x_min, y_max - y_min),
        "color": tuple((c1 + c2) // 2 for c1, c2 in zip(b1["color"], b2["color"], strict=True)),
    }


def merge_by_list(blocks, merge_list):
    pops = []
    while merge_list:
        i, j = merge_list[0][0], merge_list[0][1]
        blocks[i] = merge_two(blocks[i], blocks[j])
        pops.append(j)
        merge_list.pop(0)
        merge_list = [c for c in merge_list if c[0] != i and c[1] != i and c[0] != j and c[1] != j]
    for index in sorted(pops, reverse=True):
        if index < len(blocks):
            blocks.pop(index)
    return blocks


def difference_of_means(list1, list2):
    c1, c2 = Counter(list1), Counter(list2)
    for element in set(list1) & set(list2):
        common = min(c1[element], c2[element])
        c1[element] -= common
        c2[element] -= common
    u1, u2 = list(c1.elements()), list(c2.elements())
    m1 = sum(u1) / len(u1) if u1 else 0
    m2 = sum(u2) / len(u2) if u2 else 0
    if m1 - m2 > 0:
        return m1 - m2 if min(u1) > min(u2) else 0.0
    return m1 - m2


def find_possible_merge(a, b, bonus=0.1, window=1, autojunk=True):
    while True:
        a_changed = b_changed = False
        _, current, _ = maximum_matching(a, b, 0.0, 1, autojunk)
        if len(a) >= 2:
            merges = []
            for i in range(len(a) - 1):
                new_a = deepcopy(a)
                new_a[i] = merge_two(new_a[i], new_a[i + 1])
                new_a.pop(i + 1)
                _, updated, _ = maximum_matching(new_a, b, 0.0, 1, autojunk)
                diff = difference_of_means(current, updated)
                if diff > 0.05:
                    merges.append([i, i + 1, diff])
            merges.sort(key=lambda v: v[2], reverse=True)
            if merges:
                a_changed = True
                a = merge_by_list(a, merges)
                _, current, _ = maximum_matching(a, b, 0.0, 1, autojunk)
        if len(b) >= 2:
            merges = []
            for i in range(len(b) - 1):
                new_b = deepcopy(b)
                new_b[i] = merge_two(new_b[i], new_b[i + 1])
                new_b.pop(i + 1)
                _, updated, _ = maximum_matching(a, new_b, 0.0, 1, autojunk)
                diff = difference_of_means(current, updated)
                if diff > 0.05:
                    merges.append([i, i + 1, diff])
            merges.sort(key=lambda v: v[2], reverse=True)
            if merges:
                b_changed = True
                b = merge_by_list(b, merges)
                _, current, _ = maximum_matching(a, b, 0.0, 1, autojunk)
        if not a_changed and not b_changed:
            break
    matching, _, _ = maximum_matching(a, b, bonus, window, autojunk)
    return a, b, matching


def merge_blocks_by_bbox(blocks):
    merged = {}
    for block in blocks:
        key = tuple(block["bbox"])
        if key in merged:
            merged[key]["text"] += " " + block["text"]
            merged[key]["color"] = [(e + c) / 2 for e, c in zip(merged[key]["color"], block["color"], strict=True)]
        else:
            merged[key] = block
    return list(merged.values())


def color_similarity(rgb1, rgb2) -> float:
    delta = delta_e_colormath(srgb_to_lab(rgb1), srgb_to_lab(rgb2))
    return max(0, 1 - (delta / 100))


def score_blocks(pred_blocks: list[dict], ref_blocks: list[dict], autojunk: bool = True) -> dict:
    """The reference's scoring for one prediction, from raw (pre-``merge_blocks_by_bbox``) blocks of both pages.

    Returns the four sub-scores, the matching and the merged blocks (CLIP is left out).
    """
    pred_blocks = deepcopy(pred_blocks)
    ref_blocks = merge_blocks_by_bbox(deepcopy(ref_blocks))
    zero = {
        "block": 0.0,
        "text": 0.0,
        "position": 0.0,
        "color": 0.0,
        "pairs": [],
        "pred": pred_blocks,
        "ref": ref_blocks,
    }
    if not pred_blocks or not ref_blocks:
        return zero
    pred_blocks = merge_blocks_by_bbox(pred_blocks)
    pred_m, ref_m, matching = find_possible_merge(pred_blocks, deepcopy(ref_blocks), 0.1, 1, autojunk)
    kept = []
    for i, j in matching:
        sim = difflib.SequenceMatcher(None, pred_m[i]["text"], ref_m[j]["text"], autojunk=autojunk).ratio()
        if sim >= 0.5:
            kept.append([i, j, sim])
    idx1 = [k[0] for k in kept]
    idx2 = [k[1] for k in kept]
    un1 = 0.0
    for i in range(len(pred_m)):
        if i not in idx1:
            un1 += pred_m[i]["bbox"][2] * pred_m[i]["bbox"][3]
    un2 = 0.0
    for j in range(len(ref_m)):
        if j not in idx2:
            un2 += ref_m[j]["bbox"][2] * ref_m[j]["bbox"][3]
    sum_areas = [un1 + un2]
    matched_areas, texts, positions, colours, pairs = [], [], [], [], []
    for i, j, sim in kept:
        p, r = pred_m[i]["bbox"], ref_m[j]["bbox"]
        block_area = p[2] * p[3] + r[2] * r[3]
        x1, y1, x2, y2 = p[0] + p[2] / 2, p[1] + p[3] / 2, r[0] + r[2] / 2, r[1] + r[3] / 2
        position = 1 - max(abs(x2 - x1), abs(y2 - y1))
        colour = color_similarity(pred_m[i]["color"], ref_m[j]["color"])
        sum_areas.append(block_area)
        matched_areas.append(block_area)
        texts.append(sim)
        positions.append(position)
        colours.append(colour)
        pairs.append((int(i), int(j), sim, position, colour))
    if not matched_areas:
        return {**zero, "pred": pred_m, "ref": ref_m, "matching": matching}
    return {
        "block": float(np.sum(matched_areas) / np.sum(sum_areas)),
        "text": float(np.mean(texts)),
        "position": float(np.mean(positions)),
        "color": float(np.mean(colours)),
        "pairs": pairs,
        "pred": pred_m,
        "ref": ref_m,
        "matching": [(int(i), int(j)) for i, j in matching],
    }


# -- whole pipeline ------------------------------------------------------------------------------------------------


def evaluate(ref_path: str, pred_path: str, executable: str | None = None, *, one_browser: bool = False) -> dict:
    """The reference pipeline for one (reference, prediction) pair; the prediction file is not modified.

    ``one_browser``: its six screenshots in windows of one browser, not a browser each (the same pixels: a test of
    the results, not of the reference's cost, saves five starts of Chromium)."""
    workdir = tempfile.mkdtemp(prefix="replay-tui-refimpl-")
    try:
        with _one_browser(executable, one_browser) as browser:
            return _evaluate(ref_path, pred_path, workdir, executable, browser)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _evaluate(ref_path: str, pred_path: str, workdir: str, executable: str | None, browser: Any) -> dict:
    pred_text = Path(pred_path).read_text(encoding="utf-8")
    cut = check_repetitive_content(pred_text)
    if cut is not None:
        pred_text = pred_text[:cut]
    pred_text = htmlproc.make_html(pred_text)
    pred_text = htmlproc.truncate_repeated_elements(htmlproc.parse(pred_text))
    pred_dir = str(Path(pred_path).resolve().parent)
    pred_html = os.path.join(pred_dir, f".ref-impl-{os.getpid()}-pred.html")
    Path(pred_html).write_bytes(pred_text.encode("utf-8"))
    pred_png = os.path.join(workdir, "pred.png")
    try:
        screenshot(pred_html, pred_png, executable, browser)
    finally:
        os.unlink(pred_html)
    pred_blocks = get_blocks(pred_text, pred_png, workdir, pred_dir, executable, browser)
    ref_png = os.path.join(workdir, "ref.png")
    screenshot(str(Path(ref_path).resolve()), ref_png, executable, browser)
    ref_text = Path(ref_path).read_text(encoding="utf-8")
    ref_blocks = get_blocks(ref_text, ref_png, workdir, str(Path(ref_path).resolve().parent), executable, browser)
    started = time.perf_counter()
    out = score_blocks(pred_blocks, ref_blocks)
    out["matching_seconds"] = time.perf_counter() - started
    out["raw_pred"] = pred_blocks
    out["raw_ref"] = ref_blocks
    return out
