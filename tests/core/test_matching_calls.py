"""Tool calls of any agent judged by one function: the name, then each argument by its JSON-schema type."""

from __future__ import annotations

import pytest

from replay_tui.matching import MATCH_POLICIES, judge_call

SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "price": {"type": ["number", "null"]},
        "flag": {"type": "boolean"},
        "query": {"type": "string"},
        "passengers": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
    },
}


def verdict(expected: dict, predicted: dict, policy: str, *, names: tuple[str, str] = ("book", "book")) -> str:
    return judge_call(names[0], expected, names[1], predicted, policy, SCHEMA).verdict  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", MATCH_POLICIES)
def test_the_same_call_matches_and_json_numbers_compare_by_value(policy: str) -> None:
    assert verdict({"n": 3, "query": "x"}, {"query": "x", "n": 3.0}, policy) == "match"  # key order never counts


@pytest.mark.parametrize("policy", MATCH_POLICIES)
def test_another_tool_or_another_value_is_a_mismatch_under_every_policy(policy: str) -> None:
    other = judge_call("book", {"n": 1}, "cancel", {"n": 1}, policy)  # type: ignore[arg-type]
    assert other.verdict == "mismatch" and other.part == "kind" and "tool differs" in other.reason
    value = judge_call("book", {"n": 1}, "book", {"n": 2}, policy, SCHEMA)  # type: ignore[arg-type]
    assert value.verdict == "mismatch" and value.reason == "arguments.n differs: expected 1, got 2"


@pytest.mark.parametrize(
    ("expected", "predicted", "exact", "typed", "tolerant", "why"),
    [
        ({"n": 3}, {"n": "3"}, "mismatch", "equivalent", "equivalent", "arguments.n"),
        ({"flag": True}, {"flag": "true"}, "mismatch", "equivalent", "equivalent", "arguments.flag"),
        ({"flag": True}, {"flag": 1}, "mismatch", "mismatch", "mismatch", "expected a boolean"),
        ({"query": "Red Shoes"}, {"query": "red shoes"}, "mismatch", "equivalent", "equivalent", "arguments.query"),
        ({"query": "red shoes"}, {"query": "shoe red"}, "mismatch", "mismatch", "equivalent", "arguments.query"),
        (
            {"query": "red shoes"},
            {"query": "blue shoes"},
            "mismatch",
            "mismatch",
            "mismatch",
            "arguments.query differs",
        ),
        ({"n": 1}, {"n": 1, "extra": 2}, "mismatch", "mismatch", "mismatch", "unexpected 'extra'"),
        ({"n": 1, "query": "x"}, {"n": 1}, "mismatch", "mismatch", "mismatch", "missing 'query'"),
        (
            {"passengers": [{"name": "Ann Lee"}]},
            {"passengers": [{"name": "Bob Lee"}]},
            "mismatch",
            "mismatch",
            "mismatch",
            "arguments.passengers[0].name differs",
        ),
        ({"passengers": [{"name": "a"}]}, {"passengers": []}, "mismatch", "mismatch", "mismatch", "expected 1 items"),
        ({"price": None}, {"price": 0}, "mismatch", "mismatch", "mismatch", "expected a null"),
    ],
)
def test_arguments_by_type(expected: dict, predicted: dict, exact: str, typed: str, tolerant: str, why: str) -> None:
    assert verdict(expected, predicted, "exact") == exact
    assert verdict(expected, predicted, "typed") == typed
    result = judge_call("book", expected, "book", predicted, "tolerant", SCHEMA)
    assert result.verdict == tolerant and why in result.reason


def test_tool_names_are_folded_only_by_the_loose_policies() -> None:
    assert verdict({}, {}, "exact", names=("get_user", "get-user")) == "mismatch"
    loose = judge_call("get_user", {}, "Get User", {}, "typed")
    assert loose.verdict == "equivalent" and "the tool name 'Get User'" in loose.reason


def test_without_a_schema_the_recorded_value_gives_the_type() -> None:
    assert judge_call("f", {"n": 3}, "f", {"n": "3"}, "typed").verdict == "equivalent"
    assert judge_call("f", {"n": 3}, "f", {"n": "3.5"}, "typed").verdict == "mismatch"
    assert judge_call("f", {"n": 3}, "f", {"n": "3"}, "exact").verdict == "mismatch"
    # a schema that says the value is text keeps the string apart from the number
    text = {"properties": {"n": {"type": "string"}}}
    assert judge_call("f", {"n": 3}, "f", {"n": "3"}, "typed", text).verdict == "mismatch"
