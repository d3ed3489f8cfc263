"""One screenshot pane: real pixels where the terminal has a graphics protocol, half-blocks otherwise.

With sixel or the kitty graphics protocol (``textual-image``), a terminal image cannot be scrolled
like text, so the pane shows a *viewport*: the boxes are drawn on the full-resolution screenshot once
(cached per image and boxes), then a window of it (``image width / zoom`` wide, in the pane's pixel
aspect ratio) is cropped around a focus point and handed to the ``textual-image`` widget. Scrolling
and ``scroll_to_box`` only move the window. In half-block mode the pane wraps :class:`HalfBlockImage`
unchanged, so tests and snapshots render exactly as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from math import ceil
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget

from replay_tui.tui import graphics as graphics_mode
from replay_tui.tui.widgets.halfblock import Box, HalfBlockImage, as_rgb, draw_boxes

if TYPE_CHECKING:  # Pillow loads at the first picture
    from PIL import Image

Viewport = tuple[int, int, int, int]
MIN_ZOOM, MAX_ZOOM = 1.0, 8.0
WHEEL_ROWS = 3


def viewport(
    image_size: tuple[int, int], widget_px: tuple[int, int], zoom: float, focus: tuple[float, float]
) -> Viewport:
    """The window (left, top, right, bottom) of the image to show, centred on ``focus`` (image pixels).

    It is ``image width / zoom`` wide with the widget's aspect ratio, clamped inside the image. When
    the image is shorter than the window, the window starts at the top and runs past the bottom (the
    caller pads), so the picture is never stretched.
    """
    image_w, image_h = max(1, image_size[0]), max(1, image_size[1])
    px_w, px_h = max(1, widget_px[0]), max(1, widget_px[1])
    width = max(1, min(image_w, round(image_w / max(MIN_ZOOM, zoom))))
    height = max(1, round(width * px_h / px_w))
    left = min(max(0, round(focus[0] - width / 2)), image_w - width)
    top = min(max(0, round(focus[1] - height / 2)), max(0, image_h - height))
    return left, top, left + width, top + height


def _graphics_widget(protocol: str) -> type[Widget] | None:
    """The ``textual-image`` widget class for a protocol, or None if it cannot be loaded."""
    try:
        from textual_image import widget as ti_widget
    except Exception:
        return None
    widgets: dict[str, type[Widget]] = {"sixel": ti_widget.SixelImage, "tgp": ti_widget.TGPImage}
    return widgets.get(protocol)


class ShotView(Widget):
    """A screenshot with boxes, zoom and scroll-to-box, drawn with the protocol chosen before start-up."""

    ALLOW_MAXIMIZE = True  # a screen may zoom it whole (the stepper's z), not just its inner picture
    DEFAULT_CSS = """
    ShotView { height: 1fr; }
    ShotView > .shot-graphics { width: 1fr; height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "pan(0, -1)", "Up", show=False),
        Binding("down", "pan(0, 1)", "Down", show=False),
        Binding("left", "pan(-2, 0)", "Left", show=False),
        Binding("right", "pan(2, 0)", "Right", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "pan(0, -1000000)", "Top", show=False),
        Binding("end", "pan(0, 1000000)", "Bottom", show=False),
    ]

    def __init__(
        self, *, graphics: str | None = None, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        protocol = graphics or graphics_mode.current()
        self._graphics_class = None if protocol == "halfblock" else _graphics_widget(protocol)
        self._protocol = protocol if self._graphics_class is not None else "halfblock"
        if self._protocol != "halfblock":
            self.can_focus = True  # like the half-block pane (a ScrollView), so the keys can pan
        self._image: Image.Image | None = None
        self._boxes: tuple[Box, ...] = ()
        self._zoom = 1.0
        self._focus = (0.0, 0.0)  # centre of the viewport, in image pixels
        self._halfblock: HalfBlockImage | None = None
        self._picture: Any = None  # the textual-image widget
        self._overlay_key: tuple | None = None
        self._overlay: Image.Image | None = None
        self._shown: tuple | None = None
        self._window: Viewport | None = None

    @property
    def protocol(self) -> str:
        """The protocol in use: "halfblock", "sixel" or "tgp"."""
        return self._protocol

    @property
    def image(self) -> Image.Image | None:
        return self._image

    @property
    def boxes(self) -> list[Box]:
        return list(self._boxes)

    @property
    def zoom(self) -> float:
        return self._zoom

    @property
    def window(self) -> Viewport | None:
        """The part of the image on screen (graphics mode, once laid out), in image pixels."""
        return self._window

    def compose(self) -> ComposeResult:
        if self._graphics_class is None:
            self._halfblock = HalfBlockImage(self._image)
            self._halfblock.boxes = list(self._boxes)
            self._halfblock.zoom = self._zoom
            yield self._halfblock
        else:
            self._picture = self._graphics_class(classes="shot-graphics")
            yield self._picture

    def set_image(self, image: Image.Image | None, boxes: Sequence[Box] = ()) -> None:
        """Show ``image`` (with ``boxes``, none by default), scrolled to the top."""
        self._image = image
        self._boxes = tuple(boxes)
        self._focus = (0.0, 0.0)
        if self._halfblock is not None:
            self._halfblock.set_image(image, boxes)
        self._update()

    def set_boxes(self, boxes: Sequence[Box]) -> None:
        self._boxes = tuple(boxes)
        if self._halfblock is not None:
            self._halfblock.set_boxes(boxes)
        self._update()

    def set_zoom(self, zoom: float) -> None:
        """Zoom (1 to 8) around the centre of what is shown."""
        self._zoom = max(MIN_ZOOM, min(MAX_ZOOM, zoom))
        if self._halfblock is not None:
            self._halfblock.set_zoom(zoom)
        self._update()

    def scroll_to_box(self, box: Box) -> None:
        """Bring ``box`` into view, centred where the image allows."""
        if self._halfblock is not None:
            self._halfblock.scroll_to_box(box)
            return
        if self._image is not None:
            width, height = self._image.size
            self._focus = ((box.x + box.w / 2) * width, (box.y + box.h / 2) * height)
        self._update()

    # Graphics mode: everything below only moves or redraws the viewport.

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("pan", "page"):
            return self._protocol != "halfblock"
        return True

    def action_pan(self, columns: float, rows: float) -> None:
        self._pan(columns, rows)

    def action_page(self, pages: int) -> None:
        self._pan(0, pages * max(1, self.content_size.height - 1))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._wheel(event, 0, WHEEL_ROWS)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._wheel(event, 0, -WHEEL_ROWS)

    def on_mouse_scroll_right(self, event: events.MouseScrollRight) -> None:
        self._wheel(event, WHEEL_ROWS, 0)

    def on_mouse_scroll_left(self, event: events.MouseScrollLeft) -> None:
        self._wheel(event, -WHEEL_ROWS, 0)

    def on_resize(self, event: events.Resize) -> None:
        self._update()

    def on_mount(self) -> None:
        self.call_after_refresh(self._update)

    def _wheel(self, event: events.MouseEvent, columns: int, rows: int) -> None:
        if self._protocol != "halfblock":
            event.stop()
            self._pan(columns, rows)

    def _pan(self, columns: float, rows: float) -> None:
        """Move the viewport by terminal cells (converted to image pixels at the current scale)."""
        if self._window is None:
            return
        left, top, right, bottom = self._window
        cols, lines = max(1, self.content_size.width), max(1, self.content_size.height)
        x, y = self._focus
        self._focus = (x + columns * (right - left) / cols, y + rows * (bottom - top) / lines)
        self._update()

    def _overlay_for(self, image: Image.Image, line_scale: int) -> Image.Image:
        """The full-resolution image with the boxes drawn, lines thickened to survive the downscale."""
        key = (id(image), self._boxes, line_scale)
        if key != self._overlay_key or self._overlay is None:
            boxes = [replace(box, width=box.width * line_scale) for box in self._boxes]
            self._overlay = draw_boxes(as_rgb(image), boxes)  # draw_boxes draws on a copy
            self._overlay_key = key
        return self._overlay

    def _update(self) -> None:
        picture = self._picture
        if picture is None or not self.is_mounted:
            return
        image = self._image
        if image is None:
            self._window = None
            if self._shown is not None:
                self._shown = None
                picture.image = None
            return
        columns, rows = self.content_size
        if columns <= 0 or rows <= 0:
            return
        cell_w, cell_h = graphics_mode.cell_size()
        widget_px = (columns * cell_w, rows * cell_h)
        window = viewport(image.size, widget_px, self._zoom, self._focus)
        left, top, right, bottom = window
        self._window = window
        self._focus = ((left + right) / 2, (top + bottom) / 2)  # clamped, so scrolling back is immediate
        overlay = self._overlay_for(image, max(1, ceil((right - left) / widget_px[0])))
        shown = (id(overlay), window)
        if shown == self._shown:
            return
        self._shown = shown
        crop = overlay.crop((left, top, right, min(bottom, overlay.height)))
        if crop.height < bottom - top:  # a page shorter than the pane: pad below, never stretch
            background = self.background_colors[1].rgb
            from PIL import Image

            canvas = Image.new("RGB", (right - left, bottom - top), background)
            canvas.paste(crop, (0, 0))
            crop = canvas
        picture.image = crop
