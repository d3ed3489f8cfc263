"""Issue 18: ``--executor ray`` on a real local Ray (2 CPUs): the replay and visual batch reports are the local
run's, byte for byte (timings aside), the work runs in Ray worker processes, and errors are one line."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from replay_tui.cli import main
from replay_tui.examples import example_path
from replay_tui.executors import RAY_MISSING, ExecutorError, RayExecutor, ReplayRecipe, ray_installed
from replay_tui.workspace import ReplaySettings

ROOT = Path(__file__).resolve().parents[2]
needs_ray = pytest.mark.skipif(not ray_installed(), reason="the ray extra is not installed: pip install -e '.[ray]'")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module (starting one costs seconds); the commands use it and leave it running."""
    import ray

    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
        # the workers import this checkout's replay_tui and reach the scripted LLM server directly
        runtime_env={"env_vars": {"PYTHONPATH": path, "NO_PROXY": "127.0.0.1,localhost"}},
    )
    yield ray
    ray.shutdown()


def _replay(capsys, tmp_path: Path, name: str, *argv: str) -> tuple[int, str, bytes]:
    report = tmp_path / name
    code = main(["replay", "--no-save-run", "--report-steps", "--report", str(report), *argv])
    out = capsys.readouterr().out
    return code, out, report.read_bytes()


@needs_ray
@pytest.mark.parametrize(
    "flags",
    [
        ("--mode", "stub", "--item-steps"),
        ("--mode", "heuristic", "--mismatch", "allow"),
        ("--mode", "heuristic", "--sessions", "7,3,50-55", "--match", "tolerant"),
    ],
)
def test_replay_on_ray_writes_the_local_report(local_ray, capsys, tmp_path, flags, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # the report's path on one line however long tmp_path is (xdist)
    code, out, local = _replay(capsys, tmp_path, "local.json", *flags, "--jobs", "2")
    ray_code, ray_out, on_ray = _replay(capsys, tmp_path, "ray.json", *flags, "--executor", "ray")
    assert (ray_code, ray_out.replace("ray.json", "local.json")) == (code, out)
    assert on_ray == local  # every step result, in session order
    assert json.loads(on_ray)["episodes_run"] > 0


@needs_ray
def test_llm_replay_on_ray_sums_the_workers_requests_and_shares_their_cache(local_ray, capsys, tmp_path):
    from tests.llm.scripted import Oracle, ScriptedServer, recorded_calls
    from tests.llm.test_cli_llm import replay, script_deviations

    oracle = Oracle(recorded_calls([example_path()], item_steps=True))
    script_deviations(oracle)  # a mismatch and one failure of each kind, a timeout among them
    with ScriptedServer(oracle) as server:
        local, on_ray = tmp_path / "local.json", tmp_path / "ray.json"
        flags = ("--timeout", "2.0", "--no-save-run", "--jobs", "2")  # only the scripted 3 s reply times out
        assert replay(server.url, tmp_path, local, *flags, "--no-cache")[0] == 1
        sent = capsys.readouterr().err.splitlines()[-1]
        assert sent.startswith("llm: ") and "requests sent, 0 answers from the cache" in sent
        assert replay(server.url, tmp_path, on_ray, *flags, "--executor", "ray")[0] == 1
        assert capsys.readouterr().err.splitlines()[-1] == sent  # the workers' counts, summed
        assert on_ray.read_bytes() == local.read_bytes()
        again = tmp_path / "again.json"
        assert replay(server.url, tmp_path, again, *flags, "--executor", "ray")[0] == 1
        hits = capsys.readouterr().err.splitlines()[-1]
        assert hits.startswith("llm: 0 requests sent, ") and not hits.endswith(" 0 answers from the cache")
        assert again.read_bytes() == local.read_bytes()


@needs_ray
def test_ray_keeps_its_session_folder_in_the_test_session(local_ray):
    """Ray's logs and sockets go under RAY_TMPDIR (tests/conftest.py), removed with the session, not /tmp/ray."""
    from ray._private.worker import global_worker

    session = Path(global_worker.node.get_session_dir_path())
    assert session.is_relative_to(Path(os.environ["RAY_TMPDIR"])) and session.is_dir()


def test_recipes_carry_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = ReplaySettings(mode="custom", policy_spec="pol.py:P", llm={"cache_dir": "cache", "model": "m"})
    recipe = ReplayRecipe.for_workers([Path("demos.json")], settings)
    assert recipe.files == (str(tmp_path / "demos.json"),)
    assert recipe.settings.policy_spec == f"{tmp_path / 'pol.py'}:P"
    assert recipe.settings.llm == {"cache_dir": str(tmp_path / "cache"), "model": "m"}
    kept = ReplayRecipe.for_workers([], ReplaySettings(mode="custom", policy_spec="my.module:P")).settings
    assert kept.policy_spec == "my.module:P" and settings.llm == {"cache_dir": "cache", "model": "m"}


@needs_ray
def test_episodes_run_in_ray_workers_that_open_the_files_themselves(local_ray, capsys, tmp_path):
    seen: list[object] = []
    recipe = _pid_policy_recipe(tmp_path)
    with RayExecutor(jobs=2) as executor:
        results, _ = executor.map(range(10), recipe, _session_of, on_result=lambda item, result: seen.append(item))
    assert [item for item, _ in results] == seen == list(range(10))  # item order, whatever finished first
    workers = set((tmp_path / "pids.txt").read_text().split())
    assert len(workers) == 2 and str(os.getpid()) not in workers  # one Runner per actor, none here


def _pid_policy_recipe(tmp_path: Path) -> ReplayRecipe:
    """A Runner over the bundled example whose policy logs the process it is built in to ``pids.txt``."""
    policy = tmp_path / "pid_policy.py"
    policy.write_text(
        "import os\n"
        f"LOG = {str(tmp_path / 'pids.txt')!r}\n"
        "class P:\n"
        "    def __init__(self):\n"
        "        with open(LOG, 'a') as f:\n"
        "            f.write(f'{os.getpid()}\\n')\n"
        "    def predict_action(self, observation, state, available_actions, llm_prompt_repr):\n"
        "        return 'click[Back to Search]'\n"
    )
    settings = ReplaySettings(mode="custom", policy_spec=f"{policy}:P")
    return ReplayRecipe(files=(str(example_path()),), settings=settings)


def _session_of(runner, session_id):
    return runner.run_episode(runner.env.demos.session_ids[session_id]).session_id


def _pid(_resource, _item) -> int:
    return os.getpid()


def _pids(done) -> set[int]:
    return {pid for _, pid in done}


@needs_ray
def test_maps_in_one_ray_session_reuse_the_actors_and_build_their_resource_again(local_ray, tmp_path):
    """A second map, a second command in the same Ray session: the same actor processes (no second start and
    imports), each building the new map's resource (here a policy that logs its construction) and closing it."""
    recipe = _pid_policy_recipe(tmp_path)
    with RayExecutor(jobs=2) as executor:  # 4 items, 2 queued per actor: each actor serves two
        first, _ = executor.map(range(4), recipe, _pid)
        second, _ = executor.map(range(4), recipe, _pid)
    with RayExecutor(jobs=2) as executor:
        third, _ = executor.map(range(4), _Nothing(), _pid)
    assert len(_pids(first)) == 2 and _pids(first) == _pids(second) == _pids(third)
    built = (tmp_path / "pids.txt").read_text().split()
    assert sorted(built) == sorted(str(pid) for pid in _pids(first) for _ in range(2))  # once per actor per map


@dataclass(frozen=True)
class _Logged:
    """A resource that notes in ``log`` where it was built and closed (equal recipes for equal logs)."""

    log: str

    def __call__(self) -> str:
        _note(self.log, "built")
        return self.log


def _note(log: str, what: str) -> None:
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"{what} {os.getpid()}\n")


def _closed(log: str) -> None:
    _note(log, "closed")


def _notes(log: Path) -> list[str]:
    return sorted(log.read_text().splitlines()) if log.exists() else []


@needs_ray
def test_a_map_that_keeps_its_resource_hands_it_to_the_next_map_of_an_equal_recipe(local_ray, tmp_path):
    """The A/B batch's two sides: each actor's resource (a Chromium) built once, closed when the executor exits;
    a map of another recipe closes it first."""
    log, other = tmp_path / "log.txt", tmp_path / "other.txt"
    with RayExecutor(jobs=2) as executor:
        first = _pids(executor.map(range(4), _Logged(str(log)), _pid, finish=_closed, keep=True)[0])
        second = _pids(executor.map(range(4), _Logged(str(log)), _pid, finish=_closed, keep=True)[0])
        assert first == second and _notes(log) == sorted(f"built {pid}" for pid in first)
    assert _notes(log) == sorted(f"{what} {pid}" for pid in first for what in ("built", "closed"))
    log.unlink()
    with RayExecutor(jobs=2) as executor:
        executor.map(range(4), _Logged(str(log)), _pid, finish=_closed, keep=True)
        third = _pids(executor.map(range(4), _Logged(str(other)), _pid, finish=_closed)[0])
        assert _notes(log) == _notes(other) == sorted(f"{what} {pid}" for pid in third for what in ("built", "closed"))


@needs_ray
def test_a_kept_actor_that_died_is_replaced(local_ray):
    import signal

    with RayExecutor(jobs=2) as executor:
        first = _pids(executor.map(range(4), _Nothing(), _pid)[0])
        dead, kept = sorted(first)
        os.kill(dead, signal.SIGKILL)
        second = _pids(executor.map(range(4), _Nothing(), _pid)[0])
    assert kept in second and dead not in second and len(second) == 2


@needs_ray
def test_a_worker_that_cannot_open_the_files_is_one_line(local_ray, tmp_path):
    recipe = ReplayRecipe(files=(str(tmp_path / "not-shared.json"),), settings=ReplaySettings())
    with RayExecutor(jobs=2) as executor, pytest.raises(ExecutorError) as caught:
        before = _pids(executor.map(range(4), _Nothing(), _pid)[0])
        executor.map([0, 1], recipe, _session_of)
    message = str(caught.value)
    assert message.startswith("a ray worker could not start: ") and "not-shared.json" in message
    assert "\n" not in message
    with RayExecutor(jobs=2) as executor:  # the actors held nothing of the failed map: kept, and they serve
        assert _pids(executor.map(range(4), _Nothing(), _pid)[0]) == before


@needs_ray
def test_cancel_hands_out_no_further_item(local_ray):
    cancel = threading.Event()
    with RayExecutor(jobs=1) as executor:
        done, _ = executor.map(range(50), _Nothing(), _echo, cancel=cancel, on_result=lambda item, _: cancel.set())
    assert 1 <= len(done) < 50 and [item for item, _ in done] == list(range(len(done)))
    assert executor.map([], _Nothing(), _echo) == ([], [])  # no actor for nothing


@needs_ray
def test_results_come_back_in_item_order_whatever_finishes_first(local_ray):
    seen: list[int] = []
    with RayExecutor(jobs=2) as executor:
        done, _ = executor.map(range(6), _Nothing(), _slower_first, on_result=lambda item, _: seen.append(item))
    assert seen == [item for item, _ in done] == list(range(6))
    finished = [at for _, at in done]
    assert finished != sorted(finished)  # item 0 (the slowest) finished after later ones


def _slower_first(_resource, item):
    import time

    time.sleep(0.2 * (6 - item))
    return time.time()


class _Nothing:
    def __call__(self) -> None:
        return None


def _echo(_resource, item):
    return item


@pytest.mark.slow
@needs_ray
@pytest.mark.chromium
def test_visual_ab_batch_on_ray_writes_the_local_report(local_ray, renderer, capsys, tmp_path, monkeypatch):
    """The local run scores in the worker's browser (``renderer``) instead of starting one; the Ray actors start
    their own, as they would (what is checked: their reports are the local run's)."""
    from replay_tui.cli import visual as cli_visual
    from replay_tui.visual.examples import EXAMPLES_DIR

    monkeypatch.setattr(cli_visual, "renderer_factory", lambda timeout_ms: (renderer, False))
    folders = []
    for variant in ("ref", "move", "recolour"):  # two pages of each, to keep the test short
        folder = tmp_path / variant
        folder.mkdir()
        for name in ("11202.html", "2310.html", "rick.jpg"):
            shutil.copy(EXAMPLES_DIR / variant / name, folder / name)
        folders.append(str(folder))
    texts = {}
    for executor in ("local", "ray"):
        out_json = tmp_path / "batch.json"  # one path: the command prints it
        args = ["--ref-dir", folders[0], "--pred-dir", folders[1], "--pred-dir", folders[2]]  # A/B: both, compared
        code = main(["visual", *args, "--jobs", "2", "--executor", executor, "--json", str(out_json)])
        out = capsys.readouterr().out
        assert code == 0 and "B (recolour) − A (move) on 2 pages" in out
        texts[executor] = (out, out_json.read_bytes())
    assert texts["ray"] == texts["local"]


def _bundled_report(executor: RayExecutor | None, renderer=None) -> str:
    """Four bundled pairs scored here (2 at a time in ``renderer``: the worker's browser) or on Ray (each actor
    starts its own); the batch report, timings aside.

    Every variant, of the two pages the A/B test above leaves out; each reference is shared by two pairs (here
    rendered once for both), and each of the two Ray workers scores more than one pair."""
    from replay_tui.executors import ScorerRecipe, score_pairs_on_ray
    from replay_tui.visual.batch import BatchPair, batch_report, bundled_pairs, score_pairs
    from replay_tui.visual.pipeline import VisualScorer
    from tests.visual.test_jobs import _without_timings

    labels = ("move/13470", "drop/9656", "recolour/13470", "reword/9656")
    pairs = [BatchPair(p.label, p.ref, p.pred) for p in bundled_pairs() if p.label in labels]
    assert [p.label for p in pairs] == list(labels)
    order: list[int] = []

    def scored(index, report, *_):
        order.append(index)
        pairs[index].report = report

    if executor is not None:
        score_pairs_on_ray(executor, ScorerRecipe(timeout_ms=15_000), pairs, "compat", on_scored=scored)
    else:
        assert renderer is not None and renderer.timeout_ms == 15_000  # the actors' renderers' timeout
        score_pairs(VisualScorer(renderer=renderer), pairs, "compat", on_scored=scored, jobs=2)
    assert order == list(range(4))  # in pair order, as they finish
    report = batch_report(pairs, "compat").model_dump(mode="json", by_alias=True)
    return json.dumps(_without_timings(report), sort_keys=True)


@needs_ray
@pytest.mark.chromium
def test_bundled_pairs_scored_on_ray_are_the_local_reports(local_ray, renderer):
    with RayExecutor(jobs=2) as executor:
        on_ray = _bundled_report(executor)
    assert on_ray == _bundled_report(None, renderer)


def test_without_the_ray_extra_the_executor_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr("replay_tui.executors.ray_installed", lambda: False)
    for argv in (["replay", "--executor", "ray", "--no-save-run"], ["visual", "--ref-dir", ".", "--pred-dir", "."]):
        argv = [*argv, "--executor", "ray"] if argv[0] == "visual" else argv
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines() == [f"replay-tui {argv[0]}: error: {RAY_MISSING}"]
    assert RAY_MISSING == "--executor ray needs the ray extra: pip install 'replay_tui[ray]'"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay", "--ray-address", "auto"], "--ray-address is used with --executor ray"),
        (["replay", "--executor", "ray", "--repeat", "2"], "--repeat runs with --executor local"),
        (["visual", "a.html", "b.html", "--executor", "ray"], "--executor ray scores batches"),
    ],
)
def test_executor_usage_errors(capsys, monkeypatch, argv, message):
    monkeypatch.setattr("replay_tui.executors.ray_installed", lambda: True)
    assert main([*argv, "--no-save-run"] if argv[0] == "replay" else argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err


@needs_ray
def test_a_bad_ray_address_is_one_line(tmp_path):
    """In a process of its own (this one has a Ray already, which a command uses as it is), forked from one that
    imported the CLI already (``tests/forked.py``)."""
    from tests import forked

    argv = ["replay", "--executor", "ray", "--ray-address", "nosuch://host:1", "--no-save-run"]
    proc = forked.run(forked.cli_main, *argv, cwd=tmp_path, env=_env(), timeout=300, argv=argv)
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert err == [
        "replay-tui replay: error: could not connect to --ray-address nosuch://host:1: Module: nosuch does not exist."
    ]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}


@needs_ray
def test_the_command_starts_a_quiet_local_ray_and_stops_it(tmp_path):
    """No Ray running in this process: the command starts its own (2 CPUs), says nothing about it, stops it."""
    report = tmp_path / "r.json"
    code = (
        "import sys, ray\n"
        "from replay_tui.cli import main\n"
        f"argv = ['replay', '--executor', 'ray', '--jobs', '2', '--no-save-run', '-q', '--report', {str(report)!r}]\n"
        "code = main(argv)\n"
        "print(code, ray.is_initialized())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "0 False"  # exit 0, Ray shut down
    assert lines[:-1] == ["100 episodes, 431 steps, 431 matched (100.0%); 0 mismatches; 0 problems"]
    assert proc.stderr == ""
    assert json.loads(report.read_text())["episodes_run"] == 100


def test_ray_is_imported_only_when_used():
    code = (
        "import sys\n"
        "from replay_tui.cli import main\n"
        "main(['replay', '--no-save-run', '-q', '--sessions', '0-3'])\n"
        "print([m for m in sys.modules if m.split('.')[0] == 'ray' or m == 'replay_tui.executors'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
