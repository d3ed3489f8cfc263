"""Benchmark (issue 18): a visual batch on Ray (``--executor ray``, 2 CPUs) next to the local ``--jobs 2``.

Scores the bundled page pairs (the 16, or the first ``--pairs N``, cycled when N > 16) with
  * local: one Chromium, :func:`score_pairs` with ``jobs`` 2 (what ``replay-tui visual --jobs 2`` runs);
  * ray: a local Ray with 2 CPUs started once (its start is printed apart), then :func:`score_pairs_on_ray`: two
    actors, each with its own Chromium, started in the first timed run and kept for the others (as the A/B
    batch's second side keeps them);
interleaved ``--repeat`` times, best wall time of each, CPU of the whole process tree (Ray's raylet, its workers
and every Chromium are children of this process) and whether every report equals the first local one, timings
aside. Run it on a quiet machine:

    python bench/bench_ray.py                 # the 16 bundled pairs, best of 3
    python bench/bench_ray.py --pairs 2 --repeat 1   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_visual import _without_timings, tree_cpu_by_pid, tree_cpu_since
from replay_tui.executors import RayExecutor, ScorerRecipe, score_pairs_on_ray
from replay_tui.visual.batch import BatchPair, batch_report, bundled_pairs, score_pairs
from replay_tui.visual.pipeline import VisualScorer

TIMEOUT_MS = 30_000


def pairs_of(count: int) -> list[BatchPair]:
    bundled = bundled_pairs()
    return [
        BatchPair(f"{i:05d}-{bundled[i % 16].label}", bundled[i % 16].ref, bundled[i % 16].pred) for i in range(count)
    ]


def timed(count: int, score) -> tuple[float, float, str]:
    """Wall seconds, tree CPU seconds and the report (timings aside) of one batch scored by ``score``."""
    pairs = pairs_of(count)

    def scored(index, report, *_):
        pairs[index].report = report

    cpu0, started = tree_cpu_by_pid(), time.perf_counter()
    score(pairs, scored)
    wall, cpu = time.perf_counter() - started, tree_cpu_since(cpu0)
    return (
        wall,
        cpu,
        json.dumps(_without_timings(batch_report(pairs, "compat").model_dump(mode="json")), sort_keys=True),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=16, help="page pairs (default: the 16 bundled ones)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, interleaved; the best is reported")
    parser.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    args = parser.parse_args(argv)
    import ray

    started = time.perf_counter()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    ray_start = time.perf_counter() - started
    runs: dict[str, list[tuple[float, float, bool]]] = {"local --jobs 2": [], "ray, 2 CPUs": []}
    reference = None
    try:
        with VisualScorer(timeout_ms=TIMEOUT_MS) as scorer, RayExecutor(jobs=2) as executor:
            warm = pairs_of(1)[0]
            scorer.score(warm.ref, warm.pred)  # the local browser and its page pool, as bench_visual does

            def local(pairs, scored):
                score_pairs(scorer, pairs, "compat", on_scored=scored, jobs=2)

            def on_ray(pairs, scored):
                score_pairs_on_ray(executor, ScorerRecipe(timeout_ms=TIMEOUT_MS), pairs, "compat", on_scored=scored)

            for _ in range(args.repeat):
                for name, score in (("local --jobs 2", local), ("ray, 2 CPUs", on_ray)):
                    wall, cpu, text = timed(args.pairs, score)
                    reference = reference or text
                    runs[name].append((wall, cpu, text == reference))
                    print(f"{name:>15}: {wall:6.2f}s wall, {cpu:6.2f}s CPU", flush=True)
    finally:
        ray.shutdown()
    rows = []
    for name, results in runs.items():
        wall, cpu, _ = min(results)
        rows.append(
            {
                "executor": name,
                "pairs": args.pairs,
                "best_wall_s": wall,
                "walls_s": [r[0] for r in results],
                "cpu_s": cpu,
                "per_pair_s": wall / args.pairs,
                "identical_to_local": all(r[2] for r in results),
            }
        )
    print()
    print(
        f"summary (issue 18): {args.pairs} pairs, best of {args.repeat}; Ray started in {ray_start:.2f}s (not counted)"
    )
    for row in rows:
        print(
            f"  {row['executor']:>15}: {row['best_wall_s']:.2f}s ({row['per_pair_s']:.3f}s/pair), "
            f"CPU {row['cpu_s']:.2f}s, reports identical to local: {row['identical_to_local']}"
        )
    print(f"  ray / local wall: {rows[1]['best_wall_s'] / rows[0]['best_wall_s']:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"ray_start_s": ray_start, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
