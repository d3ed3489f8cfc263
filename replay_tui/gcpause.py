"""Pausing Python's cycle collector while a replay allocates.

A replay makes and drops hundreds of thousands of objects (parsed episodes, steps, results) and
reference counting frees them all: over a 100 MB stub replay the cycle collector found nothing
(0 objects) yet its passes over the growing results took ~20 % of the replay's CPU (one full
collection alone 0.09 s). While paused, the young generations are still collected every few
seconds (:func:`gc_tick`), so cycles a policy makes (HTTP clients, exceptions with tracebacks) or
the app's UI thread makes do not pile up; the full collector runs again when the last pause ends.

What a replay leaves alive (its results) is tenured when the last pause ends: moved at once to where
the collector keeps old objects, instead of being walked by the young collections that would promote
them there (one such walk over a 100 MB replay's results took 0.05-0.1 s, a fifth of the replay).
Python has no "move to the oldest generation": ``gc.freeze()`` moves every object to the permanent
generation, and a callback puts them back in the oldest at the start of the next full collection
(automatic or ``gc.collect()``), which then examines them as it would have. So cycles among them are
still collected, at the next full collection, as old objects are.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

TICK_SECONDS = 5.0
"""Least time between two young collections while paused (each walks what was made since the last)."""

_lock = threading.Lock()
_pauses = 0
_resume = False
_last_tick = 0.0


@contextmanager
def gc_paused(*, tenure: bool = True) -> Iterator[None]:
    """Automatic collection off for the block (nested and concurrent pauses count: the collector
    comes back, if it was on, when the last one ends). ``tenure=False`` for a caller that freezes
    and unfreezes the heap itself (the app: see ``tui.app``), whose frozen objects must stay frozen
    past the next full collection: the last pause to end decides."""
    global _pauses, _resume, _last_tick
    with _lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
            _last_tick = time.monotonic()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                if tenure:
                    _tenure()
                gc.enable()


_tenured = False
"""True while what a pause left alive is frozen by :func:`_tenure`, until the next full collection."""


def _tenure() -> None:
    """Every tracked object to the permanent generation until the next full collection starts."""
    global _tenured
    if _rejoin not in gc.callbacks:
        gc.callbacks.append(_rejoin)
    gc.freeze()
    _tenured = True  # after the freeze: a full collection between the two leaves them frozen till the next


def _rejoin(phase: str, info: dict[str, int]) -> None:
    """A gc callback: before a full collection, what :func:`_tenure` froze goes back to the oldest
    generation (no lock: it may run on any thread, inside an allocation anywhere)."""
    global _tenured
    if _tenured and phase == "start" and info.get("generation") == 2:
        _tenured = False
        gc.unfreeze()


def gc_tick() -> None:
    """Collect the young generations if a pause is on and the last tick (or the pause's start) was
    :data:`TICK_SECONDS` ago (call it between episodes: cheap otherwise)."""
    global _last_tick
    now = time.monotonic()
    if _pauses and now - _last_tick >= TICK_SECONDS:
        _last_tick = now
        gc.collect(1)
