"""Behaviour of the synthetic demo generator (replay_tui.formats.webshop_demos.synth)."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from replay_tui.actions import format_env_action, normalize_action
from replay_tui.formats.webshop_demos import synth

EPISODE_KEYS = {"session_id", "instruction", "trajectory", "final_reward", "success", "completed_by_backup"}
STEP_KEYS = {
    "step_number",
    "observation_before_llm",
    "llm_prompt",
    "llm_thinking",
    "llm_action_name",
    "llm_action_arguments",
    "state",
    "available_actions",
    "observation_after_action",
    "reward",
    "done",
}
SUB_EVENT_TYPES = {
    "item_page_action",
    "detail_exploration",
    "back_from_detail",
    "customization_click",
    "agent_buy",
    "backup_agent_reset",
    "backup_agent_search",
    "backup_agent_click",
    "backup_agent_option",
    "backup_agent_buy",
}
ASIN = re.compile(r"^B0[0-9A-Z]{8}$")


def _steps(episode: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in episode["trajectory"] if "step_number" in e]


def _args(step: dict[str, Any]) -> dict[str, Any]:
    args = step["llm_action_arguments"]
    return json.loads(args) if isinstance(args, str) else args


@pytest.fixture(scope="module")
def clean() -> list[dict[str, Any]]:
    return list(synth.iter_episodes(0, 120, seed=7))


@pytest.fixture(scope="module")
def quirky() -> list[dict[str, Any]]:
    return list(synth.iter_episodes(0, 60, seed=7, quirk_rate=1.0))


# ---- determinism ---------------------------------------------------------------------------------


def test_same_arguments_give_identical_bytes(tmp_path: Path) -> None:
    a = synth.write_demo_file(tmp_path / "a.json", 3, 12, seed=5, quirk_rate=0.3)
    b = synth.write_demo_file(tmp_path / "b.json", 3, 12, seed=5, quirk_rate=0.3)
    assert a.episodes == b.episodes == 12
    assert a.path.read_bytes() == b.path.read_bytes()
    assert a.bytes == a.path.stat().st_size


PINNED = {
    # (start, count, seed, quirk rate, indent): sha256 of the file, as written before the generator
    # was split by concern; a refactor keeps every byte (the bundled example pins seed 0 below).
    (0, 3, 0, 0.0, False): "4bd488d393edf15ee75362cdf3ed021589901c63349619f554a78f8c029efcde",
    (5, 4, 1, 1.0, True): "073b88dce3e8d1da8d7ba7f68f01c21717ee58eb8a3b53a98a70ee0fcfdf6b5c",
    (40, 5, 2024, 0.5, False): "90ef64d0ad0bfd5e402de9bd8855303db888b100297444da2452d7f0d0d54e83",
}


@pytest.mark.parametrize("case", list(PINNED), ids=str)
def test_output_is_pinned_for_other_seeds(tmp_path: Path, case: tuple[int, int, int, float, bool]) -> None:
    start, count, seed, quirk_rate, indent = case
    stats = synth.write_demo_file(tmp_path / "demo.json", start, count, seed, quirk_rate=quirk_rate, indent=indent)
    assert hashlib.sha256(stats.path.read_bytes()).hexdigest() == PINNED[case]


def test_episode_does_not_depend_on_count_or_start() -> None:
    five = list(synth.iter_episodes(0, 5, seed=3, quirk_rate=0.5))
    ten = list(synth.iter_episodes(0, 10, seed=3, quirk_rate=0.5))
    assert five == ten[:5]
    assert list(synth.iter_episodes(4, 1, seed=3, quirk_rate=0.5)) == [ten[4]]


def test_seed_changes_the_episodes() -> None:
    assert list(synth.iter_episodes(0, 3, seed=0)) != list(synth.iter_episodes(0, 3, seed=1))


def test_generate_episode_is_a_function_of_the_rng() -> None:
    one = synth.generate_episode(9, random.Random(42))
    two = synth.generate_episode(9, random.Random(42))
    assert one == two
    assert one["session_id"] == 9


def test_quirks_do_not_change_the_clean_content() -> None:
    plain = synth.generate_episode(1, random.Random("x"))
    messy = synth.generate_episode(1, random.Random("x"), quirks=True)
    assert [s["observation_before_llm"] for s in _steps(plain)] == [s["observation_before_llm"] for s in _steps(messy)]
    assert plain["final_reward"] == messy["final_reward"]


# ---- contract ------------------------------------------------------------------------------------


def test_episode_keys_and_outcome_fields(clean: list[dict[str, Any]]) -> None:
    for ep in clean:
        assert ep.keys() >= EPISODE_KEYS
        assert isinstance(ep["session_id"], int)
        assert isinstance(ep["final_reward"], float)
        assert 0.0 <= ep["final_reward"] <= 1.0
        assert ep["success"] is (ep["final_reward"] == 1.0)
        assert isinstance(ep["completed_by_backup"], bool)
        assert ep["instruction"].endswith(" dollars")
        assert re.search(r", and price lower than \d+0\.00 dollars$", ep["instruction"])
    assert [ep["session_id"] for ep in clean] == list(range(120))


def test_decision_steps_shape_and_numbering(clean: list[dict[str, Any]]) -> None:
    for ep in clean:
        steps = _steps(ep)
        assert steps, ep["session_id"]
        assert [s["step_number"] for s in steps] == list(range(len(steps)))
        for s in steps:
            assert STEP_KEYS | {"action_executed_in_env"} <= s.keys()
            assert s["reward"] == 0.0 and s["done"] is False
            assert s["observation_before_llm"].startswith("Current observation:\n")
        for e in ep["trajectory"]:
            if "step_number" not in e:
                assert e["type"] in SUB_EVENT_TYPES


def test_prompt_round_trips_as_chat_messages(clean: list[dict[str, Any]]) -> None:
    for ep in clean[:40]:
        for s in _steps(ep):
            messages = ast.literal_eval(s["llm_prompt"])
            assert isinstance(messages, list) and len(messages) >= 2
            assert all(isinstance(m, dict) and {"role", "content"} <= m.keys() for m in messages)
            assert messages[0]["role"] == "system"
            assert messages[-1]["role"] == "user"
            assert s["observation_before_llm"] in messages[-1]["content"]


def test_recorded_action_matches_the_tool_call(clean: list[dict[str, Any]], quirky: list[dict[str, Any]]) -> None:
    checked = 0
    for ep in [*clean, *quirky]:
        for s in _steps(ep):
            recorded = s.get("action_executed_in_env")
            if not recorded:
                continue
            formatted = format_env_action(s["llm_action_name"], _args(s))
            assert normalize_action(formatted) == normalize_action(recorded)
            checked += 1
    assert checked > 300


def test_state_and_available_actions(clean: list[dict[str, Any]]) -> None:
    for ep in clean:
        for s in _steps(ep):
            obs = s["observation_before_llm"]
            if "Back to Search" in obs:
                assert s["state"] == "Result"
                page = int(re.search(r"Page (\d+) \(Total results: 50\)", obs).group(1))
                expected = {"select_item", "Next", "Back_to_Search"} | ({"Prev"} if page > 1 else set())
                assert set(s["available_actions"]) == expected
                assert s["llm_action_name"] in expected
                assert ("[button] < Prev [button_]" in obs) == (page > 1)
                assert "[button] Next > [button_]" in obs
            else:
                assert s["state"] == "Search"
                assert s["available_actions"] == ["Search"]
                assert s["llm_action_name"] == "Search"
                assert set(s["llm_action_arguments"]) == {"keywords", "max_price"}


def test_observations_chain_between_steps(clean: list[dict[str, Any]]) -> None:
    """Each step sees (blank lines collapsed) the page the previous action or item-page event led to."""
    for ep in clean:
        last_page = None
        for e in ep["trajectory"]:
            if "step_number" in e:
                if last_page is not None:
                    collapsed = "\n".join(line for line in last_page.split("\n") if line.strip())
                    assert e["observation_before_llm"] == "Current observation:\n" + collapsed
                last_page = e["observation_after_action"]
            elif e["type"] == "item_page_action":
                assert e["observation_before_action"] == last_page
                last_page = e["observation_after_action"]
            elif e["type"] in ("back_from_detail", "customization_click"):
                last_page = e["observation_after_action"]


def test_results_pages_look_like_webshop(clean: list[dict[str, Any]]) -> None:
    for ep in clean[:30]:
        for s in _steps(ep):
            page = s["observation_after_action"]
            if "Total results: 50" not in page:
                continue
            asins = re.findall(r"^\[(?:clicked )?button\] (B0\w+) \[(?:clicked )?button_\]$", page, re.M)
            assert len(asins) == 10 and all(ASIN.match(a) for a in asins)
            assert len(set(asins)) == 10
            prices = re.findall(r"^\$\d+\.\d\d(?: to \$\d+\.\d\d)?$", page, re.M)
            assert len(prices) == 10


def test_item_page_sub_events(clean: list[dict[str, Any]]) -> None:
    seen = Counter()
    for ep in clean:
        trajectory = ep["trajectory"]
        for i, e in enumerate(trajectory):
            if "step_number" in e:
                continue
            seen[e["type"]] += 1
            if e["type"] == "item_page_action":
                name = e["llm_action"]["name"]
                assert {"Description", "Features", "Reviews", "Buy_Now", "Prev"} <= set(e["available_options"])
                assert "Rating: N.A." in e["observation_before_action"]
                nxt = trajectory[i + 1] if i + 1 < len(trajectory) else None
                if name in ("Description", "Features", "Reviews"):
                    assert nxt["type"] == "detail_exploration" and nxt["detail"] == name.lower()
                    assert trajectory[i + 2]["type"] == "back_from_detail"
                    assert trajectory[i + 2]["action"] == "click[< Prev]"
                elif name == "select_option":
                    value = e["llm_action"]["arguments"]["value"]
                    assert value in e["available_options"]
                    assert nxt["type"] == "customization_click" and nxt["option_value"] == value
                    assert nxt["action"] == f"click[{value}]"
                    assert nxt["observation_after_action"].startswith(f"You have clicked {value}.\n")
                    assert f"[clicked button] {value} [clicked button_]" in nxt["observation_after_action"]
                elif name == "Buy_Now":
                    assert nxt["type"] == "agent_buy" and nxt["action"] == "click[Buy Now]"
                    assert nxt["done"] is True and e["done"] is True
                    assert nxt["reward"] == ep["final_reward"]
                    assert nxt["observation_after_action"].startswith("Thank you for shopping with us!")
                    assert f"\n{nxt['reward']!r}\n" in nxt["observation_after_action"]
                else:
                    assert name == "Prev"
                    assert "Total results: 50" in e["observation_after_action"]
    for kind in ("item_page_action", "detail_exploration", "back_from_detail", "customization_click", "agent_buy"):
        assert seen[kind] > 0, kind


def test_backup_episodes(clean: list[dict[str, Any]]) -> None:
    backups = [ep for ep in clean if ep["completed_by_backup"]]
    assert backups
    for ep in backups:
        types = [e.get("type") for e in ep["trajectory"]]
        assert "agent_buy" not in types
        assert len(_steps(ep)) >= 6
        for kind in ("backup_agent_reset", "backup_agent_search", "backup_agent_click", "backup_agent_buy"):
            assert kind in types
        buy = ep["trajectory"][-1]
        assert buy["type"] == "backup_agent_buy" and buy["done"] is True
        assert buy["reward"] == ep["final_reward"]
        for e in ep["trajectory"]:
            if str(e.get("type", "")).startswith("backup_agent_"):
                assert e["action"] and e["observation_after_action"]


def test_outcome_mix(clean: list[dict[str, Any]]) -> None:
    mix = Counter()
    for ep in clean:
        r = ep["final_reward"]
        mix["backup" if ep["completed_by_backup"] else "success" if r == 1.0 else "zero" if r == 0 else "partial"] += 1
    assert mix["success"] > 0.35 * len(clean)
    assert mix["partial"] > 0.15 * len(clean)
    assert mix["backup"] > 0
    partial = {round(ep["final_reward"], 2) for ep in clean if 0 < ep["final_reward"] < 1}
    assert len(partial) >= 3


def test_search_keywords_are_real_queries(clean: list[dict[str, Any]]) -> None:
    data = json.loads((Path(synth.__file__).parent / "data" / "goal_query_map.json").read_text("utf-8"))
    queries = {q.strip() for qs in data.values() for q in qs}
    for ep in clean:
        first = _steps(ep)[0]
        assert first["llm_action_arguments"]["keywords"] in queries


# ---- quirks --------------------------------------------------------------------------------------


def _quirk_kinds(episodes: list[dict[str, Any]]) -> Counter:
    kinds: Counter = Counter()
    for ep in episodes:
        for s in _steps(ep):
            kinds["step_str"] += isinstance(s["step_number"], str)
            kinds["reward_str"] += isinstance(s["reward"], str)
            kinds["done_str"] += isinstance(s["done"], str)
            kinds["args_json"] += isinstance(s["llm_action_arguments"], str)
            kinds["action_missing"] += "action_executed_in_env" not in s
            action = s.get("action_executed_in_env")
            kinds["action_empty"] += action == ""
            kinds["action_ws"] += bool(action) and action != normalize_action(action)
    return kinds


def test_quirks_appear_at_rate_one(quirky: list[dict[str, Any]]) -> None:
    kinds = _quirk_kinds(quirky)
    for kind in ("step_str", "reward_str", "done_str", "args_json", "action_missing", "action_empty", "action_ws"):
        assert kinds[kind] > 0, kind


def test_quirky_values_stay_valid(quirky: list[dict[str, Any]]) -> None:
    for ep in quirky:
        steps = _steps(ep)
        assert [int(s["step_number"]) for s in steps] == list(range(len(steps)))
        for s in steps:
            assert float(s["reward"]) == 0.0
            assert s["done"] in (False, "false")
            assert isinstance(_args(s), dict)


def test_no_quirks_at_rate_zero(clean: list[dict[str, Any]]) -> None:
    assert sum(_quirk_kinds(clean).values()) == 0


def test_quirk_rate_selects_some_episodes() -> None:
    episodes = list(synth.iter_episodes(0, 100, seed=2, quirk_rate=0.2))
    quirky = sum(1 for ep in episodes if sum(_quirk_kinds([ep]).values()))
    assert 5 <= quirky <= 40


# ---- files ---------------------------------------------------------------------------------------


def test_default_filename() -> None:
    assert synth.default_filename(0, 100) == "webshop_demonstrations_0-99.json"
    assert synth.default_filename(100, 50) == "webshop_demonstrations_100-149.json"


def test_written_file_is_the_episode_list(tmp_path: Path) -> None:
    for indent in (False, True):
        stats = synth.write_demo_file(tmp_path / f"d{indent}.json", 2, 4, seed=1, quirk_rate=0.5, indent=indent)
        data = json.loads(stats.path.read_text("utf-8"))
        assert data == list(synth.iter_episodes(2, 4, seed=1, quirk_rate=0.5))
        assert stats.episodes == 4 and stats.bytes == stats.path.stat().st_size
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_killed_runs_leftover_goes_and_a_rewrite_keeps_the_mode(tmp_path: Path) -> None:
    """The demo file is written as every file is (fileio.atomic_writer): a temporary file left by an
    earlier, killed ``generate`` of the same name is removed, and a file written again keeps its mode."""
    target = tmp_path / "demo.json"
    leftover = tmp_path / ".demo.json.k1ll3d00.tmp"
    leftover.write_bytes(b"[half a file")
    os.utime(leftover, (1_000_000_000, 1_000_000_000))
    synth.write_demo_file(target, 0, 2)
    assert not leftover.exists()
    target.chmod(0o600)
    synth.write_demo_file(target, 0, 3)
    assert target.stat().st_mode & 0o777 == 0o600
    assert len(json.loads(target.read_text("utf-8"))) == 3


def test_empty_file_is_valid_json(tmp_path: Path) -> None:
    stats = synth.write_demo_file(tmp_path / "empty.json", 0, 0)
    assert json.loads(stats.path.read_text("utf-8")) == [] and stats.episodes == 0


def test_target_bytes(tmp_path: Path) -> None:
    target = 2_000_000
    stats = synth.write_demo_file(tmp_path / "big.json", count=1, target_bytes=target)
    size = stats.path.stat().st_size
    assert size == stats.bytes
    assert target <= size <= target * 1.1
    data = json.loads(stats.path.read_bytes())
    assert len(data) == stats.episodes > 1
    assert [ep["session_id"] for ep in data] == list(range(stats.episodes))


def test_bundled_example_is_reproducible(tmp_path: Path) -> None:
    bundled = synth.bundled_example_path()
    assert bundled.name == "webshop_demonstrations_0-99.json"
    assert bundled.exists(), "run `replay-tui generate --bundled` to generate it"
    regenerated = synth.write_bundled_example(tmp_path / bundled.name)
    assert regenerated.path.read_bytes() == bundled.read_bytes()
    assert regenerated.bytes < 5_000_000
    data = json.loads(bundled.read_text("utf-8"))
    assert data == list(synth.iter_episodes(0, 100, synth.BUNDLED_SEED, quirk_rate=synth.BUNDLED_QUIRK_RATE))
