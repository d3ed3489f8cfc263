"""Shared fixtures over the session's one Chromium (``renderer``, in tests/conftest.py: the Ray tests take it too)."""

from __future__ import annotations

import pytest


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
