"""OCR-free blocks: the vectorised extraction equals the reference's pixel loop, quirks included."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from replay_tui.visual import htmlproc
from replay_tui.visual.blocks import (
    Block,
    BlockError,
    blocks_from_renders,
    diff_mask,
    merge_blocks_by_bbox,
    parse_hex_bgr,
)
from tests.visual import reference_impl as reference


def _pngs(tmp_path, img0, img1, original):
    paths = []
    for name, img in (("p0.png", img0), ("p1.png", img1), ("orig.png", original)):
        Image.fromarray(img).save(tmp_path / name)
        paths.append(str(tmp_path / name))
    return paths


def _synthetic(seed=0, h=40, w=60):
    rng = np.random.default_rng(seed)
    img0 = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    img1 = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    colours = ["#0A0A0A", "#FAFA9A", "#1A2A3A", "#FEFEFE", "#020202"]
    for k, colour in enumerate(colours):
        b, g, r = parse_hex_bgr(colour)
        rgb = np.array([r, g, b], dtype=np.int16)
        y0, x0 = 3 + 7 * k, 2 + 9 * k
        for dy in range(3):
            for dx in range(5):
                jitter = np.array([(dx + dy) % 5 - 2, dy - 1, 0], dtype=np.int16)
                img0[y0 + dy, x0 + dx] = np.clip(rgb + jitter, 0, 255).astype(np.uint8)
                img1[y0 + dy, x0 + dx] = (img0[y0 + dy, x0 + dx].astype(np.int16) + 50 + dy - 1) % 256
    original = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    items = [
        ("Hello", "#0A0A0A"),
        ("World", "#FAFA9A"),
        ("again", "#FAFA9A"),
        ("x", "#1A2A3A"),
        ("wrap", "#FEFEFE"),
        ("wrap-low", "#020202"),
        ("bad", "#ccc"),
        ("name", "#zzzzzz"),
        ("none", "#000000"),
    ]
    return img0, img1, original, items


def test_diff_mask_equals_pixel_loop(tmp_path):
    img0, img1, original, _ = _synthetic()
    p0, p1, _ = _pngs(tmp_path, img0, img1, original)
    loop = reference.find_different_pixels(p0, p1)
    mask = diff_mask(img0, img1)
    assert loop is not None
    assert sorted(map(tuple, loop.tolist())) == sorted(map(tuple, np.argwhere(mask).tolist()))
    assert diff_mask(img0, img1[:-1]) is None


def test_blocks_equal_reference_loop(tmp_path):
    img0, img1, original, items = _synthetic()
    p0, p1, porig = _pngs(tmp_path, img0, img1, original)
    expected = reference.blocks_from_pngs(p0, porig, items, reference.find_different_pixels(p0, p1))
    got = blocks_from_renders(items, img0, img1, original)
    assert [(b.text, b.bbox, b.color) for b in got] == [
        (e["text"], tuple(float(v) for v in e["bbox"]), tuple(float(c) for c in e["color"])) for e in expected
    ]
    texts = [b.text for b in got]
    assert texts == ["hello", "world", "again", "x"]  # lower-cased; wrap/bad hex/default black dropped


def test_uint8_wrap_gives_empty_range():
    img = np.zeros((4, 4, 3), np.uint8) + 254
    img1 = ((img.astype(np.int16) + 50) % 256).astype(np.uint8)
    assert blocks_from_renders([("t", "#FEFEFE")], img, img1, img) == []


def test_original_smaller_than_recoloured_loses_page():
    img0, img1, original, items = _synthetic()
    with pytest.raises(BlockError):
        blocks_from_renders(items, img0, img1, original[:10])
    lenient = blocks_from_renders(items, img0, img1, original[:10], strict=False)
    assert lenient and all(b.text != "" for b in lenient)


def test_no_diff_pixels_means_no_blocks():
    img = np.zeros((5, 5, 3), np.uint8)
    assert blocks_from_renders([("a", "#0A0A0A")], img, img, img) == []


def test_merge_blocks_by_bbox_pairwise_mean_and_no_mutation():
    a = Block("a", (0.1, 0.1, 0.2, 0.2), (10.0, 20.0, 30.0), [0])
    b = Block("b", (0.1, 0.1, 0.2, 0.2), (20.0, 20.0, 30.0), [1])
    c = Block("c", (0.1, 0.1, 0.2, 0.2), (40.0, 20.0, 31.0), [2])
    d = Block("d", (0.5, 0.1, 0.2, 0.2), (1.0, 2.0, 3.0), [3])
    merged = merge_blocks_by_bbox([a, b, c, d])
    assert [m.text for m in merged] == ["a b c", "d"]
    assert merged[0].color == (((10 + 20) / 2 + 40) / 2, 20.0, ((30 + 30) / 2 + 31) / 2)
    assert merged[0].sources == [0, 1, 2]
    assert a.text == "a"


def test_colour_pool_and_update_style():
    pool0, pool50 = htmlproc.color_pool(0), htmlproc.color_pool(50)
    assert len(pool0) == 4096 and pool0[-1] == "FAFAFA" and pool50[-1] == "2C2C2C" and pool0[0] == "0A0A0A"
    soup = htmlproc.parse('<p style="color: red; background-color: blue;; border-color:#ccc">x</p>')
    tag = soup.p
    htmlproc.update_style(tag, "background-color", "rgba(255, 255, 255, 0.0)")
    htmlproc.update_style(tag, "color", "#FAFAFA")
    # entries keep their leading space, so re-joining with "; " doubles it (harmless, but it is what bs4 writes)
    assert tag["style"] == (
        "border-color:#ccc;  background-color: rgba(255, 255, 255, 0.0) !important; color: #FAFAFA !important"
    )


def test_perturb_and_extract_quirks():
    html = (
        '<html><head><title>t</title></head><body><div style="color: rgb(1, 2, 3)">Top<!-- c -->'
        '<strong>bold</strong><script>var a=1;</script></div><em style="color: #abc">em</em>'
        '<i style="color: rgba(1,2,3,0.5)">it</i></body></html>'
    )
    variants = htmlproc.perturb(html)
    assert variants.text_tags == 1
    assert "color: #FAFAFA !important; opacity: 1.0 !important" in variants.variant0
    assert "color: #2C2C2C !important; opacity: 1.0 !important" in variants.variant1
    items = htmlproc.extract_text_with_color(variants.variant0)
    assert items == [
        ("Top", "#FAFAFA"),
        ("bold", "#FAFAFA"),
        ("var a=1;", "#FAFAFA"),
        ("em", "#abc"),
        ("it", "#000000"),
    ]
    assert htmlproc.extract_text_with_color("<p>no body</p>") == []


def test_pool_exhausted_and_crashing_colour():
    html = "<html><body>" + "<span>x</span>" * 4097 + "</body></html>"
    with pytest.raises(htmlproc.PoolExhausted):
        htmlproc.perturb(html)
    chunked = htmlproc.perturb(html, chunk=1, strict_pool=False)
    assert chunked.text_tags == 1
    with pytest.raises(htmlproc.ReferenceCrash):
        htmlproc.extract_text_with_color('<body><p style="color:">x</p></body>')
    assert htmlproc.extract_text_with_color('<body><p style="color:">x</p></body>', lenient=True) == [("x", "#000000")]


def test_real_page_blocks(renderer, tmp_path):
    html = (
        '<html><body style="margin:20px;font-family:Liberation Sans"><h1 style="color:#336699">Title here</h1>'
        "<p>First paragraph of text.</p><p>Second <b>bold</b> words.</p><div></div></body></html>"
    )
    original = renderer.render_html(html, tmp_path, "page")
    variants = htmlproc.perturb(html)
    r0 = renderer.render_html(variants.variant0, tmp_path, "p0")
    r1 = renderer.render_html(variants.variant1, tmp_path, "p1")
    items = htmlproc.extract_text_with_color(variants.variant0)
    blocks = blocks_from_renders(items, r0.image, r1.image, original.image)
    texts = [b.text for b in blocks]
    assert texts == ["title here", "first paragraph of text.", "second", "bold", "words."]
    title = blocks[0]
    x, y, w, h = title.bbox
    assert 0 < x < 0.1 and 0 < y < 0.1 and 0 < w < 0.5 and 0 < h < 0.1
    assert abs(title.color[0] - 0x33) < 60 and title.color[2] > title.color[0]  # sampled from the real rendering
    assert blocks[2].bbox == blocks[4].bbox  # same tag, same colour -> same box
