"""No reader raises on damaged input: truncated, bit-flipped or spliced copies of the real samples.

Every reader promises errors as values (a LoadProblem per bad record, the rest still read); this
checks the promise on bytes the authors did not think of.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import FormatError, detect, reader_for

DATA = Path(__file__).parent.parent / "data" / "formats"
SAMPLES = sorted(
    p for p in DATA.glob("*/*") if p.is_file() and p.name != "PROVENANCE.md" and p.stat().st_size < 400_000
)


def damage(data: bytes, how: str, at: float, junk: bytes) -> bytes:
    cut = int(len(data) * at)
    if how == "truncate":
        return data[:cut]
    if how == "flip":
        return data[:cut] + bytes([data[cut] ^ 0xFF]) + data[cut + 1 :] if cut < len(data) else data + junk
    return data[:cut] + junk + data[cut:]  # splice


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    how=st.sampled_from(["truncate", "flip", "splice"]),
    at=st.floats(min_value=0.0, max_value=1.0),
    junk=st.binary(min_size=1, max_size=64) | st.sampled_from([b"\x00", b'"', b"}", b"]", b"\n", b"\xff\xfe", b"[[[["]),
)
def test_a_damaged_sample_is_read_without_an_exception(
    sample: Path, tmp_path: Path, how: str, at: float, junk: bytes
) -> None:
    target = tmp_path / sample.name
    target.write_bytes(damage(_bytes(sample), how, at, junk))
    own = reader_for(sample.parent.name.replace("_", "-"))
    items = list(own.read(target))  # the sample's own reader, forced
    assert all(isinstance(item, Trajectory | LoadProblem) for item in items)
    try:
        reader, _ = detect(target)
    except FormatError:
        return
    if reader is not own:  # the own reader again would read the same bytes as above, to the same items
        assert all(isinstance(item, Trajectory | LoadProblem) for item in reader.read(target))


@functools.cache
def _bytes(sample: Path) -> bytes:
    """A sample's bytes, read once for the examples of its test (not once per example)."""
    return sample.read_bytes()


@pytest.mark.parametrize("folder", sorted(p for p in (DATA / "browsergym").glob("*") if p.is_dir()), ids=str)
def test_a_damaged_experiment_folder_is_read_without_an_exception(folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    for path in sorted(copy.iterdir()):
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    reader = reader_for("browsergym")
    for allowed in (reader, reader.allowing_pickles()):  # type: ignore[attr-defined]
        assert all(isinstance(item, Trajectory | LoadProblem) for item in allowed.read(copy))
