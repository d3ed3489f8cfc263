"""Structural comparison: objects, unordered and ordered arrays, alternatives, patterns, paths."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from replay_tui.verify.compare import compare
from replay_tui.verify.models import Assertion
from replay_tui.verify.normalize import ExpectedValueError, Raw, normalize_retrieved_data, schema_data_types
from replay_tui.verify.types import ACTUAL, EXPECTED

STRINGS = {"type": "string"}
NUMBERS = {"type": "number"}
PRODUCTS = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "price": {"type": "number", "format": "currency"}},
}


def check(items: dict[str, Any], want: list[Any], got: Any, ordered: bool = False) -> list[Assertion]:
    schema = {"type": "array", "items": items}
    expected = normalize_retrieved_data(want, schema, EXPECTED)
    actual = normalize_retrieved_data(got, schema, ACTUAL)
    return compare(expected, actual, path="retrieved_data", ordered=ordered)


def names(assertions: list[Assertion]) -> list[str]:
    return [a.name for a in assertions]


class TestObjects:
    def test_equal_objects(self) -> None:
        assert check(PRODUCTS, [{"name": "A", "price": 10}], [{"name": "a", "price": "$10.05"}]) == []

    def test_wrong_value_has_a_path(self) -> None:
        result = check(PRODUCTS, [{"name": "A", "price": 10}], [{"name": "A", "price": 12}])
        assert "retrieved_data[0].price_mismatch" in names(result)
        detail = next(a for a in result if a.name == "retrieved_data[0].price_mismatch")
        assert detail.path == "retrieved_data[0].price"
        assert detail.kind == "mismatch"
        assert (detail.expected, detail.actual) == (10.0, 12.0)
        assert "±0.10" in detail.message

    def test_missing_and_extra_keys(self) -> None:
        result = check(PRODUCTS, [{"name": "A", "price": 10}], [{"name": "A", "cost": 10}])
        keys = next(a for a in result if a.kind == "keys_mismatch")
        assert keys.name == "retrieved_data[0]_keys_mismatch"
        assert "missing keys ['price']" in keys.message and "extra keys ['cost']" in keys.message

    def test_key_without_schema_compares_as_string(self) -> None:
        assert check(PRODUCTS, [{"name": "A", "note": "Fast"}], [{"name": "A", "note": "fast"}]) == []

    def test_none_against_value(self) -> None:
        date_schema = {"type": "object", "properties": {"status": STRINGS, "arrival_date": {"format": "date"}}}
        assert (
            check(
                date_schema,
                [{"status": "canceled", "arrival_date": None}],
                [{"status": "Canceled", "arrival_date": None}],
            )
            == []
        )
        result = check(
            date_schema,
            [{"status": "canceled", "arrival_date": None}],
            [{"status": "canceled", "arrival_date": "May 1, 2023"}],
        )
        assert "retrieved_data[0].arrival_date_none_mismatch" in names(result)

    def test_not_an_object(self) -> None:
        result = check(PRODUCTS, [{"name": "A", "price": 10}], ["A costs 10"])
        assert "retrieved_data[0]_invalid_format" in names(result)

    def test_object_given_as_json_text_is_read(self) -> None:
        assert check(PRODUCTS, [{"name": "A", "price": 10}], ['{"name": "A", "price": 10}']) == []

    def test_property_alternatives(self) -> None:
        schema = {"type": "object", "properties": {"status": STRINGS}}
        assert check(schema, [{"status": ["canceled", "cancelled"]}], [{"status": "Cancelled"}]) == []
        assert check(schema, [{"status": ["canceled", "cancelled"]}], [{"status": "closed"}]) != []

    def test_property_patterns(self) -> None:
        schema = {"type": "object", "properties": {"width": STRINGS, "height": STRINGS}}
        inches = "^16(?:\\.0+)?\\s*[-]?\\s*(?:inch(?:es)?|in\\.?|\u2033|\"|'|')$"
        assert check(schema, [{"width": inches, "height": "24"}], [{"width": "16 inches", "height": "24"}]) == []
        assert check(schema, [{"width": inches, "height": "24"}], [{"width": "16in", "height": "24"}]) == []
        assert check(schema, [{"width": inches, "height": "24"}], [{"width": "17 inches", "height": "24"}]) != []

    def test_nested_array_property(self) -> None:
        schema = {
            "type": "object",
            "properties": {"hotel": {"format": "location-name"}, "supermarkets": {"type": "array", "items": STRINGS}},
        }
        want = [{"hotel": "Hyatt Regency Pittsburgh International Airport", "supermarkets": ["Giant Eagle", "ALDI"]}]
        got = [{"hotel": "Hyatt Regency Pittsburgh Intl Airport", "supermarkets": ["aldi", "giant eagle"]}]
        assert check(schema, want, got) == []
        wrong = [{"hotel": "Hyatt Regency Pittsburgh Intl Airport", "supermarkets": ["aldi"]}]
        assert "retrieved_data[0].supermarkets_array_values_mismatch" in names(check(schema, want, wrong))
        scalar = [{"hotel": "Hyatt Regency Pittsburgh Intl Airport", "supermarkets": "aldi, giant eagle"}]
        assert "retrieved_data[0].supermarkets_invalid_format" in names(check(schema, want, scalar))


class TestUnorderedArrays:
    def test_order_does_not_matter(self) -> None:
        assert check(STRINGS, ["a", "b", "c"], ["c", "a", "b"]) == []

    def test_duplicates_count(self) -> None:
        assert check(STRINGS, ["a", "a"], ["a", "a"]) == []
        result = check(STRINGS, ["a", "a"], ["a"])
        assert names(result) == ["retrieved_data_array_values_mismatch"]
        assert "missing 1" in result[0].message
        assert check(STRINGS, ["a"], ["a", "a"]) != []

    def test_missing_item(self) -> None:
        result = check(STRINGS, ["a", "b", "c"], ["a", "c"])
        assert names(result) == ["retrieved_data_array_values_mismatch"]
        assert result[0].expected == ["b"] and result[0].actual == []
        assert "matched 2/3" in result[0].message

    def test_extra_item(self) -> None:
        result = check(STRINGS, ["a", "b"], ["b", "a", "z"])
        assert names(result) == ["retrieved_data_array_values_mismatch"]
        assert result[0].expected == [] and result[0].actual == ["z"]
        assert "extra" in result[0].message

    def test_wrong_item_is_paired_with_its_closest_counterpart(self) -> None:
        want = [{"name": "A", "price": 10}, {"name": "B", "price": 20}, {"name": "C", "price": 30}]
        got = [{"name": "C", "price": 30}, {"name": "B", "price": 25}, {"name": "A", "price": 10}]
        result = check(PRODUCTS, want, got)
        assert names(result) == ["retrieved_data_array_values_mismatch", "retrieved_data[1].price_mismatch"]
        assert "closest actual item: [1]" in result[1].message

    def test_optimal_assignment_where_greedy_fails(self) -> None:
        # Upstream's greedy first-fit takes "a" for the alternatives and then has no "a" left.
        assert check(STRINGS, [["a", "b"], "a"], ["a", "b"]) == []
        assert check(STRINGS, ["a", ["a", "b"]], ["a", "b"]) == []

    @pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
    def test_verdict_never_depends_on_order(self, order: tuple[int, ...]) -> None:
        want = [["x", "y"], ["y", "z"], "x", ["z", "w"]]
        got = ["y", "x", "z", "w"]
        assert check(STRINGS, [want[i] for i in order], got) == []
        assert check(STRINGS, want, [got[i] for i in order]) == []
        bad = ["y", "x", "z", "q"]
        assert check(STRINGS, [want[i] for i in order], bad) != []

    def test_nested_unordered_objects(self) -> None:
        schema = {"type": "object", "properties": {"names": {"type": "array", "items": STRINGS}, "min": NUMBERS}}
        want = [{"names": ["A", "B"], "min": 1}, {"names": ["C"], "min": 2}]
        got = [{"min": 2, "names": ["c"]}, {"min": 1, "names": ["b", "a"]}]
        assert check(schema, want, got) == []


class TestOrderedArrays:
    def test_same_order_passes(self) -> None:
        assert check(STRINGS, ["a", "b", "c"], ["A", "B", "C"], ordered=True) == []

    def test_swapped_items_fail_at_their_positions(self) -> None:
        result = check(STRINGS, ["a", "b", "c"], ["b", "a", "c"], ordered=True)
        assert names(result) == ["retrieved_data[0]_mismatch", "retrieved_data[1]_mismatch"]
        assert result[0].path == "retrieved_data[0]"

    def test_length_difference_adds_a_summary(self) -> None:
        result = check(STRINGS, ["a", "b", "c"], ["a", "b"], ordered=True)
        assert names(result) == ["retrieved_data_array_values_mismatch"]
        assert "matched 2/3" in result[0].message
        longer = check(STRINGS, ["a", "b"], ["a", "b", "c"], ordered=True)
        assert names(longer) == ["retrieved_data_array_values_mismatch"]

    def test_nested_arrays_follow_the_flag(self) -> None:
        schema = {"type": "object", "properties": {"names": {"type": "array", "items": STRINGS}}}
        assert check(schema, [{"names": ["a", "b"]}], [{"names": ["b", "a"]}], ordered=False) == []
        result = check(schema, [{"names": ["a", "b"]}], [{"names": ["b", "a"]}], ordered=True)
        assert names(result) == ["retrieved_data[0].names[0]_mismatch", "retrieved_data[0].names[1]_mismatch"]


class TestTypesAndShapes:
    def test_wrong_type_keeps_the_raw_value_and_reason(self) -> None:
        result = check(NUMBERS, [12], ["unknown"])
        detail = next(a for a in result if a.kind == "mismatch")
        assert detail.name == "retrieved_data[0]_mismatch"
        assert detail.actual == "unknown"
        assert "cannot read" in detail.message

    def test_scalar_is_wrapped(self) -> None:
        schema = {"type": "array", "items": NUMBERS}
        assert normalize_retrieved_data(5, schema, ACTUAL)[0].canonical == 5.0
        assert normalize_retrieved_data(0, schema, ACTUAL)[0].canonical == 0.0
        assert normalize_retrieved_data(False, {"type": "array", "items": {"type": "boolean"}}, ACTUAL) is not None

    def test_empty_is_no_data(self) -> None:
        schema = {"type": "array", "items": STRINGS}
        for empty in (None, [], "", {}):
            assert normalize_retrieved_data(empty, schema, ACTUAL) is None

    def test_whole_data_as_json_text_is_one_item(self) -> None:
        schema = {"type": "array", "items": STRINGS}
        assert len(normalize_retrieved_data('["x", "y"]', schema, ACTUAL)) == 1

    def test_broken_expected_value_raises(self) -> None:
        with pytest.raises(ExpectedValueError, match=r"retrieved_data\[0\]"):
            normalize_retrieved_data(["not a number"], {"type": "array", "items": NUMBERS}, EXPECTED)

    def test_agent_side_failures_are_raw(self) -> None:
        value = normalize_retrieved_data(["not a number"], {"type": "array", "items": NUMBERS}, ACTUAL)
        assert isinstance(value[0], Raw) and value[0].expected_type == "number"

    def test_schema_data_types(self) -> None:
        schema = {"type": "array", "items": PRODUCTS}
        assert schema_data_types(schema) == ["currency", "string"]
        assert schema_data_types({"type": "null"}) == ["null"]
        assert schema_data_types({"type": "array", "items": {"format": "coordinates"}}) == ["coordinates"]
