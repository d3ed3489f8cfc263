"""Benchmark (issue 32): ``replay-tui compare RUN_A RUN_B`` on two big replay reports, beside a plain join.

The floor is what any script does with the two ``--report-steps`` JSON files: decode both with orjson,
index B's step verdicts by (episode, step) and count the flips of A's steps. ``compare`` does that and
validates every step result, the statistics (Wilson, exact McNemar, a bootstrap clustered by episode)
and the per-state and per-episode figures. Each is run in a fresh interpreter (import cost included, as a
user pays it), alternately, ``--repeat`` times; the run of least CPU time (user + system: on a shared machine
wall time waits for cores), its wall time, peak RSS and the ratios are printed.

Make the reports once (two policies over one generated demo file; a 20,000-episode file is ~535 MB):

    replay-tui generate /tmp/cmp/demos.json --count 20000
    for mode in stub heuristic; do replay-tui replay --demos /tmp/cmp/demos.json --all --mode $mode \
        --mismatch allow --report /tmp/cmp/$mode.json --report-steps -q --no-save-run; done
    python bench/bench_compare.py /tmp/cmp/stub.json /tmp/cmp/heuristic.json

Measured on the 2-core VM, quiet (November 2026, best of three): plain join 1.95 s of CPU; compare
4.35 s (2.2x); at the start of that session 5.39 s against 2.01 s (2.7x). The step and episode pairs
became dataclasses (80,000 pydantic models were a second), ``compare`` parses alone without the full
parser's imports (``cli/entry.py``), a step result's reason and verdict are filled in one copy.

Then (issue 32, the shared VM, load ~5): plain join 2.06 s, compare 3.32 s (1.6x; the code before,
in the same conditions, 2.28 s against 5.46 s, 2.4x). The step results are read by a narrow msgspec
schema (``compare.run_files.StepRow``) and the report without them by pydantic, instead of 160,558 pydantic
models; the JSON report is byte-identical. Left: orjson decoding (~0.8 s), the compare loop
(~0.7 s), the bootstrap and McNemar (~0.6 s), the imports (~0.5 s).

One compare (issue 32: ``replay_tui/compare/``, both kinds filling one result model, the steps' flips
worded by one vocabulary table), the shared VM at load ~20: plain join 2.54 s, compare 4.69 s (1.8x); the
code before, in the same conditions, 2.52 s against 5.02 s (2.0x). The five reports are byte-identical.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PLAIN_JOIN = r"""
import sys, orjson
a = orjson.loads(open(sys.argv[1], "rb").read())
b = orjson.loads(open(sys.argv[2], "rb").read())
verdicts = {(e["file"], e["session_id"], s["step_label"]): s["match"] for e in b["episodes"] for s in e["steps"]}
flips = {"regressed": 0, "fixed": 0, "same": 0}
for e in a["episodes"]:
    for s in e["steps"]:
        other = verdicts.get((e["file"], e["session_id"], s["step_label"]))
        if other is None:
            continue
        flips["regressed" if s["match"] and not other else "fixed" if other and not s["match"] else "same"] += 1
print(flips)
"""


def timed(argv: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user + system) and peak RSS of the child (KiB, from GNU time), and its
    last output line. On a shared machine the CPU time is the figure to compare: wall time waits for cores."""
    start = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%U %S %M", *argv], capture_output=True, text=True, cwd=ROOT, check=False
    )
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{argv[:4]} failed ({done.returncode}): {done.stderr[-2000:]}")
    *_, last_err = done.stderr.strip().splitlines()
    user, system, peak = last_err.split()
    lines = done.stdout.strip().splitlines()
    return wall, float(user) + float(system), int(peak), lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    args.a, args.b = str(Path(args.a).resolve()), str(Path(args.b).resolve())
    floor_cmd = [sys.executable, "-c", PLAIN_JOIN, args.a, args.b]
    ours_cmd = [sys.executable, "-m", "replay_tui", "compare", args.a, args.b, "-q"]
    best: dict[str, tuple[float, float, int, str]] = {}
    for _ in range(args.repeat):
        for name, argv in (("plain join", floor_cmd), ("replay-tui compare", ours_cmd)):
            wall, cpu, peak, last = timed(argv)
            if name not in best or cpu < best[name][1]:
                best[name] = (wall, cpu, peak, last)
    floor_wall, floor_cpu = best["plain join"][:2]
    for name, (wall, cpu, peak, last) in best.items():
        print(
            f"{name:<20} CPU {cpu:6.2f} s  {cpu / floor_cpu:4.1f}x the plain join; wall {wall:6.2f} s "
            f"{wall / floor_wall:4.1f}x   (peak RSS {peak / 1024:,.0f} MiB)"
        )
        print(f"{'':<20} {last[:140]}")


if __name__ == "__main__":
    main()
