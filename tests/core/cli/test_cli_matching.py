"""Matching policies from the command line and config.toml; exact reports unchanged byte for byte."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import orjson
import pytest

from replay_tui.cli import main
from replay_tui.examples import example_path
from replay_tui.export import CSV_OUTCOME_COLUMNS

# SHA-256 of the reports the bundled example gives under exact matching (the example's folder replaced
# by "<examples>"). The exact policy must keep writing the seed harness's figures, so numbers stay
# comparable with it. Regenerate only for an intended format change: the last one added the mismatch
# groups and the Wilson intervals (JSON: the "intervals" and "mismatch_groups" keys, every other key
# unchanged; CSV: group rows, interval columns and run rows; Markdown, HTML, JUnit: the intervals next to
# each accuracy figure and a groups table or properties). Issue 30 (the logs' outcomes) changed Markdown
# and HTML only (the headline names agreement and outcome, a task-outcomes table or card, an outcome
# column); JSON, CSV and JUnit are digested without the outcome fields it added (without_outcomes).
EXACT_REPORTS = {
    ("heuristic", "allow", "json"): "a3376dc8866ca8dbe55ade522d7b30dc6b47a6dd0a6492fb1b18010a186be83b",
    ("heuristic", "allow", "md"): "7ef4ff1733b22e0c849e2f20e78903294fb82bbdd4fd2c18a5fcd0d76035e7e1",
    ("heuristic", "allow", "csv"): "0cd5c4fa708b0ec8d0b0bc0f683c7fce43cebee4bf630acb184e556e711cf05c",
    ("heuristic", "allow", "html"): "9054e5a8bb5c86351c39df92ac03c323659aa95d08673cc74f7be19d6d5872b4",
    ("heuristic", "allow", "xml"): "975fe61c6818c605ebf40832493eaa478113335bde29625679f89a00aa4fd75b",
    ("heuristic", "stop", "json"): "a0855e8488ada9d83ce4697b7b62ca222b9ffcb00de6ce6bdfde1c49e422269c",
    ("stub", "stop", "md"): "0252b891b07d5aa0769844818f52beefdddc8be7c66a8f7b17ce65dae03462d1",
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


OUTCOME_NAMES = re.compile(r"^(outcome($|_)|outcomes_|missed_expected$|extra_writes$|headline$)")


def without_outcomes(path: Path, data: bytes) -> bytes:
    """The report as it was before the logs' outcomes joined it (issue 30), so JSON, CSV and JUnit
    keep being checked byte for byte: JSON without ``outcomes`` and each episode's ``outcome``, CSV
    without the outcome columns (appended last) and run rows, JUnit without the outcome properties."""
    if path.suffix == ".json":
        report = orjson.loads(data)
        assert report.pop("outcomes") and all(episode.pop("outcome") for episode in report["episodes"])
        return orjson.dumps(report, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
    if path.suffix == ".csv":
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
        width = len(rows[0]) - len(CSV_OUTCOME_COLUMNS)
        assert tuple(rows[0][width:]) == CSV_OUTCOME_COLUMNS
        name = rows[0].index("name")
        out = io.StringIO(newline="")
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerows(row[:width] for row in rows if not (row[0] == "run" and OUTCOME_NAMES.match(row[name])))
        return out.getvalue().encode("utf-8")
    if path.suffix == ".xml":
        root = ET.fromstring(data)
        for properties in list(root.iter("properties")):
            for item in list(properties):
                if OUTCOME_NAMES.match(item.get("name", "")):
                    properties.remove(item)
        for parent in list(root.iter()):  # and the properties elements they leave empty
            for child in list(parent):
                if child.tag == "properties" and not len(child):
                    parent.remove(child)
        ET.indent(root)
        return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
    return data


def report_digest(path: Path) -> str:
    """The report's digest; a JSON report's without ``step_results`` (a key of its own, what
    ``compare`` reads), so the seed's keys are checked byte for byte as before (and JSON, CSV and
    JUnit without the outcome fields: :func:`without_outcomes`)."""
    data = without_outcomes(path, path.read_bytes())
    if path.suffix == ".json":
        report = orjson.loads(data)
        assert report.pop("step_results", None)
        data = orjson.dumps(report, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
    data = data.replace(str(example_path().parent.resolve()).encode(), b"<examples>")
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(("mode", "mismatch", "fmt"), sorted(EXACT_REPORTS))
def test_exact_reports_are_byte_identical_to_before(capsys, tmp_path: Path, mode: str, mismatch: str, fmt: str) -> None:
    out = tmp_path / f"report.{fmt}"
    run(capsys, "replay", "--mode", mode, "--mismatch", mismatch, "--all", "--report", str(out), "-q")
    assert report_digest(out) == EXACT_REPORTS[(mode, mismatch, fmt)]
    # naming the default explicitly changes nothing
    again = tmp_path / f"again.{fmt}"
    run(capsys, "replay", "--mode", mode, "--mismatch", mismatch, "--match", "exact", "--report", str(again), "-q")
    assert again.read_bytes() == out.read_bytes()


# The seed's figures, which exact matching must keep: the report's keys before groups and intervals.
SEED_JSON_KEYS = {
    "mode", "mismatch_policy", "include_item_steps", "case", "files", "episodes_total", "episodes_run",
    "episodes_matched", "total_steps", "total_matched", "overall_accuracy", "accuracy_by_state", "steps_by_state",
    "failures_by_kind", "cancelled", "episodes", "problems", "annotations",
}  # fmt: skip


def test_exact_json_reports_only_add_groups_intervals_and_step_results(capsys, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    run(capsys, "replay", "--mode", "heuristic", "--mismatch", "allow", "--report", str(out), "-q")
    data = json.loads(out.read_text())
    assert set(data) == SEED_JSON_KEYS | {"intervals", "mismatch_groups", "step_results", "outcomes"}
    mismatches = sum(len(e["mismatches"]) for e in data["episodes"])
    assert sum(g["count"] for g in data["mismatch_groups"]) == mismatches
    assert all("reason" not in m for e in data["episodes"] for m in e["mismatches"])  # the seed's mismatch records


def test_the_terminal_shows_intervals_and_the_largest_groups(capsys, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "replay", "--mode", "heuristic", "--mismatch", "allow", "--show", "3")
    assert code == 1
    assert "95% CI" in out and "18.0–25.7%" in out  # 93 of 431 steps
    assert "Mismatch groups (338 mismatches in 8 groups)" in out
    assert "… 5 more mismatch groups" in out
    assert "Next → select_item" in out and "item id differs" in out
    _, out, _ = run(capsys, "replay", "--mode", "heuristic", "--mismatch", "allow", "--show", "0")
    assert "Mismatch groups" not in out and "95% CI" in out


def test_report_steps_json_carries_groups_and_intervals(capsys, tmp_path: Path) -> None:
    out = tmp_path / "steps.json"
    run(capsys, "replay", "--mode", "heuristic", "--sessions", "0-4", "--report", str(out), "--report-steps", "-q")
    data = json.loads(out.read_text())
    assert data["episodes"][0]["steps"] and data["intervals"]["overall_accuracy"]
    assert sum(g["count"] for g in data["mismatch_groups"]) == sum(len(e["mismatches"]) for e in data["episodes"])


def test_tolerant_search_reports_equivalents_separately(capsys, tmp_path: Path) -> None:
    exact_path, tolerant_path = tmp_path / "exact.json", tmp_path / "tolerant.json"
    run(capsys, "replay", "--mode", "heuristic", "--mismatch", "allow", "--report", str(exact_path), "-q")
    code, out, _ = run(
        capsys, "replay", "--mode", "heuristic", "--mismatch", "allow", "--match", "Search=tolerant",
        "--report", str(tolerant_path), "--show", "0",
    )  # fmt: skip
    assert code == 1  # mismatches remain
    exact, tolerant = json.loads(exact_path.read_text()), json.loads(tolerant_path.read_text())
    assert tolerant["matching"] == {"default": "exact", "by_state": {"Search": "tolerant"}}
    assert tolerant["equivalent_by_state"]["Search"] > 0 and tolerant["equivalent_by_state"]["Result"] == 0
    # an equivalent step is neither a match nor a mismatch
    assert tolerant["total_matched"] == exact["total_matched"]
    assert tolerant["accuracy_by_state"] == exact["accuracy_by_state"]
    mismatches = sum(len(e["mismatches"]) for e in exact["episodes"])
    assert sum(len(e["mismatches"]) for e in tolerant["episodes"]) == mismatches - tolerant["total_equivalent"]
    assert tolerant["accepted_accuracy_by_state"]["Search"] > tolerant["accuracy_by_state"]["Search"]
    equivalents = {
        (e["expected"], e["predicted"]): e["reason"] for ep in tolerant["episodes"] for e in ep["equivalents"]
    }
    assert equivalents[("search[vintage beauty salon chair]", "search[vintage beauty salon chairs]")].endswith(
        "singular/plural"
    )
    assert all(state == "Search" for ep in tolerant["episodes"] for state in (e["state"] for e in ep["equivalents"]))
    # the rest stay mismatches, with the words that differ
    search_mismatches = [m for ep in tolerant["episodes"] for m in ep["mismatches"] if m["state"] == "Search"]
    assert search_mismatches and all("search keywords differ" in m["reason"] for m in search_mismatches)
    assert "matching: exact, Search=tolerant" in out and "equivalent" in out


def test_bad_match_spec_is_a_usage_error(capsys) -> None:
    code, _, err = run(capsys, "replay", "--match", "Search=fuzzy", "-q")
    assert code == 2 and "unknown policy 'fuzzy'" in err and len(err.strip().splitlines()) == 1


def test_config_match_table_applies_and_flags_override_it(capsys, tmp_path: Path, monkeypatch) -> None:
    config = tmp_path / "xdg-config" / "replay-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[match]\nSearch = "tolerant"\n', encoding="utf-8")
    out = tmp_path / "r.json"
    run(capsys, "replay", "--mode", "heuristic", "--mismatch", "allow", "--report", str(out), "-q")
    assert json.loads(out.read_text())["matching"]["by_state"] == {"Search": "tolerant"}
    run(
        capsys,
        "replay",
        "--mode",
        "heuristic",
        "--mismatch",
        "allow",
        "--match",
        "Search=exact",
        "--report",
        str(out),
        "-q",
    )
    assert "matching" not in json.loads(out.read_text())
    config.write_text('[match]\nSearch = "loose"\n', encoding="utf-8")
    code, _, err = run(capsys, "replay", "-q")
    assert code == 2 and "[match]" in err and "loose" in err


def test_case_flag_is_the_default_policy(capsys, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    run(capsys, "replay", "--mode", "heuristic", "--case", "typed", "--report", str(out), "-q")
    report = json.loads(out.read_text())
    assert report["case"] == "typed" and report["matching"] == {"default": "typed", "by_state": {}}
