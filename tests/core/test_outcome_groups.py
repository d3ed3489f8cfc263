"""Outcome groups: the episodes that did not succeed, grouped by termination reason, first missed
expected action, first failed check and the scorer explanation's leading phrase; each kind's groups
sum to the count of episodes that did not succeed (on built outcomes and on a real tau2 file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay_tui.episodes.model import Outcome, OutcomeCheck, ToolCall
from replay_tui.expected import align_expected, align_trajectory
from replay_tui.groups import (
    NO_EXPLANATION,
    NO_FAILED_CHECK,
    NO_REFERENCE,
    NONE_MISSED,
    OUTCOME_GROUPINGS,
    explanation_key,
    group_outcomes,
    sort_outcome_groups,
)
from replay_tui.sources import open_sources, outcome_of_ref

TAU2_AIRLINE = (
    Path(__file__).parents[1]
    / "data"
    / "formats"
    / "tau2"
    / "2025-10-05T22-50-14.083933_airline_llm_agent_grok-3_user_simulator_grok-3.json"
)
BOOK = ToolCall(name="book_reservation", arguments={"user_id": "u1", "cabin": "economy"})
CANCEL = ToolCall(name="cancel_reservation", arguments={"reservation_id": "R1"})


def _items():
    """Four episodes: two failed for different reasons, one errored, one succeeded."""
    missed_book = align_expected([BOOK, CANCEL], [(3, CANCEL)])
    different_book = align_expected(
        [BOOK], [(1, ToolCall(name="book_reservation", arguments={"user_id": "u1", "cabin": "business"}))]
    )
    return [
        (
            "a",
            Outcome(
                success=False,
                status="user_stop",
                checks=[
                    OutcomeCheck(name="db", passed=False, detail="database differs"),
                    OutcomeCheck(name="communicate", passed=True),
                ],
                explanation="The answer 42 was not found. More text.",
            ),
            missed_book,
        ),
        (
            "b",
            Outcome(
                success=False,
                status="max_steps",
                checks=[
                    OutcomeCheck(
                        name="communicate: '5244'", passed=False, detail="Information '5244' not communicated."
                    )
                ],
                explanation="The answer 7 was not found.",
            ),
            different_book,
        ),
        ("c", Outcome(error="Traceback: boom", status=None), None),
        ("d", Outcome(success=True, status="user_stop", explanation="fine"), align_expected([BOOK], [(0, BOOK)])),
    ]


@pytest.mark.parametrize("grouping", [key for key, _ in OUTCOME_GROUPINGS])
def test_each_kind_of_group_covers_every_episode_that_did_not_succeed_once(grouping: str) -> None:
    groups = group_outcomes(_items(), grouping)
    assert sum(group.count for group in groups) == 3
    assert sorted(key for group in groups for key in group.episodes) == ["a", "b", "c"]
    assert all(group.count == len(group.episodes) for group in groups)


def test_the_keys_name_the_cause() -> None:
    by = {
        grouping: {g.key: g.episodes for g in group_outcomes(_items(), grouping)} for grouping, _ in OUTCOME_GROUPINGS
    }
    assert by["termination"] == {"user_stop": ["a"], "max_steps": ["b"], "error": ["c"]}
    assert by["missed"] == {"book_reservation": ["a", "b"], NO_REFERENCE: ["c"]}
    assert by["check"] == {"db": ["a"], "communicate": ["b"], NO_FAILED_CHECK: ["c"]}
    assert by["explanation"] == {"the answer # was not": ["a", "b"], NO_EXPLANATION: ["c"]}


def test_a_group_keeps_one_full_sample_and_the_different_argument() -> None:
    missed = {g.key: g for g in group_outcomes(_items(), "missed")}
    assert missed["book_reservation"].sample == "missing: the agent never called book_reservation"
    only_b = [item for item in _items() if item[0] == "b"]
    (group,) = group_outcomes(only_b, "missed")
    assert group.sample.startswith("different: arguments.cabin")
    (check,) = group_outcomes(only_b, "check")
    assert check.sample == "Information '5244' not communicated."


def test_an_episode_that_missed_nothing_is_a_group_of_its_own() -> None:
    outcome = Outcome(success=False, status="user_stop")
    (group,) = group_outcomes([("x", outcome, align_expected([BOOK], [(0, BOOK)]))], "missed")
    assert group.key == NONE_MISSED


def test_explanations_group_by_their_leading_words() -> None:
    assert explanation_key(Outcome(explanation="  Incorrect; the model said 'B' (expected 'C')")) == "incorrect"
    assert explanation_key(Outcome(explanation="The model chose 'B' but the target was 'C'")) == "the model chose … but"


def test_sorting_and_unknown_names() -> None:
    groups = group_outcomes(_items(), "termination")
    assert [g.key for g in sort_outcome_groups(groups, "group")] == ["error", "max_steps", "user_stop"]
    with pytest.raises(ValueError, match="unknown outcome grouping"):
        group_outcomes([], "nope")
    with pytest.raises(ValueError, match="unknown sort key"):
        sort_outcome_groups([], "nope")


def test_a_tau2_airline_file_groups_its_failed_simulations() -> None:
    """20 simulations, the failed ones counted from the file's rewards: every kind sums to them."""
    raw = json.loads(TAU2_AIRLINE.read_text())
    failed = sum(1 for run in raw["simulations"] if run["reward_info"]["reward"] < 1)
    assert failed == 9
    demos = open_sources(TAU2_AIRLINE)
    items = []
    for ref in demos.refs:
        items.append((ref.session_id, outcome_of_ref(ref), align_trajectory(demos.trajectory(ref.session_id))))
    for grouping, _ in OUTCOME_GROUPINGS:
        groups = group_outcomes(items, grouping)
        assert sum(group.count for group in groups) == failed, grouping
    termination = {g.key: g.count for g in group_outcomes(items, "termination")}
    statuses = [run["termination_reason"] for run in raw["simulations"] if run["reward_info"]["reward"] < 1]
    assert termination == {status: statuses.count(status) for status in set(statuses)}
