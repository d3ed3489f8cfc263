"""The search core (no Textual): hits per step and field, snippets, the raw-bytes shortcut, problems."""

from __future__ import annotations

from pathlib import Path

from replay_tui.formats.webshop_demos.index import open_demos
from replay_tui.search import Query, search, snippet
from tests.conftest import episode, good_episode, search_step, write_json


def hits_of(path: Path, text: str) -> list:
    demos = open_demos([path])
    return [hit for found in search(demos, text) for hit in found.hits]


def test_finds_every_field_of_every_episode_with_its_step_and_position(tmp_path: Path) -> None:
    third = good_episode(12)
    third["trajectory"][0]["llm_thinking"] = "I will look for a Zebra print bag."
    third["trajectory"][4]["observation"] = "the zebra pattern is soft"  # a sub-event (detail_exploration)
    path = write_json(tmp_path / "demos.json", [good_episode(10), good_episode(11), third])
    hits = hits_of(path, "ZEBRA")
    assert [(h.session_id, h.position, h.step, h.field) for h in hits] == [
        (12, 0, "0", "thinking"),
        (12, 4, "↳ detail_exploration", "observation"),
    ]
    thinking = hits[0]
    assert thinking.snippet[thinking.start : thinking.end] == "Zebra"  # the text's own case


def test_counts_occurrences_and_names_item_steps_and_the_task(tmp_path: Path) -> None:
    path = write_json(tmp_path / "demos.json", [good_episode(10)])
    hits = hits_of(path, "clip-in")
    assert hits[0].field == "task" and hits[0].position is None
    fields = {(h.step, h.field) for h in hits}
    assert ("0", "observation") in fields and ("0", "prompt") in fields and ("0", "action") in fields
    assert ("2.1", "observation") in fields  # an item-page action, labelled as the step list labels it
    assert all(h.count >= 1 for h in hits)
    observation = next(h for h in hits if h.field == "observation after" and h.step == "0")
    assert observation.after and observation.count == 1


def test_snippet_is_one_line_without_controls_and_keeps_the_span() -> None:
    text = "line one\n\x1b[31mred\x1b[0m " + "x" * 50 + " the NEEDLE here\n" + "y" * 300
    start = text.index("NEEDLE")
    line, s, e = snippet(text, start, start + 6)
    assert "\n" not in line and "\x1b" not in line
    assert line[s:e] == "NEEDLE" and line.startswith("…") and line.endswith("…")


def test_raw_shortcut_only_for_queries_json_keeps_as_is(tmp_path: Path) -> None:
    assert Query("Buy Now").raw == b"buy now"
    # the longest run JSON cannot have escaped is what the raw bytes must hold
    assert Query('say "hello"').raw == b"hello" and Query("café").raw == b"caf" and Query("<b>").raw == b"b"
    assert Query("日本").raw is None  # no ASCII: every episode is parsed
    # an escaped character still matches through the parsed text (the shortcut is not taken)
    path = write_json(tmp_path / "demos.json", [episode(1, [search_step(0, llm_thinking='he said "café/bar"')])])
    assert [h.field for h in hits_of(path, 'said "café/bar')] == ["thinking"]


def test_an_unreadable_episode_gives_its_problem_and_the_rest_is_searched(tmp_path: Path) -> None:
    bad = good_episode(11)
    bad["trajectory"][1]["llm_action_arguments"] = "not an object"  # a field of the recorded action: fatal
    path = write_json(tmp_path / "demos.json", [good_episode(10), bad, good_episode(12)])
    found = list(search(open_demos([path]), "clip-in"))
    assert [f.session_id for f in found] == [10, 11, 12]
    assert found[1].problem is not None and not found[1].hits
    assert found[0].hits and found[2].hits


def test_searches_only_the_sessions_asked_in_their_order(tmp_path: Path) -> None:
    path = write_json(tmp_path / "demos.json", [good_episode(i) for i in (10, 11, 12)])
    found = list(search(open_demos([path]), "clip-in", [12, 99, 10]))
    assert [f.session_id for f in found] == [12, 10]


def test_episodes_whose_raw_json_lacks_the_query_are_not_parsed(tmp_path: Path, monkeypatch) -> None:
    ep = good_episode(11)
    ep["trajectory"][0]["llm_thinking"] = "naïve Zebra"  # written \\u00ef: the ASCII query still matches raw
    path = write_json(tmp_path / "demos.json", [good_episode(10), ep, good_episode(12)])
    demos = open_demos([path])
    parsed: list[int] = []
    demo_file = demos.files[0]
    read = demo_file.read_trajectory
    monkeypatch.setattr(demo_file, "read_trajectory", lambda ref: parsed.append(ref.session_id) or read(ref))
    assert [h.session_id for f in search(demos, "zebra") for h in f.hits] == [11]
    assert parsed == [11]
    parsed.clear()
    assert [h.session_id for f in search(demos, "naïve") for h in f.hits] == [11]  # "na" is in every episode
    assert parsed == [10, 11, 12]
    parsed.clear()
    assert [h.session_id for f in search(demos, "ïve zebra") for h in f.hits] == [11]  # "ve zebra" in one
    assert parsed == [11]


def test_text_inside_an_escape_sequence_is_not_found_nor_shown_around_a_match() -> None:
    """The stepper shows a field without its sequences: a title or clipboard payload is no match, and a
    match next to one gets a snippet of the shown text (not the sequence's body, cut mid-way)."""
    title = "obs \x1b]0;PWNED-title\x07 and \x1b]52;c;UFdORUQ=\x1b\\ more"
    assert Query("PWNED").hit(0, 0, "0", "observation", title) is None
    hit = Query("and").hit(0, 0, "0", "observation", "x" * 30 + title)
    assert hit is not None and "PWNED" not in hit.snippet and "\x1b" not in hit.snippet
    assert hit.snippet[hit.start : hit.end] == "and" and hit.count == 1
