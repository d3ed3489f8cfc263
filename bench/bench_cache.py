"""Benchmark: the SQLite response cache against the file-per-request cache it replaced (issue 18).

Run by hand (not in CI), on a quiet machine:

    python bench/bench_cache.py                  # 100k entries (the issue's figure)
    python bench/bench_cache.py --entries 2000   # a smoke run

Both caches get the same ``--entries`` entries (a realistic chat-completion answer plus its
request, ~3 KB of JSON each, under endpoint-scoped SHA-256 keys) in a fresh temporary folder:

- writes: every ``put`` from ``--writers`` threads (as ``--jobs`` workers put), then what makes
  them durable (the SQLite writer's last commit; each file write is already renamed into place);
  entries per second;
- lookups: ``--lookups`` random ``get`` calls of existing keys from one fresh handle (cold: the
  OS page cache holds both, as it would after the run that wrote them), mean microseconds per hit,
  and as many of missing keys;
- size on disk and files made.

Prints each figure and the ratios ``sqlite / files`` (writes/s: higher is better; lookup time:
lower is better). Nothing here is asserted: the numbers depend on the disk and the load.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from replay_tui.policies.cache import FileCache, request_key
from replay_tui.policies.llm_cache import ResponseCache


def make_entry(n: int) -> dict[str, Any]:
    """An entry the size of a real one: the request (system prompt, observation, tools) and the answer."""
    observation = f"Page 1 (Total results: 50) [SEP] Next > [SEP] B0{n:08d} [SEP] " + "product title words " * 60
    request = {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a shopping agent. " * 20},
            {"role": "user", "content": observation},
        ],
        "tools": [{"type": "function", "function": {"name": name, "parameters": {}}} for name in ("Search", "Next")],
        "tool_choice": "required",
        "temperature": 0.0,
    }
    call = {"id": "call_0", "type": "function", "function": {"name": "select_item", "arguments": '{"item_id": "B0"}'}}
    response = {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "tool_calls": [call]}, "finish_reason": "tool_calls"}
        ],
        "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920},
    }
    return {"outcome": "response", "response": response, "latency_ms": 812.5, "attempts": 1, "request": request}


def key_of(n: int) -> str:
    return request_key({"endpoint": "https://api.openai.com/v1", "request": hashlib.sha256(b"%d" % n).hexdigest()})


def disk_usage(folder: Path) -> tuple[int, int]:
    total = files = 0
    for root, _, names in os.walk(folder):
        for name in names:
            total += os.path.getsize(os.path.join(root, name))
            files += 1
    return total, files


def write_all(cache: Any, entries: list[tuple[str, dict[str, Any]]], writers: int) -> float:
    """Seconds to put every entry from ``writers`` threads and make it durable."""
    chunks = [entries[i::writers] for i in range(writers)]

    def work(chunk: list[tuple[str, dict[str, Any]]]) -> None:
        for key, entry in chunk:
            cache.put(key, entry)

    started = time.perf_counter()
    threads = [threading.Thread(target=work, args=(chunk,)) for chunk in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    flush = getattr(cache, "flush", None)
    if callable(flush):
        flush()
    return time.perf_counter() - started


def lookups(cache: Any, keys: list[str]) -> float:
    """Mean seconds per ``get``."""
    started = time.perf_counter()
    for key in keys:
        cache.get(key)
    return (time.perf_counter() - started) / len(keys)


def bench(
    kind: str, folder: Path, entries: list[tuple[str, dict[str, Any]]], args: argparse.Namespace
) -> dict[str, float]:
    cache: Any = ResponseCache(folder) if kind == "sqlite" else FileCache(folder)
    seconds = write_all(cache, entries, args.writers)
    rng = random.Random(1)
    hits = [entries[rng.randrange(len(entries))][0] for _ in range(args.lookups)]
    misses = [key_of(len(entries) + n) for n in range(args.lookups)]
    reader: Any = ResponseCache(folder) if kind == "sqlite" else FileCache(folder)
    hit = lookups(reader, hits)
    miss = lookups(reader, misses)
    size, files = disk_usage(folder)
    return {
        "writes_per_s": len(entries) / seconds,
        "hit_us": hit * 1e6,
        "miss_us": miss * 1e6,
        "mb": size / 1e6,
        "files": files,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--writers", type=int, default=8, help="threads putting entries (default 8)")
    parser.add_argument("--lookups", type=int, default=20_000)
    parser.add_argument("--dir", type=Path, default=None, help="where the temporary caches go (default $TMPDIR)")
    args = parser.parse_args()
    args.lookups = min(args.lookups, args.entries)
    entries = [(key_of(n), make_entry(n)) for n in range(args.entries)]
    print(f"{args.entries:,} entries of ~{len(str(entries[0][1])) / 1000:.1f} KB, {args.writers} writer threads")
    results = {}
    for kind in ("files", "sqlite"):
        folder = Path(tempfile.mkdtemp(prefix=f"bench_cache_{kind}_", dir=args.dir))
        try:
            results[kind] = bench(kind, folder, entries, args)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        r = results[kind]
        print(
            f"  {kind:<7} {r['writes_per_s']:>10,.0f} writes/s  {r['hit_us']:>8.1f} µs/hit  "
            f"{r['miss_us']:>8.1f} µs/miss  {r['mb']:>8.1f} MB in {r['files']:,} files"
        )
    files, sqlite = results["files"], results["sqlite"]
    print(
        f"sqlite / files: writes/s {sqlite['writes_per_s'] / files['writes_per_s']:.1f}x, "
        f"lookup time {sqlite['hit_us'] / files['hit_us']:.2f}x (hits), "
        f"{sqlite['miss_us'] / files['miss_us']:.2f}x (misses), "
        f"files {sqlite['files']:,} vs {files['files']:,}"
    )


if __name__ == "__main__":
    main()
