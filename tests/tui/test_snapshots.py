"""SVG snapshots of the main screens (pytest-textual-snapshot; Textual is pinned exactly).

Update after an intended change: ``python -m pytest tests/tui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import pytest

from tests.conftest import DATA, episode, good_episode, write_json
from tests.tui.conftest import SIZE, wait_replay


def test_browser(build, snap_compare):
    assert snap_compare(build(), terminal_size=SIZE)


def test_browser_after_replay_all_with_failures_filter(build, snap_compare):
    async def run_before(pilot):
        await pilot.press("R")
        await wait_replay(pilot.app, pilot)
        await pilot.press("f", "m")
        await pilot.pause()

    assert snap_compare(build(mode="heuristic"), terminal_size=SIZE, run_before=run_before)


def test_stepper_at_first_mismatch(build, snap_compare):
    async def run_before(pilot):
        await pilot.press("enter", "r")
        await wait_replay(pilot.app, pilot)
        await pilot.press("g", "right_square_bracket", "right_square_bracket")
        await pilot.pause()

    assert snap_compare(build(mode="heuristic", mismatch="allow"), terminal_size=SIZE, run_before=run_before)


def test_stepper_at_an_equivalent_step(build, snap_compare):
    """Session 3's search drops stop words: ≈ in the step list, the reason in the detail pane."""

    async def run_before(pilot):
        await pilot.press("down", "down", "down", "enter", "r")
        await wait_replay(pilot.app, pilot)
        await pilot.press("g")
        await pilot.pause()

    app = build(mode="heuristic", mismatch="allow", match=("Search=tolerant",))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_settings_modal_with_matching_policies(build, snap_compare):
    assert snap_compare(build(match=("Search=tolerant",)), terminal_size=SIZE, press=["p"])


def test_help(build, snap_compare):
    assert snap_compare(build(), terminal_size=SIZE, press=["question_mark"])


def test_export_modal(build, snap_compare):
    assert snap_compare(build(export_dir="reports"), terminal_size=SIZE, press=["e", "down"])


def test_problem_rows(build, snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative paths keep the snapshot free of temp directories
    write_json(tmp_path / "mixed.json", [good_episode(1), {"trajectory": []}, episode(3, "oops")])
    assert snap_compare(build(["mixed.json"]), terminal_size=SIZE)


def test_stepper_on_an_openai_chat_episode(build, snap_compare):
    """A log of another format: messages with tool calls, thinking, the action pane with the result."""

    async def run_before(pilot):
        await pilot.press("down", "enter", "j")
        await pilot.pause()

    app = build([str(DATA / "formats" / "openai_chat" / "synthetic_shapes.jsonl")])
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


SIZES = [(80, 24), (120, 40), (200, 60)]
"""A laptop terminal in tmux, a usual window, a wide screen (issue 16)."""


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_browser_at(build, snap_compare, size):
    """The instruction keeps its width; backup, tags and replay give way at 80 columns; ▶ marks the cursor."""
    assert snap_compare(build(), terminal_size=size, press=["down"])


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_stepper_at(build, snap_compare, size):
    """The step list sized to its content; at 80 columns the panes are tabs."""

    async def run_before(pilot):
        await pilot.press("enter", "r")
        await wait_replay(pilot.app, pilot)
        await pilot.press("right_square_bracket", "right_square_bracket")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(build(mode="heuristic", mismatch="allow"), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_policy_dialog_at(build, snap_compare, size):
    """The dialog's body scrolls; Apply and Cancel stay on screen."""
    assert snap_compare(build(match=("Search=tolerant",)), terminal_size=size, press=["p"])


def test_stepper_in_a_light_theme(build, snap_compare):
    """Panes and tables in the theme's colours (no terminal-default islands), readable titles."""

    async def run_before(pilot):
        pilot.app.theme = "textual-light"
        await pilot.press("enter", "r")
        await wait_replay(pilot.app, pilot)
        await pilot.press("right_square_bracket")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(build(mode="heuristic", mismatch="allow"), terminal_size=(120, 40), run_before=run_before)


def test_stepper_header_with_an_outcome(build, snap_compare):
    """A failed tau2 simulation: score, ✗ failed, the termination reason; below, the failed checks
    named with why, and the agent's last reply (issue 30)."""
    tau2 = DATA / "formats" / "tau2" / "2025-10-05T22-50-14.083933_airline_llm_agent_grok-3_user_simulator_grok-3.json"

    async def run_before(pilot):
        await pilot.press("f", "enter")
        await pilot.pause()

    assert snap_compare(build([str(tau2)]), terminal_size=SIZE, run_before=run_before)


def test_stepper_header_of_an_inspect_sample(build, snap_compare):
    """A failed multiple-choice sample of an inspect_ai log: score, ✗ failed; below, the scorer's
    failed check, the target, the model's answer and the scorer's explanation (issue 30)."""
    mmlu = DATA / "formats" / "inspect_ai" / "mmlu-summary-choices.eval"

    async def run_before(pilot):
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(build([str(mmlu)]), terminal_size=SIZE, run_before=run_before)


def test_outcome_screen_after_a_replay(build, snap_compare):
    """O on a failed tau2 simulation after r: the outcome whole above; expected vs actual below, with
    the replay's column and count (issue 30)."""
    tau2 = DATA / "formats" / "tau2" / "2025-10-05T22-50-14.083933_airline_llm_agent_grok-3_user_simulator_grok-3.json"

    async def run_before(pilot):
        await pilot.press("f", "down", "enter", "r")
        await wait_replay(pilot.app, pilot)
        await pilot.press("O")
        await pilot.pause()
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(build([str(tau2)]), terminal_size=SIZE, run_before=run_before)
