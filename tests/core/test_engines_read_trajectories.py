"""Every engine reads an episode as its Trajectory or, for a clean seed episode, its fast reading
(issue 29, step 5): never the seed's pydantic Episode. A seed file with quirks (the episodes that
have no fast reading) replays from the same Trajectory ``replay-tui formats`` and the app read."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import replay_tui.batch
import replay_tui.env
import replay_tui.repeat
import replay_tui.workspace
from replay_tui.annotations import AnnotationStore
from replay_tui.env import OfflineWebshopEnv
from replay_tui.episodes.model import Trajectory
from replay_tui.formats import read_trajectories
from replay_tui.formats.webshop_demos import synth
from replay_tui.formats.webshop_demos.fast import FastEpisode
from replay_tui.policies import HeuristicPolicy, StubPolicy
from replay_tui.repeat import run_repeats
from replay_tui.runner import Runner
from replay_tui.sources import open_sources, read_trajectory, trajectory_of
from replay_tui.workspace import Workspace
from tests.conftest import episode, search_step, write_json


@pytest.fixture(scope="module")
def quirky(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("quirky") / "synth.json"
    synth.write_demo_file(path, start=0, count=40, seed=11, quirk_rate=0.6)
    return path


def test_a_seed_file_is_one_trajectory_to_formats_the_app_and_a_replay(quirky: Path) -> None:
    read = {t.id: t for t in read_trajectories(quirky) if isinstance(t, Trajectory)}  # `replay-tui formats`
    app = open_sources([quirky])
    env = OfflineWebshopEnv(open_sources([quirky]), include_item_steps=True)
    slow = 0
    for session_id in app.session_ids:
        shown = trajectory_of(app, session_id)
        env.reset(session_id)
        replayed = env.trajectory
        assert replayed is not None
        assert shown == read[str(session_id)] == replayed == read_trajectory(app.ref(session_id)), session_id
        assert shown.problems == replayed.problems  # the fields read as their defaults, named alike
        if isinstance(env.replayed, Trajectory):  # an episode without a fast reading: replayed from it
            assert env.replayed == shown
            slow += 1
        else:
            assert isinstance(env.replayed, FastEpisode)
    assert 0 < slow < len(app.session_ids)


def test_a_field_read_as_its_default_is_a_problem_of_the_trajectory_named_once(tmp_path: Path) -> None:
    path = write_json(tmp_path / "odd.json", [episode(5, [search_step(0), search_step(1, reward="lots")])])
    demos = open_sources([path])
    (read,) = [t for t in read_trajectories(path) if isinstance(t, Trajectory)]
    env = OfflineWebshopEnv(demos)
    env.reset(5)
    assert isinstance(env.replayed, Trajectory) and env.replayed == read
    (problem,) = env.replayed.problems
    assert problem.field == "trajectory[1].reward" and read.problems == [problem]
    assert [s.reward for s in env.steps] == [0.0, 0.0]  # read as its default, the episode replayed
    env.reset(5)
    assert demos.problems == [problem]  # recorded once in the set


def test_every_engine_replays_a_trajectory_or_a_fast_reading(quirky: Path, monkeypatch, tmp_path: Path) -> None:
    seen: list[type] = []
    original = replay_tui.env.replay_steps

    def spying(episode: Any, **kwargs: Any) -> Any:
        seen.append(type(episode))
        return original(episode, **kwargs)

    for module in (replay_tui.env, replay_tui.repeat, replay_tui.workspace, replay_tui.batch):
        monkeypatch.setattr(module, "replay_steps", spying)
    demos = open_sources([quirky])
    runner = Runner(OfflineWebshopEnv(demos, mismatch_policy="allow", include_item_steps=True), HeuristicPolicy())
    summary = runner.run_all()
    assert summary.episodes_run == len(demos)
    replayed = len(seen)
    report = run_repeats(StubPolicy, demos, repeats=2, include_item_steps=True, cancel=threading.Event())
    assert report.episodes_run == len(demos) and len(seen) == 2 * replayed
    workspace = Workspace(demos=demos, annotations=AnnotationStore.load(tmp_path / "notes.json"))
    for report_ in summary.episodes:
        workspace.record(report_, "heuristic")
    workspace.rejudged()
    assert len(seen) == 3 * replayed
    assert set(seen) == {Trajectory, FastEpisode}
