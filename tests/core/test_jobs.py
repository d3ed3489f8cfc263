"""jobs.fan_out: ordering, per-worker resources, cancel, and failures that stop the pool."""

import threading
import time

import pytest

from replay_tui.jobs import fan_out


class Counter:
    """A worker resource that fails if two threads use it at once."""

    made = 0

    def __init__(self):
        Counter.made += 1
        self.busy = False
        self.items: list[int] = []

    def use(self, item: int, seconds: float = 0.0) -> int:
        if self.busy:
            raise RuntimeError("a resource was used by two threads at once")
        self.busy = True
        try:
            time.sleep(seconds)
            self.items.append(item)
            return item * 10
        finally:
            self.busy = False


@pytest.fixture(autouse=True)
def _reset_counter():
    Counter.made = 0


def test_results_keep_the_input_order_and_callbacks_run_on_the_calling_thread():
    items = list(range(8))
    first = Counter()
    seen: list[tuple[int, int, int]] = []
    caller = threading.get_ident()

    def work(resource: Counter, item: int) -> int:
        return resource.use(item, 0.002 * (len(items) - item))  # later items finish first

    results = fan_out(
        items,
        work,
        first,
        Counter,
        jobs=3,
        cancel=threading.Event(),
        on_result=lambda item, result: seen.append((item, result, threading.get_ident())),
    )
    assert results == [(i, i * 10) for i in items]
    assert sorted(item for item, _, _ in seen) == items
    assert {thread for _, _, thread in seen} == {caller}
    assert Counter.made == 3  # the first resource and one per further worker
    assert first.items  # the caller's resource serves a worker too


def test_workers_never_outnumber_the_items_and_one_worker_runs_on_the_calling_thread():
    threads: list[int] = []

    def work(resource: Counter, item: int) -> int:
        threads.append(threading.get_ident())
        return resource.use(item)

    assert fan_out([5], work, Counter(), Counter, jobs=8, cancel=threading.Event()) == [(5, 50)]
    assert Counter.made == 1 and threads == [threading.get_ident()]
    assert fan_out([], work, Counter(), Counter, jobs=8, cancel=threading.Event()) == []


@pytest.mark.parametrize("jobs", [1, 3])
def test_a_set_cancel_event_skips_every_item(jobs):
    cancel = threading.Event()
    cancel.set()
    ran: list[int] = []
    results = fan_out(range(6), lambda r, item: ran.append(item), Counter(), Counter, jobs=jobs, cancel=cancel)
    assert results == [] and ran == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_cancelling_from_the_callback_skips_the_items_not_started(jobs):
    cancel = threading.Event()
    items = list(range(40))

    def work(resource: Counter, item: int) -> int:
        return resource.use(item, 0.002)

    results = fan_out(items, work, Counter(), Counter, jobs=jobs, cancel=cancel, on_result=lambda i, r: cancel.set())
    assert 1 <= len(results) < len(items)
    assert [item for item, _ in results] == sorted(item for item, _ in results)


@pytest.mark.parametrize("jobs", [1, 3])
def test_an_exception_in_a_worker_is_raised_and_stops_the_run(jobs):
    cancel = threading.Event()
    started: list[int] = []

    def work(resource: Counter, item: int) -> int:
        started.append(item)
        if item == 2:
            raise ValueError("boom")
        return resource.use(item, 0.002)

    with pytest.raises(ValueError, match="boom"):
        fan_out(range(50), work, Counter(), Counter, jobs=jobs, cancel=cancel)
    assert cancel.is_set()
    assert len(started) < 50


@pytest.mark.parametrize("exception", [KeyboardInterrupt, RuntimeError])
def test_a_failing_callback_stops_the_pool_and_waits_for_its_workers(exception):
    cancel = threading.Event()
    running = 0
    lock = threading.Lock()
    started: list[int] = []

    def work(resource: Counter, item: int) -> int:
        nonlocal running
        with lock:
            running += 1
            started.append(item)
        try:
            return resource.use(item, 0.005)
        finally:
            with lock:
                running -= 1

    def fail(item: int, result: int) -> None:
        raise exception

    with pytest.raises(exception):
        fan_out(range(30), work, Counter(), Counter, jobs=3, cancel=cancel, on_result=fail)
    assert cancel.is_set()
    assert running == 0  # no worker is still going when the exception comes out
    assert len(started) < 30
