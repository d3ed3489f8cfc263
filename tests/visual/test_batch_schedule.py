"""How ``score_pairs`` hands pairs to its workers: a free worker takes the next pair at once (a slow pair
does not hold the other worker idle), and what is done is still reported in pair order."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from replay_tui.visual import report as report_module
from replay_tui.visual.batch import BatchPair, score_pairs


def _pairs(n: int) -> list[BatchPair]:
    return [BatchPair(f"p{i}", Path(f"ref{i}.html"), Path(f"pred{i}.html")) for i in range(n)]


def test_a_free_worker_takes_the_next_pair_while_a_slow_one_runs(monkeypatch):
    others_done = threading.Event()
    scored_others: list[int] = []
    lock = threading.Lock()

    def fake(scorer, ref, pred, mode, shared=None):
        index = int(ref.stem.removeprefix("ref"))
        if index == 0:  # the slow pair: it ends only once the next three were scored beside it
            assert others_done.wait(20), "the other worker waited for the slow pair"
        else:
            with lock:
                scored_others.append(index)
                if len(scored_others) == 3:
                    others_done.set()
        return f"report {index}", f"result {index}"

    monkeypatch.setattr(report_module, "score_and_report", fake)
    reported: list[int] = []
    started: list[int] = []
    score_pairs(
        object(),  # type: ignore[arg-type]
        _pairs(6),
        "compat",
        jobs=2,
        on_start=started.append,
        on_scored=lambda index, report, result: reported.append(index),
    )
    assert sorted(scored_others) == [1, 2, 3, 4, 5]
    assert started == reported == list(range(6))  # handed out and reported in pair order


@pytest.mark.parametrize("slow", [0, 3])
def test_errors_and_results_keep_pair_order(monkeypatch, slow):
    gate = threading.Event()

    def fake(scorer, ref, pred, mode, shared=None):
        index = int(ref.stem.removeprefix("ref"))
        if index == slow:
            gate.wait(0.2)  # finishes after later pairs (or the wait just ends)
        if index == 2:
            raise ValueError("bad page")
        return f"report {index}", f"result {index}"

    monkeypatch.setattr(report_module, "score_and_report", fake)
    events: list[tuple[str, int]] = []
    score_pairs(
        object(),  # type: ignore[arg-type]
        _pairs(8),
        "compat",
        jobs=3,
        on_scored=lambda index, report, result: events.append(("scored", index)),
        on_error=lambda index, exc: events.append(("error", index)),
    )
    assert [index for _, index in events] == list(range(8))
    assert events[2] == ("error", 2)
