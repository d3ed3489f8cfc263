"""Find across episodes, driven with keys: the results list, jumping to a step, walking the results."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.screens.search import MATCH_STYLE, SearchScreen
from tests.conftest import good_episode, write_json
from tests.tui.conftest import SIZE


def zebra_demos(tmp_path: Path) -> Path:
    """Sessions 10-13; 'zebra' in 11's thinking (step 0), 12's detail sub-event and 13's page after step 1."""
    episodes = [good_episode(i) for i in (10, 11, 12, 13)]
    episodes[1]["trajectory"][0]["llm_thinking"] = "Look for the Zebra print, [bold red]not[/] \x1b[31mred\x1b[0m."
    episodes[2]["trajectory"][4]["observation"] = "a zebra pattern, soft"
    episodes[3]["trajectory"][1]["observation_after_action"] = "Page 2: zebra shoes"
    return write_json(tmp_path / "zebra_demos.json", episodes)


async def finish(app, pilot) -> SearchScreen:
    screen = app.screen
    assert isinstance(screen, SearchScreen)
    for _ in range(1500):  # at most 30 s on a busy machine
        await pilot.pause(0.02)
        if screen.finished:
            break
    await pilot.pause()
    return screen


async def test_finds_text_in_every_episode_and_enter_opens_the_step(build, tmp_path):
    app = build([zebra_demos(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("F", *"zebra")
        search = await finish(app, pilot)
        hits = search.source.hits
        assert [(h.session_id, h.step, h.field) for h in hits] == [
            (11, "0", "thinking"),
            (12, "↳ detail_exploration", "observation"),
            (13, "1", "observation after"),  # shown as "obs. after"
        ]
        status = search.query_one("#search-status").render().plain
        assert "3 results" in status and "all 4 episodes" in status
        cells = search.source.cells(0)
        match = cells[3]
        # the log's text is shown as text: markup and escape sequences do nothing
        assert "[bold red]not[/]" in match.plain and "\x1b" not in match.plain
        highlighted = [match.plain[span.start : span.end] for span in match.spans if span.style == MATCH_STYLE]
        assert highlighted == ["Zebra"]
        await pilot.press("down", "down", "enter")  # to the list, to the second result, open it
        await pilot.pause(0.2)
        stepper = app.screen
        assert isinstance(stepper, StepperScreen) and stepper.session_id == 12
        assert stepper.current_row().position == 4
        assert stepper.query_one("#find").value == "zebra" and stepper.find_hits == [("observation", 0)]
        await pilot.pause(0.1)
        assert stepper.query_one("#status").render().plain.startswith("find: match 1/1 in observation  │  policy")


async def test_dot_and_comma_walk_the_results_across_episodes(build, tmp_path):
    app = build([zebra_demos(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("F", *"zebra")
        await finish(app, pilot)
        await pilot.press("enter", "enter")  # enter in the query: to the list; enter: open the first
        await pilot.pause(0.2)
        assert app.screen.session_id == 11
        depth = len(app.screen_stack)
        await pilot.press("full_stop")
        await pilot.pause(0.2)
        await pilot.press("full_stop")
        await pilot.pause(0.2)
        stepper = app.screen
        assert stepper.session_id == 13 and len(app.screen_stack) == depth  # replaced, not stacked
        assert stepper.show_after and stepper.current_row().position == 1  # the page after the action
        assert stepper.find_hits and stepper.find_hits[0][0] == "observation"
        await pilot.press("full_stop")
        await pilot.pause(0.1)
        assert app.screen.session_id == 13
        assert any("last of 3 results" in str(n.message) for n in app._notifications)
        await pilot.press("comma")
        await pilot.pause(0.2)
        assert app.screen.session_id == 12
        await pilot.press("F")  # the search comes back with its query and results
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen) and app.screen.query_one("#search-query").value == "zebra"
        assert app.screen.results.cursor == 1
        await pilot.press("enter", "n")  # to the list; n: the next result
        assert app.screen.results.cursor == 2
        await pilot.press("N", "N")
        assert app.screen.results.cursor == 0
        await pilot.press("escape", "escape")  # back to the query, then closed
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen) and app.screen.session_id == 12


async def test_scope_narrows_to_the_episode_on_screen(build, tmp_path):
    app = build([zebra_demos(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "enter")  # session 11
        await pilot.pause()
        await pilot.press("F", *"clip-in")
        search = await finish(app, pilot)
        assert {h.session_id for h in search.source.hits} == {10, 11, 12, 13}
        await pilot.press("ctrl+t")
        search = await finish(app, pilot)
        assert {h.session_id for h in search.source.hits} == {11}
        assert "in episode 11" in search.query_one("#search-status").render().plain
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen)


async def test_a_new_query_replaces_the_results_and_no_match_is_said(build, tmp_path):
    app = build([zebra_demos(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("F", *"zebra")
        search = await finish(app, pilot)
        assert len(search.source) == 3
        await pilot.press(*["backspace"] * 5, *"soft")
        search = await finish(app, pilot)
        assert search.source.hits and all("soft" in h.snippet.lower() for h in search.source.hits)
        await pilot.press(*"xyzzy")
        search = await finish(app, pilot)
        assert not search.source.hits
        assert "no match for 'softxyzzy'" in search.query_one("#search-status").render().plain
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)


async def test_searches_the_bundled_example_and_help_lists_the_keys(build):
    app = build()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("F", *"volleyball")
        search = await finish(app, pilot)
        assert len({h.session_id for h in search.source.hits}) > 1
        assert "volleyball" in app.export_screenshot()
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        ids = {row[3] for row in app.screen.rows}
        assert {"app.search", "app.goto", "search.next", "search.previous", "search.scope"} <= ids


@pytest.mark.slow
async def test_a_new_query_cancels_the_running_search(build, tmp_path, monkeypatch):
    from replay_tui.tui.screens import search as search_screen

    path = write_json(tmp_path / "many.json", [good_episode(i) for i in range(120)])
    consumed: dict[str, int] = {}
    real_search = search_screen.search
    gate = threading.Event()

    def slow_search(demos, text, sessions=None):
        """A big file: "clip-in" streams a few episodes (slowly enough for a batch to be posted), then
        holds until the test has looked at the screen and typed more (deterministic on a busy machine)."""
        for number, found in enumerate(real_search(demos, text, sessions)):
            if text == "clip-in":
                if number == 5:
                    gate.wait(30)
                time.sleep(0.03)
            consumed[text] = consumed.get(text, 0) + 1
            yield found

    monkeypatch.setattr(search_screen, "search", slow_search)
    app = build([path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("F", *"clip-in")
        search = app.screen
        for _ in range(500):
            await pilot.pause(0.02)
            if len(search.source):
                break
        # results stream in while the search goes on
        assert len(search.source) > 0 and not search.finished and search.done < 120
        assert "searching" in search.query_one("#search-status").render().plain
        await pilot.press("space", "h")
        gate.set()
        await finish(app, pilot)
        assert consumed["clip-in"] < 120  # abandoned once the query changed
        assert consumed["clip-in h"] == 120
        assert {h.session_id for h in search.source.hits} == set(range(120))
        assert all("clip-in h" in h.snippet.lower() for h in search.source.hits)


async def test_the_search_stops_at_the_result_cap(build, tmp_path, monkeypatch):
    from replay_tui.tui.screens import search as search_screen

    monkeypatch.setattr(search_screen, "MAX_RESULTS", 5)
    app = build([zebra_demos(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("F", *"clip-in")
        search = await finish(app, pilot)
        assert len(search.source) == 5
        assert "5 results (stopped at 5: narrow the query)" in search.query_one("#search-status").render().plain


async def test_finds_in_a_real_swe_agent_log_and_opens_the_tool_result(build):
    traj = Path(__file__).parents[1] / "data" / "formats" / "swe_agent" / "function_calling_simple.traj"
    app = build([str(traj)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("F", *"text replaced")
        search = await finish(app, pilot)
        found = [(h.step, h.field) for h in search.source.hits]
        assert ("2", "observation after") in found and ("3", "observation") in found  # the tool result, then the page
        index = found.index(("2", "observation after"))
        await pilot.press("enter", *["down"] * index, "enter")
        await pilot.pause(0.2)
        stepper = app.screen
        assert isinstance(stepper, StepperScreen) and stepper.current_row().position == 2
        assert stepper.show_after  # the observation pane shows the tool result, where the text is
        assert stepper.find_hits and stepper.find_hits[0][0] == "observation"
