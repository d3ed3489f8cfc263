"""Task + answer -> verdict: upstream's demo verdicts, answer parsing, and the 812-task acceptance."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from replay_tui.verify.evaluate import evaluate, evaluate_many, reference_response
from replay_tui.verify.models import AgentResponse, Report, Task, extract_response, parse_tasks
from tests.verify.conftest import demo, passing
from tests.verify.parity.cases import WRONG


def names(result: Any) -> list[str]:
    return [a.name for a in result.assertions]


class TestUpstreamDemos:
    def test_demo_107_failure(self, tasks: dict[int, Task]) -> None:
        response, upstream = demo(107)
        result = evaluate(tasks[107], response)
        ours = result.evaluators_results[0]
        theirs = upstream["evaluators_results"][0]
        assert (result.status, result.score) == (upstream["status"], upstream["score"]) == ("failure", 0.0)
        assert names(result) == [a["assertion_name"] for a in theirs["assertions"]]
        assert ours.actual_normalized == theirs["actual_normalized"]
        assert ours.expected == theirs["expected"]
        assert (result.task_id, result.intent_template_id, result.sites, result.task_revision) == (
            upstream["task_id"],
            upstream["intent_template_id"],
            upstream["sites"],
            upstream["task_revision"],
        )

    def test_demo_108_success(self, tasks: dict[int, Task]) -> None:
        response, upstream = demo(108)
        result = evaluate(tasks[108], response)
        ours = result.evaluators_results[0]
        theirs = upstream["evaluators_results"][0]
        assert (result.status, result.score) == (upstream["status"], upstream["score"]) == ("success", 1.0)
        assert result.assertions == [] and theirs["assertions"] is None
        assert ours.actual_normalized == theirs["actual_normalized"]
        assert ours.expected == theirs["expected"]
        assert ours.actual == theirs["actual"]


class TestAnswerParsing:
    def test_fenced_json_in_free_text(self, tasks: dict[int, Task]) -> None:
        body = reference_response(tasks[108])
        text = f"I counted the orders.\n```json\n{json.dumps(body)}\n```\nDone."
        assert evaluate(tasks[108], text).status == "success"
        assert evaluate(tasks[108], f"```JSON\n{json.dumps(body)}\n```").status == "success"
        assert evaluate(tasks[108], f"```\n{json.dumps(body)}\n```").status == "success"

    def test_first_parsable_block_wins(self) -> None:
        text = '```python\nprint(1)\n```\nanswer:\n```json\n{"status": "SUCCESS"}\n```'
        assert extract_response(text) == {"status": "SUCCESS"}

    def test_enums_in_any_case_and_legacy_key(self, tasks: dict[int, Task]) -> None:
        body = reference_response(tasks[108])
        body["task_type"], body["status"] = "Retrieve", "success"
        assert evaluate(tasks[108], body).status == "success"
        legacy = {"performed_operation": "RETRIEVE", **{k: v for k, v in body.items() if k != "task_type"}}
        assert evaluate(tasks[108], legacy).status == "success"

    def test_error_details_and_extra_keys_are_ignored(self, tasks: dict[int, Task]) -> None:
        body = reference_response(tasks[108]) | {"error_details": "n/a", "notes": "x"}
        assert evaluate(tasks[108], body).status == "success"

    def test_invalid_format(self, tasks: dict[int, Task]) -> None:
        result = evaluate(tasks[108], "The answer is 12 orders in January.")
        assert result.status == "failure"
        assert names(result) == ["agent_response_invalid_format"]
        assert evaluate(tasks[108], '["not", "an", "object"]').assertions[0].name == "agent_response_invalid_format"

    def test_empty_answer(self, tasks: dict[int, Task]) -> None:
        for empty in (None, "", "   ", {}):
            assert names(evaluate(tasks[108], empty)) == ["agent_response_none_mismatch"]

    def test_missing_keys(self, tasks: dict[int, Task]) -> None:
        result = evaluate(tasks[108], {"task_type": "RETRIEVE", "retrieved_data": None})
        assert "agent_response_keys_mismatch" in names(result)
        assert "missing keys ['status']" in result.assertions[0].message

    def test_status_and_task_type_mismatch(self, tasks: dict[int, Task]) -> None:
        body = reference_response(tasks[108]) | {"status": "NOT_FOUND_ERROR"}
        assert names(evaluate(tasks[108], body)) == ["agent_response.status_mismatch"]
        body = reference_response(tasks[108]) | {"task_type": "MUTATE"}
        assert names(evaluate(tasks[108], body)) == ["agent_response.task_type_mismatch"]
        body = reference_response(tasks[108]) | {"status": ""}
        assert names(evaluate(tasks[108], body)) == ["agent_response.status_none_mismatch"]
        body = reference_response(tasks[108]) | {"status": 200}
        assert names(evaluate(tasks[108], body)) == ["agent_response.status_mismatch"]

    def test_strict_model(self) -> None:
        parsed = AgentResponse.from_raw('```json\n{"task_type": "navigate", "status": "success"}\n```')
        assert (parsed.task_type.value, parsed.status.value, parsed.retrieved_data) == ("NAVIGATE", "SUCCESS", None)
        with pytest.raises(ValueError, match="agent_response_invalid_format"):
            AgentResponse.from_raw("no json here")
        with pytest.raises(ValueError, match="agent_response_invalid_format"):
            AgentResponse.from_raw({"task_type": "fly", "status": "SUCCESS"})


class TestRetrievedDataRules:
    def test_missing_data(self, tasks: dict[int, Task]) -> None:
        for empty in (None, [], ""):
            body = reference_response(tasks[108]) | {"retrieved_data": empty}
            assert names(evaluate(tasks[108], body)) == ["retrieved_data_missing_or_null"]
        body = {k: v for k, v in reference_response(tasks[108]).items() if k != "retrieved_data"}
        assert names(evaluate(tasks[108], body)) == ["retrieved_data_missing_or_null"]

    def test_unexpected_data_on_a_not_found_task(self, tasks: dict[int, Task]) -> None:
        assert evaluate(tasks[8], reference_response(tasks[8])).status == "success"
        body = reference_response(tasks[8]) | {"retrieved_data": ["somewhere"]}
        result = evaluate(tasks[8], body)
        assert (result.status, names(result)) == ("failure", ["retrieved_data_unexpected"])

    def test_expected_answer_without_retrieved_data(self, tasks: dict[int, Task]) -> None:
        assert evaluate(tasks[319], {"task_type": "RETRIEVE", "status": "NOT_FOUND_ERROR"}).status == "success"
        body = {"task_type": "RETRIEVE", "status": "NOT_FOUND_ERROR", "retrieved_data": [12.5]}
        assert names(evaluate(tasks[319], body)) == ["retrieved_data_unexpected"]

    def test_data_is_ignored_for_non_retrieve_tasks(self, tasks: dict[int, Task]) -> None:
        task = next(t for t in tasks.values() if t.agent_response_config.task_type.value == "MUTATE")
        body = reference_response(task) | {"retrieved_data": ["whatever"]}
        assert evaluate(task, body).status == passing(task)

    def test_broken_task_is_an_error(self) -> None:
        broken = parse_tasks(
            [
                {
                    "task_id": 1,
                    "sites": ["shopping"],
                    "eval": [
                        {
                            "evaluator": "AgentResponseEvaluator",
                            "results_schema": {"type": "array", "items": {"type": "number"}},
                            "expected": {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": ["many"]},
                        }
                    ],
                }
            ]
        )[1]
        result = evaluate(broken, {"task_type": "retrieve", "status": "success", "retrieved_data": [1]})
        assert result.status == "error"
        assert result.error_msg and "retrieved_data[0]" in result.error_msg

    def test_network_evaluators_are_listed_as_skipped(self, tasks: dict[int, Task]) -> None:
        task = next(t for t in tasks.values() if t.other_evaluators)
        result = evaluate(task, reference_response(task))
        assert result.skipped_evaluators == ["NetworkEventEvaluator"] * len(task.other_evaluators)
        assert result.evaluators_results[0].status == "success"  # the answer passed, the network checks did not run
        assert result.status == "unverified" and result.score == 0.0

    def test_ssh_clone_urls_lose_host_and_port(self, tasks: dict[int, Task]) -> None:
        task = tasks[293]
        body = reference_response(task) | {
            "retrieved_data": ["ssh://git@gitlab.example:2222/convexegg/super_awesome_robot.git"]
        }
        assert evaluate(task, body).status == "success"

    def test_site_urls_derender_urls_in_answers(self) -> None:
        task = parse_tasks(
            {
                "task_id": 5,
                "sites": ["gitlab"],
                "eval": [
                    {
                        "evaluator": "AgentResponseEvaluator",
                        "results_schema": {"type": "array", "items": {"type": "string", "format": "url"}},
                        "expected": {
                            "task_type": "retrieve",
                            "status": "SUCCESS",
                            "retrieved_data": ["__GITLAB__/byteblaze/a11y"],
                        },
                    }
                ],
            }
        )[5]
        body = {
            "task_type": "retrieve",
            "status": "success",
            "retrieved_data": ["http://LOCALHOST:8023/byteblaze/a11y/"],
        }
        assert evaluate(task, body).status == "failure"
        assert evaluate(task, body, site_urls={"gitlab": ["http://localhost:8023"]}).status == "success"
        assert evaluate(task, body, site_urls={"__GITLAB__": ["http://localhost:8023/"]}).status == "success"


# --------------------------------------------------------------------------------------------------
# Acceptance: every task with its own expected answer succeeds; perturbed answers fail as expected.
# --------------------------------------------------------------------------------------------------


def test_every_task_accepts_its_own_expected_answer(tasks: dict[int, Task]) -> None:
    assert len(tasks) == 812
    for choice in (0, -1):
        report = evaluate_many(tasks, [(tid, reference_response(task, choice)) for tid, task in tasks.items()])
        failed = {
            r.task_id: (r.status, [a.name for a in r.assertions], r.error_msg)
            for r in report.results
            if r.status != passing(tasks[r.task_id])
        }
        assert failed == {}
        assert report.summary.overall.success + report.summary.overall.unverified == 812


def test_every_task_accepts_its_expected_answer_as_text(tasks: dict[int, Task]) -> None:
    for task in tasks.values():
        text = "Final answer:\n```json\n" + json.dumps(reference_response(task), ensure_ascii=False) + "\n```"
        assert evaluate(task, text).status == passing(task), task.task_id


def _retrieve_tasks(tasks: dict[int, Task]) -> list[Task]:
    return [t for t in tasks.values() if t.agent_response_config.retrieved_data]


def _leaves(items: list[Any], schema: dict[str, Any]) -> list[tuple[str, list[Any], Any, str]]:
    """Every (path suffix, container, key, type name) leaf of a reference retrieved_data list."""
    out: list[tuple[str, list[Any], Any, str]] = []
    item_schema = schema.get("items") or {}
    for i, item in enumerate(items):
        if item_schema.get("type") == "object" and isinstance(item, dict):
            props = item_schema.get("properties") or {}
            for key, value in item.items():
                prop = props.get(key) or {"type": "string"}
                if value is None or prop.get("type") in ("array", "object"):
                    continue
                out.append((f"[{i}].{key}", item, key, prop.get("format") or prop.get("type") or "string"))
        elif item_schema.get("type") != "object":
            out.append((f"[{i}]", items, i, item_schema.get("format") or item_schema.get("type") or "string"))
    return out


def _perturbed(task: Task) -> tuple[dict[str, Any], dict[str, Any]]:
    body = reference_response(task)
    return body, copy.deepcopy(body)


def test_wrong_number_fails_at_its_path(tasks: dict[int, Task]) -> None:
    checked = 0
    for task in _retrieve_tasks(tasks):
        config = task.agent_response_config
        _, body = _perturbed(task)
        leaves = [
            leaf
            for leaf in _leaves(body["retrieved_data"], config.results_schema)
            if leaf[3] in ("number", "integer", "currency")
        ]
        if not leaves:
            continue
        suffix, container, key, _ = leaves[0]
        original = float(str(container[key]).replace(",", "").replace("$", ""))
        container[key] = original + 1000
        result = evaluate(task, body)
        assert result.status == "failure", task.task_id
        tail = re.escape(suffix.split("]", 1)[1])
        detail = [
            a
            for a in result.assertions
            if a.kind == "mismatch" and re.fullmatch(rf"retrieved_data\[\d+\]{tail}", a.path)
        ]
        assert detail, (task.task_id, names(result))
        assert detail[0].name == detail[0].path + "_mismatch"
        assert detail[0].actual == original + 1000
        if not config.ordered:
            assert names(result)[0] == "retrieved_data_array_values_mismatch"
        checked += 1
    assert checked >= 100


def test_missing_item_fails(tasks: dict[int, Task]) -> None:
    checked = 0
    for task in _retrieve_tasks(tasks):
        _, body = _perturbed(task)
        body["retrieved_data"] = body["retrieved_data"][1:]
        result = evaluate(task, body)
        if not body["retrieved_data"]:
            assert names(result) == ["retrieved_data_missing_or_null"], task.task_id
        else:
            assert (
                names(result)[-1 if task.agent_response_config.ordered else 0] == "retrieved_data_array_values_mismatch"
            )
            summary = next(a for a in result.assertions if a.name == "retrieved_data_array_values_mismatch")
            assert "missing" in summary.message, task.task_id
        checked += 1
    assert checked == 297


def test_extra_item_fails(tasks: dict[int, Task]) -> None:
    for task in _retrieve_tasks(tasks):
        _, body = _perturbed(task)
        body["retrieved_data"].append(copy.deepcopy(body["retrieved_data"][0]))
        result = evaluate(task, body)
        assert result.status == "failure", task.task_id
        summary = [a for a in result.assertions if a.name == "retrieved_data_array_values_mismatch"]
        assert summary and "extra" in summary[0].message, (task.task_id, names(result))
        if not task.agent_response_config.ordered:
            assert names(result) == ["retrieved_data_array_values_mismatch"]


def test_wrong_type_fails_at_its_path(tasks: dict[int, Task]) -> None:
    seen: set[str] = set()
    for task in _retrieve_tasks(tasks):
        _, body = _perturbed(task)
        leaves = _leaves(body["retrieved_data"], task.agent_response_config.results_schema)
        if not leaves:
            continue
        suffix, container, key, type_name = leaves[0]
        container[key] = WRONG[type_name]
        result = evaluate(task, body)
        assert result.status == "failure", task.task_id
        tail = re.escape(suffix.split("]", 1)[1])
        detail = [
            a
            for a in result.assertions
            if a.kind == "mismatch" and re.fullmatch(rf"retrieved_data\[\d+\]{tail}", a.path)
        ]
        assert detail, (task.task_id, names(result))
        assert "cannot read" in detail[0].message, detail[0].message
        seen.add(type_name)
    assert seen >= {
        "number",
        "currency",
        "date",
        "month",
        "duration",
        "distance",
        "boolean",
        "coordinates",
        "url",
        "string",
    }


def test_object_item_of_the_wrong_shape(tasks: dict[int, Task]) -> None:
    task = tasks[108]
    body = reference_response(task)
    body["retrieved_data"][2] = "March: 5"
    result = evaluate(task, body)
    assert names(result) == ["retrieved_data_array_values_mismatch", "retrieved_data[2]_invalid_format"]


def test_report_is_deterministic(tasks: dict[int, Task]) -> None:
    answers = [(107, demo(107)[0]), (108, demo(108)[0]), (999999, {}), (108, "text")]
    first = evaluate_many(tasks, answers).to_json_bytes()
    second = evaluate_many(tasks, list(answers)).to_json_bytes()
    assert first == second
    report = Report.model_validate_json(first)
    assert [r.status for r in report.results] == ["failure", "success", "error", "failure"]
    assert report.summary.per_site["shopping_admin"].failed_task_ids == [107, 108]
    assert report.summary.per_data_type["month"].total == 3
    assert report.summary.per_assertion_kind["invalid_format"] == 1


def _answer(task: Task, data: list[Any]) -> dict[str, Any]:
    return reference_response(task) | {"retrieved_data": data}


def test_task_level_patterns(tasks: dict[int, Task]) -> None:
    assert evaluate(tasks[231], _answer(tasks[231], ["#170"])).status == "success"
    assert evaluate(tasks[231], _answer(tasks[231], ["000170"])).status == "success"
    assert evaluate(tasks[231], _answer(tasks[231], ["#171"])).status == "failure"
    assert evaluate(tasks[231], _answer(tasks[231], ["^.*$"])).status == "failure"
    body = _answer(tasks[146], [{"width": "16 inches", "height": "24in"}])
    assert evaluate(tasks[146], body).status == "success"


def test_task_level_alternatives(tasks: dict[int, Task]) -> None:
    task = tasks[3]
    for choice in ("Sprite Stasis Ball 65 cm", "Cruise Stasis Ball 65 cm", "Sprite Stasis Ball 55 cm"):
        assert evaluate(task, _answer(task, [choice, "Quest Lumaflex Band"])).status == "success"
    both = _answer(task, ["Quest Lumaflex Band", "Sprite Stasis Ball 65 cm", "Cruise Stasis Ball 65 cm"])
    assert names(evaluate(task, both)) == ["retrieved_data_array_values_mismatch"]
    # Listing alternatives is allowed only when every one of them is acceptable: no hedging.
    listed = _answer(task, ["Quest Lumaflex Band", ["Sprite Stasis Ball 65 cm", "Cruise Stasis Ball 65 cm"]])
    assert evaluate(task, listed).status == "success"
    hedged = _answer(task, ["Quest Lumaflex Band", ["Sprite Stasis Ball 65 cm", "Yoga Mat"]])
    assert evaluate(task, hedged).status == "failure"


def test_non_finite_numbers_keep_the_report_valid(tasks: dict[int, Task]) -> None:
    text = '{"task_type": "retrieve", "status": "success", "retrieved_data": [{"month": "Jan", "count": NaN}]}'
    report = evaluate_many(tasks, [(108, text), (107, json.loads(text.replace("NaN", "Infinity")))])
    data = json.loads(report.to_json_bytes())
    assert [r["status"] for r in data["results"]] == ["failure", "failure"]
