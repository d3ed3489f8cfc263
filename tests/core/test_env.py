import pytest

from replay_tui.env import EpisodeFinished, OfflineWebshopEnv
from tests.conftest import (
    INSTRUCTION,
    ITEM_OBS,
    episode,
    good_episode,
    item_action,
    result_step,
    search_step,
    write_json,
)


def test_reset_and_matching_steps_replay_the_recording(demo_file):
    env = OfflineWebshopEnv(demo_file)
    obs, info = env.reset(10)
    assert obs.startswith("Current observation:\nWebShop")
    assert info["total_steps"] == 3 and info["step_index"] == 0 and info["state"] == "Search"
    obs, reward, done, info = env.step("search[ long  clip-in hair extension ]")
    assert info["match"] and info["expected"] == "search[long clip-in hair extension]"
    assert info["step_number"] == 0 and info["state"] == "Search"
    assert "Page 1" in obs and reward == 0.0 and not done
    env.step("click[Next >]")
    obs, reward, done, info = env.step("click[B09C337K8S]")
    assert info["match"] and info["exhausted"]
    assert "Buy Now" in obs
    with pytest.raises(EpisodeFinished):
        env.step("click[Buy Now]")


def test_mismatch_stop_ends_the_episode_without_advancing(demo_file):
    env = OfflineWebshopEnv(demo_file, mismatch_policy="stop")
    first, _ = env.reset(10)
    obs, reward, done, info = env.step("search[something else]")
    assert not info["match"] and info["stopped"]
    assert obs == first and reward == 0.0 and done
    assert env.current is None


def test_mismatch_allow_forces_the_recorded_action(demo_file):
    env = OfflineWebshopEnv(demo_file, mismatch_policy="allow")
    env.reset(10)
    obs, _, done, info = env.step("search[something else]")
    assert not info["match"] and info["forced"] and not done
    assert "Page 1" in obs
    assert env.current.step_number == 1


def test_missing_state_and_actions_are_inferred_with_a_warning(tmp_path):
    s0 = search_step(0)
    r1 = result_step(1, page=2)
    for step in (s0, r1):
        del step["state"]
        del step["available_actions"]
    env = OfflineWebshopEnv(write_json(tmp_path / "d.json", [episode(1, [s0, r1])]))
    _, info = env.reset(1)
    assert info["state"] == "Search" and info["available_actions"] == ["Search"]
    assert any("inferred" in w for w in info["warnings"])
    env.step("search[long clip-in hair extension]")
    assert env.current.state == "Result"
    assert env.current.available_actions == ["select_item", "Next", "Prev", "Back_to_Search"]


def test_done_in_mid_episode_ends_it(tmp_path):
    steps = [search_step(0), result_step(1, done="true", reward="0.5"), result_step(2)]
    env = OfflineWebshopEnv(write_json(tmp_path / "d.json", [episode(1, steps)]))
    env.reset(1)
    env.step("search[long clip-in hair extension]")
    _, reward, done, info = env.step("click[B09C337K8S]")
    assert done and reward == 0.5 and not info["exhausted"]
    assert env.current is None


def test_item_steps_replay_item_page_actions_in_state_item(tmp_path):
    trajectory = [
        search_step(0),
        result_step(1),
        item_action("Description"),
        {"type": "back_from_detail", "action": "click[< Prev]", "observation_after_action": "x"},
        item_action("select_option", {"value": "natural black"}),
        item_action("Buy_Now", reward=1.0, done=True),
    ]
    path = write_json(tmp_path / "d.json", [episode(1, trajectory)])
    assert OfflineWebshopEnv(path).reset(1)[1]["total_steps"] == 2
    env = OfflineWebshopEnv(path, include_item_steps=True)
    _, info = env.reset(1)
    assert info["total_steps"] == 5
    labels = [(s.label, s.state, s.expected) for s in env.steps]
    assert labels[2:] == [
        ("1.1", "Item", "click[description]"),
        ("1.2", "Item", "click[natural black]"),
        ("1.3", "Item", "click[Buy Now]"),
    ]
    for action in (
        "search[long clip-in hair extension]",
        "click[B09C337K8S]",
        "click[description]",
        "click[natural black]",
    ):
        assert env.step(action)[3]["match"]
    obs, reward, done, info = env.step("click[Buy Now]")
    assert done and reward == 1.0 and info["match"] and obs.startswith("Thank you")
    assert env.steps[2].observation == ITEM_OBS.format(instr=INSTRUCTION)


def test_case_policy_applies(demo_file):
    env = OfflineWebshopEnv(demo_file, case="lower")
    env.reset(10)
    assert env.step("SEARCH[Long Clip-In Hair Extension]")[3]["match"]


def test_unknown_session_and_bad_policy_name(demo_file):
    env = OfflineWebshopEnv(demo_file)
    with pytest.raises(KeyError):
        env.reset(999)
    with pytest.raises(ValueError):
        OfflineWebshopEnv(demo_file, mismatch_policy="ignore")


def test_recorded_step_dict_for_policies(demo_file):
    env = OfflineWebshopEnv(demo_file, include_item_steps=True)
    env.reset(10)
    recorded = env.current.recorded
    assert recorded["llm_action_name"] == "Search" and recorded["state"] == "Search"
    assert recorded["action_executed_in_env"] == "search[long clip-in hair extension]"
    item = env.steps[3].recorded
    assert item["llm_action_name"] == "Description" and item["state"] == "Item"
    assert good_episode(1)["trajectory"][3]["type"] == "item_page_action"
