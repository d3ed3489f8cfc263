"""Reports name the log's outcome beside the replay's agreement (issue 30), and keep the seed's form.

The seed-form test compares today's reports of the bundled example with the ones written at
commit 9385ed0 (``tests/data/reports_9385ed0``, see its PROVENANCE.md): every key, column and
element those had is still there, with the same value; only the outcome fields are new.
"""

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from replay_tui.cli.commands import main
from replay_tui.episodes.model import Outcome, OutcomeCheck, ToolCall, Trajectory, TrajectoryStep
from replay_tui.examples import example_path
from replay_tui.expected import align_trajectory
from replay_tui.export import CSV_OUTCOME_COLUMNS, headline, render_report
from replay_tui.runner import EpisodeReport, episode_outcome, summarize

DATA = Path(__file__).resolve().parents[1] / "data"
GOLDEN = DATA / "reports_9385ed0"
TAU2 = DATA / "formats" / "tau2" / "2025-10-05T22-50-14.083933_airline_llm_agent_grok-3_user_simulator_grok-3.json"
SWE_AGENT = DATA / "formats" / "swe_agent"
OUTCOME_NAMES = re.compile(r"^(outcome($|_)|outcomes_|missed_expected$|extra_writes$|headline$)")


def replay(tmp_path: Path, *argv: str, report: str) -> Path:
    path = tmp_path / report
    assert main(["replay", *argv, "--no-save-run", "--report", str(path), "-q"]) in (0, 1)
    return path


# --------------------------------------------------------------------------- the seed's form kept


def _subset(old, new, where="$"):
    """Every key of ``old`` is in ``new`` with the same value (dicts recursively, lists item by item)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        for key, value in old.items():
            assert key in new, f"{where}.{key} is gone"
            _subset(value, new[key], f"{where}.{key}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), where
        for n, (a, b) in enumerate(zip(old, new, strict=True)):
            _subset(a, b, f"{where}[{n}]")
    else:
        assert old == new, f"{where}: {old!r} became {new!r}"


def _tree(element):
    """An XML element as comparable data, whitespace-only text ignored and the outcome properties
    (the only additions) left out, with any ``properties`` element they leave empty."""
    children = []
    for child in element:
        if child.tag == "property" and OUTCOME_NAMES.match(child.get("name", "")):
            continue
        item = _tree(child)
        if child.tag == "properties" and not item[3]:
            continue
        children.append(item)
    return (element.tag, dict(element.attrib), (element.text or "").strip(), children)


@pytest.mark.parametrize("mode", ["stub", "heuristic"])
@pytest.mark.parametrize("mismatch", ["stop", "allow"])
@pytest.mark.parametrize("ext", ["json", "csv", "xml"])
def test_seed_reports_keep_every_key_and_column_of_9385ed0(tmp_path, mode, mismatch, ext):
    args = ["--mode", mode, "--mismatch", mismatch, "--sessions", "0-9"]
    new_text = replay(tmp_path, *args, report=f"{mode}_{mismatch}.{ext}").read_text(encoding="utf-8")
    new_text = new_text.replace(str(example_path()), "{EXAMPLE}")
    old_text = (GOLDEN / f"{mode}_{mismatch}.{ext}").read_text(encoding="utf-8")
    if ext == "json":
        old, new = json.loads(old_text), json.loads(new_text)
        _subset(old, new)
        assert set(new) - set(old) == {"outcomes"}
        assert all(set(b) - set(a) == {"outcome"} for a, b in zip(old["episodes"], new["episodes"], strict=True))
    elif ext == "csv":
        old_rows = list(csv.reader(io.StringIO(old_text, newline="")))
        new_rows = list(csv.reader(io.StringIO(new_text, newline="")))
        width = len(old_rows[0])
        assert new_rows[0] == old_rows[0] + list(CSV_OUTCOME_COLUMNS)  # appended, the rest in place
        assert [row[:width] for row in new_rows[: len(old_rows)]] == old_rows
        added = new_rows[len(old_rows) :]  # the run's outcome counts and headline, last
        name = old_rows[0].index("name")
        assert added and all(row[0] == "run" and OUTCOME_NAMES.match(row[name]) for row in added)
    else:
        assert _tree(ET.fromstring(new_text.encode())) == _tree(ET.fromstring(old_text.encode()))
        assert new_text != old_text  # the outcome properties are there


# --------------------------------------------------------------------------- agreement and outcome


def test_tau2_stub_report_says_how_many_tasks_failed_beside_pass(tmp_path):
    """The issue's case: a stub replay agrees on every step of a tau2 file where 9 of 20 tasks failed."""
    md = replay(tmp_path, "--demos", str(TAU2), "--mode", "stub", report="t.md").read_text(encoding="utf-8")
    status = next(line for line in md.splitlines() if "PASS" in line)
    assert "✅" in status and "replay agrees with the recording on 113/113 steps" in status
    assert "the recorded agent succeeded on 11/20 tasks (9 failed)" in status
    assert md.count("| failed |") == 9  # each failed task, with its reason

    html = replay(tmp_path, "--demos", str(TAU2), "--mode", "stub", report="t.html").read_text(encoding="utf-8")
    verdict = next(line for line in html.splitlines() if '<p class="verdict">' in line)
    assert "succeeded on 11/20 tasks (9 failed)" in verdict

    data = json.loads(replay(tmp_path, "--demos", str(TAU2), "--mode", "stub", report="t.json").read_text())
    assert data["outcomes"] == {"succeeded": 11, "failed": 9, "errored": 0, "unknown": 0}
    assert sum(data["outcomes"].values()) == data["episodes_run"] == 20
    for episode in data["episodes"]:
        outcome = episode["outcome"]
        assert outcome["success"] in (True, False) and isinstance(outcome["score"], float)
        assert isinstance(outcome["reason"], str) and isinstance(outcome["missed_expected"], list)
        assert outcome["kind"] == ("succeeded" if outcome["success"] else "failed")


def test_tau2_reports_name_the_reference_actions_the_file_says_were_missed(tmp_path):
    """missed_expected, computed apart from the reader: each of the agent's reference actions whose
    action check the file itself marks unmatched (reward_info.action_checks), in the reference's order."""
    raw = json.loads(TAU2.read_text(encoding="utf-8"))
    want = {
        f"{sim['task_id']}#{sim['trial']}": [
            check["action"]["name"]
            for check in (sim["reward_info"] or {}).get("action_checks") or []
            if not check["action_match"] and check["action"].get("requestor", "assistant") == "assistant"
        ]
        for sim in raw["simulations"]
    }
    data = json.loads(replay(tmp_path, "--demos", str(TAU2), "--mode", "stub", report="t.json").read_text())
    got = {episode["episode_id"]: episode["outcome"]["missed_expected"] for episode in data["episodes"]}
    assert got == want and sum(map(len, want.values())) >= 10
    md = replay(tmp_path, "--demos", str(TAU2), "--mode", "stub", report="t.md").read_text(encoding="utf-8")
    rows = {line.split("|")[2].strip(" `"): line for line in md.splitlines() if re.match(r"^\| \d+ \| `", line)}
    failed = [e["episode_id"] for e in data["episodes"] if e["outcome"]["kind"] == "failed"]
    assert sorted(rows) == sorted(failed) and len(failed) == 9
    for episode_id in failed:
        row = rows[episode_id]
        named = re.findall(r"`([^`]+)` (?:missing|different)\b", row.split("|")[-2])  # extra writes apart
        assert named == want[episode_id], row  # each one, in the reference's order
        assert "db: " in row or "max\\_steps" in row  # the reason: the failed check, else how it ended


def test_swe_agent_reports_never_pass_without_the_tasks(tmp_path):
    for ext in ("md", "html"):
        text = replay(tmp_path, "--demos", str(SWE_AGENT), "--mode", "stub", report=f"s.{ext}").read_text()
        for line in text.splitlines():
            if "PASS" in line or "✅" in line:
                assert re.search(r"succeeded on \d+/\d+ tasks|records no outcome for \d+ tasks", line), line
    data = json.loads(replay(tmp_path, "--demos", str(SWE_AGENT), "--mode", "stub", report="s.json").read_text())
    assert sum(data["outcomes"].values()) == data["episodes_run"] > 0
    assert all(set(e["outcome"]) >= {"success", "score", "reason", "missed_expected"} for e in data["episodes"])
    # the samples record no verdict, only how each run ended: the two that died on a model error
    # (their info.exit_status an exception's name, not "submitted") are errored, the rest unknown
    raws = [json.loads(path.read_text()) for path in sorted(SWE_AGENT.iterdir()) if path.suffix in (".traj", ".json")]
    statuses = [(raw.get("info") or {}).get("exit_status") for raw in raws if isinstance(raw, dict)]
    crashed = sum(1 for status in statuses if status and status.casefold() != "submitted")
    runs = data["episodes_run"]
    md = replay(tmp_path, "--demos", str(SWE_AGENT), "--mode", "stub", report="s.md").read_text()
    (status,) = [line for line in md.splitlines() if "PASS" in line]
    want = f"the recorded agent succeeded on 0/{runs} tasks (0 failed, {crashed} errored, {runs - crashed} unknown)"
    assert crashed == 2 and want in status, status


def test_the_cli_prints_agreement_and_outcome(capsys):
    assert main(["replay", "--demos", str(TAU2), "--mode", "stub", "--no-save-run"]) == 0
    out = capsys.readouterr().out
    assert (
        "replay agrees with the recording on 113/113 steps · the recorded agent succeeded on 11/20 tasks (9 failed)"
        in (" ".join(out.split()))
    )


# --------------------------------------------------------------------------- every format, built outcomes


def _trajectory_with_reference() -> Trajectory:
    """An episode whose log names three reference actions: one done, one with another argument, one not."""
    calls = [
        ToolCall(name="get_user_details", arguments={"user_id": "ada"}),
        ToolCall(name="book_reservation", arguments={"flight": "HAT001", "cabin": "economy"}),
    ]
    return Trajectory(
        id="t-1",
        format="tau2",
        steps=[TrajectoryStep(index=n, action=call) for n, call in enumerate(calls)],
        outcome=Outcome(
            reward=0.0,
            success=False,
            status="user_stop",
            checks=[OutcomeCheck(name="db", passed=False, detail="the database differs")],
            expected_actions=[
                ToolCall(name="book_reservation", arguments={"flight": "HAT001", "cabin": "business"}),
                ToolCall(name="get_user_details", arguments={"user_id": "ada"}),
                ToolCall(name="send_certificate", arguments={"amount": 50}),
            ],
        ),
    )


def _summary():
    trajectory = _trajectory_with_reference()
    failed = episode_outcome(trajectory.outcome, align_trajectory(trajectory))
    base = {"steps_total": 2, "steps_matched": 2, "accuracy": 1.0, "steps_recorded": 2}
    episodes = [
        EpisodeReport(session_id=0, episode_id="t-1", outcome=failed, **base),
        EpisodeReport(
            session_id=1,
            episode_id="t-2",
            outcome=episode_outcome(Outcome(success=True, reward=1.0, target="42", answer="42")),
            **base,
        ),
        EpisodeReport(
            session_id=2, episode_id="t-3", outcome=episode_outcome(Outcome(error="Timeout: 600 s\ntrace")), **base
        ),
        EpisodeReport(session_id=3, episode_id="t-4", outcome=episode_outcome(Outcome()), **base),
    ]
    return summarize(episodes, mode="stub", mismatch_policy="stop")


def test_missed_expected_keeps_the_references_order_and_names_the_argument():
    outcome = _summary().episodes[0].outcome
    assert outcome.missed_expected == ["book_reservation", "send_certificate"]
    assert [(e.name, e.status) for e in outcome.expected] == [
        ("book_reservation", "different"),
        ("get_user_details", "matched"),
        ("send_certificate", "missing"),
    ]
    assert "cabin" in outcome.expected[0].reason
    assert outcome.reason == "db: the database differs" and outcome.kind == "failed"


def test_every_format_carries_the_outcome():
    summary = _summary()
    assert headline(summary) == (
        "replay agrees with the recording on 8/8 steps · the recorded agent succeeded on 1/4 tasks "
        "(1 failed, 1 errored, 1 unknown)"
    )
    data = json.loads(render_report(summary, "json"))
    assert data["outcomes"] == {"succeeded": 1, "failed": 1, "errored": 1, "unknown": 1}
    first, second, third, fourth = (episode["outcome"] for episode in data["episodes"])
    assert first["missed_expected"] == ["book_reservation", "send_certificate"] and first["success"] is False
    assert [(c["name"], c["passed"], c["detail"]) for c in first["checks"]] == [("db", False, "the database differs")]
    assert second["target"] == "42" and second["answer"] == "42" and second["score"] == 1.0
    assert third["kind"] == "errored" and third["reason"] == "Timeout: 600 s" and third["success"] is None
    assert fourth == {"kind": "unknown", "success": None, "score": None, "reason": "", "missed_expected": []}

    md = render_report(summary, "md").decode()
    row = next(line for line in md.splitlines() if line.startswith("| 0 | `t-1` |"))
    assert "db: the database differs" in row and "`book_reservation`" in row and "cabin" in row
    assert "`send_certificate` missing" in row
    assert "| 2 | `t-3` | errored |" in md and "`t-2`" not in md.split("### Task outcomes")[1]

    rows = list(csv.DictReader(io.StringIO(render_report(summary, "csv").decode(), newline="")))
    episodes = [row for row in rows if row["kind"] == "episode"]
    assert [row["outcome"] for row in episodes] == ["failed", "succeeded", "errored", "unknown"]
    assert episodes[0]["missed_expected"] == "book_reservation;send_certificate"
    assert episodes[0]["outcome_checks"] == "db: failed" and episodes[1]["outcome_target"] == "42"
    run = {row["name"]: row["value"] for row in rows if row["kind"] == "run"}
    assert run["outcomes_failed"] == "1" and run["headline"] == headline(summary)

    suite = ET.fromstring(render_report(summary, "junit")).find("testsuite")
    assert suite.get("failures") == "0"  # agreement decides what fails; the outcome is a property
    case = {p.get("name"): p.get("value") for p in suite.find("testcase").iter("property")}
    assert case["outcome"] == "failed" and case["outcome_reason"] == "db: the database differs"
    assert case["missed_expected"] == "book_reservation;send_certificate"
    suite_properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert suite_properties["outcomes_unknown"] == "1"

    html = render_report(summary, "html").decode()
    assert "succeeded on 1/4 tasks (1 failed, 1 errored, 1 unknown)" in html
    assert "<code>send_certificate</code> missing" in html and "db: the database differs" in html


def test_a_report_written_before_outcomes_still_loads():
    summary = _summary()
    data = json.loads(render_report(summary, "json"))
    for episode in data["episodes"]:
        del episode["outcome"]
    del data["outcomes"]
    again = type(summary).model_validate(data)
    assert again.outcomes == {"succeeded": 0, "failed": 0, "errored": 0, "unknown": 4}
    assert "records no outcome for 4 tasks" in headline(again)


def test_hostile_outcome_text_stays_data_in_every_format():
    """A log's outcome texts are untrusted: no control character reaches a report, Markdown and
    HTML escape markup, CSV neutralises a formula."""
    hostile = "=cmd|' /C calc'!A0 <script>alert(1)</script> [bold red]x[/] a|b \x1b]0;title\x07 \x1b[31mred nul\x00"
    outcome = Outcome(
        success=False,
        reward=0.0,
        error=hostile,
        target=hostile,
        answer=hostile,
        explanation=hostile,
        checks=[OutcomeCheck(name=hostile, passed=False, detail=hostile)],
        expected_actions=[ToolCall(name="send<script>", arguments={"x": 1})],
    )
    trajectory = Trajectory(id="h", format="tau2", steps=[], outcome=outcome)
    report = EpisodeReport(
        session_id=0,
        episode_id="h\x1b[2J",
        outcome=episode_outcome(outcome, align_trajectory(trajectory)),
        steps_total=0,
        steps_matched=0,
        accuracy=0.0,
        steps_recorded=0,
    )
    summary = summarize([report], mode="stub", mismatch_policy="stop")
    control = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
    for fmt in ("json", "md", "csv", "html", "junit"):
        text = render_report(summary, fmt).decode("utf-8").replace("\r\n", "\n")
        assert not control.search(text), fmt
        if fmt == "html":
            assert "<script>alert" not in text and "&lt;script&gt;alert" in text
        if fmt == "md":  # escaped as text (a tool name stays inside a code span, where it is inert)
            assert "<script>alert" not in text and "`send<script>`" in text
    rows = list(csv.DictReader(io.StringIO(render_report(summary, "csv").decode(), newline="")))
    episode = next(row for row in rows if row["kind"] == "episode")
    assert episode["outcome_answer"].startswith("'=cmd") and episode["missed_expected"] == "send<script>"
    data = json.loads(render_report(summary, "json"))
    assert "<script>alert(1)</script>" in data["episodes"][0]["outcome"]["answer"]  # data, kept as text


def test_the_replays_predictions_are_aligned_with_the_reference_too(tmp_path):
    """JSON ``replay_expected``: a stub replay predicts the recorded calls, so it hits what the agent
    hit; a policy that never calls a tool hits none of the agent's reference actions."""
    stub = json.loads(replay(tmp_path, "--demos", str(TAU2), "--mode", "stub", report="s.json").read_text())
    with_reference = [e for e in stub["episodes"] if e.get("replay_expected")]
    assert len(with_reference) >= 15
    for episode in with_reference:
        assert episode["replay_expected"]["missed"] == episode["outcome"]["missed_expected"]
    silent = tmp_path / "silent.py"
    silent.write_text(
        "class Silent:\n    def predict_action(self, observation, state, available_actions, llm_prompt_repr):\n"
        "        return ''\n",
        encoding="utf-8",
    )
    argv = ["--demos", str(TAU2), "--policy", f"{silent}:Silent", "--mismatch", "allow"]
    data = json.loads(replay(tmp_path, *argv, report="n.json").read_text())
    for episode in data["episodes"]:
        if episode.get("replay_expected"):
            found = episode["replay_expected"]
            assert found["matched"] == 0 and len(found["missed"]) == found["total"]
    assert sum(e["replay_expected"]["total"] for e in data["episodes"] if e.get("replay_expected")) > 10


# --------------------------------------------------------------------------- inspect_ai: the log's record


INSPECT = DATA / "formats" / "inspect_ai"
INSPECT_SHARED = [  # the shared inspect_ai logs that hold samples (the folder's others were made for tests)
    INSPECT / name
    for name in (
        "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
        "2025-05-12T20-27-36-04-00_browser.json",
        "docent__tests_integration__ctf.json",
        "log_formats.json",
        "log_message_deduplication.eval",
        "log_read_sample.eval",
        "log_streaming.eval",
        "log_tool_call_error.json",
        "mmlu-summary-choices.eval",
    )
]


def _inspect_records() -> dict[tuple[str, str, str], dict[str, str]]:
    """Each sample's target, the model's answer and the first scorer's explanation, those the file
    records, read with json and zstd (not the reader), by file name, id and ``id#epoch``."""
    from tests.formats.test_inspect_ai import raw_samples, resolved

    found = {}
    for path in INSPECT_SHARED:
        for sample in raw_samples(path)[1]:
            target = resolved(sample, sample.get("target"))
            first = next(iter((sample.get("scores") or {}).values()), {})
            completion = resolved(sample, (sample.get("output") or {}).get("completion"))
            texts = {
                "target": "".join(target) if isinstance(target, list) else target,
                "answer": completion or first.get("answer"),
                "explanation": first.get("explanation"),
            }
            key = (path.name, str(sample["id"]), f"{sample['id']}#{sample.get('epoch')}")
            found[key] = {label: text for label, text in texts.items() if isinstance(text, str) and text.strip()}
    return found


def _squash(text: str) -> str:
    return " ".join(text.split())


def test_inspect_reports_carry_each_samples_target_answer_and_explanation(tmp_path):
    """Issue 30's acceptance on the shared inspect_ai logs, in the reports: JSON, CSV and HTML give
    each sample's target, answer and explanation as the file has them; Markdown's row of a failed
    sample says what was expected and what the model answered beside why it failed."""
    records = _inspect_records()
    argv = ["--mode", "stub", "--demos", *map(str, INSPECT_SHARED)]
    data = json.loads(replay(tmp_path, *argv, report="i.json").read_text())
    by_id = {(Path(e["file"]).name, e["episode_id"]): e for e in data["episodes"]}
    episodes = {  # an episode's id is the sample's, with its epoch where the log needs it
        key: by_id.get((key[0], key[2])) or by_id[(key[0], key[1])] for key in records
    }
    assert len(episodes) == len(data["episodes"]) == len(records) == 22
    counted = 0
    for key, texts in records.items():
        outcome = episodes[key]["outcome"]
        for label, text in texts.items():
            assert outcome[label] == (text if len(text) <= 2000 else text[:1999] + "…"), (key, label)
            counted += 1
    assert counted >= 50

    rows = list(csv.DictReader(io.StringIO(replay(tmp_path, *argv, report="i.csv").read_text(), newline="")))
    by_session = {row["session_id"]: row for row in rows if row["kind"] == "episode"}
    for key, texts in records.items():
        row = by_session[str(episodes[key]["session_id"])]
        for label, text in texts.items():
            assert _squash(row[f"outcome_{label}"])[:60] == _squash(text)[:60], (key, label)

    import html as html_lib

    page = _squash(html_lib.unescape(replay(tmp_path, *argv, report="i.html").read_text()))
    for texts in records.values():
        for label, text in texts.items():
            assert _squash(text)[:60] in page, label

    md = replay(tmp_path, *argv, report="i.md").read_text(encoding="utf-8")
    lines = {line.split("|")[1].strip(): line for line in md.splitlines() if re.match(r"^\| \d+ \| `", line)}
    failed = [key for key, e in episodes.items() if e["outcome"]["kind"] in ("failed", "errored")]
    assert len(failed) >= 4
    for key in failed:
        row = _squash(lines[str(episodes[key]["session_id"])].replace("\\", ""))
        texts = records[key]
        assert "target `" in row and _squash(texts["target"])[:40] in row, row
        if "answer" in texts:
            assert "answer `" in row and _squash(texts["answer"].replace("\n", "⏎"))[:40] in row, row


def test_a_repeat_report_counts_the_outcomes_too(tmp_path, capsys):
    """``--repeat K`` writes a JSON report of its own: it has the same ``outcomes`` summary and an
    ``outcome`` per episode as a replay's, and the terminal line says how many tasks failed."""
    raw = json.loads(TAU2.read_text(encoding="utf-8"))
    want = {
        f"{sim['task_id']}#{sim['trial']}": (
            sim["reward_info"]["reward"] == 1,
            [
                check["action"]["name"]
                for check in (sim["reward_info"] or {}).get("action_checks") or []
                if not check["action_match"] and check["action"].get("requestor", "assistant") == "assistant"
            ],
        )
        for sim in raw["simulations"]
    }
    path = tmp_path / "r.json"
    argv = ["replay", "--demos", str(TAU2), "--mode", "stub", "--repeat", "2", "--no-save-run", "--report", str(path)]
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the recorded agent succeeded on 11/20 tasks (9 failed)" in out, out
    data = json.loads(path.read_text())
    assert data["outcomes"] == {"succeeded": 11, "failed": 9, "errored": 0, "unknown": 0}
    assert sum(data["outcomes"].values()) == data["episodes_run"] == len(data["episodes"]) == 20
    got = {
        episode["episode_id"]: (episode["outcome"]["success"], episode["outcome"]["missed_expected"])
        for episode in data["episodes"]
    }
    assert got == want
    for episode in data["episodes"]:
        assert set(episode["outcome"]) >= {"success", "score", "reason", "missed_expected"}


def test_a_comparison_of_runs_says_each_runs_outcomes(tmp_path, capsys):
    """``compare A B --report x.json``: each run's entry (``a``, ``b``) has the ``outcomes`` summary its
    own report has, integer counts summing to the run's episodes."""
    first = replay(tmp_path, "--demos", str(TAU2), "--mode", "stub", report="a.json")
    second = replay(tmp_path, "--demos", str(TAU2), "--mode", "stub", "--sessions", "0-9", report="b.json")
    path = tmp_path / "c.json"
    assert main(["compare", str(first), str(second), "--report", str(path)]) in (0, 1)
    capsys.readouterr()
    data = json.loads(path.read_text())
    for label, report in (("a", first), ("b", second)):
        own = json.loads(report.read_text())["outcomes"]
        assert data[label]["outcomes"] == own and sum(own.values()) == data[label]["episodes"], label
    assert data["a"]["outcomes"] == {"succeeded": 11, "failed": 9, "errored": 0, "unknown": 0}


def test_a_repeat_report_with_outcomes_is_still_compared_as_its_runs(tmp_path, capsys):
    """The repeat report's ``episodes`` (outcomes) do not make ``compare`` take it for a replay report:
    its K runs are compared, each with the log's outcomes."""
    path = tmp_path / "r.json"
    argv = ["replay", "--demos", str(TAU2), "--mode", "stub", "--repeat", "2", "--no-save-run", "--report", str(path)]
    assert main(argv) == 0
    report = tmp_path / "agreement.json"
    assert main(["compare", str(path), "--report", str(report)]) in (0, 1)
    capsys.readouterr()
    data = json.loads(report.read_text())
    assert data["a"]["mode"] == "stub #1" and data["b"]["mode"] == "stub #2"
    for label in ("a", "b"):
        assert data[label]["outcomes"] == {"succeeded": 11, "failed": 9, "errored": 0, "unknown": 0}


def test_a_comparison_of_two_logs_gives_each_sides_outcome(tmp_path, capsys):
    """``compare LOG_A LOG_B --report x.json`` (two agents' runs of the same tasks): the summary counts
    each side's outcomes (integers summing to the paired tasks) and each task's side has its
    ``kind``, ``reason`` and ``missed_expected`` (as the file's own action checks say) beside success
    and score."""
    pairs = DATA / "compare_pairs" / "tau2"
    a_path, b_path = sorted(pairs.glob("pair1_A__*.json"))[0], sorted(pairs.glob("pair1_B__*.json"))[0]
    path = tmp_path / "logs.json"
    assert main(["compare", str(a_path), str(b_path), "--report", str(path)]) in (0, 1)
    capsys.readouterr()
    data = json.loads(path.read_text())

    def file_outcomes(log: Path) -> dict[str, tuple[bool, list[str]]]:
        raw = json.loads(log.read_text())
        return {
            f"{sim['task_id']}#{sim['trial']}": (
                sim["reward_info"]["reward"] == 1,
                [
                    check["action"]["name"]
                    for check in sim["reward_info"].get("action_checks") or []
                    if not check["action_match"] and check["action"].get("requestor", "assistant") == "assistant"
                ],
            )
            for sim in raw["simulations"]
        }

    summary = data["summary"]
    for side, log in (("a", a_path), ("b", b_path)):
        want = file_outcomes(log)
        counts = summary[f"{side}_outcomes"]
        assert set(counts) == {"succeeded", "failed", "errored", "unknown"}
        assert sum(counts.values()) == summary["paired"] == len(data["tasks"])
        assert counts["succeeded"] == sum(want[task["key"]][0] for task in data["tasks"])
        for task in data["tasks"]:
            outcome = task[side]
            assert outcome["kind"] == ("succeeded" if want[task["key"]][0] else "failed"), task["key"]
            assert outcome["missed_expected"] == want[task["key"]][1], (side, task["key"])
            assert isinstance(outcome["reason"], str)
