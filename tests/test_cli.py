import json
import subprocess
import sys

import pytest

from replay_tui.cli import main, parse_sessions
from replay_tui.examples import example_path
from tests.conftest import episode, good_episode, search_step, write_json


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bundled_example_stub_replays_at_full_accuracy(capsys, tmp_path):
    report = tmp_path / "r.json"
    code, out, _ = run_cli(
        capsys, "replay", "--demos", str(example_path()), "--all", "--mode", "stub", "--report", str(report)
    )
    assert code == 0
    data = json.loads(report.read_text())
    assert data["overall_accuracy"] == 1.0
    assert data["episodes_run"] == data["episodes_total"] == 100
    assert data["problems"] == []
    assert "100.0%" in out


def test_bundled_example_is_the_default_and_item_steps_match_too(capsys):
    code, out, _ = run_cli(capsys, "replay", "--item-steps", "-q")
    assert code == 0 and "100 episodes" in out and "(100.0%)" in out


def test_heuristic_mode_exits_1_and_lists_mismatches(capsys, tmp_path):
    report = tmp_path / "h.json"
    code, out, _ = run_cli(capsys, "replay", "--mode", "heuristic", "--report", str(report), "--show", "5")
    assert code == 1
    assert "Mismatches" in out and "expected" in out and "predicted" in out
    data = json.loads(report.read_text())
    assert data["overall_accuracy"] < 1.0
    mismatch = data["episodes"][0]["mismatches"][0]
    assert mismatch["expected"] != mismatch["predicted"]


def test_malformed_episodes_are_listed_and_good_ones_replay(capsys, tmp_path):
    path = write_json(
        tmp_path / "mixed.json",
        [
            good_episode(1),
            {"instruction": "no id", "trajectory": []},
            good_episode(2),
            episode(3, "not a list"),
            episode(4, [search_step(0, reward="lots")]),
        ],
    )
    report = tmp_path / "m.json"
    code, _, err = run_cli(capsys, "replay", "--demos", str(path), "--report", str(report))
    assert code == 0
    data = json.loads(report.read_text())
    assert data["episodes_run"] == 2 and data["overall_accuracy"] == 1.0
    located = {(p["index"], p["field"]) for p in data["problems"]}
    assert located == {(1, "session_id"), (3, "trajectory"), (4, "trajectory[0].reward")}
    assert all(p["file"] == str(path) for p in data["problems"])
    assert err.count("problem:") == 3 and "episode #4 (session 4)" in err
    assert main(["replay", "--demos", str(path), "--strict", "-q"]) == 1


def test_non_json_and_missing_files_exit_2_with_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("<html>not json</html>")
    code, _, err = run_cli(capsys, "replay", "--demos", str(bad))
    assert code == 2
    assert err.strip().count("\n") == 0 and "not a JSON demo file" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "replay", "--demos", str(tmp_path / "nope.json"))
    assert code == 2 and "no such file" in err


def test_truncated_file_exits_2(capsys, tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps([good_episode(1), good_episode(2)])[:-200])
    code, _, err = run_cli(capsys, "replay", "--demos", str(path))
    assert code == 2 and "truncated" in err and err.strip().count("\n") == 0


def test_usage_errors_exit_2(capsys, tmp_path):
    assert run_cli(capsys, "replay", "--sessions", "abc")[0] == 2
    assert run_cli(capsys, "replay", "--sessions", "5000")[0] == 2
    assert run_cli(capsys, "replay", "--policy", "nosuch_mod_q:P")[0] == 2
    assert run_cli(capsys, "replay", "--report", str(tmp_path / "r.pdf"))[0] == 2
    with pytest.raises(SystemExit) as info:
        main(["replay", "--mode", "oracle"])
    assert info.value.code == 2


def test_visual_screen_flags_are_checked_before_the_app_starts(capsys, tmp_path):
    code, _, err = run_cli(capsys, "tui", "--visual-pred-dir", str(tmp_path))
    assert code == 2 and "--visual-pred-dir needs --visual-ref-dir" in err
    code, _, err = run_cli(capsys, "tui", "--visual-ref-dir", str(tmp_path))
    assert code == 2 and "at least one --visual-pred-dir" in err
    code, _, err = run_cli(
        capsys, "tui", "--visual-ref-dir", str(tmp_path), "--visual-pred-dir", str(tmp_path / "nope")
    )
    assert code == 2 and "nope: not a folder" in err
    code, _, err = run_cli(capsys, "inspect", str(tmp_path / "missing.json"))
    assert code == 2 and "not a visual report" in err


def test_sessions_selection(capsys, tmp_path):
    report = tmp_path / "s.json"
    assert main(["replay", "--sessions", "0,1,2", "--report", str(report), "-q"]) == 0
    assert [e["session_id"] for e in json.loads(report.read_text())["episodes"]] == [0, 1, 2]
    assert parse_sessions("3-5, 1,3") == [3, 4, 5, 1]


def test_policy_spec_from_file(capsys, tmp_path):
    policy = tmp_path / "p.py"
    policy.write_text(
        "class P:\n"
        "    def predict_action(self, observation, state, available_actions, llm_prompt_repr):\n"
        "        return 'click[Back to Search]'\n"
    )
    code, out, _ = run_cli(capsys, "replay", "--sessions", "0", "--policy", f"{policy}:P")
    assert code == 1 and "click[Back to Search]" in out


def test_markup_and_control_characters_in_data_are_printed_literally(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    ep = good_episode(1)
    ep["trajectory"][0]["action_executed_in_env"] = "search[[bold red]boom[/] \x1b[31mred\x1b[0m]"
    ep["trajectory"][0]["llm_action_arguments"] = {"keywords": "[bold red]boom[/] \x1b[31mred\x1b[0m"}
    path = write_json(tmp_path / "x.json", [ep])
    policy = tmp_path / "p.py"
    policy.write_text("def p(o, s, a, r):\n    return 'search[[link=http://x]y[/link]]'\n")
    code, out, _ = run_cli(capsys, "replay", "--demos", str(path), "--policy", f"{policy}:p")
    assert code == 1
    assert "[bold red]boom[/]" in out and "[link=http://x]y[/link]" in out
    assert "\x1b" not in out


def test_python_dash_m_entry_points(tmp_path):
    report = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "replay_tui.replay", "--sessions", "0-4", "--mode", "stub", "--report", str(report)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(report.read_text())["episodes_run"] == 5
    proc = subprocess.run(
        [sys.executable, "-m", "replay_tui", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0 and "replay-tui" in proc.stdout


def test_generate_writes_a_replayable_file(capsys, tmp_path):
    out = tmp_path / "gen.json"
    code, text, _ = run_cli(capsys, "generate", str(out), "--start", "200", "--count", "7", "--seed", "3")
    assert code == 0 and "7 episodes" in text
    report = tmp_path / "g.json"
    assert main(["replay", "--demos", str(out), "--item-steps", "--report", str(report), "-q"]) == 0
    data = json.loads(report.read_text())
    assert [e["session_id"] for e in data["episodes"]] == list(range(200, 207))


def test_debugger_entry_rejects_unreadable_files_before_starting(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    code, _, err = run_cli(capsys, str(bad))
    assert code == 2 and "not a JSON demo file" in err
    code, _, err = run_cli(capsys, "--config", str(tmp_path / "missing.toml"))
    assert code == 2 and "no such config file" in err
