"""Following a JSON Lines log (``--follow``): appending its lines one at a time gives the episodes
that reading the whole file at once gives, on every JSON Lines sample of every format."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay_tui.formats import detect
from replay_tui.formats.growing import FollowedFile, FollowingReader

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"
SAMPLES = sorted(DATA.glob("*/*.jsonl"))
CUTS = 4
"""Points in each sample where the followed file is also compared with its part read whole."""


def test_the_samples_cover_every_json_lines_format() -> None:
    formats = {detect(path)[0].name for path in SAMPLES}
    assert {"claude-code", "codex", "openhands", "otel-genai", "openai-chat"} <= formats


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_lines_appended_one_at_a_time_read_as_the_whole_file(sample: Path, tmp_path: Path) -> None:
    reader, _ = detect(sample)
    lines = sample.read_bytes().splitlines(keepends=True)
    live = tmp_path / sample.name
    live.write_bytes(b"")
    followed = FollowedFile(live, reader)
    followed.read()
    every = max(1, len(lines) // 40)  # a look after every line of a small file, every few of a big one
    cuts = {len(lines) * n // CUTS for n in range(1, CUTS)}
    for number, line in enumerate(lines, 1):
        half = len(line) // 2
        with live.open("ab") as handle:
            handle.write(line[:half])
        if number % every == 0 and isinstance(reader, FollowingReader):
            followed.read()  # the half-written line waits: what a look in the middle of a write sees
        with live.open("ab") as handle:
            handle.write(line[half:])
        if number % every == 0 or number in cuts:
            followed.read()
        if number in cuts:
            part = tmp_path / f"part-{number}" / sample.name  # the same name: ids come from it
            part.parent.mkdir()
            part.write_bytes(b"".join(lines[:number]))
            assert followed.items == list(reader.read(part))
    followed.read()
    assert followed.items == list(reader.read(live))
    assert [type(item) for item in followed.items] == [type(item) for item in reader.read(sample)]
