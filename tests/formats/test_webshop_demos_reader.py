"""The seed's demo files through the reader interface every format has (issue 29, step 3): the
webshop-demos reader indexes a file without parsing an episode and loads one at a time, the same
Trajectories as reading it whole; a bad episode is a LoadProblem naming it, the others load."""

from __future__ import annotations

from pathlib import Path

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.examples import example_path
from replay_tui.formats import EpisodeSummary, IndexingReader, reader_for
from tests.hostile import array, good, step


def test_the_index_lists_every_episode_as_reading_it_whole_finds_it() -> None:
    reader = reader_for("webshop-demos")
    assert isinstance(reader, IndexingReader)
    whole = [t for t in reader.read(example_path()) if isinstance(t, Trajectory)]
    summaries = list(reader.index(example_path()))
    assert all(isinstance(s, EpisodeSummary) for s in summaries) and len(summaries) == len(whole) == 100
    for summary, trajectory in zip(summaries, whole, strict=True):
        assert isinstance(summary, EpisodeSummary)
        assert (summary.id, summary.task) == (trajectory.id, trajectory.task)
        assert summary.steps == trajectory.decisions and summary.turns == len(trajectory.steps)
        assert reader.load(example_path(), summary) == trajectory


def test_a_bad_episode_is_indexed_and_its_load_is_a_problem_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "webshop_demonstrations_0-2.json"
    bad = good(2, trajectory=[step(0, llm_action_arguments="not json", action_executed_in_env=None)])
    path.write_bytes(array(good(1), bad, good(3)))
    reader = reader_for("webshop-demos")
    summaries = [s for s in reader.index(path) if isinstance(s, EpisodeSummary)]
    assert [s.id for s in summaries] == ["1", "2", "3"]
    loaded = [reader.load(path, s) for s in summaries]
    assert [type(item) for item in loaded] == [Trajectory, LoadProblem, Trajectory]
    problem = loaded[1]
    assert isinstance(problem, LoadProblem) and problem.session_id == 2 and "llm_action_arguments" in problem.one_line()
