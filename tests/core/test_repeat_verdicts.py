"""``--repeat`` and comparisons of repeat reports give a tool-call step the verdict a replay gives it
(issue 29: they used to judge tool calls with the WebShop string matcher)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replay_tui.cli import main
from replay_tui.compare import repeat_runs
from replay_tui.env import OfflineWebshopEnv, replay_steps
from replay_tui.episodes.model import call_text
from replay_tui.matching import MatchSettings
from replay_tui.repeat import run_repeats
from replay_tui.runner import Runner
from replay_tui.sources import open_sources

FORMATS = Path(__file__).parents[1] / "data" / "formats"
TAU_EXCERPT = FORMATS / "openai_chat" / "tau_bench_gpt-4o-airline_excerpt.json"
SAMPLES = sorted(
    path for folder in FORMATS.iterdir() if folder.is_dir() for path in folder.iterdir() if path.name != "PROVENANCE.md"
)


class ReversedKeys:
    """Returns each recorded call with its arguments in reverse key order (the same call to a
    typed judge, another string to a string matcher)."""

    def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None) -> str:
        assert recorded_step is not None
        arguments: dict[str, Any] = recorded_step["llm_action_arguments"] or {}
        return call_text(recorded_step["llm_action_name"], dict(reversed(list(arguments.items()))))


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_repeat_and_compare_give_each_tool_call_step_the_replay_verdict(path: Path) -> None:
    try:
        demos = open_sources(path)
    except Exception as exc:  # a sample another test shows to be refused
        pytest.skip(f"not opened: {exc}")
    # the episodes with tool calls; a log without any: every episode (its steps, if any, are judged
    # alike too, and a log with no decision step gets none from either)
    ids = [sid for sid in demos.session_ids if _has_calls(demos, sid)] or list(demos.session_ids)
    matching = MatchSettings.build("typed")
    replay = Runner(
        OfflineWebshopEnv(demos, mismatch_policy="allow", matching=matching), ReversedKeys(), mode="reversed"
    ).run_all(ids)
    replayed = {(e.session_id, s.step_label): s.verdict for e in replay.episodes for s in e.steps}

    report = run_repeats(ReversedKeys, demos, ids, repeats=2, matching=matching)
    repeated = {(s.session_id, s.step_label): s.verdicts for s in report.steps}
    assert repeated.keys() == replayed.keys()
    assert {key: verdicts for key, verdicts in repeated.items()} == {key: [v, v] for key, v in replayed.items()}

    for run in repeat_runs(json.loads(report.to_json()), "rep.json"):
        compared = {(e.session_id, s.step_label): s.verdict for e in run.summary.episodes for s in e.steps}
        assert compared == replayed


def test_most_bundled_samples_have_tool_call_steps() -> None:
    """The test above is about tool calls: most samples it walks have them (a guard against it
    passing on samples that hold none)."""
    with_calls = 0
    for path in SAMPLES:
        try:
            demos = open_sources(path)
        except Exception:
            continue
        with_calls += any(_has_calls(demos, sid) for sid in demos.session_ids)
    assert with_calls >= 60, with_calls


def _has_calls(demos: Any, session_id: int) -> bool:
    try:
        return any(step.call for step in replay_steps(demos.trajectory(session_id)))
    except Exception:
        return False


def test_repeat_of_the_tau_bench_excerpt_agrees_with_the_recording_as_its_replay_does(tmp_path: Path) -> None:
    policy = tmp_path / "reversed.py"
    policy.write_text(
        "from replay_tui.episodes.model import call_text\n"
        "class Reversed:\n"
        "    def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None):\n"
        "        arguments = recorded_step['llm_action_arguments']\n"
        "        return call_text(recorded_step['llm_action_name'], dict(reversed(list(arguments.items()))))\n"
    )
    common = ["replay", "--demos", str(TAU_EXCERPT), "--policy", f"{policy}:Reversed", "--match", "typed", "-q"]
    run, repeat = tmp_path / "run.json", tmp_path / "repeat.json"
    assert main([*common, "--mismatch", "allow", "--report", str(run), "--report-steps"]) == 0
    assert main([*common, "--repeat", "2", "--report", str(repeat)]) == 0
    replay = json.loads(run.read_text())
    assert replay["total_steps"] == replay["total_matched"] > 0
    overall = json.loads(repeat.read_text())["overall"]
    assert overall["agreement_with_recording"] == 1.0
    assert overall["matched_runs"] == overall["runs"] == 2 * replay["total_steps"]
