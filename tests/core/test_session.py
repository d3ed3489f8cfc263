"""The one headless replay session (replay_tui/session.py) the CLI, the app and the MCP server run through:
its events in order, its cancel, its stop at an unreachable endpoint, its strategies (threads, repeats)."""

from __future__ import annotations

import pytest

from replay_tui.runner import UNREACHABLE_STREAK
from replay_tui.session import (
    EndpointDown,
    EpisodeDone,
    EpisodeStarted,
    ProblemFound,
    ReplaySession,
    SessionEvent,
    StepReplayed,
)
from replay_tui.sources import open_sources
from replay_tui.workspace import ReplaySettings
from tests.conftest import episode, good_episode, search_step, write_json
from tests.llm.scripted import Reply, ScriptedServer


def _demos(tmp_path, *episodes):
    return open_sources([write_json(tmp_path / "d.json", list(episodes))])


def _kinds(events: list[SessionEvent]) -> list[tuple[str, object]]:
    """Each event's class and what it is about (the session, or the step's label)."""
    out: list[tuple[str, object]] = []
    for event in events:
        if isinstance(event, StepReplayed):
            out.append(("step", (event.result.session_id, event.result.step_label)))
        elif isinstance(event, ProblemFound):
            out.append(("problem", event.problem.index))
        else:
            out.append((type(event).__name__, getattr(event, "session_id", None)))
    return out


def test_events_come_in_order_and_the_report_is_the_runners(tmp_path):
    bad = episode(5, [search_step(0, llm_action_arguments=[1])])  # malformed: its recorded call
    demos = _demos(tmp_path, good_episode(1), bad, good_episode(2))
    events: list[SessionEvent] = []
    session = ReplaySession(demos, ReplaySettings(), on_event=events.append, steps=True)
    summary = session.run()
    steps = [("step", (1, label)) for label in ("0", "1", "2")]
    assert _kinds(events) == [
        ("EpisodeStarted", 1),
        *steps,
        ("EpisodeDone", 1),
        ("EpisodeStarted", 5),
        ("problem", 1),
        ("EpisodeDone", 5),
        ("EpisodeStarted", 2),
        *[("step", (2, label)) for _, (_, label) in steps],
        ("EpisodeDone", 2),
    ]
    done = [e for e in events if isinstance(e, EpisodeDone)]
    assert [e.report.session_id if e.report else None for e in done] == [1, None, 2]
    assert done[1].problem is not None and done[1].problem.field == "trajectory[0].llm_action_arguments"
    assert summary.episodes_run == 2 and summary.total_steps == 6 and summary.overall_accuracy == 1.0
    assert [e.report for e in done if e.report] == summary.episodes
    assert session.unreachable is None and not summary.cancelled


def test_steps_are_reported_only_when_asked(tmp_path):
    events: list[SessionEvent] = []
    ReplaySession(_demos(tmp_path, good_episode(1)), ReplaySettings(), on_event=events.append).run()
    assert [type(e) for e in events] == [EpisodeStarted, EpisodeDone]


def test_threads_report_what_one_thread_does(tmp_path):
    demos = _demos(tmp_path, *(good_episode(i) for i in range(1, 9)))
    settings = ReplaySettings(mode="heuristic", mismatch="allow")
    one = ReplaySession(demos, settings).run()
    events: list[SessionEvent] = []
    four = ReplaySession(demos, settings, jobs=4, on_event=events.append).run()
    assert four.model_dump_json() == one.model_dump_json()
    assert sorted(e.session_id for e in events if isinstance(e, EpisodeDone)) == list(range(1, 9))


def test_cancel_stops_further_work(tmp_path):
    demos = _demos(tmp_path, *(good_episode(i) for i in range(1, 6)))
    events: list[SessionEvent] = []

    def on_event(event: SessionEvent) -> None:
        events.append(event)
        if isinstance(event, StepReplayed) and event.result.session_id == 2:
            session.cancel()  # mid-episode: the episode stops at its next step, no further episode starts

    session = ReplaySession(demos, ReplaySettings(), [1, 2, 3, 4], on_event=on_event, steps=True)
    summary = session.run()
    assert session.cancelled and summary.cancelled
    assert [e.session_id for e in events if isinstance(e, EpisodeStarted)] == [1, 2]
    assert [(e.result.session_id, e.result.step_label) for e in events if isinstance(e, StepReplayed)][-1] == (2, "0")
    assert [e.report.cancelled for e in events if isinstance(e, EpisodeDone) and e.report] == [False, True]
    assert not any(isinstance(e, EndpointDown) for e in events)


def _llm(url: str, tmp_path) -> ReplaySettings:
    return ReplaySettings(
        mode="llm",
        llm={"model": "M", "base_url": url, "timeout": 2, "retries": 1, "backoff": 0, "cache": False},
    )


def test_an_unreachable_endpoint_stops_the_run_with_one_event(tmp_path):
    demos = _demos(tmp_path, *(good_episode(i) for i in range(1, 6)))  # 15 steps: more than the streak
    events: list[SessionEvent] = []
    with ScriptedServer(lambda body: Reply(status=503, body={"error": {"message": "no capacity"}})) as server:
        session = ReplaySession(demos, _llm(server.url, tmp_path), on_event=events.append, steps=True)
        session.run()
        sent = len(server.requests)
    down = [e for e in events if isinstance(e, EndpointDown)]
    assert len(down) == 1 and events[-1] is down[0] and down[0].streak
    assert down[0].unreachable.url == server.url and "HTTP 503" in down[0].unreachable.reason
    assert session.unreachable == down[0].unreachable
    assert sum(isinstance(e, StepReplayed) for e in events) == UNREACHABLE_STREAK
    assert sent == UNREACHABLE_STREAK * 2  # each step's two attempts, then nothing more


def test_a_short_run_no_request_reached_ends_with_one_event(tmp_path):
    events: list[SessionEvent] = []
    with ScriptedServer(lambda body: Reply(status=502, body="bad gateway")) as server:
        session = ReplaySession(_demos(tmp_path, good_episode(1)), _llm(server.url, tmp_path), on_event=events.append)
        summary = session.run()
    assert [type(e) for e in events] == [EpisodeStarted, EpisodeDone, EndpointDown]
    down = events[-1]
    assert isinstance(down, EndpointDown) and not down.streak and down.unreachable.failures == 1
    assert summary.episodes_run == 1  # the run ended (mismatch stop: at its first step), the event says why


def test_repeats_report_each_episode_then_the_steps(tmp_path):
    demos = _demos(tmp_path, good_episode(1), good_episode(2))
    events: list[SessionEvent] = []
    report = ReplaySession(demos, ReplaySettings(), on_event=events.append, jobs=2).run_repeats(3)
    assert sorted(e.session_id for e in events if isinstance(e, EpisodeDone)) == [1, 2]
    assert all(isinstance(e, EpisodeDone) and e.report is None for e in events)
    assert report.repeats == 3 and report.episodes_run == 2 and report.all_matched


def test_a_session_runs_once(tmp_path):
    session = ReplaySession(_demos(tmp_path, good_episode(1)), ReplaySettings())
    session.run()
    with pytest.raises(RuntimeError, match="runs once"):
        session.run()
