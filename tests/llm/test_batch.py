"""Batch inference: ``batch export`` → a results file → ``batch import`` → a replay on cache hits alone,
whose report is byte-identical to the same run served live by the scripted server."""

import json
import socket

import pytest

from replay_tui.batch import KEY_PATTERN
from replay_tui.cli import main
from replay_tui.examples import example_path
from replay_tui.policies.llm_cache import ResponseCache
from tests.llm.scripted import Oracle, tool_reply

BUNDLED = str(example_path())
SESSIONS = "0-2,4-6,9-10"


def deviate(oracle):
    """Answers that are wrong in several ways, all of them HTTP 200 (what a batch returns)."""
    oracle.overrides.update(
        {
            (0, "2"): tool_reply("select_item", {"item_id": "B0LGSS1NIJ"}),  # a different item: mismatch
            (1, "1"): tool_reply(None, content="B0SE3DDUJM looks right."),  # no_tool_call
            (2, "0"): tool_reply("Checkout", {}),  # unknown_tool
            (4, "3"): tool_reply("Next", '{"page": '),  # invalid_arguments
        }
    )


def closed_port_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def llm_args(base_url, cache_dir, *extra):
    return [
        "--demos",
        BUNDLED,
        "--sessions",
        SESSIONS,
        "--item-steps",
        "--mode",
        "llm",
        "--base-url",
        base_url,
        "--model",
        "M",
        "--cache-dir",
        str(cache_dir),
        "--retries",
        "0",
        "--timeout",
        "5",
        *extra,
    ]


def results_for(requests_path, oracle, *, run_batch=False):
    """The Batch output a server answering like ``oracle`` would give for the exported requests."""
    lines = []
    for n, line in enumerate(requests_path.read_text().splitlines()):
        request = json.loads(line)
        reply = oracle(request["body"])
        response = {"status_code": reply.status, "body": reply.body}
        if run_batch:  # vllm run-batch adds a request id to the same shape
            response["request_id"] = f"vllm-batch-{n}"
        lines.append(
            json.dumps({"id": f"batch_req_{n}", "custom_id": request["custom_id"], "response": response, "error": None})
        )
    return lines


def test_export_results_import_then_replay_without_network_gives_the_live_report(
    server, oracle, bundled_calls, tmp_path, capsys
):
    offline = closed_port_url()
    requests_path = tmp_path / "requests.jsonl"
    assert main(["batch", "export", *llm_args(offline, tmp_path / "unused"), "--out", str(requests_path)]) == 0
    out = capsys.readouterr().out
    assert "written to" in out and offline in out
    requests = [json.loads(line) for line in requests_path.read_text().splitlines()]
    assert requests and all(
        r["method"] == "POST" and r["url"] == "/v1/chat/completions" and KEY_PATTERN.fullmatch(r["custom_id"])
        for r in requests
    )
    assert len({r["custom_id"] for r in requests}) == len(requests)
    assert requests[0]["body"]["model"] == "M" and requests[0]["body"]["tool_choice"] == "required"
    assert not (tmp_path / "unused").exists()  # the export neither asks nor caches

    # the live run, served by the scripted server
    deviate(oracle)
    live = tmp_path / "live.json"
    assert main(["replay", *llm_args(server.url, tmp_path / "live-cache"), "--report", str(live)]) == 1
    assert server.requests and all(body in [r["body"] for r in requests] for body in server.requests)

    # the same answers through a batch: a results file built from a fresh oracle's answers
    batch_oracle = Oracle(bundled_calls)
    deviate(batch_oracle)
    lines = results_for(requests_path, batch_oracle, run_batch=True)
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(lines) + "\n")
    cache_dir = tmp_path / "batch-cache"
    assert main(["batch", "import", str(results), "--cache-dir", str(cache_dir)]) == 0
    assert f"{len(requests)} answers imported" in capsys.readouterr().out

    replayed = tmp_path / "batch.json"
    assert main(["replay", *llm_args(offline, cache_dir), "--report", str(replayed)]) == 1
    err = capsys.readouterr().err
    assert "llm: 0 requests sent" in err
    assert replayed.read_bytes() == live.read_bytes()


def test_export_missing_gives_what_a_partial_batch_left_out(bundled_calls, tmp_path, capsys):
    offline, cache_dir = closed_port_url(), tmp_path / "cache"
    everything, missing = tmp_path / "all.jsonl", tmp_path / "missing.jsonl"
    assert main(["batch", "export", *llm_args(offline, cache_dir), "--out", str(everything)]) == 0
    lines = results_for(everything, Oracle(bundled_calls))
    half = len(lines) // 2
    (tmp_path / "first.jsonl").write_text("\n".join(lines[:half]) + "\n")
    assert main(["batch", "import", str(tmp_path / "first.jsonl"), "--cache-dir", str(cache_dir)]) == 0
    capsys.readouterr()
    assert main(["batch", "export", *llm_args(offline, cache_dir), "--missing", "--out", str(missing)]) == 0
    assert f"{half} already in the cache left out" in capsys.readouterr().out
    exported = [json.loads(line)["custom_id"] for line in everything.read_text().splitlines()]
    assert [json.loads(line)["custom_id"] for line in missing.read_text().splitlines()] == exported[half:]


def test_repeat_samples_are_exported_as_their_own_requests(server, bundled_calls, tmp_path, capsys):
    offline, cache_dir = closed_port_url(), tmp_path / "cache"
    requests_path, once = tmp_path / "requests.jsonl", tmp_path / "once.jsonl"
    assert main(["batch", "export", *llm_args(offline, cache_dir, "--repeat", "2"), "--out", str(requests_path)]) == 0
    assert main(["batch", "export", *llm_args(offline, cache_dir), "--out", str(once)]) == 0
    requests = [json.loads(line) for line in requests_path.read_text().splitlines()]
    assert len(requests) == 2 * len(once.read_text().splitlines())
    assert requests[0]["body"] == requests[1]["body"] and requests[0]["custom_id"] != requests[1]["custom_id"]

    live = tmp_path / "live.json"
    main(["replay", *llm_args(server.url, tmp_path / "live-cache", "--repeat", "2"), "--report", str(live)])
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(results_for(requests_path, Oracle(bundled_calls))) + "\n")
    assert main(["batch", "import", str(results), "--cache-dir", str(cache_dir)]) == 0
    capsys.readouterr()
    report = tmp_path / "repeat.json"
    main(["replay", *llm_args(offline, cache_dir, "--repeat", "2"), "--report", str(report)])
    assert "llm: 0 requests sent" in capsys.readouterr().err
    assert report.read_bytes() == live.read_bytes()


def test_bad_result_lines_are_named_by_number_and_the_others_imported(tmp_path, capsys):
    key = "a" * 64
    good = {"id": "r1", "custom_id": key, "response": {"status_code": 200, "body": {"choices": []}}, "error": None}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({**good, "custom_id": "b" * 64, "response": None, "error": {"code": "x", "message": "expired"}}),
        json.dumps(
            {**good, "custom_id": "c" * 64, "response": {"status_code": 429, "body": {"error": {"message": "rate"}}}}
        ),
        json.dumps({**good, "custom_id": "request-7"}),
        json.dumps({**good, "custom_id": "f" * 64, "response": {"status_code": 500, "body": {"error": "down"}}}),
        json.dumps({**good, "custom_id": "d" * 64, "response": {"status_code": 200, "body": {"object": "error"}}}),
        "",
        json.dumps({**good, "custom_id": "e" * 64}),
    ]
    results = tmp_path / "out.jsonl"
    results.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())  # a BOM, as Windows tools write
    assert main(["batch", "import", str(results), "--cache-dir", str(tmp_path / "c")]) == 1
    out, err = capsys.readouterr()
    assert "2 answers imported" in out and "6 of 8 lines not imported" in out
    assert err.splitlines() == [
        "out.jsonl line 2: not JSON",
        "out.jsonl line 3: custom_id bbbbbbbbbbbbbbbbbbb… : the batch failed this request: expired".replace(
            "… :", "…:"
        ),
        "out.jsonl line 4: custom_id ccccccccccccccccccc…: HTTP 429: rate",
        "out.jsonl line 5: custom_id request-7 is not a replay-tui cache key (export requests with replay-tui batch "
        "export)",
        "out.jsonl line 6: custom_id fffffffffffffffffff…: HTTP 500: down",
        "out.jsonl line 7: custom_id ddddddddddddddddddd…: the response body is not a chat completion (no choices)",
    ]
    cache = ResponseCache(tmp_path / "c")
    assert cache.get(key)["response"] == {"choices": []} and cache.get(key)["batch"] == {
        "id": "r1",
        "file": "out.jsonl",
    }
    assert cache.get("e" * 64) is not None and cache.get("b" * 64) is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["batch", "export", "--out", "x.jsonl"], "LLM mode needs a model name"),
        (["batch", "export", "--mode", "stub", "--out", "x.jsonl"], "batch export is for --mode llm"),
        (["batch", "export", "--model", "M", "--report", "r.json", "--out", "x.jsonl"], "--report is not used"),
        (["batch", "export", "--model", "M", "--sessions", "9999", "--out", "x.jsonl"], "no episode with session_id"),
        (["batch", "import", "missing.jsonl"], "missing.jsonl: no such file"),
        (
            ["batch", "export", "--model", "M", "--missing", "--no-cache", "--out", "x.jsonl"],
            "cannot go with --no-cache",
        ),
    ],
)
def test_usage_errors_are_one_line(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
