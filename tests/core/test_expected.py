"""Task-level expected vs actual: the reference's actions aligned with the recorded (or predicted) calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.env import OfflineWebshopEnv
from replay_tui.episodes.model import (
    ExpectedAction,
    Outcome,
    SideCall,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    call_text,
)
from replay_tui.expected import (
    RecordedCall,
    align_expected,
    align_predicted,
    align_trajectory,
    is_write_like,
    recorded_calls,
)
from replay_tui.formats import read_trajectories
from replay_tui.policies.base import FunctionPolicy
from replay_tui.runner import Runner
from replay_tui.sources import open_sources

DATA = Path(__file__).parents[1] / "data"
TAU2_FILES = sorted(
    path
    for folder in (DATA / "formats" / "tau2", DATA / "compare_pairs" / "tau2")
    for path in folder.glob("*.json")
    if orjson.loads(path.read_bytes()).get("simulations")  # the aborted run has none
)
AIRLINE = DATA / "formats" / "tau2" / "2025-10-05T22-50-14.083933_airline_llm_agent_grok-3_user_simulator_grok-3.json"
RELAXED = (
    DATA / "formats" / "tau2" / "2025-10-07T07-44-20.888691_airline_relaxed_llm_agent_grok-4-fast-reasoning_"
    "user_simulator_grok-4-fast-reasoning.json"
)


def _trajectories(path: Path) -> list[Trajectory]:
    return [t for t in read_trajectories(path) if isinstance(t, Trajectory)]


# -- on every shared tau2 file: the same missed actions as tau2 and as a jq one-liner ------------


def _jq_missed(simulation: dict[str, Any], task: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The reference actions no recorded call satisfies, as tau2's ``compare_with_tool_call`` and a
    few lines of jq decide it: any assistant or user tool call, the same name, and the arguments in
    ``compare_args`` (else the call's own keys) equal."""
    criteria = (task or {}).get("evaluation_criteria") or {}
    calls = [
        call
        for message in simulation.get("messages") or []
        if message["role"] in ("assistant", "user")
        for call in message.get("tool_calls") or []
    ]

    def satisfies(call: dict[str, Any], action: dict[str, Any]) -> bool:
        keys = action.get("compare_args")
        keys = call["arguments"].keys() if keys is None else keys
        pick = lambda arguments: {k: v for k, v in arguments.items() if k in keys}  # noqa: E731
        return call["name"] == action["name"] and pick(call["arguments"]) == pick(action["arguments"])

    return [
        (action["name"], action.get("requestor", "assistant"))
        for action in criteria.get("actions") or []
        if not any(satisfies(call, action) for call in calls)
    ]


@pytest.mark.parametrize("path", TAU2_FILES, ids=lambda p: p.name[:40])
def test_missed_actions_equal_tau2s_action_checks_and_a_jq_reading(path: Path) -> None:
    data = orjson.loads(path.read_bytes())
    tasks = {str(task["id"]): task for task in data.get("tasks") or []}
    trajectories = _trajectories(path)
    assert len(trajectories) == len(data["simulations"])
    checked = 0
    for simulation, trajectory in zip(data["simulations"], trajectories, strict=True):
        alignment = align_trajectory(trajectory)
        missed = alignment.missed if alignment else []
        by_user = alignment.missed_by_user if alignment else []
        jq = _jq_missed(simulation, tasks.get(str(simulation["task_id"])))
        assert missed == [name for name, who in jq if who != "user"], trajectory.id
        assert by_user == [name for name, who in jq if who == "user"], trajectory.id
        action_checks = (simulation.get("reward_info") or {}).get("action_checks")
        if action_checks is not None:  # what tau2 itself recorded
            failed = [(c["action"]["name"], c["action"]["requestor"]) for c in action_checks if not c["action_match"]]
            assert missed == [name for name, who in failed if who != "user"], trajectory.id
            assert by_user == [name for name, who in failed if who == "user"], trajectory.id
            checked += 1
    assert checked > 0


def test_the_airline_files_failures_name_their_missed_actions() -> None:
    by_id = {t.id: t for t in _trajectories(AIRLINE)}
    failed = [t for t in by_id.values() if t.outcome.kind == "failed"]
    assert len(failed) == 9
    missed = {t.id: align_trajectory(t).missed for t in failed}  # type: ignore[union-attr]
    assert missed["7#0"] == ["update_reservation_flights", "cancel_reservation", "cancel_reservation"]
    assert missed["9#0"] == []  # every reference action made: the DB differs by the extra writes
    alignment = align_trajectory(by_id["9#0"])
    assert alignment is not None
    assert [(w.step, w.call.name) for w in alignment.extra_writes] == [
        (6, "cancel_reservation"),
        (16, "update_reservation_flights"),
    ]
    (hit,) = [h for h in align_trajectory(by_id["15#0"]).hits if h.status != "matched"]  # type: ignore[union-attr]
    assert hit.status == "different" and "flights[1].flight_number" in hit.reason and hit.step == 12


# -- compare_args, requestor, extra writes, where a missing action goes --------------------------


def _calls(*items: tuple[int, str, dict[str, Any]]) -> list[tuple[int, ToolCall]]:
    return [(step, ToolCall(name=name, arguments=arguments)) for step, name, arguments in items]


def test_compare_args_limit_the_arguments_compared_as_tau2_does() -> None:
    want = ExpectedAction(name="book", arguments={"a": 1, "b": 2}, compare_args=["a"])
    assert align_expected([want], _calls((0, "book", {"a": 1, "b": 3}))).hits[0].status == "matched"
    differing = align_expected([want], _calls((0, "book", {"a": 2, "b": 2}))).hits[0]
    assert differing.status == "different" and "arguments.a" in differing.reason
    # None: the call's own keys are compared (an argument only the reference has is not)
    every = ExpectedAction(name="book", arguments={"a": 1, "b": 2})
    assert align_expected([every], _calls((0, "book", {"a": 1}))).hits[0].status == "matched"
    extra = align_expected([every], _calls((0, "book", {"a": 1, "c": 5}))).hits[0]
    assert extra.status == "different" and "'c'" in extra.reason
    # []: the name alone
    named = ExpectedAction(name="book", arguments={"a": 1}, compare_args=[])
    assert align_expected([named], _calls((0, "book", {"a": 9}))).hits[0].status == "matched"


def test_a_user_side_action_is_reported_apart_from_the_agents_misses() -> None:
    expected = [
        ExpectedAction(name="toggle_data", requestor="user"),
        ExpectedAction(name="refuel_data", arguments={"gb": 2}),
    ]
    alignment = align_expected(expected, _calls((0, "refuel_data", {"gb": 2})))
    assert alignment.missed == [] and alignment.missed_by_user == ["toggle_data"]
    assert alignment.hits[0].reason == "the user simulator never called toggle_data"
    assert (alignment.agent_total, alignment.count("matched", "assistant")) == (1, 1)
    made = align_expected(expected, [RecordedCall(0, ToolCall(name="toggle_data"), "user")])
    assert made.missed_by_user == [] and made.missed == ["refuel_data"]


def test_extra_write_like_calls_are_listed_reads_and_used_calls_are_not() -> None:
    book = {"flight": "HAT1"}
    calls = _calls(
        (0, "get_user_details", {"id": 1}),
        (1, "book_reservation", book),
        (2, "book_reservation", book),  # the same booking twice: the second is extra
        (3, "cancel_reservation", {"id": "X"}),
        (4, "transfer_to_human_agents", {}),
        (5, "think", {}),
    )
    alignment = align_expected([ExpectedAction(name="book_reservation", arguments=book)], calls)
    assert [(w.step, w.call.name) for w in alignment.extra_writes] == [
        (2, "book_reservation"),
        (3, "cancel_reservation"),
    ]
    # the log's own tool type decides before the name
    twice = _calls((0, "transfer_to_human_agents", {}), (1, "transfer_to_human_agents", {}))
    plain = ExpectedAction(name="transfer_to_human_agents")
    assert align_expected([plain], twice).extra_writes == []  # generic by its name
    typed = plain.model_copy(update={"tool_type": "write"})
    assert [w.step for w in align_expected([typed], twice).extra_writes] == [1]
    # an MCP tool's annotations decide before the name
    tools = [{"name": "update_notes", "annotations": {"readOnlyHint": True}}]
    assert align_expected([], _calls((0, "update_notes", {})), tools=tools).extra_writes == []


TAU2_TOOL_TYPES = {
    # src/tau2/domains/*/tools.py and user_tools.py at sierra-research/tau2-bench a2c0247 (is_tool(ToolType.X))
    "write": (
        "book_reservation cancel_reservation send_certificate update_reservation_baggages update_reservation_flights "
        "update_reservation_passengers cancel_pending_order exchange_delivered_order_items "
        "modify_pending_order_address "
        "modify_pending_order_items modify_pending_order_payment modify_user_address return_delivered_order_items "
        "suspend_line resume_line send_payment_request enable_roaming disable_roaming refuel_data "
        "set_network_mode_preference toggle_airplane_mode reseat_sim_card toggle_data toggle_roaming "
        "toggle_data_saver_mode set_apn_settings reset_apn_settings toggle_wifi toggle_wifi_calling connect_vpn "
        "disconnect_vpn grant_app_permission reboot_device make_payment create_task update_task_status "
        "dismiss_notification"
    ),
    "not write": (
        "calculate get_reservation_details get_user_details list_all_airports search_direct_flight "
        "search_onestop_flight think transfer_to_human_agents get_flight_status find_user_id_by_name_zip "
        "find_user_id_by_email get_order_details get_product_details get_item_details list_all_product_types "
        "get_customer_by_phone get_customer_by_id get_customer_by_name get_details_by_id get_bills_for_customer "
        "get_data_usage check_status_bar check_network_status check_network_mode_preference run_speed_test "
        "check_sim_status check_data_restriction_status check_apn_settings check_wifi_status "
        "check_wifi_calling_status check_vpn_status check_installed_apps check_app_status check_app_permissions "
        "can_send_mms check_payment_request get_users check_notifications"
    ),
}


def test_write_like_by_name_agrees_with_tau2s_own_tool_types() -> None:
    assert all(is_write_like(name) for name in TAU2_TOOL_TYPES["write"].split())
    assert not any(is_write_like(name) for name in TAU2_TOOL_TYPES["not write"].split())
    assert is_write_like("createIssue") and not is_write_like("getIssue") and is_write_like("read", tool_type="write")


def test_a_missing_action_is_placed_after_the_previous_matched_ones_step() -> None:
    expected = [ExpectedAction(name=name) for name in ("first", "a", "b", "c", "d")]
    calls = _calls((2, "a", {}), (7, "c", {}))
    hits = align_expected(expected, calls, last_step=7).hits
    assert [(h.name, h.status, h.step) for h in hits] == [
        ("first", "missing", 0),  # nothing matched before it: the first step
        ("a", "matched", 2),
        ("b", "missing", 3),  # after a's step
        ("c", "matched", 7),
        ("d", "missing", 7),  # after c's step, which is the last
    ]


def test_parallel_calls_and_a_users_calls_count_where_they_happened() -> None:
    trajectory = Trajectory(
        id="t",
        format="tau2",
        steps=[
            TrajectoryStep(index=0, action=ToolCall(name="get", arguments={"id": 1})),
            TrajectoryStep(
                index=1,
                action=ToolCall(name="cancel", arguments={"id": 1}),
                other_actions=[ToolCall(name="cancel", arguments={"id": 2})],
            ),
            TrajectoryStep(index=2, content="done"),
        ],
        side_calls=[
            SideCall(call=ToolCall(name="toggle"), after=None),
            SideCall(call=ToolCall(name="reboot"), after=1),
        ],
        outcome=Outcome(
            expected_actions=[
                ExpectedAction(name="cancel", arguments={"id": 2}),
                ExpectedAction(name="reboot", requestor="user"),
                ExpectedAction(name="toggle", requestor="user"),
            ]
        ),
    )
    assert [(c.step, c.call.name, c.requestor) for c in recorded_calls(trajectory)] == [
        (0, "toggle", "user"),
        (0, "get", "assistant"),
        (1, "cancel", "assistant"),
        (1, "cancel", "assistant"),
        (1, "reboot", "user"),
    ]
    alignment = align_trajectory(trajectory)
    assert alignment is not None
    assert [(h.status, h.step) for h in alignment.hits] == [("matched", 1), ("matched", 1), ("matched", 0)]
    assert [(w.step, w.call.arguments) for w in alignment.extra_writes] == [(1, {"id": 1})]
    assert align_trajectory(trajectory.model_copy(update={"outcome": Outcome()})) is None


# -- the same alignment for a replay's predicted calls -------------------------------------------


def _replay(path: Path, change: dict[str, Any]) -> tuple[list[Trajectory], list[list[Any]]]:
    """Replay every episode of ``path`` with a policy that returns the recorded call, with the
    arguments in ``change`` replaced on the tools that take them."""

    def policy(observation, state, actions, prompt, recorded_step=None):
        call = ToolCall(name=recorded_step["llm_action_name"], arguments=dict(recorded_step["llm_action_arguments"]))
        for key, value in change.items():
            if key in call.arguments:
                call.arguments[key] = value
        return call_text(call.name, call.arguments)

    demos = open_sources([path])
    runner = Runner(OfflineWebshopEnv(demos, mismatch_policy="allow"), FunctionPolicy(policy), mode="changed")
    return _trajectories(path), [runner.run_episode(n).steps for n in range(len(demos.refs))]


def test_predicted_calls_of_a_replay_are_aligned_like_the_recorded_ones() -> None:
    trajectories, results = _replay(AIRLINE, {})
    for trajectory, steps in zip(trajectories, results, strict=True):
        recorded, predicted = align_trajectory(trajectory), align_predicted(trajectory, steps)
        assert (recorded is None) == (predicted is None)
        if recorded is not None and predicted is not None:
            assert predicted.hits == recorded.hits and predicted.missed == recorded.missed, trajectory.id


def test_a_replay_that_changes_an_argument_misses_what_the_recording_hit() -> None:
    trajectories, results = _replay(RELAXED, {"cabin": "business"})
    trajectory, steps = trajectories[0], results[0]
    recorded, predicted = align_trajectory(trajectory), align_predicted(trajectory, steps)
    assert recorded is not None and predicted is not None
    assert recorded.missed == [] and recorded.count("matched") == 4
    assert predicted.missed == ["book_reservation"] and predicted.count("matched") == 3
    (hit,) = [h for h in predicted.hits if h.status == "different"]
    assert "arguments.cabin differs" in hit.reason and steps[-1].step_number >= hit.step  # type: ignore[operator]
    # a replay that stopped before the booking: nothing predicted there, so it is missing
    early = [s for s in steps if s.step_number < (hit.step or 0)]
    assert align_predicted(trajectory, early).missed == ["book_reservation"]  # type: ignore[union-attr]
