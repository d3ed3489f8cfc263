"""One thread-pool fan-out over work items: the sessions of a ``--jobs N`` replay or ``--repeat`` run.

Results come back in the order of the items, whatever order they finish in, so a parallel run
reports the same bytes as a sequential one. Each worker owns a resource (a Runner, a policy) that
no other worker touches; a cancel event stops the run between items (and the work watches it to
stop between steps); Ctrl-C, or any exception in the work or in the caller's callback, stops the
workers instead of letting them finish the run.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar, cast

Item = TypeVar("Item")
Result = TypeVar("Result")
Resource = TypeVar("Resource")

_SKIPPED = object()


def fan_out(
    items: Iterable[Item],
    work: Callable[[Resource, Item], Result],
    first: Resource,
    make_resource: Callable[[], Resource],
    *,
    jobs: int = 1,
    cancel: threading.Event,
    on_result: Callable[[Item, Result], None] | None = None,
    name: str = "job",
) -> list[tuple[Item, Result]]:
    """Run ``work(resource, item)`` for every item, up to ``jobs`` at once.

    Returns ``(item, result)`` for the items that ran, in the order of ``items``.

    - **Resources:** the first worker uses ``first``; each further worker gets one
      ``make_resource()``, built on the calling thread before any work starts (at most
      ``min(jobs, len(items))`` workers). A resource serves one item at a time, so a resource
      that is not thread-safe is never used by two threads at once; return the same object from
      ``make_resource`` to share a thread-safe one.
    - **Callback:** ``on_result(item, result)`` runs on the calling thread as items finish.
    - **Cancel:** once ``cancel`` is set, items not started yet are skipped.
    - **Failures:** an exception in ``work`` or ``on_result``, or Ctrl-C while waiting, sets
      ``cancel``, waits for the running items to stop, and is raised again.

    With one worker the items run one after the other on the calling thread.
    """
    todo = list(items)
    workers = max(1, min(jobs, len(todo)))
    if workers == 1:
        return _in_turn(todo, work, first, cancel, on_result)
    resources: queue.SimpleQueue[Resource] = queue.SimpleQueue()
    resources.put(first)
    for _ in range(workers - 1):
        resources.put(make_resource())

    def run(item: Item) -> Result | object:
        if cancel.is_set():
            return _SKIPPED
        resource = resources.get()
        try:
            return work(resource, item)
        finally:
            resources.put(resource)

    results: dict[int, Result] = {}
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
    try:
        futures = {pool.submit(run, item): index for index, item in enumerate(todo)}
        for future in as_completed(futures):
            result = future.result()
            if result is _SKIPPED:
                continue
            index = futures[future]
            results[index] = cast("Result", result)
            if on_result is not None:
                on_result(todo[index], results[index])
    except BaseException:  # Ctrl-C or a failure: stop the workers instead of finishing the run
        cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return [(todo[index], results[index]) for index in sorted(results)]


def _in_turn(
    todo: list[Item],
    work: Callable[[Resource, Item], Result],
    resource: Resource,
    cancel: threading.Event,
    on_result: Callable[[Item, Result], None] | None,
) -> list[tuple[Item, Result]]:
    done: list[tuple[Item, Result]] = []
    try:
        for item in todo:
            if cancel.is_set():
                break
            result = work(resource, item)
            done.append((item, result))
            if on_result is not None:
                on_result(item, result)
    except BaseException:
        cancel.set()
        raise
    return done
