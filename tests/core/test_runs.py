"""Run history: run files, folders, listing, rename/delete, fingerprints, the CLI's saving and listing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from replay_tui import __version__, runs
from replay_tui.cli.commands import main
from replay_tui.examples import example_path
from replay_tui.matching import MatchSettings
from replay_tui.runs import (
    RunError,
    RunInfo,
    RunStore,
    default_runs_root,
    demo_file_info,
    demo_fingerprint,
    runs_root,
)
from replay_tui.workspace import ReplaySettings, Workspace, make_run_info
from tests.conftest import good_episode, write_json

DATA = Path(__file__).parents[1] / "data" / "formats"
AIRLINE = DATA / "openai_chat" / "tau_bench_gpt-4o-airline_excerpt.json"
EXPERIMENT = next(p for p in (DATA / "browsergym").iterdir() if "click-dialog" in p.name)
T0 = datetime(2026, 11, 23, 20, 59, tzinfo=UTC)


def replayed(demo_file: Path, tmp_path: Path, mode: str = "heuristic", sessions=None) -> Workspace:
    workspace = Workspace.open(
        [demo_file], annotations_path=tmp_path / "notes.json", settings=ReplaySettings(mode=mode)
    )
    runner = workspace.make_runner()
    for sid in sessions if sessions is not None else workspace.demos.session_ids:
        workspace.record(runner.run_episode(sid), runner.mode)
    return workspace


def info_for(workspace: Workspace, moment: datetime = T0, **changes) -> RunInfo:
    info = make_run_info(workspace.settings, workspace.demo_paths, created=moment)
    return info.model_copy(update=changes) if changes else info


# -- where runs live -------------------------------------------------------------------------------
def test_runs_root_precedence_flag_then_env_then_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("REPLAY_TUI_RUNS_DIR", str(tmp_path / "env-runs"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_runs_root() == tmp_path / "env-runs"
    assert runs_root(tmp_path / "flag") == tmp_path / "flag"
    assert runs_root(None) == tmp_path / "env-runs"
    monkeypatch.delenv("REPLAY_TUI_RUNS_DIR")
    assert default_runs_root() == tmp_path / "xdg" / "replay-tui" / "runs"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_runs_root() == tmp_path / "home" / ".local" / "share" / "replay-tui" / "runs"
    assert RunStore().root == default_runs_root()


def test_a_folder_per_set_of_demo_files(tmp_path, demo_file):
    store = RunStore(tmp_path / "runs")
    folder = store.for_demos([demo_file])
    digest = hashlib.sha256(str(demo_file.resolve()).encode()).hexdigest()[:12]
    assert folder == tmp_path / "runs" / f"webshop-demonstrations-10-12-{digest}"
    other = write_json(tmp_path / "other.json", [good_episode(1)])
    both = store.for_demos([demo_file, other])
    assert both != folder and both.name.startswith("webshop-demonstrations-10-12-")
    assert store.for_demos([other, demo_file]).name.split("-")[-1] == both.name.split("-")[-1]  # sorted paths
    assert store.for_demos([EXPERIMENT]).name.startswith(re.sub(r"[^a-z0-9]+", "-", EXPERIMENT.name.lower())[:40])


# -- fingerprints ----------------------------------------------------------------------------------
def test_the_fingerprint_of_a_file_is_its_sha256_and_is_hashed_once(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    path.write_bytes(b"[" + b" " * (3 * runs.HASH_CHUNK + 5) + b"]")
    calls = []
    original = runs._hash_file
    monkeypatch.setattr(runs, "_hash_file", lambda p, d: (calls.append(p), original(p, d)))
    assert demo_fingerprint(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert demo_fingerprint(path) == demo_fingerprint(str(path))
    assert len(calls) == 1  # cached by (path, size, mtime)
    path.write_bytes(b"[1]")
    assert demo_fingerprint(path) == hashlib.sha256(b"[1]").hexdigest() and len(calls) == 2
    info = demo_file_info(path)
    assert (info.name, info.path, info.size) == ("big.json", str(path.resolve()), 3)


def test_the_fingerprint_of_a_folder_covers_its_relative_paths_and_contents(tmp_path):
    one = tmp_path / "one"
    shutil.copytree(EXPERIMENT, one)
    two = tmp_path / "two"
    two.mkdir()
    for name in sorted(os.listdir(EXPERIMENT), reverse=True):  # created in another order
        shutil.copy2(EXPERIMENT / name, two / name)  # the same mtimes: files the reader skips count by size+mtime
    assert demo_fingerprint(one) == demo_fingerprint(two) == demo_fingerprint(EXPERIMENT)
    first = sorted(p for p in two.iterdir() if p.is_file())[0]
    first.rename(two / ("z" + first.name))
    assert demo_fingerprint(two) != demo_fingerprint(one)
    (one / "sub").mkdir()
    (one / "sub" / "extra.txt").write_text("x")
    assert demo_fingerprint(one) != demo_fingerprint(EXPERIMENT)
    assert demo_file_info(EXPERIMENT).size == sum(p.stat().st_size for p in EXPERIMENT.rglob("*") if p.is_file())


def test_a_folder_fingerprint_reads_only_the_logs_the_reader_reads(tmp_path, monkeypatch):
    """Issue 27: saving a run hashed every file of an experiment folder, a 20 GiB companion archive too."""
    folder = tmp_path / EXPERIMENT.name
    shutil.copytree(EXPERIMENT, folder)
    companion = folder / "traces.zip"
    with companion.open("wb") as handle:  # sparse: 20 GiB that take no disk
        handle.truncate(20 * 2**30)
    hashed: list[str] = []
    original = runs._hash_file

    def hash_file(path, digest):
        assert path != companion, "the companion archive was read"
        hashed.append(path.name)
        original(path, digest)

    monkeypatch.setattr(runs, "_hash_file", hash_file)
    first = demo_fingerprint(folder)
    assert "summary_info.json" in hashed and any(name.startswith("step_") for name in hashed)
    assert "package_versions.txt" not in hashed
    assert demo_file_info(folder).size > 20 * 2**30
    os.utime(companion, ns=(0, 0))  # the companion changed (by its mtime): so did the fingerprint
    second = demo_fingerprint(folder)
    assert second != first
    summary = folder / "summary_info.json"
    stat = summary.stat()
    summary.write_bytes(summary.read_bytes().replace(b"0", b"1", 1))  # a log changed, same size and mtime
    os.utime(summary, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    runs._fingerprints.clear()
    assert demo_fingerprint(folder) != second


# -- run files -------------------------------------------------------------------------------------
def test_a_saved_run_is_the_report_with_steps_plus_its_record(tmp_path, demo_file):
    workspace = replayed(demo_file, tmp_path)
    store = RunStore(tmp_path / "runs")
    summary = workspace.summary()
    info = info_for(workspace)
    path = store.save(summary, info)
    assert path == store.for_demos([demo_file]) / f"{info.id}.json"
    data = path.read_bytes()
    expected = {**summary.to_dict(include_steps=True), "run": info.model_dump(mode="json")}
    assert data == orjson.dumps(expected, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
    record = json.loads(data)["run"]
    assert set(record) == {
        "id", "name", "created", "tool_version", "policy", "model", "temperature", "seed", "matching",
        "mismatch_policy", "item_steps", "demo_files", "sessions", "complete",
    }  # fmt: skip
    assert record["tool_version"] == __version__ and record["policy"] == "heuristic" and record["name"] == info.id
    assert record["demo_files"] == [
        {
            "name": demo_file.name,
            "path": str(demo_file.resolve()),
            "size": demo_file.stat().st_size,
            "sha256": hashlib.sha256(demo_file.read_bytes()).hexdigest(),
        }
    ]
    assert record["created"] == "2026-11-23T20:59:00.000000Z" and record["sessions"] == "all" and record["complete"]
    assert re.fullmatch(r"20261123T205900Z-heuristic-[0-9a-f]{6}", info.id)
    assert all(episode["steps"] for episode in json.loads(data)["episodes"])
    loaded, loaded_info = store.load(path)
    assert loaded.to_dict(include_steps=True) == summary.to_dict(include_steps=True) and loaded_info == info
    assert [s.verdict for e in loaded.episodes for s in e.steps] == [
        s.verdict for e in summary.episodes for s in e.steps
    ]


def test_saving_is_atomic(tmp_path, demo_file, monkeypatch):
    workspace = replayed(demo_file, tmp_path)
    store = RunStore(tmp_path / "runs")
    info = info_for(workspace)
    path = store.save(workspace.summary(), info)
    before = path.read_bytes()

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        store.save(workspace.summary(), info.model_copy(update={"name": "changed"}))
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_listing_is_newest_first_and_lists_broken_files(tmp_path, demo_file):
    workspace = replayed(demo_file, tmp_path)
    store = RunStore(tmp_path / "runs")
    summary = workspace.summary()
    old = store.save(summary, info_for(workspace, T0))
    new = store.save(summary, info_for(workspace, T0 + timedelta(hours=1)))
    middle = store.save(summary, info_for(workspace, T0 + timedelta(minutes=1), complete=False))
    folder = old.parent
    (folder / "garbage.json").write_text("{not json")
    (folder / "list.json").write_text("[1, 2]")
    (folder / "bad-record.json").write_bytes(orjson.dumps({**summary.to_dict(include_steps=True), "run": {"id": 3}}))
    (folder / f".{old.name}.abcdef12.tmp").write_text("half")  # a killed writer's temp file
    (folder / "notes.txt").write_text("not a run")
    entries = store.list(folder)
    good = [entry for entry in entries if not entry.broken]
    assert [entry.path for entry in good] == [new, middle, old]
    assert {entry.path.name for entry in entries if entry.broken} == {"garbage.json", "list.json", "bad-record.json"}
    assert all(entry.error for entry in entries if entry.broken)
    first = good[0]
    assert first.accuracy == summary.overall_accuracy and first.steps == summary.total_steps
    assert first.episodes == 3 and first.policy == "heuristic" and first.complete
    assert good[1].complete is False
    assert first.date == (T0 + timedelta(hours=1)).astimezone().strftime("%Y-%m-%d %H:%M")
    assert store.latest(folder).path == new
    assert store.list(tmp_path / "nowhere") == [] and store.latest(tmp_path / "nowhere") is None
    assert store.folders() == [folder]


def test_latest_skips_runs_of_other_file_contents(tmp_path, demo_file):
    workspace = replayed(demo_file, tmp_path)
    store = RunStore(tmp_path / "runs")
    good = store.save(workspace.summary(), info_for(workspace, T0))
    stale = info_for(workspace, T0 + timedelta(hours=1))
    stale.demo_files[0].sha256 = "0" * 64
    store.save(workspace.summary(), stale)
    files = [demo_file_info(demo_file)]
    assert store.latest(good.parent).id == stale.id
    assert store.latest(good.parent, files).path == good


def test_rename_and_delete(tmp_path, demo_file):
    workspace = replayed(demo_file, tmp_path)
    store = RunStore(tmp_path / "runs")
    info = info_for(workspace)
    path = store.save(workspace.summary(), info)
    renamed = store.rename(path, "  baseline   heuristic ")
    assert renamed.name == "baseline heuristic" and renamed.id == info.id
    summary, loaded = store.load(path)
    assert loaded.name == "baseline heuristic"
    assert summary.to_dict(include_steps=True) == workspace.summary().to_dict(include_steps=True)
    assert store.list(path.parent)[0].name == "baseline heuristic"
    assert store.load("baseline heuristic")[1].id == info.id  # by name
    assert store.load(info.id)[1].name == "baseline heuristic"  # by id
    with pytest.raises(RunError, match="empty"):
        store.rename(path, "  ")
    store.delete(path)
    assert not path.exists() and store.list(path.parent) == []
    with pytest.raises(RunError, match="no such run"):
        store.load(info.id)
    with pytest.raises(RunError, match="not a run file"):
        store.delete(tmp_path / "notes.txt")


def test_a_plain_report_without_a_run_record_loads(tmp_path, demo_file, capsys):
    report = tmp_path / "report.json"
    assert main(["replay", "--demos", str(demo_file), "--report", str(report), "--report-steps", "-q"]) == 0
    store = RunStore(tmp_path / "runs")
    summary, info = store.load(report)
    assert summary.episodes_run == 3 and all(episode.steps for episode in summary.episodes)
    assert info.id == info.name == "report" and info.tool_version is None and info.demo_files == []
    assert info.policy == "stub" and info.sessions == "all" and info.complete and info.created
    assert info.matching == MatchSettings().as_dict() and info.model is None and info.seed is None
    renamed = store.rename(report, "from a report")
    assert store.load(report)[1].name == renamed.name == "from a report"
    with pytest.raises(RunError, match="not a replay report"):
        (tmp_path / "x.json").write_text('{"episodes": 3}')
        store.load(tmp_path / "x.json")
    with pytest.raises(RunError, match="not JSON"):
        (tmp_path / "y.json").write_text("{")
        store.load(tmp_path / "y.json")


def test_the_record_names_the_llm_settings_and_a_policy_spec(tmp_path, demo_file):
    llm = ReplaySettings(mode="llm", llm={"model": "gpt-4.1", "seed": 7}, matching=MatchSettings.parse(["typed"]))
    info = make_run_info(llm, [demo_file], sessions=[10, 12], complete=False, created=T0)
    assert (info.policy, info.model, info.temperature, info.seed) == ("llm", "gpt-4.1", 0.0, 7)
    assert info.matching == MatchSettings.parse(["typed"]).as_dict() and info.sessions == [10, 12]
    assert re.fullmatch(r"20261123T205900Z-llm-gpt-4-1-[0-9a-f]{6}", info.id) and not info.complete
    custom = ReplaySettings(mode="custom", policy_spec="some/dir/slow.py:Slow", mismatch="allow", item_steps=True)
    info = make_run_info(custom, [demo_file], created=T0)
    assert (info.policy, info.model, info.temperature, info.mismatch_policy, info.item_steps) == (
        "some/dir/slow.py:Slow",
        None,
        None,
        "allow",
        True,
    )
    assert re.fullmatch(r"20261123T205900Z-slow-py-slow-[0-9a-f]{6}", info.id)
    assert custom.run_key() != ReplaySettings().run_key() == ReplaySettings(llm={"model": "x"}).run_key()


# -- the workspace's session run -------------------------------------------------------------------
def test_the_session_run_holds_what_was_replayed_and_adopting_a_run_shows_it(tmp_path, demo_file):
    workspace = replayed(demo_file, tmp_path, sessions=[10, 11])
    snapshot = workspace.session_snapshot(complete=False)
    assert snapshot is not None and snapshot.sessions == (10, 11) and not snapshot.complete
    assert snapshot.summary.episodes_run == 2
    again = workspace.session_snapshot()
    assert again is not None and again.run_id == snapshot.run_id and again.created == snapshot.created
    store = RunStore(tmp_path / "runs")
    path, info = snapshot.save(store)
    assert info.sessions == [10, 11] and info.id == snapshot.run_id and path.stem == info.id

    fresh = Workspace.open([demo_file], annotations_path=tmp_path / "n.json", settings=ReplaySettings(mode="heuristic"))
    assert fresh.session_snapshot() is None
    summary, loaded = store.load(path)
    assert fresh.adopt_run(summary, loaded) == 2
    assert fresh.summary().to_dict(include_steps=True) == workspace.summary().to_dict(include_steps=True)
    assert fresh.session_run.episodes == {10, 11}  # same settings: they stay in the session run
    other = Workspace.open([demo_file], annotations_path=tmp_path / "n.json")  # stub: other settings
    other.adopt_run(summary, loaded)
    assert set(other.results) == {10, 11} and other.session_run.episodes == set()
    assert other.session_snapshot() is None  # nothing replayed under these settings yet
    fresh.new_session_run(carry=False)
    assert fresh.session_snapshot() is None
    fresh.new_session_run(carry=False)
    workspace.new_session_run(carry=True)
    assert workspace.session_run.episodes == {10, 11} and workspace.session_run.run_id is None


# -- the command line ------------------------------------------------------------------------------
def test_replay_saves_a_run_and_runs_lists_it(tmp_path, demo_file, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["replay", "--demos", str(demo_file), "--mode", "heuristic"]) == 1
    err = capsys.readouterr().err
    saved = re.search(r"run saved: (\S+)", err)
    assert saved is not None
    folder = RunStore(tmp_path / "runs").for_demos([demo_file])
    path = folder / f"{saved.group(1)}.json"
    data = json.loads(path.read_text())
    assert data["run"]["policy"] == "heuristic" and data["run"]["complete"] and data["episodes_run"] == 3
    assert all(episode["steps"] for episode in data["episodes"])

    assert main(["runs", "--demos", str(demo_file)]) == 0
    out = capsys.readouterr().out
    assert demo_file.name in out and "heuristic" in out and "yes" in out
    assert main(["runs"]) == 0
    assert "heuristic" in capsys.readouterr().out
    assert main(["runs", "--demos", str(AIRLINE)]) == 0
    assert "no runs" in capsys.readouterr().out
    assert main(["runs", "--demos", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_runs_of_a_folder_of_logs(tmp_path, demo_file, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(demo_file, logs / "a.json")
    shutil.copy(AIRLINE, logs / "b.json")
    assert main(["replay", "--demos", str(logs), "-q"]) in (0, 1)
    capsys.readouterr()
    assert main(["runs", "--demos", str(logs)]) == 0
    out = capsys.readouterr().out
    assert "a.json, b.json" in out and "stub" in out


def test_no_save_run_quiet_runs_dir_and_repeat(tmp_path, demo_file, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    store = RunStore(tmp_path / "runs")
    folder = store.for_demos([demo_file])
    assert main(["replay", "--demos", str(demo_file), "--no-save-run"]) == 0
    assert "run saved" not in capsys.readouterr().err and not folder.exists()
    assert main(["replay", "--demos", str(demo_file), "--repeat", "2", "-q"]) == 0
    assert not folder.exists()  # --repeat runs are not saved
    assert main(["replay", "--demos", str(demo_file), "-q"]) == 0
    assert "run saved" not in capsys.readouterr().err and len(store.list(folder)) == 1
    elsewhere = tmp_path / "elsewhere"
    out = tmp_path / "r.md"
    assert main(["export", "--demos", str(demo_file), "--out", str(out), "--runs-dir", str(elsewhere)]) == 0
    assert "run saved" in capsys.readouterr().err
    assert len(RunStore(elsewhere).list(RunStore(elsewhere).for_demos([demo_file]))) == 1
    assert main(["runs", "--runs-dir", str(elsewhere)]) == 0
    assert "stub" in capsys.readouterr().out


def test_a_run_of_sessions_and_of_other_formats(tmp_path, capsys):
    assert main(["replay", "--demos", str(AIRLINE), "--sessions", "0", "-q"]) in (0, 1)
    assert main(["replay", "--demos", str(EXPERIMENT), "--allow-pickle", "-q"]) in (0, 1)
    store = RunStore(tmp_path / "runs")
    (airline,) = store.list(store.for_demos([AIRLINE]))
    assert airline.info is not None and airline.info.sessions == [0]
    assert airline.info.demo_files[0].sha256 == hashlib.sha256(AIRLINE.read_bytes()).hexdigest()
    (experiment,) = store.list(store.for_demos([EXPERIMENT]))
    assert experiment.info is not None and experiment.info.demo_files[0].sha256 == demo_fingerprint(EXPERIMENT)
    summary, _ = store.load(experiment.path)
    assert summary.episodes_run == 1 and summary.episodes[0].steps


def test_an_unwritable_runs_dir_is_a_warning(tmp_path, demo_file, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["replay", "--demos", str(demo_file), "--runs-dir", str(blocker)]) == 0
    assert "run not saved" in capsys.readouterr().err


def test_the_bundled_example_saves_too(capsys, tmp_path):
    assert main(["replay", "--sessions", "0-4", "-q"]) == 0
    store = RunStore(tmp_path / "runs")
    (entry,) = store.list(store.for_demos([example_path()]))
    assert entry.info is not None and entry.info.sessions == [0, 1, 2, 3, 4] and entry.episodes == 5


def test_the_debugger_takes_the_runs_flags(tmp_path, demo_file, monkeypatch):
    import replay_tui.tui.app as app_module

    made = {}

    class Fake:
        def run(self) -> None:
            made["ran"] = True

    def fake_make_app(*args, **kwargs):
        made.update(kwargs)
        return Fake()

    monkeypatch.setattr(app_module, "make_app", fake_make_app)
    assert main(["tui", str(demo_file), "--runs-dir", str(tmp_path / "r"), "--no-save-run"]) == 0
    assert made["runs_dir"] == tmp_path / "r" and made["save_runs"] is False and made["ran"]
    assert main([str(demo_file)]) == 0
    assert made["runs_dir"] == tmp_path / "runs" and made["save_runs"] is True  # $REPLAY_TUI_RUNS_DIR


@pytest.mark.parametrize(
    ("source", "settings"),
    [
        ("example", ReplaySettings(mode="stub")),
        ("example", ReplaySettings(mode="heuristic", mismatch="allow", item_steps=True)),
        ("example", ReplaySettings(mode="heuristic", matching=MatchSettings.parse(["tolerant"]))),
        ("airline", ReplaySettings(mode="stub")),
        ("none", ReplaySettings(mode="stub")),
    ],
    ids=["stub", "heuristic-allow-items", "tolerant", "other-format", "no-episodes"],
)
def test_a_run_file_written_episode_by_episode_is_the_one_dump_of_the_report(tmp_path, source, settings):
    """run_json splices per-episode dumps into the report's indented JSON (so the app's save worker
    lets the UI run between episodes): the bytes are those of one orjson dump of the whole report."""
    path = AIRLINE if source == "airline" else example_path()
    workspace = Workspace.open([path], annotations_path=tmp_path / "notes.json", settings=settings)
    runner = workspace.make_runner()
    ids = [] if source == "none" else workspace.demos.session_ids[:40]
    for sid in ids:
        workspace.record(runner.run_episode(sid), runner.mode)
    summary = workspace.summary()
    info = info_for(workspace)
    expected = {**summary.to_dict(include_steps=True), "run": info.model_dump(mode="json")}
    one_dump = orjson.dumps(expected, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
    assert runs.run_json(summary, info) == one_dump
    assert len(summary.episodes) == len(ids)
