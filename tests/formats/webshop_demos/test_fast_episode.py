"""The replay's fast reading of clean episodes (replay_tui.formats.webshop_demos.fast) stands for the parsed episode.

Every episode the fast path accepts must be one the pydantic path accepts, with the same replay
steps (every field, the recorded decision policies receive, the WebShop call the stub reads) and the
same header answers; anything else must fall back. Checked over the bundled example, synthetic files
with and without quirks, and every case of the hostile corpus; then whole replays with and without
the fast path give the same reports.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from replay_tui.env import OfflineWebshopEnv, replay_steps
from replay_tui.episodes.problems import EpisodeLoadError
from replay_tui.formats.webshop_demos import synth
from replay_tui.formats.webshop_demos.fast import FastEpisode, decode_fast
from replay_tui.formats.webshop_demos.index import DemoFile, open_demos
from replay_tui.formats.webshop_demos.trajectory import from_webshop_episode
from replay_tui.policies import HeuristicPolicy, StubPolicy
from replay_tui.runner import Runner
from replay_tui.sources import facts_of
from tests.hostile import CASES, good, js, splice, step, write_corpus

EXAMPLE = Path(__file__).resolve().parents[3] / "replay_tui" / "examples" / "webshop_demonstrations_0-99.json"
HEADER = ("session_id", "instruction", "final_reward", "success", "completed_by_backup", "reward", "succeeded")


def _step_fields(step_: Any) -> dict[str, Any]:
    fields = {f.name: getattr(step_, f.name) for f in dataclasses.fields(step_) if f.name != "source"}
    return {**fields, "recorded": step_.recorded, "webshop_call": step_.webshop_call}


def compare_file(path: Path) -> tuple[int, int]:
    """(fast readings, episodes) of ``path``; asserts each fast reading stands for the parsed episode."""
    demos = open_demos(path)
    fast_count = 0
    for demo in demos.files:
        assert isinstance(demo, DemoFile)
        for ref in demo.episodes:
            fast = demo.read_fast(ref)
            if fast is None:
                continue
            fast_count += 1
            assert isinstance(fast, FastEpisode)
            episode = demo.read_episode(ref)  # never raises: a fast reading is a valid episode
            assert not episode.problems, ref.index
            for name in HEADER:
                assert getattr(fast, name) == getattr(episode, name), (path.name, ref.index, name)
            assert fast.episode_id == episode.episode_id
            trajectory = from_webshop_episode(episode)
            for items in (False, True):
                ours = [_step_fields(s) for s in replay_steps(fast, include_item_steps=items)]
                theirs = [_step_fields(s) for s in replay_steps(trajectory, include_item_steps=items)]
                assert ours == theirs, (path.name, ref.index, items)
    return fast_count, len(demos)


def test_the_bundled_example_reads_fast_and_the_same():
    fast, total = compare_file(EXAMPLE)
    assert total == 100 and fast >= 85  # most of the example is the contract's exact form (some have quirks)


@pytest.mark.parametrize("quirk_rate", [0.0, 0.6])
def test_synthetic_files_read_fast_and_the_same(tmp_path, quirk_rate):
    path = tmp_path / "synth.json"
    synth.write_demo_file(path, start=0, count=120, seed=11, quirk_rate=quirk_rate)
    fast, total = compare_file(path)
    assert total == 120
    if quirk_rate == 0:
        assert fast == total
    else:  # quirks (numeric strings, "true" as text, missing fields...) take the pydantic path
        assert 0 < fast < total


def test_every_hostile_case_reads_fast_only_when_valid(tmp_path):
    paths = write_corpus(tmp_path)
    checked = 0
    for case in CASES:
        try:
            checked += compare_file(paths[case.name])[0]
        except Exception as exc:  # a file that cannot be opened at all has nothing to read fast
            assert type(exc).__name__ == "DemoFileError", (case.name, exc)
    assert checked > 20


def _one(tmp_path: Path, data: bytes) -> tuple[DemoFile, Any]:
    path = tmp_path / "one.json"
    path.write_bytes(b"[" + data + b"]")
    demo = DemoFile(path)
    return demo, demo.episodes[0]


FALLBACKS = {
    # what the typed decode skips unchecked must still be checked: unknown fields fall back
    "invalid UTF-8 in an unknown field": splice(good(extra="MARK"), "MARK", b'"\xff\xfe"'),
    "a float overflow in an unknown field": splice(good(extra="MARK"), "MARK", b"1e400"),
    "an unknown episode field": js(good(model="gpt")),
    "an unknown step field": js(good(trajectory=[step(0, latency=3)])),
    "done as text": js(good(trajectory=[step(0, done="true")])),
    "a numeric string step number": js(good(trajectory=[step("0")])),
    "an integral float session id": js(good(session_id=1.0)),
    "a tool call of another format": js(good(trajectory=[step(0, tool_call=True)])),
    "a sub-event field on a decision step": js(good(trajectory=[step(0, observation_before_action="x")])),
    "arguments as a JSON string of a list": js(good(trajectory=[step(0, llm_action_arguments="[1]")])),
}


@pytest.mark.parametrize("name", list(FALLBACKS))
def test_anything_but_the_exact_form_takes_the_pydantic_path(tmp_path, name):
    demo, ref = _one(tmp_path, FALLBACKS[name])
    assert demo.read_fast(ref) is None
    try:
        demo.read_episode(ref)  # which accepts, repairs or names the problem as before
    except EpisodeLoadError as exc:
        assert exc.problem.message


def test_the_problems_the_typed_decode_would_skip_are_still_problems(tmp_path):
    for data in (FALLBACKS["invalid UTF-8 in an unknown field"], FALLBACKS["a float overflow in an unknown field"]):
        demos = open_demos(_one(tmp_path, data)[0].path)
        with pytest.raises(EpisodeLoadError):
            demos.replay_episode(1)
        assert len(demos.problems) == 1


def test_duplicate_keys_read_as_the_dict_decode_reads_them():
    raw = js(good()).replace(b'"instruction": "buy a red mug"', b'"instruction": "first", "instruction": "last"')
    fast = decode_fast(raw)
    assert fast is not None and fast.instruction == "last"


def test_a_rebuilt_action_reads_the_same(tmp_path):
    data = js(good(trajectory=[step(0, action_executed_in_env=" "), step(1, action_executed_in_env=None)]))
    demo, ref = _one(tmp_path, data)
    fast = demo.read_fast(ref)
    assert fast is not None and [e.action_rebuilt for e in fast.trajectory] == [True, True]
    steps = replay_steps(fast)
    assert [s.expected for s in steps] == ["search[red mug]", "search[red mug]"]
    assert all("rebuilt" in s.warnings[0] for s in steps)
    parsed = from_webshop_episode(demo.read_episode(ref))
    assert [_step_fields(s) for s in steps] == [_step_fields(s) for s in replay_steps(parsed)]


def test_arguments_as_a_json_string_read_fast_and_the_same(tmp_path):
    data = js(good(trajectory=[step(0, llm_action_arguments='{"keywords": "red mug"}', action_executed_in_env="")]))
    demo, ref = _one(tmp_path, data)
    fast = demo.read_fast(ref)
    assert fast is not None and fast.trajectory[0].llm_action_arguments == {"keywords": "red mug"}
    parsed = from_webshop_episode(demo.read_episode(ref))
    assert [_step_fields(s) for s in replay_steps(fast)] == [_step_fields(s) for s in replay_steps(parsed)]


def test_the_reward_of_an_episode_without_final_reward_reads_the_same(tmp_path):
    """``reward`` and ``succeeded`` then come from the last rewarded entry (a sub-event here)."""
    for last in (1.0, 0.5, 0):
        episode = good()
        del episode["final_reward"], episode["success"]
        episode["trajectory"] += [
            {"type": "detail_exploration", "detail": "Reviews", "action": "click[reviews]", "observation": "…"},
            {"type": "agent_buy", "action": "click[buy now]", "observation_after_action": "Thank you", "reward": last},
        ]
        demo, ref = _one(tmp_path, js(episode))
        fast, parsed = demo.read_fast(ref), demo.read_episode(ref)
        assert fast is not None
        assert (fast.reward, fast.succeeded) == (parsed.reward, parsed.succeeded) == (last or 1.0, last in (0, 1.0))
        facts = facts_of(from_webshop_episode(parsed))  # what a replay's report reads of its Trajectory
        assert (facts.reward, facts.succeeded) == (fast.reward, fast.succeeded)


def _reports(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch, **settings: Any) -> list[dict[str, Any]]:
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(DemoFile, "read_fast", lambda self, ref: None)
        demos = open_demos(path)
        policy = settings.pop("policy")
        summary = Runner(OfflineWebshopEnv(demos, **settings), policy).run_all()
    return [episode.model_dump() for episode in summary.episodes] + [
        {"problems": [p.model_dump() for p in demos.problems]}
    ]


@pytest.mark.parametrize(
    "settings",
    [
        {"policy": StubPolicy()},
        {"policy": HeuristicPolicy(), "mismatch_policy": "allow", "include_item_steps": True},
        {"policy": HeuristicPolicy(), "mismatch_policy": "stop"},
    ],
    ids=["stub", "heuristic-allow-items", "heuristic-stop"],
)
def test_replays_report_the_same_with_and_without_the_fast_path(tmp_path, monkeypatch, settings):
    path = tmp_path / "synth.json"
    synth.write_demo_file(path, start=0, count=60, seed=5, quirk_rate=0.3)
    with_fast = _reports(path, True, monkeypatch, **dict(settings))
    without = _reports(path, False, monkeypatch, **dict(settings))
    assert with_fast == without
    assert len(with_fast) > 50


def test_the_env_still_hands_out_the_episode_as_the_one_model():
    env = OfflineWebshopEnv(EXAMPLE)
    env.reset(env.demos.session_ids[0])
    assert isinstance(env.replayed, FastEpisode)
    trajectory = env.trajectory
    assert trajectory is not None and trajectory.id == str(env.replayed.session_id)
    assert trajectory.decisions == len(env.steps)
