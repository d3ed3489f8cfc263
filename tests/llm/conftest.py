"""Fixtures for the LLM tests: no user directories, no real keys or endpoints, a scripted server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from replay_tui.examples import example_path
from tests.llm.scripted import Oracle, RecordedCall, ScriptedServer, recorded_calls


@pytest.fixture(autouse=True)
def _isolated_llm_env(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
        "REPLAY_TUI_MODEL",
        "REPLAY_TUI_CACHE_DIR",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(scope="session")
def bundled_calls() -> dict[str, list[RecordedCall]]:
    """The recorded decisions of the bundled example, by request (decision and item steps)."""
    return recorded_calls([example_path()], item_steps=True)


@pytest.fixture
def oracle(bundled_calls) -> Oracle:
    return Oracle(bundled_calls)


@pytest.fixture
def server(oracle) -> Iterator[ScriptedServer]:
    """A server answering with the bundled example's recorded decisions (see ``oracle.overrides``)."""
    with ScriptedServer(oracle) as running:
        yield running
