"""A test-only reader whose index holds still at a gate: openai-chat's reader, whose ``index`` waits
for :data:`GATE` after :data:`HOLD_AFTER` summaries (so a test sees an index still going, with no
sleep in the product's code). Registered by ``tests/tui/test_progressive_index.py`` through
``formats.registry.FORMATS`` as the format ``gated-index``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import EpisodeSummary, reader_for
from replay_tui.formats.base import Detection, ReadItem

GATE = threading.Event()
HOLD_AFTER = 250
FAIL = False
"""Set by a test: the index raises at the gate instead of going on (a reader that fails midway)."""
HOLD_TIMEOUT = 8.0
"""At most this long at the gate (a test that never opens it fails, it does not hang)."""


class GatedIndexReader:
    name = "gated-index"
    label = "openai-chat, its index held at a gate (tests only)"
    description = label

    def sniff(self, path: Path, head: bytes) -> Detection:
        return Detection.no("tests only: asked for by name")

    def read(self, path: Path) -> Iterator[ReadItem]:
        return reader_for("openai-chat").read(path)

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        for count, item in enumerate(reader_for("openai-chat").index(path)):  # type: ignore[attr-defined]
            if count == HOLD_AFTER:
                GATE.wait(HOLD_TIMEOUT)
                if FAIL:
                    raise RuntimeError("the disk went away")
            yield item

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        return reader_for("openai-chat").load(path, summary)  # type: ignore[attr-defined,no-any-return]


READER = GatedIndexReader()
