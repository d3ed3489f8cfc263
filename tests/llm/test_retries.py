"""Retries against the scripted server: full jitter (``--jobs`` workers never retry in lockstep) and
the server's ``Retry-After`` in both forms and ``retry-after-ms``."""

import email.utils
import threading
import time

import pytest

from replay_tui.policies.llm import LlmPolicy
from replay_tui.policies.retry import backoff_delay, retry_after_seconds
from tests.llm.scripted import Reply, ScriptedServer, tool_reply

BUSY = Reply(status=503, body={"error": {"message": "busy"}})


def ask(policy, page="1"):
    prompt = repr([{"role": "user", "content": f"Page {page} of results"}])
    return policy.predict_action("obs", "Result", ["select_item", "Next", "Back_to_Search"], prompt)


def test_concurrent_workers_retry_at_spread_out_times_below_the_exponential_bound():
    waits: dict[str, list[float]] = {}

    def sleep(seconds):
        waits.setdefault(threading.current_thread().name, []).append(seconds)

    with ScriptedServer(lambda body: BUSY) as server:
        policy = LlmPolicy(
            model="M", base_url=server.url, cache=False, retries=3, backoff=1.0, max_backoff=30.0, sleep=sleep
        )
        threads = [threading.Thread(target=lambda p=str(n): ask_quietly(policy, p), name=f"w{n}") for n in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(server.requests) == 16 * 4
    assert len(waits) == 16 and all(len(w) == 3 for w in waits.values())
    for attempt in range(3):
        column = [w[attempt] for w in waits.values()]
        assert all(0 <= wait <= 2**attempt for wait in column)
        assert len(set(column)) == 16  # no two workers wait the same time: no lockstep
    assert max(w[2] for w in waits.values()) > 1.0  # the bound grows


def ask_quietly(policy, page):
    try:
        ask(policy, page)
    except Exception:
        pass


@pytest.mark.parametrize(
    ("headers", "low", "high"),
    [
        ({"retry-after": "2"}, 2.0, 2.2),
        ({"retry-after": "1.5"}, 1.5, 1.65),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25, 0.275),  # the finer header wins
        ({"retry-after": "date+20"}, 18.5, 22.1),  # an HTTP-date 20 s from now
        ({"retry-after": "date-3600"}, 0.0, 0.0),
        ({"retry-after": "600"}, 30.0, 33.0),  # capped at max_backoff
    ],
)
def test_the_server_says_when_to_come_back(headers, low, high):
    if headers.get("retry-after", "").startswith("date"):
        headers = {"retry-after": email.utils.formatdate(time.time() + int(headers["retry-after"][4:]), usegmt=True)}
    replies = iter([Reply(status=429, body={"error": {"message": "slow down"}}, headers=headers), tool_reply("Next")])
    sleeps = []
    with ScriptedServer(lambda body: next(replies)) as server:
        policy = LlmPolicy(model="M", base_url=server.url, cache=False, retries=2, backoff=0.001, sleep=sleeps.append)
        assert ask(policy) == "click[Next >]"
        assert len(server.requests) == 2
    assert len(sleeps) == 1 and low <= sleeps[0] <= high


def test_an_unreadable_retry_after_falls_back_to_the_jittered_backoff():
    replies = iter([Reply(status=503, body={}, headers={"retry-after": "soon"}), tool_reply("Next")])
    sleeps = []
    with ScriptedServer(lambda body: next(replies)) as server:
        policy = LlmPolicy(model="M", base_url=server.url, cache=False, retries=1, backoff=0.5, sleep=sleeps.append)
        assert ask(policy) == "click[Next >]"
    assert len(sleeps) == 1 and 0 <= sleeps[0] <= 0.5


def test_header_forms():
    now = 1_700_000_000.0
    assert retry_after_seconds({"Retry-After": "3"}, now) == 3.0
    assert retry_after_seconds({"retry-after": email.utils.formatdate(now + 7, usegmt=True)}, now) == 7.0
    assert retry_after_seconds({"retry-after": "Sun, 06 Nov 1994 08:49:37 -0000"}, now) == 0.0
    assert retry_after_seconds({"retry-after-ms": "1500"}, now) == 1.5
    assert retry_after_seconds({"retry-after-ms": "nan", "retry-after": "2"}, now) == 2.0
    assert retry_after_seconds({"retry-after": "-1"}, now) is None
    assert retry_after_seconds({}, now) is None and retry_after_seconds(None) is None
    assert backoff_delay(5, 1.0, 0.0) == 0.0 and 0 <= backoff_delay(10, 1.0, 4.0) <= 4.0
