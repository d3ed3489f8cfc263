import json

import pytest

from replay_tui.episodes.problems import DemoFileError, EpisodeLoadError
from replay_tui.formats.webshop_demos.contract import AgentBuy, DecisionStep, DetailExploration, ItemPageAction
from replay_tui.formats.webshop_demos.index import DemoFile, open_demos, resolve_demo_paths
from tests.conftest import SHARED_EXAMPLE, episode, good_episode, search_step, write_json


def test_indexes_episodes_without_parsing_them(demo_file):
    demos = open_demos(demo_file)
    assert demos.session_ids == [10, 11, 12]
    ref = demos.ref(11)
    assert (ref.decision_steps, ref.sub_events) == (3, 4)
    assert ref.reward == 1.0
    assert demos.problems == []
    ep = demos.episode(11)
    assert [type(e) for e in ep.trajectory[:5]] == [DecisionStep] * 3 + [ItemPageAction, DetailExploration]
    assert isinstance(ep.trajectory[-1], AgentBuy)
    assert demos.trajectory(11) is demos.trajectory(11)  # cached


def test_real_shared_example_loads():
    demos = open_demos(SHARED_EXAMPLE)
    ep = demos.episode(3)
    assert len(ep.decision_steps) == 2 and len(ep.sub_events) == 5
    assert ep.model_extra == {"_synthetic": True}


def test_many_files_globs_and_directories(tmp_path):
    write_json(tmp_path / "a.json", [good_episode(1)])
    write_json(tmp_path / "b.json", [good_episode(2), good_episode(3)])
    (tmp_path / "notes.txt").write_text("not a demo")
    assert open_demos(tmp_path).session_ids == [1, 2, 3]
    assert open_demos(str(tmp_path / "*.json")).session_ids == [1, 2, 3]
    assert open_demos([tmp_path / "b.json", tmp_path / "a.json"]).session_ids == [2, 3, 1]
    assert resolve_demo_paths([tmp_path / "a.json", str(tmp_path / "*.json")]) == [
        tmp_path / "a.json",
        tmp_path / "b.json",
    ]
    with pytest.raises(DemoFileError, match="no such file"):
        open_demos(tmp_path / "missing.json")
    with pytest.raises(DemoFileError, match="no file matches"):
        open_demos(str(tmp_path / "*.jsonx"))


MALFORMED = [
    (lambda: {"instruction": "x", "trajectory": []}, "session_id", "Field required|missing"),
    (lambda: episode(7, {"steps": []}), "trajectory", "list"),
    (lambda: episode(8, "oops"), "trajectory", "list"),
    (lambda: episode("eight", []), "session_id", "integer"),
    (lambda: episode(9, [search_step(0, reward="lots")]), "trajectory[0].reward", "number"),
    (lambda: episode(9, [search_step(0), 5]), "trajectory[1]", "not an object"),
    (lambda: episode(9, [search_step(0, step_number="zero")]), "trajectory[0].step_number", "integer"),
    (lambda: episode(9, [], success="maybe"), "success", "bool"),
]


@pytest.mark.parametrize(("make", "field", "message"), MALFORMED)
def test_malformed_episode_is_a_problem_naming_file_index_and_field(tmp_path, make, field, message):
    path = write_json(tmp_path / "mixed.json", [good_episode(1), make(), good_episode(2)])
    demos = open_demos(path)
    demos.validate_all()
    assert demos.session_ids in ([1, 2], [1, 9, 2], [1, 7, 2], [1, 8, 2])
    problems = demos.problems
    assert len(problems) == 1
    problem = problems[0]
    assert problem.file == str(path)
    assert problem.index == 1
    assert problem.field == field
    assert pytest.importorskip("re").search(message, problem.message)
    line = problem.one_line()
    assert str(path) in line and "episode #1" in line and field in line
    for sid in (1, 2):
        assert demos.episode(sid).session_id == sid


def test_bad_episode_raises_on_open_and_others_stay_usable(tmp_path):
    # the recorded call is invalid: no default can stand in for it (an invalid `done` is read as its
    # default instead, see test_an_invalid_field_is_a_problem_of_its_step_and_the_episode_loads)
    path = write_json(tmp_path / "m.json", [good_episode(1), episode(9, [search_step(0, llm_action_arguments=[1])])])
    demos = open_demos(path)
    assert 9 in demos  # indexing only checks the header
    with pytest.raises(EpisodeLoadError) as info:
        demos.episode(9)
    assert info.value.problem.field == "trajectory[0].llm_action_arguments"
    assert demos.problem_for(9) is info.value.problem
    assert demos.episode(1).session_id == 1


def test_an_invalid_field_is_a_problem_of_its_step_and_the_episode_loads(tmp_path):
    """Issue 16: ``trajectory[1].reward = "abc"`` used to hide the whole episode behind one error."""
    bad = good_episode(9)
    bad["trajectory"][1]["reward"] = "abc"
    bad["trajectory"][3]["observation_before_action"] = 5  # a sub-event's field: the same
    path = write_json(tmp_path / "m.json", [good_episode(1), bad])
    demos = open_demos(path)
    loaded = demos.episode(9)
    assert demos.problem_for(9) is None  # usable
    assert len(loaded.trajectory) == len(bad["trajectory"]) and loaded.trajectory[1].reward == 0.0
    assert loaded.trajectory[2].observation_before_llm == bad["trajectory"][2]["observation_before_llm"]
    reward, observation = loaded.problems
    assert (reward.field, reward.index, reward.session_id, reward.severity) == ("trajectory[1].reward", 1, 9, "warning")
    assert reward.message.startswith("'abc': Input should be a valid number") and "read as 0.0" in reward.message
    assert observation.field == "trajectory[3].observation_before_action" and "read as ''" in observation.message
    assert loaded.problems_at(1) == [reward] and loaded.problems_at(2) == [] and loaded.problems_at(3) == [observation]
    assert reward.one_line().startswith(f"{path}: episode #1 (session 9): field trajectory[1].reward: 'abc': ")
    assert demos.problems == [reward, observation]
    demos.episode(9)
    assert demos.problems == [reward, observation]  # recorded once
    fresh = open_demos(path)
    fields = [p.field for p in fresh.validate_all()]
    assert fields == ["trajectory[1].reward", "trajectory[3].observation_before_action"]


def test_duplicate_session_id_keeps_the_first(tmp_path):
    write_json(tmp_path / "a.json", [good_episode(1), good_episode(2)])
    write_json(
        tmp_path / "b.json",
        [
            good_episode(
                2,
            ),
            good_episode(3),
        ],
    )
    demos = open_demos(tmp_path)
    assert demos.session_ids == [1, 2, 3]
    assert demos.ref(2).file.name.endswith("a.json")
    [problem] = demos.problems
    assert problem.field == "session_id" and "duplicate" in problem.message
    assert problem.file.endswith("b.json") and problem.index == 0


def test_numeric_string_session_ids_are_accepted(tmp_path):
    demos = open_demos(write_json(tmp_path / "s.json", [good_episode("5")]))
    assert demos.session_ids == [5]


def test_non_json_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text("hello world\nthis is not json\n")
    with pytest.raises(DemoFileError) as info:
        open_demos(path)
    message = str(info.value)
    assert "\n" not in message and "not a JSON demo file" in message and str(path) in message
    empty = tmp_path / "empty.json"
    empty.write_text("   \n")
    with pytest.raises(DemoFileError, match="empty"):
        DemoFile(empty)


def test_truncated_file_recovers_complete_episodes(tmp_path):
    text = json.dumps([good_episode(i) for i in range(5)])
    cut = text.index('"session_id": 3')
    path = tmp_path / "cut.json"
    path.write_text(text[: cut + 40])
    demos = open_demos(path)
    assert demos.session_ids == [0, 1, 2]
    [error] = demos.file_errors
    assert "truncated" in error and "episode #3 is incomplete" in error and "\n" not in error
    assert demos.episode(2).session_id == 2


def test_invalid_json_inside_one_episode(tmp_path):
    text = json.dumps([good_episode(i) for i in range(3)], indent=1)
    broken = text.replace('"reward": 1.0', '"reward": 1.0.0', 1)
    path = tmp_path / "broken.json"
    path.write_text(broken)
    demos = open_demos(path)
    assert demos.file_errors and "invalid JSON" in demos.file_errors[0]
    demos.validate_all()
    bad = [p for p in demos.problems if p.index is not None]
    assert len(bad) == 1
    usable = [sid for sid in demos.session_ids if demos.problem_for(sid) is None]
    assert len(usable) == 2


def test_top_level_non_objects_are_problems(tmp_path):
    path = write_json(tmp_path / "odd.json", [good_episode(1), "text", [1, 2], good_episode(2)])
    demos = open_demos(path)
    assert demos.session_ids == [1, 2]
    assert sorted(p.index for p in demos.problems) == [1, 2]


def test_json_lines_and_byte_order_mark(tmp_path):
    path = tmp_path / "demos.jsonl"
    path.write_text("\n".join(json.dumps(good_episode(i)) for i in (4, 5)) + "\n")
    assert open_demos(path).session_ids == [4, 5]
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps([good_episode(6)]).encode())
    demos = open_demos(bom)
    assert demos.session_ids == [6]
    assert demos.episode(6).session_id == 6


def test_strings_with_brackets_quotes_and_escapes_do_not_confuse_the_index(tmp_path):
    tricky = good_episode(1)
    tricky["instruction"] = 'a "quoted" [bold red]x[/] {brace} \\ back\\\\slash ]}'
    tricky["trajectory"][0]["llm_thinking"] = '"step_number": 99, {"type": "x"} ]]]'
    path = write_json(tmp_path / "t.json", [tricky, good_episode(2)])
    demos = open_demos(path)
    assert demos.session_ids == [1, 2]
    assert demos.ref(1).decision_steps == 3
    assert demos.ref(1).task == tricky["instruction"]
    # the tolerant path (used for broken files) must agree
    path.write_text(json.dumps([tricky, good_episode(2)]) + " trailing")
    demos = open_demos(path)
    assert demos.session_ids == [1, 2] and demos.ref(1).decision_steps == 3
    assert "after the JSON array" in demos.file_errors[0]


def test_json_lines_with_a_cut_line_keep_every_other_episode(tmp_path):
    import json as _json

    from replay_tui.examples import example_path

    episodes = _json.loads(example_path().read_text())
    lines = [_json.dumps(e) for e in episodes]
    lines[1] = lines[1][: len(lines[1]) // 2]  # cut mid-record
    lines[50] = "{" * 300 + "}" * 300  # nested too deep for one record
    path = tmp_path / "demos.jsonl"
    path.write_text("\n".join(lines) + "\n\n")
    demos = open_demos([path])
    assert len(demos) == 98
    assert set(demos.session_ids) == {e["session_id"] for i, e in enumerate(episodes) if i not in (1, 50)}
    messages = sorted(p.one_line() for p in demos.problems)
    assert len(messages) == 2
    assert "line 2 is not a complete JSON value" in messages[0] or "line 2 is not a complete JSON value" in messages[1]
    assert any("line 51: nested more than" in m for m in messages)
    assert demos.episode(episodes[99]["session_id"]).session_id == episodes[99]["session_id"]


def test_python_written_nan_is_named_on_its_field_and_the_rest_is_usable(tmp_path):
    import json as _json

    from replay_tui.examples import example_path

    episodes = _json.loads(example_path().read_text())[:4]
    episodes[0]["final_reward"] = float("nan")
    episodes[2]["trajectory"][0]["reward"] = float("inf")
    path = tmp_path / "nan.json"
    path.write_text(_json.dumps(episodes))  # Python writes NaN and Infinity, which JSON has not
    demos = open_demos([path])
    problems = demos.problems + demos.validate_all()
    fields = {(p.index, p.field) for p in problems}
    assert fields == {(0, "final_reward"), (2, "trajectory[0].reward")}
    assert all("is not a JSON number" in p.message for p in problems)
    assert not demos.file_errors  # the file itself is fine
    assert demos.episode(episodes[1]["session_id"]).session_id == episodes[1]["session_id"]
