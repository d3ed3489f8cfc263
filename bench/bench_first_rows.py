"""Benchmark: a big log to its first rows in the app, in a real terminal (issue 31).

Run by hand (not in CI)::

    python bench/bench_first_rows.py /tmp/evalbench/inspect_100000_zstd.eval /tmp/bigidx/claude-project-1000
    python bench/bench_first_rows.py --ours /tmp/before LOG...   # another checkout (``git archive``)

Each log opens in ``replay-tui LOG`` in a tmux pane of 160x48 (``termdrive.TmuxApp``); the times are
from the session's start (interpreter start and imports included, as a user waits for them):

- first rows: the browser's title shows its first episodes (``replay-tui N/N episodes``, N > 0), with
  the app's peak RSS (``VmHWM``) at that moment;
- index done: the status line says ``index done`` (the progressive open), or, for a checkout before
  it, the first rows (it indexed the whole log before its first frame), with the peak RSS then.

Figures: see ``bench_eval_index.py`` and ``bench_big_logs.py`` (the readers alone, beside the peers
and the floor) and the README.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from termdrive import TmuxApp

ROOT = Path(__file__).resolve().parents[1]
TITLE = re.compile(r"replay-tui ([\d,]+)/([\d,]+) episodes")


def peak_rss_mb(app: TmuxApp) -> float | None:
    pid = app._tmux("display-message", "-p", "-t", app.name, "#{pane_pid}").strip()
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def rows_shown(screen: str) -> bool:
    found = TITLE.search(screen)
    return found is not None and int(found.group(1).replace(",", "")) > 0


def measure(log: Path, ours: Path, timeout: float, first_only: bool = False) -> str:
    home = tempfile.mkdtemp(prefix="first-rows-home-")
    # bytecode compiled as an installed app's is (termdrive.installed_bytecode, for any checkout)
    env = {"HOME": home, "PYTHONPATH": str(ours), "PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": ""}
    app = TmuxApp([sys.executable, "-P", "-m", "replay_tui", str(log)], env=env)  # -P: the checkout, not the cwd
    try:
        first = app.wait_for(rows_shown, timeout=timeout)
        first_rss = peak_rss_mb(app)
        shown = TITLE.search(app.text())
        progressive = "indexing:" in app.text() or "index done" in app.text()
        rows = shown.group(1) if shown else "?"
        if first_only:
            return f"{log.name}: first rows {first:.2f}s ({rows} rows, peak {first_rss:.0f} MB)"
        done = app.wait_for(lambda s: "index done" in s, timeout=timeout) if progressive else first
        done_rss = peak_rss_mb(app)
        total = TITLE.search(app.text())
        return (
            f"{log.name}: first rows {first:.2f}s ({rows} rows, peak {first_rss:.0f} MB); "
            f"index done {done:.2f}s ({total.group(2) if total else '?'} episodes, peak {done_rss:.0f} MB)"
        )
    finally:
        app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path)
    parser.add_argument("--ours", type=Path, default=ROOT, help="the checkout whose replay_tui is measured")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--first-only", action="store_true", help="stop at the first rows")
    args = parser.parse_args()
    compileall.compile_dir(str(args.ours.resolve() / "replay_tui"), quiet=1)
    for log in args.logs:
        print(measure(log.resolve(), args.ours.resolve(), args.timeout, args.first_only), flush=True)
        time.sleep(1)


if __name__ == "__main__":
    main()
