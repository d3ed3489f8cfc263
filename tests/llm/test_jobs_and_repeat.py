"""--jobs (episodes on a thread pool) and --repeat (K runs per step), without any server."""

import itertools
import json
import threading

from replay_tui.cli import main
from replay_tui.env import OfflineWebshopEnv
from replay_tui.examples import example_path
from replay_tui.formats.webshop_demos.index import open_demos
from replay_tui.policies import HeuristicPolicy, StubPolicy
from replay_tui.repeat import run_repeats
from replay_tui.runner import Runner, run_all_parallel
from tests.conftest import episode, good_episode, write_json


def test_parallel_runs_report_like_sequential_ones(tmp_path):
    demos = open_demos([example_path()])

    def make_runner():
        return Runner(OfflineWebshopEnv(demos, mismatch_policy="allow"), HeuristicPolicy(), mode="heuristic")

    sequential = make_runner().run_all()
    seen = []
    parallel = run_all_parallel(make_runner, jobs=4, on_episode=seen.append)
    assert parallel.to_json(include_steps=True) == sequential.to_json(include_steps=True)
    assert len(seen) == 100 and sequential.overall_accuracy < 1.0


def test_parallel_runs_keep_problems_and_honour_cancel(tmp_path):
    path = write_json(tmp_path / "mixed.json", [good_episode(1), episode(2, "not a list"), good_episode(3)])
    demos = open_demos([path])
    summary = run_all_parallel(lambda: Runner(OfflineWebshopEnv(demos), StubPolicy(), mode="stub"), jobs=3)
    assert [e.session_id for e in summary.episodes] == [1, 3] and len(summary.problems) == 1

    cancel = threading.Event()
    cancel.set()
    cancelled = run_all_parallel(lambda: Runner(OfflineWebshopEnv(demos), StubPolicy(), cancel=cancel), jobs=2)
    assert cancelled.cancelled and cancelled.episodes == []


def test_cli_jobs_give_the_same_report_and_build_custom_policies_per_worker(tmp_path, capsys):
    policy_file = tmp_path / "counting.py"
    policy_file.write_text(
        "import time\n"
        "from replay_tui.policies import HeuristicPolicy\n"
        "class Exclusive(HeuristicPolicy):\n"
        "    busy = False\n"
        "    def predict_action(self, *args, **kwargs):\n"
        "        if self.busy:\n"
        "            raise RuntimeError('a policy was used by two threads at once')\n"
        "        self.busy = True\n"
        "        try:\n"
        "            time.sleep(0.0005)\n"
        "            return super().predict_action(*args, **kwargs)\n"
        "        finally:\n"
        "            self.busy = False\n"
    )
    one, four = tmp_path / "one.json", tmp_path / "four.json"
    assert main(["replay", "--policy", f"{policy_file}:Exclusive", "--report", str(one), "-q"]) == 1
    assert main(["replay", "--policy", f"{policy_file}:Exclusive", "--report", str(four), "-q", "--jobs", "4"]) == 1
    assert one.read_bytes() == four.read_bytes()


def test_repeat_measures_agreement_per_state():
    demos = open_demos([example_path()])
    counter = itertools.count()

    class Flaky(StubPolicy):
        """Right on two runs of three for search steps, always right elsewhere."""

        def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None):
            action = super().predict_action(observation, state, available_actions, llm_prompt_repr, recorded_step)
            if state == "Search" and next(counter) % 3 == 2:
                return "search[something else]"
            return action

    report = run_repeats(Flaky, demos, [0, 1, 2], repeats=3)
    search, result = report.by_state["Search"], report.by_state["Result"]
    assert (search.steps, search.runs, search.matched_runs) == (3, 9, 6)
    assert search.agreement_with_recording == 6 / 9
    assert search.agreement_between_runs == 1 / 3 and search.consistent_steps == 0
    assert result.agreement_with_recording == 1.0 and result.consistent_steps == result.steps
    assert not report.all_matched and report.episodes_run == 3
    assert [s.session_id for s in report.steps][:1] == [0]

    stub = run_repeats(StubPolicy, demos, [0, 1, 2], repeats=2, jobs=3, include_item_steps=True)
    assert stub.all_matched and stub.overall.agreement_between_runs == 1.0 and "Item" in stub.by_state


def test_cli_repeat_with_the_stub_exits_0_and_writes_json(tmp_path, capsys):
    report = tmp_path / "repeat.json"
    assert main(["replay", "--sessions", "0-4", "--repeat", "2", "--jobs", "2", "--report", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["repeats"] == 2 and data["overall"]["agreement_with_recording"] == 1.0
    assert "agree between runs" in capsys.readouterr().out


def test_an_interrupted_parallel_run_stops_its_workers():
    demos = open_demos([example_path()])
    runners = []

    def make_runner():
        runners.append(Runner(OfflineWebshopEnv(demos), StubPolicy(), mode="stub"))
        return runners[-1]

    def interrupt(item):
        raise KeyboardInterrupt

    try:
        run_all_parallel(make_runner, jobs=2, on_episode=interrupt)
    except KeyboardInterrupt:
        pass
    else:  # pragma: no cover
        raise AssertionError("the interrupt was swallowed")
    assert runners[0].cancel.is_set()
