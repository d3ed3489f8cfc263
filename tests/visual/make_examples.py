"""Regenerate the bundled example pairs in replay_tui/visual/examples/ (run by hand; deterministic).

Reference pages are copied byte for byte from the Design2Code test set sample (ODC-By, see
replay_tui/visual/examples/PROVENANCE.md). Each generated variant is a bs4 edit of the reference page:

* move: the second half of the body's top-level elements goes before the first half;
* drop: every third text element (p, li, h1-h6, a, td, span) is removed;
* recolour: every second text element gets an inline colour;
* reword: every second word of every third text node is replaced.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag

SOURCE = Path(__file__).resolve().parents[3] / "shared" / "design2code"
TARGET = Path(__file__).resolve().parents[2] / "replay_tui" / "visual" / "examples"
PAGES = ["11202", "13470", "9656", "2310"]
TEXTY = ["p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "a", "td", "span"]
PALETTE = ["#b03a2e", "#1e8449", "#7d3c98", "#d68910"]
WORDS = ["lorem", "ipsum", "dolor", "amet", "vitae"]


def soup_of(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def move(html: str) -> str:
    soup = soup_of(html)
    body = soup.body
    kids = [k for k in body.children if isinstance(k, Tag)]
    half = len(kids) // 2
    if len(kids) < 2:
        # one wrapper: descend until there are several element children
        node = body
        while len([k for k in node.children if isinstance(k, Tag)]) == 1:
            node = next(k for k in node.children if isinstance(k, Tag))
        kids = [k for k in node.children if isinstance(k, Tag)]
        half = len(kids) // 2
    for kid in kids[half:][::-1]:
        kids[0].insert_before(kid.extract())
    return str(soup)


def drop(html: str) -> str:
    soup = soup_of(html)
    for index, tag in enumerate(soup.body.find_all(TEXTY)):
        if index % 3 == 1 and tag.parent is not None:
            tag.decompose()
    return str(soup)


def recolour(html: str) -> str:
    soup = soup_of(html)
    for index, tag in enumerate(soup.body.find_all(TEXTY)):
        if index % 2 == 0:
            style = tag.get("style", "")
            tag["style"] = (style + "; " if style else "") + f"color: {PALETTE[index // 2 % len(PALETTE)]}"
    return str(soup)


def reword(html: str) -> str:
    soup = soup_of(html)
    nodes = [
        s
        for s in soup.body.find_all(string=True)
        if isinstance(s, NavigableString) and type(s) is NavigableString and s.strip()
    ]
    for index, node in enumerate(nodes):
        if index % 3 == 0:
            words = node.split(" ")
            words = [WORDS[k % len(WORDS)] if k % 2 == 1 and w.strip() else w for k, w in enumerate(words)]
            node.replace_with(" ".join(words))
    return str(soup)


VARIANTS = {"move": move, "drop": drop, "recolour": recolour, "reword": reword}


def main() -> int:
    image = SOURCE / "testset" / "rick.jpg"
    for folder in ["ref", *VARIANTS]:
        (TARGET / folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(image, TARGET / folder / "rick.jpg")
    for page in PAGES:
        raw = (SOURCE / "testset" / f"{page}.html").read_bytes()
        (TARGET / "ref" / f"{page}.html").write_bytes(raw)
        for name, edit in VARIANTS.items():
            (TARGET / name / f"{page}.html").write_text(edit(raw.decode("utf-8")), encoding="utf-8")
    shutil.copyfile(SOURCE / "LICENSE-ODC-By.txt", TARGET / "LICENSE-ODC-By.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
