"""``defer_scan`` (what the app opens files with): a clean file is indexed by msgspec first and
its depth scan runs at the first read. What a reader gets must not depend on that: the same refs,
headers, bytes and episodes; an episode nested past MAX_DEPTH is still refused, alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay_tui.episodes.problems import EpisodeLoadError
from replay_tui.examples import example_path
from replay_tui.formats.webshop_demos.index import DemoFile
from tests.conftest import episode, good_episode, search_step, write_json


def _snapshot(demo: DemoFile) -> dict:
    """Everything a reader of the file sees, episodes parsed in full."""
    refs = []
    for ref in demo.episodes:
        try:
            parsed: object = demo.read_episode(ref).model_dump()
        except EpisodeLoadError as exc:
            parsed = exc.problem.one_line()
        refs.append((ref.index, ref.summary, ref.decision_steps, ref.sub_events, parsed))
    return {
        "refs": refs,
        "problems": [p.one_line() for p in demo.problems],
        "error": demo.error,
    }


def _both(path: Path) -> tuple[DemoFile, DemoFile]:
    """The file opened as the CLI opens it, and as the app does."""
    return DemoFile(path), DemoFile(path, defer_scan=True)


def _deep(levels: int) -> dict:
    nested: object = "bottom"
    for _ in range(levels):
        nested = {"n": nested}
    return episode(2, [search_step(0)], extra=nested)


@pytest.mark.parametrize("jsonl", [False, True])
def test_a_clean_file_reads_the_same_with_a_deferred_scan(tmp_path, jsonl):
    episodes = [good_episode(sid) for sid in (1, 2, 3, 7)]
    if jsonl:
        path = tmp_path / "demos.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in episodes), encoding="utf-8")
    else:
        path = write_json(tmp_path / "demos.json", episodes)
    now, later = _both(path)
    assert all(ref.raw is None for ref in later.episodes)  # indexed without the scan
    assert _snapshot(later) == _snapshot(now)
    assert [bytes(ref.raw) for ref in later.episodes] == [bytes(ref.raw) for ref in now.episodes]


def test_the_bundled_example_reads_the_same_with_a_deferred_scan():
    now, later = _both(example_path())
    assert all(ref.raw is None for ref in later.episodes)
    assert _snapshot(later) == _snapshot(now) and len(now.episodes) > 1


def test_an_episode_nested_too_deep_is_refused_alone_when_read(tmp_path):
    """Sync: a problem at open. Background: browsable, and refused with the same reason when read."""
    path = write_json(tmp_path / "deep.json", [good_episode(1), _deep(100), good_episode(3)])
    now, later = _both(path)
    assert [ref.session_id for ref in now.episodes] == [1, 3]
    assert any("nested more than 64 levels deep" in p.one_line() for p in now.problems)
    assert [ref.session_id for ref in later.episodes] == [1, 2, 3]
    with pytest.raises(EpisodeLoadError, match="nested more than 64 levels deep"):
        later.read_episode(later.episodes[1])
    for sync_ref, ref in zip(now.episodes, [later.episodes[0], later.episodes[2]], strict=True):
        assert later.read_episode(ref).model_dump() == now.read_episode(sync_ref).model_dump()


@pytest.mark.parametrize(
    "odd",
    [
        # past Python's recursion limit: msgspec refuses it, the scan goes first
        '{"session_id": 2, "trajectory": [], "extra": ' + "[" * 5000 + "]" * 5000 + "}",
        json.dumps(episode("12", [search_step(0)])),  # a header that needs coercion
        '{"session_id": 4}',  # no trajectory
        "[1, 2]",  # not an object
    ],
    ids=["very-deep", "string-id", "no-trajectory", "not-an-object"],
)
def test_any_other_file_is_scanned_first_as_before(tmp_path, odd):
    path = tmp_path / "odd.json"
    good = [json.dumps(good_episode(sid)) for sid in (1, 3)]
    path.write_text(f"[{good[0]},\n{odd},\n{good[1]}]", encoding="utf-8")
    now, later = _both(path)
    assert all(ref.raw is not None for ref in later.episodes)  # scanned first, as without defer_scan
    assert _snapshot(later) == _snapshot(now)
