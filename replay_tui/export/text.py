"""What every report shares: the formats and their file suffixes, the escaping of untrusted text for
Markdown, HTML, CSV and XML, number formatting, the page's CSS and character diffs, and atomic writing.

Run reports (:mod:`.run`), comparisons of runs (:mod:`.comparison`) and comparisons of two logs
(:mod:`.outcomes`) render through these, so a text is escaped, a figure printed and a file written
one way in every report. Text from logs and policies is untrusted: :func:`clean` strips terminal
control characters and replaces what XML cannot hold; each format escapes what is left.
"""

from __future__ import annotations

import html
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from replay_tui.diff import char_diff
from replay_tui.fileio import atomic_write_bytes
from replay_tui.sanitize import strip_control

FORMATS: tuple[str, ...] = ("json", "md", "csv", "html", "junit")
SUFFIX_FORMATS: dict[str, str] = {
    ".json": "json",
    ".md": "md",
    ".markdown": "md",
    ".csv": "csv",
    ".html": "html",
    ".htm": "html",
    ".xml": "junit",
}
FORMAT_ALIASES: dict[str, str] = {"markdown": "md", "htm": "html", "xml": "junit"}

MD_MAX_CHARS = 60_000
"""A Markdown report stays below this many characters (GitHub comments allow 65,536)."""
MD_MAX_ROWS = 200
"""At most this many mismatch rows in a Markdown report; the rest are counted."""
HTML_DIFF_CHARS = 5_000
"""Longer expected/predicted texts are shown cut, without a character diff, in HTML."""

# --------------------------------------------------------------------------- formats


class ExportError(ValueError):
    """A report that cannot be rendered or written; the message is one line.

    A ValueError, so callers that catch ``(OSError, ValueError)`` also catch failed writes (which
    :func:`write_atomic` re-raises as ExportError).
    """


def normalize_format(fmt: str) -> str:
    """``"md"``/``"markdown"`` -> ``"md"``, ``"xml"`` -> ``"junit"``...; ExportError for anything else."""
    name = (fmt or "").strip().lower().lstrip(".")
    name = FORMAT_ALIASES.get(name, name)
    if name not in FORMATS:
        raise ExportError(f"unknown report format {one_line(fmt)!r}; choose one of {', '.join(FORMATS)}")
    return name


def format_for_path(path: str | os.PathLike[str]) -> str:
    """The report format a file name asks for, by suffix (``.xml`` is JUnit); ExportError otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIX_FORMATS:
        known = ", ".join(SUFFIX_FORMATS)
        raise ExportError(f"cannot tell the report format of {one_line(str(path))!r}: use a {known} file name")
    return SUFFIX_FORMATS[suffix]


# --------------------------------------------------------------------------- text of every format

_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def clean(text: Any) -> str:
    """Untrusted text made safe for any report: control characters stripped, non-XML characters replaced."""
    if text is None:
        return ""
    return _NOT_XML.sub("\ufffd", strip_control(str(text)))


def one_line(text: Any) -> str:
    """:func:`clean` text on one line, runs of whitespace as one space (names, titles, messages)."""
    return " ".join(clean(text).split())


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def pct(value: float) -> str:
    """A share as a percentage with one decimal: ``0.25`` -> ``25.0%``."""
    return f"{value * 100:.1f}%"


def plural(n: int, one: str, many: str) -> str:
    """``1 mismatch``, ``2 mismatches``."""
    return f"{n} {one if n == 1 else many}"


def number(value: float) -> str:
    """A figure for CSV and JUnit properties: rounded to 6 places, shortest repr."""
    return repr(round(float(value), 6))


# --------------------------------------------------------------------------- Markdown

_MD_PUNCT = re.compile(r"([\\`*_\[\]<>|~&!#$])")

MD_CELL = 300
"""A Markdown table cell shows at most this many characters of a text."""


def md_text(text: Any, limit: int = 500) -> str:
    """Plain text for Markdown: one line, every character with a Markdown meaning backslash-escaped."""
    return _MD_PUNCT.sub(r"\\\1", shorten(one_line(text), limit))


def md_lines(text: Any, limit: int, indent: str) -> str:
    """Multi-line plain text for a Markdown list item: each line escaped like :func:`md_text`, ended by
    a hard break and indented under the item, so a note keeps its line breaks (blank lines dropped)."""
    lines = [" ".join(line.split()) for line in shorten(clean(text).strip(), limit).splitlines()]
    escaped = [_MD_LIST_START.sub(r"\1\\\2", _MD_PUNCT.sub(r"\\\1", line)) for line in lines if line]
    return ("\\\n" + indent).join(escaped)


_MD_LIST_START = re.compile(r"^(\d*)([-+.)])")
"""What would start a list at the beginning of a line: escaped in note lines."""


def md_code(text: Any, limit: int = MD_CELL, *, table: bool = True) -> str:
    """Text as an inline code span: a fence longer than any backtick run inside, newlines shown as ⏎.

    In a table cell ``|`` is escaped as ``\\|`` (GFM splits cells before it parses code spans).
    """
    body = shorten(clean(text), limit).replace("\n", "⏎")
    if table:
        body = body.replace("|", "\\|")
    if not body:
        return "*(empty)*"
    runs = [len(run) for run in re.findall(r"`+", body)]
    fence = "`" * (max(runs, default=0) + 1)
    if body.strip(" ") and (body[0] in "` " or body[-1] in "` "):
        body = f" {body} "
    return f"{fence}{body}{fence}"


# --------------------------------------------------------------------------- CSV

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: Any) -> str:
    """A text cell: cleaned, and prefixed with ``'`` when a spreadsheet would read it as a formula."""
    value = clean(text)
    return "'" + value if value.startswith(_FORMULA_START) else value


# --------------------------------------------------------------------------- HTML

CSS = """
:root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --muted: #6e7781;
  --line: #d0d7de; --card: #f6f8fa; --del: #ffebe9; --ins: #dafbe1; }
@media (prefers-color-scheme: dark) { :root { --line: #30363d; --card: #161b22; --del: #5a1e22; --ins: #1b4721;
  --muted: #8b949e; } }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 80rem;
  padding: 0 1rem; }
h1 { margin-bottom: .25rem; } h2 { margin-top: 2rem; border-bottom: 1px solid var(--line); }
.verdict { font-size: 1.1rem; } .status { font-weight: 700; padding: .1rem .5rem; border-radius: .3rem; color: #fff; }
.status-pass { background: var(--ok); } .status-fail { background: var(--bad); }
.status-error, .status-empty { background: var(--warn); }
.cards { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .6rem 1rem;
  min-width: 8rem; }
.card .value { display: block; font-size: 1.5rem; font-weight: 600; } .card .label { color: var(--muted); }
.card .ci { display: block; color: var(--muted); font-size: .8rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: var(--card); } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.bad td:first-child { border-left: 3px solid var(--bad); } tr.ok td:first-child { border-left: 3px solid var(--ok); }
.bar { display: inline-block; width: 8rem; height: .6rem; background: var(--line); border-radius: .3rem;
  vertical-align: middle; margin-right: .4rem; }
.bar span { display: block; height: 100%; background: var(--ok); border-radius: .3rem; }
code, .action { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap;
  word-break: break-all; }
.tag { display: inline-block; background: var(--card); border: 1px solid var(--line); border-radius: 1rem;
  padding: 0 .5rem; margin-right: .25rem; font-size: .85rem; }
.episode { border: 1px solid var(--line); border-radius: .5rem; padding: .5rem 1rem; margin: 1rem 0; }
.mismatch { border-top: 1px dashed var(--line); padding: .5rem 0; }
.mismatch dl { display: grid; grid-template-columns: 7rem 1fr; gap: .2rem .75rem; margin: .25rem 0; }
.mismatch dt { color: var(--muted); }
del { background: var(--del); text-decoration: line-through; }
ins { background: var(--ins); text-decoration: none; }
.note { white-space: pre-wrap; } .muted { color: var(--muted); } .error { color: var(--bad); }
#filter { font: inherit; padding: .3rem .5rem; width: 24rem; max-width: 100%; }
"""
"""The look of every HTML report (a comparison adds its own rules after it)."""


def esc(text: Any) -> str:
    """:func:`clean` text escaped for HTML (quotes included, so it may stand in an attribute)."""
    return html.escape(clean(text), quote=True)


def html_diff(expected: str, predicted: str) -> tuple[str, str]:
    """Expected and predicted as HTML, with what only one side has in ``<del>``/``<ins>``."""
    expected, predicted = clean(expected), clean(predicted)
    if len(expected) > HTML_DIFF_CHARS or len(predicted) > HTML_DIFF_CHARS:
        return esc(shorten(expected, HTML_DIFF_CHARS)), esc(shorten(predicted, HTML_DIFF_CHARS))
    left: list[str] = []
    right: list[str] = []
    for op, text in char_diff(expected, predicted, cleanup=True):
        escaped = html.escape(text, quote=True)
        if op == "equal":
            left.append(escaped)
            right.append(escaped)
        elif op == "delete":
            left.append(f"<del>{escaped}</del>")
        else:
            right.append(f"<ins>{escaped}</ins>")
    return "".join(left), "".join(right)


# --------------------------------------------------------------------------- JUnit XML
# Text goes in through clean() only: ElementTree escapes markup itself.


def junit_properties(parent: ET.Element, items: Iterable[tuple[str, str]]) -> None:
    items = list(items)
    if not items:
        return
    properties = ET.SubElement(parent, "properties")
    for name, value in items:
        ET.SubElement(properties, "property", name=clean(name), value=clean(value))


# --------------------------------------------------------------------------- writing


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write a rendered report atomically; a failed write is an ExportError naming the file."""
    try:
        return atomic_write_bytes(path, data)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ExportError(f"cannot write {one_line(str(path))}: {reason}") from exc
