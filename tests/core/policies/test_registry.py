"""The policy-mode registry, the one policy-call protocol and the one way policies are closed."""

import subprocess
import sys
import textwrap

import pytest

from replay_tui.cli.commands import LLM_MODES, MODES, build_parser
from replay_tui.env import replay_steps
from replay_tui.examples import example_path
from replay_tui.formats.webshop_demos.index import open_demos
from replay_tui.matching import MatchSettings
from replay_tui.policies import (
    BUILTIN_MODES,
    POLICY_MODES,
    HeuristicPolicy,
    PolicyFailure,
    PolicyLoadError,
    Prediction,
    StubPolicy,
    call_policy,
    close_policies,
    policy_mode,
)
from replay_tui.repeat import repeat_episode
from replay_tui.workspace import ReplaySettings


def test_every_mode_list_reads_the_registry():
    assert [m.name for m in POLICY_MODES] == ["stub", "heuristic", "custom", "llm", "langgraph"]
    assert MODES == ("stub", "heuristic", "llm", "langgraph")
    assert LLM_MODES == ("llm", "langgraph")
    assert BUILTIN_MODES == ("stub", "heuristic")
    parser = build_parser()
    for command in ("replay", "tui"):
        assert [parser.parse_args([command, "--mode", name]).mode for name in MODES] == list(MODES)
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--mode", "custom"])  # custom policies come from --policy
    shared = {m.name for m in POLICY_MODES if m.shareable}
    assert shared == {"stub", "heuristic", "llm"}
    assert {m.name: m.spec for m in POLICY_MODES if m.needs_spec} == {"custom": "policy", "langgraph": "graph"}


def test_modes_build_and_describe_their_policies(tmp_path):
    assert isinstance(policy_mode("heuristic").make(), HeuristicPolicy)
    assert ReplaySettings().make_policy()[1] == "stub"
    assert ReplaySettings(mode="heuristic", item_steps=True).describe() == "heuristic · stop · item steps"
    policy_file = tmp_path / "mine.py"
    policy_file.write_text("class Mine:\n    def predict_action(self, o, s, a, r):\n        return 'x'\n")
    settings = ReplaySettings(mode="custom", policy_spec=f"{policy_file}:Mine", matching=MatchSettings("typed"))
    assert settings.make_policy()[1] == "Mine"
    assert settings.describe() == f"{policy_file}:Mine · stop · match typed"
    assert ReplaySettings(mode="langgraph", graph_spec="g.py:graph").describe() == "langgraph g.py:graph · stop"
    with pytest.raises(ValueError, match=r"^custom mode needs a policy spec \(module:attr or file.py:attr\)$"):
        ReplaySettings(mode="custom").make_policy()
    with pytest.raises(PolicyLoadError, match="unknown mode 'oracle'"):
        ReplaySettings(mode="oracle").make_policy()
    assert ReplaySettings(mode="oracle").describe() == "oracle · stop"


def test_heavy_modes_are_imported_only_when_used():
    code = textwrap.dedent("""
        import sys
        from replay_tui.cli import main
        try:
            main(["replay", "--help"])
        except SystemExit:
            pass
        from replay_tui.workspace import ReplaySettings
        ReplaySettings(mode="heuristic").make_policy()
        heavy = [m for m in sys.modules if m.split(".")[0] in ("openai", "langgraph", "textual", "ray")
                 or m in ("replay_tui.policies.llm", "replay_tui.policies.langgraph_adapter")]
        print(heavy)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


@pytest.fixture(scope="module")
def step():
    demos = open_demos([example_path()])
    return replay_steps(demos.trajectory(demos.session_ids[0]))[0]


def test_call_policy_turns_every_failure_into_a_prediction(step):
    class Fails:
        def __init__(self, outcome):
            self.outcome = outcome

        def predict_action(self, observation, state, available_actions, llm_prompt_repr):
            if isinstance(self.outcome, BaseException):
                raise self.outcome
            return self.outcome

    assert call_policy(StubPolicy(), step) == Prediction(step.expected)
    assert call_policy(Fails("search[x]"), step) == ("search[x]", None, None)
    assert call_policy(Fails(PolicyFailure("timeout", "no answer in 5s")), step) == ("", "no answer in 5s", "timeout")
    assert call_policy(Fails(KeyError("k")), step) == ("", "KeyError: 'k'", "exception")
    assert call_policy(Fails(42), step) == ("", "policy returned int, not an action string", "not_a_string")


def test_call_policy_passes_the_recorded_step_and_the_sample_when_asked(step):
    calls = []

    class Sampled:
        def predict_action(self, observation, state, available_actions, llm_prompt_repr, **kwargs):
            calls.append((observation, state, available_actions, llm_prompt_repr, kwargs))
            return "search[x]"

    call_policy(Sampled(), step, sample=2)
    call_policy(Sampled(), step, pass_step=False)
    (obs, state, actions, prompt, kwargs), (_, _, _, _, bare) = calls
    assert (obs, state, prompt) == (step.observation, step.state, step.llm_prompt)
    assert actions == list(step.available_actions)
    assert kwargs == {"recorded_step": step.recorded, "sample": 2} and bare == {}


def test_repeat_uses_the_runners_error_texts():
    demos = open_demos([example_path()])

    class NotAString:
        def predict_action(self, observation, state, available_actions, llm_prompt_repr):
            return None

    first = repeat_episode(NotAString(), demos, demos.session_ids[0], 2)[0]
    assert first.predictions == ["!not_a_string", "!not_a_string"]
    assert first.errors == ["not_a_string: policy returned NoneType, not an action string"] * 2


def test_close_policies_closes_every_policy_and_raises_the_first_failure():
    closed = []

    class Closing:
        def __init__(self, name, fail=False):
            self.name, self.fail = name, fail

        def close(self):
            closed.append(self.name)
            if self.fail:
                raise ValueError(f"{self.name} failed")

    close_policies(StubPolicy(), Closing("a"))
    with pytest.raises(ValueError, match="b failed"):
        close_policies(Closing("b", fail=True), Closing("c", fail=True), Closing("d"))
    assert closed == ["a", "b", "c", "d"]
