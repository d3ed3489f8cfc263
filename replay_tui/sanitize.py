"""Make untrusted text from demo files safe to print: no terminal control sequences.

Demo files are untrusted input. Escape sequences could move the cursor, retitle the terminal
or hide text; C0/C1 control characters garble output; bidirectional controls reorder what is
shown. Rich markup is a separate concern: views must build ``rich.text.Text`` objects (never
markup strings) from this text.
"""

from __future__ import annotations

import re

# CSI, OSC, DCS/SOS/PM/APC strings, screen's and tmux's ``ESC k`` title string, and two-character
# escapes (ESC + one byte), 7- and 8-bit forms. A string is removed whole, up to its terminator (BEL or
# ST), or to the end of the text when it has none: its body (a title, a clipboard) is never text.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI ... final byte
    r"|(?:\x1b[\]PX^_k]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|$)"  # OSC/DCS/SOS/PM/APC/k ... ST
    r"|\x1b[ -/]*[0-~]?",  # other ESC sequences: intermediate bytes, then one final byte
    re.DOTALL,
)
# C0/C1 controls, and the Unicode bidirectional controls (embeddings, overrides, isolates, marks):
# U+202E in a log would show a line in an order other than the one it is stored in ("Trojan Source").
_CONTROL_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(f"[{_CONTROL_CLASS}]")
_LINE_CONTROLS = re.compile(f"[\t\n{_CONTROL_CLASS}]")  # in one screen line, tabs and newlines move the cursor too


def unsafe_in_line(text: str) -> bool:
    """Whether a piece of one screen line holds anything a terminal would act on: a control character
    (maybe a sequence's start), or a tab or newline, which would move the cursor."""
    return not text.isprintable() and _LINE_CONTROLS.search(text) is not None  # isprintable: the fast no


def in_line(text: str) -> str:
    """``text`` as a piece of one screen line: sequences and controls removed, tabs and newlines as spaces."""
    return strip_control(text).replace("\t", " ").replace("\n", " ")


def strip_control(text: str) -> str:
    """Remove terminal escape sequences and control characters, keeping newlines and tabs."""
    if not text:
        return ""
    if not _CONTROLS.search(text):
        return text  # every escape sequence starts with a control character: nothing to strip
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def show_control(text: str) -> str:
    """Make control characters visible instead of removing them (ESC -> '␛', others -> '\\xNN')."""

    def visible(match: re.Match[str]) -> str:
        char = match.group()
        if char == "\x1b":
            return "␛"
        return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"

    return _CONTROLS.sub(visible, text or "")


def one_line(text: str) -> str:
    """Control characters stripped and all whitespace (newlines too) collapsed to single spaces."""
    return " ".join(strip_control(text).split())


def excerpt(text: str, limit: int = 400) -> str:
    """A one-paragraph excerpt: control characters stripped, whitespace collapsed, cut at ``limit``."""
    flat = one_line(text)
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)].rstrip() + "…"
