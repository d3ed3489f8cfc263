"""Mismatch groups: tools read from every action form, reason kinds from the reasons matching writes,
counts that sum to the mismatch count on real replays (the bundled example, an OpenAI transcript)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from replay_tui.env import OfflineWebshopEnv
from replay_tui.episodes.model import call_text, parse_call_text
from replay_tui.examples import example_path
from replay_tui.formats.webshop_demos.index import open_demos
from replay_tui.groups import (
    NO_ACTION,
    NO_REASON,
    SORT_KEYS,
    TEXT,
    action_tool,
    clean_reason,
    group_mismatches,
    group_steps,
    reason_kind,
    sort_groups,
)
from replay_tui.matching import MatchSettings, judge, judge_call, judge_step
from replay_tui.policies import HeuristicPolicy
from replay_tui.policies.base import FunctionPolicy, PolicyFailure
from replay_tui.runner import Runner, SummaryReport
from replay_tui.sources import open_sources

AIRLINE = Path(__file__).parents[1] / "data" / "formats" / "openai_chat" / "docent__samples__tb_airline.json"


# -- tools --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "tool"),
    [
        ("search[red shoes]", "Search"),
        ("  search[ red  shoes ] ", "Search"),
        ("click[B0ABC12345]", "select_item"),
        ("click[b0abc12345]", "select_item"),
        ("click[Buy Now]", "Buy_Now"),
        ("click[Next >]", "Next"),
        ("click[< Prev]", "Prev"),
        ("click[Back to Search]", "Back_to_Search"),
        ("click[back to search]", "Back_to_Search"),
        ("click[description]", "Description"),
        ("click[Features]", "Features"),
        ("click[reviews]", "Reviews"),
        ("click[Large]", "select_option"),
        ("click[3 pack (12 oz)]", "select_option"),
        ("think[plan]", "think"),
    ],
)
def test_webshop_actions_name_their_tools(action: str, tool: str) -> None:
    assert action_tool(action) == tool


def test_tool_calls_name_their_tool_and_empty_predictions_their_failure() -> None:
    assert action_tool(call_text("search_flights", {"origin": "ORD", "note": "x[y]"})) == "search_flights"
    assert action_tool("list_all_airports()") == "list_all_airports"
    assert action_tool("book({not json") == TEXT  # no closing parenthesis: not a call
    assert action_tool("book(not json)") == "book"
    assert action_tool("click('a12')") == "click"  # a BrowserGym action
    assert action_tool("") == NO_ACTION and action_tool("   ") == NO_ACTION
    assert action_tool("", "timeout") == "<no action: timeout>"
    assert action_tool("I will look for flights now.") == TEXT
    assert action_tool("x" * 500 + "()").endswith("…") and len(action_tool("x" * 500 + "()")) == 60
    assert "\x1b" not in action_tool("\x1b[31mred\x1b[0m()")


# -- reason kinds, from the reasons matching writes -----------------------------------------------


def webshop_kind(expected: str, predicted: str, policy: str = "exact") -> str:
    verdict = judge(expected, predicted, policy)  # type: ignore[arg-type]
    assert verdict.verdict == "mismatch", verdict
    return reason_kind(verdict.reason)


def call_kind(expected: tuple[str, dict], predicted: tuple[str, dict], policy: str = "exact") -> str:
    verdict = judge_call(*expected, *predicted, policy)  # type: ignore[arg-type]
    assert verdict.verdict == "mismatch", verdict
    return reason_kind(verdict.reason)


@pytest.mark.parametrize(
    ("expected", "predicted", "kind"),
    [
        ("search[red shoes]", "search[blue boots]", "search keywords differ"),
        ("search[the red shoes]", "search[red shoes]", "search keywords differ (same words)"),
        ("search[red shoes for men]", "search[mens red shoe]", "search keywords differ (same words)"),
        ("click[B0ABC12345]", "click[B0XYZ98765]", "item id differs"),
        ("click[B0ABC12345]", "click[b0abc12345]", "item id differs in letter case"),
        ("click[Next >]", "click[B0ABC12345]", "argument type differs (button → item id)"),
        ("click[B0ABC12345]", "click[Next >]", "argument type differs (item id → button)"),
        ("click[Large]", "click[B0ABC12345]", "argument type differs (option value → item id)"),
        ("click[Large]", "click[Small]", "option value differs"),
        ("click[Next >]", "click[< Prev]", "button differs"),
        ("search[shoes]", "click[shoes]", "action kind differs"),
        ("click[Large]", "click[large]", "differs only in letter case"),
        ("search[red shoes]", "search[Red Shoes]", "differs only in letter case"),
        ("search[red shoes]", "I would search for shoes", "predicted action not parsed"),
        ("search[red shoes]", "", "predicted action not parsed"),
        ("nonsense", "search[x]", "expected action not parsed"),
    ],
)
def test_webshop_reasons_reduce_to_their_kind(expected: str, predicted: str, kind: str) -> None:
    assert webshop_kind(expected, predicted) == kind


def test_reason_kinds_leave_the_values_out() -> None:
    pairs = [
        ("search[red running shoes]", "search[blue boots]"),
        ("click[B0ABC12345]", "click[B0XYZ98765]"),
        ("click[Next >]", "click[B0ABC12345]"),
        ("click[Large]", "click[Small]"),
    ]
    for expected, predicted in pairs:
        kind = webshop_kind(expected, predicted)
        for word in ("red", "blue", "B0ABC12345", "B0XYZ98765", "Large", "Small", "Next >"):
            assert word not in kind, (kind, word)
    # different values, the same kind: one group
    assert webshop_kind("search[a b]", "search[c d]") == webshop_kind("search[x y z]", "search[w]")


def test_tool_call_reasons_reduce_to_their_kind() -> None:
    flights = ("search_flights", {"origin": "ORD", "destination": "SEA", "passengers": [{"name": "Ann"}]})
    assert call_kind(flights, ("book", {})) == "tool differs"
    assert (
        call_kind(flights, ("search_flights", {**flights[1], "origin": "JFK"})) == "argument arguments.origin differs"
    )
    other = {**flights[1], "passengers": [{"name": "Bob"}]}
    assert call_kind(flights, ("search_flights", other)) == "argument arguments.passengers[*].name differs"
    assert call_kind(flights, ("search_flights", {**flights[1], "origin": 3})) == (
        "argument arguments.origin type differs (string → number)"
    )
    assert call_kind(flights, ("search_flights", {**flights[1], "passengers": []})) == (
        "argument arguments.passengers length differs"
    )
    missing = {"destination": "SEA", "passengers": [], "seat": "12A", "meal": "veg"}
    assert call_kind(flights, ("search_flights", missing)) == "argument arguments: missing 'origin'; unexpected keys"
    assert call_kind(flights, ("search_flights", {**flights[1], "x": 1})) == "argument arguments: unexpected keys"
    # the same kind whatever the values
    a = call_kind(("f", {"q": "alpha"}), ("f", {"q": "beta"}))
    b = call_kind(("f", {"q": "gamma delta"}), ("f", {"q": 'it\'s "quoted"'}))
    assert a == b == "argument arguments.q differs"


def test_reasons_of_steps_judged_as_calls() -> None:
    exact = MatchSettings.build("exact")
    expected = call_text("search_flights", {"origin": "ORD"})
    prose = judge_step(exact, expected, "I will search now", "search_flights", call=True)
    assert reason_kind(prose.reason) == "not a tool call"
    broken = judge_step(exact, expected, "search_flights(origin=ORD)", "search_flights", call=True)
    assert reason_kind(broken.reason) == "arguments are not a JSON object"
    typed = judge_step(exact, expected, call_text("search_flights", {"origin": "ord"}), "search_flights", call=True)
    assert reason_kind(typed.reason) == "argument arguments.origin differs"


def test_failures_unknown_and_missing_reasons() -> None:
    assert reason_kind("predicted action is not of the form kind[argument]: ''", "timeout") == "policy error: timeout"
    assert reason_kind(None) == NO_REASON and reason_kind("") == NO_REASON
    assert reason_kind("something new: 'value' and \"other\"") == "something new: … and …"


def test_the_sample_reason_is_plain_text() -> None:
    verdict = judge_call("f", {"q": "a"}, "f", {"q": "\x1b[31mred\x1b[0m\nshoes"})
    assert "\\x1b" in verdict.reason  # repr() wrote the escape...
    cleaned = clean_reason(verdict.reason)
    assert "\\x1b" not in cleaned and "[31m" not in cleaned and "red shoes" in cleaned  # ...the sample does not
    assert clean_reason(r"path C:\\temp\\new") == r"path C:\\temp\\new"


# -- grouping -----------------------------------------------------------------------------------------


def test_group_steps_counts_sorts_and_keeps_keys() -> None:
    items = [
        ("Result", "click[Next >]", "click[B0AAAAAAAA]", judge("click[Next >]", "click[B0AAAAAAAA]").reason, None, 1),
        ("Search", "search[a]", "search[b]", judge("search[a]", "search[b]").reason, None, 2),
        ("Result", "click[Next >]", "click[B0BBBBBBBB]", judge("click[Next >]", "click[B0BBBBBBBB]").reason, None, 3),
        ("Search", "search[c]", "", "predicted action is not of the form kind[argument]: ''", "timeout", 4),
        ("Search", "search[c]", "", "predicted action is not of the form kind[argument]: ''", None, 5),
    ]
    groups = group_steps(items)
    assert sum(g.count for g in groups) == len(items)
    first = groups[0]
    assert first.key == ("Result", "Next", "select_item", "argument type differs (button → item id)")
    assert first.count == 2 and first.steps == [1, 3] and "B0AAAAAAAA" in first.sample_reason
    failed = [g for g in groups if g.predicted_tool == "<no action: timeout>"]
    assert [g.reason_kind for g in failed] == ["policy error: timeout"] and failed[0].steps == [4]
    empty = [g for g in groups if g.predicted_tool == NO_ACTION]
    assert [g.reason_kind for g in empty] == ["predicted action not parsed"]
    # ties: by state, tools, reason
    assert [g.count for g in groups] == sorted((g.count for g in groups), reverse=True)
    assert [g.state for g in groups[1:]] == sorted(g.state for g in groups[1:])


def test_sort_keys() -> None:
    groups = group_steps(
        [
            ("b", "search[x]", "search[y]", "search keywords differ: x", None, 1),
            ("a", "click[Next >]", "click[B0AAAAAAAA]", "argument differs: z", None, 2),
            ("a", "click[Next >]", "click[B0AAAAAAAA]", "argument differs: z", None, 3),
            ("c", "zeta()", "alpha()", "tool differs: expected 'zeta', got 'alpha'", None, 4),
        ]
    )
    assert [g.count for g in sort_groups(groups, "count")] == [2, 1, 1]
    assert [g.count for g in sort_groups(groups, "count", reverse=True)] == [1, 1, 2]
    assert [g.state for g in sort_groups(groups, "state")] == ["a", "b", "c"]
    assert [g.expected_tool for g in sort_groups(groups, "tool")] == ["Next", "Search", "zeta"]
    assert [g.reason_kind for g in sort_groups(groups, "reason")] == sorted(g.reason_kind for g in groups)
    assert set(SORT_KEYS) == {"count", "state", "tool", "reason"}
    with pytest.raises(ValueError, match="unknown sort key"):
        sort_groups(groups, "size")


def assert_partition(summary: SummaryReport) -> None:
    """Every mismatch in exactly one group, the counts summing to the mismatch count."""
    groups = group_mismatches(summary)
    assert sum(g.count for g in groups) == summary.total_mismatches
    keys = [key for g in groups for key in g.steps]
    expected = [(m.session_id, m.step_label) for e in summary.episodes for m in e.mismatches]
    assert Counter(keys) == Counter(expected) and len(set(keys)) == len(keys)
    assert all(g.count == len(g.steps) for g in groups)
    assert len({g.key for g in groups}) == len(groups)
    assert group_mismatches(summary.episodes) == groups


@pytest.fixture(scope="module")
def heuristic_run() -> SummaryReport:
    env = OfflineWebshopEnv(open_demos(example_path()), mismatch_policy="allow")
    return Runner(env, HeuristicPolicy(), mode="heuristic").run_all()


def test_the_bundled_example_replayed_by_the_heuristic(heuristic_run: SummaryReport) -> None:
    summary = heuristic_run
    assert summary.total_mismatches > 300
    assert_partition(summary)
    groups = group_mismatches(summary)
    assert len(groups) < 20  # kinds, not values
    tools = {(g.expected_tool, g.predicted_tool) for g in groups}
    assert ("Next", "select_item") in tools and ("select_item", "select_item") in tools
    assert ("Search", "Search") in tools
    kinds = {g.reason_kind for g in groups}
    assert {"item id differs", "search keywords differ", "argument type differs (button → item id)"} <= kinds
    # the largest first
    assert [g.count for g in groups] == sorted((g.count for g in groups), reverse=True)
    # each group's sample is the reason of its first step
    reasons = {(m.session_id, m.step_label): m.reason for e in summary.episodes for m in e.mismatches}
    assert all(g.sample_reason == reasons[g.steps[0]] for g in groups)


def test_grouping_follows_the_matching_policy(heuristic_run: SummaryReport) -> None:
    """Under tolerant search matching the 'same words' search mismatches become equivalents."""
    settings = MatchSettings.parse(["Search=tolerant"])
    env = OfflineWebshopEnv(open_demos(example_path()), mismatch_policy="allow", matching=settings)
    tolerant = Runner(env, HeuristicPolicy(), mode="heuristic").run_all()
    assert_partition(tolerant)
    before = {g.key: g.count for g in group_mismatches(heuristic_run)}
    after = {g.key: g.count for g in group_mismatches(tolerant)}
    same_words = ("Search", "Search", "Search", "search keywords differ (same words)")
    assert before[same_words] == tolerant.total_equivalent and same_words not in after


def altering(observation, state, actions, prompt, recorded_step=None):
    """The recorded call, altered by tool: another origin, another tool, a missing argument, a timeout."""
    call = parse_call_text(recorded_step["action_executed_in_env"])
    assert call is not None
    if call.name == "search_direct_flight":
        return call_text(call.name, {**call.arguments, "origin": "ORD"})
    if call.name == "search_onestop_flight":
        return call_text("search_flights", call.arguments)
    if call.name == "book_reservation":
        raise PolicyFailure("timeout", "no answer in 60 s")
    if call.name == "get_user_details":
        return call_text(call.name, {})
    return recorded_step["action_executed_in_env"]


def test_an_openai_transcript_replayed_by_a_policy_that_alters_calls() -> None:
    demos = open_sources([AIRLINE])
    runner = Runner(OfflineWebshopEnv(demos, mismatch_policy="allow"), FunctionPolicy(altering), mode="altering")
    summary = runner.run_all()
    assert summary.total_mismatches == 11 and summary.shows_verdicts
    assert_partition(summary)
    groups = {(g.state, g.expected_tool, g.predicted_tool, g.reason_kind): g for g in group_mismatches(summary)}
    assert (
        groups[
            (
                "search_direct_flight",
                "search_direct_flight",
                "search_direct_flight",
                "argument arguments.origin differs",
            )
        ].count
        == 4
    )
    assert groups[("search_onestop_flight", "search_onestop_flight", "search_flights", "tool differs")].count == 4
    failed = groups[("book_reservation", "book_reservation", "<no action: timeout>", "policy error: timeout")]
    assert failed.count == 2 and failed.sample_reason == "policy error (timeout): no answer in 60 s"
    user = groups[("get_user_details", "get_user_details", "get_user_details", "argument arguments: missing 'user_id'")]
    assert user.count == 1 and user.steps == [(0, "0")]
