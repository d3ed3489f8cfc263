"""visual.batch and visual.models.read_report without a browser: discovery, the one scoring loop, saved reports."""

from __future__ import annotations

import json
import threading

import pytest

from replay_tui.visual import batch
from replay_tui.visual.batch import BatchPair, discover_pairs, page_names, score_pairs
from replay_tui.visual.models import BatchReport, ReportFileError, read_report


def _pairs(tmp_path, names):
    return [BatchPair(name, tmp_path / f"{name}.ref.html", tmp_path / f"{name}.gen.html") for name in names]


@pytest.fixture
def fake_scoring(monkeypatch):
    """score_and_report replaced: 'bad' raises, everything else scores as (report, result) strings."""
    calls = []

    def score_and_report(scorer, ref, pred, mode, shared=None):
        calls.append((scorer, ref.name, mode))
        if ref.name.startswith("bad"):
            raise RuntimeError("page crashed")
        return f"report:{ref.name}", f"result:{ref.name}"

    monkeypatch.setattr("replay_tui.visual.report.score_and_report", score_and_report)
    return calls


def test_score_pairs_runs_every_pair_in_order(tmp_path, fake_scoring):
    pairs = _pairs(tmp_path, ["a", "b", "c"])
    events = []
    score_pairs(
        "scorer",
        pairs,
        "fixed",
        on_start=lambda i: events.append(("start", i)),
        on_scored=lambda i, report, result: events.append(("scored", i, report, result)),
    )
    assert events == [
        ("start", 0),
        ("scored", 0, "report:a.ref.html", "result:a.ref.html"),
        ("start", 1),
        ("scored", 1, "report:b.ref.html", "result:b.ref.html"),
        ("start", 2),
        ("scored", 2, "report:c.ref.html", "result:c.ref.html"),
    ]
    assert {(scorer, mode) for scorer, _, mode in fake_scoring} == {("scorer", "fixed")}
    assert [p.status for p in pairs] == ["queued"] * 3  # the caller owns the pairs


def test_a_failing_pair_is_reported_or_ends_the_batch(tmp_path, fake_scoring):
    pairs = _pairs(tmp_path, ["a", "bad", "c"])
    scored, errors = [], []
    score_pairs(
        None,
        pairs,
        "compat",
        on_scored=lambda i, *_: scored.append(i),
        on_error=lambda i, exc: errors.append((i, str(exc))),
    )
    assert scored == [0, 2] and errors == [(1, "page crashed")]
    scored.clear()
    with pytest.raises(RuntimeError, match="page crashed"):  # without on_error (the command line)
        score_pairs(None, pairs, "compat", on_scored=lambda i, *_: scored.append(i))
    assert scored == [0]


def test_indices_and_cancel(tmp_path, fake_scoring):
    pairs = _pairs(tmp_path, ["a", "b", "c", "d"])
    cancel = threading.Event()
    seen = []

    def on_scored(index, *_):
        seen.append(index)
        if index == 2:
            cancel.set()

    score_pairs(None, pairs, "compat", indices=[3, 2, 0], cancel=cancel, on_scored=on_scored)
    assert seen == [3, 2]  # stopped before the next pair


def test_discovery_skips_hidden_and_other_files(tmp_path):
    ref, gen = tmp_path / "ref", tmp_path / "gen"
    ref.mkdir()
    gen.mkdir()
    for name in ("b.html", "a.html", ".hidden.html", "notes.txt"):
        (ref / name).write_text("<p>x</p>")
    (gen / "b.html").write_text("<p>y</p>")
    assert page_names(ref) == ["a.html", "b.html"]
    pairs, missing = discover_pairs(ref, [gen])
    assert [(p.label, p.ref, p.pred) for p in pairs] == [("b", ref / "b.html", gen / "b.html")]
    assert missing == ["gen/a.html"]


def test_read_report(tmp_path):
    empty = BatchReport(ref_dir="r", pred_dir="p", mode="compat", rows=[], means={})
    path = tmp_path / "batch.json"
    path.write_text(empty.model_dump_json(by_alias=True))
    assert read_report(path) == empty
    for name, text in (("list.json", "[]"), ("pair.json", json.dumps({"ref": "a.html"})), ("bad.json", "{")):
        (tmp_path / name).write_text(text)
        with pytest.raises(ReportFileError, match=rf"^{tmp_path / name}: not a visual report"):
            read_report(tmp_path / name)
    with pytest.raises(ReportFileError, match="No such file"):
        read_report(tmp_path / "missing.json")


def test_the_batch_markdown_table(tmp_path):
    pairs = _pairs(tmp_path, ["a|b"])
    report = batch.batch_report(pairs, "compat", ["gen/x.html"])
    assert report.rows == [] and report.missing == ["gen/x.html"] and report.pairs == []
    text = batch.batch_markdown(pairs, [0], report, "final")
    assert text.startswith("## Visual batch\n\n0 pairs, compat mode, sorted by final\n")
    assert text.endswith("| **mean** | | n/a | n/a | n/a | n/a | n/a | n/a |\n")


def test_jobs_keep_the_pair_order_and_the_callbacks_on_the_calling_thread(tmp_path, monkeypatch):
    """Pairs finish out of order on the workers; every callback still comes in pair order, on this thread."""
    import time

    delays = {"a": 0.15, "b": 0.0, "c": 0.08, "d": 0.0, "bad": 0.0, "e": 0.0}
    workers = set()

    def score_and_report(scorer, ref, pred, mode, shared=None):
        workers.add(threading.current_thread().name)
        time.sleep(delays[ref.name.split(".")[0]])
        if ref.name.startswith("bad"):
            raise RuntimeError("page crashed")
        return f"report:{ref.name}", f"result:{ref.name}"

    monkeypatch.setattr("replay_tui.visual.report.score_and_report", score_and_report)
    pairs = _pairs(tmp_path, ["a", "b", "c", "d", "bad", "e"])
    events, threads = [], set()

    def note(*event):
        threads.add(threading.current_thread())
        events.append(event)

    score_pairs(
        "scorer",
        pairs,
        "compat",
        on_start=lambda i: note("start", i),
        on_scored=lambda i, report, result: note("scored", i, report),
        on_error=lambda i, exc: note("error", i, str(exc)),
        jobs=2,
    )
    assert [e for e in events if e[0] != "start"] == [
        ("scored", 0, "report:a.ref.html"),
        ("scored", 1, "report:b.ref.html"),
        ("scored", 2, "report:c.ref.html"),
        ("scored", 3, "report:d.ref.html"),
        ("error", 4, "page crashed"),
        ("scored", 5, "report:e.ref.html"),
    ]
    assert [e[1] for e in events if e[0] == "start"] == [0, 1, 2, 3, 4, 5]
    assert threads == {threading.current_thread()}
    assert len(workers) == 2 and threading.current_thread().name not in workers


def test_jobs_cancel_and_errors_without_a_handler(tmp_path, fake_scoring):
    pairs = _pairs(tmp_path, ["a", "b", "c", "d", "e"])
    cancel = threading.Event()
    events = []

    def on_scored(index, *_):
        events.append(("scored", index))
        cancel.set()

    score_pairs(
        None,
        pairs,
        "compat",
        cancel=cancel,
        on_start=lambda i: events.append(("start", i)),
        on_scored=on_scored,
        jobs=2,
    )
    # nothing new starts once the first pair's report cancelled; what was under way (pair 1, when a
    # worker had taken it already) finishes and is reported
    first = events.index(("scored", 0))
    assert all(kind == "scored" for kind, _ in events[first:])
    started = [i for kind, i in events if kind == "start"]
    assert started in ([0], [0, 1]) and [i for kind, i in events if kind == "scored"] == started
    pairs = _pairs(tmp_path, ["a", "bad", "c", "d"])
    seen: list[int] = []
    with pytest.raises(RuntimeError, match="page crashed"):
        score_pairs(None, pairs, "compat", on_scored=lambda i, *_: seen.append(i), jobs=2)
    assert seen == [0]


def test_a_shared_reference_is_rendered_once_and_released_after_its_last_pair(tmp_path, monkeypatch):
    from replay_tui.visual.pipeline import SharedRenders

    seen = []

    def score_and_report(scorer, ref, pred, mode, shared=None):
        seen.append((ref.name, shared))
        return "report", "result"

    monkeypatch.setattr("replay_tui.visual.report.score_and_report", score_and_report)
    released = []
    monkeypatch.setattr(SharedRenders, "release", lambda self, owner: released.append(owner))
    pairs = [BatchPair(f"p{k}", tmp_path / f"{name}.html", tmp_path / f"gen{k}.html") for k, name in enumerate("aaba")]
    for jobs in (1, 2):
        seen.clear()
        released.clear()
        score_pairs(None, pairs, "compat", jobs=jobs)
        shared = {id(s) for _, s in seen}
        assert len(shared) == 1 and seen[0][1] is not None  # one batch-wide store
        assert released == [str((tmp_path / "b.html").resolve()), str((tmp_path / "a.html").resolve())]
    seen.clear()
    score_pairs(None, pairs[1:3], "compat")  # no page shared: nothing kept
    assert [s for _, s in seen] == [None, None]
