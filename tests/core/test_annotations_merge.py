"""Two writers on one sidecar: every save merges, nobody's tag or note is lost."""

import subprocess
import sys
import textwrap

import orjson
import pytest

from replay_tui.annotations import AnnotationError, AnnotationStore


def on_disk(path):
    data = orjson.loads(path.read_bytes())
    return {(a["session_id"], a["step_label"]): (sorted(a["tags"]), a["note"]) for a in data["annotations"]}


def test_a_tags_b_notes_a_tags_again_keeps_everything(tmp_path):
    path = tmp_path / "d.annotations.json"
    a, b = AnnotationStore.load(path), AnnotationStore.load(path)
    a.toggle_tag(1, None, "policy-bug")
    a.save()
    b.set_note(2, "3", "the search query lost the size")
    b.save()
    assert b.merged_external == 1 and b.get(1) is not None  # B now shows A's tag too
    a.toggle_tag(3, None, "env")
    a.save()
    assert on_disk(path) == {
        (1, None): (["policy-bug"], ""),
        (2, "3"): ([], "the search query lost the size"),
        (3, None): (["env"], ""),
    }
    assert a.merged_external == 1 and a.get(2, "3").note == "the search query lost the size"


def test_a_tag_and_a_note_on_the_same_step_both_stay_and_removals_merge(tmp_path):
    path = tmp_path / "d.annotations.json"
    a = AnnotationStore.load(path)
    a.toggle_tag(5, "1", "prompt")
    a.toggle_tag(5, "1", "env")
    a.save()
    b = AnnotationStore.load(path)
    a.toggle_tag(5, "1", "prompt")  # A removes one tag...
    b.set_note(5, "1", "see the thinking")  # ...while B writes a note on the same step
    b.save()
    a.save()
    assert on_disk(path) == {(5, "1"): (["env"], "see the thinking")}
    a.toggle_tag(5, "1", "env")
    a.set_note(5, "1", "")
    a.save()
    assert on_disk(path) == {}  # emptied on both fields: gone


def test_a_new_label_from_another_writer_is_kept(tmp_path):
    path = tmp_path / "d.annotations.json"
    a, b = AnnotationStore.load(path), AnnotationStore.load(path)
    a.toggle_tag(1, None, "flaky-site")
    a.save()
    b.toggle_tag(2, None, "grader-bug")
    b.save()
    labels = orjson.loads(path.read_bytes())["labels"]
    assert "flaky-site" in labels and "grader-bug" in labels


def test_a_sidecar_corrupted_underneath_is_not_overwritten(tmp_path):
    path = tmp_path / "d.annotations.json"
    a = AnnotationStore.load(path)
    a.toggle_tag(1, None, "env")
    a.save()
    path.write_bytes(b'{"annotations": [')
    a.toggle_tag(2, None, "env")
    with pytest.raises(AnnotationError, match="cannot read annotations"):
        a.save()
    assert path.read_bytes() == b'{"annotations": ['  # left for the user to look at
    assert a.dirty and a.get(2) is not None  # and the edit is still here


WRITER = textwrap.dedent(
    """
    import sys
    from replay_tui.annotations import AnnotationStore
    path, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = AnnotationStore.load(path)
    for session in range(first, first + count):
        store.toggle_tag(session, None, "policy-bug")
        store.set_note(session, "0", f"note {session}")
        store.save()
    """
)


def test_two_processes_saving_concurrently_keep_all_changes(tmp_path):
    path = tmp_path / "d.annotations.json"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = [subprocess.Popen([sys.executable, str(script), str(path), str(first), "40"]) for first in (0, 1000, 2000)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    found = on_disk(path)
    for first in (0, 1000, 2000):
        for session in range(first, first + 40):
            assert found[(session, None)] == (["policy-bug"], "")
            assert found[(session, "0")] == ([], f"note {session}")
    assert len(found) == 240
