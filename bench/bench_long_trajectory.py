"""Benchmark: a long mini-swe-agent trajectory, from the command line to its first step on screen (issue 29).

Run by hand (not in CI), with mini-swe-agent installed in a venv of its own
(``python3 -m venv /tmp/mini && /tmp/mini/bin/pip install mini-swe-agent``):

    python bench/bench_long_trajectory.py --mini-venv /tmp/mini                # 500, 1,000, 2,000 steps
    python bench/bench_long_trajectory.py --mini-venv /tmp/mini --steps 2000 --repeat 3

The trajectories are written once (cached in ``--dir``) by mini's own ``DefaultAgent.run``/``save``
with a deterministic model, through ``gen_mini_traj.py`` of the shared peer benchmarks
(``--generator``). Each app runs in a real terminal (tmux, 160x48, ``termdrive.TmuxApp``):

- mini: ``mini-extra inspector FILE``, until its title shows ``Step 1/``;
- ours: ``replay-tui FILE``, until the session list shows the run, then Enter, until the stepper
  shows step 0 (the time includes the key press; ours opens on the list, mini on the first step).

The peak RSS is the app process's ``VmHWM`` once it has gone idle after showing the step (work
behind the screen counts: before this issue, the app showed the first step, then built every
step's prompt behind it until it ran out of memory). Without ``--mini-venv`` only
ours is measured (the trajectories must then be in ``--dir`` already).

Measured on the 2-core VM (shared: load 1.0-1.3 during the run), best of 2, November 2026,
mini-swe-agent 2.4.6; "before" is main at 14c5a49, where opening the episode converted and
serialised every step's whole prompt (``--code`` on a checkout of it, one run; 2,000 steps not
rerun: it crashed at 14 GB in the issue's measurement):

    steps    file   mini: first step   RSS    ours: first step   RSS     before: first step   RSS
      500   10 MB             0.68 s  65 MB             1.30 s  99 MB                 3.78 s  1011 MB
     1000   21 MB             0.52 s  86 MB             1.37 s 118 MB                 8.85 s  3767 MB
     2000   40 MB             0.68 s 125 MB             1.66 s 175 MB                crashed (14 GB)

Ours includes the app's launch to its session list (about 1 s of it on this machine) and the Enter.

Again after the step's messages became views of the shared messages (``MessageView``, h-long), in
one run with main at e867982 (``--code``), on the same VM under a heavy shared load (load average
13-26: every wall time is several times the quiet one; compare within a row). The core columns
(open + first step without the app, CPU seconds, best of 3) are steadier:

    steps   mini: first step   RSS   ours   RSS   before   RSS   core: ours   RSS   before   RSS
      500             3.54 s  65 MB  7.23 s  95 MB  8.54 s  97 MB      0.13 s  67 MB   0.12 s  67 MB
     1000             3.33 s  85 MB  9.31 s 119 MB  7.59 s 119 MB      0.20 s  98 MB   0.30 s  98 MB
     2000             3.62 s 125 MB  9.66 s 177 MB 11.05 s 178 MB      0.33 s 157 MB   0.41 s 158 MB

The core grows linearly with the steps and is a third of a second at 2,000 (mini's JSON parse and
step building are most of it); the rest of ours is the app's fixed launch. On inspect_ai's
``input_refs`` shape (``tests.hostile.pooled_eval``: event k refers to the first k messages of the
pool), opening and replaying every step: 5,000 events 0.55 s / 80 MB (before: 8.4 s / 203 MB),
20,000 events 2.8 s / 209 MB (before: over 120 s, killed).

Again after the swe-agent reader became an ``IndexingReader`` (issue 31, h-long: the list from an
index of bare steps, the episode built when opened from the document and messages the index parsed
and validated), main at 2204c44 as "before", November 2026, load average 3-11 from other work on
the 2 cores (wall times swing by 2x between runs; the core, CPU seconds, best of 5 alternating
before/after runs, is the figure to read):

    steps   core: open  open+first step   RSS    before: open  open+first step   RSS
      500      0.10 s         0.14 s     68 MB         0.12 s         0.14 s     68 MB
     1000      0.14 s         0.18-0.20 s 99 MB        0.15 s         0.18 s     99 MB
     2000      0.22-0.26 s    0.35-0.41 s 158 MB       0.26-0.27 s    0.32-0.34 s 158 MB

    app, best of 3 (same run)   mini   RSS    ours   RSS   |  before (next run)   RSS
      500                     0.73 s  64 MB  2.06 s  95 MB  |  2.61 s               92 MB
     1000                     0.72 s  85 MB  3.92 s 119 MB  |  4.59 s              119 MB
     2000                     2.08 s 124 MB  2.51 s 178 MB  |  2.22 s              178 MB

One file's first step costs what it did (the parse and the step building moved from the list to
the Enter; still linear in the steps); the list appears a little sooner, and a folder of runs no
longer holds every episode: 12 copies of the 1,000-step run (250 MB) opened to their list in 1.45 s
of CPU holding 128 MB after the open (before: 1.69 s, 241 MB). What the first step costs in a quiet
process (``-X importtime``, cProfile of the app headless, 2,000 steps): importing the app ~0.75 s of
CPU (Textual ~0.3 s, the package's models and engines ~0.45 s, spread over many modules: no single
import to defer; ``replay_tui.tui.app``'s own screens are 0.02 s of it), open ~0.25 s (parse 0.1-0.15,
message validation 0.05), the list's first frame ~0.13 s, Enter to the step ~0.3 s (steps 0.1,
``episode_from_trajectory`` 0.1, the stepper's frame); mini's inspector parses and shows in ~0.4 s
in all. The 1 s target needs the app's fixed launch halved (lazy model building, a first frame
before the engines import), not the reader.

Again after the launch stopped importing what the list and the stepper do not show (issue 29, h-long2k:
the runner, session, compare, export, groups, stats, verify's models, the dialogs and other screens load
when first used; 600 modules instead of 640, 82 of ours instead of 105; ``-X importtime`` self time of
``replay_tui.cli.commands`` + ``replay_tui.tui.app``, best of 5, 0.52 -> 0.44 s: ours 0.19 -> 0.12 s,
Textual and Rich 0.15 s, pydantic 0.06 s, the standard library 0.11 s), main at 7cb9aa7 as "before", the
same run, load average 7-15 on the 2 cores (wall times 2-5x the quiet ones: read the CPU columns, the
app's CPU seconds when the step is shown, best of 3):

    steps   mini  CPU    RSS     ours  CPU    RSS    before  CPU    RSS
      500         0.60 s  64 MB        1.29 s  92 MB          1.54 s  96 MB
     1000         0.56 s  85 MB        1.09 s 116 MB          1.54 s 120 MB
     2000         0.89 s 124 MB        1.25 s 175 MB          1.54 s 179 MB

Headless (``App.run_test``, CPU from the interpreter's start to step 0 after enter, best of 5 alternating
runs): 500 steps 1.00 -> 0.79 s, 2,000 steps 1.12 -> 1.04 s. What is left at 2,000 steps: imports
~0.45 s (Textual and pydantic ~0.2 s of it), the index (parsing the 40 MB once, ~0.25 s), the list's
first frame ~0.08 s, enter to the step ~0.33 s (the episode mapped from the parsed document, its replay
steps, the stepper's frame). A user who looks at the list first no longer pays the parse twice: the
background validation kept nothing, so opening the episode after it read the file again (enter to the
step 0.76 s of CPU, now 0.32 s).

Again after the launch and the stepper's mount kept the cycle collector off what they build (issue 29,
h-long1s: the entry point's import of the full parser and ``run_tui``'s app run with collection paused
and frozen before it is back; a full collection during Textual's import walked every module's objects,
20-45 ms, and ~120 young collections on the way to the list and ~60 more on the way to the step walked
the rest) and ``matching`` stopped importing the typed normalisers (``verify.types``, ``regex``,
``unidecode``, ~40 ms) with the episode model. Main at 896a7e5 as "before", 6 alternating runs each in
tmux on a quiet machine (load 0.5-1), the app's CPU seconds when step 0 is shown and the wall time,
min / median:

    steps   CPU after     before        wall after    before        RSS    mini (best of 3)
      500   0.99 / 1.05   1.12 / 1.31   1.08 / 1.22   1.18 / 1.49   91 MB  0.71 s  64 MB
     1000   1.23 / 1.37   1.28 / 1.40   1.31 / 1.47   1.36 / 1.52  116 MB  0.62 s  85 MB
     2000   1.33 / 1.46   1.39 / 1.59   1.41 / 1.78   1.43 / 1.72  174 MB  0.58 s 124 MB

About a tenth of a second of CPU; the 1 s target at 2,000 steps is not met. What the first step costs
now (headless, CPU): imports ~0.45 s (Textual alone 0.2 s, which mini's inspector pays too; the readers
every sniff needs ~0.07 s; no single module of ours above 0.02 s), the index ~0.2 s (orjson's parse of
the 40 MB 0.1 s, the 4,003 messages validated once 0.05-0.1 s), the list's frame ~0.07 s, enter to the
step ~0.3 s (the episode mapped from the kept document 0.06-0.1 s, its replay steps for the step list
0.05-0.08 s, Textual's push and frame ~0.15 s). Nothing is parsed or validated twice; what is left to halve
is structural (the step list's rows built for the rows shown, the index's count and the episode's
mapping made one pass, Textual's first frames).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from termdrive import TmuxApp, installed_bytecode

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT.parent / "shared" / "peer_bench" / "gen_mini_traj.py"
APP = [sys.executable, "-m", "replay_tui"]
STEP_SHOWN = re.compile(r"step 0 .*bash")
IDLE_LIMIT = 120.0
"""Longest wait for the app to go idle after the step is shown (work behind the screen counts)."""


def pane_pid(app: TmuxApp) -> str:
    return app._tmux("display-message", "-p", "-t", app.name, "#{pane_pid}").strip()


def cpu_seconds(pid: str) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def idle_peak_rss_mb(app: TmuxApp) -> float | None:
    """The app's peak resident memory (``VmHWM``) in MB, once it has stopped working (CPU time still
    for three seconds, or ``IDLE_LIMIT``): what it builds behind the step shown counts too."""
    pid = pane_pid(app)
    deadline = time.perf_counter() + IDLE_LIMIT
    last, still = cpu_seconds(pid), 0
    while time.perf_counter() < deadline and last is not None and still < 3:
        time.sleep(1.0)
        now = cpu_seconds(pid)
        if now is None:
            break
        still = still + 1 if now - last < 0.05 else 0
        last = now
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(found.group(1)) / 1024 if found else None


def trajectory(directory: Path, steps: int, venv: Path | None, generator: Path) -> Path:
    path = directory / f"mini_{steps}.traj.json"
    if path.exists():
        return path
    if venv is None:
        sys.exit(f"{path} is missing: give --mini-venv (a venv with mini-swe-agent) to write it")
    home = Path(tempfile.mkdtemp(prefix="mini-home-"))  # mini reads (and may create) its config under HOME
    subprocess.run(
        [str(venv / "bin" / "python"), str(generator), str(path), str(steps)],
        check=True,
        env={**os.environ, "HOME": str(home), "MSWEA_SILENT_STARTUP": "1"},
        capture_output=True,
    )
    return path


def first_step_mini(venv: Path, path: Path) -> tuple[float, float | None, float | None]:
    home = tempfile.mkdtemp(prefix="mini-home-")
    command = [str(venv / "bin" / "mini-extra"), "inspector", str(path)]
    app = TmuxApp(command, env={"HOME": home, "MSWEA_SILENT_STARTUP": "1"})
    try:
        seconds = app.wait_for(lambda screen: "Step 1/" in screen, timeout=600)
        cpu = cpu_seconds(pane_pid(app))
        return seconds, idle_peak_rss_mb(app), cpu
    finally:
        app.close()


def first_step_ours(path: Path, environment: dict[str, str]) -> tuple[float, float | None, float | None]:
    app = TmuxApp([*APP, str(path)], env=environment)
    try:
        app.wait_for(lambda screen: f" 0 {path.stem.split('.')[0]}" in screen, timeout=600)
        app.send("Enter")
        seconds = app.wait_for(lambda screen: STEP_SHOWN.search(screen) is not None, timeout=600)
        cpu = cpu_seconds(pane_pid(app))
        return seconds, idle_peak_rss_mb(app), cpu
    finally:
        app.close()


CORE = """
import resource, sys, time
from replay_tui.env import replay_steps
from replay_tui.sources import open_sources
start = time.process_time()
demos = open_sources([sys.argv[1]])
steps = replay_steps(demos.trajectory(demos.session_ids[0]))
assert steps[0].recorded["messages"]
print(time.process_time() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def core(path: Path, environment: dict[str, str]) -> tuple[float, float]:
    """Opening the run and its first step in a fresh process (``open_sources``, the episode, the
    first step's prompt), without the app: CPU seconds (steadier than wall time on a shared machine)
    and peak RSS in MB. What grows with the steps, apart from the app's fixed launch."""
    done = subprocess.run(
        [sys.executable, "-c", CORE, str(path)], env={**os.environ, **environment}, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(done.stderr[-2000:])
    seconds, rss = done.stdout.split()
    return float(seconds), float(rss)


def _best(runs: list[tuple[float, float | None, float | None]]) -> tuple[str, str, str]:
    """The fastest run's wall time and peak RSS, and the least CPU time of the runs, as cells."""
    seconds, rss, _ = min(runs, key=lambda run: run[0])
    cpus = [run[2] for run in runs if run[2] is not None]
    return f"{seconds:.2f} s", f"{rss:.0f} MB" if rss else "?", f"{min(cpus):.2f} s" if cpus else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--mini-venv", type=Path, help="a venv with mini-swe-agent (its inspector, its writer)")
    parser.add_argument("--generator", type=Path, default=GENERATOR, help="gen_mini_traj.py of the peer benchmarks")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "replay_tui_bench")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each app per size (the best is printed)")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout of replay_tui to run (e.g. an older one)")
    parser.add_argument("--skip-mini", action="store_true", help="measure ours only (mini still writes the files)")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    os.chdir(args.code)  # ``python -m`` puts the working directory first on the path
    scratch = Path(tempfile.mkdtemp(prefix="replay-bench-"))
    environment = {
        "HOME": str(scratch),
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "XDG_CACHE_HOME": str(scratch / "cache"),
        "PYTHONPATH": str(args.code),
        **installed_bytecode(),
    }
    print("first step on screen (process start -> step shown, best of runs), the app's CPU seconds when it")
    print("is shown (steadier than wall time on a shared machine) and its peak RSS;")
    print("core: open + first step without the app (CPU seconds, peak RSS)")
    print(
        f"  {'steps':>6} {'file':>7}   {'mini':>8} {'CPU':>7} {'RSS':>8}   {'ours':>8} {'CPU':>7} {'RSS':>8}"
        f"   {'core':>8} {'RSS':>8}"
    )
    for steps in args.steps:
        path = trajectory(args.dir, steps, args.mini_venv, args.generator)
        size = f"{path.stat().st_size / 1e6:.0f} MB"
        mini = "—", "—", "—"
        if args.mini_venv is not None and not args.skip_mini:
            mini = _best([first_step_mini(args.mini_venv, path) for _ in range(args.repeat)])
        ours = _best([first_step_ours(path, environment) for _ in range(args.repeat)])
        cpu, peak = min((core(path, environment) for _ in range(args.repeat)), key=lambda run: run[0])
        print(
            f"  {steps:>6} {size:>7}   {mini[0]:>8} {mini[2]:>7} {mini[1]:>8}   {ours[0]:>8} {ours[2]:>7} {ours[1]:>8}"
            f"   {cpu:>6.2f} s {peak:>5.0f} MB",
            flush=True,
        )


if __name__ == "__main__":
    main()
