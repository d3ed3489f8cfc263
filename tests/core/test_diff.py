from difflib import SequenceMatcher
from itertools import pairwise

import pytest

from replay_tui.diff import DiffChunk, char_diff, cleanup_semantic, diff_ratio, expected_side, predicted_side

CASES = [
    ("", ""),
    ("", "click[Buy Now]"),
    ("click[Buy Now]", ""),
    ("search[red shoes]", "search[red shoes]"),
    ("search[red shoes]", "search[blue shoes]"),
    ("click[Next >]", "click[B09C337K8S]"),
    ("click[< Prev]", "click[Next >]"),
    ("search[a  b]", "search[a b]"),
    ("search[a\tb]", "search[a b]"),
    ("search[x]\n", "search[x]"),
    ("[[[]]]", "[][][]"),
    ("]]]]", "[[[["),
    ("dark brown | black", "dark brown|black"),
    ("`code` ``more``", "``code`` `more`"),
    ("café crème", "cafe creme"),
    ("naïve 日本語の商品", "naive 日本の商品"),
    ("emoji 👟👟 shoes", "emoji 👟 shoes 👠"),
    ("e\u0301", "é"),
    ("aaaaaaaaaa", "aaaaa"),
    ("abababab", "babababa"),
    ("<script>alert(1)</script>", "[bold red]x[/]"),
    ("   ", " "),
    ("\x1b[31mred\x1b[0m", "red"),
]


@pytest.mark.parametrize("cleanup", [False, True])
@pytest.mark.parametrize(("expected", "predicted"), CASES)
def test_chunks_rebuild_both_sides(expected, predicted, cleanup):
    chunks = char_diff(expected, predicted, cleanup=cleanup)
    assert expected_side(chunks) == expected
    assert predicted_side(chunks) == predicted
    assert "".join(c.text for c in chunks if c.op in ("equal", "delete")) == expected
    assert "".join(c.text for c in chunks if c.op in ("equal", "insert")) == predicted


@pytest.mark.parametrize("cleanup", [False, True])
@pytest.mark.parametrize(("expected", "predicted"), CASES)
def test_chunks_are_merged_and_never_empty(expected, predicted, cleanup):
    chunks = char_diff(expected, predicted, cleanup=cleanup)
    assert all(isinstance(c, DiffChunk) and c.text for c in chunks)
    assert all(c.op in ("equal", "delete", "insert") for c in chunks)
    assert all(a.op != b.op for a, b in pairwise(chunks))


@pytest.mark.parametrize(("expected", "predicted"), CASES)
def test_ratio_is_sequence_matchers(expected, predicted):
    assert diff_ratio(expected, predicted) == pytest.approx(
        SequenceMatcher(None, expected, predicted, autojunk=False).ratio()
    )


def test_identical_strings_are_one_equal_chunk():
    assert char_diff("click[Buy Now]", "click[Buy Now]") == [DiffChunk("equal", "click[Buy Now]")]
    assert diff_ratio("click[Buy Now]", "click[Buy Now]") == 1.0


def test_empty_sides():
    assert char_diff("", "") == []
    assert char_diff("", "abc") == [DiffChunk("insert", "abc")]
    assert char_diff("abc", "") == [DiffChunk("delete", "abc")]
    assert diff_ratio("", "") == 1.0
    assert diff_ratio("abc", "") == 0.0


def test_a_replacement_is_a_delete_then_an_insert():
    assert char_diff("abc", "axc") == [
        DiffChunk("equal", "a"),
        DiffChunk("delete", "b"),
        DiffChunk("insert", "x"),
        DiffChunk("equal", "c"),
    ]
    assert char_diff("click[Next >]", "click[B01]")[0] == DiffChunk("equal", "click[")


def test_chunks_are_immutable():
    chunk = char_diff("a", "b")[0]
    with pytest.raises(AttributeError):
        chunk.text = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("expected", "predicted"),
    [
        ("a" * 300 + "X" + "b" * 300, "a" * 300 + "Y" + "b" * 300),  # small middle: diffed exactly
        ("pre" + "x" * 400 + "post", "pre" + "y" * 500 + "post"),  # large middle: delete + insert
        ("a" * 50, "a" * 80),  # one is a prefix of the other
        ("ab" * 100, "ba" * 100),
    ],
)
def test_large_inputs_fall_back_to_a_cheap_diff_that_still_rebuilds(expected, predicted):
    chunks = char_diff(expected, predicted, max_cells=1_000)
    assert expected_side(chunks) == expected and predicted_side(chunks) == predicted
    assert all(a.op != b.op for a, b in pairwise(chunks))


def test_large_input_fallback_keeps_common_ends():
    chunks = char_diff("pre" + "x" * 400 + "post", "pre" + "y" * 500 + "post", max_cells=1_000)
    assert chunks == [
        DiffChunk("equal", "pre"),
        DiffChunk("delete", "x" * 400),
        DiffChunk("insert", "y" * 500),
        DiffChunk("equal", "post"),
    ]


def test_cleanup_folds_coincidental_single_letters_into_the_change():
    raw = char_diff("click[Next >]", "click[Description]")
    assert DiffChunk("equal", "e") in raw  # the raw diff matches stray letters
    assert char_diff("click[Next >]", "click[Description]", cleanup=True) == [
        DiffChunk("equal", "click["),
        DiffChunk("delete", "Next >"),
        DiffChunk("insert", "Description"),
        DiffChunk("equal", "]"),
    ]
    assert cleanup_semantic(raw) == char_diff("click[Next >]", "click[Description]", cleanup=True)


def test_cleanup_keeps_real_shared_words():
    chunks = char_diff("search[red running shoes]", "search[blue running shoes]", cleanup=True)
    assert DiffChunk("equal", " running shoes]") in chunks
    assert chunks[0] == DiffChunk("equal", "search[")
