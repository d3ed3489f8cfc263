"""The screenshot pane: half-block by default, a cropped full-resolution viewport with sixel/TGP.

The graphics-mode tests use sixel: ``textual-image``'s sixel widget only injects its data into the
rendered strips, so it works headless, while its TGP renderable writes escape sequences straight to
``sys.__stdout__`` whenever it renders.
"""

from __future__ import annotations

import io
import sys
import types

import pytest
from PIL import Image
from textual import events
from textual.app import App, ComposeResult

from replay_tui.tui import graphics
from replay_tui.tui.widgets.halfblock import Box, HalfBlockImage
from replay_tui.tui.widgets.shot_view import ShotView, viewport

RED = (255, 0, 0)
SIZE = (60, 30)


@pytest.fixture(autouse=True)
def _keep_graphics_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """prepare() sets module globals: restore them after each test."""
    monkeypatch.setattr(graphics, "_current", graphics._current)
    monkeypatch.setattr(graphics, "_reason", graphics._reason)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _fake_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(graphics.ENV_VAR, raising=False)
    monkeypatch.setattr(sys, "stdout", _Tty())
    monkeypatch.setattr(sys, "__stdout__", _Tty())


def _fake_textual_image(monkeypatch: pytest.MonkeyPatch, detected: str) -> None:
    """Stand-ins for textual_image's modules, as if the terminal query had found ``detected``."""
    renderable = types.ModuleType("textual_image.renderable")
    for name in ("SixelImage", "TGPImage", "HalfcellImage", "UnicodeImage"):
        setattr(renderable, name, type(name, (), {}))
    renderable.Image = getattr(renderable, detected)
    monkeypatch.setitem(sys.modules, "textual_image.renderable", renderable)
    monkeypatch.setitem(sys.modules, "textual_image.widget", types.ModuleType("textual_image.widget"))


# The viewport arithmetic.


def test_zoom_one_shows_the_full_width():
    left, top, right, bottom = viewport((1280, 5000), (600, 600), 1.0, (0, 0))
    assert (left, right) == (0, 1280) and top == 0
    assert bottom - top == 1280  # the widget's square pixel aspect


def test_zoom_two_shows_half_the_width_centred_on_the_focus():
    left, top, right, bottom = viewport((1280, 5000), (600, 300), 2.0, (640, 2500))
    assert right - left == 640 and bottom - top == 320
    assert (left + right) / 2 == 640 and (top + bottom) / 2 == 2500


def test_the_window_is_clamped_at_the_edges():
    assert viewport((1280, 5000), (600, 300), 2.0, (1270, 4990)) == (640, 4680, 1280, 5000)
    assert viewport((1280, 5000), (600, 300), 4.0, (-50, -50)) == (0, 0, 320, 160)


def test_tall_pages_scroll_vertically_and_short_ones_start_at_the_top():
    top_of_page = viewport((1280, 8000), (400, 800), 1.0, (640, 0))
    further = viewport((1280, 8000), (400, 800), 1.0, (640, 4000))
    assert top_of_page[1] == 0 and further[1] > top_of_page[1]
    assert further[0] == top_of_page[0] == 0 and further[2] == 1280
    short = viewport((1280, 300), (400, 800), 1.0, (640, 150))
    assert short[1] == 0 and short[3] > 300  # runs past the bottom (padded), not stretched


# Choosing the protocol.


def test_not_prepared_means_half_block():
    assert graphics.current() == "halfblock"
    assert ShotView().protocol == "halfblock"


def test_prepare_halfblock(monkeypatch: pytest.MonkeyPatch):
    _fake_terminal(monkeypatch)
    assert graphics.prepare("halfblock") == "halfblock" == graphics.current()


def test_prepare_auto_without_a_terminal_is_half_block(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert graphics.prepare("auto") == "halfblock" == graphics.current()
    assert "terminal" in graphics.reason()


def test_environment_forces_half_block(monkeypatch: pytest.MonkeyPatch):
    _fake_terminal(monkeypatch)
    _fake_textual_image(monkeypatch, "SixelImage")
    monkeypatch.setenv(graphics.ENV_VAR, "halfblock")
    assert graphics.prepare("auto") == "halfblock"
    assert graphics.ENV_VAR in graphics.reason()


@pytest.mark.parametrize(
    ("detected", "expected"),
    [("SixelImage", "sixel"), ("TGPImage", "tgp"), ("HalfcellImage", "halfblock"), ("UnicodeImage", "halfblock")],
)
def test_auto_uses_what_textual_image_detected(monkeypatch: pytest.MonkeyPatch, detected: str, expected: str):
    _fake_terminal(monkeypatch)
    _fake_textual_image(monkeypatch, detected)
    assert graphics.prepare("auto") == expected == graphics.current()


def test_a_forced_protocol_is_used_as_asked(monkeypatch: pytest.MonkeyPatch):
    _fake_terminal(monkeypatch)
    _fake_textual_image(monkeypatch, "HalfcellImage")
    assert graphics.prepare("tgp") == "tgp"
    assert graphics.prepare("sixel") == "sixel"


def test_without_textual_image_it_falls_back_with_a_reason(monkeypatch: pytest.MonkeyPatch):
    _fake_terminal(monkeypatch)
    monkeypatch.setitem(sys.modules, "textual_image.renderable", None)  # makes the import fail
    assert graphics.prepare("auto") == "halfblock"
    assert "textual-image" in graphics.reason() and "\n" not in graphics.reason()


def test_a_failing_terminal_query_falls_back(monkeypatch: pytest.MonkeyPatch):
    _fake_terminal(monkeypatch)

    def broken(name: str) -> types.ModuleType:
        raise OSError("terminal went away")

    monkeypatch.setattr(graphics, "importlib", types.SimpleNamespace(import_module=broken))
    assert graphics.prepare("sixel") == "halfblock"
    assert "terminal went away" in graphics.reason()


def test_unknown_choice_is_an_error():
    with pytest.raises(ValueError):
        graphics.prepare("ascii")


# The widget.


class Harness(App):
    def __init__(self, mode: str | None = None) -> None:
        super().__init__()
        self.mode = mode

    def compose(self) -> ComposeResult:
        yield ShotView(graphics=self.mode, id="shot")


async def test_half_block_mode_wraps_half_block_image_and_forwards():
    image = Image.new("RGB", (200, 2000), (250, 250, 250))
    box = Box(0.1, 0.9, 0.2, 0.05, RED)
    app = Harness()
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(ShotView)
        child = view.query_one(HalfBlockImage)
        assert view.protocol == "halfblock"
        view.set_image(image)
        view.set_boxes([box])
        view.set_zoom(2)
        await pilot.pause()
        assert child.image is image is view.image
        assert child.boxes == [box] == view.boxes
        assert child.zoom == 2.0 == view.zoom
        view.scroll_to_box(box)
        await pilot.pause()
        assert child.scroll_offset.y > 0


def _expected_height(view: ShotView, crop_width: int) -> int:
    cell_w, cell_h = graphics.cell_size()
    columns, rows = view.content_size
    return round(crop_width * rows * cell_h / (columns * cell_w))


async def test_sixel_mode_shows_a_zoomed_crop_around_the_box():
    from textual_image.widget import SixelImage

    image = Image.new("RGB", (1280, 4000), (255, 255, 255))
    box = Box(0.6, 0.8, 0.2, 0.05, RED)
    app = Harness("sixel")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(ShotView)
        assert view.protocol == "sixel"
        picture = view.query_one(SixelImage)
        assert not view.query(HalfBlockImage)
        view.set_image(image)
        view.set_boxes([box])
        view.set_zoom(2)
        view.scroll_to_box(box)
        await pilot.pause()
        crop = picture.image
        assert isinstance(crop, Image.Image)
        assert crop.width == image.width // 2
        assert crop.height == _expected_height(view, crop.width)
        assert any(colour == RED for _, colour in crop.getcolors(maxcolors=1 << 16))
        left, top, right, bottom = view.window
        centre = ((box.x + box.w / 2) * image.width, (box.y + box.h / 2) * image.height)
        assert left <= centre[0] <= right and top <= centre[1] <= bottom


async def test_sixel_mode_scrolls_with_the_wheel_and_keys():
    from textual_image.widget import SixelImage

    image = Image.new("RGB", (1280, 6000), (255, 255, 255))
    app = Harness("sixel")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(ShotView)
        picture = view.query_one(SixelImage)
        view.set_image(image)
        await pilot.pause()
        assert view.window[1] == 0 and picture.image.width == image.width  # zoom 1: the full width
        picture.post_message(events.MouseScrollDown(picture, 1, 1, 0, 1, 0, False, False, False))
        await pilot.pause()
        after_wheel = view.window[1]
        assert after_wheel > 0
        view.focus()
        await pilot.press("pagedown")
        assert view.window[1] > after_wheel
        await pilot.press("home")
        assert view.window[1] == 0


async def test_a_short_page_is_padded_not_stretched():
    from textual_image.widget import SixelImage

    image = Image.new("RGB", (1280, 200), (255, 255, 255))
    app = Harness("sixel")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(ShotView)
        view.set_image(image)
        await pilot.pause()
        crop = view.query_one(SixelImage).image
        assert crop.width == image.width and crop.height == _expected_height(view, crop.width) > image.height
        assert crop.getpixel((10, 10)) == (255, 255, 255)
        assert crop.getpixel((10, crop.height - 1)) != (255, 255, 255)


async def test_half_block_mode_renders_exactly_like_half_block_image():
    """Wrapping must not move a single cell: the snapshots of the inspector depend on it."""
    image = Image.new("RGB", (300, 1800), (240, 240, 240))
    boxes = [Box(0.1, 0.5, 0.5, 0.1, (31, 119, 180), width=2, fill=True), Box(0.2, 0.7, 0.3, 0.1, (214, 39, 40))]

    class Pair(App):
        def __init__(self, wrapped: bool) -> None:
            super().__init__()
            self.wrapped = wrapped

        def compose(self) -> ComposeResult:
            yield ShotView(id="img") if self.wrapped else HalfBlockImage(id="img")

    screens = []
    for wrapped in (False, True):
        app = Pair(wrapped)
        async with app.run_test(size=SIZE) as pilot:
            widget = app.query_one("#img")
            widget.set_image(image)
            widget.set_boxes(boxes)
            widget.set_zoom(2)
            widget.scroll_to_box(boxes[1])
            await pilot.pause()
            screens.append(app.export_screenshot())
    assert screens[0] == screens[1]
