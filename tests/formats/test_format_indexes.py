"""Every reader indexes: ``index()`` lists what ``read()`` reads (ids, counts, outcomes, problems) and
``load()`` of each summary is ``read()``'s episode, on every real sample of the format; a malformed
record is one LoadProblem naming its file and record while the rest index (issue 31)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import reader_for
from replay_tui.formats.base import EpisodeSummary, IndexingReader
from replay_tui.sources import open_sources

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"
FORMATS = {
    "openhands": "openhands",
    "tau2": "tau2",
    "webshop-human": "webshop_human",
    "atif": "atif",
    "browsergym": "browsergym",
}


def samples(folder: str) -> list[Path]:
    return sorted(p for p in (DATA / folder).iterdir() if p.name != "PROVENANCE.md")


CASES = [(name, path) for name, folder in FORMATS.items() for path in samples(folder)]


def assert_index_is_read(name: str, path: Path, reader: Any = None) -> list[EpisodeSummary]:
    reader = reader or reader_for(name)
    assert isinstance(reader, IndexingReader)
    read = list(reader.read(path))
    episodes = [item for item in read if isinstance(item, Trajectory)]
    indexed = list(reader.index(path))
    summaries = [item for item in indexed if isinstance(item, EpisodeSummary)]
    assert len(summaries) + sum(isinstance(item, LoadProblem) for item in indexed) == len(indexed)
    assert [item for item in indexed if isinstance(item, LoadProblem)] == [
        item for item in read if isinstance(item, LoadProblem)
    ]
    assert [(s.id, s.task, s.steps, s.turns, s.reward, s.success) for s in summaries] == [
        (e.id, e.task, e.decisions, len(e.steps), e.outcome.reward, e.outcome.success) for e in episodes
    ]
    assert [s.full_outcome() for s in summaries] == [e.outcome for e in episodes]
    assert [reader.load(path, s) for s in summaries] == episodes
    return summaries


@pytest.mark.parametrize(("name", "path"), CASES, ids=lambda v: v.name if isinstance(v, Path) else v)
def test_index_then_load_is_read(name: str, path: Path) -> None:
    summaries = assert_index_is_read(name, path)
    demos = open_sources([path], fmt=name, skip_unreadable=True)
    refs = list(demos)
    assert [ref.episode_id for ref in refs] == [s.id for s in summaries]
    assert [ref.raw.locator for ref in refs] == [s.locator for s in summaries]  # the rows are the index's
    if refs:
        assert demos.trajectory(refs[-1].session_id).id == summaries[-1].id


def test_an_openhands_eval_output_is_indexed_by_line(tmp_path: Path) -> None:
    """Each evaluation line's locator is its bytes; a broken line is one problem naming file and
    line, the lines around it index and load; the set opened lists the rows from the index."""
    lines = (DATA / "openhands" / "multi_swe_bench__examples__output.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "output.jsonl"
    path.write_bytes(lines[0] + b'{"instance_id": "broken", "history": [\n' + b"".join(lines[1:]))
    summaries = assert_index_is_read("openhands", path)
    data = path.read_bytes()
    assert [s.record for s in summaries] == [0, 2, 3][: len(summaries)]
    for summary in summaries:
        offset, length, number = summary.locator
        assert data[offset : offset + length] == data.splitlines(keepends=True)[number]
        assert summary.outcome is None  # built when asked, never held for every row
    problems = [item for item in reader_for("openhands").index(path) if isinstance(item, LoadProblem)]
    assert [(p.file, p.index) for p in problems] == [("output.jsonl", 1)]
    assert "line 2" in problems[0].message
    demos = open_sources([path])
    assert [ref.episode_id for ref in demos] == [s.id for s in summaries]
    assert [ref.decision_steps for ref in demos] == [s.steps for s in summaries]


TAU2_TELECOM = DATA / "tau2" / "2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json"


def test_a_tau2_results_file_is_indexed_by_run(tmp_path: Path) -> None:
    """Runs located by their bytes (whatever the file's size), a malformed run one problem naming
    the file and the run while the others index and load."""
    data = orjson.loads(TAU2_TELECOM.read_bytes())
    data["simulations"][1]["messages"] = {"oops": 1}
    path = tmp_path / "results.json"
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    summaries = assert_index_is_read("tau2", path)
    assert len(summaries) == len(data["simulations"]) - 1
    raw = path.read_bytes()
    for summary in summaries:
        run = orjson.loads(raw[summary.locator.begin : summary.locator.end])
        assert run["id"] == summary.id or f"{run['task_id']}#{run['trial']}" == summary.id
        assert summary.outcome is None  # built from the run's bytes when asked
    problems = [item for item in reader_for("tau2").index(path) if isinstance(item, LoadProblem)]
    assert [(p.file, p.index, p.session_id, p.field) for p in problems] == [
        ("results.json", 1, data["simulations"][1]["id"], "messages")
    ]


def test_a_tau2_experiment_folder_is_indexed_by_run_file(tmp_path: Path) -> None:
    data = orjson.loads(TAU2_TELECOM.read_bytes())
    runs = data.pop("simulations")
    (tmp_path / "results.json").write_bytes(orjson.dumps(data))
    (tmp_path / "simulations").mkdir()
    for run in runs:
        (tmp_path / "simulations" / f"{run['id']}.json").write_bytes(orjson.dumps(run))
    summaries = assert_index_is_read("tau2", tmp_path)
    assert len(summaries) == len(runs)
    assert {s.locator.run.name for s in summaries} == {f"{run['id']}.json" for run in runs}


def test_webshop_human_sessions_are_indexed_by_their_first_line(tmp_path: Path) -> None:
    """Sessions of one file (one repeated: its second part keeps its ``#2`` id when loaded alone),
    a broken line one problem naming the file and the line while every session indexes and loads."""
    parts = [p.read_bytes() for p in samples("webshop_human")]
    path = tmp_path / "all_trajs.jsonl"
    path.write_bytes(parts[0] + parts[1] + b"{not json\n" + parts[2] + parts[0])
    summaries = assert_index_is_read("webshop-human", path)
    assert len(summaries) == 4 and summaries[3].id == f"{summaries[0].id}#2"
    problems = [item for item in reader_for("webshop-human").index(path) if isinstance(item, LoadProblem)]
    broken = parts[0].count(b"\n") + parts[1].count(b"\n") + 1
    assert [(p.file, p.field) for p in problems] == [("all_trajs.jsonl", f"line {broken}")]
    assert [s.locator.line for s in summaries] == [
        1,
        parts[0].count(b"\n") + 1,
        broken + 1,
        broken + 1 + parts[2].count(b"\n"),
    ]


def test_a_browsergym_study_is_indexed_by_experiment_with_its_pickles(tmp_path: Path) -> None:
    """A study folder read with its step pickles: one experiment held at a time, each loaded again
    from its folder; a broken step file is a problem naming the experiment and the file."""
    for sample in samples("browsergym"):
        shutil.copytree(sample, tmp_path / sample.name)
    broken = tmp_path / samples("browsergym")[1].name / "step_2.pkl.gz"
    broken.write_bytes(b"not gzip")
    reader = reader_for("browsergym").allowing_pickles()
    summaries = assert_index_is_read("browsergym", tmp_path, reader)
    assert [s.locator[0].name for s in summaries] == [p.name for p in samples("browsergym")]
    assert sum(s.steps for s in summaries) > 0
    problems = [p for p in reader.index(tmp_path) if isinstance(p, LoadProblem) and p.severity == "error"]
    assert [(p.file, p.index) for p in problems] == [(f"{broken.parent.name}/step_2.pkl.gz", 1)]


def test_an_atif_job_folder_is_indexed_by_trial(tmp_path: Path) -> None:
    """A Harbor job folder: each trial's trajectory with its sub-agents, loaded from its trial file
    (read once for all its episodes); a trial whose file is not JSON is one problem naming it."""
    atif = DATA / "atif"
    for number, sample in enumerate(
        [
            "terminus_2__hello-world-context-summarization.trajectory.json",
            "broken",
            "terminus_2__hello-world-timeout.trajectory.json",
        ]
    ):
        agent = tmp_path / f"trial-{number}" / "agent"
        agent.mkdir(parents=True)
        if sample == "broken":
            (agent / "trajectory.json").write_text('{"schema_version": "ATIF-v1.4", "steps": [')
            continue
        (agent / "trajectory.json").write_bytes((atif / sample).read_bytes())
        for sub in atif.glob(sample.replace(".json", ".summarization-*.json")):
            (agent / sub.name.replace(sample.split(".trajectory")[0] + ".", "")).write_bytes(sub.read_bytes())
    summaries = assert_index_is_read("atif", tmp_path)
    assert [s.locator[0].parent.parent.name for s in summaries].count("trial-0") == 4
    assert [s.locator[1] for s in summaries] == [0, 1, 2, 3, 0]
    problems = [p for p in reader_for("atif").index(tmp_path) if isinstance(p, LoadProblem)]
    assert [p.file for p in problems] == ["trajectory.json"]


@pytest.mark.parametrize(
    ("name", "sample"),
    [
        ("openhands", DATA / "openhands" / "multi_swe_bench__examples__output.jsonl"),
        ("tau2", TAU2_TELECOM),
        ("webshop-human", DATA / "webshop_human" / "20220427_1_12.jsonl"),
    ],
)
def test_a_log_changed_after_its_index_is_a_problem_on_load(tmp_path: Path, name: str, sample: Path) -> None:
    path = tmp_path / sample.name
    path.write_bytes(sample.read_bytes())
    reader = reader_for(name)
    summaries = [s for s in reader.index(path) if isinstance(s, EpisodeSummary)]
    path.write_bytes(b"\n" * 7 + sample.read_bytes()[: len(sample.read_bytes()) // 3])
    found = reader.load(path, summaries[-1])
    assert isinstance(found, LoadProblem) and found.file == sample.name


def test_an_openhands_eval_output_with_a_bom_blank_lines_and_crlf_is_read_a_line_at_a_time(tmp_path: Path) -> None:
    lines = (DATA / "openhands" / "resolver__mock_output__output.jsonl").read_bytes().splitlines()
    path = tmp_path / "output.jsonl"
    path.write_bytes(b"\xef\xbb\xbf\r\n\r\n" + b"\r\n\r\n".join(lines) + b"\r\n")
    summaries = assert_index_is_read("openhands", path)
    assert [s.record for s in summaries] == [2, 4][: len(lines)]
    assert all(isinstance(s.locator, tuple) for s in summaries)
