"""Bundled example pairs: real Design2Code test-set reference pages (ODC-By) and generated variants.

Layout (Design2Code's): ``ref/<id>.html`` is the reference; ``move/``, ``drop/``, ``recolour/`` and ``reword/``
hold generated pages with the same file names. ``ref/<id>.html`` scored against itself is the identical pair.
See ``PROVENANCE.md`` and ``LICENSE-ODC-By.txt``.
"""

from __future__ import annotations

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent
VARIANTS = ("move", "drop", "recolour", "reword")


def example_ids() -> list[str]:
    """The bundled pages' ids; hidden files aside (a render in progress keeps its copy of a page beside
    it, ``.NAME.visual-<hex>.html``: another process listing the pages then must not count it)."""
    return sorted(p.stem for p in (EXAMPLES_DIR / "ref").glob("*.html") if not p.name.startswith("."))


def example_pair(page: str, variant: str = "move") -> tuple[Path, Path]:
    """(reference path, generated path) for a bundled page id and variant (``ref`` for the identical copy)."""
    ref = EXAMPLES_DIR / "ref" / f"{page}.html"
    pred = EXAMPLES_DIR / variant / f"{page}.html"
    if not ref.exists() or not pred.exists():
        raise FileNotFoundError(f"no bundled example {variant}/{page}.html")
    return ref, pred
