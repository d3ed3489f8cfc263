"""Two agents' own runs of the same tasks in the app (``compare LOG_A LOG_B --tui``), driven by keys:
filter the regressions, open one, ``]`` lands on its first divergent call, export lists exactly the
regressions. Expected values come from the raw tau2 files, not from the comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay_tui.compare import compare_outcomes
from replay_tui.pairing import load_pair
from replay_tui.tui.compare.app import CompareApp
from replay_tui.tui.compare.logs import LogCompareScreen, LogPairScreen, RegressionGroupsModal
from replay_tui.tui.compare.screen import CompareExportModal
from replay_tui.tui.widgets.lazy_table import LazyTable
from tests.tui.conftest import SIZE

PAIRS = Path(__file__).parents[1] / "data" / "compare_pairs" / "tau2"


def pair_files(n: int) -> tuple[Path, Path]:
    (a,) = PAIRS.glob(f"pair{n}_A__*.json")
    (b,) = PAIRS.glob(f"pair{n}_B__*.json")
    return a, b


def raw(path: Path) -> dict[str, dict[str, Any]]:
    data = json.loads(path.read_text())
    return {f"{s['task_id']}#{s['trial']}": s for s in data["simulations"]}


def assistant_calls(simulation: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (call["name"], call["arguments"])
        for message in simulation["messages"]
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
    ]


def app_for(n: int, export_dir: Path) -> tuple[CompareApp, dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    a_path, b_path = pair_files(n)
    comparison = compare_outcomes(load_pair([str(a_path), str(b_path)]))
    return CompareApp(comparison, export_dir=export_dir), raw(a_path), raw(b_path)


def shown_keys(screen: LogCompareScreen) -> list[str]:
    return [task.key for task in screen.source.rows]


async def test_filter_open_divergence_and_export_regressions(tmp_path: Path) -> None:
    app, a, b = app_for(1, tmp_path)
    paired = [key for key in a if key in b]
    regressed = [k for k in paired if a[k]["reward_info"]["reward"] >= 1 and b[k]["reward_info"]["reward"] < 1]
    fixed = [k for k in paired if b[k]["reward_info"]["reward"] >= 1 and a[k]["reward_info"]["reward"] < 1]
    assert regressed and fixed  # the pair has both: the filters are tested on real differences
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LogCompareScreen)
        assert sorted(shown_keys(screen)) == sorted(paired)
        await pilot.press("f")  # all → regressions
        assert sorted(shown_keys(screen)) == sorted(regressed)
        title = str(screen.query_one("#logcmp-title").render())
        assert f"{len(regressed)} regressed" in title and "filter: regressions" in title
        await pilot.press("f")  # → fixes
        assert sorted(shown_keys(screen)) == sorted(fixed)
        await pilot.press("f", "f")  # → both failed differently → all
        assert sorted(shown_keys(screen)) == sorted(paired)
        await pilot.press("minus")  # the regressions again, by their own key
        assert sorted(shown_keys(screen)) == sorted(regressed)

        await pilot.press("enter")
        await pilot.pause()
        pair = app.screen
        assert isinstance(pair, LogPairScreen)
        key = pair.pair.key
        ours, theirs = assistant_calls(a[key]), assistant_calls(b[key])
        first = next(
            (i for i, (x, y) in enumerate(zip(ours, theirs, strict=False)) if x != y), min(len(ours), len(theirs))
        )
        await pilot.press("right_square_bracket")
        rows = pair.query_one("#pair-rows", LazyTable)
        row = pair.pair.rows[rows.cursor]
        # the first divergent row is past the calls both runs made alike (the common prefix, from the raw files)
        assert rows.cursor == first
        assert row.kind != "same"
        if row.a is not None:
            assert (pair.pair.a_calls[row.a].name, pair.pair.a_calls[row.a].arguments) == (
                ours[row.a][0],
                ours[row.a][1],
            )
        where = str(pair.query_one("#pair-where").render())
        assert "first divergence" in where
        side = "\n".join(line.text for line in pair.query_one("#pair-a")._lines) if row.a is not None else ""
        if row.a is not None:
            assert ours[row.a][0] in side  # A's pane shows the call made at that row
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen

        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, CompareExportModal)
        await pilot.press("enter")
        await pilot.pause()
        markdown = (tmp_path / "compare-report.md").read_text()
        lines = markdown.splitlines()
        start = lines.index(f"### Regressions ({len(regressed)})")
        listed = [line.split("|")[1].strip().strip("`") for line in lines[start + 1 :] if line.startswith("| `")]
        assert sorted(listed) == sorted(regressed)


async def test_regression_groups_sum_to_the_regressions_and_filter_the_list(tmp_path: Path) -> None:
    app, a, b = app_for(1, tmp_path)
    regressed = {k for k in a if k in b and a[k]["reward_info"]["reward"] >= 1 > b[k]["reward_info"]["reward"]}
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("M")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, RegressionGroupsModal)
        by_tool = [keys for name, keys in modal.groups if name.startswith("first divergence at ")]
        by_status = [keys for name, keys in modal.groups if name.startswith("B ended: ")]
        assert sum(len(keys) for keys in by_tool) == len(regressed) == sum(len(keys) for keys in by_status)
        assert set().union(*by_tool) == regressed
        await pilot.press("enter")  # the largest group
        await pilot.pause()
        assert app.screen is screen
        assert set(shown_keys(screen)) == modal.groups[0][1]
        await pilot.press("M")  # again: the whole list back
        assert len(shown_keys(screen)) == len([k for k in a if k in b])


def test_cli_tui_flag_refuses_more_than_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from replay_tui.cli import main

    reports = []
    for name in ("a", "b", "c"):
        report = tmp_path / f"{name}.json"
        assert main(["replay", "--mode", "stub", "--report", str(report), "--report-steps", "-q"]) in (0, 1)
        reports.append(str(report))
    assert main(["compare", *reports, "--tui"]) == 2
    assert "--tui opens two runs" in capsys.readouterr().err


def test_log_compare_snapshot(snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).parents[2]
    monkeypatch.chdir(root)  # the title names the logs as given: relative, the same in every clone
    a_path, b_path = (path.relative_to(root) for path in pair_files(2))
    app = CompareApp(compare_outcomes(load_pair([str(a_path), str(b_path)])), export_dir=tmp_path)
    assert snap_compare(app, terminal_size=SIZE, press=["enter", "right_square_bracket"])


def agent_checks(simulation: dict[str, Any]) -> list[tuple[str, bool]]:
    """tau2's own verdict on the agent's reference actions of a simulation: (tool, matched)."""
    checks = simulation["reward_info"].get("action_checks") or []
    return [(c["action"]["name"], c["action_match"]) for c in checks if c["action"]["requestor"] != "user"]


async def test_which_run_hit_which_reference_action_in_the_pair_and_the_groups(tmp_path: Path) -> None:
    app, a, b = app_for(1, tmp_path)
    regressed = [k for k in a if k in b and a[k]["reward_info"]["reward"] >= 1 > b[k]["reward_info"]["reward"]]
    lost: dict[str, str | None] = {}
    for key in regressed:
        pairs = zip(agent_checks(a[key]), agent_checks(b[key]), strict=True)
        lost[key] = next((name for (name, x), (_, y) in pairs if x and not y), None)
    assert any(lost.values())  # some regression lost a reference action A had hit: the groups are not vacuous
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("M")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, RegressionGroupsModal)
        groups = {name: keys for name, keys in modal.groups}
        want: dict[str, set[str]] = {}
        for key, name in lost.items():
            label = f"B missed reference action {name}" if name else "B hit every reference action A hit"
            want.setdefault(label, set()).add(key)
        assert {name: keys for name, keys in groups.items() if name.startswith("B ") and "ended" not in name} == want
        await pilot.press("escape")
        await pilot.press("minus", "enter")
        await pilot.pause()
        pair = app.screen
        assert isinstance(pair, LogPairScreen)
        ours, theirs = agent_checks(a[pair.pair.key]), agent_checks(b[pair.pair.key])
        title = str(pair.query_one("#pair-title").render())
        total = len(ours)
        hit_a, hit_b = sum(x for _, x in ours), sum(y for _, y in theirs)
        assert f"reference actions hit: A {hit_a}/{total}  B {hit_b}/{total}" in title
        for name, _ in (pair_ for pair_, (_, y) in zip(ours, theirs, strict=True) if pair_[1] and not y):
            assert name in title.split("A only:")[1]
    assert screen is not None


def conversation_texts(simulation: dict[str, Any]) -> list[tuple[str, str]]:
    """The user's and the agent's words of a simulation as tau2 wrote them (tool messages and calls aside)."""
    return [
        (message["role"], message["content"].strip())
        for message in simulation["messages"]
        if message.get("role") in ("user", "assistant") and (message.get("content") or "").strip()
    ]


async def test_m_shows_both_runs_messages_aligned_by_role_between_the_calls(tmp_path: Path) -> None:
    app, a, b = app_for(2, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        pair = app.screen
        assert isinstance(pair, LogPairScreen)
        key = pair.pair.key
        table = pair.query_one("#pair-rows", LazyTable)
        calls_only = len(table.source)
        assert calls_only == len(pair.pair.rows)
        await pilot.press("m")
        await pilot.pause()
        shown = pair.source.rows
        a_conv, b_conv = pair.pair.conversations
        # every message each run's file holds, in the file's order, on its side of the rows
        a_words = [
            (a_conv.said[r.a].role, a_conv.said[r.a].text) for r in shown if r.call_row is None and r.a is not None
        ]
        b_words = [
            (b_conv.said[r.b].role, b_conv.said[r.b].text) for r in shown if r.call_row is None and r.b is not None
        ]
        assert a_words == conversation_texts(a[key])
        assert b_words == conversation_texts(b[key])
        assert all(
            a_conv.said[r.a].role == b_conv.said[r.b].role
            for r in shown
            if r.call_row is None and r.a is not None and r.b is not None
        )
        assert len(table.source) == calls_only + sum(1 for r in shown if r.call_row is None)
        await pilot.press("home")
        await pilot.pause()
        where = str(pair.query_one("#pair-where").render())
        assert "message" in where
        side = "\n".join(line.text for line in pair.query_one("#pair-a")._lines)
        assert a_words[0][1].splitlines()[0][:40] in side
        await pilot.press("right_square_bracket")  # still lands on the first divergent call
        assert pair.pair.divergence is not None
        assert shown[table.cursor].call_row == pair.pair.divergence.row
        assert "first divergence" in str(pair.query_one("#pair-where").render())
        await pilot.press("m")  # the calls alone again, on the same call
        await pilot.pause()
        assert len(table.source) == calls_only and table.cursor == pair.pair.divergence.row


async def test_brackets_walk_a_tasks_divergences_both_ways_and_say_when_none_is_left(tmp_path: Path) -> None:
    """``]`` from the top visits every divergent row in order and stays on the last; ``[`` walks them
    back and, before the first, says there is no earlier one (not a further one)."""
    app, _, _ = app_for(1, tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("minus", "enter")
        await pilot.pause()
        pair = app.screen
        assert isinstance(pair, LogPairScreen)
        table = pair.query_one("#pair-rows", LazyTable)
        divergent = pair.pair.divergent_rows
        assert len(divergent) >= 2
        visited = []
        for _ in divergent:
            await pilot.press("right_square_bracket")
            visited.append(table.cursor)
        assert visited == divergent
        await pilot.press("right_square_bracket")
        assert table.cursor == divergent[-1]
        assert any("no further divergence" in str(n.message) for n in app._notifications)
        back = []
        for _ in divergent[:-1]:
            await pilot.press("left_square_bracket")
            back.append(table.cursor)
        assert back == divergent[-2::-1]
        await pilot.press("left_square_bracket")
        assert table.cursor == divergent[0]
        assert any("no earlier divergence" in str(n.message) for n in app._notifications)
