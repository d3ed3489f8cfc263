"""Answer cases for the side-by-side parity test: every task's expected answer, its alternative
combinations, format variations and invalid transforms.

Cases are plain JSON (what an agent can write), built from the task file alone, deterministic.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from typing import Any

from replay_tui.verify.evaluate import reference_response
from replay_tui.verify.models import Task
from replay_tui.verify.normalize import _schema_kind
from replay_tui.verify.types import REGISTRY, type_name

Case = tuple[str, int, Any]
"""(variant name, task id, answer)."""


def _alternative_slots(value: Any, schema: Any) -> list[int]:
    """Sizes of every alternatives list in an expected retrieved_data (in walk order)."""
    sizes: list[int] = []

    def walk(node: Any, node_schema: Any) -> None:
        kind = _schema_kind(node_schema)
        if kind == "object" and isinstance(node, dict):
            props = node_schema.get("properties") or {}
            for key, item in node.items():
                walk(item, props.get(key) or {"type": "string"})
        elif kind == "array" and isinstance(node, list):
            for item in node:
                walk(item, node_schema.get("items") or {})
        else:
            dtype = REGISTRY.get(type_name(node_schema))
            if dtype is not None and dtype.is_alternatives(node) and len(node) >= 2:
                sizes.append(len(node))

    walk(value, schema)
    return sizes


def _choose(value: Any, schema: Any, picks: Iterator[int]) -> Any:
    kind = _schema_kind(schema)
    if kind == "object" and isinstance(value, dict):
        props = schema.get("properties") or {}
        return {k: _choose(v, props.get(k) or {"type": "string"}, picks) for k, v in value.items()}
    if kind == "array" and isinstance(value, list):
        return [_choose(v, schema.get("items") or {}, picks) for v in value]
    dtype = REGISTRY.get(type_name(schema))
    if dtype is not None and dtype.is_alternatives(value) and len(value) >= 2:
        return value[next(picks)]
    return value


def alternative_combinations(task: Task, limit: int = 16) -> list[list[Any]]:
    """Up to ``limit`` retrieved_data lists, each picking one value per alternatives list."""
    config = task.agent_response_config
    data = config.retrieved_data
    if not data:
        return []
    sizes = _alternative_slots(data, config.results_schema)
    if not sizes:
        return []
    combos = list(itertools.islice(itertools.product(*(range(n) for n in sizes)), limit))
    return [_choose(copy.deepcopy(data), config.results_schema, iter(combo)) for combo in combos]


def _first_leaf(data: list[Any], schema: Any) -> tuple[Any, Any, str] | None:
    """(container, key, type name) of the first scalar leaf in a reference retrieved_data."""
    items = (schema or {}).get("items") or {}
    for i, item in enumerate(data):
        if _schema_kind(items) == "object" and isinstance(item, dict):
            props = items.get("properties") or {}
            for key, value in item.items():
                prop = props.get(key) or {"type": "string"}
                if value is not None and _schema_kind(prop) == "leaf" and not isinstance(value, list):
                    return item, key, type_name(prop)
        elif _schema_kind(items) == "leaf" and not isinstance(item, list):
            return data, i, type_name(items)
    return None


WRONG = {  # a value of each type's JSON kind that it cannot read (also test_evaluate's wrong types)
    "number": "unknown",
    "integer": "unknown",
    "currency": "n/a",
    "date": "someday",
    "month": "blursday",
    "duration": "42",
    "distance": "42",
    "boolean": "maybe",
    "coordinates": "north-ish",
    "url": 42,
    "string": {"unexpected": "object"},
    "location-name": {"unexpected": "object"},
}


def task_cases(task: Task) -> Iterator[Case]:
    """Every case for one task."""
    tid = task.task_id
    config = task.agent_response_config
    ref = reference_response(task)
    yield "reference", tid, ref
    yield "reference_last", tid, reference_response(task, -1)
    for n, data in enumerate(alternative_combinations(task)):
        yield f"alternatives_{n}", tid, ref | {"retrieved_data": data}
    yield "expected_pasted", tid, dict(config.expected)
    yield "fenced_json", tid, "Done.\n```json\n" + json.dumps(ref) + "\n```"
    yield "fenced_plain", tid, "```\n" + json.dumps(ref) + "\n```"
    yield "fenced_upper", tid, "```JSON\n" + json.dumps(ref) + "\n```"
    yield "json_text", tid, json.dumps(ref)
    yield "free_text", tid, "I think the answer is 42."
    yield "list_answer", tid, [ref]
    yield "empty_object", tid, {}
    yield "null_answer", tid, None
    yield "status_lower", tid, ref | {"status": ref["status"].lower(), "task_type": ref["task_type"].upper()}
    yield "status_wrong", tid, ref | {"status": "UNKNOWN_ERROR" if ref["status"] != "UNKNOWN_ERROR" else "SUCCESS"}
    yield "status_missing", tid, {k: v for k, v in ref.items() if k != "status"}
    yield "status_null", tid, ref | {"status": None}
    yield "status_number", tid, ref | {"status": 200}
    yield "status_pattern", tid, ref | {"status": "^.*$"}
    yield "status_punctuated", tid, ref | {"status": f'"{ref["status"]}."'}
    other_type = "NAVIGATE" if ref["task_type"].upper() != "NAVIGATE" else "MUTATE"
    yield "task_type_wrong", tid, ref | {"task_type": other_type}
    legacy = {"performed_operation": ref["task_type"], **{k: v for k, v in ref.items() if k != "task_type"}}
    yield "legacy_key", tid, legacy
    yield "data_missing", tid, {k: v for k, v in ref.items() if k != "retrieved_data"}
    yield "data_null", tid, ref | {"retrieved_data": None}
    yield "data_empty", tid, ref | {"retrieved_data": []}
    yield "data_some", tid, ref | {"retrieved_data": ["somewhere"]}
    yield "data_zero", tid, ref | {"retrieved_data": 0}
    yield "data_regex", tid, ref | {"retrieved_data": ["^.*$"]}
    data = ref["retrieved_data"]
    if not data:
        return
    yield "data_as_json_text", tid, ref | {"retrieved_data": json.dumps(data)}
    yield "data_scalar", tid, ref | {"retrieved_data": data[0]}
    yield "item_missing", tid, ref | {"retrieved_data": data[1:]}
    yield "item_extra", tid, ref | {"retrieved_data": [*data, copy.deepcopy(data[0])]}
    yield "items_reversed", tid, ref | {"retrieved_data": list(reversed(data))}
    yield "items_as_json_text", tid, ref | {"retrieved_data": [json.dumps(item) for item in data]}
    yield "hedged", tid, ref | {"retrieved_data": [[item, "zzz wrong"] for item in data]}
    yield "regex_items", tid, ref | {"retrieved_data": ["^.*$" for _ in data]}
    yield "nested_list", tid, ref | {"retrieved_data": [data]}
    leaf = _first_leaf(copy.deepcopy(data), config.results_schema)
    if leaf is None:
        return
    body = copy.deepcopy(ref)
    leaf = _first_leaf(body["retrieved_data"], config.results_schema)
    assert leaf is not None
    container, key, kind = leaf
    original = container[key]
    for name, value in _leaf_variants(original, kind):
        container[key] = value
        yield f"leaf_{name}", tid, copy.deepcopy(body)
    container[key] = original


def _leaf_variants(value: Any, kind: str) -> Iterator[tuple[str, Any]]:
    yield "wrong_type", WRONG.get(kind, 12345)
    yield "null", None
    yield "empty_text", ""
    yield "one_item_list", [value]
    yield "regex", "^.*$"
    yield "hedged", [value, "zzz wrong"]
    yield "as_text", str(value)
    if isinstance(value, str):
        yield "upper", value.upper()
        yield "quoted", f'"{value}."'
        yield "padded", f"  {value}\n"
        yield "prefix", value[: max(1, len(value) // 2)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        yield "plus_1000", value + 1000
        yield "plus_tenth", round(value + 0.1, 6)
        yield "with_dollar", f"${value:,}"
        yield "with_comma", f"{value:,}"


def all_cases(tasks: dict[int, Task]) -> list[Case]:
    return [case for task in tasks.values() for case in task_cases(task)]
