"""The cycle collector is paused during replays (they allocate much and make no cycles), comes back
when the last pause ends, and young cycles are still collected by the ticks between episodes."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import weakref

import pytest

from replay_tui import gcpause
from replay_tui.env import OfflineWebshopEnv
from replay_tui.examples import example_path
from replay_tui.gcpause import gc_paused, gc_tick
from replay_tui.policies import StubPolicy
from replay_tui.runner import Runner, run_all_parallel
from replay_tui.sources import open_sources


@pytest.fixture(autouse=True)
def _gc_on():
    gc.enable()
    yield
    gc.enable()


def test_nested_and_concurrent_pauses_restore_the_collector_after_the_last():
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            leave.wait(5)

    with gc_paused():
        assert not gc.isenabled()
        thread = threading.Thread(target=other)
        thread.start()
        assert inside.wait(5)
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's pause is still on
    leave.set()
    thread.join()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


class _Node:
    def __init__(self) -> None:
        self.me = self


def test_ticks_collect_young_cycles_at_most_every_few_seconds(monkeypatch):
    with gc_paused():
        node = _Node()
        gone = weakref.ref(node)
        del node
        monkeypatch.setattr(gcpause, "_last_tick", 0.0)
        gc_tick()
        assert gone() is None
        again = _Node()
        kept = weakref.ref(again)
        del again
        gc_tick()  # too soon: no collection
        assert kept() is not None
    gc.collect()
    assert kept() is None


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_replay_runs_with_the_collector_paused_and_leaves_it_on(jobs):
    demos = open_sources([example_path()])
    seen: list[bool] = []
    summary = run_all_parallel(
        lambda: Runner(OfflineWebshopEnv(demos), StubPolicy()),
        jobs=jobs,
        on_episode=lambda _: seen.append(gc.isenabled()),
    )
    assert summary.episodes_run > 1 and seen and not any(seen)
    assert gc.isenabled()


def test_what_a_pause_leaves_alive_is_tenured_and_rejoins_at_the_next_full_collection():
    gc.collect()
    with gc_paused():
        node = _Node()  # a cycle made during the replay, still referenced when the pause ends
        gone = weakref.ref(node)
    assert gc.get_freeze_count() > 0  # tenured: the young collections do not walk it
    del node
    gc.collect(0)
    gc.collect(1)
    assert gone() is not None and gc.get_freeze_count() > 0
    gc.collect()  # a full collection takes the tenured objects back first, and frees the cycle
    assert gone() is None
    assert gc.get_freeze_count() == 0


AUTOMATIC_FULL_COLLECTION = """
import gc
from replay_tui.gcpause import gc_paused

class Node:
    def __init__(self):
        self.me = self

gc.collect()
with gc_paused():
    kept = [Node() for _ in range(10)]
assert gc.get_freeze_count() > 0
gc.set_threshold(10, 1, 1)
made = [[Node()] for _ in range(50_000)]  # enough young objects for the collector's full pass
assert gc.get_freeze_count() == 0, gc.get_freeze_count()
"""


def test_an_automatic_full_collection_takes_the_tenured_objects_back():
    """In an interpreter of its own: the collector's state is the process's, and a pause held by another
    test's thread in this worker (an app's replay still winding down) would keep it off."""
    done = subprocess.run(
        [sys.executable, "-c", AUTOMATIC_FULL_COLLECTION], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_a_pause_without_tenure_leaves_the_callers_frozen_objects_frozen():
    """The app freezes the heap itself (until a stepper closes): its replay's pause must not put the
    frozen objects back at the next full collection."""
    gc.collect()
    gc.freeze()
    try:
        with gc_paused(tenure=False):
            pass
        frozen = gc.get_freeze_count()
        assert frozen > 0
        gc.collect()
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
