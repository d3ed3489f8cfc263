import json
import threading

from replay_tui.env import OfflineWebshopEnv
from replay_tui.policies import HeuristicPolicy, StubPolicy
from replay_tui.runner import Runner
from tests.conftest import SHARED_EXAMPLE, episode, good_episode, result_step, search_step, write_json


class FourArgPolicy:
    """The seed's signature: no recorded_step."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = []

    def predict_action(self, observation, state, available_actions, llm_prompt_repr):
        self.calls.append((state, tuple(available_actions), llm_prompt_repr is not None))
        return self.answers.pop(0)


class SpyPolicy:
    def __init__(self):
        self.seen = []

    def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None):
        self.seen.append(recorded_step)
        return recorded_step["action_executed_in_env"]


def test_stub_replays_the_shared_example_perfectly():
    env = OfflineWebshopEnv(SHARED_EXAMPLE, include_item_steps=True)
    report = Runner(env, StubPolicy()).run_episode(3)
    assert report.accuracy == 1.0 and report.steps_total == 3 and report.mismatches == []
    assert report.success and report.final_reward == 1.0


def test_four_argument_policies_work_and_never_get_recorded_step(demo_file):
    env = OfflineWebshopEnv(demo_file)
    policy = FourArgPolicy(["search[long clip-in hair extension]", "click[Next >]", "click[B09C337K8S]"])
    report = Runner(env, policy).run_episode(10)
    assert report.accuracy == 1.0
    assert policy.calls[0] == ("Search", ("Search",), True)


def test_recorded_step_is_passed_to_policies_that_accept_it(demo_file):
    spy = SpyPolicy()
    Runner(OfflineWebshopEnv(demo_file), spy).run_episode(10)
    assert [s["step_number"] for s in spy.seen] == [0, 1, 2]


def test_mismatch_stop_records_expected_predicted_and_excerpt(demo_file):
    policy = FourArgPolicy(["search[long clip-in hair extension]", "click[B08XYZ1234]"])
    report = Runner(OfflineWebshopEnv(demo_file), policy).run_episode(10)
    assert report.steps_total == 2 and report.steps_matched == 1 and report.accuracy == 0.5
    assert report.stopped_early and report.first_mismatch_step == "1"
    [mismatch] = report.mismatches
    assert (mismatch.expected, mismatch.predicted, mismatch.state) == ("click[Next >]", "click[B08XYZ1234]", "Result")
    assert mismatch.session_id == 10 and "Back to Search" in mismatch.observation_excerpt
    assert "\n" not in mismatch.observation_excerpt


def test_mismatch_allow_continues_to_the_end(demo_file):
    policy = FourArgPolicy(["search[x]", "click[Next >]", "click[B08XYZ1234]"])
    report = Runner(OfflineWebshopEnv(demo_file), policy, mismatch_policy="allow").run_episode(10)
    assert report.steps_total == 3 and report.steps_matched == 1
    assert [m.step_number for m in report.mismatches] == [0, 2]
    assert not report.stopped_early


def test_policy_errors_become_failed_steps_not_crashes(demo_file):
    class Broken:
        def predict_action(self, observation, state, available_actions, llm_prompt_repr):
            raise RuntimeError("model unavailable")

    report = Runner(OfflineWebshopEnv(demo_file), Broken()).run_episode(10)
    assert report.steps_total == 1 and report.steps_matched == 0
    assert report.mismatches[0].error == "RuntimeError: model unavailable"


def test_run_all_summarizes_by_state_and_skips_malformed(tmp_path):
    bad = episode(5, [search_step(0, llm_action_arguments=[1])])  # the recorded call itself (see test_loader)
    path = write_json(tmp_path / "d.json", [good_episode(1), bad, good_episode(2)])
    runner = Runner(OfflineWebshopEnv(path), StubPolicy())
    seen = []
    summary = runner.run_all(on_episode=seen.append)
    assert summary.episodes_total == 3 and summary.episodes_run == 2
    assert summary.total_steps == 6 and summary.overall_accuracy == 1.0
    assert summary.accuracy_by_state == {"Result": 1.0, "Search": 1.0}
    assert summary.steps_by_state == {"Result": 4, "Search": 2}
    [problem] = summary.problems
    assert problem.index == 1 and problem.field == "trajectory[0].llm_action_arguments"
    assert len(seen) == 3


def test_heuristic_policy_makes_visible_mistakes(demo_file):
    summary = Runner(OfflineWebshopEnv(demo_file), HeuristicPolicy(), mismatch_policy="allow").run_all()
    assert summary.total_mismatches > 0
    assert 0 < summary.overall_accuracy < 1


def test_json_report_is_deterministic_and_has_the_seed_fields(demo_file):
    def run():
        runner = Runner(OfflineWebshopEnv(demo_file), HeuristicPolicy(), mismatch_policy="allow")
        return runner.run_all().to_json()

    first, second = run(), run()
    assert first == second
    data = json.loads(first)
    for key in (
        "episodes_total",
        "episodes_run",
        "total_steps",
        "total_matched",
        "overall_accuracy",
        "accuracy_by_state",
        "episodes",
        "problems",
    ):
        assert key in data
    ep = data["episodes"][0]
    for key in (
        "session_id",
        "steps_total",
        "steps_matched",
        "accuracy",
        "mismatches",
        "completed_by_backup",
        "success",
        "final_reward",
    ):
        assert key in ep
    assert "steps" not in ep
    assert set(ep["mismatches"][0]) >= {
        "session_id",
        "step_number",
        "state",
        "expected",
        "predicted",
        "observation_excerpt",
    }
    assert list(data) == sorted(data)


def test_cancel_stops_a_run_between_steps(demo_file):
    cancel = threading.Event()
    results = []

    def on_step(result):
        results.append(result)
        cancel.set()

    runner = Runner(OfflineWebshopEnv(demo_file), StubPolicy(), on_step=on_step, cancel=cancel)
    summary = runner.run_all()
    assert summary.cancelled and len(results) == 1
    assert summary.episodes[0].cancelled


def test_backup_episodes_are_flagged(tmp_path):
    ep = episode(
        4,
        [
            search_step(0),
            result_step(1, "Next"),
            {"type": "backup_agent_search", "action": "search[x]", "observation_after_action": "y"},
            {"type": "backup_agent_buy", "action": "click[Buy Now]", "reward": 0.5, "done": True},
        ],
        completed_by_backup=True,
        final_reward=0.5,
        success=False,
    )
    env = OfflineWebshopEnv(write_json(tmp_path / "b.json", [ep]))
    report = Runner(env, StubPolicy()).run_episode(4)
    assert report.completed_by_backup and not report.success and report.final_reward == 0.5
    assert report.accuracy == 1.0


def test_whitespace_drift_and_json_string_arguments_still_match_in_stub_mode(tmp_path):
    steps = [
        search_step(
            0,
            llm_action_arguments='{"keywords": "long clip-in hair extension"}',
            action_executed_in_env="  search[long   clip-in hair extension ] ",
        ),
        result_step(1, "Next", action="click[Next  >]", step_number="1"),
        result_step(2, action=""),
    ]
    env = OfflineWebshopEnv(write_json(tmp_path / "q.json", [episode(1, steps)]))
    report = Runner(env, StubPolicy()).run_episode(1)
    assert report.accuracy == 1.0 and report.steps_total == 3
    assert any("rebuilt" in w for w in report.warnings)


def test_policy_failures_are_counted_by_kind_and_traces_kept(demo_file):
    from replay_tui.policies import PolicyFailure

    class Flaky:
        last_trace = None

        def __init__(self):
            self.calls = 0

        def predict_action(self, observation, state, available_actions, llm_prompt_repr):
            self.calls += 1
            self.last_trace = {"call": self.calls, "latency_ms": 5}
            if self.calls == 2:
                raise PolicyFailure("timeout", "no answer in 30 s", raw="")
            if self.calls == 3:
                raise ValueError("boom")
            return "search[long clip-in hair extension]"

    runner = Runner(OfflineWebshopEnv(demo_file), Flaky(), mismatch_policy="allow")
    summary = runner.run_all([10])
    steps = summary.episodes[0].steps
    assert [s.error_kind for s in steps] == [None, "timeout", "exception"]
    assert steps[1].error == "no answer in 30 s" and steps[0].trace == {"call": 1, "latency_ms": 5}
    assert summary.failures_by_kind == {"exception": 1, "timeout": 1}
    assert summary.episodes[0].mismatches[0].error_kind == "timeout"
