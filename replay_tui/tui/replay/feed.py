"""The replay worker's side of its messages: what happened, batched into few :class:`ReplayProgressed`.

A stub replay judges thousands of steps a second. One message per step (and a status redraw per
message) kept the UI thread busy for longer than the replay itself and froze the keys, so the worker
collects finished episodes here and posts them together at most every :data:`REPLAY_BATCH_SECONDS`.
A slow policy (a step that took that long) is posted at once: its verdicts still show as they come.
Per-step results travel only for the episodes open in a stepper (``watched``), the rest arrive
with their episode's report. The worker lets go of the GIL every half millisecond so the UI thread, the
terminal's input and its output never wait out a whole switch interval behind it (:data:`YIELD_SECONDS`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

from replay_tui.episodes.problems import LoadProblem
from replay_tui.runner import EpisodeReport, StepResult
from replay_tui.tui.messages import ReplayProgressed

REPLAY_BATCH_SECONDS = 0.05
"""At most one message per this many seconds from a fast replay (20 a second)."""
YIELD_SECONDS = 0.0005
"""The worker lets go of the GIL at least this often (between steps). Python hands it over only after
a 5 ms switch interval, and the UI thread asks for it again after every wait (input, output, timers):
without this, each frame and key waited out several intervals behind a stub replay. Yielding after
every step instead cost the replay up to twice its time on a loaded machine."""


class ReplayFeed:
    """Collects a replay's results on the worker thread; ``post`` sends each batch (``App.post_message``).

    ``watched`` answers which sessions are open in a stepper (read on the worker thread: it must only
    read). Call :meth:`step` from the runner's ``on_step``, :meth:`episode` or :meth:`failed` after each
    episode, and :meth:`flush` before the replay's last message.
    """

    def __init__(
        self,
        post: Callable[[ReplayProgressed], object],
        total: int,
        *,
        watched: Callable[[], Collection[int]] = frozenset,
        mode: str | None = None,
        interval: float = REPLAY_BATCH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._post = post
        self.total = total
        self.mode = mode
        self._watched = watched
        self._interval = interval
        self._clock = clock
        self.done = 0
        self.position: tuple[int, str] | None = None
        self._reports: list[EpisodeReport] = []
        self._problems: list[LoadProblem] = []
        self._steps: list[StepResult] = []
        self._fresh: set[int] = set()
        self._episode: list[StepResult] = []  # the current episode's steps so far
        self._sent = 0  # of them, how many a message carried (the episode is watched)
        self._changed = False
        now = clock()
        self._last_post = now
        self._last_event = now
        self._slow = False  # the latest step took at least the interval
        self._yielded = now

    # -- from the worker --------------------------------------------------------------------
    def begin(self) -> None:
        """An episode is about to be replayed (its load time is not a slow step)."""
        self._episode = []
        self._sent = 0
        self._last_event = self._clock()

    def step(self, result: StepResult) -> None:
        """A step was judged (the runner's ``on_step``)."""
        now = self._clock()
        self._slow = now - self._last_event >= self._interval
        self._last_event = now
        self._episode.append(result)
        self.position = (result.session_id, result.step_label)
        self._changed = True
        if result.session_id in self._watched():
            if self._sent == 0:
                self._fresh.add(result.session_id)  # its earlier verdicts go
            self._steps.extend(self._episode[self._sent :])  # opened mid-episode: the steps so far too
            self._sent = len(self._episode)
        self._maybe_post(now)
        self._yield(now)

    def episode(self, report: EpisodeReport) -> None:
        self.done += 1
        self._episode = []  # its steps travel with the report now
        self._reports.append(report)
        self._changed = True
        now = self._clock()
        self._maybe_post(now)
        self._yield(now)

    def so_far(self, session_id: int) -> list[StepResult]:
        """The steps judged so far of the episode being replayed, if it is ``session_id``. Read on the UI
        thread as a stepper opens on it: a replay held on a slow step (a slow model) sends nothing until
        its next step is judged, and the stepper would show none of the verdicts before it."""
        episode = list(self._episode)  # the worker replaces the list at each episode's start; a copy
        return episode if episode and episode[0].session_id == session_id else []

    def failed(self, problem: LoadProblem) -> None:
        self.done += 1
        self._problems.append(problem)
        self._changed = True
        self._maybe_post(self._clock())

    def flush(self) -> None:
        """Post whatever is still held (before the replay's ReplayFinished)."""
        if self._changed:
            self._send(self._clock())

    # -- batching ---------------------------------------------------------------------------
    def _yield(self, now: float) -> None:
        if now - self._yielded >= YIELD_SECONDS:
            self._yielded = now
            time.sleep(0)  # releases the GIL: a waiting UI thread takes it now, not after a switch interval

    def _maybe_post(self, now: float) -> None:
        if self._slow or now - self._last_post >= self._interval:
            self._send(now)

    def _send(self, now: float) -> None:
        message = ReplayProgressed(
            reports=self._reports,
            problems=self._problems,
            steps=self._steps,
            fresh=self._fresh,
            done=self.done,
            total=self.total,
            position=self.position,
            mode=self.mode,
        )
        self._reports, self._problems, self._steps, self._fresh = [], [], [], set()
        self._changed = False
        self._last_post = now
        self._post(message)
