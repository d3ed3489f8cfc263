"""Benchmark: a 1 GB Claude Code project folder and a 1 GB OTLP JSON Lines file to their first rows,
and one episode opened (issue 31).

Run by hand (not in CI):

    python bench/bench_big_logs.py                       # 1000 MB inputs, made once into --dir
    python bench/bench_big_logs.py --whole               # also the whole read kept (the old open)
    python bench/bench_big_logs.py --peer-python /tmp/peer/bin/python   # and the peers' readers

Inputs come from ``bench/make_big_logs.py`` (real samples copied with their ids varied). Each phase
runs in a fresh subprocess, so its wall time (imports excluded) and peak RSS (``ru_maxrss``) are
its own:

- floor: the bytes read (16 MB at a time), and ``orjson.loads`` over every line;
- ours, first rows: ``sources.open_sources([path], progressive=True)`` as the app opens it
  (detection, the reader's index up to its first 200 rows; the process exits there);
- ours, whole index: ``sources.open_sources([path])``, what the CLI reads (detection, the reader's
  whole index, the EpisodeSet of summaries; the app's first rows before the progressive open);
- ours, one episode: the first and the middle episode opened after that (``EpisodeSet.episode``);
- whole (``--whole``): ``reader.read()`` kept in a list: what opening held before the readers indexed;
- peer (``--peer-python``, an interpreter with the peers installed): claude-code-log's
  ``load_directory_transcripts`` (its own reader of a project folder, no cache) and, for OTLP,
  ``google.protobuf.json_format.Parse`` of each line into opentelemetry-proto's
  ``ExportTraceServiceRequest`` (the reference parse of OTLP/JSON).

Measured on the 2-core development VM shared with other jobs (load average 4-16: ratios to the
floor are the figure to read, the seconds vary several-fold with the load), 1000 MB inputs:

    claude: 911 session files, 407,049 lines                time  peak RSS
      floor: bytes read / orjson every line               0.86s / 4.53s   17 MB
      ours: first rows (open_sources), 2,218 episodes    10.6-11.7s        66 MB   (2.5x orjson)
      ours: one episode (82 and 15 steps)                 0.08s each
      peer: claude-code-log load_directory_transcripts    222s  2,937 MB   (at load 16; ours 77s then)
      before (whole read kept; 20 MB folder, load 16)     8.2s vs 3.1s indexed; 63 vs 43 MB
    otlp: 335,178 lines (one export a line), 87,436 traces
      floor: bytes read / orjson every line               1.56s / 6.99s   15 MB
      ours: first rows (open_sources)                    54-59s           234 MB   (8.5x orjson)
      ours: one episode                                   <0.01s
      peer: protobuf json_format, 20 MB (load 16)        17.7s vs 13.5s ours; 1 GB not finished
      peer: protobuf json_format, first 100 MB (quiet)  24.3s CPU, 18 MB (~4 min a GB); ours: the 1 GB
            file's first rows in tmux 1.7-2.3s, 84 MB (bench_first_rows.py, after the SIMD first pass)
      before (whole read kept; 20 MB file, load 16)       7.0s, 226 MB (~11 GB for 1 GB)

The CPU column (``time.process_time`` of the phase) is the figure to compare across runs on a
loaded machine. OTLP index, 20 MB (6,715 lines, 1,750 episodes), old and new reader alternated in
one process, best of 4: 0.79s -> 0.76s CPU against orjson every line 0.12s (6.3x): a span's kind
and sub-agent are computed once, and pass 1 reads each export line for its trace ids alone
(msgspec, narrow schema: 13x faster than ``orjson.loads`` of the line). What is left is pass 2's
building of every span and each trace's brief trajectory (~0.55s of the 0.76s); the next step is a
summary built from the spans without the step models.

Progressive first rows (issue 31, h-prog2), the same 1000 MB inputs, load 4-5 (CPU is the figure)::

    claude (911 files, 2,218 episodes)              time      CPU   peak RSS
      floor: bytes read / orjson every line      0.30s / 9.16s   0.26s / 3.79s   16-17 MB
      ours: first rows (the app's open)          2.13s    0.85s    45 MB   (whole index before: 10.7s CPU)
      ours: whole index (what the CLI reads)    21.35s   10.67s    65 MB
      in the app, tmux (bench_first_rows.py)     1.6-3.2s          82 MB   (before: 16.8s, 104 MB)
    otlp (335,178 lines, 87,436 traces)
      floor: bytes read / orjson every line      0.60s / 19.8s   0.23s / 5.35s   15-45 MB
      ours: first rows (the app's open)         15.67s    4.33s    97 MB   (other runs: 3.0-5.5s CPU, 99 MB)
      ours: whole index (what the CLI reads)   129.4s    53.95s   222 MB
      in the app, tmux (bench_first_rows.py)     5.6-6.0s         133 MB   (before: 84.5s, 264 MB)

Claude Code's index already yielded a session's summary as soon as its file was read: the app's
progressive open (``sources.IndexingLog``) is all its first rows needed. OTLP's pass 2 now yields
each trace as soon as it and the traces before it are built (the problems after them), and the
lone-``\r`` check is a memchr over 16 MB chunks instead of a line-at-a-time pass, so its first rows
wait for pass 1 alone: 3-5.5s of CPU per GB, under orjson-every-line but not the 3s target (a trace
is complete only once every line has been read for its trace ids; pass 1 is a Python loop over the
lines with a narrow msgspec decode each: 1.7s of the decoder, 1.4s of ``readline``, 1.7s of the
loop's own bookkeeping under the profiler; splitting 16 MB reads instead of ``readline`` was tried:
no faster, 175 MB instead of 99). Left: pass 1 (e.g. msgspec's ``decode_lines`` a chunk at a time,
falling back a line at a time on a bad chunk), and the whole indexes' CPU (pass 2's span
building for OTLP; Claude Code's counting reader, ~0.5s of the first rows' 0.85s in its records'
``add`` and ``TokenUsage`` validation).

OTLP pass 1 as a byte search (issue 31, h-otlp), the same 1000 MB file, load 15-25 (CPU is the figure)::

    otlp (335,178 lines, 87,436 episodes)        time      CPU  peak RSS
      floor: bytes read / orjson every line    0.28s / 7.61s   0.22s / 6.59s   15-45 MB
      ours: first rows (the app's open)        2.32s    1.53s    59 MB   (before: 15.67s, 4.33s CPU, 97 MB)
      index alone to 200 rows, alternated      1.0-1.5s CPU, 50-55 MB  (before: 2.9-5.0s CPU, 92 MB)
      ours: whole index (what the CLI reads)  106.0s   50.45s   202 MB   (pass 2's span building)
      in the app, tmux (bench_first_rows.py)   2.4-4.3s          89 MB   at load 5-6 (before, same minutes: 8.1s,
                                                                          133 MB; a 2-row OTLP file: 1.8s);
                                               4.6-6.2s                  at load 9-10 (before: 13.2-14.6s)

Pass 1 reads 1 MB runs of whole lines and finds each ``"traceId":"`` by StringZilla's SIMD search
(0.07 s/GB to count a needle, where ``bytes.count`` takes 0.65 and an ``re`` pattern starting with
``"`` 1.1-1.6: every byte loop of the standard library ran at ~1 GB/s here), bounding each trace
by the end of the last run naming it; pass 2 builds a trace once read past its bound. What is left
of the first rows' CPU: the per-hit loop (~0.5 s/GB: 480,000 spans), the read (0.2 s) and pass 2
up to 200 rows (~0.2 s).

Claude Code, ``replay-tui formats --json`` (a whole census, one process, load 10-16)::

    1000 MB folder: before 22.5s CPU (57s wall), now 9.2s CPU (23s wall), 51 MB; the same counts
      (2,218 episodes, 105,497 steps, 98,071 calls and results, 1,307 sub-agents)
      floor: orjson every line 5.0s CPU; peer: claude-code-log load_directory_transcripts 222s, 2,937 MB
    98 MB of it: census 2.3 -> 1.5s CPU (39 MB), index 1.4-1.9 -> 1.2-1.5s, orjson 0.49s,
      claude-code-log 3.5s CPU at 337 MB

``formats --json`` counts through the reader's counting read (``base.CountingReader``: the index's
bare steps) instead of the whole read; the index no longer validates each response's usage.
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


def _files(path: Path) -> list[Path]:
    return sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]


def phase(name: str, path: Path) -> dict[str, object]:
    """Run one phase here; what it measured."""
    count: object = 0
    if name == "bytes":
        start, cpu_start = time.perf_counter(), time.process_time()
        for file in _files(path):
            with file.open("rb") as handle:
                while chunk := handle.read(16 << 20):
                    count = int(str(count)) + len(chunk)
    elif name == "orjson":
        import orjson

        start, cpu_start = time.perf_counter(), time.process_time()
        for file in _files(path):
            with file.open("rb") as handle:
                for line in handle:
                    if line.strip():
                        orjson.loads(line)
                        count = int(str(count)) + 1
    elif name in ("first", "open", "load"):
        from replay_tui.sources import open_sources

        start, cpu_start = time.perf_counter(), time.process_time()
        demos = open_sources([path], progressive=name == "first")  # first: the app's open, its first rows
        count = len(demos)
        if name == "load":
            refs = list(demos)
            took = []
            for ref in (refs[0], refs[len(refs) // 2]):
                begin = time.perf_counter()
                episode = demos.trajectory(ref.session_id)
                took.append(f"{time.perf_counter() - begin:.2f}s ({len(episode.steps)} steps)")
            count = ", ".join(took)
    elif name == "whole":
        from replay_tui.formats import detect

        reader, _ = detect(path)
        start, cpu_start = time.perf_counter(), time.process_time()
        kept = list(reader.read(path))
        count = len(kept)
    elif name == "peer-claude":
        from claude_code_log.converter import load_directory_transcripts

        start, cpu_start = time.perf_counter(), time.process_time()
        messages, _ = load_directory_transcripts(path, silent=True)
        count = len(messages)
    elif name == "peer-otlp":
        from google.protobuf import json_format
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        start, cpu_start = time.perf_counter(), time.process_time()
        spans = 0
        with path.open("rb") as handle:
            for line in handle:
                request = json_format.Parse(line, ExportTraceServiceRequest(), ignore_unknown_fields=True)
                spans += sum(len(scope.spans) for rs in request.resource_spans for scope in rs.scope_spans)
        count = spans
    else:
        raise SystemExit(f"unknown phase {name}")
    return {
        "seconds": time.perf_counter() - start,
        "cpu": time.process_time() - cpu_start,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "count": count,
    }


def run(name: str, path: Path, python: str = sys.executable) -> dict[str, object] | None:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    done = subprocess.run(
        [python, __file__, "--phase", name, str(path)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode:
        print(f"  {name}: failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase")
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--dir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "replay_tui_big_logs")
    parser.add_argument("--size-mb", type=int, default=1000)
    parser.add_argument("--whole", action="store_true", help="also time the whole read kept (slow, GBs)")
    parser.add_argument("--peer-python", help="a Python with claude-code-log and opentelemetry-proto installed")
    parser.add_argument("--only", choices=("claude", "otlp"))
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.path)), flush=True)
        if args.phase == "first":
            os._exit(0)  # the index's thread cut at the first rows
        return
    sys.path.insert(0, str(HERE))
    from make_big_logs import claude_project, otlp_lines

    size = args.size_mb * 1_000_000
    args.dir.mkdir(parents=True, exist_ok=True)
    inputs = {
        "claude": claude_project(args.dir / f"claude-project-{args.size_mb}", size),
        "otlp": otlp_lines(args.dir / f"otlp-{args.size_mb}.jsonl", size),
    }
    for kind, path in inputs.items():
        if args.only and kind != args.only:
            continue
        total = sum(file.stat().st_size for file in _files(path))
        print(f"\n{kind}: {path} ({total / 1e6:,.0f} MB)")
        print(f"  {'phase':<44}{'time':>9}{'CPU':>9}{'peak RSS':>10}  count")
        phases = [("floor: bytes read", "bytes"), ("floor: orjson every line", "orjson")]
        phases += [("ours: first rows (the app's open)", "first"), ("ours: whole index (open_sources)", "open")]
        phases += [("ours: + one episode (first, middle)", "load")]
        if args.whole:
            phases.append(("whole read kept (before the index)", "whole"))
        for label, name in phases:
            result = run(name, path)
            if result is not None:
                print(
                    f"  {label:<44}{result['seconds']:>8.2f}s{_cpu(result)}{result['rss_mb']:>7} MB  {result['count']}"
                )
        if args.peer_python:
            label = "peer: claude-code-log load_directory" if kind == "claude" else "peer: protobuf json_format (OTLP)"
            result = run("peer-claude" if kind == "claude" else "peer-otlp", path, args.peer_python)
            if result is not None:
                print(
                    f"  {label:<44}{result['seconds']:>8.2f}s{_cpu(result)}{result['rss_mb']:>7} MB  {result['count']}"
                )


def _cpu(result: dict[str, object]) -> str:
    """The phase's CPU seconds (imports excluded, as for its time): the figure that holds on a loaded machine."""
    return f"{float(str(result.get('cpu', 0))):>8.2f}s"


if __name__ == "__main__":
    main()
