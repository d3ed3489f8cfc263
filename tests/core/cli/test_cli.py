import json
import subprocess
import sys

import pytest

from replay_tui.cli import main, parse_sessions
from replay_tui.examples import example_path
from tests.conftest import episode, good_episode, search_step, write_json
from tests.core.cli.runcli import run_cli


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
    assert data["episodes_run"] == 3 and data["overall_accuracy"] == 1.0  # 4's invalid reward is read as 0
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


def test_generate_target_mb_is_a_million_bytes(capsys, tmp_path, monkeypatch):
    """One definition of --target-mb, the one --help gives: 1 MB = 1,000,000 bytes (not 1024 x 1024)."""
    from replay_tui.formats.webshop_demos import synth

    asked = {}
    real = synth.write_demo_file

    def spy(path, **kwargs):
        asked.update(kwargs)
        return real(path, **{**kwargs, "target_bytes": None, "count": 1})

    monkeypatch.setattr(synth, "write_demo_file", spy)
    code, _, _ = run_cli(capsys, "generate", str(tmp_path / "spy.json"), "--target-mb", "1.5")
    assert code == 0 and asked["target_bytes"] == 1_500_000
    monkeypatch.setattr(synth, "write_demo_file", real)
    code, text, _ = run_cli(capsys, "generate", str(tmp_path / "big.json"), "--target-mb", "0.2")
    size = (tmp_path / "big.json").stat().st_size
    assert code == 0 and size >= 200_000 - 3 and f"{size:,} bytes" in text
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    assert "1 MB = 1,000,000 bytes" in " ".join(capsys.readouterr().out.split())
    assert run_cli(capsys, "generate", str(tmp_path / "x.json"), "--target-mb", "0")[0] == 2


def test_generate_is_the_one_generator_cli(capsys, tmp_path):
    """synth's own argparse is gone: a folder as OUT, --indent and --bundled are here."""
    from replay_tui.formats.webshop_demos import synth

    assert not hasattr(synth, "main")
    code, text, _ = run_cli(capsys, "generate", str(tmp_path), "--start", "5", "--count", "2", "--indent")
    written = tmp_path / "webshop_demonstrations_5-6.json"
    assert code == 0 and written.is_file() and "2 episodes" in text
    assert written.read_text().startswith("[\n  {\n    ")
    assert json.loads(written.read_text()) == list(synth.iter_episodes(5, 2, seed=0, quirk_rate=0.1))
    bundled = tmp_path / "bundled.json"
    code, text, _ = run_cli(capsys, "generate", "--bundled", str(bundled))
    assert code == 0 and "100 episodes" in text
    assert bundled.read_bytes() == synth.bundled_example_path().read_bytes()
    code, _, err = run_cli(capsys, "generate", "--bundled", "--seed", "3", "--indent")
    assert code == 2 and "replay-tui generate: error: --bundled" in err and "--seed, --indent" in err
    code, _, err = run_cli(capsys, "generate", str(tmp_path / "none.json"), "--count", "0")
    assert code == 2 and "--count must be at least 1" in err


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["replay", "--bogus"], "replay"),
        (["export", "--out", "r.json", "--bogus"], "export"),
        (["generate", "--bogus"], "generate"),
        (["visual", "a.html", "b.html", "--bogus"], "visual"),
        (["inspect", "--bogus"], "inspect"),
        (["verify", "--tasks", "t", "--answers", "a", "--bogus"], "verify"),
        (["tui", "--bogus"], "tui"),
        (["--bogus"], "tui"),  # no command: the debugger's flags
    ],
)
def test_an_unknown_flag_prints_the_commands_own_usage(capsys, argv, command):
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err.startswith(f"usage: replay-tui {command} ")
    assert err.rstrip().splitlines()[-1] == f"replay-tui {command}: error: unrecognized arguments: --bogus"


def test_a_bad_flag_value_prints_the_commands_own_usage(capsys):
    with pytest.raises(SystemExit) as info:
        main(["replay", "--mode", "oracle"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.startswith("usage: replay-tui replay ")
    assert "replay-tui replay: error: argument --mode: invalid choice" in err


def test_python_dash_m_prints_the_commands_usage():
    proc = subprocess.run(
        [sys.executable, "-m", "replay_tui", "replay", "--bogus"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2 and proc.stderr.startswith("usage: replay-tui replay ")


def test_every_command_prints_errors_the_same_way(capsys, tmp_path):
    """``replay-tui COMMAND: error: MESSAGE``, one line, exit 2, whichever command found the problem."""
    answers = tmp_path / "answers.jsonl"
    answers.write_text("not json\n")
    cases = [
        (["replay", "--sessions", "abc"], "replay", "--sessions expects ids"),
        (["export", "--out", str(tmp_path / "r.pdf")], "export", "r.pdf"),
        (["generate", str(tmp_path / "g.json"), "--count", "0"], "generate", "--count must be at least 1"),
        (["tui", "--visual-pred-dir", str(tmp_path)], "tui", "--visual-pred-dir needs --visual-ref-dir"),
        ([str(tmp_path / "missing.json")], "tui", "missing.json"),
        (["inspect", str(tmp_path / "missing.json")], "inspect", "not a visual report"),
        (["visual", "only_one.html"], "visual", "expected REF.html GEN.html"),
        (["visual", "--ref-dir", str(tmp_path / "nope"), "--pred-dir", str(tmp_path)], "visual", "nope: not a folder"),
        (["verify", "--tasks", str(tmp_path / "no.json"), "--answers", str(answers)], "verify", "no.json"),
    ]
    for argv, command, message in cases:
        code, _, err = run_cli(capsys, *argv)
        assert code == 2, argv
        assert err.startswith(f"replay-tui {command}: error: ") and message in err, (argv, err)
        assert err.strip().count("\n") == 0, err


def test_one_folder_check(tmp_path):
    from replay_tui.fileio import require_folder

    assert require_folder(tmp_path) == tmp_path
    (tmp_path / "file").write_text("x")
    for path in (tmp_path / "nope", tmp_path / "file"):
        with pytest.raises(NotADirectoryError, match=r"^--ref-dir .*: not a folder$"):
            require_folder(path, "--ref-dir")
        with pytest.raises(OSError, match=r"^/.*: not a folder$"):
            require_folder(str(path))


def test_visual_and_verify_never_reach_up_to_the_tui_or_the_cli():
    """The layer rule, lazy imports included: the command lines sit on top of visual/ and verify/."""
    import ast
    from pathlib import Path

    import replay_tui

    root = Path(replay_tui.__file__).parent
    offenders = []
    for package in ("visual", "verify"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
                else:
                    continue
                for name in names:
                    if name.startswith(("replay_tui.tui", "replay_tui.cli", "textual")):
                        offenders.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    assert offenders == []


def test_the_visual_domain_imports_without_textual():
    code = (
        "import sys, replay_tui.visual.batch, replay_tui.visual.explain, replay_tui.visual.models;"
        "assert 'textual' not in sys.modules, sorted(m for m in sys.modules if m.startswith('textual'))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
