import sys
import textwrap
from typing import Any

import pytest

from replay_tui.policies import (
    HeuristicPolicy,
    PolicyLoadError,
    StubPolicy,
    accepts_recorded_step,
    builtin_policy,
    load_policy,
)
from replay_tui.policies.heuristic import search_keywords
from tests.conftest import INSTRUCTION, ITEM_OBS, RESULT_OBS, SEARCH_OBS

POLICY_FILE = textwrap.dedent("""
    class Echo:
        name = "echo"

        def predict_action(self, observation, state, available_actions, llm_prompt_repr):
            return "click[Next >]"

    echo = Echo()

    def make():
        return Echo()

    def plain(observation, state, available_actions, llm_prompt_repr, recorded_step=None):
        return recorded_step["action_executed_in_env"] if recorded_step else "search[x]"

    not_a_policy = 42
""")


@pytest.fixture
def policy_file(tmp_path):
    path = tmp_path / "my_policies.py"
    path.write_text(POLICY_FILE)
    return path


@pytest.mark.parametrize("attr", ["Echo", "echo", "make"])
def test_load_policy_from_file_as_class_object_or_factory(policy_file, attr):
    policy = load_policy(f"{policy_file}:{attr}")
    assert policy.predict_action("", "Result", [], None) == "click[Next >]"
    assert not accepts_recorded_step(policy)


def test_load_plain_function_wraps_it(policy_file):
    policy = load_policy(f"{policy_file}:plain")
    assert accepts_recorded_step(policy)
    assert policy.predict_action("", "Search", [], None, recorded_step={"action_executed_in_env": "a"}) == "a"


def test_load_policy_from_module(policy_file, monkeypatch):
    monkeypatch.syspath_prepend(str(policy_file.parent))
    sys.modules.pop("my_policies", None)
    assert load_policy("my_policies:Echo").name == "echo"
    assert isinstance(load_policy("replay_tui.policies.heuristic:HeuristicPolicy"), HeuristicPolicy)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nosuchmodule_xyz:Policy", "cannot import module"),
        ("replay_tui.policies:Missing", "no attribute"),
        ("missing_file.py:Echo", "does not exist"),
        ("{file}:not_a_policy", "without a predict_action"),
    ],
)
def test_load_policy_errors_are_one_line(policy_file, spec, message):
    with pytest.raises(PolicyLoadError, match=message) as info:
        load_policy(spec.format(file=policy_file))
    assert "\n" not in str(info.value)


def test_builtin_modes():
    assert isinstance(builtin_policy("stub"), StubPolicy)
    with pytest.raises(PolicyLoadError):
        builtin_policy("oracle")


def test_stub_needs_recorded_step_and_maps_the_tool_call():
    stub = StubPolicy()
    assert accepts_recorded_step(stub)
    step = {"llm_action_name": "select_item", "llm_action_arguments": '{"item_id": "B0ABCDEFGH"}'}
    assert stub.predict_action("", "Result", [], None, recorded_step=step) == "click[B0ABCDEFGH]"
    with pytest.raises(ValueError):
        stub.predict_action("", "Result", [], None)


def test_heuristic_reads_only_the_observation():
    policy = HeuristicPolicy()
    search = policy.predict_action(SEARCH_OBS.format(instr=INSTRUCTION), "Search", ["Search"], None)
    assert search == "search[long clip-in hair extension natural looking]"
    result_obs = RESULT_OBS.format(instr=INSTRUCTION, page=1, prev="")
    assert policy.predict_action(result_obs, "Result", ["select_item", "Next"], None) == "click[B09C337K8S]"
    item_obs = ITEM_OBS.format(instr=INSTRUCTION.replace("natural looking", "natural black"))
    assert policy.predict_action(item_obs, "Item", [], None) == "click[natural black]"
    assert policy.predict_action(ITEM_OBS.format(instr=INSTRUCTION), "Item", [], None) == "click[Buy Now]"


def test_heuristic_pages_on_when_nothing_fits():
    obs = RESULT_OBS.format(
        instr="i want a stainless steel garlic press, and price lower than 20.00 dollars", page=1, prev=""
    )
    assert HeuristicPolicy().predict_action(obs, "Result", ["select_item", "Next"], None) == "click[Next >]"


def test_search_keywords_drop_filler_and_price():
    assert search_keywords("I am looking for a red dress with pockets, and price lower than 50.00 dollars") == (
        "red dress pockets"
    )


def test_the_stub_answers_from_the_step_as_from_its_recorded_dict(tmp_path):
    """The replay's shortcut (no dump of each step) gives the answer predict_action gives from the
    recorded dict, failures included, on every step of the example and of quirky synthetic logs."""
    from replay_tui.env import replay_steps
    from replay_tui.examples import example_path
    from replay_tui.formats.webshop_demos.synth import write_demo_file
    from replay_tui.policies import StubPolicy
    from replay_tui.sources import open_sources
    from tests.conftest import episode, search_step, write_json

    quirky = tmp_path / "quirky.json"
    write_demo_file(quirky, start=0, count=60, seed=5, quirk_rate=0.6)
    odd = [
        search_step(0, llm_action_name="Nonsense", action_executed_in_env="click[x]"),  # unknown tool
        search_step(1, llm_action_arguments={}, action_executed_in_env="search[y]"),  # no keywords
        search_step(2, llm_action_arguments={"keywords": ["a", "b"]}),  # not a plain value
        search_step(3, llm_action_arguments={"Keywords": 7}),
        search_step(4, tool_call=True, action_executed_in_env='Search({"keywords": "z"})'),
    ]
    odd_file = write_json(tmp_path / "odd.json", [episode(900 + i, [step]) for i, step in enumerate(odd)])
    demos = open_sources([str(example_path()), str(quirky), str(odd_file)])

    def answer(call):
        try:
            return call()
        except Exception as exc:
            return (type(exc).__name__, str(exc))

    compared = shortcut = 0
    for fallback in (False, True):
        policy = StubPolicy(fallback_to_recorded=fallback)
        for ref in demos:
            try:
                readings: list[Any] = [demos.trajectory(ref.session_id)]
            except Exception:
                continue
            reading = ref.file.read_fast(ref)  # a clean episode's fast reading replays the same way
            readings += [reading] if reading is not None else []
            for parsed in readings:
                for step in replay_steps(parsed, include_item_steps=True):
                    fast = answer(lambda step=step, policy=policy: policy.predict_from_step(step))
                    slow = answer(
                        lambda step=step, policy=policy: policy.predict_action(
                            step.observation, step.state, list(step.available_actions), step.llm_prompt, step.recorded
                        )
                    )
                    assert fast == slow, (ref.session_id, step.label)
                    compared += 1
                    shortcut += step.webshop_call is not None
    assert compared > 1000 and shortcut > compared * 0.9
