"""The app on logs of every format, driven with keys: the browser's columns, the stepper's panes
(observation, messages, thinking, action), the screenshot pane and a replay.

Each format test opens a sample of tests/data/formats/, opens an episode from the browser (enter),
steps with the stepper's keys and reads what the panes draw on screen. Where a real sample
records no thinking, a copy with one reasoning field added (the format's own field) is used.
"""

from __future__ import annotations

import json
import shutil

from PIL import Image, ImageDraw

from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.screens.help import HelpScreen
from replay_tui.tui.widgets.halfblock import HalfBlockImage
from replay_tui.tui.widgets.shot_view import ShotView
from replay_tui.tui.widgets.text_pane import TextPane
from tests.conftest import DATA, good_episode, write_json
from tests.tui.conftest import SIZE, wait_replay

FORMATS = DATA / "formats"
TAU2 = FORMATS / "tau2" / "2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json"
SHAPES = FORMATS / "openai_chat" / "synthetic_shapes.jsonl"
AIRLINE = FORMATS / "openai_chat" / "tau_bench_gpt-4o-airline_excerpt.json"
CHECKBOXES = FORMATS / "browsergym" / "2025-01-22_11-03-29_GenericAgent-gpt-4o-mini_on_miniwob.click-checkboxes_20"


def squash(text: str) -> str:
    """Text without whitespace: what a pane shows, whatever its width wrapped."""
    return "".join(text.split())


def on_screen(pane: TextPane) -> str:
    """The rows the pane draws (its visible part only)."""
    return "\n".join(pane.render_line(y).text for y in range(pane.scrollable_content_region.height))


def pane(app, name: str) -> TextPane:
    return app.screen.query_one(f"#{name}", TextPane)


def assert_shown(app, name: str, text: str) -> None:
    shown = on_screen(pane(app, name))
    assert squash(text) in squash(shown), f"{text!r} not on screen in the {name} pane:\n{shown}"


def browser_rows(app) -> list[list[str]]:
    screen = app.screen
    assert isinstance(screen, BrowserScreen)
    return [[cell.plain for cell in screen.source.cells(i)] for i in range(len(screen.source))]


def header(app) -> list[str]:
    return [column.label for column in app.screen.source.columns]


def detail(app) -> str:
    return app.screen.query_one("#step-detail").render().plain


async def open_first(app, pilot, *keys: str) -> StepperScreen:
    await pilot.pause()
    await pilot.press("enter", *keys)
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, StepperScreen)
    return screen


# -- the browser --------------------------------------------------------------------------------


async def test_browser_shows_episode_ids_scores_and_outcomes_of_other_formats(build):
    app = build([str(AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert header(app) == ["#", "episode", "task", "turns", "calls", "score", "ok", "reason", "replay", "tags"]
        rows = browser_rows(app)
        assert [row[1] for row in rows[:3]] == ["task-0-trial-0", "task-1-trial-0", "task-12-trial-0"]
        assert rows[0][3] == rows[0][4] == "8" and rows[0][5] == "0.00" and rows[0][6] == "✗"  # a turn per call
        assert rows[2][5] == "1.00" and rows[2][6] == "✓"
        await pilot.press("slash", *"task-12", "enter")
        await pilot.pause()
        assert [row[1] for row in browser_rows(app)] == ["task-12-trial-0"]


async def test_mixed_formats_add_a_format_column_and_unknown_outcomes_stay_blank(build, tmp_path):
    write_json(tmp_path / "seed.json", [good_episode(500)])
    app = build([str(SHAPES), str(tmp_path / "seed.json")])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        labels = header(app)
        assert labels == [
            "#",
            "episode",
            "task",
            "turns",
            "calls",
            "score",
            "ok",
            "reason",
            "format",
            "backup",
            "replay",
            "tags",
        ]
        rows = {row[1]: row for row in browser_rows(app) if row[1]}
        assert rows["weather-1"][5] == "—" and rows["weather-1"][6] == "✓"  # success logged, no score
        assert rows["legacy-2"][5] == "0.50" and rows["legacy-2"][6] == ""  # a score, no outcome
        assert rows["weather-1"][8] == "openai-chat" and rows["500"][8] == "webshop-demos"
        await pilot.press("f")  # failures: only episodes known to have failed
        await pilot.pause()
        assert "weather-1" not in {row[1] for row in browser_rows(app)}
        await pilot.press("f", "s")  # sort by the episode id
        await pilot.pause()
        assert app.screen.sort_key == "episode"


async def test_seed_files_keep_the_seed_columns(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert header(app) == ["session", "instruction", "steps", "reward", "ok", "backup", "replay", "tags"]


# -- the stepper, one format at a time ----------------------------------------------------------


async def test_webshop_human_session_steps_through_its_pages(build):
    app = build([str(FORMATS / "webshop_human" / "20220427_1_12.jsonl")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_first(app, pilot)
        assert screen.general and pane(app, "action").display
        assert_shown(app, "action", "search[living room furniture]")
        assert_shown(app, "thinking", "no thinking recorded")  # a human's session: nobody thought aloud
        await pilot.press("j")
        assert_shown(app, "action", "click[Back to Search]")
        assert "Result" in detail(app)  # the page the step was taken on
        await pilot.press("o")  # the page after the action
        assert pane(app, "observation").border_title.startswith("observation after action")


async def test_inspect_ai_sample_shows_reasoning_tool_calls_and_results(build, tmp_path):
    log = json.loads((FORMATS / "inspect_ai" / "docent__tests_integration__ctf.json").read_text())
    first_call = next(e for e in log["samples"][0]["events"] if e["event"] == "model")
    first_call["output"]["choices"][0]["message"]["content"].insert(
        0, {"type": "reasoning", "reasoning": "The Received headers name the true origin server."}
    )
    path = tmp_path / "ctf.json"
    path.write_text(json.dumps(log))
    app = build([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await open_first(app, pilot)
        assert_shown(app, "thinking", "The Received headers name the true origin server.")
        assert_shown(app, "action", 'bash({"cmd":"cat email-export.eml"})')
        await pilot.press("j")
        assert_shown(app, "action", 'bash({"cmd":"whois onionmail.org"})')
        assert "whois: command not found" in pane(app, "action").text  # the tool's result
        assert "── tool" in pane(app, "prompt").text  # the previous call's result, in the messages
        await pilot.press("j")
        assert_shown(app, "action", "submit")


async def test_tau2_simulation_shows_messages_calls_and_json_results(build, tmp_path):
    results = json.loads(TAU2.read_text())
    call = next(
        m
        for m in results["simulations"][0]["messages"]
        if m["role"] == "assistant" and "get_customer_by_phone" in json.dumps(m.get("tool_calls"))
    )
    call["reasoning_content"] = "Look the customer up by phone first."
    path = tmp_path / "telecom.json"
    path.write_text(json.dumps(results))
    app = build([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_first(app, pilot)
        assert "message" in screen.source.cells(0)[2].plain  # step 0 answers the user: no call
        assert_shown(app, "action", "I'm happy to assist you")
        await pilot.press("j")
        assert_shown(app, "thinking", "Look the customer up by phone first.")
        assert_shown(app, "action", 'get_customer_by_phone({"phone_number":"555-123-2002"})')
        assert '  "customer_id": "C1001",' in pane(app, "action").text.splitlines()  # JSON indented
        assert_shown(app, "prompt", "Sure, my phone number is 555-123-2002.")  # the last message


async def test_swe_agent_trajectory_shows_thoughts_and_commands(build):
    app = build([str(FORMATS / "swe_agent" / "function_calling_simple.traj")])
    async with app.run_test(size=SIZE) as pilot:
        await open_first(app, pilot)
        assert_shown(app, "thinking", "The `SyntaxError` in `missing_colon.py` is likely due to a missing colon")
        assert_shown(app, "action", "find_file missing_colon.py")
        await pilot.press("j", "j")
        assert_shown(app, "thinking", "The issue is indeed caused by a missing colon")
        assert_shown(app, "action", "edit 'def division(a: float, b: float) -> float'")
        assert "── arguments of edit ──" in pane(app, "action").text  # long arguments, indented
        assert "log shows" in detail(app)  # the log's display differs from the canonical call


async def test_openai_chat_conversation_shows_reasoning_and_the_call(build):
    app = build([str(SHAPES)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("down")  # legacy-2: two calls, a score
        await pilot.press("enter")
        await pilot.pause()
        assert_shown(app, "thinking", "The user wants facts.")
        assert_shown(app, "action", 'lookup({"q":"llamas"})')
        await pilot.press("j")
        step = app.screen.source_step(app.screen.current_row())
        assert_shown(app, "action", step.action_text)


async def test_browsergym_screenshot_pane(build, tmp_path):
    folder = tmp_path / CHECKBOXES.name
    shutil.copytree(CHECKBOXES, folder)
    image = Image.new("RGB", (160, 120), (255, 255, 255))
    ImageDraw.Draw(image).rectangle((20, 20, 80, 60), fill=(200, 30, 30))
    image.save(folder / "screenshot_step_0.png")
    app = build([str(folder)], allow_pickle=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_first(app, pilot)
        shot = screen.query_one("#shot", ShotView)
        assert shot.display and shot.image is not None and shot.image.size == (160, 120)
        assert shot.border_title == "screenshot 160×120"
        assert shot.query_one(HalfBlockImage).image is shot.image
        assert shot.region.width > 0 and shot.region.height > 0
        assert_shown(app, "thinking", 'I need to select the checkboxes for "SQkB" and "ug"')
        assert_shown(app, "action", "click('18')")
        await pilot.press("j")  # no screenshot at step 1: the pane stays, empty
        assert shot.display and shot.image is None and "none at this step" in shot.border_title
        assert_shown(app, "action", "click('30')")
        await pilot.press("i")  # toggled off, then on again
        assert not shot.display
        await pilot.press("k", "i")
        assert shot.display and shot.image is not None
        await pilot.press("tab", "z")  # focus the screenshot, zoom it to the whole screen
        assert screen.maximized is shot
        await pilot.press("z")
        assert screen.maximized is None
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert any(row[3] == "stepper.screenshot" for row in app.screen.rows)


async def test_no_screenshot_pane_without_screenshots(build):
    app = build([str(CHECKBOXES)], allow_pickle=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_first(app, pilot)
        assert not screen.query_one("#shot", ShotView).display
        await pilot.press("i")  # nothing to toggle
        assert not screen.query_one("#shot", ShotView).display


async def test_log_text_is_never_markup_nor_terminal_control(build, tmp_path):
    hostile = [
        {"role": "user", "content": "[bold red]loud[/bold red] \x1b]0;pwned\x07title"},
        {
            "role": "assistant",
            "content": "[link=http://x]click[/link]",
            "reasoning_content": "think \x1b[2Jclear",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "run", "arguments": '{"cmd": "[b]x[/b]"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "\x1b[31mred[0m done"},
    ]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(hostile))
    app = build([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await open_first(app, pilot)
        assert_shown(app, "prompt", "[bold red]loud[/bold red] title")
        assert_shown(app, "thinking", "think clear")
        assert_shown(app, "action", 'run({"cmd":"[b]x[/b]"})')
        shown = "".join(on_screen(pane(app, name)) for name in ("prompt", "thinking", "action"))
        assert "\x1b" not in shown and "pwned" not in shown and "red[0m done" in shown


async def test_find_searches_the_action_pane(build):
    app = build([str(FORMATS / "swe_agent" / "function_calling_simple.traj")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_first(app, pilot)
        await pilot.press("ctrl+f", *"found 1 matches")  # in the tool result only
        await pilot.pause()
        assert screen.find_hits == [("action", 0)]
        assert pane(app, "action").current_match == 0
        assert "find: match 1/1 in action" in screen.query_one("#status").render().plain


# -- a replay in the app ------------------------------------------------------------------------


async def test_stub_replay_of_a_tool_calling_log_shows_verdicts(build):
    app = build([str(AIRLINE)], mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_first(app, pilot)
        await pilot.press("r")
        await wait_replay(app, pilot)
        verdicts = app.step_results[0]
        assert len(verdicts) == 8  # every recorded call judged
        assert all(v.match for v in verdicts.values())  # the stub replays each recorded call exactly
        marks = {screen.source.cells(i)[0].plain for i in range(len(screen.source))}
        assert "✓" in marks and not marks & {"✗", "≈"}
        assert "predicted" in detail(app) and "not replayed yet" not in detail(app)
        assert "replayed" in app.screen.query_one("#episode-title").render().plain
        await pilot.press("escape")
        await pilot.pause()
        assert browser_rows(app)[0][6] != "—"
