"""Typed action comparison for the replay debugger: kind first, then the argument by kind."""

from __future__ import annotations

import pytest

from replay_tui.matching import actions_match, argument_type, compare_actions


@pytest.mark.parametrize(
    ("expected", "predicted"),
    [
        ("search[clip in hair extensions]", "search[Clip-in  Hair Extensions]"),
        ("search[hair extensions]", "search[ hair extensions. ]"),
        ("search[café latte]", "search[Cafe Latte]"),
        ("click[B09C337K8S]", "click[ B09C337K8S ]"),
        ("click[Next >]", "click[next  >]"),
        ("click[< Prev]", "click[< prev]"),
        ("click[Buy Now]", "click[buy now]"),
        ("click[description]", "click[Description]"),
        ("click[natural black]", "click[Natural Black]"),
        ("click[dark brown | black]", "click[Dark Brown  | Black]"),
        ("Click[Buy Now]", "click[Buy Now]"),
    ],
)
def test_matching_actions(expected: str, predicted: str) -> None:
    verdict = compare_actions(expected, predicted)
    assert verdict.match and verdict.part is None, verdict.message


def test_kind_differs() -> None:
    verdict = compare_actions("search[shoes]", "click[shoes]")
    assert (verdict.match, verdict.part) == (False, "kind")
    assert (verdict.expected_kind, verdict.predicted_kind) == ("search", "click")
    assert "action kind differs" in verdict.message


def test_search_keywords_differ() -> None:
    verdict = compare_actions("search[red shoes]", "search[blue shoes]")
    assert (verdict.part, verdict.argument_type) == ("argument", "keywords")
    assert (verdict.expected_value, verdict.predicted_value) == ("red shoes", "blue shoes")
    assert "search keywords differ" in verdict.message


def test_item_ids_are_exact() -> None:
    verdict = compare_actions("click[B09C337K8S]", "click[b09c337k8s]")
    assert (verdict.match, verdict.part, verdict.argument_type) == (False, "argument", "item_id")
    assert "letter case" in verdict.message
    other = compare_actions("click[B09C337K8S]", "click[B08XYZ1234]")
    assert (other.part, other.expected_value, other.predicted_value) == ("argument", "B09C337K8S", "B08XYZ1234")


def test_item_versus_button_or_option() -> None:
    verdict = compare_actions("click[B09C337K8S]", "click[Buy Now]")
    assert (verdict.part, verdict.argument_type) == ("argument", "item_id")
    assert "expected item id 'B09C337K8S', got button 'Buy Now'" in verdict.message
    option = compare_actions("click[natural black]", "click[Buy Now]")
    assert "expected option value 'natural black', got button 'Buy Now'" in option.message


def test_option_values_case_insensitive_but_not_fuzzy() -> None:
    assert compare_actions("click[Natural Black]", "click[natural black]").match
    verdict = compare_actions("click[natural black]", "click[natural brown]")
    assert (verdict.part, verdict.argument_type) == ("argument", "option")


def test_unparsable_actions() -> None:
    verdict = compare_actions("search[shoes]", "I will search for shoes")
    assert (verdict.match, verdict.part) == (False, "parse")
    assert "predicted action is not of the form" in verdict.message
    assert compare_actions("oops", "search[x]").part == "parse"
    assert compare_actions("not an action", "not  an action").match


def test_argument_types() -> None:
    assert argument_type("search", "B09C337K8S") == "keywords"
    assert argument_type("click", "B09C337K8S") == "item_id"
    assert argument_type("click", "Back to Search") == "button"
    assert argument_type("click", "large") == "option"


def test_env_comparison_is_unchanged() -> None:
    # The typed comparison is an explanation; the env's exact string comparison stays as it was.
    assert compare_actions("click[Natural Black]", "click[natural black]").match
    assert not actions_match("click[natural black]", "click[Natural Black]")
