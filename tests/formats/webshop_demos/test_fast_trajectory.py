"""A seed demo file yields one Trajectory however it is read (issue 29): the webshop-demos reader
(``replay-tui formats``), the app (the parsed episode) and the replay's fast reading
(:func:`replay_tui.formats.webshop_demos.fast.fast_trajectory`, built without validation) give equal Trajectories,
and the views read that one (:func:`replay_tui.sources.trajectory_of`, :func:`~replay_tui.sources.read_trajectory`)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from replay_tui.formats import reader_for
from replay_tui.formats.webshop_demos import from_webshop_episode, synth
from replay_tui.formats.webshop_demos.fast import PromptMessages, fast_trajectory
from replay_tui.formats.webshop_demos.index import DemoFile
from replay_tui.sources import open_sources, read_trajectory, trajectory_of
from tests.hostile import CASES, write_corpus

EXAMPLE = Path(__file__).resolve().parents[3] / "replay_tui" / "examples" / "webshop_demonstrations_0-99.json"


def compare_file(path: Path) -> int:
    """How many episodes of ``path`` read fast; asserts the three readings give one Trajectory."""
    by_reader = {t.id: t for t in reader_for("webshop-demos").read(path) if not hasattr(t, "message")}
    demos = open_sources([path])  # what the app and the CLI open
    fast_count = 0
    for demo in demos.files:
        assert isinstance(demo, DemoFile)
        for ref in demo.episodes:
            fast = demo.read_fast(ref)
            if fast is None:
                continue
            fast_count += 1
            ours = fast_trajectory(fast)
            theirs = from_webshop_episode(demos.episode(ref.session_id))
            assert ours == theirs, (path.name, ref.index)
            assert ours.model_dump() == theirs.model_dump() == by_reader[ours.id].model_dump(), (path.name, ref.index)
            assert [s.kind for s in ours.steps] == [s.kind for s in theirs.steps]
            # what the views read (the stepper, search, the MCP server): the same Trajectory
            assert trajectory_of(demos, ref.session_id).model_dump() == theirs.model_dump(), (path.name, ref.index)
            assert read_trajectory(ref).model_dump() == theirs.model_dump(), (path.name, ref.index)
    return fast_count


def test_the_bundled_example_is_one_trajectory_read_any_way() -> None:
    assert compare_file(EXAMPLE) >= 85


@pytest.mark.parametrize("quirk_rate", [0.0, 0.6])
def test_synthetic_files_are_one_trajectory_read_any_way(tmp_path: Path, quirk_rate: float) -> None:
    path = tmp_path / "synth.json"
    synth.write_demo_file(path, start=0, count=120, seed=11, quirk_rate=quirk_rate)
    assert compare_file(path) > 0


def test_every_hostile_case_read_fast_is_the_reader_s_trajectory(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path)
    checked = 0
    for case in CASES:
        try:
            checked += compare_file(paths[case.name])
        except Exception as exc:  # a file that cannot be opened at all has nothing to read fast
            assert type(exc).__name__ == "DemoFileError", (case.name, exc)
    assert checked > 20


def test_a_prompt_is_parsed_when_read_and_a_bad_one_is_no_message() -> None:
    prompt = PromptMessages("[{'role': 'system', 'content': 'be brief'}, {'role': 'user', 'content': 'hi'}]")
    assert prompt._messages is None  # nothing parsed until read
    assert [m.role for m in prompt] == ["system", "user"] and prompt[1].content == "hi" and len(prompt) == 2
    assert PromptMessages("[{'role': ") == [] and PromptMessages(None) == []
    assert pickle.loads(pickle.dumps(prompt)) == prompt
