"""The half-block renderer and the box overlay, on synthetic images with known pixels."""

from __future__ import annotations

from PIL import Image
from textual.app import App, ComposeResult

from replay_tui.tui.widgets.halfblock import Box, HalfBlockImage, draw_boxes, image_rows, scale_image


def test_boxes_are_drawn_where_their_normalised_coordinates_say():
    image = Image.new("RGB", (100, 50), (255, 255, 255))
    out = draw_boxes(image, [Box(0.2, 0.4, 0.5, 0.2, (255, 0, 0))])
    assert out.getpixel((20, 20)) == (255, 0, 0)  # top-left corner
    assert out.getpixel((69, 29)) == (255, 0, 0)  # bottom-right corner
    assert out.getpixel((45, 25)) == (255, 255, 255)  # inside stays clear (outline only)
    assert out.getpixel((10, 10)) == (255, 255, 255)
    assert image.getpixel((20, 20)) == (255, 255, 255)  # the original is untouched


def test_filled_box_tints_the_inside():
    image = Image.new("RGB", (10, 10), (255, 255, 255))
    inside = draw_boxes(image, [Box(0, 0, 1, 1, (0, 0, 255), fill=True)]).getpixel((5, 5))
    assert inside[2] == 255 and inside[0] < 255


def test_two_pixel_rows_per_cell_upper_is_foreground():
    image = Image.new("RGB", (3, 4), (0, 0, 0))
    image.putpixel((0, 0), (255, 0, 0))
    image.putpixel((0, 1), (0, 255, 0))
    rows = image_rows(image)
    assert len(rows) == 2
    first = rows[0][0]
    assert first.text.startswith("▀")
    assert first.style.color.triplet == (255, 0, 0) and first.style.bgcolor.triplet == (0, 255, 0)
    assert sum(len(s.text) for s in rows[0]) == 3


def test_scaling_keeps_aspect():
    scaled = scale_image(Image.new("RGB", (1280, 720)), 64)
    assert scaled.size == (64, 36)
    assert scale_image(Image.new("RGB", (1280, 720)), 64, zoom=2).size == (128, 72)


async def test_widget_renders_and_scrolls_to_a_box():
    image = Image.new("RGB", (200, 2000), (250, 250, 250))

    class Harness(App):
        def compose(self) -> ComposeResult:
            yield HalfBlockImage(image, id="img")

    app = Harness()
    async with app.run_test(size=(40, 20)) as pilot:
        widget = app.query_one(HalfBlockImage)
        widget.set_boxes([Box(0.1, 0.9, 0.2, 0.05, (255, 0, 0))])
        await pilot.pause()
        width = widget.virtual_size.width  # the cells left beside the scrollbar
        assert widget.virtual_size.height == width * 10 // 2  # 10x taller than wide, 2 px per row
        widget.scroll_to_box(widget.boxes[0])
        await pilot.pause()
        assert widget.scroll_offset.y > 150
