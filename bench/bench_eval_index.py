"""Benchmark: a big inspect_ai ``.eval`` to its first rows and one sample, beside inspect_ai (issue 31).

Run by hand (not in CI), on a log written by inspect_ai's own API::

    /tmp/insp/bin/python ../shared/peer_bench/gen_inspect_eval.py /tmp/evalbench 10000
    python bench/bench_eval_index.py /tmp/evalbench/inspect_10000_zstd.eval --sample 5000
    /tmp/insp/bin/python bench/gen_big_eval.py /tmp/evalbench 100000      # past ~20,000 samples
    python bench/bench_eval_index.py /tmp/evalbench/inspect_100000_zstd.eval --sample 50000

Each phase runs in a fresh subprocess under GNU time (``-f %M``: its own peak RSS), timed from
outside (interpreter start and imports included, as a user waits for them):

- inspect_ai summaries: ``read_eval_log(header_only=True)`` + ``read_eval_log_sample_summaries``
  (what its log list needs; ``../shared/peer_bench/insp_summaries.py`` with the peer venv's python);
- inspect_ai one sample: ``read_eval_log_sample`` (``insp_one.py``);
- floor: inflate and orjson-load ``header.json`` + ``summaries.json`` (``floor_zip.py --summaries``,
  with ``zipfile_zstd`` imported first so Python 3.11's zipfile reads zstd members);
- ours first rows: ``sources.open_sources([FILE], progressive=True)``, what the app opens (detection
  by content, the reader's index up to its first 200 rows, the EpisodeSet of refs; the index's thread
  is cut there: the process exits);
- ours whole index: ``sources.open_sources([FILE])``, what the CLI's commands read;
- ours one sample: the same, then that one episode read (``TrajectoryFile.read_trajectory``); the
  child also prints the load alone.

``--ours PATH`` puts another checkout's package first on the path (``git archive main replay_tui |
tar -x -C /tmp/before`` gives the code before a change). Ratios are to the floor and to inspect_ai.

Measured on the 2-core VM while other test suites ran (load average 13-22, so only the ratios within
one run mean much), on a 10,000-sample log of inspect_ai's own members (``zstd_tools_deflate.eval``'s
samples and summaries replicated with new ids and inputs: 29 MiB zip, deflate), sample 5000:

    phase                            before (main)        after
    inspect_ai header + summaries   19.5-29.7s 160 MiB
    inspect_ai one sample           14.7-16.1s  95 MiB
    floor: summaries.json            1.2-1.4s   69 MiB
    ours: first rows                55.4s 307 MiB    3.9-5.9s 96 MiB (index in-process 1.6-3.4s)
    ours: one episode loaded         (after a whole read)   0.002-0.003s (the index's zip kept open)

The 10,000-sample zstd log of ``gen_inspect_eval.py`` (165 MiB), main's code, load 13+, medians of 3:
inspect_ai header + summaries 36.8s wall / 4.5s CPU / 169 MiB; floor 0.7s / 0.24s / 89 MiB; ours
first rows 8.9s / 1.4s / 115 MiB (0.3x inspect_ai's CPU), one sample's load 0.008s.

100,000 samples (issue 31's figure), written by inspect_ai 0.3.285's own recorder with
``bench/gen_big_eval.py`` (1,652 MiB zip, zstd; summaries.json alone parses to 758 MiB), sample
50000, ``--repeat 3`` (medians; each run a fresh process). The machine was shared by 8 jobs (load
average 4-24), so wall time is mostly waiting: **CPU** (user + system, interpreter start and imports
included) is the figure to compare::

    phase                            wall     CPU    peak RSS
    inspect_ai header + summaries   62.8s   21.8s    897 MiB
    inspect_ai one sample            3.9s    2.3s    139 MiB
    floor: summaries.json            8.2s    2.9s    758 MiB
    ours (main): first rows         60.7s   12.3s    811 MiB   (load ~20)
    ours (h-i31): first rows        26.3s    6.7s    812 MiB   (load ~20; 16.6s / 8.4s at load ~8 before the GC pause)
    ours (h-i31): one sample        54.7s    6.2s    812 MiB   (its load alone 0.008-0.1s)

In one process, quiet moments: ``open_sources`` 9.1s of CPU on main, 4.1s after (an inspect summary's
outcome built when first shown; the index run with the cycle collector paused and tenured), the
first episode then loads in 0.008s (0.56s before tenuring: a full collection). Against inspect_ai's
own readers: first rows at 0.3x its CPU; one sample alone 0.008s vs its 2.3s. **Not met**: the
target of 3s to the first rows: the floor alone (inflating and parsing summaries.json) is 2.9s of
CPU and 758 MiB, so a 3s list of 100,000 samples needs summaries parsed incrementally (first rows
before the member is whole), not a faster loop.

Progressive first rows (issue 31, h-prog2): the same kind of 100,000-sample log made again with
``gen_big_eval.py`` (1,644 MiB), sample 50000, one run of each phase at load 2-7; "first rows" is
now the app's open (``progressive=True``: 200 rows, the process exits there), "whole index" what the
CLI reads; before = the package as it was (``--ours``: its first rows are its whole index)::

    phase                            wall     CPU    peak RSS
    inspect_ai header + summaries   40.1s   22.1s    897 MiB
    inspect_ai one sample            2.2s    2.0s    139 MiB
    floor: summaries.json            2.8s    2.8s    758 MiB
    ours before: first rows          4.3s    4.1s    813 MiB   (= its whole index)
    ours after: first rows           1.0s    1.0s    132 MiB   (0.05x inspect_ai's CPU, 0.36x the floor's)
    ours before: whole index         5.9s    5.8s    813 MiB
    ours after: whole index          7.8s    6.1s    476 MiB   (summaries never held whole: -40 % memory)
    ours: one sample's load         0.008s

The whole index measured again after the batches' ends were found by a trial parse, not a bracket
scan (in-process ``open_sources``, before and after alternated, load 3): before 4.1-5.7s of CPU
and 813 MiB, after 3.6-3.9s and 451 MiB; streaming summaries.json (inflate + parse, 100,000
entries) 2.1s against 2.35s to inflate it and parse it whole.

In the app, in a real terminal (``bench_first_rows.py``: tmux 160x48, from the interpreter's start):
first rows 1.48s at 158 MB (before: 8.36s at 833 MB, the whole index before the first frame); the
index done at 8.4s, 644 MB, the list browsable meanwhile. What made it: the app's progressive open
(``sources.IndexingLog``: the first 200 rows at open, the rest from a thread started after the
first frame), ``summaries.json`` parsed a batch at a time as it inflates
(``jsonscan.array_batches``: first rows before the member is whole), and the zip's central
directory read from its bytes (zipfile's ZipInfo per member: 0.6-0.9s of CPU at 100,000 members;
ours 0.3s). Left: the whole index's memory (the 100,000 summaries' dicts, kept for their outcomes
built when first shown).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT.parent.parent / "shared" / "peer_bench"

OURS_INDEX = """
import json, os, resource, sys, time
start = time.perf_counter()
from replay_tui.sources import open_sources
imported = time.perf_counter()
first = sys.argv[2] == "--first"
try:  # the app's open: the first rows, the rest indexed by a thread (a checkout before it: the whole index)
    demos = open_sources([sys.argv[1]], progressive=first)
except TypeError:
    demos = open_sources([sys.argv[1]])
listed = time.perf_counter()
refs = demos.refs
out = {"episodes": len(refs), "problems": sum(len(f.problems) for f in demos.files),
       "import": imported - start, "index": listed - imported}
if first:  # what the app shows first: the index's thread is cut here, so the RSS is the first rows'
    out["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out), flush=True)
    os._exit(0)
if sys.argv[2] != "--whole":
    [ref] = [r for r in refs if r.episode_id == sys.argv[2]]
    t = time.perf_counter()
    episode = ref.file.read_trajectory(ref)
    out["load"] = time.perf_counter() - t
    out["steps"] = len(episode.steps)
print(json.dumps(out))
"""

FLOOR = "import runpy, sys, zipfile_zstd; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"


def run(argv: list[str], env: dict[str, str] | None = None) -> Phase:
    """Wall and CPU (user + system) seconds, peak RSS in MiB and stdout of ``argv`` in a fresh process
    (run in a temporary folder: ``python -c`` puts its working folder first on the path, before
    ``--ours``). CPU is what a shared machine's load does not inflate."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        start = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-o", rss.name, "-f", "%M %U %S", *argv],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            cwd=tempfile.gettempdir(),
        )
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{argv[:3]} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
        kib, user, system = rss.read().strip().splitlines()[-1].split()
    return Phase(wall, float(user) + float(system), int(kib) / 1024, done.stdout.strip())


class Phase(NamedTuple):
    wall: float
    cpu: float
    rss: float
    out: str


def median(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> Phase:
    """The run of median wall time of ``repeat`` runs, each in a fresh process (CPU and RSS: medians too)."""
    runs = [run(argv, env) for _ in range(repeat)]
    middle = sorted(runs, key=lambda r: r.wall)[len(runs) // 2]
    return middle._replace(cpu=statistics.median(r.cpu for r in runs), rss=statistics.median(r.rss for r in runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--sample", default="1", help="the sample id loaded alone (epoch 1)")
    parser.add_argument("--peer-python", default="/tmp/insp/bin/python", help="a python with inspect_ai")
    parser.add_argument("--peer-dir", type=Path, default=PEER, help="the peer_bench scripts")
    parser.add_argument("--ours", type=Path, default=ROOT, help="the checkout whose replay_tui is measured")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each phase; the median is shown")
    parser.add_argument("--skip-peer", action="store_true", help="ours only")
    args = parser.parse_args()
    path = str(args.file.resolve())
    env = {**os.environ, "PYTHONPATH": str(args.ours.resolve())}
    rows: dict[str, Phase] = {}
    if not args.skip_peer:
        peer, summaries = args.peer_python, str(args.peer_dir / "insp_summaries.py")
        rows["inspect_ai header + summaries"] = median([peer, summaries, path], args.repeat)
        rows["inspect_ai one sample"] = median(
            [peer, str(args.peer_dir / "insp_one.py"), path, args.sample], args.repeat
        )
        rows["floor: summaries.json"] = median(
            [peer, "-c", FLOOR, str(args.peer_dir / "floor_zip.py"), path, "--summaries"], args.repeat
        )
    rows["ours: first rows"] = median([sys.executable, "-c", OURS_INDEX, path, "--first"], args.repeat, env)
    rows["ours: whole index"] = median([sys.executable, "-c", OURS_INDEX, path, "--whole"], args.repeat, env)
    rows["ours: one sample"] = median([sys.executable, "-c", OURS_INDEX, path, args.sample], args.repeat, env)
    size = args.file.stat().st_size / 2**20
    print(f"{args.file.name}: {size:,.0f} MiB zip; ours from {args.ours}")
    print(f"  {'phase':<32}{'wall':>8}{'CPU':>8}{'peak RSS':>11}  output")
    for name, phase in rows.items():
        print(f"  {name:<32}{phase.wall:>7.2f}s{phase.cpu:>7.2f}s{phase.rss:>7.0f} MiB  {phase.out[:100]}")
    ours_rows, ours_one = rows["ours: first rows"], rows["ours: one sample"]
    inner = json.loads(ours_one.out)
    print(f"  ours: index in-process {inner['index']:.2f}s (imports {inner['import']:.2f}s), load {inner['load']:.3f}s")
    if not args.skip_peer:
        floor, peer_rows = rows["floor: summaries.json"], rows["inspect_ai header + summaries"]
        peer_one = rows["inspect_ai one sample"]
        for what, ours, other in (("first rows", ours_rows, peer_rows), ("one sample", ours_one, peer_one)):
            print(
                f"  {what}: wall {ours.wall / other.wall:.2f}x inspect_ai, CPU {ours.cpu / other.cpu:.2f}x"
                + (f"; {ours.wall / floor.wall:.1f}x the floor" if what == "first rows" else "")
            )


if __name__ == "__main__":
    main()
