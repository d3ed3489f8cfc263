"""HTML rewriting for the colour-perturbation trick, with Beautiful Soup's ``html.parser`` round trip.

Behaviour follows the reference metric (Design2Code ``ocr_free_utils.process_html`` and
``extract_text_with_color``; ``visual_score.make_html``/``truncate_repeated_html_elements``) as described in the
project's research notes. The _p files are bs4 round trips of the page, because layout may depend on it.

Pages are untrusted (issue 15): nothing here recurses in Python (Beautiful Soup's parser and serialiser are
iterative since 4.12; the tree walks below use explicit stacks), and every parse refuses a tree deeper than
:data:`MAX_DEPTH` (:class:`TooDeep`) before anything costlier than linear is done with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import cast

from bs4 import BeautifulSoup, Comment, NavigableString, PageElement, Tag
from PIL import ImageColor

TEXT_TAGS = [
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "div",
    "span",
    "a",
    "b",
    "li",
    "table",
    "td",
    "th",
    "button",
    "footer",
    "header",
    "figcaption",
]
POOL_VALUES = tuple(range(10, 251, 16))  # 16 values: 10, 26, ..., 250
POOL_SIZE = len(POOL_VALUES) ** 3  # 4096
TRANSPARENT = "rgba(0, 0, 0, 0)"
# Element nesting refused by :func:`parse` (the test-set pages reach 22; Chromium's HTML parser stops nesting
# at 512, and the repeated-element truncation costs the sum of the element depths).
MAX_DEPTH = 256


class PoolExhausted(Exception):
    """More text tags than the 4096 pool colours (the reference raises NotImplementedError and crashes)."""


class TooDeep(Exception):
    """Elements nested deeper than :data:`MAX_DEPTH`: the page is reported ``too_deep``, not processed."""


class ReferenceCrash(Exception):
    """An input on which the reference pipeline raises an uncaught exception (the whole evaluation fails)."""


@cache
def _color_pool(offset: int) -> tuple[str, ...]:
    return tuple(
        f"{(r + offset) % 256:02X}{(g + offset) % 256:02X}{(b + offset) % 256:02X}"
        for r in POOL_VALUES
        for g in POOL_VALUES
        for b in POOL_VALUES
    )


def color_pool(offset: int) -> list[str]:
    """The reference's pool: upper-case hex in nested r->g->b order; callers pop from the end (a fresh list)."""
    return list(_color_pool(offset))


def style_of(element: Tag) -> str:
    """The ``style`` attribute's text, ``""`` when there is none."""
    # bs4 types attribute values as ``str | AttributeValueList``; only its multi-valued attributes (class, rel,
    # headers, ...) are lists, and ``style`` is not one of them, so the value is always a str.
    return cast(str, element.attrs.get("style", ""))


def update_style(element: Tag, prop: str, value: str) -> None:
    """Drop style entries that start with ``prop`` (and empty ones), append ``prop: value !important``."""
    styles = style_of(element).split(";")
    kept = [s for s in styles if not s.strip().startswith(prop) and len(s.strip()) > 0]
    kept.append(f"{prop}: {value} !important")
    element["style"] = "; ".join(kept).strip()


def parse(html: str) -> BeautifulSoup:
    """The page as bs4's ``html.parser`` reads it; :class:`TooDeep` when its elements nest too deep."""
    soup = BeautifulSoup(html, "html.parser")
    depth = dom_depth(soup)
    if depth > MAX_DEPTH:
        raise TooDeep(f"elements nested {depth} deep (the limit is {MAX_DEPTH})")
    return soup


def dom_depth(root: Tag) -> int:
    """The deepest element nesting under ``root`` (an explicit stack: no Python recursion)."""
    deepest = 0
    stack = [(root, 0)]
    while stack:
        element, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in element.contents if isinstance(child, Tag))
    return deepest


@dataclass
class PerturbedHtml:
    """The two recoloured variants of a page and the number of text tags that got a colour."""

    variant0: str
    variant1: str
    text_tags: int
    total_text_tags: int = 0


def perturb(
    html: str, *, chunk: int | None = None, chunk_size: int = POOL_SIZE, strict_pool: bool = True
) -> PerturbedHtml:
    """Both colour variants (offset 0 and 50) from one parse.

    ``strict_pool`` (compat): more than 4096 text tags raises :class:`PoolExhausted`, like the reference.
    Otherwise (fixed mode) ``chunk`` k colours tags ``k*4096 .. (k+1)*4096-1`` and makes every other text tag's
    text transparent (identical in both renders, so it never becomes a diff pixel).
    """
    soup = parse(html)
    for element in soup.find_all(True):
        update_style(element, "background-color", "rgba(255, 255, 255, 0.0)")
    tags = soup.find_all(TEXT_TAGS)
    if strict_pool and len(tags) > POOL_SIZE:
        raise PoolExhausted(f"{len(tags)} text tags, the colour pool holds {POOL_SIZE}")
    lo = 0 if chunk is None else chunk * chunk_size
    hi = len(tags) if chunk is None else min(len(tags), lo + chunk_size)
    saved = [style_of(tag) for tag in tags]
    out = []
    for offset in (0, 50):
        pool = color_pool(offset)
        for index, tag in enumerate(tags):
            tag["style"] = saved[index]
            colour = f"#{pool.pop()}" if lo <= index < hi else TRANSPARENT
            update_style(tag, "color", colour)
            update_style(tag, "opacity", "1.0")
        out.append(str(soup))
    return PerturbedHtml(out[0], out[1], max(0, hi - lo), len(tags))


def _style_color(tag: Tag, lenient: bool = False) -> str | None:
    """The reference's ``get_color``: the last style entry mentioning 'color' but not 'background-color'."""
    if "style" not in tag.attrs:
        return None
    style = tag["style"]
    if isinstance(style, list):  # pragma: no cover - bs4 does not split style
        style = " ".join(style)
    entries = [s for s in style.split(";") if "color" in s and "background-color" not in s]
    if not entries:
        return None
    try:
        colour = entries[-1].split(":")[1].strip().replace(" !important", "")
        if colour[0] == "#":
            return colour
        if lenient and colour == TRANSPARENT:
            return colour  # a tag outside this colour round: its items are skipped
    except IndexError as exc:
        if lenient:
            return None
        raise ReferenceCrash(f"unparseable colour entry {entries[-1]!r}") from exc
    try:
        rgb = tuple(map(int, colour[4:-1].split(","))) if colour.startswith("rgb") else ImageColor.getrgb(colour)
        return "#{:02x}{:02x}{:02x}".format(*rgb)
    except ValueError:
        return None
    except IndexError as exc:
        if lenient:
            return None
        raise ReferenceCrash(f"unparseable colour {colour!r}") from exc


def extract_text_with_color(html: str, lenient: bool = False) -> list[tuple[str, str]]:
    """(text, colour) for every non-empty text node under ``<body>``, in document order.

    ``lenient`` (fixed mode): a style entry that crashes the reference's parser is ignored instead.
    """
    soup = parse(html)
    body = soup.body
    if body is None:
        return []
    items: list[tuple[str, str]] = []
    # Depth first in document order with an explicit stack (children pushed reversed): the reference's
    # recursive walk, without its recursion limit.
    stack: list[tuple[PageElement, str]] = [(body, "#000000")]
    while stack:
        node, inherited = stack.pop()
        if isinstance(node, Tag):
            colour = _style_color(node, lenient) or inherited
            stack.extend((child, colour) for child in reversed(node.contents) if not isinstance(child, Comment))
        elif isinstance(node, NavigableString):
            text = node.strip()
            if text:
                items.append((text, inherited))
    return items


_HTML_TAG = re.compile(r"<html[^>]*>", re.IGNORECASE)


def make_html(content: str) -> str:
    """Wrap content that has no ``<html>`` tag anywhere (``re.search``, as since 0f57d58)."""
    if not _HTML_TAG.search(content):
        return f"<html><body><p>{content}</p></body></html>"
    return content


def truncate_repeated_elements(soup: BeautifulSoup, max_count: int = 50) -> str:
    """Decompose any element whose serialisation was already seen ``max_count`` times; return ``str(soup)``."""
    counts: dict[str, int] = {}
    for element in soup.find_all(True):
        try:
            key = str(element)
        except Exception:
            element.decompose()
            continue
        counts[key] = counts.get(key, 0) + 1
        if counts[key] > max_count:
            element.decompose()
    return str(soup)
