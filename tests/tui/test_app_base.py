"""What every app shares (tui/app_base.py): styled help dialog, readable command palette, esc and q;
and the replay screens' contract with the App: messages up, a read-only ReplayState down."""

from __future__ import annotations

import ast
from pathlib import Path

from textual import on
from textual.app import App
from textual.command import CommandList, CommandPalette

import replay_tui.tui.screens as screens_package
from replay_tui.tui.app_base import AppBase, ToolApp
from replay_tui.tui.messages import (
    EpisodeOpenRequested,
    NoteRequested,
    ReplayCancelRequested,
    ReplayRequested,
    StatusRefreshRequested,
    TagRequested,
)
from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.screens.help import HelpScreen
from replay_tui.tui.verify.app import VerifyApp, VerifyScreen
from tests.tui.conftest import SIZE
from tests.tui.test_verify_app import make_report


async def help_dialog_style(app: App, pilot) -> tuple[object, object, object]:
    await pilot.pause()
    await pilot.press("question_mark")
    await pilot.pause()
    assert isinstance(app.screen, HelpScreen)
    dialog = app.screen.query_one(".help-dialog")
    return dialog.region, dialog.styles.border, dialog.styles.background


async def test_verify_help_is_the_same_bordered_dialog_as_the_main_apps(build):
    main = build()
    async with main.run_test(size=SIZE) as pilot:
        expected = await help_dialog_style(main, pilot)
    report, tasks = make_report()
    verify = VerifyApp(report, tasks)
    async with verify.run_test(size=SIZE) as pilot:
        got = await help_dialog_style(verify, pilot)
    region, border, _ = got
    assert got == expected
    assert region != (0, 0, *SIZE) and region.width < SIZE[0] and region.height < SIZE[1]  # a dialog, not a page
    assert border.top[0] == "thick"


async def test_help_header_keeps_its_brackets(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        screen_text = app.export_screenshot().replace("&#160;", " ")
        assert "binding id (remap in config.toml [keymap])" in screen_text


async def test_command_palette_shows_descriptions_and_readable_keys(build):
    app = build()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        commands = {command.title: command.help for command in app.get_system_commands(app.screen)}
        assert commands["Backup"] == "press b"
        assert commands["Help"] == "press ? or f1"
        assert commands["Replay all"] == "press R"
        assert commands["Cancel replay"] == "press ^x"
        for title, help_text in commands.items():
            assert "question_mark" not in help_text and "browser." not in help_text and "app." not in help_text, title
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"backup")
        await pilot.pause(0.5)
        listed = app.screen.query_one(CommandList)
        prompts = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]
        assert "Backup\npress b" in prompts


async def test_command_palette_follows_the_keymap(build, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[keymap]\n"browser.replay_all" = "x"\n"app.help" = "f2"\n')
    app = build(config=config)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        commands = {command.title: command.help for command in app.get_system_commands(app.screen)}
        assert commands["Replay all"] == "press x" and commands["Help"] == "press f2"
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = {row[3]: row for row in app.screen.rows}
        assert rows["browser.replay_all"][1] == "x" and rows["app.help"][1] == "f2"


async def test_verify_escape_goes_back_and_q_quits():
    report, tasks = make_report()
    app = VerifyApp(report, tasks)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")  # at the root: nothing to go back to, and no quitting
        await pilot.pause()
        assert isinstance(app.screen, VerifyScreen) and app.is_running and app.return_code is None
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")  # closes the dialog
        await pilot.pause()
        assert isinstance(app.screen, VerifyScreen) and app.return_code is None
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0


def test_every_tool_app_shares_the_base():
    from replay_tui.tui.app import ReplayApp
    from replay_tui.tui.visual.batch import VisualBatchApp
    from replay_tui.tui.visual.inspector import InspectorApp

    assert issubclass(ReplayApp, AppBase)
    for tool in (InspectorApp, VisualBatchApp, VerifyApp):
        assert issubclass(tool, ToolApp)
    for app in (ReplayApp, InspectorApp, VisualBatchApp, VerifyApp):
        assert not app.__dict__.get("CSS"), app  # styles live in tui/styles/*.tcss
        paths = app.CSS_PATH if isinstance(app.CSS_PATH, list) else [app.CSS_PATH]
        assert Path(paths[0]).name == "base.tcss" and all(Path(p).is_file() for p in paths)


def test_no_screen_module_imports_the_app():
    """The screens post messages and read a ReplayState; tui/app.py is never imported, even for types."""
    for path in sorted(Path(screens_package.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert name not in ("replay_tui.tui.app", "replay_tui.tui.app_base"), f"{path.name} imports {name}"


class _FakeState:
    """A ReplayState that is not the App: what the screens read, nothing to call."""

    def __init__(self, workspace, replaying: bool = False):
        self.workspace = workspace
        self.step_results: dict = {}
        self.replaying = replaying


class _Harness(App[None]):
    """Hosts a replay screen and records the requests it posts."""

    def __init__(self, make_screen):
        super().__init__()
        self.make_screen = make_screen
        self.requests: list[object] = []

    def on_mount(self) -> None:
        self.push_screen(self.make_screen())

    @on(EpisodeOpenRequested)
    @on(ReplayRequested)
    @on(ReplayCancelRequested)
    @on(TagRequested)
    @on(NoteRequested)
    @on(StatusRefreshRequested)
    def _record(self, message) -> None:
        self.requests.append(message)


def _kinds(app: _Harness) -> list[type]:
    return [type(m) for m in app.requests if not isinstance(m, StatusRefreshRequested)]


async def test_browser_asks_the_app_with_messages(build):
    workspace = build().workspace
    app = _Harness(lambda: BrowserScreen(_FakeState(workspace)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert any(isinstance(m, StatusRefreshRequested) for m in app.requests)
        await pilot.press("R", "t", "n", "r", "enter")
        await pilot.pause()
        assert _kinds(app) == [ReplayRequested, TagRequested, NoteRequested, EpisodeOpenRequested, EpisodeOpenRequested]
        replay_all, tag, note, replay_one, open_one = app.requests[-5:]
        assert replay_all.session_ids == list(range(100))
        assert (tag.session_id, tag.step_label) == (0, None) and note.session_id == 0
        assert (replay_one.session_id, replay_one.replay) == (0, True)
        assert (open_one.session_id, open_one.replay) == (0, False)


async def test_stepper_asks_the_app_with_messages(build):
    workspace = build().workspace
    state = _FakeState(workspace)
    app = _Harness(lambda: StepperScreen(0, state))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("r", "t", "T", "n", "N")
        await pilot.pause()
        assert _kinds(app) == [ReplayRequested, TagRequested, TagRequested, NoteRequested, NoteRequested]
        replay, tag_step, tag_episode, note_step, note_episode = app.requests[-5:]
        assert replay.session_ids == [0]
        assert tag_step.step_label == "0" and tag_episode.step_label is None
        assert note_step.step_label == "0" and note_episode.step_label is None
        state.replaying = True
        await pilot.press("escape")  # while replaying, esc cancels instead of going back
        await pilot.pause()
        assert isinstance(app.requests[-1], ReplayCancelRequested) and isinstance(app.screen, StepperScreen)
