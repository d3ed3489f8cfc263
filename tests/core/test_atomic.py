"""Atomic saves (issue 19): a writer killed mid-save leaves the sidecar intact, and the temporary
files it leaves are removed on the next load or save of that file (ours only, and only old ones). The
writers are processes forked from the worker's fork server (``tests/forked.py``): a SIGKILL ends a process
as it ends a fresh interpreter, without one's ~0.8 s of imports per kill."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import orjson

from replay_tui.annotations import AnnotationFile, AnnotationStore
from replay_tui.fileio import PROCESS_START, atomic_write_bytes, clean_stale_temp_files, stale_temp_files
from tests import forked

ROOT = Path(__file__).resolve().parents[2]
KILLS = 24

READY_TIMEOUT_S = 300
"""A hang guard, not a timing: a writer not ready after this long failed."""


def write_forever(path: str) -> None:
    """A writer (in a process forked for it, ``tests/forked.py``) that does nothing but save a big sidecar."""
    store = AnnotationStore(path)
    store.set_note(1, None, "x" * 8_000_000)  # a big sidecar: each write takes a while
    versions = []
    for version in range(4):
        store.set_note(2, None, f"version {version}")
        versions.append(store.to_json())
    print("ready", flush=True)
    while True:  # nothing but saves, so a kill lands inside one (between the temp file and the rename)
        for data in versions:
            store.to_json = lambda data=data: data  # type: ignore[method-assign]
            store.save()


def save_a_note_after(path: str) -> None:
    """The next save, by a new process (the app started again)."""
    store = AnnotationStore.load(path)
    store.set_note(3, None, "after")
    store.save()


def _temp(directory: Path, name: str, age: float) -> Path:
    path = directory / name
    path.write_bytes(b"half a sidecar")
    when = PROCESS_START - age
    os.utime(path, (when, when))
    return path


def test_only_our_old_temp_files_are_removed(tmp_path):
    sidecar = tmp_path / "demos.annotations.json"
    stale = [
        _temp(tmp_path, ".demos.annotations.json.ab12cd_9.tmp", 60),
        _temp(tmp_path, ".demos.annotations.json.zz99zz99.tmp", 1),
    ]
    fresh = _temp(tmp_path, ".demos.annotations.json.fresh123.tmp", -30)  # a concurrent writer's, newer than us
    others = [
        _temp(tmp_path, ".other.json.ab12cd34.tmp", 60),  # another file's
        _temp(tmp_path, "demos.annotations.json.ab12cd34.tmp", 60),  # not our pattern (no leading dot)
        _temp(tmp_path, ".demos.annotations.json.ab12cd34.bak", 60),
        _temp(tmp_path, ".demos.annotations.json.a.tmp", 60),
    ]
    assert stale_temp_files(sidecar) == sorted(stale)
    AnnotationStore.load(sidecar)  # a missing sidecar: still cleaned on load
    assert not any(p.exists() for p in stale)
    assert fresh.exists() and all(p.exists() for p in others)
    again = _temp(tmp_path, ".demos.annotations.json.again123.tmp", 5)
    atomic_write_bytes(sidecar, b"{}")  # and on save
    assert not again.exists() and fresh.exists() and sidecar.read_bytes() == b"{}"
    assert clean_stale_temp_files(tmp_path / "missing-dir" / "x.json") == 0


def test_a_writer_killed_mid_save_leaves_the_sidecar_intact_and_no_temp_files_after_the_next_save(tmp_path):
    sidecar = tmp_path / "demos.annotations.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rng = random.Random(19)
    versions = []
    mid_save = 0  # kills that left a temporary file: they landed inside a save
    for _ in range(KILLS):
        writer = forked.start(write_forever, str(sidecar), cwd=tmp_path, env=env)
        try:
            assert writer.wait_for_output("ready\n", READY_TIMEOUT_S), writer.err.read_text()
            time.sleep(rng.uniform(0.0, 0.15))
            assert writer.kill() == -signal.SIGKILL
        finally:
            writer.close()
        mid_save += bool(stale_temp_files(sidecar, older_than=time.time() + 1))
        if sidecar.exists():  # intact: the whole of one version, never half of one
            data = AnnotationFile.model_validate(orjson.loads(sidecar.read_bytes()))
            notes = {a.session_id: a.note for a in data.annotations}
            assert len(notes[1]) == 8_000_000
            versions.append(notes.get(2))
    assert versions and all(v is None or v.startswith("version ") for v in versions)
    assert mid_save >= KILLS // 4, "the kills should land inside saves"
    print(f"{KILLS} kills, {mid_save} inside a save: the sidecar intact {len(versions)} times")
    saved = forked.run(save_a_note_after, str(sidecar), cwd=tmp_path, env=env, timeout=READY_TIMEOUT_S)
    assert saved.returncode == 0, saved.stderr
    assert [p.name for p in tmp_path.iterdir()] == [sidecar.name]
    assert AnnotationStore.load(sidecar).get(3, None).note == "after"
