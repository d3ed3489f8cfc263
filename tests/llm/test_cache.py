"""The SQLite response cache (one file, one writer thread, several processes), its migration from the
file-per-request cache, and cassettes streamed to disk as they grow."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from replay_tui.policies.cache import Cassette, CassetteError, FileCache, request_key
from replay_tui.policies.llm import LlmPolicy
from replay_tui.policies.llm_cache import DB_NAME, MAX_ENTRY_BYTES, CacheError, ResponseCache
from tests import forked
from tests.llm.scripted import ScriptedServer, tool_reply

PROMPT = repr([{"role": "system", "content": "You shop."}, {"role": "user", "content": "Page 1 of results"}])
ROOT = Path(__file__).resolve().parents[2]


def ask(policy, page="1"):
    prompt = repr([{"role": "user", "content": f"Page {page} of results"}])
    return policy.predict_action("obs", "Result", ["select_item", "Next", "Back_to_Search"], prompt)


def ask_pages(server, cache_dir, pages):
    """Ask for ``pages`` result pages through a policy with its cache in ``cache_dir``, then close it."""
    with LlmPolicy(model="M", base_url=server.url, cache_dir=str(cache_dir), retries=0) as policy:
        for page in range(pages):
            ask(policy, str(page))


def entry(n):
    return {"outcome": "response", "response": {"n": n}, "latency_ms": 1.0, "attempts": 1}


def test_a_replay_writes_one_sqlite_file_and_a_new_process_reads_it(tmp_path):
    cache_dir = tmp_path / "cache"
    with ScriptedServer(lambda body: tool_reply("Next", {})) as server:
        ask_pages(server, cache_dir, 5)
        assert len(server.requests) == 5
        assert sorted(p.name for p in cache_dir.iterdir() if not p.name.endswith(("-wal", "-shm"))) == [DB_NAME]
        # a fresh interpreter sees every entry: they were committed, not only held by this process
        script = (
            f"from replay_tui.policies.llm_cache import ResponseCache; print(len(ResponseCache({str(cache_dir)!r})))"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
        assert done.stdout.strip() == "5"
        with LlmPolicy(model="M", base_url=server.url, cache_dir=str(cache_dir), retries=0) as again:
            ask(again, "3")
            assert again.last_trace["cache"] == "hit"
        assert len(server.requests) == 5


def test_puts_are_seen_at_once_and_committed_in_batches(tmp_path):
    cache = ResponseCache(tmp_path)
    for n in range(300):
        cache.put(request_key({"n": n}), entry(n))
    assert cache.get(request_key({"n": 299})) == entry(299)  # before or after the commit, the same answer
    other = ResponseCache(tmp_path)  # another handle of the same file in this process shares the writer
    assert other.get(request_key({"n": 0})) == entry(0)
    cache.flush()
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        assert db.execute("SELECT COUNT(*) FROM entries").fetchone() == (300,)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    cache.put("big", {"outcome": "response", "response": {"text": "x" * MAX_ENTRY_BYTES}})
    assert cache.get("big") is None and len(cache) == 300
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute("INSERT INTO entries VALUES ('broken', x'7b6e6f74')")
        db.execute("INSERT INTO entries VALUES ('odd', ?)", (orjson.dumps({"outcome": "maybe"}),))
    assert cache.get("broken") is None and cache.get("odd") is None


def test_a_write_that_fails_is_reported_and_never_hangs_the_run(tmp_path):
    cache = ResponseCache(tmp_path)
    (tmp_path / DB_NAME).unlink()
    (tmp_path / DB_NAME).mkdir()  # the writer cannot open its file
    cache.put(request_key({"n": 1}), entry(1))
    cache.flush()  # returns: the entry is dropped, the error kept
    assert cache.write_error is not None and DB_NAME in cache.write_error


def test_an_unusable_cache_directory_is_a_one_line_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(CacheError, match="cannot open the response cache"):
        ResponseCache(blocker / "cache")


def test_the_file_per_request_cache_is_migrated_on_first_open(tmp_path):
    live = tmp_path / "live"
    with ScriptedServer(lambda body: tool_reply("Next", {})) as server:
        ask_pages(server, live, 3)
        # the same answers in the previous layout, as an older replay-tui left them
        old = FileCache(tmp_path / "old")
        source = ResponseCache(live)
        for key in source:
            old.put(key, source.get(key))
        (tmp_path / "old" / "ab").mkdir(exist_ok=True)  # a real key may start with ab
        (tmp_path / "old" / "ab" / ("ab" + "0" * 62 + ".json")).write_text("{truncated")
        assert len(old) == 4

        migrated = ResponseCache(tmp_path / "old")
        assert migrated.migrated == 3 and len(migrated) == 3  # the corrupt file is a miss, as it always was
        assert ResponseCache(tmp_path / "old").migrated == 0  # once
        server.reset()
        with LlmPolicy(model="M", base_url=server.url, cache_dir=str(tmp_path / "old"), retries=0) as policy:
            for page in range(3):
                assert ask(policy, str(page)) == "click[Next >]"
                assert policy.last_trace["cache"] == "hit"
        assert server.requests == []


def test_several_processes_write_one_cache_at_once(tmp_path):
    """Four processes of their own at once (forked from the worker's fork server, ``tests/forked.py``: the
    writers' concurrency is under test, not the interpreter's start)."""
    workers, count = 4, 250
    procs = [
        forked.start(forked.cache_writer, str(tmp_path), str(w), str(count), cwd=tmp_path, env=dict(os.environ))
        for w in range(workers)
    ]
    for proc in procs:
        proc.process.join(120)  # a hang guard, not a timing
        if proc.process.exitcode is None:
            proc.kill()
        assert proc.process.exitcode == 0, proc.err.read_text()
        proc.close()
    cache = ResponseCache(tmp_path)
    assert len(cache) == workers * count + count
    for w in range(workers):
        for n in (0, count // 2, count - 1):
            assert cache.get(request_key({"worker": w, "n": n}))["response"] == {"w": w, "n": n}
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_cassette_is_on_disk_while_the_run_goes_on(tmp_path):
    path = tmp_path / "run.cassette.jsonl"
    with ScriptedServer(lambda body: tool_reply("Next", {})) as server:
        policy = LlmPolicy(model="M", base_url=server.url, cache=False, retries=0, record=str(path))
        ask(policy, "1")
        # before close(): already written and flushed, to a temporary file beside the cassette (the
        # cassette's own path is replaced only when the run ends: a recording never truncates a file)
        assert not path.exists()
        [temp] = tmp_path.glob(".run.cassette.jsonl.*.tmp")
        lines = temp.read_text().splitlines()
        assert len(lines) == 2 and json.loads(lines[0])["format"] == "replay-tui-llm-cassette"
        assert json.loads(lines[1])["key"] == policy.last_trace["key"]
        ask(policy, "2")
        ask(policy, "1")  # the same request again is not written twice
        assert len(temp.read_text().splitlines()) == 3 and len(policy.cassette) == 2
        assert policy.cassette.entries == {}  # nothing kept in memory
        policy.close()
    assert not temp.exists() and len(path.read_text().splitlines()) == 3
    # a recording killed mid-line keeps every complete line
    with path.open("ab") as handle:
        handle.write(b'{"entry": {"outc')
    replay = LlmPolicy(replay=str(path))
    assert len(replay.cassette) == 2 and ask(replay, "2") == "click[Next >]"


def test_bad_cassette_lines_are_named_and_version_1_still_replays(tmp_path):
    good = json.dumps({"key": "k", "entry": entry(1)})
    header = json.dumps({"format": "replay-tui-llm-cassette", "version": 2, "model": "M"})
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([header, good, "{nope", good]) + "\n")
    with pytest.raises(CassetteError, match=r"line 3: not JSON"):
        Cassette.load(bad)
    bad.write_text("\n".join([header, good, json.dumps({"key": 1})]) + "\n")
    with pytest.raises(CassetteError, match=r"line 3: not a cassette entry"):
        Cassette.load(bad)
    old = tmp_path / "v1.json"
    old.write_text(
        json.dumps(
            {"format": "replay-tui-llm-cassette", "version": 1, "model": "M", "entries": {"k": entry(2)}}, indent=2
        )
    )
    loaded = Cassette.load(old)
    assert loaded.model == "M" and loaded.get("k") == entry(2)
