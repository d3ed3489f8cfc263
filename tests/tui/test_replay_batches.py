"""The app's replay sends its results in batches (issue 14): totals and reports equal the CLI's, the
progress moves, a stepper open on an episode being replayed shows its verdicts step by step, and a
cancelled replay keeps what it finished."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from replay_tui.formats.webshop_demos import synth
from replay_tui.runner import StepResult
from replay_tui.tui.messages import ReplayProgressed
from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.feed import ReplayFeed
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.workspace import ReplaySettings, Workspace
from tests.tui.conftest import SIZE, wait_replay
from tests.tui.test_flows import SLOW_POLICY

EPISODES = 400


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("many") / "many.json"
    synth.write_demo_file(path, start=0, count=EPISODES, seed=3)
    return path


def _cli_summary(path: Path, tmp_path: Path, **settings):
    workspace = Workspace.open(
        [path], annotations_path=tmp_path / "cli.annotations.json", settings=ReplaySettings(**settings)
    )
    return workspace.make_runner().run_all()


async def test_a_replay_of_many_episodes_ends_with_the_cli_totals_and_report(build, many, tmp_path):
    app = build([many], mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("R")
        await wait_replay(app, pilot)
        status = str(app.screen.query_one("#status").render())
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        first_row = [cell.plain for cell in screen.source.cells(0)]
    cli = _cli_summary(many, tmp_path, mode="heuristic", mismatch="allow")
    ws = app.workspace
    totals = ws.totals()
    mismatched = cli.episodes_run - cli.episodes_matched
    assert (totals.episodes, totals.mismatched, totals.steps, totals.matched) == (
        cli.episodes_run,
        mismatched,
        cli.total_steps,
        cli.total_matched,
    )
    ws._totals = None  # the incremental totals equal a recount
    assert ws.totals() == totals
    assert f"{EPISODES} replayed · {mismatched} with mismatches" in status and "replaying" not in status
    assert first_row[-2] != "—"  # the rows show their verdicts
    assert ws.summary().to_json(include_steps=True) == cli.to_json(include_steps=True)
    assert app.step_results[7] == {step.step_label: step for step in ws.results[7].steps}


async def test_the_worker_posts_batches_not_a_message_per_step(build, many):
    app = build([many])
    batches: list[ReplayProgressed] = []

    def hook(message) -> None:
        if isinstance(message, ReplayProgressed):
            batches.append(message)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await pilot.press("R")
        await wait_replay(app, pilot)
        steps = app.workspace.totals().steps
    assert app.workspace.totals().episodes == EPISODES
    assert 1 <= len(batches) < EPISODES < steps
    assert [b.done for b in batches] == sorted(b.done for b in batches) and batches[-1].done == EPISODES
    assert sum(len(b.reports) for b in batches) == EPISODES
    assert not any(b.steps for b in batches)  # no stepper open: the steps come with their reports


GATED_POLICY = """
import pathlib, time

GATE = pathlib.Path({gate!r})
TARGET = {target!r}

class Gated:
    # the recorded action; on the target episode, its second step is slow (a slow step is posted at
    # once, with the steps before it) and its third waits until the test opens the gate

    def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None):
        number = (recorded_step or {{}}).get("step_number", 0)
        if TARGET in (observation or "") and number == 1:
            time.sleep(0.2)
        if TARGET in (observation or "") and number >= 2:
            while not GATE.exists():
                time.sleep(0.01)
        return recorded_step["action_executed_in_env"]
"""


async def wait_for(pilot, condition, what: str, limit: float = 120) -> None:
    """Let the app run until ``condition()`` holds (a bound on the wait, not a timing check)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"waited {limit:.0f} s for {what}"
        await pilot.pause(0.01)


async def test_a_stepper_open_on_an_episode_being_replayed_shows_its_verdicts_as_they_come(build, tmp_path):
    demos = build().workspace.demos
    target = next(i for i in range(4, 100) if len(demos.episode(i).decision_steps) >= 3)
    gate = tmp_path / "gate"
    instruction = demos.episode(target).instruction
    policy = tmp_path / "gated.py"
    policy.write_text(GATED_POLICY.format(gate=str(gate), target=instruction))
    app = build(policy=f"{policy}:Gated")
    try:
        await _stepper_during_replay(app, target, gate)
    finally:
        gate.touch()  # never leave the replay's worker waiting, whatever failed


async def _stepper_during_replay(app, target: int, gate) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        app.open_episode(target)
        await pilot.pause()
        stepper = app.screen
        assert isinstance(stepper, StepperScreen)
        # the replay holds at the target's third step: its first verdicts are shown, its report not made
        await wait_for(pilot, lambda: bool(stepper.verdicts()), "the target's first verdict")
        # the verdicts are stored by the replay's worker, the replay's place by a message after them
        await wait_for(pilot, lambda: bool(app.current_replay) and app.current_replay[0] == target, "the target")
        assert target not in app.workspace.results
        partial = len(stepper.verdicts())
        gate.touch()
        await wait_for(pilot, lambda: target in app.workspace.results, "the target's report")
        report = app.workspace.results[target]
        assert partial < len(report.steps)  # steps arrived one by one, before the report
        assert stepper.verdicts() == {step.step_label: step for step in report.steps}
        await pilot.press("escape")  # the stepper closes; the replay goes on, then is cancelled
        await pilot.pause()
        app.action_cancel_replay()
        await wait_replay(app, pilot)
    assert not app.replaying


async def test_cancel_midway_keeps_the_finished_results_and_the_earlier_ones(build, tmp_path):
    policy = tmp_path / "slow.py"
    policy.write_text(SLOW_POLICY)
    app = build(policy=f"{policy}:Slow")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        for _ in range(300):
            if len(app.workspace.results) >= 2:
                break
            await pilot.pause(0.02)
        await pilot.press("escape")
        await wait_replay(app, pilot)
        kept = dict(app.workspace.results)
        finished = [report for report in kept.values() if not report.cancelled]
        assert 2 <= len(finished) < 100 and len(kept) - len(finished) <= 1  # the one cut short says so
        assert app.workspace.totals().episodes == len(kept)
        done, total = app.progress
        assert total == 100 and len(kept) <= done < 100
        # a second replay cancelled at once: every earlier result stays
        await pilot.press("R")
        await pilot.press("escape")
        await wait_replay(app, pilot)
        assert set(app.workspace.results) >= set(kept)
        assert app.workspace.totals().episodes == len(app.workspace.results)


# -- the feed, with a clock the test moves ------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _step(session_id: int, label: str) -> StepResult:
    return StepResult(
        session_id=session_id,
        step_index=int(label),
        step_number=int(label),
        step_label=label,
        state="search",
        expected="search[x]",
        predicted="search[x]",
        verdict="match",
    )


def _report(session_id: int, steps: list[StepResult]):
    from replay_tui.runner import EpisodeReport

    return EpisodeReport(
        session_id=session_id,
        steps_total=len(steps),
        steps_matched=len(steps),
        accuracy=1.0,
        steps_recorded=len(steps),
        steps=steps,
    )


def test_the_feed_posts_at_most_every_interval_and_flushes_the_rest():
    clock = Clock()
    posted: list[ReplayProgressed] = []
    feed = ReplayFeed(posted.append, 10, clock=clock, interval=0.05, mode="stub")
    for session_id in range(10):
        feed.begin()
        steps = []
        for label in ("0", "1"):
            clock.now += 0.001  # a fast step
            steps.append(_step(session_id, label))
            feed.step(steps[-1])
        feed.episode(_report(session_id, steps))
        if session_id == 4:
            clock.now += 0.05  # time for one message
    assert len(posted) == 1 and posted[0].done == 5 and [r.session_id for r in posted[0].reports] == [0, 1, 2, 3, 4]
    feed.flush()
    assert len(posted) == 2 and posted[1].done == 10 and posted[1].total == 10 and posted[1].mode == "stub"
    assert [r.session_id for r in posted[1].reports] == [5, 6, 7, 8, 9] and posted[1].position == (9, "1")
    feed.flush()
    assert len(posted) == 2  # nothing new: nothing posted


def test_the_feed_posts_a_slow_step_at_once_and_the_steps_of_a_watched_episode():
    clock = Clock()
    posted: list[ReplayProgressed] = []
    watched: set[int] = set()
    feed = ReplayFeed(posted.append, 3, clock=clock, interval=0.05, watched=lambda: watched)
    feed.begin()
    first, second, third = _step(0, "0"), _step(0, "1"), _step(0, "2")
    clock.now += 0.001
    feed.step(first)  # fast, not watched: held
    assert posted == []
    watched.add(0)  # a stepper opens on the episode mid-way
    clock.now += 0.2
    feed.step(second)  # slow: posted at once, with the steps so far
    assert len(posted) == 1
    assert posted[0].steps == [first, second] and posted[0].fresh == {0} and posted[0].position == (0, "1")
    clock.now += 0.2
    feed.step(third)
    assert posted[1].steps == [third] and posted[1].fresh == set()
    feed.episode(_report(0, [first, second, third]))  # right after a slow step: posted at once too
    assert len(posted) == 3 and posted[2].done == 1 and posted[2].steps == []
    from replay_tui.episodes.problems import LoadProblem

    feed.begin()
    feed.failed(LoadProblem(file="f.json", index=1, session_id=1, message="bad"))
    feed.flush()
    assert posted[-1].done == 2 and [p.session_id for p in posted[-1].problems] == [1]


def test_the_feed_tells_a_stepper_opening_mid_episode_the_verdicts_so_far():
    """A replay held on a slow step sends nothing until that step is judged: a stepper opening on the
    episode then takes the verdicts judged so far from the feed (the race the Pilot test above hit)."""
    feed = ReplayFeed(lambda message: None, 2, clock=Clock(), interval=0.05)
    feed.begin()
    first, second = _step(3, "0"), _step(3, "1")
    feed.step(first)
    feed.step(second)
    assert feed.so_far(3) == [first, second] and feed.so_far(4) == []
    feed.episode(_report(3, [first, second]))
    assert feed.so_far(3) == []  # done: its steps came with its report
    feed.begin()
    assert feed.so_far(3) == [] and feed.so_far(4) == []
