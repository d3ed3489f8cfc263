"""A UTF-8 byte order mark (what Windows tools write) changes nothing: every reader sees the same
episodes and problems as without it (orjson refuses a BOM, and inspect_ai and tau2 logs were
refused whole)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay_tui.sources import open_sources

DATA = Path(__file__).resolve().parents[1] / "data" / "formats"
FILES = sorted(p for p in DATA.glob("*/*") if p.suffix in (".json", ".jsonl") and p.is_file())


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_bom_changes_nothing(tmp_path: Path, path: Path) -> None:
    for sibling in path.parent.iterdir():  # files a log refers to (ATIF sub-agents) stay beside it
        if sibling.is_file() and sibling != path:
            (tmp_path / sibling.name).write_bytes(sibling.read_bytes())
    copy = tmp_path / path.name
    copy.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    plain, with_bom = open_sources([path]), open_sources([copy])
    assert len(with_bom) == len(plain)
    assert [p.message for p in with_bom.problems] == [p.message for p in plain.problems]
