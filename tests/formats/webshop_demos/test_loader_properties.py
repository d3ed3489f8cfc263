"""Property-based tests of the loader (issue 19): malformed episodes and byte-level corruptions of a
good file never raise out of the loader, every episode is valid or a named problem, and the good
episodes are unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.episodes.jsonscan import _first_too_deep_numpy, first_too_deep
from replay_tui.episodes.problems import DemoFileError
from replay_tui.formats.webshop_demos.contract import EpisodeHeader
from replay_tui.formats.webshop_demos.index import EpisodeSet, open_demos, parse_episode
from tests.hostile import DEEP, good, step

SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
GOOD_IDS = (1, 3, 5)
EXPECTED = {sid: parse_episode(good(sid), file="x", index=0).model_dump() for sid in GOOD_IDS}


class Raw:
    """JSON text spliced into a file as it is (numbers no encoder writes, deep nesting, bad bytes)."""

    def __init__(self, data: bytes):
        self.data = data


raw_values = st.sampled_from(
    [
        Raw(b"1e400"),
        Raw(b"-1e999"),
        Raw(b"9" * 5000),
        Raw(b"NaN"),
        Raw(b"[" * DEEP + b"]" * DEEP),
        Raw(b'{"a":' * 300 + b"1" + b"}" * 300),
        Raw(b'"caf\xe9"'),
        Raw(b'"\xff\xfe"'),
        Raw(b'"\\ud800"'),
        Raw(b"18446744073709551616"),
        Raw(b"1" + b"0" * 400),
    ]
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
    st.sampled_from(["3", "3.0", " 3 ", "1e400", "inf", "NaN", "true", "", "\x1b[31m", "[bold]x[/]"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
values = st.one_of(json_values, raw_values)
HEADER = ("session_id", "instruction", "final_reward", "success", "completed_by_backup", "trajectory", "extra")
STEP = (
    "step_number",
    "llm_action_name",
    "llm_action_arguments",
    "action_executed_in_env",
    "reward",
    "done",
    "state",
    "available_actions",
    "observation_before_llm",
    "llm_prompt",
    "type",
)


def _claims_good_id(value: Any) -> bool:
    """A session id that reads as one of the good episodes' ("1", " 3 ", 5.0): the good episode
    would then share its id with a malformed one, which the test does not mean to exercise."""
    try:
        return EpisodeHeader.model_validate({"session_id": value}).session_id in GOOD_IDS
    except Exception:
        return False


@st.composite
def malformed_episode(draw: st.DrawFn, session_id: int) -> Any:
    """A good episode with a few fields replaced, removed or added, or not an episode at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(values)
    episode = good(session_id)
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["header", "step", "remove", "entry"]))
        if where == "header":
            key = draw(st.sampled_from(HEADER))
            episode[key] = draw(values.filter(lambda v: not _claims_good_id(v)) if key == "session_id" else values)
        elif where == "step" and isinstance(episode.get("trajectory"), list) and episode["trajectory"]:
            entry = episode["trajectory"][draw(st.integers(0, len(episode["trajectory"]) - 1))]
            if isinstance(entry, dict):
                entry[draw(st.sampled_from(STEP))] = draw(values)
        elif where == "remove":
            episode.pop(draw(st.sampled_from(HEADER)), None)
        elif isinstance(episode.get("trajectory"), list):
            episode["trajectory"].append(draw(st.one_of(values, st.just(step(9)))))
    return episode


def dump(value: Any) -> bytes:
    """JSON bytes of ``value`` with every :class:`Raw` spliced in verbatim."""
    spliced: list[bytes] = []

    def default(item: Any) -> str:
        if isinstance(item, Raw):
            spliced.append(item.data)
            return f"@@RAW{len(spliced) - 1}@@"
        raise TypeError(type(item))

    text = json.dumps(value, default=default, ensure_ascii=False).encode("utf-8", "surrogatepass")
    for number, data in enumerate(spliced):
        text = text.replace(json.dumps(f"@@RAW{number}@@").encode(), data, 1)
    return text


def check(demos: EpisodeSet) -> set[int]:
    """The loader's invariants; returns the session ids that are valid."""
    found = demos.validate_all()
    assert all(p.file and p.message and "\n" not in p.one_line() for p in demos.problems)
    assert not [p for p in demos.problems if "unexpected error" in p.message]
    errors = [p for p in found if p.severity == "error"]  # an episode has one error, or warnings for its fields
    assert len(errors) == len({p.session_id for p in errors})
    located = {p.index for p in demos.problems if p.index is not None}
    valid = set()
    for ref in demos.refs:
        problem = demos.problem_for(ref.session_id)
        if problem is None:
            assert demos.episode(ref.session_id).session_id == ref.session_id
            valid.add(ref.session_id)
        else:
            assert ref.index in located
    return valid


def _write(tmp_path: Path, data: bytes, suffix: str = ".json") -> Path:
    path = tmp_path / f"demos{suffix}"
    path.write_bytes(data)
    return path


@SETTINGS
@given(data=st.data(), jsonl=st.booleans())
def test_malformed_episodes_are_problems_and_the_good_ones_load_unchanged(tmp_path, data, jsonl):
    bad = data.draw(st.lists(st.integers(100, 120), min_size=1, max_size=3, unique=True))
    episodes: list[Any] = [good(sid) for sid in GOOD_IDS]
    for sid in bad:
        episodes.insert(data.draw(st.integers(0, len(episodes))), data.draw(malformed_episode(sid)))
    parts = [dump(episode) for episode in episodes]
    body = b"\n".join(parts) + b"\n" if jsonl else b"[\n" + b",\n".join(parts) + b"\n]\n"
    try:
        demos = open_demos(_write(tmp_path, body, ".jsonl" if jsonl else ".json"))
    except DemoFileError as exc:  # only when the very first byte is not JSON: a bare value first in JSON Lines
        assert jsonl and "not a JSON demo file" in str(exc)
        return
    valid = check(demos)
    assert set(GOOD_IDS) <= valid
    for sid in GOOD_IDS:
        assert demos.episode(sid).model_dump() == EXPECTED[sid]
    for index, episode in enumerate(episodes):
        indexed = {ref.index for ref in demos.refs}
        assert index in indexed or any(p.index == index for p in demos.problems), (index, episode)


def _good_file() -> tuple[bytes, list[tuple[int, int, int]]]:
    """A file of good episodes and each one's (session id, start, end) byte span."""
    out = b"[\n"
    spans = []
    for number, sid in enumerate(GOOD_IDS):
        if number:
            out += b",\n"
        data = json.dumps(good(sid), indent=1).encode()
        spans.append((sid, len(out), len(out) + len(data)))
        out += data
    return out + b"\n]\n", spans


GOOD_FILE, SPANS = _good_file()


@st.composite
def corruption(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    """The good file with byte-level damage, and the offsets that were touched."""
    data = bytearray(GOOD_FILE)
    touched = []
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "splice"]))
        if kind == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(
                st.one_of(
                    st.binary(min_size=1, max_size=8),
                    st.sampled_from([b"\xe9", b"\xff\xfe", b"[" * 200, b"{", b"]", b'"', b"\\", b"1e400", b"\x00"]),
                )
            )
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 20))]
        elif kind == "truncate":
            del data[at:]
        else:
            data[at:at] = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\x00\x00\xfe\xff"]))
        touched.append(at)
    return bytes(data), touched


@SETTINGS
@given(damaged=corruption())
def test_byte_level_corruption_never_raises_and_untouched_episodes_are_unchanged(tmp_path, damaged):
    data, touched = damaged
    try:
        demos = open_demos(_write(tmp_path, data))
    except DemoFileError as exc:
        assert "\n" not in str(exc)
        return
    valid = check(demos)
    first = min(touched)
    for sid, _, end in SPANS:
        if end < first and demos.files[0].encoding == "utf-8":  # wholly before any damage
            assert sid in valid
        if sid in valid and end < first:
            assert demos.episode(sid).model_dump() == EXPECTED[sid]


@SETTINGS
@given(
    victim=st.sampled_from(GOOD_IDS),
    payload=st.one_of(
        st.binary(min_size=1, max_size=12).filter(lambda b: b'"' not in b and b"\\" not in b),
        st.sampled_from([b"\xe9", b"\xc0\xaf", b"\xed\xa0\x80", b"[" * DEEP, b"]]]}}}", b"\x00\x1f"]),
    ),
)
def test_damage_inside_one_string_spares_every_other_episode(tmp_path, victim, payload):
    episodes = [good(sid) for sid in GOOD_IDS]
    target = episodes[GOOD_IDS.index(victim)]
    target["instruction"] = "@@HERE@@"
    body = dump(episodes).replace(b"@@HERE@@", payload)
    demos = open_demos(_write(tmp_path, body))
    valid = check(demos)
    for sid in GOOD_IDS:
        if sid != victim:
            assert sid in valid
            assert demos.episode(sid).model_dump() == EXPECTED[sid]
    if victim not in valid:
        assert any(p.index == GOOD_IDS.index(victim) for p in demos.problems)


@SETTINGS
@given(
    data=st.binary(max_size=300)
    | st.text(alphabet='[]{}"\\ab,:', max_size=300).map(str.encode)
    | st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b"x", b'"a[', b"\\\\"]), max_size=400).map(
        b"".join
    ),
    limit=st.integers(0, 70),
    chunk=st.sampled_from([1, 2, 3, 7, 64, 1 << 24]),
)
def test_the_two_depth_scanners_agree_on_any_bytes(monkeypatch, data, limit, chunk):
    import replay_tui.episodes.jsonscan as scan

    monkeypatch.setattr(scan, "_CHUNK", chunk)
    assert _first_too_deep_numpy(data, limit) == first_too_deep(data, limit)


def test_depth_scanner_counts_only_structure():
    assert first_too_deep(b"[" * 65 + b"]" * 65) == 64
    assert first_too_deep(b"[" * 64 + b"]" * 64) is None
    assert first_too_deep(b'["' + b"[" * 100 + b'"]') is None  # brackets inside a string
    assert first_too_deep(b'["\\"' + b"[" * 100 + b'"]') is None  # an escaped quote does not end it
    assert first_too_deep(b'["\\\\"' + b"[" * 100, 10) == 14  # an escaped backslash does
    big = b"[" + b'"x",' * (2 << 20) + b"[" * 70
    assert len(big) > 4 << 20 and first_too_deep(big) == len(big) - 70 + 63


@pytest.mark.parametrize(
    ("codec", "bom"),
    [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-32-le", b"\xff\xfe\x00\x00"), ("utf-32-be", b"")],
)
def test_wide_encodings_are_decoded(tmp_path, codec, bom):
    text = json.dumps([good(1), good(2, instruction="thé ☕ 𝄞")], ensure_ascii=False)
    demos = open_demos(_write(tmp_path, bom + text.encode(codec)))
    assert demos.files[0].encoding == codec and demos.problems == []
    assert demos.episode(2).instruction == "thé ☕ 𝄞"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\[]{} \n', max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(alphabet='k"\\[', max_size=3), children),
    max_leaves=20,
)


@SETTINGS
@given(values=st.lists(_JSON, max_size=6), chunk=st.sampled_from([1, 2, 3, 7, 64, 1 << 24]), lines=st.booleans())
def test_the_depth_scanners_find_the_same_top_level_spans(monkeypatch, values, chunk, lines):
    """The spans the one-pass index cuts episodes with: the values of a JSON array (level 2) or of
    JSON Lines (level 1), the same from both scanners, and exactly each value's bytes."""
    import json

    import replay_tui.episodes.jsonscan as scan

    monkeypatch.setattr(scan, "_CHUNK", chunk)
    texts = [json.dumps(value) for value in values]
    data = ("\n".join(texts) if lines else "[" + ", ".join(texts) + "]").encode()
    level = 1 if lines else 2
    expected = scan.scan_depth(data, 200, 0, spans_at=level)
    assert scan._scan_depth_numpy(data, 200, 0, spans_at=level) == expected
    containers = [text for text in texts if text[0] in "[{"]
    assert [data[start:end].decode() for start, end in expected[1]] == containers
