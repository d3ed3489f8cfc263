"""A deterministic terminal image: two pixels per cell with the upper half block "▀".

Screenshots are scaled to the widget's width (two pixel rows per terminal row), then boxes are
drawn on the small image so they stay one pixel wide and visible at any zoom. Only the visible
rows are turned into segments (Line API), and the scaled image is cached per width and zoom.
The output is the same in every terminal, so it is what tests and snapshots see.

Boxes tell matched, missing and hallucinated blocks apart by colour and by shape (``dashed``), so the
difference survives a colour-blind reader or a 16-colour terminal; a merged block carries the bboxes
of its pieces (``parts``), drawn as thin inner lines so it visibly shows what it is made of.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil
from typing import TYPE_CHECKING

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

if TYPE_CHECKING:  # numpy and Pillow load at the first picture, not at the app's launch (~70 ms)
    import numpy as np
    from PIL import Image, ImageDraw

RGB = tuple[int, int, int]
BBox = tuple[float, float, float, float]


@dataclass(frozen=True)
class Box:
    """A rectangle in normalised page coordinates (x, y, w, h in [0, 1]) and how to draw it.

    ``dashed`` draws the outline dashed (a missing reference block); ``parts`` are the normalised
    bboxes of the blocks merged into this one, drawn as thin inner lines in a lighter tint.
    """

    x: float
    y: float
    w: float
    h: float
    color: RGB
    width: int = 1
    fill: bool = False
    dashed: bool = False
    parts: tuple[BBox, ...] = ()


def as_rgb(image: Image.Image) -> Image.Image:
    """``image`` itself when it is RGB already (``convert`` would copy a whole screenshot)."""
    return image if image.mode == "RGB" else image.convert("RGB")


def scale_image(image: Image.Image, width_px: int, zoom: float = 1.0) -> Image.Image:
    """The image resized to ``width_px * zoom`` pixels wide, keeping its aspect ratio."""
    target_w = max(1, round(width_px * zoom))
    target_h = max(2, round(image.height * target_w / max(1, image.width)))
    from PIL import Image

    return as_rgb(image).resize((target_w, target_h), Image.Resampling.BOX)


def tint(color: RGB) -> RGB:
    """A lighter shade of ``color`` (halfway to white), for the inner lines of merged blocks."""
    return (color[0] + 255) // 2, (color[1] + 255) // 2, (color[2] + 255) // 2


def _corners(x: float, y: float, w: float, h: float, size: tuple[int, int]) -> tuple[float, float, float, float]:
    width, height = size
    x0, y0 = x * width, y * height
    return x0, y0, max(x0 + 1, (x + w) * width - 1), max(y0 + 1, (y + h) * height - 1)


def _dashed_rectangle(
    draw: ImageDraw.ImageDraw, corners: tuple[float, float, float, float], color: RGB, line: int, dash: int
) -> None:
    """An outline ``line`` px thick (drawn inwards, like ``ImageDraw.rectangle``) in dashes ``dash`` px long."""
    x0, y0, x1, y1 = (int(v) for v in corners)  # ImageDraw truncates the same way
    line = max(1, min(line, (x1 - x0) // 2 + 1, (y1 - y0) // 2 + 1))
    for x in range(x0, x1 + 1, 2 * dash):
        end = min(x + dash - 1, x1)
        draw.rectangle((x, y0, end, y0 + line - 1), fill=color)
        draw.rectangle((x, y1 - line + 1, end, y1), fill=color)
    for y in range(y0, y1 + 1, 2 * dash):
        end = min(y + dash - 1, y1)
        draw.rectangle((x0, y, x0 + line - 1, end), fill=color)
        draw.rectangle((x1 - line + 1, y, x1, end), fill=color)


def _inner_lines(
    draw: ImageDraw.ImageDraw, box: Box, corners: tuple[float, float, float, float], size: tuple[int, int]
) -> None:
    """The edges of ``box.parts`` that fall strictly inside the box's outline, one pixel wide."""
    x0, y0, x1, y1 = (int(v) for v in corners)
    line = max(1, box.width)
    left, top, right, bottom = x0 + line, y0 + line, x1 - line, y1 - line  # the interior, inclusive
    if left > right or top > bottom:
        return
    colour = tint(box.color)
    whole = (box.x, box.y, box.w, box.h)
    for part in box.parts:
        if tuple(part) == whole:
            continue
        px0, py0, px1, py1 = (int(v) for v in _corners(*part, size))
        xs, xe, ys, ye = max(px0, left), min(px1, right), max(py0, top), min(py1, bottom)
        if xs > xe or ys > ye:
            continue
        for y in (py0, py1):
            if top <= y <= bottom:
                draw.line((xs, y, xe, y), fill=colour)
        for x in (px0, px1):
            if left <= x <= right:
                draw.line((x, ys, x, ye), fill=colour)


def draw_boxes(image: Image.Image, boxes: Sequence[Box]) -> Image.Image:
    """Draw boxes (normalised coordinates) on a copy of ``image``.

    Dashes are 2 px on small (half-block) images and grow with the image width, so they stay visible
    after a full-resolution overlay is scaled down for display.
    """
    out = image.copy()
    from PIL import ImageDraw

    draw = ImageDraw.Draw(out, "RGBA")
    dash_base = max(2, out.width // 200)
    for box in boxes:
        corners = _corners(box.x, box.y, box.w, box.h, out.size)
        if box.fill:
            draw.rectangle(corners, fill=(*box.color, 70))
        if box.parts:
            _inner_lines(draw, box, corners, out.size)
        if box.dashed:
            _dashed_rectangle(draw, corners, box.color, box.width, max(dash_base, ceil(1.5 * box.width)))
        else:
            draw.rectangle(corners, outline=box.color, width=box.width)
    return out


_STYLES: dict[tuple[int, ...], Style] = {}
_STYLE_CACHE_LIMIT = 1 << 16


def _style(key: tuple[int, ...]) -> Style:
    """The style of one cell (upper pixel as foreground, lower as background), cached: screenshots
    repeat few colours, and building a Style per pixel dominates otherwise."""
    style = _STYLES.get(key)
    if style is None:
        if len(_STYLES) >= _STYLE_CACHE_LIMIT:
            _STYLES.clear()
        style = Style(color=Color.from_rgb(key[0], key[1], key[2]), bgcolor=Color.from_rgb(key[3], key[4], key[5]))
        _STYLES[key] = style
    return style


def row_segments(pixels: np.ndarray, row: int) -> list[Segment]:
    """Segments for terminal row ``row`` of an (H, W, 3) uint8 array; runs of equal cells merged."""
    import numpy as np

    upper = pixels[2 * row]
    lower = pixels[2 * row + 1] if 2 * row + 1 < pixels.shape[0] else np.zeros_like(upper)
    cells = np.concatenate([upper[:, :3], lower[:, :3]], axis=1).tolist()
    segments: list[Segment] = []
    run_key: tuple[int, ...] | None = None
    run = 0
    for cell in cells:
        key = tuple(cell)
        if key == run_key:
            run += 1
            continue
        if run_key is not None:
            segments.append(Segment("▀" * run, _style(run_key)))
        run_key, run = key, 1
    if run_key is not None:
        segments.append(Segment("▀" * run, _style(run_key)))
    return segments


def image_rows(image: Image.Image) -> list[list[Segment]]:
    """Segments for every terminal row of an RGB image: upper pixel as foreground, lower as background."""
    import numpy as np

    pixels = np.asarray(image.convert("RGB"))
    return [row_segments(pixels, row) for row in range((pixels.shape[0] + 1) // 2)]


class HalfBlockImage(ScrollView):
    """Shows a PIL image with boxes, scaled to the widget width; scrolls vertically.

    Three caches keep a selection change cheap on a long page: the scaled screenshot (per image,
    width and zoom; only a resize or zoom rescales), the scaled picture with the boxes drawn (only a
    change of boxes redraws, on the small image), and the segments of the rows that were on screen.
    """

    ALLOW_MAXIMIZE = True
    DEFAULT_CSS = "HalfBlockImage { height: 1fr; }"

    def __init__(
        self,
        image: Image.Image | None = None,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ):
        super().__init__(name=name, id=id, classes=classes)
        self.image = image
        self.boxes: list[Box] = []
        self.zoom = 1.0
        self._scaled: dict[tuple, Image.Image] = {}  # (image id, width, zoom) -> scaled screenshot
        self._key: tuple | None = None  # the key the drawn picture was made for
        self._pixels: np.ndarray | None = None  # scaled picture with boxes, (H, W, 3)
        self._rows: dict[int, list[Segment]] = {}

    def set_image(self, image: Image.Image | None, boxes: Sequence[Box] = ()) -> None:
        self.image = image
        self.boxes = list(boxes)
        self._scaled.clear()
        self._invalidate()

    def set_boxes(self, boxes: Sequence[Box]) -> None:
        self.boxes = list(boxes)
        self._invalidate()

    def set_zoom(self, zoom: float) -> None:
        self.zoom = max(1.0, min(8.0, zoom))
        self._invalidate()

    def _invalidate(self) -> None:
        self._key = None
        self.refresh()

    @property
    def row_count(self) -> int:
        """Terminal rows of the whole picture at the current width and zoom."""
        self._prepare()
        return 0 if self._pixels is None else (self._pixels.shape[0] + 1) // 2

    def scroll_to_box(self, box: Box) -> None:
        """Scroll so that ``box`` is in view (vertically centred, horizontally when zoomed)."""
        total_rows = self.row_count
        width_cells = self.virtual_size.width
        row = int((box.y + box.h / 2) * total_rows)
        col = int((box.x + box.w / 2) * width_cells)
        region = self.scrollable_content_region
        self.scroll_to(
            x=max(0, col - region.width // 2), y=max(0, row - region.height // 2), animate=False, immediate=True
        )

    def on_resize(self, event: events.Resize) -> None:
        self._key = None

    def _prepare(self) -> None:
        width = max(1, self.scrollable_content_region.width)
        key = (id(self.image), width, self.zoom)
        if key == self._key:
            return
        self._key = key
        self._rows = {}
        if self.image is None:
            self._pixels = None
            self.virtual_size = Size(width, 0)
            return
        scaled = self._scaled.get(key)
        if scaled is None:
            if len(self._scaled) >= 4:
                self._scaled.clear()
            scaled = self._scaled[key] = scale_image(self.image, width, self.zoom)
        import numpy as np

        self._pixels = np.asarray(draw_boxes(scaled, self.boxes))
        self.virtual_size = Size(scaled.width, (scaled.height + 1) // 2)

    def render_line(self, y: int) -> Strip:
        self._prepare()
        width = self.scrollable_content_region.width
        index = round(self.scroll_offset.y) + y
        pixels = self._pixels
        if pixels is None or index >= (pixels.shape[0] + 1) // 2:
            return Strip([Segment(" " * width)])
        segments = self._rows.get(index)
        if segments is None:
            segments = self._rows[index] = row_segments(pixels, index)
        x = round(self.scroll_offset.x)
        return Strip(segments).crop_extend(x, x + width, None)
