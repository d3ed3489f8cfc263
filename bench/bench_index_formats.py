"""Benchmark: the readers that index since issue 31 (OpenHands, tau2, WebShop human sessions, ATIF,
BrowserGym), a big log of each to its first rows, before (the whole read kept) and after (the index).

Run by hand (not in CI):

    python bench/bench_index_formats.py                    # inputs made once into --dir
    python bench/bench_index_formats.py --size-mb 1000     # the JSON/JSONL ones at ~1 GB
    python bench/bench_index_formats.py --only openhands

Inputs are real samples under ``tests/data/formats/`` repeated with their ids varied (the style of
``bench/make_big_logs.py``):

- openhands: an evaluation ``output.jsonl`` (one instance a line), the Multi-SWE-bench example lines
  with ``instance_id`` varied;
- tau2: one monolithic results file, the telecom sample's runs repeated with ``id`` and ``trial`` varied;
- webshop-human: one JSON Lines file of the AgentGym sessions one after another;
- atif: a Harbor job folder, ``trial-N/agent/trajectory.json`` with its three sub-agent files each;
- browsergym: a study folder of experiment folders read with their step pickles (``--allow-pickle``).

Each phase runs in a fresh subprocess, so its wall time (imports excluded) and peak RSS
(``ru_maxrss``) are its own: floor (the bytes read), before (``read()`` kept, what opening held
before these readers indexed: ``TrajectoryFile`` over a reader without ``index``), after
(``open_sources``, as the app opens it), and one episode (the middle one opened after that).

Measured on the 2-core development VM while other jobs ran (load average 17-30: the seconds are
several times what a quiet machine takes and vary run to run; the memory does not), ``--size-mb 100
--before-code`` (the package before this change) and, for browsergym, this tree's read as before:

    kind            input                           before (whole read kept)   after: first rows   one episode
    openhands       output.jsonl, 435 instances     12.7 s   553 MB            5.6 s    44 MB      0.03 s
    tau2            results.json, 2,595 runs        51.1 s   558 MB            27.4 s  138 MB*     0.01 s
    webshop-human   all_trajs.jsonl, 20,311 sess.   51.6 s   689 MB            40.4 s   71 MB      0.00 s
    atif            job folder, 4,552 trajectories   4.1 s   570 MB             5.8 s   61 MB      0.01 s
    browsergym      study, 4,649 exps (pickles)    119.5 s   253 MB           116.0 s  105 MB      0.04 s
    (* about 100 MB of it the file's mapped pages, shared and dropped under pressure)

The time to the first rows is that of a whole read (each reader builds an episode to count it, then
drops it); what changes is that no episode is kept: memory stays flat as the log grows. tau2's index
splits every results file (not only those over 64 MB): its bracket scan was made 5x faster for it
(20 MB: 3.0 s -> 0.55 s, beside orjson's 0.31 s for the whole file).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data" / "formats"
KINDS = ("openhands", "tau2", "webshop-human", "atif", "browsergym")


def openhands_output(path: Path, size: int) -> Path:
    lines = [
        orjson.loads(line)
        for line in (DATA / "openhands" / "multi_swe_bench__examples__output.jsonl").read_bytes().splitlines()
        if line.strip()
    ]
    with path.open("wb") as out:
        written = copy = 0
        while written < size:
            for line in lines:
                data = orjson.dumps({**line, "instance_id": f"{line['instance_id']}-{copy}"}) + b"\n"
                out.write(data)
                written += len(data)
            copy += 1
    return path


def tau2_results(path: Path, size: int) -> Path:
    sample = DATA / "tau2" / "2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json"
    data = orjson.loads(sample.read_bytes())
    runs = data.pop("simulations")
    each = sum(len(orjson.dumps(run)) for run in runs) / len(runs)
    copies = max(1, int(size / each / len(runs)))
    data["simulations"] = [
        {**run, "id": f"{run['id']}-{copy}", "trial": copy * 1000 + (run.get("trial") or 0)}
        for copy in range(copies)
        for run in runs
    ]
    path.write_bytes(orjson.dumps(data))
    return path


def webshop_sessions(path: Path, size: int) -> Path:
    sessions = [p.read_bytes() for p in sorted((DATA / "webshop_human").glob("*.jsonl"))]
    with path.open("wb") as out:
        written = copy = 0
        while written < size:
            out.write(sessions[copy % len(sessions)])
            written += len(sessions[copy % len(sessions)])
            copy += 1
    return path


def atif_job(folder: Path, size: int) -> Path:
    name = "terminus_2__hello-world-context-summarization.trajectory"
    main = (DATA / "atif" / f"{name}.json").read_bytes()
    subs = {
        p.name.replace(f"{name.split('.')[0]}.", ""): p.read_bytes()
        for p in (DATA / "atif").glob(f"{name}.summarization-*.json")
    }
    session = orjson.loads(main)["session_id"].encode()
    written = copy = 0
    while written < size:
        agent = folder / f"trial-{copy:06d}" / "agent"
        agent.mkdir(parents=True)
        new = f"{session.decode()}-{copy}".encode()
        for file, data in {"trajectory.json": main, **subs}.items():
            (agent / file).write_bytes(data.replace(session, new))
            written += len(data)
        copy += 1
    return folder


def browsergym_study(folder: Path, size: int) -> Path:
    experiments = sorted(p for p in (DATA / "browsergym").iterdir() if p.is_dir())
    written = copy = 0
    while written < size:
        sample = experiments[copy % len(experiments)]
        shutil.copytree(sample, folder / f"{sample.name}_{copy:06d}")
        written += sum(p.stat().st_size for p in sample.iterdir())
        copy += 1
    return folder


MAKERS = {
    "openhands": ("output.jsonl", openhands_output),
    "tau2": ("results.json", tau2_results),
    "webshop-human": ("all_trajs.jsonl", webshop_sessions),
    "atif": ("job", atif_job),
    "browsergym": ("study", browsergym_study),
}


def make(kind: str, root: Path, size: int) -> Path:
    """The big input of ``kind`` (kept when it is already there)."""
    name, maker = MAKERS[kind]
    place = root / f"{kind}-{size // 1_000_000}"
    done = place / ".complete"
    if done.exists():
        return place / name
    shutil.rmtree(place, ignore_errors=True)
    place.mkdir(parents=True)
    target = place / name
    if not target.suffix:
        target.mkdir()
    maker(target, size)
    done.write_text("done\n")
    return target


def _files(path: Path) -> Iterator[Path]:
    return (p for p in path.rglob("*") if p.is_file()) if path.is_dir() else iter([path])


class _WholeRead:
    """A reader without ``index``: ``TrajectoryFile`` keeps its whole read (the open before)."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.name, self.label, self.description = reader.name, reader.label, reader.description

    def sniff(self, path: Path, head: bytes) -> Any:
        return self.reader.sniff(path, head)

    def read(self, path: Path) -> Any:
        return self.reader.read(path)


def phase(name: str, kind: str, path: Path) -> dict[str, object]:
    """Run one phase here; what it measured."""
    count: object = 0
    pickles = kind == "browsergym"
    if name == "bytes":
        start = time.perf_counter()
        total = 0
        for file in _files(path):
            total += len(file.read_bytes())
        count = f"{total / 1e6:,.0f} MB"
    elif name == "before":
        from replay_tui.formats import reader_for
        from replay_tui.sources import TrajectoryFile

        reader = reader_for(kind)
        reader = reader.allowing_pickles() if pickles else reader  # type: ignore[attr-defined]
        start = time.perf_counter()
        held = TrajectoryFile(path, _WholeRead(reader))
        count = f"{len(held.episodes):,} episodes, {sum(ref.decision_steps for ref in held.episodes):,} calls"
    elif name in ("after", "load"):
        from replay_tui.formats import reader_for
        from replay_tui.sources import open_sources

        reader_for(kind)  # its module imported before the clock starts, as for "before"
        start = time.perf_counter()
        demos = open_sources([path], fmt=kind, allow_pickle=pickles)
        refs = list(demos)
        count = f"{len(refs):,} episodes, {sum(ref.decision_steps for ref in refs):,} calls"
        if name == "load":
            start = time.perf_counter()
            episode = demos.trajectory(refs[len(refs) // 2].session_id)
            count = f"{len(episode.steps)} steps"
    else:
        raise SystemExit(f"unknown phase {name}")
    return {"seconds": time.perf_counter() - start, "rss_mb": _peak_mb(), "count": count}


def _peak_mb() -> int:
    """This process's peak RSS since its exec (``VmHWM``; ``ru_maxrss`` would count the pages of the
    parent that made the inputs, as Linux keeps it across fork and exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def run(name: str, kind: str, path: Path, code: Path = HERE.parent) -> dict[str, object] | None:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, __file__, "--phase", name, "--only", kind, str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
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
    parser.add_argument("--dir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "replay_tui_index_formats")
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--only", choices=KINDS)
    parser.add_argument(
        "--before-code",
        type=Path,
        help="a tree with the package before the readers indexed (git archive OLD replay_tui | tar -x -C DIR): "
        "'before' then runs that code's read() (else this tree's)",
    )
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.only, args.path)))
        return
    for kind in KINDS:
        if args.only and kind != args.only:
            continue
        path = make(kind, args.dir, args.size_mb * 1_000_000)
        print(f"\n{kind}: {path}")
        print(f"  {'phase':<36}{'time':>9}{'peak RSS':>10}  count")
        for label, name in (
            ("floor: bytes read", "bytes"),
            ("before: whole read kept", "before"),
            ("after: first rows (open_sources)", "after"),
            ("after: one episode (the middle)", "load"),
        ):
            result = run(name, kind, path, args.before_code if name == "before" and args.before_code else HERE.parent)
            if result is not None:
                print(f"  {label:<36}{result['seconds']:>8.2f}s{result['rss_mb']:>7} MB  {result['count']}")


if __name__ == "__main__":
    main()
