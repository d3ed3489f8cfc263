"""WebShop web_agent_site session logs (AgentGym ``all_trajs/*.jsonl``): page transitions as WebShop actions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay_tui.actions import format_env_action, parse_action
from replay_tui.cli import main
from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.examples import example_path
from replay_tui.formats import detect, read_trajectories, reader_for, webshop_human
from replay_tui.formats.base import HEAD_BYTES

DATA = Path(__file__).parent.parent / "data" / "formats" / "webshop_human"
FILES = sorted(DATA.glob("*.jsonl"))
READER = reader_for("webshop-human")

EXPECTED: dict[str, tuple[list[str], float]] = {
    "20220427_1_12": (
        [
            "search[living room furniture]",
            "click[Back to Search]",
            "search[living room and kitchen furniture]",
            "click[B09LYLKLVX]",
            "click[Buy Now]",
        ],
        0.5,
    ),
    "20220427_1_13": (
        [
            "search[spray bottle hair salon capacity below $50]",
            "click[B095LQZBRN]",
            "click[< Prev]",
            "click[B089RKPRN3]",
            "click[Buy Now]",
        ],
        0.5,
    ),
    "20220427_1_15": (
        [
            "search[teen girl pink loafers size eight]",
            "click[B0868KF3ZB]",
            "click[8]",
            "click[z2-pink]",
            "click[Buy Now]",
        ],
        0.75,
    ),
    "20220427_1_17": (
        [
            "search[teal stainless steel strap]",
            "click[B096FSTFLS]",
            "click[teal]",
            "click[38 | 40 | 41 mm]",
            "click[Buy Now]",
        ],
        1.0,
    ),
    "20220427_1_18": (["search[birthday candles for birthday cake]", "click[B09F3V2HVT]", "click[Buy Now]"], 0.5),
    "20220427_1_21": (
        ["search[pink ice face roller with silicone ice mold]", "click[B09SB494XX]", "click[pink]", "click[Buy Now]"],
        2 / 3,
    ),
    "20220427_1_23": (
        ["search[red earbud headphones]", "click[Next >]", "click[B08CZ8WS38]", "click[red]", "click[Buy Now]"],
        2 / 3,
    ),
}


def read(path: Path) -> tuple[list[Trajectory], list[LoadProblem]]:
    items = list(READER.read(path))
    return [i for i in items if isinstance(i, Trajectory)], [i for i in items if isinstance(i, LoadProblem)]


def lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def write(tmp_path: Path, records: list[Any], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def test_every_real_file_is_detected_and_loads_as_one_episode_with_its_actions() -> None:
    assert {f.stem for f in FILES} == set(EXPECTED)
    for path in FILES:
        reader, found = detect(path)
        assert reader.name == "webshop-human" and found.score == 1.0
        trajectories, problems = read(path)
        assert problems == [] and len(trajectories) == 1
        trajectory = trajectories[0]
        actions, reward = EXPECTED[path.stem]
        assert trajectory.id == path.stem and trajectory.format == "webshop-human"
        assert [s.action_text for s in trajectory.steps] == actions
        assert trajectory.recorded_calls == len(actions)
        assert trajectory.outcome.reward == pytest.approx(reward)
        assert trajectory.outcome.success is (reward == 1.0) and trajectory.outcome.status == "purchased"
        assert trajectory.outcome.scores["r_type"] == 1.0
        assert trajectory.task == trajectory.metadata["instruction_text"] and trajectory.task
        assert trajectory.metadata["asin"] and "goal_options" in trajectory.metadata
        for step in trajectory.steps:
            assert step.action is not None
            parse_action(step.action_text)  # the seed's grammar
            assert format_env_action(step.action.name, step.action.arguments) == step.action_text
            assert step.observation.startswith(f"WebShop page: {step.extra['page']}\nURL: ")
            assert trajectory.task in step.observation
            assert step.messages == [] and step.thinking == ""
        last = trajectory.steps[-1]
        assert last.done and last.reward == pytest.approx(reward) and last.action.name == "Buy_Now"
        assert last.tool_result is not None and "Thank you for shopping with us!" in last.tool_result
        assert [s.done for s in trajectory.steps].count(True) == 1


def test_tool_calls_states_and_observations_of_a_real_session() -> None:
    (trajectory,), _ = read(DATA / "20220427_1_15.jsonl")
    search, select, size, color, buy = trajectory.steps
    assert (search.action.name, search.action.arguments) == (
        "Search",
        {"keywords": "teen girl pink loafers size eight"},
    )
    assert search.state == "Search" and "[button] Search [button_]" in search.observation
    assert (select.action.name, select.action.arguments) == ("select_item", {"item_id": "B0868KF3ZB"})
    assert select.state == "Result" and "[button] B0868KF3ZB [button_]" in select.observation
    assert "Search keywords: teen girl pink loafers size eight\nPage 1" in select.observation
    assert (size.action.name, size.action.arguments, size.extra["option_name"]) == (
        "select_option",
        {"value": "8"},
        "size",
    )
    assert color.action.arguments == {"value": "z2-pink"} and color.extra["option_name"] == "color"
    assert (
        size.state == "Item" and "Item: B0868KF3ZB" in size.observation and "Selected options: none" in size.observation
    )
    assert "Selected options: size: 8" in color.observation
    assert buy.action.name == "Buy_Now" and "Selected options: size: 8, color: z2-pink" in buy.observation
    assert buy.tool_result is not None and "Reward: 0.75" in buy.tool_result and "Price: $17.92" in buy.tool_result
    assert trajectory.extra["purchased"] == {
        "asin": "B0868KF3ZB",
        "options": {"size": "8", "color": "z2-pink"},
        "price": pytest.approx(17.92, abs=0.01),
    }
    assert search.extra["line"] == 1 and search.extra["next_line"] == 2 and buy.extra["next_page"] == "done"


def test_back_to_search_prev_next_and_a_reload() -> None:
    (twelve,), _ = read(DATA / "20220427_1_12.jsonl")
    assert twelve.steps[1].action.name == "Back_to_Search" and twelve.steps[1].state == "Result"
    assert twelve.steps[2].action.arguments == {"keywords": "living room and kitchen furniture"}
    (thirteen,), _ = read(DATA / "20220427_1_13.jsonl")
    assert thirteen.steps[0].extra["reloads"] == 1  # the index page was served twice before the search
    assert thirteen.steps[2].action.name == "Prev" and thirteen.steps[2].extra["page"] == "item_page"
    (twenty_three,), _ = read(DATA / "20220427_1_23.jsonl")
    step = twenty_three.steps[1]
    assert step.action.name == "Next" and "Page 2" in (step.tool_result or "")
    assert "[button] < Prev [button_]" in (step.tool_result or "")


def test_sub_pages_back_from_them_earlier_result_pages_and_urls_without_content(tmp_path: Path) -> None:
    records = lines("20220427_1_23")
    index, page1, page2, item, option, done = records
    base = item["url"].replace("/item_page/", "/item_sub_page/")
    head, options = base.rsplit("/", 1)
    sub = {**item, "page": "item_sub_page", "url": f"{head}/Description/{options}"}
    attributes = {**sub, "url": f"{head}/Attributes/{options}"}
    bare = {key: value for key, value in page1.items() if key != "content"}  # keywords decoded from the url
    path = write(tmp_path, [index, page1, page2, page1, bare, item, sub, item, attributes, item, option, done])
    (trajectory,), problems = read(path)
    assert problems == []
    assert [s.action_text for s in trajectory.steps] == [
        "search[red earbud headphones]",
        "click[Next >]",
        "click[< Prev]",
        "click[B08CZ8WS38]",
        "click[description]",
        "click[< Prev]",
        "click[attributes]",
        "click[< Prev]",
        "click[red]",
        "click[Buy Now]",
    ]
    assert trajectory.steps[3].extra["reloads"] == 1  # page 1 again, without content: the same url
    assert (
        "Page 1" in trajectory.steps[3].observation
        and "[button] B09M6QT2HY [button_]" in trajectory.steps[3].observation
    )
    description = trajectory.steps[4]
    assert description.action.name == "Description" and "Showing: Description" in (description.tool_result or "")
    back = trajectory.steps[5]
    assert back.action.name == "Prev" and back.state == "Item" and back.extra["page"] == "item_sub_page"
    assert trajectory.steps[6].action.name == "Attributes" and trajectory.steps[6].action.arguments == {}
    for step in trajectory.steps:
        parse_action(step.action_text)


def test_keywords_and_options_decoded_from_the_url_when_content_is_missing(tmp_path: Path) -> None:
    records = lines("20220427_1_15")
    stripped = [{key: value for key, value in r.items() if key != "content"} for r in records]
    (trajectory,), problems = read(write(tmp_path, stripped))
    assert problems == []
    assert [s.action_text for s in trajectory.steps] == EXPECTED["20220427_1_15"][0]
    assert trajectory.extra["purchased"] == {"asin": "B0868KF3ZB", "options": {"size": "8", "color": "z2-pink"}}


def test_a_jsonl_of_several_sessions_splits_into_one_episode_each(tmp_path: Path) -> None:
    joined = tmp_path / "all.jsonl"
    joined.write_bytes(b"".join(path.read_bytes() for path in FILES) + FILES[0].read_bytes())
    assert detect(joined)[0].name == "webshop-human"
    trajectories, problems = read(joined)
    assert problems == []
    assert [t.id for t in trajectories] == [*EXPECTED, "20220427_1_12#2"]
    assert trajectories[-1].extra["part"] == 2
    for trajectory in trajectories:
        actions, reward = EXPECTED[trajectory.id.split("#")[0]]
        assert [s.action_text for s in trajectory.steps] == actions
        assert trajectory.outcome.reward == pytest.approx(reward)


def test_a_new_goal_in_the_same_session_starts_a_new_episode(tmp_path: Path) -> None:
    first = lines("20220427_1_18")
    second = [{**r, "goal": {**r["goal"], "instruction_text": "i want a blue mug"}} for r in first]
    trajectories, _ = read(write(tmp_path, first + second))
    assert [(t.id, t.task) for t in trajectories] == [
        ("20220427_1_18", first[0]["goal"]["instruction_text"]),
        ("20220427_1_18#2", "i want a blue mug"),
    ]


def test_malformed_lines_are_named_problems_and_the_other_lines_still_load(tmp_path: Path) -> None:
    records: list[Any] = lines("20220427_1_17")
    index, results, item, teal, size, done = records
    path = write(
        tmp_path,
        [
            index,
            "{not json",
            "[1, 2]",
            results,
            {"url": "http://x/20220427_1_17", "goal": {}},
            {**item, "page": "checkout"},
            {**item, "url": 42},
            item,
            {**teal, "content": "oops"},
            size,
            {**done, "reward": "high", "reward_info": [1]},
        ],
        name="broken.jsonl",
    )
    trajectories, problems = read(path)
    assert len(trajectories) == 1
    trajectory = trajectories[0]
    assert [s.action_text for s in trajectory.steps] == EXPECTED["20220427_1_17"][0]
    assert trajectory.outcome.reward is None and trajectory.outcome.status == "purchased"
    found = {(p.field, p.index, p.session_id, p.file) for p in problems}
    assert found == {
        ("line 2", 0, "20220427_1_17", "broken.jsonl"),
        ("line 3", 0, "20220427_1_17", "broken.jsonl"),
        ("line 5.page", 0, "20220427_1_17", "broken.jsonl"),
        ("line 6.page", 0, "20220427_1_17", "broken.jsonl"),
        ("line 7.url", 0, "20220427_1_17", "broken.jsonl"),
        ("line 9.content", 0, "20220427_1_17", "broken.jsonl"),
        ("line 11.reward", 0, "20220427_1_17", "broken.jsonl"),
        ("line 11.reward_info", 0, "20220427_1_17", "broken.jsonl"),
    }
    messages = {p.field: p.message for p in problems}
    assert messages["line 2"].startswith("not JSON")
    assert messages["line 3"] == "expected a JSON object, got a list"
    assert "unknown page 'checkout'" in messages["line 6.page"]
    assert all("\n" not in p.one_line() for p in problems)


def test_garbage_empty_and_unfinished_files_never_raise(tmp_path: Path) -> None:
    assert read(write(tmp_path, [], name="empty.jsonl")) == ([], [])
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b'\xff\xfe\x00binary\n{"page": "index"}\n\n')
    trajectories, problems = read(garbage)
    assert trajectories == [] and [p.field for p in problems] == ["line 1", "line 2.url"]
    (trajectory,), problems = read(write(tmp_path, lines("20220427_1_17")[:3], name="unfinished.jsonl"))
    assert problems == [] and len(trajectory.steps) == 2
    assert trajectory.outcome.reward is None and trajectory.outcome.success is False
    assert trajectory.outcome.status == "not purchased" and not any(s.done for s in trajectory.steps)
    (alone,), _ = read(write(tmp_path, lines("20220427_1_17")[:1], name="alone.jsonl"))
    assert alone.steps == [] and alone.id == "20220427_1_17"
    missing = list(READER.read(tmp_path / "missing.jsonl"))
    assert len(missing) == 1 and isinstance(missing[0], LoadProblem) and "cannot read" in missing[0].message


def test_a_goal_without_instruction_text_is_a_problem_once(tmp_path: Path) -> None:
    records = [{**r, "goal": {"asin": "B0"}} for r in lines("20220427_1_18")]
    (trajectory,), problems = read(write(tmp_path, records))
    assert [(p.field, p.message) for p in problems] == [
        ("line 1.goal.instruction_text", "expected the task as text, got nothing")
    ]
    assert trajectory.task == "" and trajectory.metadata == {"asin": "B0"} and len(trajectory.steps) == 3


def test_an_overlong_line_is_skipped_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webshop_human, "MAX_LINE", 1000)
    records: list[Any] = lines("20220427_1_18")
    path = write(tmp_path, [records[0], "x" * 5000, *records[1:]])
    (trajectory,), problems = read(path)
    assert [p.field for p in problems] == ["line 2"] and "longer than" in problems[0].message
    assert len(trajectory.steps) == 3


def test_sniffing_from_the_head_only(tmp_path: Path) -> None:
    real = FILES[0].read_bytes()
    assert READER.sniff(FILES[0], real).score == 1.0
    assert READER.sniff(FILES[0], b"\xef\xbb\xbf" + real).score == 1.0
    seed = example_path()
    assert READER.sniff(seed, seed.read_bytes()[:HEAD_BYTES]).score == 0
    assert detect(seed)[0].name == "webshop-demos"
    chat = b'{"messages": [{"role": "user", "content": "hi"}], "tools": []}\n'
    assert READER.sniff(Path("c.jsonl"), chat).score == 0
    assert READER.sniff(Path("h.json"), b'{"hello": "world"}').score == 0
    assert READER.sniff(Path("p.json"), b'{\n  "page": "index",\n  "url": "u",\n  "goal": {}\n}\n').score == 0
    # a first line longer than the head: decided from its keys
    long_line = json.dumps({"page": "index", "url": "http://x/s", "goal": {"instruction_text": "x" * HEAD_BYTES}})
    assert 0 < READER.sniff(Path("l.jsonl"), long_line.encode()[:HEAD_BYTES]).score < 1


def test_cli_formats_reads_the_real_files(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["formats", *map(str, FILES)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert out.count("webshop-human") == len(FILES)


def test_read_trajectories_is_lazy() -> None:
    stream = read_trajectories(FILES[0])
    first = next(stream)
    assert isinstance(first, Trajectory)


# -- outcome (issue 30): the done line's reward breakdown, checked against the file --------------


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_the_done_line_s_reward_info_becomes_named_checks(path: Path) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    done = next(line for line in reversed(lines) if line["page"] == "done")
    info, goal, bought = done["reward_info"], done["goal"], done["content"]
    [trajectory], _ = read(path)
    outcome = trajectory.outcome
    checks = {check.name: check for check in outcome.checks}
    assert checks["type"].value == info["r_type"] and checks["type"].passed is (info["r_type"] == 1.0)
    assert checks["attributes"].value == info["r_att"] and checks["attributes"].passed is (info["r_att"] == 1.0)
    assert all(attribute in checks["attributes"].detail for attribute in goal["attributes"])
    if "r_option" in info:
        assert checks["options"].passed is (info["r_option"] == 1.0)
    assert checks["price"].passed is info["r_price"] and str(bought["price"]) in checks["price"].detail
    assert outcome.answer is not None and outcome.answer.startswith(bought["asin"])
    assert outcome.target is not None and outcome.target.startswith(goal["asin"])
    failed = [name for name, check in checks.items() if check.passed is False]
    assert (outcome.kind == "succeeded") is (done["reward"] == 1.0) and bool(failed) is (done["reward"] < 1.0)
