"""Coding-agent logs in the app, driven with keys: a Claude Code session's sub-agent is an episode of
its own, reached from the browser, stepped through and left."""

from __future__ import annotations

from replay_tui.episodes.model import Trajectory
from replay_tui.formats import read_trajectories
from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.stepper import StepperScreen
from tests.conftest import DATA
from tests.tui.conftest import SIZE
from tests.tui.test_formats_tui import assert_shown, browser_rows

ATTIO = DATA / "formats" / "claude_code" / "attio-mcp-server__logs_chat__cc1.0.70.jsonl"
PARENT = "f89f86a1-90f7-4671-8587-88710a331c6f"


async def test_a_claude_code_sub_agent_is_entered_and_left_from_its_session(build):
    app = build([str(ATTIO)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        ids = [row[1] for row in browser_rows(app)]
        assert ids[0] == PARENT and len(ids) == 8  # the session, then its 7 Task sub-agents
        child_id = f"{PARENT}/sidechain-3"
        await pilot.press("enter")  # the session: step to the Task call that started the sub-agent
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        for _ in range(200):
            step = screen.source_step(screen.current_row())
            if step is not None and step.subagent == child_id:
                break
            await pilot.press("j")  # handled, and the panes follow, before press returns: no frame forced per step
        assert step is not None and step.action is not None and step.action.name == "Task"
        await pilot.press("o")  # its result names the sub-agent's episode
        await pilot.pause()
        assert_shown(app, "observation", f"[sub-agent episode: {child_id}]")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("slash", *"sidechain-3", "enter")
        await pilot.pause()
        assert [row[1] for row in browser_rows(app)] == [child_id]
        await pilot.press("enter")  # into the sub-agent
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        child = screen.source_step(screen.current_row())
        expected = next(t for t in read_trajectories(ATTIO) if isinstance(t, Trajectory) and t.id == child_id)
        assert child.action_text == expected.steps[0].action_text  # the sub-agent's own first call
        assert_shown(app, "action", child.action_text[:40])
        await pilot.press("j")  # its second step
        await pilot.pause()
        assert screen.source_step(screen.current_row()) is not child
        await pilot.press("escape")  # and out again, back to the sessions
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        assert [row[1] for row in browser_rows(app)] == [child_id]


async def test_a_task_step_opens_its_sub_agent_with_a_and_esc_returns_to_that_step(build):
    """The Task call's detail shows what the log recorded of its model call (model, tokens); ``a``
    opens the sub-agent it started, whose header names its parent; ``esc`` is back at the Task step."""
    app = build([str(ATTIO)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")  # the session
        await pilot.pause()
        parent = app.screen
        assert isinstance(parent, StepperScreen)
        await pilot.press("a")  # the first step started no sub-agent: said, nothing opens
        await pilot.pause()
        assert app.screen is parent
        for _ in range(300):
            step = parent.source_step(parent.current_row())
            if step is not None and step.subagent:
                break
            await pilot.press("j")
            await pilot.pause()
        assert step is not None and step.subagent and step.action is not None and step.action.name == "Task"
        label = parent.current_row().label
        detail = str(parent.query_one("#step-detail").content)
        assert step.model and step.usage is not None and step.usage.input is not None
        assert f"{step.model} · {step.usage.input:,} in / {step.usage.output:,} out" in detail
        assert f"sub-agent  {step.subagent}" in detail
        await pilot.press("a")
        await pilot.pause()
        child = app.screen
        assert isinstance(child, StepperScreen) and child is not parent
        assert child.trajectory is not None and child.trajectory.id == step.subagent
        title = str(child.query_one("#episode-title").content)
        assert f"sub-agent of {PARENT}" in title
        await pilot.press("j", "escape")  # a step into the sub-agent, then back
        await pilot.pause()
        back = app.screen
        assert isinstance(back, StepperScreen) and back.trajectory is not None and back.trajectory.id == PARENT
        assert back.current_row().label == label
        await pilot.press("escape")  # and the parent's esc goes to the browser as before
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
