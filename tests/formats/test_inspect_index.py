"""inspect_ai ``.eval`` logs indexed from their summaries and loaded one sample at a time."""

from __future__ import annotations

import zipfile
from pathlib import Path

import orjson
import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import EpisodeSummary, IndexingReader
from replay_tui.formats.inspect_ai import READER
from replay_tui.sources import open_sources
from tests.formats.test_inspect_ai import DATA, POPULARITY, read, rewrite

EVALS = sorted(DATA.glob("*.eval"))


def index(path: Path) -> tuple[list[EpisodeSummary], list[LoadProblem]]:
    assert isinstance(READER, IndexingReader)
    summaries: list[EpisodeSummary] = []
    problems: list[LoadProblem] = []
    for item in READER.index(path):
        (summaries if isinstance(item, EpisodeSummary) else problems).append(item)
    return summaries, problems


def verdict(trajectory_or_summary: Trajectory | EpisodeSummary) -> tuple[object, ...]:
    """What the browser shows and filters on before an episode opens: the outcome's verdict, its
    status and error, the target, each scorer's name, value and pass (answers and explanations are
    inspect's thinned copies in the summaries, the sample's own once it is loaded)."""
    outcome = (
        trajectory_or_summary.outcome
        if isinstance(trajectory_or_summary, Trajectory)
        else trajectory_or_summary.full_outcome()
    )
    assert outcome is not None
    checks = [(c.name, c.value, c.passed) for c in outcome.checks]
    return (outcome.reward, outcome.success, outcome.status, outcome.error, outcome.target, checks)


def test_every_eval_is_covered() -> None:
    assert {p.name for p in EVALS} >= {"zstd_tools.eval", "zstd_tools_deflate.eval", POPULARITY.name}


@pytest.mark.parametrize("path", EVALS, ids=lambda p: p.name)
def test_the_index_lists_the_episodes_the_whole_read_gives(path: Path) -> None:
    trajectories, read_problems = read(path)
    summaries, problems = index(path)
    assert [s.id for s in summaries] == [t.id for t in trajectories]
    assert [s.record for s in summaries] == list(range(len(trajectories)))
    assert [verdict(s) for s in summaries] == [verdict(t) for t in trajectories]
    assert [(s.reward, s.success) for s in summaries] == [(t.outcome.reward, t.outcome.success) for t in trajectories]
    assert [s.task for s in summaries] == [t.task for t in trajectories]
    assert [p.one_line() for p in problems] == [p.one_line() for p in read_problems]


@pytest.mark.parametrize("path", EVALS, ids=lambda p: p.name)
def test_a_sample_loaded_alone_is_the_one_the_whole_read_gives(path: Path) -> None:
    trajectories, _ = read(path)
    summaries, _ = index(path)
    for summary in reversed(summaries):  # any order: each load finds its own member
        loaded = READER.load(path, summary)
        assert isinstance(loaded, Trajectory), loaded
        [whole] = [t for t in trajectories if t.id == summary.id]
        assert loaded.model_dump() == whole.model_dump()


def test_the_index_inflates_no_sample_member(tmp_path: Path) -> None:
    """Every sample member broken: the index still lists every sample from summaries.json, with
    no problem; opening one names its member."""
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(POPULARITY) as archive:
        names = [n for n in archive.namelist() if n.startswith("samples/")]
    rewrite(POPULARITY, broken, {name: b'{"id": 1, "messages": [' for name in names})
    summaries, problems = index(broken)
    assert [s.id for s in summaries] == [str(k) for k in range(1, 11)]
    assert problems == []
    problem = READER.load(broken, summaries[2])
    assert isinstance(problem, LoadProblem)
    assert (problem.index, problem.session_id, problem.field) == (2, 3, "samples/3_epoch_1.json")
    assert problem.message.startswith("not valid JSON")


@pytest.mark.parametrize(
    ("replace", "named"),
    [
        ({"summaries.json": b"[{not json", "_journal/summaries/1.json": b"[]"}, "summaries.json unreadable"),
        ({"summaries.json": b'{"id": 1}'}, "summaries.json is not a list"),
    ],
    ids=["corrupt", "not-a-list"],
)
def test_a_damaged_summaries_member_indexes_by_reading_the_samples(
    tmp_path: Path, replace: dict[str, bytes], named: str
) -> None:
    damaged = tmp_path / "damaged.eval"
    rewrite(POPULARITY, damaged, replace)
    trajectories, _ = read(damaged)
    summaries, problems = index(damaged)
    assert [s.id for s in summaries] == [t.id for t in trajectories]
    assert [s.steps for s in summaries] == [t.decisions for t in trajectories]  # counted from the samples
    assert [verdict(s) for s in summaries] == [verdict(t) for t in trajectories]
    [problem] = problems
    assert problem.severity == "warning" and problem.field == "summaries.json"
    assert problem.message.startswith(named) and "slower" in problem.message
    assert READER.load(damaged, summaries[0]).model_dump() == trajectories[0].model_dump()


def test_summaries_json_is_used_as_far_as_it_parses(tmp_path: Path) -> None:
    """summaries.json is parsed a batch at a time as it inflates (issue 31: the first rows of a
    100,000-sample log come before its member is whole): the samples summarised before the bytes
    that break it are indexed from their summaries, the others by reading them, after the warning."""
    with zipfile.ZipFile(POPULARITY) as archive:
        entries = orjson.loads(archive.read("summaries.json"))
    in_order = sorted(entries, key=lambda entry: entry["id"])[:5]  # (a real log's are in the order samples ended)
    padded = [dict(entry, padding="x" * 20_000) for entry in in_order]  # past the first batch's 64 KiB
    damaged = tmp_path / "damaged.eval"
    rewrite(POPULARITY, damaged, {"summaries.json": orjson.dumps(padded)[:-1] + b", {not json]"})
    trajectories, _ = read(damaged)
    items = list(READER.index(damaged))
    summaries = [item for item in items if isinstance(item, EpisodeSummary)]
    assert [s.id for s in summaries] == [t.id for t in trajectories]
    from_summaries = [s.deferred_outcome is not None for s in summaries]
    first = from_summaries.count(True)
    assert 0 < first <= 5 and from_summaries == [True] * first + [False] * (len(summaries) - first)
    [problem] = [item for item in items if isinstance(item, LoadProblem)]
    assert items.index(problem) == first  # said when found, before the samples read whole
    assert problem.message.startswith("summaries.json unreadable") and "slower" in problem.message
    assert [verdict(s) for s in summaries] == [verdict(t) for t in trajectories]


def test_without_summaries_json_the_journal_summaries_index(tmp_path: Path) -> None:
    """A log still being written has its summaries in ``_journal/summaries/<n>.json``; with neither,
    the samples are read, and the warning says there was no summaries.json."""
    journal_only = tmp_path / "journal.eval"
    none = tmp_path / "none.eval"
    with zipfile.ZipFile(POPULARITY) as old:
        for target, dropped in (
            (journal_only, ("summaries.json",)),
            (none, ("summaries.json", "_journal/summaries/1.json")),
        ):
            with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
                for info in old.infolist():
                    if info.filename not in dropped:
                        new.writestr(info.filename, old.read(info.filename))
    trajectories, _ = read(POPULARITY)
    summaries, problems = index(journal_only)
    assert [s.id for s in summaries] == [t.id for t in trajectories] and problems == []
    summaries, problems = index(none)
    assert [s.id for s in summaries] == [t.id for t in trajectories]
    assert [p.message for p in problems] == [
        "no summaries.json: indexed by reading every sample not summarised (slower)"
    ]


def test_the_app_opens_an_eval_by_its_index_and_loads_an_episode(tmp_path: Path) -> None:
    demos = open_sources([str(DATA / "zstd_tools.eval")])
    [log] = demos.files
    refs = log.episodes
    assert [ref.episode_id for ref in refs] == ["1", "2", "3"]
    episode = log.read_trajectory(refs[1])
    trajectories, _ = read(DATA / "zstd_tools.eval")
    assert episode.model_dump() == trajectories[1].model_dump()


def _directory(path: Path) -> object:
    import mmap

    from replay_tui.formats.inspect_ai import _central_directory

    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        found = _central_directory(data)
    if found is None:
        return None
    names, entries = found
    return names, {name: tuple(entry) for name, entry in entries.items()}


def _zipfile_directory(path: Path) -> object:
    with zipfile.ZipFile(path) as archive:
        fields = ("header_offset", "compress_size", "file_size", "compress_type", "flag_bits", "CRC")
        return archive.namelist(), {i.filename: tuple(getattr(i, f) for f in fields) for i in archive.infolist()}


@pytest.mark.parametrize("path", EVALS, ids=lambda p: p.name)
def test_the_central_directory_is_read_as_zipfile_reads_it(path: Path) -> None:
    """The index reads a zip's directory itself (zipfile's ZipInfo per member was most of a
    100,000-sample log's time to its first rows): the same names and fields as zipfile's."""
    assert _directory(path) == _zipfile_directory(path)


@pytest.mark.slow
def test_a_zip64_directory_and_what_it_leaves_to_zipfile(tmp_path: Path) -> None:
    many = tmp_path / "many.eval"  # past 65,535 members: the zip64 end records
    with zipfile.ZipFile(many, "w", zipfile.ZIP_STORED) as archive:
        for number in range(66_000):
            archive.writestr(f"samples/{number}_epoch_1.json", b"{}")
    assert _directory(many) == _zipfile_directory(many)
    prefixed = tmp_path / "prefixed.eval"  # data before the zip: zipfile's to read
    prefixed.write_bytes(b"#!/bin/sh\n" + POPULARITY.read_bytes())
    cut = tmp_path / "cut.eval"
    cut.write_bytes(POPULARITY.read_bytes()[:-30])
    assert _directory(prefixed) is None and _directory(cut) is None
    assert [s.id for s in index(prefixed)[0]] == [s.id for s in index(POPULARITY)[0]]
