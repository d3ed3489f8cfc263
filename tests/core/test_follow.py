"""``--follow`` below the app: a JSON Lines demo file that is still being written grows the EpisodeSet
with the lines appended since the last read, never reading the file from its start again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from replay_tui.sources import open_sources
from tests.conftest import good_episode, write_json


def line(session_id: int) -> bytes:
    return (json.dumps(good_episode(session_id)) + "\n").encode()


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def jsonl(path: Path, *ids: int) -> Path:
    path.write_bytes(b"".join(line(i) for i in ids))
    return path


def test_appended_lines_become_episodes_and_a_partial_line_waits(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "live.jsonl", 1, 2)
    demos = open_sources([path], follow=True, defer_scan=True)
    assert demos.session_ids == [1, 2] and demos.following
    assert demos.read_new() == ([], [])
    append(path, line(3) + line(4))
    added, problems = demos.read_new()
    assert [ref.session_id for ref in added] == [3, 4] and problems == []
    half = len(line(5)) // 2
    append(path, line(5)[:half])
    assert demos.read_new() == ([], [])  # the last line is still being written
    append(path, line(5)[half:])
    added, _ = demos.read_new()
    assert [ref.session_id for ref in added] == [5]
    assert demos.session_ids == [1, 2, 3, 4, 5]
    assert demos.episode(5).session_id == 5 and demos.episode(2).session_id == 2  # episodes parse in full
    assert demos.problems == []


def test_a_last_line_cut_at_open_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(line(1) + line(2)[:40])
    demos = open_sources([path], follow=True, defer_scan=True)
    assert demos.session_ids == [1] and demos.problems == []
    append(path, line(2)[40:])
    assert [ref.session_id for ref in demos.read_new()[0]] == [2]


def test_the_start_of_the_file_is_not_read_again(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "live.jsonl", 1, 2)
    demos = open_sources([path], follow=True)
    size = len(line(1))
    with path.open("r+b") as handle:  # garbage over line 1, same length: a re-read would see it
        handle.write(b"x" * (size - 1))
    append(path, line(3))
    added, problems = demos.read_new()
    assert [ref.session_id for ref in added] == [3] and problems == []
    assert demos.session_ids == [1, 2, 3]


def test_a_bad_line_is_one_problem_naming_its_line(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "live.jsonl", 1)
    demos = open_sources([path], follow=True)
    append(path, b"\n" + b'{"session_id": 9, "trajectory": [\n' + line(1) + line(4))
    added, problems = demos.read_new()
    assert [ref.session_id for ref in added] == [4]
    assert [p.one_line() for p in problems] == [
        f"{path}: episode #1: line 3 is not a complete JSON value (Input data was truncated); the other lines are read",
        f"{path}: episode #2 (session 1): field session_id: duplicate session_id (first seen in {path} episode #0)",
    ]
    assert demos.problems == problems


def test_a_truncated_or_replaced_file_says_so_and_stops(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "live.jsonl", 1, 2)
    demos = open_sources([path], follow=True)
    path.write_bytes(line(7))  # truncated in place, then rewritten shorter
    added, problems = demos.read_new()
    assert added == [] and len(problems) == 1
    assert "shrank from" in problems[0].one_line() and "following stopped" in problems[0].one_line()
    append(path, line(8) * 3)
    assert demos.read_new() == ([], []) and not demos.following
    assert demos.episode(2).session_id == 2  # read into memory at open: a shorter file does not crash it

    other = jsonl(tmp_path / "other.jsonl", 1)
    demos = open_sources([other], follow=True)
    fresh = jsonl(tmp_path / "fresh.jsonl", 1, 2, 3)
    os.replace(fresh, other)
    added, problems = demos.read_new()
    assert added == [] and "was replaced by another file" in problems[0].one_line()


def test_an_empty_file_is_followed_from_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"")
    demos = open_sources([path], follow=True)
    assert len(demos) == 0 and demos.problems == []
    append(path, line(1))
    assert [ref.session_id for ref in demos.read_new()[0]] == [1]


def element(session_id: int) -> bytes:
    return json.dumps(good_episode(session_id), indent=1).encode()


def test_a_json_array_grows_before_its_closing_bracket(tmp_path: Path) -> None:
    path = write_json(tmp_path / "demos.json", [good_episode(1), good_episode(2)])
    demos = open_sources([path], follow=True, defer_scan=True)
    assert demos.session_ids == [1, 2] and demos.following and demos.problems == []
    with path.open("r+b") as handle:  # the writer rewrites "]" after each new episode
        handle.seek(path.stat().st_size - 1)
        handle.write(b",\n" + element(3) + b"]")
    assert [ref.session_id for ref in demos.read_new()[0]] == [3]
    half = len(element(4)) // 2
    with path.open("r+b") as handle:
        handle.seek(path.stat().st_size - 1)
        handle.write(b",\n" + element(4)[:half])  # half an episode, no "]" for now
    assert demos.read_new() == ([], [])
    append(path, element(4)[half:])
    assert demos.read_new() == ([], [])  # complete, but nothing after it yet: it waits for "," or "]"
    append(path, b",\n" + b'{"session_id": 5, "trajectory": 7}' + b"]")
    added, problems = demos.read_new()
    assert [ref.session_id for ref in added] == [4]
    assert [p.field for p in problems] == ["trajectory"] and problems[0].index == 4
    assert demos.episode(4).session_id == 4 and demos.episode(1).session_id == 1


def test_an_array_still_open_at_start_shows_its_complete_episodes(tmp_path: Path) -> None:
    path = tmp_path / "demos.json"
    path.write_bytes(b"[\n" + element(1) + b",\n" + element(2)[:50])
    demos = open_sources([path], follow=True)
    assert demos.session_ids == [1] and demos.problems == []
    append(path, element(2)[50:] + b",\n")
    assert [ref.session_id for ref in demos.read_new()[0]] == [2]
    append(path, b"garbage" + element(3) + b"]")
    added, problems = demos.read_new()
    assert added == [] and "not a JSON array any more" in problems[0].one_line() and not demos.following


def test_a_utf16_file_is_read_once_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "demos.jsonl"
    path.write_bytes(line(1).decode().encode("utf-16"))
    demos = open_sources([path], follow=True)
    assert demos.session_ids == [1] and not demos.following
    assert [p.severity for p in demos.problems] == ["warning"]
    assert "only UTF-8 files are followed" in demos.problems[0].one_line()
