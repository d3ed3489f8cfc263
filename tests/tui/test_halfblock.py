"""The half-block renderer and the box overlay, on synthetic images with known pixels."""

from __future__ import annotations

from PIL import Image
from textual.app import App, ComposeResult

from replay_tui.tui.widgets.halfblock import Box, HalfBlockImage, draw_boxes, image_rows, scale_image, tint


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


def _outline(out: Image.Image, box: Box) -> list[tuple[int, int, int]]:
    """The pixels along the top and left edges of ``box`` as draw_boxes places them."""
    x0, y0 = int(box.x * out.width), int(box.y * out.height)
    x1, y1 = int((box.x + box.w) * out.width - 1), int((box.y + box.h) * out.height - 1)
    return [out.getpixel((x, y0)) for x in range(x0, x1 + 1)] + [out.getpixel((x0, y)) for y in range(y0, y1 + 1)]


def _runs(pixels: list[tuple[int, int, int]], colour: tuple[int, int, int]) -> list[int]:
    runs, length = [], 0
    for pixel in pixels:
        if pixel == colour:
            length += 1
        elif length:
            runs.append(length)
            length = 0
    return [*runs, length] if length else runs


def test_dashed_outline_has_gaps_a_solid_one_has_none():
    image = Image.new("RGB", (100, 50), (255, 255, 255))
    red = (255, 0, 0)
    solid, dashed = Box(0.1, 0.2, 0.6, 0.6, red), Box(0.1, 0.2, 0.6, 0.6, red, dashed=True)
    assert set(_outline(draw_boxes(image, [solid]), solid)) == {red}
    edge = _outline(draw_boxes(image, [dashed]), dashed)
    assert red in edge and (255, 255, 255) in edge
    assert max(_runs(edge, red)) >= 2  # dashes, not dots


def test_dashes_grow_with_the_image_so_they_survive_downscaling():
    red = (255, 0, 0)
    box = Box(0.1, 0.1, 0.8, 0.8, red, dashed=True)
    small = _runs(_outline(draw_boxes(Image.new("RGB", (100, 100), "white"), [box]), box), red)
    large = _runs(_outline(draw_boxes(Image.new("RGB", (1280, 1280), "white"), [box]), box), red)
    assert max(large) > max(small)


def test_dashed_thick_outline_stays_inside_the_box():
    image = Image.new("RGB", (100, 100), (255, 255, 255))
    out = draw_boxes(image, [Box(0.2, 0.2, 0.6, 0.6, (0, 0, 255), width=3, dashed=True)])
    assert out.getpixel((19, 20)) == (255, 255, 255) and out.getpixel((20, 19)) == (255, 255, 255)
    assert out.getpixel((20, 20)) == (0, 0, 255) and out.getpixel((22, 21)) == (0, 0, 255)


def test_merged_parts_are_inner_lines_in_a_lighter_tint():
    image = Image.new("RGB", (100, 100), (255, 255, 255))
    green = (0, 160, 0)
    box = Box(0.1, 0.1, 0.8, 0.8, green, parts=((0.1, 0.1, 0.8, 0.4), (0.1, 0.5, 0.8, 0.4)))
    out = draw_boxes(image, [box])
    seam = out.getpixel((50, 50))  # the top edge of the second part, inside the merged box
    assert seam == tint(green) and seam != green and seam != (255, 255, 255)
    assert out.getpixel((50, 10)) == green  # the merged box's own outline stays on top
    assert out.getpixel((50, 30)) == (255, 255, 255)


def test_a_part_equal_to_the_box_adds_nothing():
    image = Image.new("RGB", (60, 40), (255, 255, 255))
    plain = Box(0.1, 0.1, 0.5, 0.5, (200, 0, 200))
    same = Box(0.1, 0.1, 0.5, 0.5, (200, 0, 200), parts=((0.1, 0.1, 0.5, 0.5),))
    assert draw_boxes(image, [same]).tobytes() == draw_boxes(image, [plain]).tobytes()
