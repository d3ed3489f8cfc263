"""One invalid field no longer hides its episode (issue 16): the stepper opens it, marks the step
(field, value, reason) and every other step is shown and replayed."""

from __future__ import annotations

from replay_tui.tui.replay.stepper import StepperScreen
from tests.conftest import good_episode, write_json
from tests.tui.conftest import SIZE, wait_replay
from tests.tui.test_background_validation import _validated


def _step_rows(screen: StepperScreen) -> list[str]:
    return [" ".join(cell.plain for cell in screen.source.cells(i)) for i in range(len(screen.source))]


async def test_an_episode_with_an_invalid_reward_opens_with_the_step_marked(build, tmp_path):
    bad = good_episode(10)
    bad["trajectory"][1]["reward"] = "abc"
    path = write_json(tmp_path / "webshop_demonstrations_10-11.json", [bad, good_episode(11)])
    app = build([path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")  # session 10
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen) and screen.problem is None
        assert "⚠ 1 invalid field read as defaults" in screen.query_one("#episode-title").render().plain
        rows = _step_rows(screen)
        assert len(rows) == len(bad["trajectory"])
        marked = [i for i, row in enumerate(rows) if "⚠" in row]
        assert marked == [1]
        await pilot.press("j")  # the marked step: which field, its value, why
        detail = screen.query_one("#step-detail").render().plain
        assert "step 1" in detail
        assert "⚠ invalid field trajectory[1].reward: 'abc': Input should be a valid number" in detail
        assert "read as 0.0" in detail
        await pilot.press("j")  # the next step is whole
        detail = screen.query_one("#step-detail").render().plain
        assert "step 2" in detail and "invalid field" not in detail and "expected" in detail
        await pilot.press("r")  # and the episode replays
        await wait_replay(app, pilot)
        verdicts = app.step_results[10]
        assert {"0", "1", "2"} <= set(verdicts) and all(v.match for v in verdicts.values())
        assert "malformed" not in screen.query_one("#episode-title").render().plain


async def test_the_browser_counts_the_invalid_fields_the_background_validation_finds(build, tmp_path):
    bad = good_episode(10)
    bad["trajectory"][1]["reward"] = "abc"
    bad["trajectory"][2]["done"] = "maybe"
    path = write_json(tmp_path / "webshop_demonstrations_10-12.json", [bad, good_episode(11), good_episode(12)])
    app = build([path])
    async with app.run_test(size=SIZE) as pilot:
        await _validated(app, pilot)
        await pilot.pause()
        plain = app.screen.query_one("#browser-title").render().plain
        assert "⚠ 2 invalid fields read as defaults" in plain and "problems" not in plain


async def test_a_rebuilt_action_and_an_unparsed_prompt_are_said_where_the_step_is_shown(build, tmp_path):
    """The stepper shows a seed episode from its Trajectory (issue 29): a decision whose empty action
    was rebuilt from its call still warns of it, and a prompt that does not parse is shown raw
    under its parse error."""
    repaired = good_episode(10)
    repaired["trajectory"][0]["action_executed_in_env"] = ""
    repaired["trajectory"][0]["llm_prompt"] = "[{'role': 'user', 'content': 'cut short"
    path = write_json(tmp_path / "webshop_demonstrations_10-11.json", [repaired, good_episode(11)])
    app = build([path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")  # session 10, on its first step
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen) and screen.problem is None
        detail = screen.query_one("#step-detail").render().plain
        assert "step 0" in detail and "expected   search[" in detail
        assert "⚠ action_executed_in_env empty; rebuilt from the tool call" in detail
        prompt = screen.query_one("#prompt").text
        assert prompt.startswith("⚠ prompt not parsed: llm_prompt is not a Python or JSON literal")
        assert "'content': 'cut short" in prompt
