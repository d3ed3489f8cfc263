"""Real headless Chromium: capture settings, network blocking, bounded page time, failures reported."""

from __future__ import annotations

import numpy as np

from replay_tui.visual.render import blank_image, decode_png


def test_viewport_width_and_full_page_height(renderer, tmp_path):
    html = '<html><body style="margin:0"><div style="height:2000px;background:#ff0000">x</div></body></html>'
    result = renderer.render_html(html, tmp_path, "tall")
    assert result.ok, result.error
    assert result.image.shape == (2000, 1280, 3)
    assert tuple(result.image[100, 100]) == (255, 0, 0)
    assert not list(tmp_path.glob(".tall.*")), "temporary file left behind"


def test_short_page_is_viewport_high_and_deterministic(renderer, tmp_path):
    html = "<html><body><p>hello world</p></body></html>"
    first = renderer.render_html(html, tmp_path, "a")
    second = renderer.render_html(html, tmp_path, "a")
    assert first.image.shape == (720, 1280, 3)
    assert np.array_equal(first.image, second.image)


def test_network_is_blocked_and_local_images_load(renderer, tmp_path):
    from PIL import Image

    Image.new("RGB", (40, 40), (0, 0, 255)).save(tmp_path / "blue.png")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.png"
    Image.new("RGB", (40, 40), (0, 255, 0)).save(outside)
    html = (
        '<html><body style="margin:0"><img src="blue.png"><img src="http://198.51.100.7/x.png">'
        f'<img src="{outside.as_uri()}"><script>fetch("https://example.invalid/")</script></body></html>'
    )
    result = renderer.render_html(html, tmp_path, "net")
    assert result.ok, result.error
    assert tuple(result.image[10, 10]) == (0, 0, 255)  # same-folder image rendered
    assert any(u.startswith("http://198.51.100.7") for u in result.blocked)
    assert any(u.startswith("https://example.invalid") for u in result.blocked)
    assert any(u.startswith("file:") and "outside" in u for u in result.blocked)


def test_page_that_never_loads_is_reported_and_renderer_recovers(renderer, tmp_path):
    saved = renderer.timeout_ms
    renderer.timeout_ms = 1500
    try:
        bad = renderer.render_html("<html><body><p>x</p><script>while(true){}</script></body></html>", tmp_path, "loop")
    finally:
        renderer.timeout_ms = saved
    assert not bad.ok
    assert bad.error and "Timeout" in bad.error
    good = renderer.render_html("<html><body><p>fine</p></body></html>", tmp_path, "ok")
    assert good.ok


def test_decode_and_blank():
    import cv2

    ok, png = cv2.imencode(".png", np.zeros((3, 4, 3), np.uint8) + np.array([1, 2, 3], np.uint8))
    assert ok
    rgb = decode_png(png.tobytes())
    assert tuple(rgb[0, 0]) == (3, 2, 1)  # cv2 wrote BGR (1,2,3) -> RGB (3,2,1)
    assert blank_image().shape == (960, 1280, 3)
