"""Pausing Python's cycle collector while a replay allocates.

A replay makes and drops hundreds of thousands of objects (parsed episodes, steps, results) and
reference counting frees them all: over a 100 MB stub replay the cycle collector found nothing
(0 objects) yet its passes over the growing results took ~20 % of the replay's CPU (one full
collection alone 0.09 s). While paused, the young generations are still collected every few
seconds (:func:`gc_tick`), so cycles a policy makes (HTTP clients, exceptions with tracebacks) or
the app's UI thread makes do not pile up; the full collector runs again when the last pause ends.
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
def gc_paused() -> Iterator[None]:
    """Automatic collection off for the block (nested and concurrent pauses count: the collector
    comes back, if it was on, when the last one ends)."""
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
                gc.enable()


def gc_tick() -> None:
    """Collect the young generations if a pause is on and the last tick (or the pause's start) was
    :data:`TICK_SECONDS` ago (call it between episodes: cheap otherwise)."""
    global _last_tick
    now = time.monotonic()
    if _pauses and now - _last_tick >= TICK_SECONDS:
        _last_tick = now
        gc.collect(1)
