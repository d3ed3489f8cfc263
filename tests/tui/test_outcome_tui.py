"""Why a run failed, in the app, driven with keys on the shared tau2 airline file: the browser's
outcome columns and ``f`` (failed → errored → max-steps → all), the stepper's outcome header, the
outcome screen (expected vs actual for the whole task) and the outcome groups.

Counts are computed here from the file itself (its rewards and termination reasons), never from
the reader under test."""

from __future__ import annotations

import json
from pathlib import Path

from textual.strip import Strip

from replay_tui.groups import NONE_MISSED, OUTCOME_GROUPINGS
from replay_tui.tui.app import make_app
from replay_tui.tui.replay.browser import BrowserScreen
from replay_tui.tui.replay.outcome import OutcomeScreen
from replay_tui.tui.replay.outcome_groups import OutcomeGroupsScreen
from replay_tui.tui.replay.stepper import StepperScreen
from tests.conftest import DATA, good_episode, write_json
from tests.tui.conftest import SIZE, wait_replay
from tests.tui.hostile_text import hostile
from tests.tui.test_escapes_tui import settle, unsafe_lines

TAU2_AIRLINE = (
    DATA / "formats" / "tau2" / "2025-10-05T22-50-14.083933_airline_llm_agent_grok-3_user_simulator_grok-3.json"
)


def simulations(path: Path = TAU2_AIRLINE) -> list[dict]:
    return json.loads(path.read_text())["simulations"]


def failed_ids(path: Path = TAU2_AIRLINE) -> list[str]:
    """The episode ids (task#trial) of the file's failed simulations, from their rewards."""
    return [f"{run['task_id']}#{run['trial']}" for run in simulations(path) if run["reward_info"]["reward"] < 1]


def rows(app) -> list[dict[str, str]]:
    screen = app.screen
    assert isinstance(screen, BrowserScreen)
    keys = [column.key for column in screen.source.columns]
    return [
        dict(zip(keys, (cell.plain for cell in screen.source.cells(i)), strict=True)) for i in range(len(screen.source))
    ]


def title(app) -> str:
    return app.screen.query_one("#browser-title").render().plain


async def test_f_shows_the_failed_simulations_only(build):
    failed = failed_ids()
    assert len(failed) == 9 and len(simulations()) == 20
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        every = rows(app)
        assert len(every) == 20
        assert sum(row["success"] == "✗" for row in every) == 9 and sum(row["success"] == "✓" for row in every) == 11
        by_id = {f"{run['task_id']}#{run['trial']}": run for run in simulations()}
        for row in every:  # why each failed, as the file says: its DB check, else how it ended
            run = by_id[row["episode"]]
            db = run["reward_info"].get("db_check") or {}
            if run["reward_info"]["reward"] < 1:
                want = "db" if db.get("db_match") is False else run["termination_reason"]
                assert row["reason"].split(":")[0] == want, row
        await pilot.press("f")
        await pilot.pause()
        shown = rows(app)
        assert sorted(row["episode"] for row in shown) == sorted(failed)
        assert all(row["success"] == "✗" for row in shown)
        assert "filter: failed" in title(app)
        await pilot.press("f")  # nothing errored in this file: the simulations stopped at the step limit
        await pilot.pause()
        limited = [
            f"{run['task_id']}#{run['trial']}" for run in simulations() if run["termination_reason"] == "max_steps"
        ]
        assert limited and [row["episode"] for row in rows(app)] == limited
        assert all(row["reason"] == "max_steps" for row in rows(app)) and "filter: max-steps" in title(app)
        await pilot.press("f")
        await pilot.pause()
        assert len(rows(app)) == 20 and "filter" not in title(app)


async def test_f_cycles_failed_errored_and_max_steps(build, tmp_path):
    """A copy where one failed simulation hit the step limit and one crashed."""
    raw = json.loads(TAU2_AIRLINE.read_text())
    failing = [run for run in raw["simulations"] if run["reward_info"]["reward"] < 1]
    failing[0]["termination_reason"] = "max_steps"
    failing[1]["termination_reason"] = "error"
    path = tmp_path / "airline.json"
    path.write_text(json.dumps(raw))
    app = build([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        await pilot.pause()
        assert len(rows(app)) == 9 and "filter: failed" in title(app)
        await pilot.press("f")
        await pilot.pause()
        (errored,) = rows(app)
        assert errored["episode"] == f"{failing[1]['task_id']}#{failing[1]['trial']}"
        assert errored["success"] == "!" and errored["reason"].startswith("db:") and "filter: errored" in title(app)
        await pilot.press("f")
        await pilot.pause()
        limited = [f"{run['task_id']}#{run['trial']}" for run in failing if run["termination_reason"] == "max_steps"]
        assert len(limited) >= 2 and sorted(row["episode"] for row in rows(app)) == sorted(limited)
        assert "filter: max-steps" in title(app)
        await pilot.press("f")
        await pilot.pause()
        assert len(rows(app)) == 20


async def _sort_with_s(app, pilot, key: str) -> None:
    """Press s (the next sort column) until the title says the browser sorts by ``key``."""
    for _ in range(len(app.screen.sort_keys) + 1):
        if f"sort: {key} " in title(app):
            return
        await pilot.press("s")
        await pilot.pause()
    raise AssertionError(f"s never sorted by {key}: {title(app)}")


async def test_the_outcome_columns_sort(build):
    """s cycles the sort column: by success (failed first), reward and reason; S reverses."""
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _sort_with_s(app, pilot, "success")
        marks = [row["success"] for row in rows(app)]
        assert marks == ["✗"] * 9 + ["✓"] * 11
        await pilot.press("S")
        await pilot.pause()
        assert [row["success"] for row in rows(app)] == ["✓"] * 11 + ["✗"] * 9
        await _sort_with_s(app, pilot, "reward")
        rewards = [float(row["reward"]) for row in rows(app)]
        assert sorted(rewards) in (rewards, rewards[::-1]) and rewards[0] != rewards[-1]
        await _sort_with_s(app, pilot, "reason")
        reasons = [row["reason"].casefold() for row in rows(app)]
        assert sorted(reasons) in (reasons, reasons[::-1]) and reasons[0] != reasons[-1]


def failing_parts(run: dict) -> list[str]:
    """What the file says failed in a simulation: its DB check, each fact not communicated."""
    info = run["reward_info"]
    parts = ["db"] if (info.get("db_check") or {}).get("db_match") is False else []
    return parts + [check["info"] for check in info.get("communicate_checks") or [] if not check["met"]]


def missed_actions(run: dict) -> list[str]:
    """The reference actions tau2 found not done as expected, in the reference's order."""
    return [
        check["action"]["name"] for check in run["reward_info"].get("action_checks") or [] if not check["action_match"]
    ]


async def test_failed_then_open_then_the_outcome_screen_names_why(build):
    """f, enter, O: the outcome screen names each failing check and each reference action missed or
    called differently (as the file's own reward_info says); enter shows that action's step."""
    by_id = {f"{run['task_id']}#{run['trial']}": run for run in simulations()}
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        await pilot.pause()
        episode_id = rows(app)[0]["episode"]
        run = by_id[episode_id]
        assert failing_parts(run) and missed_actions(run)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, StepperScreen)
        header = app.screen.query_one("#outcome-detail").render().plain
        assert "✗ db" in header  # the stepper's header names the failing check too
        await pilot.press("O")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OutcomeScreen)
        text = screen.query_one("#outcome-text").render().plain
        for part in failing_parts(run):
            assert f"✗ {part}" in text or f'✗ communicate "{part}"' in text, part
        expected = screen.source
        cells = [[cell.plain for cell in expected.cells(i)] for i in range(len(expected))]
        assert [row[1].split("(")[0] for row in cells if row[0] != "+" and row[2] != "matched"] == missed_actions(run)
        not_matched = next(i for i, row in enumerate(cells) if row[2] != "matched")
        for _ in range(not_matched):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        stepper = app.screen
        assert isinstance(stepper, StepperScreen) and stepper.session_id == screen.session_id
        row = stepper.current_row()
        hit = expected.rows[not_matched].hit
        assert hit is not None
        assert row is not None and row.position == hit.step  # where the alignment put it
        if hit.status == "different":  # the call's own step
            assert hit.expected.name in stepper.query_one("#step-detail").render().plain
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)  # the outcome screen did not stay on the stack


async def test_the_outcome_screen_opens_from_the_browser_and_goes_back(build):
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("O")
        await pilot.pause()
        assert isinstance(app.screen, OutcomeScreen)
        assert "expected vs actual" in app.screen.query_one("#expected-title").render().plain
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)


def screen_lines(app) -> list[str]:
    compositor = app.screen._compositor
    chops = compositor._render_chops(compositor.size.region, lambda y: True)
    return [Strip.join(chop.values()).text for chop in chops]


def group_sums(screen) -> list[int]:
    return [group.count for group in screen.groups]


async def test_outcome_groups_sum_to_the_failed_count_and_drill_down(build):
    """M, then o: each grouping's groups sum to the file's failed simulations; enter lists a group's
    episodes, enter on one shows its outcome."""
    failed = failed_ids()
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("M", "o")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OutcomeGroupsScreen)
        seen = []
        for _ in OUTCOME_GROUPINGS:
            assert sum(group_sums(screen)) == len(failed), screen.grouping
            episodes = sorted(screen.names[key] for group in screen.groups for key in group.episodes)
            assert episodes == sorted(failed)
            seen.append(screen.grouping)
            await pilot.press("o")
            await pilot.pause()
        assert seen == [key for key, _ in OUTCOME_GROUPINGS] and screen.grouping == seen[0]
        termination = {group.key: group.count for group in screen.groups}
        statuses = [run["termination_reason"] for run in simulations() if run["reward_info"]["reward"] < 1]
        assert termination == {status: statuses.count(status) for status in set(statuses)}
        await pilot.press("o")  # by the first missed expected action: tau2's own first failed action check
        await pilot.pause()
        by_id = {f"{run['task_id']}#{run['trial']}": run for run in simulations()}
        for group in screen.groups:
            for key in group.episodes:
                missed = missed_actions(by_id[screen.names[key]])
                assert group.key == (missed[0] if missed else NONE_MISSED)
        first = screen.groups[0]
        await pilot.press("enter")
        await pilot.pause()
        assert screen.steps_table.has_focus and len(screen.steps_source) == first.count
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, OutcomeScreen) and app.screen.session_id == first.episodes[0]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_no_outcome_view_shows_a_control_sequence_from_the_log(tmp_path):
    """The outcome's texts are the log's: termination reason, checks, reference actions and the
    agent's reply with every class of sequence; the browser, the stepper header, the outcome screen
    and the outcome groups compose frames without one."""
    raw = json.loads(TAU2_AIRLINE.read_text())
    for run in raw["simulations"]:
        if run["reward_info"]["reward"] < 1:
            run["termination_reason"] = hostile("termination")
            info = run["reward_info"]
            for check in info.get("communicate_checks") or []:
                check["info"], check["justification"] = hostile("info"), hostile("justification")
            info["communicate_checks"] = info.get("communicate_checks") or [
                {"info": hostile("info"), "met": False, "justification": hostile("justification")}
            ]
    for task in raw["tasks"]:
        for action in (task.get("evaluation_criteria") or {}).get("actions") or []:
            action["name"] = hostile("action")
    path = tmp_path / "airline.json"
    path.write_text(json.dumps(raw))
    app = make_app([str(path)], annotations=tmp_path / "notes.json", export_dir=tmp_path)
    leaks: dict[str, list[str]] = {}
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(app, pilot)
        keys = "f O escape enter O enter escape escape M o o o o enter enter".split()
        shown = ""
        for number, key in enumerate(keys):
            await pilot.press(key)
            await settle(app, pilot)
            found = unsafe_lines(app)
            if found:
                leaks[f"key {number} {key!r} on {type(app.screen).__name__}"] = found
            shown += "\n".join(screen_lines(app))
        assert app.is_running
    assert not leaks, leaks
    for tag in ("termination", "info", "justification", "action"):  # the texts were shown, their sequences not
        assert f"{tag}<" in shown, tag
    assert "PWNED" not in shown


async def test_the_outcome_screen_of_a_seed_demo(build, tmp_path):
    """A seed demo records a reward and success, no reference actions: the screen says so."""
    write_json(tmp_path / "seed.json", [good_episode(1)])
    app = build([str(tmp_path / "seed.json")])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("O")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OutcomeScreen) and screen.session_id == 1
        assert "score 1.00" in screen.query_one("#outcome-title").render().plain
        assert "no reference actions" in screen.query_one("#expected-title").render().plain
        assert not screen.query_one("#expected").display
        await pilot.press("enter", "escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)


JQ_MISSED = (
    '.simulations[] | select(.reward_info.reward < 1) | {id: "\\(.task_id)#\\(.trial)", missed: '
    "[.reward_info.action_checks[]? | select(.action_match | not) | .action.name]}"
)
"""The one-line jq of the issue: each failed simulation's reference actions tau2 found not done."""


async def test_every_failed_simulations_outcome_screen_names_what_jq_finds(build):
    """f, then O on each failed simulation in turn: the outcome screen names each failing check, and
    its expected vs actual the reference actions missed or called with other arguments, in the
    reference's order, exactly as a jq one-liner over the file's reward_info finds them (the jq
    library runs the real jq)."""
    import jq

    found = jq.compile(JQ_MISSED).input_text(TAU2_AIRLINE.read_text()).all()
    by_jq = {item["id"]: item["missed"] for item in found}
    assert sorted(by_jq) == sorted(failed_ids()) and sum(map(len, by_jq.values())) >= 10
    seen: dict[str, list[str]] = {}
    by_id = {f"{run['task_id']}#{run['trial']}": run for run in simulations()}
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        await pilot.pause()
        shown = rows(app)
        for number, row in enumerate(shown):
            if number:
                await pilot.press("down")
            await pilot.press("O")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, OutcomeScreen)
            table = screen.source
            cells = [[cell.plain for cell in table.cells(i)] for i in range(len(table))]
            seen[row["episode"]] = [
                cells[i][1].split("(")[0] for i in range(len(cells)) if cells[i][0] != "+" and cells[i][2] != "matched"
            ]
            title = screen.query_one("#outcome-title").render().plain
            assert row["episode"] in title, title
            text = screen.query_one("#outcome-text").render().plain
            for part in failing_parts(by_id[row["episode"]]):  # each failing check, as the file says
                assert f"✗ {part}" in text or f'✗ communicate "{part}"' in text, (row["episode"], part)
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, BrowserScreen)
    assert seen == by_jq


JQ_OUTCOMES = (
    '.simulations[] | {id: "\\(.task_id)#\\(.trial)", reward: .reward_info.reward, ended: .termination_reason, '
    "db: .reward_info.db_check.db_match}"
)
"""Each simulation's outcome as the file records it: reward, how it ended, the DB check."""


async def test_the_browser_shows_each_simulations_outcome_as_jq_reads_it(build):
    """All 20 rows, in the file's order: the reward, ✓/✗ (reward 1 or not), and why it ended (the
    failed DB check named first, else the termination reason), as jq reads them from the file."""
    import jq

    want = jq.compile(JQ_OUTCOMES).input_text(TAU2_AIRLINE.read_text()).all()
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = rows(app)
    assert [row["episode"] for row in shown] == [item["id"] for item in want] and len(want) == 20
    for row, item in zip(shown, want, strict=True):
        assert row["reward"] == f"{item['reward']:.2f}", row
        assert row["success"] == ("✓" if item["reward"] == 1 else "✗"), row
        why = "db" if item["reward"] < 1 and item["db"] is False else item["ended"]
        assert row["reason"].split(":")[0] == why, row


async def test_a_crashed_mini_swe_agent_run_shows_its_exit_status_and_error(build):
    """The issue's g1_mini_timeout: a mini-swe-agent run that died on a model timeout. The browser says
    errored and why; the stepper's header says it in the frame, as the file's info records it."""
    runs = sorted((DATA / "formats" / "swe_agent").glob("deepseek_reasoner_dev__*.traj.json"))
    infos = {path.name: json.loads(path.read_text())["info"] for path in runs}
    assert len(infos) == 2
    app = build([str(path) for path in runs])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = rows(app)
        assert [row["success"] for row in shown] == ["!", "!"]
        for number, (row, path) in enumerate(zip(shown, runs, strict=True)):
            error = infos[path.name]["exception_str"].strip().splitlines()[0]
            assert " ".join(error.split())[:40] in row["reason"], row
            if number:
                await pilot.press("down")
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, StepperScreen)
            frame = " ".join(" ".join(screen_lines(app)).split())
            assert f"! errored · {infos[path.name]['exit_status']}" in frame, frame
            assert f"error {' '.join(error.split())[:60]}" in frame, frame
            await pilot.press("escape")
            await pilot.pause()


async def _replayed_outcome_screen(app, pilot, episode_id: str) -> OutcomeScreen:
    """From the browser: open ``episode_id``, replay it (r), then O."""
    position = [row["episode"] for row in rows(app)].index(episode_id)
    for _ in range(position):
        await pilot.press("down")
    await pilot.press("enter", "r")
    await wait_replay(app, pilot)
    await pilot.press("O")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, OutcomeScreen)
    return screen


def _columns(screen: OutcomeScreen) -> dict[str, list[str]]:
    table = screen.source
    keys = [column.key for column in table.columns]
    cells = [[cell.plain for cell in table.cells(i)] for i in range(len(table))]
    return {key: [row[n] for row in cells] for n, key in enumerate(keys)}


async def test_the_outcome_screen_aligns_a_replays_predicted_calls_too(build, tmp_path):
    """After r, O has a replay column: each reference action's fate among the replay's predicted
    calls, and its title counts them. A stub replay predicts the recorded calls, so it hits what the
    agent hit (tau2's own action checks); a policy that calls no tool hits none."""
    run = next(run for run in simulations() if f"{run['task_id']}#{run['trial']}" == "7#0")
    checks = run["reward_info"]["action_checks"]
    hit = ["matched" if check["action_match"] else "not" for check in checks]
    assert "matched" in hit and "not" in hit
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = await _replayed_outcome_screen(app, pilot, "7#0")
        columns = _columns(screen)
        agent = [n for n, mark in enumerate(columns["position"]) if mark != "+"]
        replay = [columns["replay"][n] for n in agent]
        assert [status == "matched" for status in replay] == [status == "matched" for status in hit]
        assert replay == [columns["status"][n] for n in agent]  # as the recording's own calls did
        title = screen.query_one("#expected-title").render().plain
        assert f"the replay: {hit.count('matched')} of {len(hit)} matched" in title, title

    silent = tmp_path / "silent.py"
    silent.write_text(
        "class Silent:\n    def predict_action(self, observation, state, available_actions, llm_prompt_repr):\n"
        "        return ''\n",
        encoding="utf-8",
    )
    app = build([str(TAU2_AIRLINE)], policy=f"{silent}:Silent", mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = await _replayed_outcome_screen(app, pilot, "7#0")
        columns = _columns(screen)
        assert [status for mark, status in zip(columns["position"], columns["replay"], strict=True) if mark != "+"] == (
            ["missing"] * len(hit)
        )
        assert "matched" in columns["status"]  # the recording's own alignment is still shown beside it
        title = screen.query_one("#expected-title").render().plain
        assert f"the replay: 0 of {len(hit)} matched" in title, title


async def test_the_outcome_screen_has_no_replay_column_before_a_replay(build):
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("O")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, OutcomeScreen)
        assert "replay" not in _columns(screen)
        assert "the replay" not in screen.query_one("#expected-title").render().plain


SEED_RECORDS = {  # session: what the file records (a key left out is absent), and the mark both must show
    1: ({"final_reward": 1.0, "success": True}, "✓"),
    2: ({"final_reward": 1.0}, "✓"),  # success left out: a reward of 1.0 succeeds (LASER's definition)
    3: ({"final_reward": 0.5}, "✗"),
    4: ({"final_reward": 1.0, "success": False}, "✗"),  # the recorded flag wins
    5: ({"success": True}, "✓"),
    6: ({}, "✗"),  # neither: a missing reward reads as 0, though the last step's reward is 1.0
}


async def test_the_browser_and_the_outcome_screen_agree_on_seed_demos(build, tmp_path):
    """A seed demo's success mark in the browser's row is the outcome screen's, whether the file
    records its reward and success or leaves them out."""
    episodes = []
    for session, (recorded, _) in SEED_RECORDS.items():
        data = good_episode(session)
        del data["final_reward"], data["success"]
        episodes.append({**data, **recorded})
    write_json(tmp_path / "seed.json", episodes)
    app = build([str(tmp_path / "seed.json")])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        marks = {int(row["session"]): row["success"] for row in rows(app)}
        assert marks == {session: mark for session, (_, mark) in SEED_RECORDS.items()}
        for position, session in enumerate(SEED_RECORDS):
            await pilot.press(*(["down"] if position else []), "O")  # the cursor stays on the row left
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, OutcomeScreen) and screen.session_id == session
            headline = screen.query_one("#outcome-title").render().plain
            label = "✓ succeeded" if marks[session] == "✓" else "✗ failed"
            assert label in headline, (session, headline)
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, BrowserScreen)
