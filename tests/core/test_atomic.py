"""Atomic saves (issue 19): a writer killed mid-save leaves the sidecar intact, and the temporary
files it leaves are removed on the next load or save of that file (ours only, and only old ones)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from replay_tui.annotations import AnnotationFile, AnnotationStore
from replay_tui.fileio import PROCESS_START, atomic_write_bytes, clean_stale_temp_files, stale_temp_files

ROOT = Path(__file__).resolve().parents[2]
KILLS = 24

WRITER = """
import sys
from replay_tui.annotations import AnnotationStore

store = AnnotationStore(sys.argv[1])
store.set_note(1, None, "x" * 8_000_000)  # a big sidecar: each write takes a while
versions = []
for version in range(4):
    store.set_note(2, None, f"version {version}")
    versions.append(store.to_json())
print("ready", flush=True)
while True:  # nothing but saves, so a kill lands inside one (between the temp file and the rename)
    for data in versions:
        store.to_json = lambda data=data: data
        store.save()
"""


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
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(sidecar)], stdout=subprocess.PIPE, env=env, text=True
        )
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.15))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        mid_save += bool(stale_temp_files(sidecar, older_than=time.time() + 1))
        if sidecar.exists():  # intact: the whole of one version, never half of one
            data = AnnotationFile.model_validate(orjson.loads(sidecar.read_bytes()))
            notes = {a.session_id: a.note for a in data.annotations}
            assert len(notes[1]) == 8_000_000
            versions.append(notes.get(2))
    assert versions and all(v is None or v.startswith("version ") for v in versions)
    assert mid_save >= KILLS // 4, "the kills should land inside saves"
    print(f"{KILLS} kills, {mid_save} inside a save: the sidecar intact {len(versions)} times")
    # The next save, by a new process (the app started again), removes every leftover.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from replay_tui.annotations import AnnotationStore as S; "
            "s = S.load(sys.argv[1]); s.set_note(3, None, 'after'); s.save()",
            str(sidecar),
        ],
        env=env,
        check=True,
    )
    assert [p.name for p in tmp_path.iterdir()] == [sidecar.name]
    assert AnnotationStore.load(sidecar).get(3, None).note == "after"
