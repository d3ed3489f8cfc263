"""Outputs never replace inputs, and generate asks for --force before overwriting."""

import shutil

import pytest

from replay_tui.examples import example_path
from tests.core.cli.runcli import run_cli


@pytest.fixture
def demo(tmp_path):
    return shutil.copy(example_path(), tmp_path / "d.json")


@pytest.mark.parametrize("command", ["replay", "export"])
def test_a_report_over_the_demo_file_is_refused_before_any_work(capsys, tmp_path, demo, command):
    before = demo.read_bytes()
    flag = "--report" if command == "replay" else "--out"
    target = str(tmp_path / "." / "d.json")  # the same file, spelled differently
    code, _, err = run_cli(capsys, command, "--demos", str(demo), "--no-save-run", flag, target)
    assert code == 2 and "is one of the inputs" in err and err.count("\n") == 1
    assert demo.read_bytes() == before


def test_a_report_over_the_annotations_is_refused(capsys, tmp_path, demo):
    notes = tmp_path / "notes.json"
    notes.write_text('{"annotations": []}')
    code, _, err = run_cli(
        capsys, "replay", "--demos", str(demo), "--annotations", str(notes), "--no-save-run", "--report", str(notes)
    )
    assert code == 2 and "is the annotations sidecar" in err and notes.read_text() == '{"annotations": []}'


def test_generate_refuses_to_overwrite_without_force(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    existing = tmp_path / "webshop_demonstrations_0-99.json"
    existing.write_text("[]")
    code, _, err = run_cli(capsys, "generate")
    assert code == 2 and "--force" in err and existing.read_text() == "[]"
    code, _, _ = run_cli(capsys, "generate", "--force", "--count", "100")
    assert code == 0 and existing.stat().st_size > 1000


def test_compare_refuses_a_report_over_one_of_its_runs(capsys, tmp_path, demo):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path, mode in ((a, "stub"), (b, "heuristic")):
        argv = [
            "replay",
            "--demos",
            str(demo),
            "--mode",
            mode,
            "--no-save-run",
            "--report-steps",
            "--report",
            str(path),
        ]
        assert run_cli(capsys, *argv)[0] in (0, 1)
    before = a.read_bytes()
    code, _, err = run_cli(capsys, "compare", str(a), str(b), "--report", str(a))
    assert code == 2 and "is one of the inputs" in err and a.read_bytes() == before


def test_a_huge_value_is_cut_in_the_terminal_table_and_whole_in_the_report(capsys, tmp_path):
    import json

    episodes = json.loads(example_path().read_text())[:3]
    huge = "x" * 2_000_000
    step = episodes[0]["trajectory"][0]
    step["action_executed_in_env"] = f"search[{huge}]"
    step["llm_action_arguments"] = json.dumps({"keywords": huge})
    demo = tmp_path / "huge.json"
    demo.write_text(json.dumps(episodes))
    report = tmp_path / "r.json"
    code, out, _ = run_cli(
        capsys, "replay", "--demos", str(demo), "--mode", "heuristic", "--no-save-run", "--report", str(report)
    )
    assert code == 1 and "… (cut;" in out
    assert len(out) < 50_000
    assert huge in report.read_text()


def test_a_corrupt_sidecar_is_a_warning_up_front_and_the_report_is_still_written(capsys, tmp_path, demo):
    notes = tmp_path / "d.annotations.json"
    notes.write_text('{"annotations": [')
    report = tmp_path / "r.md"
    code, _, err = run_cli(capsys, "replay", "--demos", str(demo), "--no-save-run", "--report", str(report))
    assert code == 0 and "cannot read annotations" in err and "without annotations" in err
    assert report.exists() and notes.read_text() == '{"annotations": ['


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "--no-save-run", "--report-steps", "--report", "{bad}/r.json"],
        ["replay", "--no-save-run", "--repeat", "2", "--report", "{bad}/r.json"],
        ["export", "--no-save-run", "--out", "{bad}/r.md"],
        ["visual", "{ref}", "{pred}", "--json", "{bad}/v.json"],
    ],
    ids=["report-steps", "repeat", "export", "visual-json"],
)
def test_an_unwritable_output_is_one_line_exit_2_before_any_work(capsys, tmp_path, argv):
    from replay_tui.visual.examples import example_pair

    blocker = tmp_path / "a-file"
    blocker.write_text("")  # a folder path through a file: unwritable for anyone, root included
    ref, pred = example_pair("11202", "move")
    filled = [a.format(bad=blocker, ref=ref, pred=pred) for a in argv]
    code, out, err = run_cli(capsys, *filled)
    assert code == 2 and "cannot write there" in err and err.count("\n") == 1
    assert "Traceback" not in err and out == ""
