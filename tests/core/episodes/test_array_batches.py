"""``jsonscan.array_batches``: a JSON array's elements a batch at a time as its bytes arrive (an
inspect_ai summaries member parsed as it inflates), the same elements a whole parse gives, and the
same refusals."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.episodes.jsonscan import NotAnArray, array_batches

_TEXT = st.text(alphabet='ab"\\[]{},é \n', max_size=8)  # brackets and commas inside strings too
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | _TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_TEXT, children),
    max_leaves=20,
)


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def elements(data: bytes, size: int, first: int = 1) -> list[Any]:
    return [e for batch in array_batches(pieces(data, size), orjson.loads, first=first, most=64) for e in batch]


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(_JSON, max_size=12),
    size=st.integers(1, 40),
    first=st.integers(1, 50),
    indent=st.sampled_from([None, 1]),
    bom=st.booleans(),
)
def test_the_elements_are_the_whole_parse_s(values, size, first, indent, bom) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + json.dumps(values, indent=indent, ensure_ascii=False).encode()
    assert elements(data, size, first) == values


def test_the_first_batch_comes_before_the_last_byte() -> None:
    data = orjson.dumps([{"id": n, "text": "x" * 100} for n in range(1000)])
    given = iter(pieces(data, 1000))
    first = next(array_batches(given, orjson.loads, first=4096))
    assert [e["id"] for e in first] == list(range(len(first))) and 0 < len(first) < 100
    assert len(list(given)) > 90  # most of the bytes not read yet


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", orjson.JSONDecodeError),
        (b"  ", orjson.JSONDecodeError),
        (b'{"id": 1}', NotAnArray),
        (b"xyz", NotAnArray),
        (b"[1, 2", orjson.JSONDecodeError),
        (b"[{}{}]", ValueError),
        (b'[{"a": 1} {"b": 2}]', ValueError),
        (b"[{}, {},]", ValueError),
        (b"[{}] x", orjson.JSONDecodeError),
    ],
)
def test_what_a_whole_parse_refuses_is_refused(data: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        elements(data, 2)
