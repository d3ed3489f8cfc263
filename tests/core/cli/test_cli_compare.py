"""``replay-tui compare`` on runs written by ``replay``: exit codes, the flips it finds, its reports.

Run A replays the bundled example with the heuristic shopper; run B with a policy that is the same
shopper except on chosen steps, so the flips are known before comparing."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from replay_tui.compare import demo_identities
from replay_tui.env import replay_steps
from replay_tui.examples import example_path
from replay_tui.sources import open_sources
from tests.core.cli.runcli import run_cli

DATA = Path(__file__).parents[2] / "data"
WRONG = "click[Nothing Here]"

DIFFER_POLICY = """
import json
from pathlib import Path

from replay_tui.policies.heuristic import HeuristicPolicy

OVERRIDES = json.loads(Path(__file__).with_suffix(".json").read_text())


class Differ:
    \"\"\"The heuristic shopper, except on the observations OVERRIDES names.\"\"\"

    def __init__(self):
        self.base = HeuristicPolicy()

    def predict_action(self, observation, state, available_actions, llm_prompt_repr):
        if observation in OVERRIDES:
            return OVERRIDES[observation]
        return self.base.predict_action(observation, state, available_actions, llm_prompt_repr)
"""

ALTER_ONE_POLICY = """
from replay_tui.policies.stub import StubPolicy

TARGET = {target!r}
ALTERED = {altered!r}


class AlterOne:
    \"\"\"Replays every recorded call, except one, which it changes.\"\"\"

    def __init__(self):
        self.stub = StubPolicy()

    def predict_action(self, observation, state, available_actions, llm_prompt_repr, recorded_step=None):
        action = self.stub.predict_action(
            observation, state, available_actions, llm_prompt_repr, recorded_step=recorded_step
        )
        return ALTERED if action == TARGET else action
"""


def replay(capsys, report: Path, *flags: str, demos: Path | None = None) -> None:
    code, _, err = run_cli(
        capsys,
        "replay",
        "--demos",
        str(demos or example_path()),
        "--mismatch",
        "allow",
        "--report",
        str(report),
        "--report-steps",
        "-q",
        *flags,
    )
    assert code in (0, 1), err


def choose_steps(heuristic: dict) -> dict[str, list[tuple[str, str]]]:
    """Known steps to change: two the heuristic gets right (B breaks them), two it gets wrong (B fixes
    them) and one it gets wrong that B gets wrong another way; each (session, step label)."""
    right = [(str(e["session_id"]), s["step_label"]) for e in heuristic["episodes"] for s in e["steps"] if s["match"]]
    wrong = [
        (str(e["session_id"]), s["step_label"])
        for e in heuristic["episodes"]
        for s in e["steps"]
        if not s["match"] and s["predicted"] != WRONG
    ]
    return {"regressed": [right[0], right[7]], "fixed": [wrong[1], wrong[20]], "different": [wrong[40]]}


def differ_policy(folder: Path, heuristic: dict) -> tuple[str, dict[str, list[tuple[str, str]]]]:
    """Write the policy that differs from the heuristic on known steps (see :func:`choose_steps`) into
    ``folder``; returns its spec and the chosen steps."""
    chosen = choose_steps(heuristic)
    demos = open_sources([str(example_path())])
    observations: dict[tuple[str, str], str] = {}
    counts: dict[str, int] = {}
    for sid in demos.session_ids:
        for step in replay_steps(demos.trajectory(sid)):
            observations[(str(sid), step.label)] = step.observation
            counts[step.observation] = counts.get(step.observation, 0) + 1
    expected = {
        (str(e["session_id"]), s["step_label"]): s["expected"] for e in heuristic["episodes"] for s in e["steps"]
    }
    overrides = {}
    for kind, keys in chosen.items():
        for key in keys:
            observation = observations[key]
            assert counts[observation] == 1, "the policy must recognise the step by its observation alone"
            overrides[observation] = {"regressed": WRONG, "fixed": expected[key], "different": WRONG}[kind]
    policy = folder / "differ.py"
    policy.write_text(DIFFER_POLICY)
    policy.with_suffix(".json").write_text(json.dumps(overrides))
    return f"{policy}:Differ", chosen


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Reports of the heuristic (twice) and of the policy that differs on known steps."""
    folder = tmp_path_factory.mktemp("compare")
    capsys = _NoCapture()
    a = folder / "heuristic.json"
    replay(capsys, a, "--mode", "heuristic")
    again = folder / "heuristic-again.json"
    replay(capsys, again, "--mode", "heuristic")
    spec, chosen = differ_policy(folder, json.loads(a.read_text()))
    b = folder / "differ.json"
    replay(capsys, b, "--policy", spec)
    return {"a": a, "again": again, "b": b, "chosen": chosen, "folder": folder}


class _NoCapture:
    """run_cli's capsys for a module fixture (pytest's capsys is function-scoped): output is dropped."""

    def readouterr(self) -> tuple[str, str]:
        return "", ""


def test_no_regressions_exits_0_even_with_fail_on_regression_0(capsys, runs) -> None:
    code, out, err = run_cli(capsys, "compare", str(runs["a"]), str(runs["again"]), "--fail-on-regression", "0")
    assert code == 0, err
    assert "0 regressed, 0 fixed, 0 both wrong (different) of 431 steps" in out
    assert "hashes unknown" in err  # plain reports: compared by file name, and it says so


def test_regressions_exit_1_with_fail_on_regression_0_and_are_the_known_steps(capsys, runs, tmp_path) -> None:
    report = tmp_path / "cmp.json"
    code, out, err = run_cli(
        capsys, "compare", str(runs["a"]), str(runs["b"]), "--fail-on-regression", "0", "--report", str(report)
    )
    assert code == 1, err
    data = json.loads(report.read_text())
    chosen = runs["chosen"]
    regressed = [(s["episode"], s["step_label"]) for s in data["steps"] if s["flip"] == "regressed"]
    fixed = [(s["episode"], s["step_label"]) for s in data["steps"] if s["flip"] == "fixed"]
    different = [(s["episode"], s["step_label"]) for s in data["steps"] if s["flip"] == "both_wrong_different"]
    assert regressed == chosen["regressed"] and fixed == chosen["fixed"] and different == chosen["different"]
    assert data["flips"]["regressed"] == 2 and data["overall"]["a_only"] == 2 and data["overall"]["b_only"] == 2
    assert "2 regressed, 2 fixed, 1 both wrong (different) of 431 steps" in out
    assert "Regressions" in out and WRONG in out


def test_regressions_within_the_allowance_or_without_the_flag_exit_0(capsys, runs) -> None:
    assert run_cli(capsys, "compare", str(runs["a"]), str(runs["b"]))[0] == 0
    assert run_cli(capsys, "compare", str(runs["a"]), str(runs["b"]), "--fail-on-regression", "2")[0] == 0
    assert run_cli(capsys, "compare", str(runs["a"]), str(runs["b"]), "--fail-on-regression", "1")[0] == 1


def test_every_report_format(capsys, runs, tmp_path) -> None:
    for suffix in ("md", "json", "html", "xml", "csv"):
        path = tmp_path / f"cmp.{suffix}"
        code, _, err = run_cli(capsys, "compare", str(runs["a"]), str(runs["b"]), "--report", str(path), "-q")
        assert code == 0 and path.stat().st_size > 0, err
    suite = ET.parse(tmp_path / "cmp.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "2"
    markdown = (tmp_path / "cmp.md").read_text()
    assert "### Regressions (2)" in markdown and "| Step accuracy (n=431) |" in markdown


def test_runs_over_different_demo_files_exit_2_with_one_line(capsys, runs, tmp_path) -> None:
    # another demo file of the same name: other episodes behind the same session ids
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    code, _, err = run_cli(capsys, "generate", str(other_dir), "--count", "100", "--seed", "7")
    assert code == 0, err
    (other_demo,) = other_dir.glob("*.json")
    assert other_demo.name == example_path().name
    other = tmp_path / "other-run.json"
    replay(capsys, other, "--mode", "heuristic", demos=other_demo)
    code, out, err = run_cli(capsys, "compare", str(runs["a"]), str(other))
    assert code == 2 and out == ""
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1 and lines[0].startswith("replay-tui compare: error: different recorded inputs")
    # saved runs carry the files' hashes: the reason names the file and both hashes
    saved_a = _as_saved_run(runs["a"], example_path(), tmp_path / "saved-a.json")
    saved_other = _as_saved_run(other, other_demo, tmp_path / "saved-other.json")
    code, _, err = run_cli(capsys, "compare", str(saved_a), str(saved_other))
    assert code == 2
    error = [line for line in err.splitlines() if "error" in line]
    assert len(error) == 1 and f"demo file {example_path().name} has sha256" in error[0]
    # saved runs over the same file compare, with no warning about hashes
    saved_b = _as_saved_run(runs["b"], example_path(), tmp_path / "saved-b.json")
    code, _, err = run_cli(capsys, "compare", str(saved_a), str(saved_b))
    assert code == 0 and "hashes unknown" not in err


def _as_saved_run(report: Path, demo: Path, out: Path) -> Path:
    """A report with the run record the run history writes (its demo files' names and hashes)."""
    data = json.loads(report.read_text())
    data["run"] = {"id": out.stem, "name": out.stem, "demo_files": demo_identities([(demo.name, demo)])}
    out.write_text(json.dumps(data))
    return out


def test_unusable_runs_exit_2(capsys, runs, tmp_path) -> None:
    code, _, err = run_cli(capsys, "compare", str(runs["a"]), str(tmp_path / "nope.json"))
    assert code == 2 and "nope.json: no such run under" in err
    no_steps = tmp_path / "no-steps.json"
    code, _, _ = run_cli(capsys, "replay", "--mode", "heuristic", "--report", str(no_steps), "-q")
    older = json.loads(no_steps.read_text())
    del older["step_results"]  # a plain report as written before reports carried their step results
    no_steps.write_text(json.dumps(older))
    code, _, err = run_cli(capsys, "compare", str(runs["a"]), str(no_steps))
    assert code == 2 and "--report-steps" in err
    code, _, err = run_cli(capsys, "compare", str(runs["a"]))
    assert code == 2 and "at least two runs" in err
    code, _, err = run_cli(capsys, "compare", str(runs["a"]), str(runs["b"]), "--report", str(tmp_path / "x.txt"))
    assert code == 2 and "report format" in err


def test_three_runs_show_the_agreement_matrix(capsys, runs, tmp_path) -> None:
    report = tmp_path / "agree.md"
    code, out, err = run_cli(
        capsys, "compare", str(runs["a"]), str(runs["again"]), str(runs["b"]), "--report", str(report)
    )
    assert code == 0, err
    assert "Agreement" in out and "426 of 431 common steps agree in every run" in out
    assert "| A | 100.0% (431) | 100.0% (431) | 98.8% (431) |" in report.read_text()
    code, _, err = run_cli(
        capsys, "compare", str(runs["a"]), str(runs["again"]), str(runs["b"]), "--fail-on-regression", "0"
    )
    assert code == 2 and "two runs" in err


def test_a_repeat_report_is_compared_as_its_runs(capsys, tmp_path) -> None:
    report = tmp_path / "repeat.json"
    code, _, err = run_cli(
        capsys, "replay", "--mode", "heuristic", "--sessions", "0-4", "--repeat", "3", "--report", str(report), "-q"
    )
    assert code in (0, 1), err
    code, out, err = run_cli(capsys, "compare", str(report))
    assert code == 0, err
    assert "3 runs:" in out and "repeat.json run 2" in out


def test_openai_transcripts_stub_against_a_policy_that_alters_one_call(capsys, tmp_path) -> None:
    log = DATA / "formats" / "openai_chat" / "tau_bench_gpt-4o-airline_excerpt.json"
    target = 'calculate({"expression":"152 + 103"})'
    demos = open_sources([str(log)])
    calls = [step.expected for sid in demos.session_ids for step in replay_steps(demos.trajectory(sid))]
    assert calls.count(target) == 1
    policy = tmp_path / "alter.py"
    policy.write_text(ALTER_ONE_POLICY.format(target=target, altered='calculate({"expression":"152 + 104"})'))
    stub, altered = tmp_path / "stub.json", tmp_path / "altered.json"
    replay(capsys, stub, "--mode", "stub", demos=log)
    replay(capsys, altered, "--policy", f"{policy}:AlterOne", demos=log)
    out_md = tmp_path / "cmp.md"
    code, out, err = run_cli(
        capsys, "compare", str(stub), str(altered), "--fail-on-regression", "0", "--report", str(out_md)
    )
    assert code == 1, err
    assert "1 regressed, 0 fixed" in out
    markdown = out_md.read_text()
    assert "### Regressions (1)" in markdown
    assert "| `task-0-trial-0` | `3` | `calculate` |" in markdown
    assert run_cli(capsys, "compare", str(stub), str(stub), "--fail-on-regression", "0")[0] == 0


def test_run_names_come_from_the_run_history(capsys, runs, tmp_path) -> None:
    """Every replay is saved as a run; ``compare`` takes their ids (or names) from the history."""
    history = tmp_path / "runs"
    ids = []
    spec, _ = differ_policy(tmp_path, json.loads(runs["a"].read_text()))
    for flags in (("--mode", "heuristic"), ("--policy", spec)):
        code, _, err = run_cli(
            capsys, "replay", "--demos", str(example_path()), "--mismatch", "allow", "--runs-dir", str(history), *flags
        )
        assert code in (0, 1), err
        ids.append(next(line.split("run saved: ")[1].strip() for line in err.splitlines() if "run saved: " in line))
    code, out, err = run_cli(capsys, "compare", *ids, "--runs-dir", str(history), "--fail-on-regression", "0")
    assert code == 1, out + err
    assert "2 regressed, 2 fixed" in out
    code, _, err = run_cli(capsys, "compare", ids[0], "no-such-run", "--runs-dir", str(history))
    assert code == 2 and "no-such-run: no such run" in err and err.count("\n") == 1


def test_the_cycle_collector_is_paused_while_runs_are_read_and_compared(capsys, runs, monkeypatch) -> None:
    """Reading two big reports and pairing their steps makes millions of objects and no cycles: the
    collector's passes over them were a third of the command's time (issue 32), so it is paused, and
    back on afterwards."""
    import gc

    import replay_tui.compare as engine  # the command imports it when it runs

    seen: list[bool] = []
    real = engine.compare_runs

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "compare_runs", spy)
    assert gc.isenabled()
    code, _, _ = run_cli(capsys, "compare", str(runs["a"]), str(runs["again"]), "-q")
    assert code == 0
    assert seen == [False]
    assert gc.isenabled()
