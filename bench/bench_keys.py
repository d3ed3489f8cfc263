"""Benchmark: what a user feels, in a real terminal (tmux), key -> settled screen.

Run by hand (not in CI; needs tmux):

    python bench/bench_keys.py                    # every scenario (generates its data once)
    python bench/bench_keys.py --only enter j     # some scenarios
    python bench/bench_keys.py --size-mb 200      # a smaller "big file" for the launch figure

The app runs in a detached tmux pane (160x48, xterm-256color, truecolor) with an empty runs
directory, so nothing from earlier runs is reopened. ``termdrive.TmuxApp`` polls the screen every
10 ms (text and colours) and a key's time is send-keys -> the last change before the screen stays
quiet for 250 ms; ``changes`` counts the distinct screens seen on the way (repaints). Next to each
figure runs the floor: a minimal Textual app redrawing a list cursor and a text pane per key.

Scenarios (issue 14's table):
  launch  process start -> first screen with rows: the floor app, the app on the bundled example,
          the app on a ~1 GB demo file (``bench/data/bench_<size>mb.json``, as bench_loader makes it);
  enter   ``enter`` on an episode whose step 1 has a 232 KB observation (first open, then re-opens);
  j       ``j``/``k`` through that episode (3 KB and 232 KB steps) and through a small one;
  replay  ``R`` on 5,000 episodes (stub) against the same CLI run; ``j`` in the browser while it runs
          (time until the cursor row moves) and the longest pause of the progress counter.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from termdrive import FLOOR_APP, Press, TmuxApp, installed_bytecode, summary  # noqa: E402

EXAMPLE = ROOT / "replay_tui" / "examples" / "webshop_demonstrations_0-99.json"
APP = [sys.executable, "-m", "replay_tui"]
ROWS = re.compile(r"^\s+\d+ \S", re.M)
BIG_OBS = 232 * 1024


def big_observation_file(data: Path) -> Path:
    """The bundled example, with step 1 of session 0 given a 232 KB search-results observation."""
    path = data / "keys_big_observation.json"
    if path.exists():
        return path
    episodes = json.loads(EXAMPLE.read_text())
    step = next(s for s in episodes[0]["trajectory"] if str(s.get("step_number")) == "1")
    page = step["observation_before_llm"]
    text = page
    n = 0
    while len(text.encode()) < BIG_OBS:
        n += 1
        text += f"\n[button] B0{n:08d} [button_]\nresult {n}: " + page[-400:]
    step["observation_before_llm"] = text[: BIG_OBS - 1]
    path.write_text(json.dumps(episodes))
    return path


def replay_file(data: Path, count: int) -> Path:
    path = data / f"keys_replay_{count}.json"
    if not path.exists():
        from replay_tui.formats.webshop_demos import synth

        synth.write_demo_file(path, start=0, count=count, seed=5)
    return path


def launch_file(data: Path, size_mb: int) -> Path:
    path = data / f"bench_{size_mb}mb.json"
    if not path.exists():
        from replay_tui.formats.webshop_demos import synth

        print(f"generating {path} ({size_mb} MB) ...", flush=True)
        synth.write_demo_file(path, start=0, count=1, seed=7, quirk_rate=0.1, target_bytes=size_mb * 2**20)
    return path


BYTECODE: dict[str, str] = {}
"""Set by main(): the app reads compiled bytecode, as an installed app does (termdrive.installed_bytecode)."""


def env(runs: Path) -> dict[str, str]:
    return {"REPLAY_TUI_RUNS_DIR": str(runs), "PYTHONPATH": str(ROOT), **BYTECODE}


def fmt(label: str, presses: list[Press], floor: list[Press] | None = None, *, first: bool = False) -> str:
    # a key that never changed the screen (within press's timeout) counts as the time waited for it
    settled = [p.settled if p.settled is not None else 30.0 for p in presses]
    med, p95 = summary(settled)
    changes = sorted(p.changes for p in presses)[len(presses) // 2]
    line = f"  {label:<38} median {med:6.1f} ms  p95 {p95:6.1f} ms  repaints {changes}"
    if first:
        fmed, fp95 = summary([p.first if p.first is not None else 30.0 for p in presses])
        line += f"   (first change: median {fmed:.1f} ms, p95 {fp95:.1f} ms)"
    if floor:
        fmed, fp95 = summary([p.settled or 0.0 for p in floor])
        line += f"   | floor {fmed:5.1f}/{fp95:5.1f} ms, p95 ratio {p95 / max(fp95, 1e-9):.1f}x"
    return line


def floor_presses(n: int, runs: Path) -> list[Press]:
    script = runs.parent / "floor_app.py"
    script.write_text(FLOOR_APP)
    app = TmuxApp([sys.executable, str(script)], env=env(runs))
    try:
        app.wait_for(lambda s: "step 0" in s)
        app.settle()
        return [app.press("j" if i % 4 != 3 else "k", expect=True) for i in range(n)]
    finally:
        app.close()


def scenario_launch(data: Path, runs: Path, size_mb: int, repeat: int) -> None:
    print("launch: process start -> first screen with rows (best / median of runs)")
    script = runs.parent / "floor_app.py"
    script.write_text(FLOOR_APP)
    cases = [
        ("floor (minimal Textual app)", [sys.executable, str(script)], lambda s: "step 0" in s),
        ("app, bundled example (100 episodes)", [*APP, str(EXAMPLE)], lambda s: len(ROWS.findall(s)) > 10),
        (f"app, {size_mb} MB demo file", [*APP, str(launch_file(data, size_mb))], lambda s: len(ROWS.findall(s)) > 10),
    ]
    for label, command, ready in cases:
        times = []
        for _ in range(repeat):
            app = TmuxApp(command, env=env(runs))
            try:
                times.append(app.wait_for(ready, timeout=120))
            finally:
                app.close()
        times.sort()
        print(f"  {label:<38} best {times[0]:.2f} s  median {times[len(times) // 2]:.2f} s")


def scenario_enter(data: Path, runs: Path, repeat: int) -> None:
    print("enter: browser -> stepper on the 232 KB-observation episode")
    app = TmuxApp([*APP, str(big_observation_file(data))], env=env(runs))
    try:
        app.wait_for(lambda s: len(ROWS.findall(s)) > 10)
        app.settle()
        first = app.press("enter", expect=True)
        again = []
        for _ in range(repeat):
            app.press("escape", expect=True)
            again.append(app.press("enter", expect=True))
        print(fmt("first open", [first], first=True))
        print(fmt(f"re-open (x{repeat})", again, first=True))
    finally:
        app.close()


def scenario_j(data: Path, runs: Path, presses: int, floor: list[Press]) -> None:
    print("j/k in the stepper, key -> settled frame")
    app = TmuxApp([*APP, str(big_observation_file(data))], env=env(runs))
    try:
        app.wait_for(lambda s: len(ROWS.findall(s)) > 10)
        app.settle()
        app.press("enter", expect=True)
        big: list[Press] = []
        for i in range(presses):  # session 0: steps 0..k, one of them 232 KB
            big.append(app.press("j" if (i // 6) % 2 == 0 else "k", expect=True))
        app.press("escape", expect=True)
        app.press("j", expect=True)  # session 1: small steps
        app.press("enter", expect=True)
        small = [app.press("j" if (i // 3) % 2 == 0 else "k", expect=True) for i in range(presses)]
        print(fmt("episode with a 232 KB step", big, floor))
        print(fmt("episode with 3 KB steps", small, floor))
    finally:
        app.close()


def cursor_background(line: str) -> str | None:
    found = re.findall(r"\x1b\[(?:[\d;]*;)?48;2;(\d+;\d+;\d+)m", line)
    return found[0] if found else None


def cursor_row(screen: str, background: str) -> int | None:
    for i, line in enumerate(screen.splitlines()):
        if f"48;2;{background}m" in line and ROWS.search(re.sub(r"\x1b\[[\d;]*m", "", line)):
            return i
    return None


def scenario_replay(data: Path, runs: Path, count: int) -> None:
    print(f"R: replay all {count:,} episodes (stub), app vs CLI")
    path = replay_file(data, count)
    start = time.perf_counter()
    subprocess.run(
        [*APP, "replay", "--demos", str(path), "--all", "--mode", "stub", "--no-progress", "-q", "--no-save-run"],
        env={**os.environ, **env(runs)},
        capture_output=True,
        check=False,
    )
    cli = time.perf_counter() - start
    app = TmuxApp([*APP, str(path)], env=env(runs))
    try:
        app.wait_for(lambda s: len(ROWS.findall(s)) > 10)
        app.settle()
        screen = app.screen()
        top = next(i for i, line in enumerate(screen.splitlines()) if ROWS.search(re.sub(r"\x1b\[[\d;]*m", "", line)))
        background = cursor_background(screen.splitlines()[top])
        progress = re.compile(r"replaying (\d+)/(\d+)")
        done_re = re.compile(rf"{count} replayed")
        app.send("R")
        started = time.perf_counter()
        samples: list[tuple[float, int]] = []
        moves: list[float] = []
        next_key = started + 0.3
        direction = "j"
        while True:
            now = time.perf_counter()
            text = app.text()
            m = progress.search(text)
            if m:
                samples.append((now - started, int(m.group(1))))
            elif done_re.search(text) and "replaying" not in text:
                break
            if now - started > 300:
                print("  (gave up after 300 s)")
                break
            if background and now >= next_key:
                before = cursor_row(app.screen(), background)
                app.send(direction)
                sent = time.perf_counter()
                while True:  # a key the app never answers counts as the 10 s waited for it
                    screen = app.screen()
                    row = cursor_row(screen, background)
                    waited = time.perf_counter() - sent
                    # the counter is sampled here too: a slow key must not read as a pause of the progress
                    m = progress.search(re.sub(r"\x1b\[[\d;]*m", "", screen))
                    if m:
                        samples.append((time.perf_counter() - started, int(m.group(1))))
                    if (row is not None and row != before) or waited >= 10:
                        moves.append(waited)
                        break
                    time.sleep(0.01)
                direction = "k" if direction == "j" else "j"
                next_key = time.perf_counter() + 0.3
            time.sleep(0.01)
        total = time.perf_counter() - started
        changes = [t for (t, d), (_, before) in zip(samples[1:], samples, strict=False) if d != before]
        longest, where = max(((b - a, a) for a, b in itertools.pairwise([0.0, *changes, total])), default=(0.0, 0.0))
        print(
            f"  CLI {cli:.2f} s (process, incl. imports)   app {total:.2f} s (R -> '{count} replayed')"
            f"   ratio {total / cli:.2f}x"
        )
        if moves:
            med, p95 = summary(moves)
            print(
                f"  j during the replay: median {med:.0f} ms  p95 {p95:.0f} ms"
                f"  max {max(moves) * 1000:.0f} ms ({len(moves)} presses)"
            )
        print(
            f"  progress: {len({d for _, d in samples})} distinct counts seen,"
            f" longest pause between changes {longest * 1000:.0f} ms (from {where:.2f} s)"
        )
    finally:
        app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", choices=["launch", "enter", "j", "replay"])
    parser.add_argument("--size-mb", type=int, default=1024, help="size of the launch benchmark's big file")
    parser.add_argument("--episodes", type=int, default=5000, help="episodes for the replay scenario")
    parser.add_argument("--presses", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not shutil.which("tmux"):
        sys.exit("bench_keys needs tmux")
    only = set(args.only or ["launch", "enter", "j", "replay"])
    BYTECODE.update(installed_bytecode())
    print("the app reads compiled bytecode, as after pip install (PYTHONDONTWRITEBYTECODE unset for it)")
    data = HERE / "data"
    data.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        runs.mkdir()
        if "launch" in only:
            scenario_launch(data, runs, args.size_mb, args.repeat)
        if "enter" in only:
            scenario_enter(data, runs, args.repeat)
        if "j" in only:
            floor = floor_presses(args.presses, runs)
            print(fmt("floor app j/k", floor))
            scenario_j(data, runs, args.presses, floor)
        if "replay" in only:
            scenario_replay(data, runs, args.episodes)


if __name__ == "__main__":
    main()
