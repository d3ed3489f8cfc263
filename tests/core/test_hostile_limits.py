"""Expansion, depth and cost limits (issue 27, items 4-7): small hostile inputs must stay small.

Each case of :data:`tests.hostile.LIMIT_CASES` (zip and YAML bombs, BrowserGym pickles and trees
nested past the recursion limit, a zero-stride screenshot, the two quadratic prompt shapes) is built
in the test's folder and run in its own process under an address-space limit: ``replay --all
--mode stub`` ends with the case's exit code and no traceback, the loader names the cap or walker
limit it hit, and nothing but the test's folder changes. The process is forked from the worker's fork
server (``tests/forked.py``: a memory cap, a timeout, a folder and environment of its own, without ~0.8 s
of CPU of imports twice a case); ``tests/core/test_hostile.py`` runs commands as a shell does.
"""

from __future__ import annotations

import json
import lzma
import os
import struct
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import forked
from tests.hostile import LIMIT_CASES, LIMITS_BY_NAME, LZMA_BOMB, QUADRATIC, GiB, MiB

ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 1 * GiB
"""Address space of each run: the CLI needs about 300 MB; every bomb here inflates to GiBs."""
TIME_LIMIT_S = 300
"""A hang guard, not a timing: a case that is still running after this long failed."""
QUADRATIC_TIME_LIMIT_S = 60
"""The same for the shapes that were quadratic before issue 29 (linear now: they never take minutes)."""


def _run(
    folder: Path, target: Callable[..., int | None], *args: str, timeout: float = TIME_LIMIT_S
) -> subprocess.CompletedProcess[str]:
    home = folder / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
        "TMPDIR": str(home),
    }
    return forked.run(target, *args, cwd=folder, env=env, timeout=timeout, memory=MEMORY_LIMIT, argv=args)


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.mark.parametrize("name", [case.name for case in LIMIT_CASES])
def test_a_small_hostile_input_ends_cleanly_in_bounded_memory(name, tmp_path):
    case = LIMITS_BY_NAME[name]
    inputs = tmp_path / "in"
    inputs.mkdir()
    target = case.build(inputs)
    before = _tree(inputs)
    command = ["replay", "--demos", str(target), "--all", "--mode", "stub"]
    timeout = QUADRATIC_TIME_LIMIT_S if name in QUADRATIC else TIME_LIMIT_S
    proc = _run(tmp_path, forked.cli_main, *command, "--no-progress", "--no-save-run", *case.argv, timeout=timeout)
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in case.exits, proc.stderr[-2000:]
    if proc.returncode == 2:
        assert proc.stderr.rstrip().splitlines()[-1].startswith("replay-tui replay: error: ")
    allow_pickle = "1" if "--allow-pickle" in case.argv else "0"
    probe = _run(tmp_path, forked.load_problems, str(target), allow_pickle, timeout=timeout)
    assert probe.returncode == 0 and not probe.stderr, probe.stderr[-2000:]
    *problems, usable = probe.stdout.splitlines()
    if case.exits == {0}:  # the episode keeps the rest: it is usable, the problem only names the part
        assert usable != "usable 0", probe.stdout[-2000:]
    if case.problem:
        assert any(case.problem in line for line in problems), probe.stdout[-2000:]
    assert _tree(inputs) == before
    assert {p.name for p in tmp_path.iterdir()} == {"in", "home"}


def test_every_class_of_the_issue_has_a_case():
    assert {case.row for case in LIMIT_CASES} == {
        "decompression and expansion",
        "browsergym depth and size",
        "quadratic prompts",
    }
    assert set(LIMITS_BY_NAME) >= QUADRATIC


def test_the_stored_lzma_bomb_is_the_one_its_generator_describes():
    """``tests/data/bombs/eval_lzma_bomb.eval`` (kept: compressing its GiB takes seconds) is an inspect_ai log
    whose one sample is an LZMA member that declares 1 GiB, takes under 200 KB and inflates to zeros."""
    with zipfile.ZipFile(LZMA_BOMB) as archive:
        header, sample = archive.infolist()
        assert (header.filename, header.compress_type) == ("header.json", zipfile.ZIP_DEFLATED)
        assert json.loads(archive.read(header))["eval"] == {"task": "bomb"}
        assert (sample.filename, sample.compress_type, sample.file_size) == (
            "samples/1_epoch_1.json",
            zipfile.ZIP_LZMA,
            GiB,
        )
        assert sample.compress_size < 200_000
    data = LZMA_BOMB.read_bytes()
    name_length, extra_length = struct.unpack_from("<HH", data, sample.header_offset + 26)
    member = data[sample.header_offset + 30 + name_length + extra_length :][: sample.compress_size]
    _version, props_length = struct.unpack_from("<HH", member)  # zip's LZMA member: version, the properties
    props = member[4 : 4 + props_length]
    assert props == bytes([0x5D]) + (1 << 18).to_bytes(4, "little")  # lc=3 lp=0 pb=2, a 256 KiB dictionary
    inflate = lzma.LZMADecompressor(
        lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA1, "lc": 3, "lp": 0, "pb": 2, "dict_size": 1 << 18}]
    )
    assert inflate.decompress(member[4 + props_length :], max_length=MiB) == bytes(MiB)  # zeros (zipfile's read
    # would inflate the whole GiB to check its CRC)
