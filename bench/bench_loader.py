"""Benchmark: index + stub-replay a ~1 GB demo file, against a naive json.load + full validation.

Run by hand (not in CI):

    python bench/bench_loader.py                 # generates bench/data/bench_1024mb.json once
    python bench/bench_loader.py --size-mb 200   # a smaller file
    python bench/bench_loader.py --figures       # issue 14's two figures, best of --runs (3) each:
        # (a) app launch on the 1 GB file: imports, open (index to a browsable EpisodeSet) and a
        #     headless first paint of the browser (Textual's Pilot), each measured on its own;
        # (b) stub replay in-process on a 100 MB file, steps/s, against a hand-written orjson loop

Each phase runs in its own subprocess so its peak memory is its own. Peak RSS counts the pages
of the memory-mapped file that were touched (shared, reclaimable page cache); "heap" is the peak
of Python allocations measured with tracemalloc in a separate run of the same phase.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from termdrive import installed_bytecode  # noqa: E402

BYTECODE: dict[str, str] = {}
"""Set by figures(): the phases' processes read compiled bytecode (termdrive.installed_bytecode)."""

PHASES = ("index", "replay", "naive_open", "naive_replay", "launch", "stub_replay", "orjson_floor")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase_index(path: str) -> dict:
    from replay_tui.formats.webshop_demos.index import open_demos

    demos = open_demos(path)
    # What the session browser needs for every row is now in memory:
    rows = sum(1 for ref in demos.refs if ref.task is not None)
    return {"episodes": rows, "steps": sum(ref.decision_steps for ref in demos.refs)}


def phase_replay(path: str) -> dict:
    from replay_tui.env import OfflineWebshopEnv
    from replay_tui.formats.webshop_demos.index import open_demos
    from replay_tui.policies import StubPolicy
    from replay_tui.runner import Runner

    demos = open_demos(path)
    demos.cache_size = 1
    summary = Runner(OfflineWebshopEnv(demos), StubPolicy()).run_all()
    # Reports keep per-step results; that is part of the real cost, keep it.
    return {"episodes": summary.episodes_run, "steps": summary.total_steps, "accuracy": summary.overall_accuracy}


def _naive_load(path: str) -> list:
    from replay_tui.formats.webshop_demos.index import parse_episode

    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    return [parse_episode(item, file=path, index=i) for i, item in enumerate(raw)]


def phase_naive_open(path: str) -> dict:
    episodes = _naive_load(path)
    return {"episodes": len(episodes), "steps": sum(len(e.decision_steps) for e in episodes)}


def phase_naive_replay(path: str) -> dict:
    """The seed's pseudo-code: load everything, then format and compare each recorded decision."""
    from replay_tui.actions import format_env_action
    from replay_tui.matching import actions_match

    episodes = _naive_load(path)
    steps = matched = 0
    for episode in episodes:
        for step in episode.decision_steps:
            steps += 1
            predicted = format_env_action(step.llm_action_name, step.llm_action_arguments)
            matched += actions_match(predicted, step.expected_action)
    return {"episodes": len(episodes), "steps": steps, "accuracy": matched / max(1, steps)}


def phase_launch(path: str) -> dict:
    """What `replay-tui --demos FILE` does before the user sees rows: import the app, open (index)
    the file (``make_app``), mount the app and paint the browser once (headless, with Textual's
    Pilot; a real terminal's figure is bench/termdrive.py's)."""
    import asyncio

    start = time.perf_counter()
    from replay_tui.tui.app import make_app
    from replay_tui.tui.replay.browser import BrowserScreen

    imported = time.perf_counter()
    app = make_app([path], save_runs=False, annotations=HERE / "data" / "bench.annotations.json")
    made = time.perf_counter()
    painted: dict[str, float] = {}

    async def drive() -> None:
        async with app.run_test(size=(130, 36)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, BrowserScreen) and len(app.screen.source)
            painted["at"] = time.perf_counter()
            app.workers.cancel_group(app, "validate")  # the background validation is not part of launch

    asyncio.run(drive())
    return {
        "episodes": len(app.workspace.demos),
        "steps": sum(ref.decision_steps for ref in app.workspace.demos.refs),
        "import_s": imported - start,
        "open_s": made - imported,
        "paint_s": painted["at"] - made,
        "launch_s": painted["at"] - start,
    }


def phase_stub_replay(path: str) -> dict:
    """Our stub replay, in-process: open the file, replay every episode, build the summary report
    (imports done first and not counted, as for the floor)."""
    from replay_tui.env import OfflineWebshopEnv
    from replay_tui.policies import StubPolicy
    from replay_tui.runner import Runner
    from replay_tui.sources import open_sources

    start, cpu = time.perf_counter(), time.process_time()
    demos = open_sources([path])
    demos.cache_size = 1
    opened, opened_cpu = time.perf_counter(), time.process_time()
    summary = Runner(OfflineWebshopEnv(demos), StubPolicy()).run_all()
    done, done_cpu = time.perf_counter(), time.process_time()
    return {
        "episodes": summary.episodes_run,
        "steps": summary.total_steps,
        "accuracy": summary.overall_accuracy,
        "open_s": opened - start,
        "replay_s": done - opened,
        "total_s": done - start,
        "replay_cpu_s": done_cpu - opened_cpu,
        "total_cpu_s": done_cpu - cpu,
    }


def phase_orjson_floor(path: str) -> dict:
    """The hand-written floor: orjson loads the whole file, then a loop walks the episodes and compares
    each recorded decision's tool call, formatted as the stub formats it, with the recorded action
    (both normalized as the matcher normalizes them). Nothing else: no validation, no reports."""
    import orjson

    from replay_tui.actions import ActionError, format_env_action, normalize_action
    from replay_tui.episodes.recorded import arguments_from_json

    start, cpu = time.perf_counter(), time.process_time()
    with open(path, "rb") as handle:
        episodes = orjson.loads(handle.read())
    steps = matched = 0
    for episode in episodes:
        for entry in episode["trajectory"]:
            if "step_number" not in entry:
                continue
            steps += 1
            try:
                arguments = arguments_from_json(entry.get("llm_action_arguments"))
                predicted = format_env_action(entry.get("llm_action_name") or "", arguments)
            except (ActionError, ValueError):
                predicted = ""
            expected = entry.get("action_executed_in_env") or predicted
            matched += normalize_action(predicted) == normalize_action(expected)
    return {
        "episodes": len(episodes),
        "steps": steps,
        "accuracy": matched / max(1, steps),
        "total_s": time.perf_counter() - start,
        "total_cpu_s": time.process_time() - cpu,
    }


def run_phase(name: str, path: str, heap: bool) -> dict:
    if heap:
        import tracemalloc

        tracemalloc.start()
    start, cpu = time.perf_counter(), time.process_time()
    result = globals()[f"phase_{name}"](path)
    result["seconds"] = time.perf_counter() - start
    result["cpu_seconds"] = time.process_time() - cpu  # all threads: steadier than wall time on a busy machine
    result["peak_rss_mb"] = _peak_rss_mb()
    if heap:
        import tracemalloc

        result["peak_heap_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    return result


def measure(name: str, path: Path, *, heap_runs: bool) -> dict:
    def child(heap: bool) -> dict:
        out = subprocess.run(
            [sys.executable, __file__, "--phase", name, "--file", str(path)] + (["--heap"] if heap else []),
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **BYTECODE},
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    result = child(False)
    if heap_runs:
        result["peak_heap_mb"] = child(True)["peak_heap_mb"]
    return result


def ensure_file(size_mb: int) -> Path:
    from replay_tui.formats.webshop_demos import synth

    data = HERE / "data"
    data.mkdir(exist_ok=True)
    path = data / f"bench_{size_mb}mb.json"
    if not path.exists():
        print(f"generating {path} ({size_mb} MB) ...", flush=True)
        start = time.perf_counter()
        stats = synth.write_demo_file(path, start=0, count=1, seed=7, quirk_rate=0.1, target_bytes=size_mb * 2**20)
        print(f"  {stats.episodes:,} episodes in {time.perf_counter() - start:.1f} s", flush=True)
    return path


def best_of(name: str, path: Path, runs: int, key: str = "seconds") -> dict:
    """The run of ``name`` (each in a fresh process) with the smallest ``key``."""
    results = [measure(name, path, heap_runs=False) for _ in range(runs)]
    return min(results, key=lambda r: r[key])


def figures(runs: int) -> None:
    """Issue 14's rows: app launch on the 1 GB file, stub replay on 100 MB against the orjson floor."""
    BYTECODE.update(installed_bytecode())
    print("phases read compiled bytecode, as after pip install (PYTHONDONTWRITEBYTECODE unset for them)")
    big = ensure_file(1024)
    print(f"(a) app launch, {big.name} ({big.stat().st_size / 2**20:,.0f} MB), best of {runs}:")
    launch = best_of("launch", big, runs, "launch_s")
    print(
        f"    import {launch['import_s']:.2f} s + open {launch['open_s']:.2f} s + first paint "
        f"{launch['paint_s']:.2f} s = {launch['launch_s']:.2f} s "
        f"({launch['episodes']:,} episodes); target <= 1.3 s"
    )
    index = best_of("index", big, runs)
    print(
        f"    open alone (index to a browsable EpisodeSet, imports included): {index['seconds']:.2f} s "
        f"(CPU {index['cpu_seconds']:.2f} s, both threads)"
    )

    small = ensure_file(100)
    print(f"(b) stub replay in-process, {small.name} ({small.stat().st_size / 2**20:,.0f} MB), best of {runs}:")
    ours = [measure("stub_replay", small, heap_runs=False) for _ in range(runs)]
    floors = [measure("orjson_floor", small, heap_runs=False) for _ in range(runs)]
    steps = ours[0]["steps"]
    assert all(r["steps"] == steps for r in ours + floors)

    def best(results: list[dict], key: str) -> float:
        return min(r[key] for r in results)

    floor_wall, floor_cpu = best(floors, "total_s"), best(floors, "total_cpu_s")
    for label, wall, cpu in (
        ("replay (after open), the issue's figure", best(ours, "replay_s"), best(ours, "replay_cpu_s")),
        ("open + replay + report", best(ours, "total_s"), best(ours, "total_cpu_s")),
    ):
        print(
            f"    ours, {label}: {wall:.2f} s = {steps / wall:,.0f} steps/s "
            f"({floor_wall / wall:.2f}x the floor); CPU {cpu:.2f} s ({floor_cpu / cpu:.2f}x)"
        )
    print(
        f"    orjson floor, load + walk: {floor_wall:.2f} s = {steps / floor_wall:,.0f} steps/s; CPU {floor_cpu:.2f} s"
        f"  ({steps:,} steps; accuracy {ours[0]['accuracy']:.3f} vs {floors[0]['accuracy']:.3f}; target >= 0.8x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--file", help="benchmark this file instead of a generated one")
    parser.add_argument("--no-heap", action="store_true", help="skip the tracemalloc runs (faster)")
    parser.add_argument("--skip-naive", action="store_true", help="skip the naive baseline")
    parser.add_argument("--figures", action="store_true", help="print issue 14's launch and stub-replay figures")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure with --figures (the best is shown)")
    parser.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    parser.add_argument("--heap", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(run_phase(args.phase, args.file, args.heap)))
        return

    if args.figures:
        figures(args.runs)
        return
    path = Path(args.file) if args.file else ensure_file(args.size_mb)
    size_mb = path.stat().st_size / 2**20
    print(f"file: {path} ({size_mb:,.0f} MB)")
    phases = ["index", "replay"] + ([] if args.skip_naive else ["naive_open", "naive_replay"])
    results = {}
    for name in phases:
        results[name] = measure(name, path, heap_runs=not args.no_heap)
        r = results[name]
        heap = f", heap {r['peak_heap_mb']:,.0f} MB" if "peak_heap_mb" in r else ""
        print(
            f"{name:>13}: {r['seconds']:7.2f} s  ({size_mb / r['seconds']:6.0f} MB/s), "
            f"peak RSS {r['peak_rss_mb']:,.0f} MB{heap}; {r['episodes']:,} episodes, {r['steps']:,} steps"
            + (f", accuracy {r['accuracy']:.3f}" if "accuracy" in r else ""),
            flush=True,
        )
    if "naive_open" in results:
        ours, naive = results["index"], results["naive_open"]
        print(
            f"\ntime to browse (index vs json.load + full validation): "
            f"{naive['seconds'] / ours['seconds']:.1f}x faster, "
            f"peak RSS {naive['peak_rss_mb'] / ours['peak_rss_mb']:.1f}x smaller"
            + (f", heap {naive['peak_heap_mb'] / ours['peak_heap_mb']:.0f}x smaller" if "peak_heap_mb" in ours else "")
        )
        ours, naive = results["replay"], results["naive_replay"]
        print(
            f"index + stub replay of every episode vs naive load + replay: "
            f"{naive['seconds'] / ours['seconds']:.1f}x faster, "
            f"peak RSS {naive['peak_rss_mb'] / ours['peak_rss_mb']:.1f}x smaller"
        )


if __name__ == "__main__":
    main()
