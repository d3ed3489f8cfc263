import pytest

from replay_tui.actions import (
    ActionError,
    canonical_tool,
    format_env_action,
    normalize_action,
    parse_action,
)
from replay_tui.matching import actions_match


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("Search", {"keywords": "red shoes", "max_price": "40"}, "search[red shoes]"),
        ("search", {"query": "red shoes"}, "search[red shoes]"),
        ("select_item", {"item_id": "B09C337K8S"}, "click[B09C337K8S]"),
        ("Next", {}, "click[Next >]"),
        ("next_page", None, "click[Next >]"),
        ("Prev", {}, "click[< Prev]"),
        ("previous_page", {}, "click[< Prev]"),
        ("Back_to_Search", {}, "click[Back to Search]"),
        ("back_to_search", {}, "click[Back to Search]"),
        ("BACK-TO-SEARCH", {}, "click[Back to Search]"),
        ("Description", {}, "click[description]"),
        ("Features", {}, "click[features]"),
        ("reviews", {}, "click[reviews]"),
        ("Buy_Now", {}, "click[Buy Now]"),
        ("buy_now", {}, "click[Buy Now]"),
        ("select_option", {"value": "22 inch"}, "click[22 inch]"),
        ("color", {"option_value": "natural black"}, "click[natural black]"),
    ],
)
def test_tool_calls_map_to_env_actions(name, arguments, expected):
    assert format_env_action(name, arguments) == expected


def test_unknown_tool_and_missing_argument_are_errors():
    with pytest.raises(ActionError, match="unknown tool"):
        format_env_action("Teleport", {})
    with pytest.raises(ActionError, match="keywords"):
        format_env_action("Search", {"max_price": "10"})
    with pytest.raises(ActionError, match="item_id"):
        format_env_action("select_item", {})


def test_canonical_tool_is_case_and_separator_insensitive():
    assert canonical_tool("NEXT_PAGE") == "Next"
    assert canonical_tool("Buy Now") == "Buy_Now"
    assert canonical_tool("nonsense") is None


def test_parse_action_splits_kind_and_argument():
    assert parse_action(" search[ red  shoes ] ") == ("search", "red  shoes")
    assert parse_action("click[< Prev]") == ("click", "< Prev")
    assert parse_action("click[[2 Pack] socks]") == ("click", "[2 Pack] socks")
    with pytest.raises(ActionError):
        parse_action("search red shoes")


def test_normalization_strips_and_collapses_whitespace():
    assert normalize_action("  click[Next  >] ") == "click[Next >]"
    assert normalize_action("search[  long   clip-in\thair ]") == "search[long clip-in hair]"
    assert actions_match("click[ Back to  Search ]", "click[Back to Search]")


def test_case_policy_defaults_to_exact():
    assert not actions_match("click[next >]", "click[Next >]")
    assert actions_match("click[next >]", "click[Next >]", case="lower")
    assert actions_match("click[b09c337k8s]", "click[B09C337K8S]", case="env")
    # env policy keeps the action kind exact, as WebShop's own parser does
    assert not actions_match("Click[b09c337k8s]", "click[B09C337K8S]", case="env")


def test_brackets_buttons_must_be_exact():
    assert not actions_match("click[Next]", "click[Next >]")
    assert not actions_match("click[<Prev]", "click[< Prev]")


def test_typed_comparison_reads_arguments_by_kind():
    assert actions_match("search[Long  Clip-In hair extension.]", "search[long clip in hair extension]", case="typed")
    assert actions_match("click[next >]", "click[Next >]", case="typed")
    assert actions_match("click[LARGE]", "click[large]", case="typed")
    assert not actions_match("click[b09c337k8s]", "click[B09C337K8S]", case="typed")  # item ids are exact
    assert not actions_match("click[Next >]", "search[Next >]", case="typed")
