"""Shared fixtures: one Chromium for the whole visual test session."""

from __future__ import annotations

import pytest

from replay_tui.visual.render import Renderer, RenderError, find_chromium


@pytest.fixture(scope="session")
def renderer():
    try:
        find_chromium()
    except RenderError as exc:  # CI installs Debian's chromium; a bare dev machine may not have it
        pytest.skip(str(exc))
    r = Renderer(timeout_ms=15_000)
    r.start()
    yield r
    r.close()


@pytest.fixture(scope="session")
def scorer(renderer):
    from replay_tui.visual.pipeline import VisualScorer

    return VisualScorer(renderer=renderer)


@pytest.fixture
def page_renderer(renderer):
    """The session's browser with the worker's kept renders (``tests/visual/page_renders.py``): for the tests
    where the render of a page is not what is under test."""
    from tests.visual.page_renders import CachedRenderer

    return CachedRenderer(renderer)


@pytest.fixture
def page_scorer(page_renderer):
    from replay_tui.visual.pipeline import VisualScorer

    return VisualScorer(renderer=page_renderer)
