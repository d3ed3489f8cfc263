"""Hermetic TUI tests: no user config or data dir, a fixed size, cursor blink off."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.widgets import Input

from replay_tui.matching import MatchSettings
from replay_tui.tui.app import ReplayApp, make_app
from replay_tui.visual import render
from replay_tui.visual.render import Renderer, new_renderer
from replay_tui.workspace import ReplaySettings

SIZE = (130, 36)


class SessionBrowsers:
    """Chromium started once per worker for the apps that score pages (the inspector, the visual batch): one
    per timeout and executable they ask for, so each is the renderer the app would have started, only once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: dict[tuple[int | None, str], Renderer] = {}

    def __call__(self, timeout_ms: int | None) -> tuple[Renderer, bool]:
        key = (timeout_ms, render.find_chromium())  # a test without Chromium still gets the app's error
        with self._lock:
            if key not in self._started:
                self._started[key] = new_renderer(timeout_ms)[0].start()
            return self._started[key], False

    def close(self) -> None:
        for renderer in self._started.values():
            renderer.close()


@pytest.fixture(scope="session")
def _session_browsers() -> Iterator[SessionBrowsers]:
    browsers = SessionBrowsers()
    yield browsers
    browsers.close()


@pytest.fixture(autouse=True)
def _one_browser_a_worker(_session_browsers: SessionBrowsers, monkeypatch: pytest.MonkeyPatch) -> None:
    """Apps get the worker's browser instead of starting their own (started only when an app asks)."""
    monkeypatch.setattr(render, "renderer_factory", _session_browsers)


@pytest.fixture(scope="session", autouse=True)
def _stylesheets_parsed_once_a_worker() -> Iterator[None]:
    """Every App parses every stylesheet it loads (Textual's widgets' DEFAULT_CSS, ours) into rules of its
    own, and parses them all again for a theme or a screen's CSS file: the rules are made of nothing but the
    CSS and the theme's variables (a Stylesheet reuses them itself between its parses), so a worker's apps
    share one parse of each. ~0.02 s of CPU an app started, more for a theme chosen."""
    parsed: dict[tuple[object, ...], list[RuleSet]] = {}
    parse_rules = Stylesheet._parse_rules

    def shared(self: Stylesheet, css: str, read_from, is_default_rules=False, tie_breaker=0, scope=""):  # type: ignore[no-untyped-def]
        key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(self._variables.items()))
        rules = parsed.get(key)
        if rules is None:
            rules = parsed[key] = parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
        return rules

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Stylesheet, "_parse_rules", shared)
        yield


@pytest.fixture(autouse=True)
def _no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Input, "cursor_blink", False, raising=False)


@pytest.fixture
def build(tmp_path: Path):
    """make_app with annotations and exports inside tmp_path."""

    def factory(
        demos=None,
        *,
        mode: str = "stub",
        mismatch: str = "stop",
        policy: str | None = None,
        item_steps: bool = False,
        match: tuple[str, ...] = (),
        **kwargs,
    ) -> ReplayApp:
        settings = ReplaySettings(
            mode="custom" if policy else mode,
            policy_spec=policy,
            mismatch=mismatch,
            item_steps=item_steps,
            matching=MatchSettings.parse(match),
        )
        kwargs.setdefault("annotations", tmp_path / "notes.annotations.json")
        kwargs.setdefault("export_dir", tmp_path)
        return make_app(demos, settings=settings, **kwargs)

    return factory


async def wait_replay(app: ReplayApp, pilot) -> None:
    """Wait until the replay worker has finished and its messages are handled."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    for _ in range(50):
        if not app.replaying:
            break
        await pilot.pause(0.02)
    await pilot.pause()
