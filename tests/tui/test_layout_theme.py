"""Themes: one chosen with ctrl+p → theme is written to the config file (the rest of it kept as
written) and the next start uses it; a theme the config names but Textual lacks is a warning."""

from __future__ import annotations

import tomllib

import pytest

from replay_tui.config import ConfigError, default_config_path, load_config, save_theme

CONFIG = """# my labels
labels = ["policy-bug", "flaky"]

[keymap]
"stepper.next_mismatch" = "n"
"""


async def choose_theme(pilot, name: str) -> None:
    await pilot.press("ctrl+p", *"theme")
    await pilot.pause(0.3)
    await pilot.press("enter")
    await pilot.pause(0.3)
    await pilot.press(*name)
    await pilot.pause(0.3)
    await pilot.press("enter")
    await pilot.pause()


async def test_a_theme_chosen_in_the_palette_is_remembered(build):
    path = default_config_path()  # the tests' own XDG_CONFIG_HOME
    path.parent.mkdir(parents=True)
    path.write_text(CONFIG, encoding="utf-8")
    app = build()
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.theme == "textual-dark"
        await choose_theme(pilot, "textual-light")
        assert app.theme == "textual-light"
    text = path.read_text(encoding="utf-8")
    assert text.startswith('theme = "textual-light"\n# my labels\n')  # comments and tables kept
    assert tomllib.loads(text)["keymap"] == {"stepper.next_mismatch": "n"}
    assert load_config().theme == "textual-light"
    again = build()
    async with again.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert again.theme == "textual-light"
        await choose_theme(pilot, "nord")
    assert tomllib.loads(path.read_text(encoding="utf-8"))["theme"] == "nord"
    assert path.read_text(encoding="utf-8").count("theme =") == 1


async def test_an_unknown_theme_in_the_config_is_a_warning(build):
    path = default_config_path()
    path.parent.mkdir(parents=True)
    path.write_text('theme = "no-such-theme"\n', encoding="utf-8")
    app = build()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.theme == "textual-dark"
        assert any("no-such-theme" in str(n.message) for n in app._notifications)


def test_save_theme_replaces_only_the_top_level_theme(tmp_path):
    path = tmp_path / "config.toml"
    save_theme(path, "gruvbox")  # no file yet: one line
    assert path.read_text(encoding="utf-8") == 'theme = "gruvbox"\n'
    path.write_text('labels = ["a"]\ntheme = "nord"\n[match]\ntheme = "x"\n', encoding="utf-8")
    save_theme(path, "textual-light")
    assert path.read_text(encoding="utf-8") == 'labels = ["a"]\ntheme = "textual-light"\n[match]\ntheme = "x"\n'


def test_save_theme_refuses_a_file_it_cannot_read(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("labels = [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        save_theme(path, "nord")
    assert path.read_text(encoding="utf-8") == "labels = [\n"


async def test_the_tools_the_cli_opens_start_in_the_config_theme_and_remember_a_choice(tmp_path):
    """verify --tui, inspect and visual --tui open apps of their own: the config's theme too."""
    from replay_tui.cli.visual import inspect_app
    from replay_tui.tui.verify.app import VerifyApp
    from tests.tui.test_verify_app import make_report

    path = default_config_path()
    path.parent.mkdir(parents=True)
    path.write_text('theme = "nord"\n', encoding="utf-8")
    report, tasks = make_report()
    app = VerifyApp(report, tasks).theme_from_config()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.theme == "nord"
        await choose_theme(pilot, "textual-light")
    assert load_config().theme == "textual-light"
    page = tmp_path / "page.html"
    page.write_text("<p>hi</p>", encoding="utf-8")
    inspector = inspect_app([str(page), str(page)], None)
    assert inspector.theme_config == path and inspector._config_theme == "textual-light"
    path.write_text("labels = [\n", encoding="utf-8")  # unreadable: the tool keeps its default theme
    assert VerifyApp(report, tasks).theme_from_config().theme_config is None
