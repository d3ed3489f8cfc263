"""Comparing runs: alignment, flips, refusal of other inputs, overlap, the statistics (against scipy),
the agreement of several runs, and the comparison's reports."""

from __future__ import annotations

import csv
import io
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import orjson
import pytest
from scipy import stats

from replay_tui.compare import (
    CompareError,
    Comparison,
    agreement_matrix,
    compare_runs,
    demo_identities,
    load_run_file,
    repeat_runs,
    run_info,
)
from replay_tui.export import ExportError
from replay_tui.export.comparison import render_agreement, render_comparison, write_comparison
from replay_tui.repeat import summarize_repeats
from replay_tui.repeat_report import RepeatStep
from replay_tui.runner import EpisodeReport, StepResult, SummaryReport, episode_report, summarize

WRONG = "click[Wrong]"

# (episode, label, state, expected, A's prediction, B's prediction); "=" is the expected action.
CASE: list[tuple[int, str, str, str, str, str]] = [
    # episode 1: right in both, regressed, fixed, wrong alike
    (1, "0", "Search", "search[red shoes]", "=", "="),
    (1, "1", "Result", "click[B001]", "=", "click[B002]"),
    (1, "2", "Result", "click[Next >]", "click[< Prev]", "="),
    (1, "3", "Item", "click[Buy Now]", WRONG, WRONG),
    # episode 2: everything right in both
    (2, "0", "Search", "search[blue hat]", "=", "="),
    (2, "1", "Result", "click[B010]", "=", "="),
    (2, "2", "Item", "click[Buy Now]", "=", "="),
    # episode 3: wrong in both with different predictions, then fixed
    (3, "0", "Search", "search[green tea]", "search[tea]", "search[green]"),
    (3, "1", "Result", "click[B020]", WRONG, "="),
    # episode 4: fully right in A, two regressions in B
    (4, "0", "Search", "search[lamp]", "=", "search[lamps]"),
    (4, "1", "Result", "click[B030]", "=", WRONG),
    # episode 5: fully wrong in A, fully right in B
    (5, "0", "Search", "search[mug]", "search[cup]", "="),
    (5, "1", "Result", "click[B040]", WRONG, "="),
    # episode 6: regressed on the last step only
    (6, "0", "Search", "search[desk]", "=", "="),
    (6, "1", "Result", "click[B050]", "=", "="),
    (6, "2", "Item", "click[Buy Now]", "=", "click[Back to Search]"),
]
REGRESSED = [("1", "1"), ("4", "0"), ("4", "1"), ("6", "2")]
FIXED = [("1", "2"), ("3", "1"), ("5", "0"), ("5", "1")]
DIFFERENT = [("3", "0")]
SAME = [("1", "3")]


def step(session: int, label: str, state: str, expected: str, predicted: str, verdict: str | None = None) -> StepResult:
    predicted = expected if predicted == "=" else predicted
    if verdict is None:
        verdict = "match" if predicted == expected else "mismatch"
    return StepResult(
        session_id=session,
        step_index=int(label.split(".")[0]),
        step_number=int(label.split(".")[0]),
        step_label=label,
        state=state,
        expected=expected,
        predicted=predicted,
        verdict=verdict,  # type: ignore[arg-type]
        reason="" if verdict == "match" else "differs",
    )


def make_episode(
    session: int, steps: list[StepResult], *, file: str = "demo.json", instruction: str | None = None
) -> EpisodeReport:
    base = EpisodeReport(
        session_id=session,
        file=file,
        instruction=instruction if instruction is not None else f"instruction {session}",
        steps_total=0,
        steps_matched=0,
        accuracy=0.0,
        steps_recorded=len(steps),
    )
    return episode_report(base, steps, lambda r: "")


def make_report(
    rows: list[tuple[int, str, str, str, str, str]],
    which: int,
    *,
    file: str = "demo.json",
    mode: str = "run",
    skip: set[tuple[int, str]] = frozenset(),  # type: ignore[assignment]
) -> SummaryReport:
    """A report over ``rows`` with run ``which`` (4: A, 5: B) as the predictions."""
    episodes: dict[int, list[StepResult]] = {}
    for row in rows:
        if (row[0], row[1]) in skip:
            continue
        episodes.setdefault(row[0], []).append(step(row[0], row[1], row[2], row[3], row[which]))
    return summarize(
        [make_episode(sid, steps, file=file) for sid, steps in episodes.items()],
        mode=mode,
        mismatch_policy="allow",
        files=[file],
    )


def demo_info(name: str = "demo.json", sha: str = "ab" * 32, **extra) -> dict:
    return {"name": extra.pop("run_name", "run"), "demo_files": [{"name": name, "path": name, "sha256": sha}], **extra}


@pytest.fixture
def pair() -> tuple[SummaryReport, SummaryReport]:
    return make_report(CASE, 4, mode="baseline"), make_report(CASE, 5, mode="candidate")


@pytest.fixture
def comparison(pair) -> Comparison:
    a, b = pair
    return compare_runs(a, b, a_info=demo_info(run_name="base"), b_info=demo_info(run_name="cand"), resamples=2000)


def labels_of(steps) -> list[tuple[str, str]]:
    return [(s.episode, s.step_label) for s in steps]


# --------------------------------------------------------------------------- alignment and flips


def test_flips_per_step_equal_the_ones_made_by_hand(comparison: Comparison) -> None:
    assert labels_of(comparison.regressions) == REGRESSED
    assert labels_of(comparison.fixes) == FIXED
    assert labels_of(s for s in comparison.steps if s.flip == "both_wrong_different") == DIFFERENT
    assert labels_of(s for s in comparison.steps if s.flip == "both_wrong_same") == SAME
    assert comparison.flips == {
        "regressed": 4,
        "fixed": 4,
        "both_wrong_different": 1,
        "both_wrong_same": 1,
        "both_right": len(CASE) - 10,
    }
    assert labels_of(comparison.shown_steps) == sorted(
        REGRESSED + FIXED + DIFFERENT, key=lambda k: (int(k[0]), int(k[1]))
    )
    regressed = comparison.regressions[0]
    assert (regressed.expected, regressed.predicted_a, regressed.predicted_b) == (
        "click[B001]",
        "click[B001]",
        "click[B002]",
    )
    assert (regressed.verdict_a, regressed.verdict_b) == ("match", "mismatch")
    assert comparison.a.name == "base" and comparison.b.name == "cand" and comparison.a.hashes_known
    assert not comparison.overlap.partial and comparison.warnings == []


def test_flips_per_episode_on_every_step_matched(comparison: Comparison) -> None:
    flips = {e.episode: e.flip for e in comparison.episodes}
    assert flips == {
        "1": "both_wrong",
        "2": "both_right",
        "3": "both_wrong",
        "4": "regressed",
        "5": "fixed",
        "6": "regressed",
    }
    assert comparison.episode_flips == {"regressed": 2, "fixed": 1, "both_wrong": 2, "both_right": 1}
    first = comparison.episodes[0]
    assert (first.steps, first.right_a, first.right_b, first.regressed, first.fixed) == (4, 2, 2, 1, 1)
    assert first.flips["both_wrong_same"] == 1


def test_statistics_equal_scipy_on_the_constructed_case(comparison: Comparison) -> None:
    overall = comparison.overall
    right_a = sum(1 for row in CASE if row[4] == "=")
    right_b = sum(1 for row in CASE if row[5] == "=")
    n = len(CASE)
    assert (overall.n, overall.a.right, overall.b.right) == (n, right_a, right_b)
    for rate, k in ((overall.a, right_a), (overall.b, right_b)):
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert math.isclose(rate.low, ci.low, abs_tol=1e-9) and math.isclose(rate.high, ci.high, abs_tol=1e-9)
        assert math.isclose(rate.rate, k / n)
    b, c = overall.a_only, overall.b_only
    assert (b, c) == (len(REGRESSED), len(FIXED))
    assert math.isclose(overall.mcnemar_p, stats.binomtest(min(b, c), b + c, 0.5).pvalue)
    # the paired bootstrap: the observed difference, bracketed, clustered by episode, deterministic
    assert math.isclose(overall.difference, (right_b - right_a) / n)
    assert overall.low <= overall.difference <= overall.high
    assert overall.clusters == 6 and overall.resamples == 2000
    again = compare_runs(*_reports(), a_info=demo_info(), b_info=demo_info(), resamples=2000)
    assert again.overall == overall
    # episodes: 3 fully matched in A (2, 4, 6), 2 in B (2, 5); 2 discordant one way, 1 the other
    episodes = comparison.episodes_stats
    assert (episodes.n, episodes.a.right, episodes.b.right, episodes.a_only, episodes.b_only) == (6, 3, 2, 2, 1)
    assert math.isclose(episodes.mcnemar_p, stats.binomtest(1, 3, 0.5).pvalue)
    ci = stats.binomtest(3, 6).proportion_ci(method="wilson")
    assert math.isclose(episodes.a.low, ci.low, abs_tol=1e-9)


def _reports() -> tuple[SummaryReport, SummaryReport]:
    return make_report(CASE, 4), make_report(CASE, 5)


def test_statistics_per_state(comparison: Comparison) -> None:
    assert list(comparison.by_state) == ["Item", "Result", "Search"]
    for state, figures in comparison.by_state.items():
        rows = [row for row in CASE if row[2] == state]
        a_only = sum(1 for row in rows if row[4] == "=" and row[5] != "=")
        b_only = sum(1 for row in rows if row[5] == "=" and row[4] != "=")
        assert (figures.n, figures.a_only, figures.b_only) == (len(rows), a_only, b_only)
        expected_p = stats.binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
        assert math.isclose(figures.mcnemar_p, expected_p)
        assert figures.low <= figures.difference <= figures.high


def test_equivalent_steps_are_wrong_but_accepted_in_the_accepted_figures() -> None:
    a = summarize(
        [make_episode(1, [step(1, "0", "Search", "search[a b]", "search[b a]", "equivalent")])],
        mode="a",
        mismatch_policy="allow",
        files=["demo.json"],
    )
    b = summarize(
        [make_episode(1, [step(1, "0", "Search", "search[a b]", "=")])],
        mode="b",
        mismatch_policy="allow",
        files=["demo.json"],
    )
    result = compare_runs(a, b, resamples=200)
    assert result.flips["fixed"] == 1
    assert (result.accepted.a.right, result.accepted.b.right, result.accepted.a_only, result.accepted.b_only) == (
        1,
        1,
        0,
        0,
    )


def test_the_json_is_deterministic_and_reads_back(comparison: Comparison) -> None:
    data = comparison.to_json()
    assert data == comparison.to_json() and data.endswith(b"\n")
    assert Comparison.model_validate_json(data) == comparison
    keys = list(json.loads(data))
    assert keys == sorted(keys)


# --------------------------------------------------------------------------- identity and overlap


def test_a_demo_file_with_another_hash_is_refused_in_one_line(pair) -> None:
    a, b = pair
    with pytest.raises(
        CompareError,
        match=r"different recorded inputs: demo file demo\.json has sha256 abababababab… in A and cdcdcdcdcdcd… in B",
    ) as info:
        compare_runs(a, b, a_info=demo_info(), b_info=demo_info(sha="cd" * 32))
    assert "\n" not in str(info.value)


def test_runs_with_no_demo_file_in_common_are_refused(pair) -> None:
    a, _ = pair
    other = make_report(CASE, 5, file="other.json")
    with pytest.raises(CompareError, match="no demo file in common"):
        compare_runs(a, other, a_info=demo_info(), b_info=demo_info(name="other.json", sha="cd" * 32))
    with pytest.raises(CompareError, match=r"no demo file name in common \(A: demo\.json; B: other\.json\)"):
        compare_runs(a, other)


def test_plain_reports_compare_by_name_and_say_hashes_are_unknown(pair) -> None:
    a, b = pair
    result = compare_runs(a, b, b_info=demo_info(), resamples=200)
    assert result.flips["regressed"] == len(REGRESSED)
    assert any("hashes unknown for A" in w for w in result.warnings)
    # a file named by another path is the same file when only names are known
    moved = make_report(CASE, 5, file="/somewhere/else/demo.json")
    assert compare_runs(a, moved, resamples=200).flips["fixed"] == len(FIXED)


def test_same_file_name_with_other_recorded_actions_is_refused(pair) -> None:
    a, _ = pair
    changed = [(*row[:3], row[3] + "x", *row[4:]) if row[:2] == (3, "1") else row for row in CASE]
    b = make_report(changed, 5)
    with pytest.raises(CompareError, match=r"different recorded inputs: episode 3 step 1 expects 'click\[B020\]' in A"):
        compare_runs(a, b)


def test_partially_overlapping_runs_compare_on_the_overlap_and_say_so() -> None:
    a = make_report(CASE, 4, skip={(2, "0"), (2, "1"), (2, "2")})  # A did not replay episode 2
    b = make_report(CASE, 5, skip={(6, "2"), (1, "3")})  # B stopped earlier in episodes 6 and 1
    result = compare_runs(a, b, resamples=200)
    overlap = result.overlap
    assert overlap.partial
    assert (overlap.episodes_common, overlap.episodes_only_a, overlap.episodes_only_b) == (5, 0, 1)
    assert (overlap.steps_common, overlap.steps_only_a, overlap.steps_only_b) == (len(CASE) - 5, 2, 3)
    assert ("6", "2") not in labels_of(result.regressions)
    assert any("overlap partially" in w for w in result.warnings)
    assert "compared on 11 steps of 5 episodes" in overlap.describe()


def test_runs_sharing_no_step_are_refused(pair) -> None:
    a, _ = pair
    b = make_report(CASE, 5, skip={(row[0], row[1]) for row in CASE})
    with pytest.raises(CompareError, match="share no replayed step"):
        compare_runs(a, b)


def test_shared_files_only_when_one_run_read_more_files(pair) -> None:
    a, b = pair
    extra = summarize(
        [*b.episodes, make_episode(99, [step(99, "0", "Search", "search[x]", "=")], file="more.json")],
        mode="b",
        mismatch_policy="allow",
        files=["demo.json", "more.json"],
    )
    info = {"demo_files": [{"name": "demo.json", "sha256": "ab" * 32}, {"name": "more.json", "sha256": "ef" * 32}]}
    result = compare_runs(a, extra, a_info=demo_info(), b_info=info, resamples=200)
    assert result.overlap.files_only_b == ["more.json"] and result.overlap.episodes_only_b == 1
    assert any("share 1 demo file of 2" in w for w in result.warnings)


# --------------------------------------------------------------------------- loading


def test_load_a_run_file_and_a_plain_report(tmp_path: Path, pair) -> None:
    a, _ = pair
    plain = tmp_path / "plain.json"
    plain.write_bytes(a.to_json(include_steps=True))
    run_file = tmp_path / "run.json"
    data = a.to_dict(include_steps=True)
    data["run"] = {
        "id": "r1",
        "name": "nightly",
        "policy": "heuristic",
        "demo_files": [{"name": "demo.json", "sha256": "AB" * 32}],
    }
    run_file.write_bytes(orjson.dumps(data))
    loaded = load_run_file(run_file)
    assert loaded.info is not None and loaded.info["name"] == "nightly"
    info = run_info(loaded.summary, loaded.info, label="A", source=str(run_file))
    assert (
        info.hashes_known
        and info.demo_files[0].sha256 == "ab" * 32
        and info.name == "nightly"
        and info.mode == "heuristic"
    )
    assert load_run_file(plain).info is None
    assert run_info(load_run_file(plain).summary, None, label="B", source=str(plain)).name == "plain.json"


def test_loading_refuses_reports_without_steps_and_other_files(tmp_path: Path, pair) -> None:
    a, _ = pair
    no_steps = tmp_path / "no-steps.json"
    older = a.to_dict()
    del older["step_results"]  # a plain report as written before reports carried their step results
    no_steps.write_bytes(orjson.dumps(older))
    with pytest.raises(CompareError, match=r"no step results.*--report-steps"):
        load_run_file(no_steps)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CompareError, match=r"bad\.json: not JSON"):
        load_run_file(bad)
    other = tmp_path / "other.json"
    other.write_text("[1, 2]")
    with pytest.raises(CompareError, match="not a replay report"):
        load_run_file(other)
    with pytest.raises(CompareError, match=r"missing\.json"):
        load_run_file(tmp_path / "missing.json")


def _report_shapes(report: SummaryReport) -> dict[str, dict]:
    """A report as JSON in each shape ``compare`` reads: step results on the episodes (the seed's
    shape, reasons under ``step_reasons``), under ``step_results``, and with a value pydantic accepts
    and the narrow step schema does not (``match`` as 0/1)."""
    seed_shape = report.to_dict(include_steps=True)
    loose = report.to_dict(include_steps=True)
    for episode in loose["episodes"]:
        for item in episode["steps"]:
            item["match"] = int(item["match"])
    return {"steps": seed_shape, "step_results": report.to_dict(), "loose": loose}


@pytest.mark.parametrize("shape", ["steps", "step_results", "loose"])
def test_runs_read_from_json_compare_as_the_reports_they_were_written_from(tmp_path: Path, pair, shape) -> None:
    a, b = pair
    loaded = []
    for name, report in (("a.json", a), ("b.json", b)):
        path = tmp_path / name
        path.write_bytes(orjson.dumps(_report_shapes(report)[shape]))
        loaded.append(load_run_file(path))
    infos = {"a_info": demo_info(run_name="base"), "b_info": demo_info(run_name="cand"), "resamples": 500}
    read = compare_runs(loaded[0].run, loaded[1].run, **infos)
    assert read.to_json() == compare_runs(a, b, **infos).to_json()
    assert orjson.loads(agreement_matrix([r.run for r in loaded]).to_json()) == orjson.loads(
        agreement_matrix([a, b]).to_json()
    )


def test_comparing_runs_read_from_json_validates_their_whole_reports_only_when_asked(tmp_path: Path, pair) -> None:
    a, _ = pair
    path = tmp_path / "a.json"
    path.write_bytes(a.to_json(include_steps=True))
    loaded = load_run_file(path)
    assert run_info(loaded.run, None, label="A").steps == sum(len(e.steps) for e in a.episodes)
    assert "summary" not in vars(loaded)  # the comparison read the narrow schema alone
    assert loaded.summary.episodes[0].steps == a.episodes[0].steps


def test_a_faulty_step_result_is_named_as_the_report_model_names_it(tmp_path: Path, pair) -> None:
    a, _ = pair
    data = a.to_dict(include_steps=True)
    data["episodes"][0]["steps"][1]["session_id"] = "one"
    path = tmp_path / "faulty.json"
    path.write_bytes(orjson.dumps(data))
    with pytest.raises(CompareError, match=r"faulty\.json: not a replay report \(episodes\.0\.steps\.1\.session_id: "):
        load_run_file(path)
    data = a.to_dict(include_steps=True)
    data["episodes"][0]["steps"] = None
    path.write_bytes(orjson.dumps(data))
    with pytest.raises(CompareError, match=r"faulty\.json: the report has no step results \(episode 1\)"):
        load_run_file(path)


def test_demo_identities_hash_the_files(tmp_path: Path) -> None:
    demo = tmp_path / "demo.json"
    demo.write_text("[]")
    import hashlib

    (item,) = demo_identities([("demo.json", demo)])
    assert item == {"name": "demo.json", "path": str(demo), "size": 2, "sha256": hashlib.sha256(b"[]").hexdigest()}


# --------------------------------------------------------------------------- more than two runs


def test_agreement_matrix_of_three_runs() -> None:
    rows = [
        # label, expected, run 0, run 1, run 2
        ("0", "search[a]", "=", "=", "="),
        ("1", "click[B1]", "=", WRONG, "="),
        ("2", "click[B2]", WRONG, WRONG, "click[B9]"),
        ("3", "click[B3]", "=", "=", WRONG),
    ]
    runs = [
        summarize(
            [make_episode(1, [step(1, label, "Result", expected, row[i]) for label, expected, *row in rows])],
            mode=f"run{i}",
            mismatch_policy="allow",
            files=["demo.json"],
        )
        for i in range(3)
    ]
    agreement = agreement_matrix(runs)
    # same verdict and prediction: 0-1 agree on steps 0, 2, 3; 0-2 on 0, 1; 1-2 on 0
    assert agreement.matrix == [[1.0, 0.75, 0.5], [0.75, 1.0, 0.25], [0.5, 0.25, 1.0]]
    assert agreement.pair_steps == [[4, 4, 4], [4, 4, 4], [4, 4, 4]]
    assert (agreement.common_steps, agreement.all_agree, agreement.all_right, agreement.all_wrong) == (4, 1, 1, 1)
    assert [rate.right for rate in agreement.accuracy] == [3, 2, 2]
    assert [d["step_label"] for d in agreement.disagreements] == ["1", "2", "3"]
    assert [run.label for run in agreement.runs] == ["A", "B", "C"]
    for fmt in ("json", "md", "csv", "html"):
        assert render_agreement(agreement, fmt)
    with pytest.raises(ExportError, match="agreement"):
        render_agreement(agreement, "junit")


def test_agreement_refuses_other_inputs(pair) -> None:
    a, b = pair
    with pytest.raises(CompareError, match="different recorded inputs"):
        agreement_matrix([a, b, a], [demo_info(), demo_info(), demo_info(sha="cd" * 32)])


def test_a_repeat_report_is_one_run_per_repetition() -> None:
    steps = [
        RepeatStep(
            session_id=1,
            step_index=0,
            step_label="0",
            kind="decision",
            state="Search",
            expected="search[a]",
            predictions=["search[a]", "search[b]", "!timeout"],
            errors=[None, None, "timeout: slow"],
            matches=1,
            distinct=3,
            agreement_with_recording=1 / 3,
            agreement_between_runs=0.0,
        ),
        RepeatStep(
            session_id=1,
            step_index=1,
            step_label="1",
            kind="decision",
            state="Result",
            expected="click[B1]",
            predictions=["click[B1]", "click[B1]", "click[B1]"],
            errors=[None, None, None],
            matches=3,
            distinct=1,
            agreement_with_recording=1.0,
            agreement_between_runs=1.0,
        ),
    ]
    report = summarize_repeats(steps, mode="llm", repeats=3, files=["demo.json"], episodes_run=1)
    runs = repeat_runs(report.model_dump(mode="json"), "rep.json")
    assert len(runs) == 3
    assert [[s.match for s in run.summary.episodes[0].steps] for run in runs] == [
        [True, True],
        [False, True],
        [False, True],
    ]
    assert runs[2].summary.episodes[0].steps[0].error_kind == "timeout"
    agreement = agreement_matrix([run.summary for run in runs])
    assert agreement.matrix[0][1] == 0.5 and agreement.all_agree == 1


# --------------------------------------------------------------------------- reports


def _section(markdown: str, heading: str) -> list[str]:
    lines = markdown.splitlines()
    start = lines.index(heading)
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith(("### ", "<details>")):
            break
        rows.append(line)
    return [row for row in rows if row.startswith("| `")]


def test_markdown_has_the_summary_table_and_exactly_the_regressions(comparison: Comparison) -> None:
    text = render_comparison(comparison, "md").decode()
    assert text.startswith("## Compare runs\n")
    assert "**⚠️ Regressions, no significant difference (±0.0 pp, McNemar p = 1):** 4 regressions, 4 fixed" in text
    assert "| Step accuracy (n=16) |" in text and "| Episodes fully matched (n=6) |" in text
    rows = _section(text, "### Regressions (4)")
    found = [tuple(cell.strip().strip("`") for cell in row.split("|")[1:3]) for row in rows]
    assert found == REGRESSED
    assert "<details><summary>4 fixes ✗→✓</summary>" in text
    assert "resamples whole episodes" in text
    assert len(text) < 60_000


def test_junit_fails_one_case_per_regression(comparison: Comparison) -> None:
    root = ET.fromstring(render_comparison(comparison, "junit"))
    suite = root.find("testsuite")
    assert suite is not None
    failures = [case for case in suite.iter("testcase") if case.find("failure") is not None]
    assert suite.get("failures") == "4" and len(failures) == 4
    assert [(case.get("classname"), case.get("name", "").split()[1]) for case in failures] == [
        (f"episode {e}", s) for e, s in REGRESSED
    ]
    assert int(suite.get("tests", "0")) == 1 + len(REGRESSED) + len(FIXED) + len(DIFFERENT)


def test_csv_and_html_reports(comparison: Comparison, tmp_path: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(render_comparison(comparison, "csv").decode())))
    steps = [row for row in rows if row["kind"] == "step"]
    assert len(steps) == len(CASE)
    assert [(r["episode"], r["step"]) for r in steps if r["flip"] == "regressed"] == REGRESSED
    assert any(r["name"] == "steps.mcnemar_p" for r in rows)
    html = render_comparison(comparison, "html").decode()
    assert html.startswith("<!DOCTYPE html>") and "Regressions (4)" in html
    written = write_comparison(tmp_path / "out.xml", comparison)
    assert written.read_bytes() == render_comparison(comparison, "junit")
    with pytest.raises(ExportError, match="report format"):
        write_comparison(tmp_path / "out.txt", comparison)


def test_untrusted_text_is_escaped_in_every_report() -> None:
    hostile = "click[<script>alert(1)</script> | `x` \x1b[31m[bold]red[/bold]]"
    a = summarize(
        [make_episode(1, [step(1, "0", "Search", "search[a]", "=")])],
        mode="a",
        mismatch_policy="allow",
        files=["d.json"],
    )
    b = summarize(
        [make_episode(1, [step(1, "0", "Search", "search[a]", hostile)])],
        mode="b",
        mismatch_policy="allow",
        files=["d.json"],
    )
    result = compare_runs(a, b, resamples=200)
    html = render_comparison(result, "html").decode()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    for fmt in ("md", "html", "junit", "csv"):
        assert "\x1b" not in render_comparison(result, fmt).decode()
    md = render_comparison(result, "md").decode()
    (row,) = _section(md, "### Regressions (1)")
    assert row.count(" | ") == 5  # the pipe inside the prediction is escaped: the row keeps its six cells


def test_regressions_are_grouped_like_mismatches_and_the_groups_sum_to_them(comparison: Comparison) -> None:
    groups = comparison.regression_groups
    assert groups and sum(group.count for group in groups) == len(comparison.regressions) == 4
    keyed = sorted(tuple(key) for group in groups for key in group.steps)
    assert keyed == sorted((step.episode, step.step_label) for step in comparison.regressions)
    text = render_comparison(comparison, "md").decode()
    assert "### What regressed" in text
    assert "What regressed" in render_comparison(comparison, "html").decode()
    assert "regression_groups" in comparison.to_json().decode()


def test_a_repeat_report_is_read_back_with_the_model_the_repeat_run_wrote() -> None:
    """One schema (issue 29): compare validates a ``--repeat`` report with repeat's own model, no copy."""
    import replay_tui.compare.run_files as compare_module
    import replay_tui.repeat as repeat_module

    assert compare_module.RepeatReport is repeat_module.RepeatReport
    assert not [name for name in vars(compare_module) if name.startswith("_Repeat")]


def test_regressions_are_grouped_when_first_asked_for_not_when_compared(pair, monkeypatch) -> None:
    """Grouping 60,000 regressions was a third of a big comparison's time, for a headline that does
    not show them (issue 32): a comparison groups them when a report or a screen asks."""
    import replay_tui.compare.runs as module

    calls: list[int] = []
    real = module.group_steps

    def counting(items):
        calls.append(1)
        return real(items)

    monkeypatch.setattr(module, "group_steps", counting)
    result = compare_runs(*pair, resamples=200)
    assert "4 regressed" in result.headline() and calls == []
    assert sum(group.count for group in result.regression_groups) == 4 and calls == [1]
    assert result.to_dict()["regression_groups"] == [g.model_dump(mode="json") for g in result.regression_groups]
    assert calls == [1]  # made once


def test_accepted_figures_without_equivalent_steps_are_the_step_figures_drawn_once(pair, monkeypatch) -> None:
    """With no step judged equivalent, ``accepted`` is the step accuracy: it is not bootstrapped again
    (seconds at 20,000 episodes), and equals what bootstrapping it gives."""
    import replay_tui.stats as module

    calls: list[int] = []
    real = module.paired_bootstraps

    def counting(samples, **kwargs):
        calls.extend(1 for _ in samples)
        return real(samples, **kwargs)

    monkeypatch.setattr(module, "paired_bootstraps", counting)
    result = compare_runs(*pair, resamples=200)
    assert len(calls) == 1 + len(result.by_state) + 1  # overall, each state, episodes
    steps = result.steps
    again = module.paired_stats(
        [s.verdict_a != "mismatch" for s in steps],
        [s.verdict_b != "mismatch" for s in steps],
        [s.episode for s in steps],
        resamples=200,
    )
    assert result.accepted == again
