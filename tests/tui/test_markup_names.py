"""Untrusted text outside the panes (file names, event types) is shown as written, never as markup:
a demo file named ``x[@click=f("a].json`` crashed the app, ``z[@click=app.quit]Q.json`` put a
click-to-quit action in the status line."""

from __future__ import annotations

import json

import pytest
from textual.content import Content

from replay_tui.examples import example_path
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.widgets.text_pane import TextPane
from tests.tui.conftest import SIZE

EVENT_TYPE = "item[@click=app.quit]page[/]"


@pytest.mark.parametrize("name", ['x[@click=f("a].json', "z[@click=app.quit]Q.json", "[bold]b[reverse] \\[x].json"])
async def test_a_file_named_like_markup_opens_and_is_shown_literally(build, tmp_path, name):
    episodes = json.loads(example_path().read_text())[:3]
    for step in episodes[0]["trajectory"]:
        if step.get("type"):
            step["type"] = EVENT_TYPE
    path = tmp_path / name
    path.write_text(json.dumps(episodes))
    app = build([str(path)], annotations=tmp_path / (name + ".annotations.json"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert name in app.status_text()
        status = app.screen.query_one("#status")
        assert name in str(status.render())  # the literal name, brackets and all
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen)
        titles = set()
        for _ in range(12):
            await pilot.press("j")
            await pilot.pause()
            titles |= {Content.from_markup(pane.border_title or "").plain for pane in app.screen.query(TextPane)}
        assert any(EVENT_TYPE in title for title in titles), titles
        assert app.is_running
