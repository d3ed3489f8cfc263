"""The app against an endpoint that never answers (issue 16): ``R`` stops after a few failed
requests in a row and says why, instead of retrying every step of all 100 episodes."""

from __future__ import annotations

from replay_tui.runner import UNREACHABLE_STREAK
from replay_tui.tui.app import make_app
from replay_tui.workspace import ReplaySettings
from tests.llm.conftest import _isolated_llm_env  # noqa: F401 - fixture
from tests.llm.scripted import Reply, ScriptedServer
from tests.llm.test_unreachable import closed_port_url
from tests.tui.conftest import SIZE, wait_replay


async def test_replay_all_against_a_503_server_stops_after_a_streak_and_says_so(tmp_path):
    with ScriptedServer(lambda body: Reply(status=503, body={"error": {"message": "no capacity"}})) as server:
        llm = {"base_url": server.url, "model": "M", "retries": 0, "backoff": 0, "timeout": 2, "cache": False}
        settings = ReplaySettings(mode="llm", mismatch="allow", llm=llm)
        app = make_app(settings=settings, annotations=tmp_path / "a.json", export_dir=tmp_path, save_runs=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("R")
            await wait_replay(app, pilot)
            assert len(server.requests) == UNREACHABLE_STREAK  # not one per step of 100 episodes
            toasts = [str(n.message) for n in app._notifications]
            stopped = [t for t in toasts if t.startswith(f"endpoint unreachable: {server.url}: HTTP 503")]
            assert stopped, toasts
            assert f"stopped after {UNREACHABLE_STREAK} requests in a row failed" in stopped[0]
            assert not app.replaying


async def test_replaying_one_short_episode_against_a_closed_port_says_the_endpoint_is_unreachable(tmp_path):
    """Fewer steps than the streak: the end of the replay says it, not only each step's failure."""
    url = closed_port_url()
    llm = {"base_url": url, "model": "M", "retries": 0, "backoff": 0, "timeout": 2, "cache": False}
    settings = ReplaySettings(mode="llm", mismatch="stop", llm=llm)  # the first failed step ends the episode
    app = make_app(settings=settings, annotations=tmp_path / "a.json", export_dir=tmp_path, save_runs=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("j", "j", "enter", "r")
        await wait_replay(app, pilot)
        assert len(app.step_results[2]) < UNREACHABLE_STREAK
        toasts = [str(n.message) for n in app._notifications]
        assert any(t.startswith(f"endpoint unreachable: {url}: cannot reach the server") for t in toasts), toasts
