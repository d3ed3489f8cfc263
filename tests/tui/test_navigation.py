"""Moving between episodes from the stepper, and going to a session by number, driven with keys."""

from __future__ import annotations

from pathlib import Path

from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.stepper import StepperScreen
from tests.conftest import good_episode, write_json
from tests.tui.conftest import SIZE, wait_replay

WRONG_WHEN_TOLD = """
class WrongWhenTold:
    '''Replays the recorded action, except at steps whose recorded thinking says WRONG.'''

    def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None):
        if "WRONG" in (recorded_step.get("llm_thinking") or ""):
            return "click[somewhere else]"
        return recorded_step["action_executed_in_env"]
"""


def demos_with_mismatches(tmp_path: Path) -> tuple[Path, Path]:
    """Sessions 10-14: 11 mismatches at steps 1 and 2, 13 at step 2; the others match."""
    episodes = [good_episode(i) for i in (10, 11, 12, 13, 14)]
    for session, steps in ((1, (1, 2)), (3, (2,))):
        for step in steps:
            episodes[session]["trajectory"][step]["llm_thinking"] = "WRONG on purpose"
    policy = tmp_path / "wrong_when_told.py"
    policy.write_text(WRONG_WHEN_TOLD)
    return write_json(tmp_path / "nav_demos.json", episodes), policy


def notes(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def press(pilot, *keys: str) -> None:
    """Press keys and let a stepper that takes another's place (a pop then a push) settle."""
    await pilot.press(*keys)
    await pilot.pause(0.2)


def mismatch_app(build, tmp_path: Path):
    """The app on :func:`demos_with_mismatches`, replaying with the policy that gets them wrong."""
    demos, policy = demos_with_mismatches(tmp_path)
    return build([demos], policy=f"{policy}:WrongWhenTold", mismatch="allow")


async def test_next_and_previous_episode_follow_the_browser_order(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("S", "g", "enter")  # sessions in reverse: the first row is 99
        await pilot.pause()
        assert app.screen.session_id == 99
        depth = len(app.screen_stack)
        await press(pilot, "J")
        assert isinstance(app.screen, StepperScreen) and app.screen.session_id == 98
        await press(pilot, "j", "j", "K")
        stepper = app.screen
        assert stepper.session_id == 99 and stepper.steps_table.cursor == 0  # a new episode starts at its start
        assert len(app.screen_stack) == depth  # the stepper is replaced, never stacked
        await press(pilot, "K")
        assert app.screen.session_id == 99
        assert any("no previous episode in the list" in n for n in notes(app))
        await press(pilot, "J", "J")
        assert app.screen.session_id == 97
        await pilot.press("escape")
        await pilot.pause()
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        assert browser.current_session() == 97  # the browser shows where the stepper was left


async def test_parentheses_jump_to_the_next_episode_with_mismatches(build, tmp_path):
    app = mismatch_app(build, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await wait_replay(app, pilot)
        await pilot.press("enter")  # session 10, all matched
        await pilot.pause()
        await press(pilot, "right_parenthesis")
        stepper = app.screen
        assert stepper.session_id == 11 and stepper.current_row().label == "1"  # at its first mismatch
        await press(pilot, "right_parenthesis")
        assert app.screen.session_id == 13 and app.screen.current_row().label == "2"
        await press(pilot, "right_parenthesis")
        assert app.screen.session_id == 13
        assert any("no next episode with mismatches" in n for n in notes(app))
        await press(pilot, "left_parenthesis")
        assert app.screen.session_id == 11


async def test_bracket_at_the_last_mismatch_offers_the_next_episode(build, tmp_path):
    app = mismatch_app(build, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await wait_replay(app, pilot)
        await pilot.press("down", "enter")  # session 11: mismatches at steps 1 and 2
        await pilot.pause()
        await pilot.press("right_square_bracket", "right_square_bracket")
        await pilot.pause()
        stepper = app.screen
        assert stepper.session_id == 11 and stepper.current_row().label == "2"
        await pilot.press("right_square_bracket")  # the last one: an offer, nothing moves
        await pilot.pause(0.2)
        assert app.screen is stepper and stepper.current_row().label == "2"
        assert any("press ] again for session 13's first mismatch (step 2)" in n for n in notes(app))
        app.clear_notifications()
        await press(pilot, "k", "j", "right_square_bracket")  # the cursor moved meanwhile: offered again
        assert app.screen is stepper and any("press ] again" in n for n in notes(app))
        await press(pilot, "right_square_bracket")
        assert app.screen.session_id == 13 and app.screen.current_row().label == "2"
        await pilot.press("right_square_bracket")  # 13 is the last with mismatches
        await pilot.pause(0.2)
        assert any("no further mismatch in this episode; no next episode with mismatches" in n for n in notes(app))
        assert app.screen.session_id == 13


async def test_go_to_session_explains_bad_input_and_opens_a_good_one(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+g", *"abc", "enter")
        await pilot.pause()
        error = app.screen.query_one("#goto-error").render().plain
        assert error == "not a session number: 'abc' (type a number, sessions 0–99)"
        await pilot.press(*["backspace"] * 3, *"999", "enter")
        await pilot.pause()
        error = app.screen.query_one("#goto-error").render().plain
        assert error == "no session 999 in the loaded files (sessions 0–99)"
        await press(pilot, *["backspace"] * 3, *"42", "enter")
        assert isinstance(app.screen, StepperScreen) and app.screen.session_id == 42
        depth = len(app.screen_stack)
        await pilot.press("colon", *"7", "enter")  # from a stepper: it takes the stepper's place
        await pilot.pause(0.2)
        assert app.screen.session_id == 7 and len(app.screen_stack) == depth
        await pilot.press("colon", "escape")
        await pilot.pause()
        assert app.screen.session_id == 7


async def test_help_lists_the_navigation_keys(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        rows = {row[3]: row for row in app.screen.rows}
        assert rows["stepper.next_episode"][1] == "J" and rows["stepper.prev_episode"][1] == "K"
        assert rows["stepper.next_bad"][1] == ")" and rows["stepper.prev_bad"][1] == "("
        assert rows["stepper.next_result"][1] == "." and rows["stepper.prev_result"][1] == ","
        assert rows["app.goto"][1] == "^g, :" and rows["app.search"][2] == "Find in all episodes"


async def test_go_to_takes_a_logs_episode_id_too(build):
    from replay_tui.examples import example_path

    traj = Path(__file__).parents[1] / "data" / "formats" / "swe_agent" / "function_calling_simple.traj"
    app = build([str(example_path()), str(traj)])
    async with app.run_test(size=SIZE) as pilot:
        await press(pilot, "colon", *"function_calling_simple", "enter")
        stepper = app.screen
        assert isinstance(stepper, StepperScreen) and stepper.session_id == 100 and stepper.general
