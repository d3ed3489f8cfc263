"""Which terminal image protocol the screenshot panes use, decided once before the app starts.

``textual-image`` finds out what the terminal supports (sixel, the kitty graphics protocol, its cell
size in pixels) by writing escape sequences and reading the answers from stdin, which only works
before Textual owns the terminal, and it does so when it is imported. So the CLI calls
:func:`prepare` first; widgets read :func:`current`. Nothing here imports ``textual-image`` (or
Textual) until ``prepare`` asks for it, and without ``prepare`` the answer is the deterministic
half-block renderer, which is what tests and snapshots see.
"""

from __future__ import annotations

import importlib
import os
import sys

GRAPHICS_CHOICES = ("auto", "halfblock", "sixel", "tgp")
ENV_VAR = "REPLAY_TUI_GRAPHICS"

_current = "halfblock"
_reason = "not prepared (half-block is the default)"


def current() -> str:
    """The protocol the screenshot panes use: "halfblock", "sixel" or "tgp"."""
    return _current


def reason() -> str:
    """One line on why :func:`current` is what it is (mainly: why graphics fell back to half-block)."""
    return _reason


def _set(protocol: str, why: str) -> str:
    global _current, _reason
    _current, _reason = protocol, why
    return protocol


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def cell_size() -> tuple[int, int]:
    """The terminal cell size in pixels as ``textual-image`` measured it in :func:`prepare`; else 10x20.

    It never queries the terminal itself: that would race Textual's stdin reader once the app runs.
    """
    terminal = sys.modules.get("textual_image._terminal")
    if terminal is not None and "textual_image.widget" in sys.modules:  # the widget import measured it
        try:
            width, height = terminal.get_cell_size()
            if width > 0 and height > 0:
                return int(width), int(height)
        except Exception:
            pass
    return 10, 20


def _is_tty(stream: object) -> bool:
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def prepare(choice: str = "auto") -> str:
    """Decide the protocol (querying the terminal if needed) and return it; call before the app starts.

    ``choice`` is one of :data:`GRAPHICS_CHOICES`. ``REPLAY_TUI_GRAPHICS=halfblock`` always wins;
    another value of it stands in for ``"auto"``. A forced "sixel"/"tgp" is used even when the
    terminal does not report it; "auto" uses what ``textual-image`` detected and half-block when the
    terminal has neither. Any failure falls back to half-block, with :func:`reason` saying why.
    """
    if choice not in GRAPHICS_CHOICES:
        raise ValueError(f"graphics must be one of {', '.join(GRAPHICS_CHOICES)}, not {choice!r}")
    env = os.environ.get(ENV_VAR, "").strip().lower()
    if choice == "halfblock":
        return _set("halfblock", "half-block requested")
    if env == "halfblock":
        return _set("halfblock", f"{ENV_VAR}=halfblock")
    if choice == "auto" and env in ("sixel", "tgp"):
        choice = env
    if not (_is_tty(sys.stdout) and _is_tty(sys.__stdout__)):
        return _set("halfblock", "stdout is not a terminal")
    try:
        renderable = importlib.import_module("textual_image.renderable")
        importlib.import_module("textual_image.widget")  # caches the cell size while the terminal still answers
    except ImportError as error:
        return _set("halfblock", f"textual-image is not available ({_one_line(error)})")
    except Exception as error:  # a terminal that answers oddly must not stop the app
        return _set("halfblock", f"terminal graphics query failed ({_one_line(error)})")
    if choice in ("sixel", "tgp"):
        return _set(choice, f"{choice} requested")
    detected = getattr(renderable, "Image", None)
    if detected is not None and detected is getattr(renderable, "SixelImage", None):
        return _set("sixel", "the terminal supports sixel")
    if detected is not None and detected is getattr(renderable, "TGPImage", None):
        return _set("tgp", "the terminal supports the kitty graphics protocol")
    return _set("halfblock", "the terminal supports neither sixel nor the kitty graphics protocol")
