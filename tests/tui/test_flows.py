"""Keyboard flows, driven like a user with Pilot: open, filter, sort, step, replay, triage, export."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from replay_tui.annotations import AnnotationStore
from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.screens.help import HelpScreen
from replay_tui.tui.widgets.text_pane import TextPane
from tests.conftest import episode, good_episode, search_step, write_json
from tests.tui.conftest import SIZE, wait_replay

SLOW_POLICY = """
import time

class Slow:
    def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None):
        time.sleep(0.05)
        return recorded_step["action_executed_in_env"]
"""


def browser_rows(app) -> list[list[str]]:
    screen = app.screen
    assert isinstance(screen, BrowserScreen)
    return [[cell.plain for cell in screen.source.cells(i)] for i in range(len(screen.source))]


async def test_opens_bundled_examples_in_the_browser(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        rows = browser_rows(app)
        assert len(rows) == 100
        assert [r[0] for r in rows[:3]] == ["0", "1", "2"]
        assert all(r[6] == "—" for r in rows)  # nothing replayed yet


async def test_filter_by_typing_and_clear_with_escape(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"volleyball")
        await pilot.pause()
        rows = browser_rows(app)
        assert rows and all("volleyball" in r[1] for r in rows)
        assert len(rows) < 100
        await pilot.press("escape")
        await pilot.pause()
        assert len(browser_rows(app)) == 100
        await pilot.press("slash", *"42", "enter")
        await pilot.pause()
        assert [r[0] for r in browser_rows(app) if r[0] == "42"] == ["42"]


async def test_toggles_failures_backup_and_sort(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        await pilot.pause()
        failures = browser_rows(app)
        assert failures and all(r[4] == "✗" for r in failures)
        await pilot.press("f", "b")
        await pilot.pause()
        assert all(r[5] == "backup" for r in browser_rows(app))
        await pilot.press("b", "s", "s", "s")  # session -> instruction -> steps -> reward
        await pilot.pause()
        rewards = [float(r[3]) for r in browser_rows(app)]
        assert rewards == sorted(rewards)
        await pilot.press("S")
        await pilot.pause()
        rewards = [float(r[3]) for r in browser_rows(app)]
        assert rewards == sorted(rewards, reverse=True)


async def test_step_through_an_episode(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen) and screen.session_id == 0
        table = screen.steps_table
        assert table.cursor == 0
        assert "Search" in screen.query_one("#step-detail").render().plain
        observation = screen.query_one("#observation", TextPane)
        assert "Instruction:" in observation.text
        await pilot.press("j", "j")
        assert table.cursor == 2
        await pilot.press("k")
        assert table.cursor == 1
        await pilot.press("G")
        assert table.cursor == len(screen.source) - 1
        await pilot.press("g")
        assert table.cursor == 0
        prompt = screen.query_one("#prompt", TextPane)
        assert prompt.text.startswith("── system ──")
        await pilot.press("h")  # hide sub-events
        assert all(not row.is_sub_event for row in screen.source.rows)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)


async def test_live_heuristic_replay_shows_mismatches_and_jumps_to_them(build):
    app = build(mode="heuristic", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("r")
        await wait_replay(app, pilot)
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        verdicts = app.step_results[0]
        assert verdicts and any(not v.match for v in verdicts.values())
        await pilot.press("g", "right_square_bracket")
        verdict = screen.source.verdict(screen.steps_table.cursor)
        assert verdict is not None and not verdict.match
        detail = screen.query_one("#step-detail").render().plain
        assert "✗ mismatch" in detail and "expected" in detail
        first = screen.steps_table.cursor
        await pilot.press("right_square_bracket")
        later = screen.steps_table.cursor
        await pilot.press("left_square_bracket")
        assert screen.steps_table.cursor == first and later >= first
        report = app.workspace.results[0]
        assert not report.matched
        await pilot.press("escape")
        await pilot.pause()
        assert browser_rows(app)[0][6].startswith("✗ step")


async def test_replay_all_from_browser_and_mismatch_filter(build):
    app = build(mode="heuristic")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await wait_replay(app, pilot)
        assert len(app.workspace.results) == 100
        rows = browser_rows(app)
        assert all(r[6] != "—" for r in rows)
        await pilot.press("m")
        await pilot.pause()
        mismatched = browser_rows(app)
        assert mismatched and all(r[6].startswith("✗") for r in mismatched)


async def test_escape_cancels_a_running_replay(build, tmp_path):
    policy = tmp_path / "slow.py"
    policy.write_text(SLOW_POLICY)
    app = build(policy=f"{policy}:Slow")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await pilot.pause(0.3)
        assert app.replaying
        await pilot.press("escape")
        await wait_replay(app, pilot)
        assert not app.replaying
        assert 0 < len(app.workspace.results) < 100


async def test_policy_settings_modal_by_keys(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("p")
        await pilot.pause()
        await pilot.press("down", "enter")  # heuristic in the policy radio set
        await pilot.press("tab", "tab", "tab", "tab", "down", "enter")  # spec, base URL, model, then mismatch: allow
        await pilot.press("ctrl+s")
        await pilot.pause()
        settings = app.workspace.settings
        assert settings.mode == "heuristic" and settings.mismatch == "allow"


async def test_tag_and_note_persist_and_reload(build, tmp_path):
    sidecar = tmp_path / "notes.annotations.json"
    app = build(mode="heuristic")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("r")
        await wait_replay(app, pilot)
        await pilot.press("t")
        await pilot.pause()
        await pilot.press("1", "enter")  # policy-bug on step 0 (enter saves)
        await pilot.pause()
        await pilot.press("T", "3", "enter")  # normalization on the episode
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"keywords dropped", "ctrl+s")
        await pilot.pause()
    saved = AnnotationStore.load(sidecar)
    assert saved.get(0, "0").tags == ["policy-bug"]
    assert saved.get(0, "0").note == "keywords dropped"
    assert saved.get(0, None).tags == ["normalization"]

    again = build(mode="heuristic")
    async with again.run_test(size=SIZE) as pilot:
        await pilot.press("a")  # tagged only
        await pilot.pause()
        rows = browser_rows(again)
        assert [r[0] for r in rows] == ["0"]
        assert rows[0][7] == "policy-bug normalization"
        await pilot.press("t", "1", "enter")  # toggle policy-bug on the episode too
        await pilot.pause()
    assert AnnotationStore.load(sidecar).get(0, None).tags == ["normalization", "policy-bug"]


@pytest.mark.parametrize(("downs", "suffix"), [(0, ".json"), (1, ".md"), (2, ".csv"), (3, ".html"), (4, ".xml")])
async def test_export_each_format_from_the_modal(build, tmp_path, downs, suffix):
    app = build(mode="heuristic")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"volleyball", "enter", "R")
        await wait_replay(app, pilot)
        await pilot.press("t", "1", "enter")
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("home", *["down"] * downs, "enter")
        await pilot.pause()
    path = tmp_path / f"replay-report{suffix}"
    assert path.exists(), list(tmp_path.iterdir())
    text = path.read_text(encoding="utf-8")
    replayed = len(app.workspace.results)
    assert replayed >= 1
    if suffix == ".json":
        data = json.loads(text)
        assert data["episodes_run"] == replayed and data["annotations"]
    elif suffix == ".md":
        assert "policy-bug" in text and "expected" in text.lower()
    elif suffix == ".csv":
        rows = list(csv.reader(text.splitlines()))
        assert len(rows) >= replayed + 1
    elif suffix == ".html":
        assert text.lstrip().lower().startswith("<!doctype html") and "policy-bug" in text
    else:
        root = ET.fromstring(text)
        assert len(root.findall(".//testcase")) >= replayed
        assert root.findall(".//failure")


async def test_export_matches_the_cli_for_the_same_run(build, tmp_path):
    from replay_tui.cli import main

    app = build(mode="heuristic")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("R")
        await wait_replay(app, pilot)
        await pilot.press("e", "home", "down", "enter")  # Markdown
        await pilot.pause()
    cli_report = tmp_path / "cli.md"
    assert main(["replay", "--mode", "heuristic", "--report", str(cli_report), "-q"]) == 1
    assert (tmp_path / "replay-report.md").read_text() == cli_report.read_text()


async def test_problem_rows_and_a_bad_episode_do_not_crash(build, tmp_path):
    path = write_json(
        tmp_path / "mixed.json",
        [
            good_episode(1),
            {"instruction": "no id", "trajectory": []},
            good_episode(2),
            episode(3, [search_step(0, llm_action_arguments=[1])]),
        ],
    )
    app = build([path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        rows = browser_rows(app)
        assert [r[0] for r in rows] == ["1", "2", "3", "#1"]
        assert rows[-1][6] == "problem" and "session_id" in rows[-1][1]
        await pilot.press("G", "enter")  # a problem row: shows a notification, stays
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("k", "enter")  # session 3 is malformed deep inside
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen) and screen.problem is not None
        assert "trajectory[0].llm_action_arguments" in screen.query_one("#step-detail").render().plain
        await pilot.press("escape")
        await pilot.pause()
        assert browser_rows(app)[2][6] == "problem"


async def test_find_in_panes_highlights_and_cycles(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("ctrl+f", *"volleyball")
        await pilot.pause()
        screen = app.screen
        hits = len(screen.find_hits)
        assert hits >= 3  # observation, prompt and thinking all mention it
        assert screen.find_index == 0
        await pilot.press("enter")
        assert screen.find_index == 1
        await pilot.press("up")
        assert screen.find_index == 0
        assert "match 1/" in screen.query_one("#status").render().plain
        await pilot.press("escape")
        await pilot.pause()
        assert not screen.find_hits and not screen.query_one("#find").display


async def test_zoom_and_tab_cycle_panes(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("tab")
        assert app.focused.id == "observation"
        await pilot.press("tab", "tab")
        assert app.focused.id == "thinking"
        await pilot.press("z")
        assert app.screen.maximized is app.focused
        await pilot.press("z")
        assert app.screen.maximized is None


async def test_help_lists_binding_ids(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        ids = {row[3]: row for row in app.screen.rows}
        assert ids["browser.replay_all"][1] == "R" and ids["app.export"][2] == "Export"
        assert "browser.replay_all" in app.export_screenshot()
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)


async def test_markup_and_escape_sequences_are_shown_literally(build, tmp_path):
    ep = good_episode(1)
    ep["instruction"] = "[bold red]boom[/] \x1b[31mred\x1b]0;title\x07"
    ep["trajectory"][0]["observation_before_llm"] = "[link=http://x]click[/link]\x1b[2J after"
    app = build([write_json(tmp_path / "x.json", [ep])])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert browser_rows(app)[0][1] == "[bold red]boom[/] red"
        await pilot.press("enter")
        await pilot.pause()
        pane = app.screen.query_one("#observation", TextPane)
        assert pane.text == "[link=http://x]click[/link] after"
        svg = app.export_screenshot()
        assert "[bold red]boom[/]" in svg.replace("&#160;", " ")


async def test_a_200kb_observation_scrolls(build, tmp_path):
    ep = good_episode(1)
    big = "\n".join(f"line {i} " + "lorem ipsum " * 15 for i in range(1200))
    assert len(big) > 200_000
    ep["trajectory"][0]["observation_before_llm"] = big
    app = build([write_json(tmp_path / "big.json", [ep])])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("tab", "end")
        await pilot.pause()
        pane = app.screen.query_one("#observation", TextPane)
        assert pane.scroll_offset.y > 1000
        await pilot.press("ctrl+f", *"line 1199 ")
        await pilot.pause()
        assert len(app.screen.find_hits) == 1


async def test_100k_episodes_open_and_navigate(build, tmp_path):
    path = tmp_path / "many.jsonl"
    line = '{"session_id": %d, "instruction": "item %d", "trajectory": [], "final_reward": %r, "success": %s}\n'
    # json.dumps's bytes for each record, formatted (100,000 json.dumps calls were a fifth of the test's CPU)
    path.write_text("".join(line % (sid, sid, (sid % 4) / 4, "false" if sid % 4 else "true") for sid in range(100_000)))
    app = build([path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert len(app.screen.source) == 100_000
        await pilot.press("G")
        assert app.screen.current_session() == 99_999
        await pilot.press("slash", *"9999", "enter")
        await pilot.pause()
        assert {r[0] for r in browser_rows(app)} >= {"9999", "99999"}


async def test_command_palette_lists_actions(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Replay all" in titles and "Export" in titles and "Filter" in titles


async def test_keymap_from_config_remaps_a_binding(build, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('labels = ["flaky"]\n[keymap]\n"browser.replay_all" = "x"\n')
    app = build(mode="heuristic", config=config)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("x")
        await wait_replay(app, pilot)
        assert len(app.workspace.results) == 100
        assert app.workspace.annotations.labels[0] == "flaky"


def test_export_dir_default_is_cwd(build, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = build(export_dir=None)
    assert app.export_dir == Path.cwd()


async def test_acceptance_flow_keys_only(build, tmp_path):
    """Find a failed episode, replay it with the heuristic, jump to its first mismatch, tag it, export
    Markdown — using only keys, from the default (stub) start."""
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")  # failures only
        await pilot.pause()
        failed = browser_rows(app)[0]
        assert failed[4] == "✗"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        await pilot.press("down", "enter", "ctrl+s")  # heuristic
        await pilot.pause()
        assert app.workspace.settings.mode == "heuristic"
        await pilot.press("r")
        await wait_replay(app, pilot)
        await pilot.press("g", "right_square_bracket")
        screen = app.screen
        row = screen.current_row()
        verdict = screen.source.verdict(screen.steps_table.cursor)
        if verdict is None or verdict.match:  # the first step itself mismatched
            await pilot.press("g")
            row = screen.current_row()
        first_bad = min(label for label, v in app.step_results[int(failed[0])].items() if not v.match)
        assert row.label == first_bad
        await pilot.press("t", "1", "enter")
        await pilot.pause()
        await pilot.press("e", "home", "down", "enter")
        await pilot.pause()
    report = (tmp_path / "replay-report.md").read_text()
    assert f"| {failed[0]} |" in report or f"session {failed[0]}" in report
    assert "policy-bug" in report


async def test_truncated_file_keeps_its_complete_episodes_and_shows_the_error(build, tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps([good_episode(1), good_episode(2), good_episode(3)])[:-300])
    app = build([path])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        rows = browser_rows(app)
        assert [r[0] for r in rows] == ["1", "2", "file"]
        assert "truncated" in rows[-1][1]


async def test_enter_on_a_step_keeps_the_panes_where_they_are(build):
    """Selecting a step (enter) is not a new highlight: the panes keep their scroll position."""
    from replay_tui.tui.replay.stepper import StepperScreen
    from replay_tui.tui.widgets.text_pane import TextPane

    app = build()
    async with app.run_test(size=(130, 36)) as pilot:
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        pane = next(p for p in screen.query(TextPane).results() if p.virtual_size.height > p.size.height)
        pane.scroll_to(y=3, animate=False, immediate=True)
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert pane.scroll_offset.y == 3


async def test_find_follows_the_step_that_is_shown(build):
    """With the find bar open, moving to another step re-counts the hits in the new panes."""
    from replay_tui.tui.widgets.text_pane import TextPane

    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("ctrl+f", *"the")
        await pilot.pause()
        screen = app.screen
        screen.steps_table.focus()
        await pilot.press("j")
        await pilot.pause()
        expected = sum(pane.text.lower().count("the") for pane in screen.query(TextPane).results())
        assert screen.steps_table.cursor == 1
        assert expected > 0 and len(screen.find_hits) == expected


async def test_export_asks_before_overwriting_and_never_replaces_the_log(build, tmp_path):
    import shutil

    from replay_tui.examples import example_path
    from replay_tui.tui.screens.modals import ExportModal

    demo = shutil.copy(example_path(), tmp_path / "webshop_demonstrations_0-99.json")
    app = build([str(demo)], mode="heuristic")
    existing = tmp_path / "replay-report.md"
    existing.write_text("an older report")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"volleyball", "enter", "R")
        await wait_replay(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("home", "down", "enter")  # Markdown, onto the existing file
        await pilot.pause()
        assert isinstance(app.screen, ExportModal) and existing.read_text() == "an older report"
        await pilot.press("enter")  # the second enter on the same path overwrites
        await pilot.pause()
        assert not isinstance(app.screen, ExportModal)
        assert existing.read_text().startswith("#")
        before = demo.read_bytes()
        await pilot.press("e")
        await pilot.pause()
        from textual.widgets import Input

        path_input = app.screen.query_one("#export-path", Input)
        path_input.value = str(demo)
        path_input.focus()
        await pilot.press("enter", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ExportModal)  # refused, twice
        assert demo.read_bytes() == before


async def test_steps_after_a_stop_say_why_they_were_not_replayed(build):
    app = build(mode="heuristic", mismatch="stop")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "r")  # session 0: the heuristic's search differs at step 0
        await wait_replay(app, pilot)
        report = app.workspace.results[0]
        assert report.stopped_early and report.first_mismatch_step == "0"
        await pilot.press("j")
        await pilot.pause()
        text = app.screen.query_one("#step-detail").render().plain
        assert "not reached: the replay stopped at the first mismatch (step 0)" in text
        assert "not replayed yet" not in text


async def test_a_new_sort_shows_the_list_from_its_start_with_the_selection_visible(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        browser = app.screen
        table = browser.table
        await pilot.press("G")  # the last row: the list is scrolled down
        await pilot.pause()
        selected = browser.current_session()
        assert table.scroll_offset.y > 0
        for key in ("s", "s", "S"):
            await pilot.press(key)
            await pilot.pause()
            index = browser.source.index_of(selected)
            body = len(table.visible_rows())
            assert table.cursor == index
            assert round(table.scroll_offset.y) == max(0, index - body + 1), (key, index, body)
