"""``replay-tui compare LOG_A LOG_B`` on real tau2 pairs: counts from the files' own rewards, McNemar
against scipy, every regression reported with its first divergent call, unpaired keys named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from tests.core.cli.runcli import run_cli

PAIRS = Path(__file__).parents[2] / "data" / "compare_pairs" / "tau2"


def pair_files(n: int) -> tuple[Path, Path]:
    (a,) = PAIRS.glob(f"pair{n}_A__*.json")
    (b,) = PAIRS.glob(f"pair{n}_B__*.json")
    return a, b


def outcomes(path: Path) -> dict[tuple[str, int], bool]:
    data = json.loads(path.read_text())
    return {(s["task_id"], s["trial"]): s["reward_info"]["reward"] >= 1 for s in data["simulations"]}


def calls(path: Path) -> dict[str, list[tuple[str, Any]]]:
    """Each simulation's tool calls in message order, keyed ``task_id#trial``, from the raw file."""
    data = json.loads(path.read_text())
    found = {}
    for sim in data["simulations"]:
        made = []
        for message in sim["messages"]:
            if message.get("role") == "assistant":
                made += [(c["name"], c["arguments"]) for c in message.get("tool_calls") or []]
        found[f"{sim['task_id']}#{sim['trial']}"] = made
    return found


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tau2_pair_counts_mcnemar_and_regressions(n, tmp_path, capsys):
    a_path, b_path = pair_files(n)
    a, b = outcomes(a_path), outcomes(b_path)
    paired = [key for key in a if key in b]
    regressed = {f"{t}#{k}" for t, k in paired if a[(t, k)] and not b[(t, k)]}
    fixed = {f"{t}#{k}" for t, k in paired if b[(t, k)] and not a[(t, k)]}
    both_ok = sum(1 for key in paired if a[key] and b[key])
    both_failed = sum(1 for key in paired if not a[key] and not b[key])
    report, markdown = tmp_path / "out.json", tmp_path / "out.md"
    code, out, _ = run_cli(capsys, "compare", str(a_path), str(b_path), "--report", str(report))
    assert code == 0, out
    assert run_cli(capsys, "compare", str(a_path), str(b_path), "-q", "--report", str(markdown))[0] == 0
    data = json.loads(report.read_text())
    summary = data["summary"]
    assert summary["paired"] == len(paired)
    assert (summary["regressions"], summary["fixes"]) == (len(regressed), len(fixed))
    assert (summary["both_succeeded"], summary["both_failed"]) == (both_ok, both_failed)
    for name in ("paired", "regressions", "fixes", "both_succeeded", "both_failed"):
        assert type(summary[name]) is int
    discordant = len(regressed) + len(fixed)
    want_p = stats.binomtest(len(regressed), discordant, 0.5).pvalue if discordant else 1.0
    assert type(summary["mcnemar_p"]) is float and summary["mcnemar_p"] == pytest.approx(want_p)
    unpaired = {f"{t}#{k}" for t, k in b if (t, k) not in a} | {f"{t}#{k}" for t, k in a if (t, k) not in b}
    assert set(data["unpaired"]["a_only"]) | set(data["unpaired"]["b_only"]) == unpaired
    tasks = {task["key"]: task for task in data["tasks"]}
    assert {key for key, task in tasks.items() if task["change"] == "regressed"} == regressed
    # every paired key is listed with A's and B's own outcome, as the files give it
    assert sorted(tasks) == sorted(f"{t}#{k}" for t, k in paired)
    for t, k in paired:
        assert (tasks[f"{t}#{k}"]["a"]["success"], tasks[f"{t}#{k}"]["b"]["success"]) == (a[(t, k)], b[(t, k)])
    a_calls, b_calls = calls(a_path), calls(b_path)
    md = markdown.read_text()
    for key in regressed:
        first = tasks[key]["first_divergence"]
        assert first is not None, key
        row, ours, theirs = first["row"], a_calls[key], b_calls[key]
        assert ours[:row] == theirs[:row]  # every call before it is the same in A and B
        assert ours[row : row + 1] != theirs[row : row + 1]
        shown = first["a"] or first["b"]
        name = (ours[row] if first["a"] else theirs[row])[0]
        assert shown.startswith(name + "(")
        cell = "`" + key.replace("|", "\\|") + "`"  # GFM table cells escape the pipe
        line = next(line for line in md.splitlines() if line.startswith(f"| {cell} "))
        assert name in line
    assert md.count("\n| `") == len(regressed)


def test_fail_on_regression_and_unpaired_named(capsys):
    a_path, b_path = pair_files(3)
    code, out, _ = run_cli(capsys, "compare", str(a_path), str(b_path), "--fail-on-regression", "1")
    assert code == 1
    assert "2 task key(s) only in B" in " ".join(out.split())
    assert run_cli(capsys, "compare", str(a_path), str(b_path), "--fail-on-regression", "2", "-q")[0] == 0


def test_logs_without_common_task_are_refused_in_one_line(capsys):
    a_path, _ = pair_files(2)
    _, b_path = pair_files(3)
    code, _, err = run_cli(capsys, "compare", str(a_path), str(b_path))
    assert code == 2
    assert "share no task key" in err and "--key" in err
    assert len(err.strip().splitlines()) == 1


def test_key_fields_pair_by_task_only(tmp_path, capsys):
    a_path, b_path = pair_files(2)
    report = tmp_path / "by_task.json"
    code, _, err = run_cli(
        capsys, "compare", str(a_path), str(b_path), "--key", "metadata.task_id", "-q", "--report", str(report)
    )
    assert code == 0
    summary = json.loads(report.read_text())["summary"]
    assert summary["paired"] == 10  # the 10 trials of task 11, numbered as repeats of one key
    assert "repeat a task key" in err
    code, _, err = run_cli(capsys, "compare", str(a_path), str(b_path), "--key", "os.system")
    assert code == 2 and "must start with one of" in err


def test_html_csv_junit_reports_and_unknown_suffix_refused_before_work(tmp_path, capsys):
    a_path, b_path = pair_files(1)
    for name in ("out.html", "out.csv", "out.xml"):
        assert run_cli(capsys, "compare", str(a_path), str(b_path), "-q", "--report", str(tmp_path / name))[0] == 0
    page = (tmp_path / "out.html").read_text()
    assert page.count('<tr class="regressed">') == 5 and "transfer_to_human_agents" in page
    assert (tmp_path / "out.csv").read_text().count(",regressed,") == 5
    assert (tmp_path / "out.xml").read_text().count("<failure ") == 5
    code, _, err = run_cli(capsys, "compare", str(a_path), str(b_path), "--report", str(tmp_path / "x.txt"))
    assert code == 2 and "cannot tell the report format" in err
    assert not (tmp_path / "x.txt").exists()


INSPECT = Path(__file__).parents[2] / "data" / "formats" / "inspect_ai"


def test_inspect_log_pairs_by_sample_and_epoch_and_an_empty_log_says_why(tmp_path, capsys):
    log = INSPECT / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
    report = tmp_path / "same.json"
    code, _, _ = run_cli(capsys, "compare", str(log), str(log), "-q", "--report", str(report))
    assert code == 0
    data = json.loads(report.read_text())
    assert data["summary"]["paired"] == len(data["tasks"]) > 1
    assert data["summary"]["regressions"] == data["summary"]["fixes"] == 0
    assert all(task["first_divergence"] is None for task in data["tasks"])
    assert all("#" in task["key"] for task in data["tasks"])  # sample id # epoch
    empty = INSPECT / "2024-08-29T15-11-18+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json"
    code, _, err = run_cli(capsys, "compare", str(log), str(empty))
    assert code == 2 and "no episode to pair" in err and "no samples in this log" in err


def test_folder_and_glob_of_swe_agent_logs_pair_by_instance_id(tmp_path, capsys):
    folder = Path(__file__).parents[2] / "data" / "formats" / "swe_agent"
    report = tmp_path / "swe.json"
    code, _, err = run_cli(capsys, "compare", str(folder), str(folder / "*.traj"), "-q", "--report", str(report))
    assert code == 0
    data = json.loads(report.read_text())
    assert {task["key"] for task in data["tasks"]} == {
        "SWE-agent__test-repo-i1",
        "function_calling_simple",
        "humanevalfix-python-0",
        "marshmallow-code__marshmallow-1867",
        "marshmallow-code__marshmallow-1867#2",  # two .traj files of one instance: its second run
    }
    # every other trajectory of the folder (one key each: a second run of an instance is "#2")
    others = [p for p in folder.iterdir() if p.suffix != ".traj" and p.name != "PROVENANCE.md"]
    assert len(data["unpaired"]["a_only"]) == len(others) and data["unpaired"]["b_only"] == []
    assert data["summary"]["unknown_outcome"] == 5  # a trajectory does not say whether the patch resolved it
    assert "without a known outcome" in err


def test_task_ids_from_logs_are_untrusted_text(tmp_path, capsys):
    hostile = "11\x1b[2J\x07[bold red]x[/bold red]|`"
    paths = []
    for side, source in zip("AB", reversed(pair_files(2)), strict=True):  # B→A: six regressions listed
        data = json.loads(source.read_text())
        for sim in data["simulations"]:
            sim["task_id"] = hostile
        for task in data["tasks"]:
            task["id"] = hostile
        paths.append(tmp_path / f"{side}.json")
        paths[-1].write_text(json.dumps(data))
    markdown = tmp_path / "out.md"
    code, out, err = run_cli(capsys, "compare", *map(str, paths), "--report", str(markdown))
    assert code == 0
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "[bold red]x[/bold red]" in out  # shown as text, never read as markup
    md = markdown.read_text()
    assert "\x1b" not in md and md.count("\n| `") == 6


def test_inspect_pair_with_two_epochs_bootstraps_by_sample(tmp_path, capsys):
    """Two inspect logs (a real log's shape, 30 samples × 2 epochs each): the interval of B − A
    resamples samples with both their epochs, within Monte-Carlo error of scipy's bootstrap."""
    import copy
    import random

    import numpy as np

    template = json.loads((INSPECT / "log_formats.json").read_text())
    rng = random.Random(5)
    results: dict[str, dict[tuple[int, int], bool]] = {}
    for side, rate in (("A", 0.5), ("B", 0.7)):
        log = copy.deepcopy(template)
        log["eval"]["config"]["epochs"] = 2
        samples, results[side] = [], {}
        for sample_id in range(1, 31):
            for epoch in (1, 2):
                sample = copy.deepcopy(template["samples"][0])
                right = rng.random() < rate
                sample.update(id=sample_id, epoch=epoch, scores={"match": {"value": "C" if right else "I"}})
                results[side][(sample_id, epoch)] = right
                samples.append(sample)
        log["samples"] = samples
        (tmp_path / f"{side}.json").write_text(json.dumps(log))
    report = tmp_path / "out.json"
    args = ("compare", str(tmp_path / "A.json"), str(tmp_path / "B.json"), "-q", "--report", str(report))
    assert run_cli(capsys, *args)[0] == 0
    data = json.loads(report.read_text())
    assert data["summary"]["paired"] == 60 and {t["key"] for t in data["tasks"]} >= {"1#1", "1#2", "30#2"}
    sums = np.array(
        [sum(results["B"][(s, e)] - results["A"][(s, e)] for e in (1, 2)) for s in range(1, 31)], dtype=float
    )
    sizes = np.full(30, 2.0)
    reference = stats.bootstrap(
        (sums, sizes),
        lambda s, z, axis=-1: s.sum(axis=axis) / z.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=10_000,
        random_state=1,
    ).confidence_interval
    difference = data["summary"]["difference"]
    assert difference["clusters"] == 30
    assert difference["b_minus_a"] == pytest.approx(sums.sum() / 60)
    assert (difference["low"], difference["high"]) == pytest.approx((reference.low, reference.high), abs=0.03)


def test_report_never_replaces_a_log_of_a_folder(tmp_path, capsys):
    a_path, b_path = pair_files(2)
    for side, source in (("a", a_path), ("b", b_path)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "run.json").write_bytes(source.read_bytes())
    target = tmp_path / "a" / "run.json"
    code, _, err = run_cli(capsys, "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--report", str(target))
    assert code == 2 and "run.json" in err
    assert target.read_bytes() == a_path.read_bytes()
    assert run_cli(capsys, "compare", str(tmp_path / "a"), str(tmp_path / "b"), "-q")[0] == 0


def _eval_scores(path: Path) -> dict[tuple[str, int], bool]:
    """Each sample's ``match`` verdict, read from the .eval zip with the standard library and zstd (every
    member of a current .eval is zstd, which Python 3.11's zipfile cannot inflate)."""
    import struct
    import zipfile

    from backports import zstd

    found = {}
    data = path.read_bytes()
    for info in zipfile.ZipFile(path).infolist():
        if not info.filename.startswith("samples/"):
            continue
        name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
        start = info.header_offset + 30 + name_len + extra_len
        raw = data[start : start + info.compress_size]
        sample = json.loads(zstd.decompress(raw) if info.compress_type == 93 else raw)
        found[(sample["id"], sample["epoch"])] = sample["scores"]["match"]["value"] == "C"
    return found


def test_inspect_pair_written_by_inspect_ai_bootstraps_by_sample(tmp_path, capsys):
    """Issue 32's acceptance: a pair of inspect logs written with inspect_ai's own API (30 samples × 2
    epochs): paired by sample and epoch, and the interval of B − A resamples a sample with both its epochs,
    within Monte-Carlo error of scipy's bootstrap over the files' own scores."""
    import numpy as np

    a_path, b_path = INSPECT / "epochs_pair_A.eval", INSPECT / "epochs_pair_B.eval"
    a, b = _eval_scores(a_path), _eval_scores(b_path)
    assert len(a) == len(b) == 60 and set(a) == set(b)
    report = tmp_path / "out.json"
    assert run_cli(capsys, "compare", str(a_path), str(b_path), "-q", "--report", str(report))[0] == 0
    data = json.loads(report.read_text())
    summary = data["summary"]
    assert summary["paired"] == 60 and {t["key"] for t in data["tasks"]} == {f"{s}#{e}" for s, e in a}
    assert summary["regressions"] == sum(1 for key in a if a[key] and not b[key])
    assert summary["fixes"] == sum(1 for key in a if b[key] and not a[key])
    samples = sorted({s for s, _ in a})
    sums = np.array([sum(b[(s, e)] - a[(s, e)] for e in (1, 2)) for s in samples], dtype=float)
    sizes = np.full(len(samples), 2.0)
    reference = stats.bootstrap(
        (sums, sizes),
        lambda s, z, axis=-1: s.sum(axis=axis) / z.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=10_000,
        random_state=1,
    ).confidence_interval
    difference = summary["difference"]
    assert difference["clusters"] == 30
    assert difference["b_minus_a"] == pytest.approx(sums.sum() / 60)
    assert (difference["low"], difference["high"]) == pytest.approx((reference.low, reference.high), abs=0.03)


def action_checks(path: Path) -> dict[str, list[tuple[str, str, bool]]]:
    """tau2's own verdict on each reference action of each simulation: (action id, requestor, matched)."""
    data = json.loads(path.read_text())
    return {
        f"{s['task_id']}#{s['trial']}": [
            (c["action"]["action_id"], c["action"]["requestor"], c["action_match"])
            for c in s["reward_info"].get("action_checks") or []
        ]
        for s in data["simulations"]
    }


def _action_name(path: Path, key: str, action_id: str) -> str:
    data = json.loads(path.read_text())
    simulation = next(s for s in data["simulations"] if f"{s['task_id']}#{s['trial']}" == key)
    checks = simulation["reward_info"]["action_checks"]
    return next(c["action"]["name"] for c in checks if c["action"]["action_id"] == action_id)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_which_run_hit_which_reference_action_is_tau2s_own_verdict(n, tmp_path, capsys):
    """Both runs' calls are aligned with the task's one reference: each action's A and B status is
    what tau2 recorded for that run (its action_checks), and the summary counts them."""
    a_path, b_path = pair_files(n)
    a_checks, b_checks = action_checks(a_path), action_checks(b_path)
    report, markdown = tmp_path / "out.json", tmp_path / "out.md"
    assert run_cli(capsys, "compare", str(a_path), str(b_path), "-q", "--report", str(report))[0] == 0
    assert run_cli(capsys, "compare", str(a_path), str(b_path), "-q", "--report", str(markdown))[0] == 0
    data = json.loads(report.read_text())
    want = dict.fromkeys(("a_matched", "b_matched", "lost", "gained", "actions"), 0)
    checked = 0
    for task in data["tasks"]:
        key, listed = task["key"], task["expected_actions"]
        ours, theirs = a_checks[key], b_checks[key]
        assert [ids for ids, _, _ in ours] == [ids for ids, _, _ in theirs]  # one reference for the task
        assert [(e["requestor"], e["a"] == "matched") for e in listed] == [(who, hit) for _, who, hit in ours]
        assert [e["b"] == "matched" for e in listed] == [hit for _, _, hit in theirs]
        checked += len(listed)
        for (_, who, a_hit), (_, _, b_hit) in zip(ours, theirs, strict=True):
            if who == "user":
                continue
            want["actions"] += 1
            want["a_matched"] += a_hit
            want["b_matched"] += b_hit
            want["lost"] += a_hit and not b_hit
            want["gained"] += b_hit and not a_hit
    assert checked  # the pair has reference actions: the check is not vacuous
    by_missed: dict[str, int] = {}  # each regression by the first agent action A hit and B did not (tau2's checks)
    for task in data["tasks"]:
        if task["change"] == "regressed" and a_checks[task["key"]]:
            pairs = zip(a_checks[task["key"]], b_checks[task["key"]], strict=True)
            lost = next((ids for (ids, who, x), (_, _, y) in pairs if who != "user" and x and not y), None)
            name = "(none)" if lost is None else _action_name(a_path, task["key"], lost)
            by_missed[name] = by_missed.get(name, 0) + 1
    assert data["summary"]["regressions_by_missed_reference"] == by_missed
    assert sum(data["summary"]["regressions_by_status"].values()) == data["summary"]["regressions"]
    hits = data["summary"]["expected_actions"]
    assert {name: hits[name] for name in want} == want
    assert hits["tasks"] == sum(1 for task in data["tasks"] if a_checks[task["key"]])
    md = markdown.read_text()
    assert f"A hit {want['a_matched']}, B hit {want['b_matched']}" in md
    for task in data["tasks"]:
        if task["change"] != "regressed":
            continue
        lost = [e["action"].split("(")[0] for e in task["expected_actions"] if e["requestor"] != "user"
                and e["a"] == "matched" and e["b"] != "matched"]  # fmt: skip
        cell = "`" + task["key"].replace("|", "\\|") + "`"
        line = next(line for line in md.splitlines() if line.startswith(f"| {cell} "))
        assert all(f"`{name}`" in line.split("|")[-2] for name in lost)


def test_three_logs_compare_each_with_the_first_and_on_the_tasks_all_share(tmp_path, capsys):
    """LOG_A LOG_B LOG_C: each later log against A is the two-log comparison of that pair (same JSON),
    the combined table's rates are the files' rewards on the keys all three share, and a log that
    shares no task with A is left out with a warning instead of refusing the others."""
    a_path, b_path = pair_files(1)
    c_path, _ = pair_files(2)  # task 11 only, ten trials: overlaps A on 11#0..11#3
    telecom, _ = pair_files(3)  # no task in common with A
    runs = {"A": outcomes(a_path), "B": outcomes(b_path), "C": outcomes(c_path)}
    report = tmp_path / "three.json"
    code, _, err = run_cli(
        capsys, "compare", str(a_path), str(b_path), str(telecom), str(c_path), "-q", "--report", str(report)
    )
    assert code == 0
    assert "left out" in err and str(telecom) in err
    data = json.loads(report.read_text())
    assert data["kind"] == "outcome_comparisons"
    assert [c["labels"] for c in data["comparisons"]] == [["A", "B"], ["A", "D"]]  # labels keep their position
    for (label, path), pair in zip((("B", b_path), ("D", c_path)), data["comparisons"], strict=True):
        alone = tmp_path / f"{label}.json"
        assert run_cli(capsys, "compare", str(a_path), str(path), "-q", "--report", str(alone))[0] == 0
        assert {k: v for k, v in pair.items() if k != "labels"} == json.loads(alone.read_text())
    common = [key for key in runs["A"] if all(key in run for run in runs.values())]
    assert data["common"] == len(common) == 4
    rows = {row["label"]: row for row in data["runs"]}
    for label, own in (("A", "A"), ("B", "B"), ("D", "C")):
        rate = rows[label]["success_on_common"]
        assert (rate["successes"], rate["n"]) == (sum(runs[own][key] for key in common), len(common))
        low, high = stats.binomtest(rate["successes"], rate["n"]).proportion_ci(method="wilson")
        assert (rate["low"], rate["high"]) == (pytest.approx(low), pytest.approx(high))
    assert rows["A"]["paired_with_baseline"] is None and rows["B"]["paired_with_baseline"] == 16
    # the gate: more than N regressions against A in any later log
    worst = max(c["summary"]["regressions"] for c in data["comparisons"])
    argv = ["compare", str(a_path), str(b_path), str(c_path), "-q"]
    assert run_cli(capsys, *argv, "--fail-on-regression", str(worst - 1))[0] == 1
    assert run_cli(capsys, *argv, "--fail-on-regression", str(worst))[0] == 0
    for name, marker in (("three.md", "## A → C"), ("three.html", "<h2>A → C</h2>"), ("three.csv", "\nC,11#")):
        assert run_cli(capsys, *argv, "--report", str(tmp_path / name))[0] == 0
        assert marker in (tmp_path / name).read_text()
    assert run_cli(capsys, *argv, "--report", str(tmp_path / "three.xml"))[0] == 0
    junit = (tmp_path / "three.xml").read_text()
    assert junit.count("<testsuite ") == 2
    assert junit.count("<failure ") == sum(c["summary"]["regressions"] for c in data["comparisons"])


def test_three_logs_none_pairing_is_one_line_and_tui_opens_two(capsys):
    a_path, b_path = pair_files(1)
    telecom, other = pair_files(3)
    code, _, err = run_cli(capsys, "compare", str(a_path), str(telecom), str(other))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "no log pairs with the baseline" in err
    code, _, err = run_cli(capsys, "compare", str(a_path), str(b_path), str(a_path), "--tui")
    assert code == 2 and "--tui opens two logs" in err


ATIF = Path(__file__).parents[2] / "data" / "formats" / "atif"


def harbor_job(root: Path, rewards: dict[tuple[str, int], float]) -> Path:
    """A Harbor job folder: ``<task>__<trial id>/agent/trajectory.json`` (a real ATIF trajectory with a
    session id of its own, as every trial has) beside ``result.json`` naming the task and its reward."""
    sample = json.loads((ATIF / "terminus_2__hello-world.trajectory__ATIF-v1.2.json").read_text())
    for (task, attempt), reward in rewards.items():
        trial = root / f"{task}__{root.name}{attempt}"
        (trial / "agent").mkdir(parents=True)
        (trial / "agent" / "trajectory.json").write_text(json.dumps({**sample, "session_id": f"{trial.name}-session"}))
        result = {"task_name": task, "trial_name": trial.name, "verifier_result": {"rewards": {"reward": reward}}}
        (trial / "result.json").write_text(json.dumps(result))
    return root


def test_two_harbor_jobs_pair_by_the_trials_task_name(tmp_path, capsys):
    a = harbor_job(tmp_path / "jobA", {("hello-world", 1): 1.0, ("fix-git", 1): 1.0, ("only-a", 1): 0.0})
    b = harbor_job(tmp_path / "jobB", {("hello-world", 1): 0.0, ("fix-git", 1): 1.0, ("only-b", 1): 1.0})
    report = tmp_path / "harbor.json"
    code, _, err = run_cli(capsys, "compare", str(a), str(b), "-q", "--report", str(report))
    assert code == 0, err
    data = json.loads(report.read_text())
    assert {task["key"]: task["change"] for task in data["tasks"]} == {
        "hello-world": "regressed",
        "fix-git": "both_succeeded",
    }
    assert data["unpaired"] == {"a_only": ["only-a"], "b_only": ["only-b"]}
