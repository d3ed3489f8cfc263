"""Benchmark: index + stub-replay a ~1 GB demo file, against a naive json.load + full validation.

Run by hand (not in CI):

    python bench/bench_loader.py                 # generates bench/data/bench_1024mb.json once
    python bench/bench_loader.py --size-mb 200   # a smaller file

Each phase runs in its own subprocess so its peak memory is its own. Peak RSS counts the pages
of the memory-mapped file that were touched (shared, reclaimable page cache); "heap" is the peak
of Python allocations measured with tracemalloc in a separate run of the same phase.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

PHASES = ("index", "replay", "naive_open", "naive_replay")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase_index(path: str) -> dict:
    from replay_tui.demos.loader import open_demos

    demos = open_demos(path)
    # What the session browser needs for every row is now in memory:
    rows = sum(1 for ref in demos.refs if ref.header.instruction is not None)
    return {"episodes": rows, "steps": sum(ref.decision_steps for ref in demos.refs)}


def phase_replay(path: str) -> dict:
    from replay_tui.demos.loader import open_demos
    from replay_tui.env import OfflineWebshopEnv
    from replay_tui.policies import StubPolicy
    from replay_tui.runner import Runner

    demos = open_demos(path)
    demos.cache_size = 1
    summary = Runner(OfflineWebshopEnv(demos), StubPolicy()).run_all()
    # Reports keep per-step results; that is part of the real cost, keep it.
    return {"episodes": summary.episodes_run, "steps": summary.total_steps, "accuracy": summary.overall_accuracy}


def _naive_load(path: str) -> list:
    from replay_tui.demos.loader import parse_episode

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


def run_phase(name: str, path: str, heap: bool) -> dict:
    if heap:
        import tracemalloc

        tracemalloc.start()
    start = time.perf_counter()
    result = globals()[f"phase_{name}"](path)
    result["seconds"] = time.perf_counter() - start
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
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    result = child(False)
    if heap_runs:
        result["peak_heap_mb"] = child(True)["peak_heap_mb"]
    return result


def ensure_file(size_mb: int) -> Path:
    from replay_tui.demos import synth

    data = HERE / "data"
    data.mkdir(exist_ok=True)
    path = data / f"bench_{size_mb}mb.json"
    if not path.exists():
        print(f"generating {path} ({size_mb} MB) ...", flush=True)
        start = time.perf_counter()
        stats = synth.write_demo_file(path, start=0, count=1, seed=7, quirk_rate=0.1, target_bytes=size_mb * 2**20)
        print(f"  {stats.episodes:,} episodes in {time.perf_counter() - start:.1f} s", flush=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--file", help="benchmark this file instead of a generated one")
    parser.add_argument("--no-heap", action="store_true", help="skip the tracemalloc runs (faster)")
    parser.add_argument("--skip-naive", action="store_true", help="skip the naive baseline")
    parser.add_argument("--phase", choices=PHASES, help=argparse.SUPPRESS)
    parser.add_argument("--heap", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(run_phase(args.phase, args.file, args.heap)))
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
