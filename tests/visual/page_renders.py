"""Renders of the same page kept for the whole worker, for the tests where the render is not what is under test.

The bundled pages (11202, 2310, 13470 and their variants) are scored by many tests: the batch screen, the
comparison of two folders, the CLI's ``--jobs``, the pipeline's score checks. Chromium's renders are most of
their cost and are the same every time (``tests/visual/test_jobs.py`` checks that a render made once and shared
gives the reports of renders made again). :class:`CachedRenderer` serves a render it has already made for the
same HTML bytes in a folder of the same files (a copy of a bundled folder in ``tmp_path`` counts as the same),
at the same timeout and height cap; the same page twice in one call is rendered once. Only clean renders are
kept (no failure, no blocked request: those name paths); every caller gets its own copy of the image. Tests about
rendering itself (timeouts, the sandbox, ``--jobs`` against sequential renders, the reference implementation) use
the session's bare ``renderer``.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from replay_tui.visual.render import Renderer, RenderResult

_COPY_MARK = ".visual-"  # the renderer's temporary copies beside a page (render._COPY)


def _folder_key(folder: Path) -> str:
    """The folder's files by name and content (the renderer's own temporary copies aside)."""
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.is_file() and not (path.name.startswith(".") and _COPY_MARK in path.name):
            digest.update(path.name.encode("utf-8", errors="surrogateescape") + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


class RenderStore:
    """The worker's kept renders (one per test process: a module global below), the least recently used dropped
    past ``budget`` bytes of images (a tall page's screenshot is several MB; 8 workers share the machine)."""

    def __init__(self, budget: int = 384 << 20) -> None:
        self._lock = threading.Lock()
        self._renders: OrderedDict[tuple[str, str, int, int], RenderResult] = OrderedDict()
        self._bytes = 0
        self.budget = budget
        self.served = 0
        self.made = 0

    def get(self, key: tuple[str, str, int, int]) -> RenderResult | None:
        with self._lock:
            kept = self._renders.get(key)
            if kept is None:
                return None
            self._renders.move_to_end(key)
            self.served += 1
        return _copy(kept)

    def put(self, key: tuple[str, str, int, int], result: RenderResult) -> None:
        with self._lock:
            self.made += 1
            if result.image is None or result.blocked or result.error is not None or key in self._renders:
                return
            self._renders[key] = _copy(result)
            self._bytes += result.image.nbytes
            while self._bytes > self.budget and self._renders:
                _, dropped = self._renders.popitem(last=False)
                self._bytes -= dropped.image.nbytes if dropped.image is not None else 0


def _copy(result: RenderResult) -> RenderResult:
    image = None if result.image is None else result.image.copy()
    return RenderResult(image=image, error=result.error, blocked=list(result.blocked), status=result.status)


STORE = RenderStore()


class CachedRenderer:
    """A started :class:`Renderer` whose :meth:`render_texts` first looks in :data:`STORE`; anything else is the
    renderer's own (its timeout, isolation, start and close)."""

    def __init__(self, renderer: Renderer, store: RenderStore = STORE) -> None:
        object.__setattr__(self, "_renderer", renderer)
        object.__setattr__(self, "_store", store)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._renderer, name)

    def __setattr__(self, name: str, value: Any) -> None:  # e.g. timeout_ms: the renderer's own
        setattr(self._renderer, name, value)

    def close(self) -> None:
        """The session owns the browser: an app or command that closes its renderer leaves it running."""

    def render_html(self, html: str, base_dir: str | os.PathLike[str], stem: str = "page") -> RenderResult:
        return self.render_texts([(html, base_dir, stem)])[0]

    def render_texts(
        self, items: list[tuple[str, str | os.PathLike[str], str]], deadline: float | None = None
    ) -> list[RenderResult]:
        renderer = self._renderer
        folders: dict[Path, str] = {}
        keys = []
        for html, base_dir, _stem in items:
            folder = Path(base_dir).resolve()
            if folder not in folders:
                folders[folder] = _folder_key(folder)
            page = hashlib.sha256(html.encode("utf-8", errors="surrogateescape")).hexdigest()
            keys.append((page, folders[folder], renderer.timeout_ms, renderer.max_height))
        results: list[RenderResult | None] = [self._store.get(key) for key in keys]
        # The same page twice in one call (a reference and a generated copy that preprocessing leaves as it was)
        # is rendered once: each of them gets its own copy of that render.
        missing: dict[tuple[str, str, int, int], list[int]] = {}
        for index, result in enumerate(results):
            if result is None:
                missing.setdefault(keys[index], []).append(index)
        if missing:
            made = renderer.render_texts([items[indices[0]] for indices in missing.values()], deadline)
            for (key, indices), result in zip(missing.items(), made, strict=True):
                self._store.put(key, result)
                results[indices[0]] = result
                for index in indices[1:]:
                    results[index] = _copy(result)
        return [result for result in results if result is not None]
