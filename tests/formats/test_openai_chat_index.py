"""The openai-chat reader's lazy index: ``index()`` + ``load()`` give exactly what ``read()`` gives."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import openai_chat
from replay_tui.formats.base import EpisodeSummary, IndexingReader
from replay_tui.formats.openai_chat import OpenAIChatReader

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "openai_chat"
FIXTURES = sorted(p for p in DATA.iterdir() if p.name != "PROVENANCE.md")
READER = OpenAIChatReader()


def split(items: list[object]) -> tuple[list[Trajectory], list[LoadProblem]]:
    return [i for i in items if isinstance(i, Trajectory)], [i for i in items if isinstance(i, LoadProblem)]


def assert_index_matches_read(path: Path) -> list[EpisodeSummary]:
    """``[load(s) for s in index(p)]`` is ``read(p)``'s trajectories, the problems are the same."""
    episodes, problems = split(list(READER.read(path)))
    indexed = list(READER.index(path))
    assert all(isinstance(item, EpisodeSummary | LoadProblem) for item in indexed)
    summaries = [item for item in indexed if isinstance(item, EpisodeSummary)]
    assert [item for item in indexed if isinstance(item, LoadProblem)] == problems
    assert [(s.id, s.task, s.steps, s.reward, s.success, s.outcome) for s in summaries] == [
        (e.id, e.task, e.recorded_calls, e.outcome.reward, e.outcome.success, e.outcome) for e in episodes
    ]
    assert [READER.load(path, summary) for summary in summaries] == episodes
    return summaries


def write_lines(path: Path, records: list[object], newline: str = "\n") -> Path:
    path.write_text("".join(json.dumps(r) + newline for r in records), encoding="utf-8")
    return path


def full_reads(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The records index(path) hands to the full path (the fast decoding refused them)."""
    calls: list[int] = []
    full = OpenAIChatReader._line

    def counted(self: OpenAIChatReader, path: Path, line: bytes, index: int, number: int):  # type: ignore[no-untyped-def]
        calls.append(index)
        return full(self, path, line, index, number)

    with monkeypatch.context() as patch:
        patch.setattr(OpenAIChatReader, "_line", counted)
        list(READER.index(path))
    return calls


def test_the_reader_is_an_indexing_reader() -> None:
    assert isinstance(READER, IndexingReader)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_index_then_load_is_read(path: Path) -> None:
    assert_index_matches_read(path)


def test_jsonl_locators_are_each_lines_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    path = DATA / "synthetic_shapes.jsonl"
    data = path.read_bytes()
    summaries = assert_index_matches_read(path)
    lines = data.splitlines(keepends=True)
    starts = [sum(len(line) for line in lines[:k]) for k in range(len(lines))]
    for summary in summaries:
        offset, length = summary.locator
        assert offset in starts and data[offset : offset + length] == lines[starts.index(offset)]
    assert [s.record for s in summaries] == [0, 1, 4, 5]
    # the two well-formed chat records are indexed without the full path; the others go through it
    assert full_reads(path, monkeypatch) == [2, 3, 4, 5]


def test_real_transcripts_as_json_lines_take_the_fast_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = [
        *json.loads((DATA / "tau_bench_gpt-4o-airline_excerpt.json").read_text()),
        *json.loads((DATA / "tau_bench_crashed_run.json").read_text()),
        json.loads((DATA / "docent__samples__tb_airline.json").read_text()),
    ]
    path = write_lines(tmp_path / "real.jsonl", records * 3, newline="\r\n")
    summaries = assert_index_matches_read(path)
    assert full_reads(path, monkeypatch) == []
    assert [s.id for s in summaries[:5]] == [
        "task-0-trial-0",
        "task-1-trial-0",
        "task-12-trial-0",
        "task-0-trial-0",
        "task-0-trial-0",
    ]
    assert [s.steps for s in summaries[:5]] == [8, 0, 2, 0, 12]
    assert [s.success for s in summaries[:3]] == [False, False, True]  # tau-bench: reward 1 passes
    assert summaries[2].task.startswith("You amelia_sanchez_4739 and you want to cancel")


TRICKY: list[object] = [
    {"id": "plain", "messages": [{"role": "user", "content": "hi"}], "reward": 1},
    {"metadata": {"id": 7, "instruction": "from metadata"}, "messages": [], "score": 0.25},
    {"metadata": None, "messages": [{"role": "user", "content": "metadata null"}]},
    {"id": True, "session_id": "s-1", "messages": [], "success": "yes"},
    {"id": 12345678901234567890123, "messages": []},  # orjson: a float; not an id
    {"id": 2**63, "reward": 2**64 - 1, "messages": []},
    {"task_id": 3, "trial": 1, "traj": [{"role": "user", "content": "tau"}], "reward": 1.0},
    {"task_id": True, "traj": [], "reward": 0},
    {"task_id": "t", "trial": "x", "messages": [], "reward": True},
    {"info": {"task": {"instruction": "from info"}}, "messages": [{"role": "user", "content": "not the task"}]},
    {"info": {"task": "not an object"}, "messages": []},
    {"info": [], "messages": []},
    {"instruction": "   ", "task": {"goal": "an object"}, "messages": [{"role": "user", "content": "  "}]},
    {"task": "a task string", "messages": []},
    {"messages": [{"role": "user", "content": [{"type": "text", "text": "parts"}, {"type": "image_url"}]}]},
    {"messages": [{"role": "user", "content": None}, {"role": "user", "content": 42}]},
    {"messages": [{"role": "user", "content": "\u00e9t\u00e9 \U0001f600"}, {"role": "assistant", "content": "x"}]},
    {"messages": [{"role": "", "content": "no role"}, {"role": "user", "content": "after"}]},
    {"messages": [{"content": "no role at all"}]},
    {"messages": [{"role": 3}]},
    {"messages": "not a list", "traj": []},
    {"messages": [], "traj": "ignored: messages comes first"},
    {"traj": [{"role": "assistant", "tool_calls": [{"function": {"name": "a"}}]}]},
    {
        "messages": [
            {"role": "assistant", "tool_calls": [], "function_call": {"name": "legacy", "arguments": "{}"}},
            {"role": "assistant", "tool_calls": None, "function_call": None, "refusal": None},
            {"role": "assistant", "tool_calls": [{"id": 1, "function": {"name": "b", "arguments": {"k": 1}}}]},
            {"role": "user", "tool_calls": [{"function": {"name": "by a user"}}]},
            {"role": "assistant", "tool_calls": [{"function": {"name": "c"}}], "function_call": {"name": ""}},
        ]
    },
    {"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": ""}}]}]},
    {"messages": [{"role": "assistant", "tool_calls": [{"name": "flat", "arguments": "{}"}]}]},
    {"messages": [{"role": "assistant", "tool_calls": [{"function": None, "name": "flat"}]}]},
    {"messages": [{"role": "assistant", "tool_calls": "x"}]},
    {"messages": [{"role": "assistant", "function_call": "x"}]},
    {"messages": [{"role": "assistant", "type": None, "tool_calls": [{"function": {"name": "typed"}}]}]},
    {"messages": [{"type": "message", "role": "user", "content": "an item"}]},
    {"messages": [{"role": "user", "type": ["unhashable"]}]},
    {"input": [{"role": "user", "content": "q"}, {"type": "function_call", "name": "f", "call_id": "c"}]},
    {"no": "messages"},
    [{"role": "user", "content": "a bare list"}, {"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}],
    "a string",
    {"id": "dup", "id2": 1, "messages": [], "reward": 0.5, "reward_info": {"r": 1}, "status": "done"},
    {"messages": [{"role": "user", "content": "deep " + "[" * 2}], "skipped": [[[[[[[[[[]]]]]]]]]]},
]


def test_tricky_records_summarise_as_read_does(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "tricky.jsonl", TRICKY)
    summaries = assert_index_matches_read(path)
    by_task = {s.task: s for s in summaries}
    assert by_task["from metadata"].id == "7" and by_task["from info"].steps == 0
    assert by_task["parts\n[image]"].id == "tricky#14"


def test_damaged_lines_blank_lines_and_a_bom(tmp_path: Path) -> None:
    good = orjson.dumps({"id": "ok", "messages": [{"role": "user", "content": "x"}]})
    lines = [
        b"\xef\xbb\xbf" + good,  # a BOM before the first record
        b"",
        b"   \t",
        b'{"id": "bad-utf8", "messages": [], "skipped": "\xff\xfe"}',  # msgspec skips it, orjson refuses
        b'{"id": "surrogate", "messages": [], "skipped": "\\ud800"}',
        b'{"id": "deep", "messages": [], "skipped": ' + b"[" * 1100 + b"]" * 1100 + b"}",
        b'{"id": "not deep", "messages": [], "skipped": ' + b"[" * 400 + b"]" * 400 + b"}",
        b'  {"id": "indented", "messages": []}',
        b'{"id": "truncated", "messages": [{"role": "us',
        b"not json at all",
        good.replace(b'"ok"', b'"last"'),  # no newline at the end of the file
    ]
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(b"\n".join(lines))
    summaries = assert_index_matches_read(path)
    assert [s.id for s in summaries] == ["ok", "not deep", "indented", "last"]
    problems = [p for p in READER.index(path) if isinstance(p, LoadProblem)]
    assert [(p.index, p.field) for p in problems] == [
        (1, "line 4"),
        (2, "line 5"),
        (3, "line 6"),
        (6, "line 9"),
        (7, "line 10"),
    ]


def test_a_file_beginning_with_a_bad_line_is_still_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "first_bad.jsonl"
    path.write_text('{"id": "cut", "messages": [\n{"id": "fine", "messages": []}\n', encoding="utf-8")
    summaries = assert_index_matches_read(path)
    assert [s.id for s in summaries] == ["fine"]


@pytest.mark.parametrize("mapped", [True, False], ids=["mmap", "reads"])
@pytest.mark.parametrize("chunk", [1, 7, 64, 1000])
def test_lines_across_chunk_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, mapped: bool
) -> None:
    monkeypatch.setattr(openai_chat, "_CHUNK", chunk)
    monkeypatch.setattr(openai_chat, "_DROP", 1)  # give the pages back after every window
    if not mapped:

        def unmappable(*args: object, **kwargs: object) -> None:
            raise OSError("not a regular file")

        monkeypatch.setattr(openai_chat.mmap, "mmap", unmappable)
    records = [{"id": f"r{k}", "messages": [{"role": "user", "content": "x" * (k * 37 % 300)}]} for k in range(40)]
    path = write_lines(tmp_path / "chunks.jsonl", [*records, *TRICKY])
    summaries = assert_index_matches_read(path)
    data = path.read_bytes()
    for summary in summaries:
        offset, length = summary.locator
        assert data[offset : offset + length].endswith(b"\n") and (offset == 0 or data[offset - 1 : offset] == b"\n")


def test_empty_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    assert list(READER.index(empty)) == list(READER.read(empty))
    missing = tmp_path / "missing.jsonl"
    (problem,) = READER.index(missing)
    assert isinstance(problem, LoadProblem) and problem.message.startswith("cannot read")


def test_load_after_the_file_changed(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "changing.jsonl", [{"id": "a", "messages": []}, {"id": "b", "messages": []}])
    first, second = READER.index(path)
    assert isinstance(first, EpisodeSummary) and isinstance(second, EpisodeSummary)
    path.write_text('{"id": "z", "messages": []}\n{"id": "b", "messages": [\n', encoding="utf-8")
    moved = READER.load(path, first)
    assert isinstance(moved, LoadProblem) and "changed since it was indexed" in moved.message
    broken = READER.load(path, second)
    assert isinstance(broken, LoadProblem) and broken.field == "line 2" and "not JSON" in broken.message
    path.unlink()
    gone = READER.load(path, first)
    assert isinstance(gone, LoadProblem) and gone.message.startswith("cannot read")


def test_documents_are_located_by_record_index(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(
        json.dumps([{"id": "a", "messages": []}, {"id": "b", "messages": 3}, {"id": "c", "messages": []}], indent=1)
    )
    summaries = assert_index_matches_read(path)
    assert [(s.id, s.record, s.locator) for s in summaries] == [("a", 0, 0), ("c", 2, 2)]
    missing = READER.load(path, EpisodeSummary(id="b", record=1, locator=1))
    assert isinstance(missing, LoadProblem) and missing.field == "messages"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    how=st.sampled_from(["truncate", "flip", "splice"]),
    at=st.floats(min_value=0.0, max_value=1.0),
    junk=st.binary(min_size=1, max_size=64)
    | st.sampled_from([b"\x00", b'"', b"}", b"]", b"\n", b"\xff\xfe", b"[[[[", b"\xef\xbb\xbf", b'"role": ""']),
    sample=st.sampled_from(["synthetic_shapes.jsonl", "tricky"]),
)
def test_a_damaged_file_indexes_as_it_reads(tmp_path: Path, how: str, at: float, junk: bytes, sample: str) -> None:
    if sample == "tricky":
        data = "".join(json.dumps(r) + "\n" for r in TRICKY).encode()
    else:
        data = (DATA / sample).read_bytes()
    cut = int(len(data) * at)
    if how == "truncate":
        data = data[:cut]
    elif how == "flip":
        data = data[:cut] + bytes([data[cut] ^ 0xFF]) + data[cut + 1 :] if cut < len(data) else data + junk
    else:
        data = data[:cut] + junk + data[cut:]
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(data)
    assert_index_matches_read(path)


def test_a_number_orjson_cannot_hold_in_a_skipped_field_is_named_when_loaded(tmp_path: Path) -> None:
    # The one known difference: msgspec skips a field without checking its number's range, orjson
    # refuses 1e999. The index lists the line; opening it names the problem read() names.
    path = tmp_path / "overflow.jsonl"
    path.write_text('{"id": "ok", "messages": []}\n{"id": "inf", "messages": [], "skipped": 1e999}\n')
    _, summary = READER.index(path)
    assert isinstance(summary, EpisodeSummary) and summary.id == "inf"
    (problem,) = [item for item in READER.read(path) if isinstance(item, LoadProblem)]
    assert READER.load(path, summary) == problem and problem.field == "line 2"


def test_an_index_abandoned_halfway_closes_cleanly(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "many.jsonl", [{"id": f"r{k}", "messages": []} for k in range(50)])
    index = READER.index(path)
    first = next(index)
    assert isinstance(first, EpisodeSummary) and READER.load(path, first) == next(iter(READER.read(path)))
    index.close()  # the mapping is released (or left to the collector), never an exception


class _CountingFile:
    """A file object that adds every byte read from it to ``counter``."""

    def __init__(self, handle, counter: list[int]) -> None:
        self._handle, self._counter = handle, counter

    def read(self, *args):
        data = self._handle.read(*args)
        self._counter[0] += len(data)
        return data

    def readline(self, *args):
        return self.read(0) + self._count(self._handle.readline(*args))

    def _count(self, data: bytes) -> bytes:
        self._counter[0] += len(data)
        return data

    def __iter__(self):
        return self

    def __next__(self) -> bytes:
        return self._count(next(self._handle))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._handle.close()

    def __getattr__(self, name: str):
        return getattr(self._handle, name)


@pytest.mark.parametrize("kind", ["cassette", "document"])
def test_a_whole_file_is_read_once_for_all_its_episodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind) -> None:
    """Issue 27: a 20,000-interaction cassette was parsed again for every episode (killed at 180 s)."""
    from replay_tui.sources import open_sources
    from tests.hostile import cassette

    episodes = 300
    if kind == "cassette":
        path = tmp_path / "calls.yaml"
        path.write_bytes(cassette(episodes))
    else:
        path = tmp_path / "results.json"
        call = {"id": "c", "type": "function", "function": {"name": "act", "arguments": "{}"}}
        chat = [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": [call]}]
        path.write_text(json.dumps([{"id": f"e{n}", "messages": chat} for n in range(episodes)], indent=1))
    read = [0]
    original = Path.open

    def counting_open(self: Path, *args, **kwargs):
        handle = original(self, *args, **kwargs)
        return _CountingFile(handle, read) if self == path else handle

    monkeypatch.setattr(Path, "open", counting_open)
    monkeypatch.setattr(openai_chat, "READER", OpenAIChatReader())  # nothing kept from another test
    demos = open_sources(path, fmt="openai-chat")
    assert len(demos.session_ids) == episodes
    for sid in demos.session_ids:
        assert demos.problem_for(sid) is None
        assert demos.trajectory(sid).decisions
    size = path.stat().st_size
    assert read[0] <= 2 * size + 64 * 1024, f"{read[0]:,} bytes read of a {size:,}-byte file"
