"""Schema-driven normalisation of ``retrieved_data``: arrays, objects and typed leaves.

The expected side is normalised strictly (any failure raises: the task is broken, the verdict is an
error); the actual side leniently (a value that cannot be read is kept as :class:`Raw`, which never
equals a typed value, so that part of the answer fails with the reason attached).

Normalised values are: ``None``; :class:`~replay_tui.verify.types.TypedValue` leaves; ``tuple`` for
arrays; ``dict`` for objects; :class:`Raw` for actual values that could not be read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from replay_tui.verify.types import (
    NormalizationError,
    Pattern,
    SchemaError,
    Side,
    TypedValue,
    UrlValue,
    data_type,
    type_name,
)


class ExpectedValueError(ValueError):
    """An expected value in the task file that cannot be normalised by its schema."""


@dataclass(frozen=True, eq=False)
class Raw:
    """An actual value kept as given because it could not be read as ``expected_type``."""

    value: Any
    expected_type: str
    reason: str


def _schema_kind(schema: Mapping[str, Any] | None) -> str:
    if not schema:
        return "leaf"
    kind = schema.get("type")
    if kind in ("array", "object") and not schema.get("format"):
        return str(kind)
    return "leaf"


def is_no_data(raw: Any) -> bool:
    """``None``, ``[]``, ``""`` and ``{}`` hold no data; ``0`` and ``false`` are data."""
    return not raw and not isinstance(raw, (int, float, bool))


def _parsed_if(value: Any, kind: type) -> Any:
    """A JSON string holding a ``kind`` (list or dict) parsed; anything else as given."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return value
        if isinstance(parsed, kind):
            return parsed
    return value


def normalize_retrieved_data(raw: Any, schema: Mapping[str, Any] | None, side: Side) -> tuple[Any, ...] | None:
    """Normalise a whole ``retrieved_data`` value against the task's ``results_schema``.

    ``None``, ``[]``, ``""`` and ``{}`` are "no data" (``None``); ``0`` and ``false`` are data. A
    single value is wrapped into a one-item list. A whole ``retrieved_data`` given as a JSON string
    is *not* parsed (upstream rule): it is one item.
    """
    if is_no_data(raw):
        return None
    items = tuple(raw) if isinstance(raw, (list, tuple)) else (raw,)
    if not schema or schema.get("type") != "array":
        raise SchemaError(f"results schema must be an array schema to hold data, got {type_name(schema)!r}")
    return normalize_array(items, schema, side, "retrieved_data")


def normalize_array(value: Any, schema: Mapping[str, Any], side: Side, path: str) -> Any:
    """Normalise a list by its array schema (``items`` gives the item schema)."""
    value = _parsed_if(value, list)
    if not isinstance(value, (list, tuple)):
        if side.expected:
            raise ExpectedValueError(f"{path}: the schema expects an array, got {type(value).__name__}")
        return Raw(value, "array", f"expected an array, got {type(value).__name__}")
    items_schema = schema.get("items") or {}
    return tuple(normalize_value(item, items_schema, side, f"{path}[{i}]") for i, item in enumerate(value))


def normalize_value(value: Any, schema: Mapping[str, Any] | None, side: Side, path: str) -> Any:
    """Normalise one array item or object property by its schema."""
    kind = _schema_kind(schema)
    if kind == "object":
        assert schema is not None
        return normalize_object(value, schema, side, path)
    if kind == "array":
        assert schema is not None
        return normalize_array(value, schema, side, path)
    return normalize_leaf(value, schema, side, path)


def normalize_leaf(value: Any, schema: Mapping[str, Any] | None, side: Side, path: str) -> Any:
    dtype = data_type(schema)
    try:
        return dtype.make(value, side)
    except NormalizationError as exc:
        if side.expected:
            raise ExpectedValueError(f"{path}: {exc}") from exc
        return Raw(value, dtype.name, str(exc))


def normalize_object(value: Any, schema: Mapping[str, Any], side: Side, path: str) -> Any:
    """Normalise an object: every key the value has, by its property schema (``string`` when none).

    The key set is the value's own, so the comparison can report missing and extra keys. ``None``
    properties stay ``None``. An object given as a JSON string is parsed.
    """
    value = _parsed_if(value, dict)
    if not isinstance(value, Mapping):
        if side.expected:
            raise ExpectedValueError(f"{path}: the schema expects an object, got {type(value).__name__}")
        return Raw(value, "object", f"expected an object, got {type(value).__name__}")
    properties = schema.get("properties") or {}
    result: dict[str, Any] = {}
    for key, item in value.items():
        key = str(key)
        if item is None:
            result[key] = None
            continue
        result[key] = normalize_value(item, properties.get(key) or {"type": "string"}, side, f"{path}.{key}")
    return result


def schema_data_types(schema: Mapping[str, Any] | None) -> list[str]:
    """The sorted data-type names a results schema uses (``null`` for a ``{"type": "null"}`` schema)."""
    names: set[str] = set()

    def walk(node: Mapping[str, Any] | None) -> None:
        kind = _schema_kind(node)
        if kind == "array":
            assert node is not None
            walk(node.get("items") or {})
        elif kind == "object":
            assert node is not None
            for prop in (node.get("properties") or {}).values():
                walk(prop if isinstance(prop, Mapping) else None)
        else:
            names.add(type_name(node))

    walk(schema)
    return sorted(names)


def to_display(value: Any) -> Any:
    """A JSON-able view of a normalised (or raw) value, for reports and assertion messages."""
    if isinstance(value, TypedValue):
        return value.to_json()
    if isinstance(value, Raw):
        return to_jsonable(value.value)
    if isinstance(value, tuple):
        return [to_display(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_display(v) for k, v in value.items()}
    return to_jsonable(value)


def to_jsonable(value: Any) -> Any:
    """Make any parsed-JSON-like value safe for strict JSON output (non-finite floats become text)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Pattern):
        return value.text
    if isinstance(value, UrlValue):
        return value.base
    return str(value)


# --------------------------------------------------------------------------------------------------
# Upstream rules: the official evaluator's normalisation of retrieved_data, quirks included
# --------------------------------------------------------------------------------------------------


def _upstream_type_of(schema: Any) -> tuple[Any, bool]:
    """(type name, or the object schema itself; is it an array) the way upstream reads a schema:
    ``array`` takes its items' type (nested arrays flatten), ``object`` keeps the schema, then
    ``format``, then ``type``, then ``string``."""
    if not isinstance(schema, Mapping):
        raise SchemaError(f"a schema must be an object, got {type(schema).__name__}")
    kind = schema.get("type")
    if kind == "array":
        return _upstream_type_of(schema.get("items", {}))[0], True
    if kind == "object":
        return schema, False
    return schema.get("format") or kind or "string", False


def _upstream_leaf(value: Any, name: str, side: Side) -> Any:
    dtype = data_type({"type": name})
    try:
        return dtype.make(value, side)
    except Exception as exc:  # upstream keeps any agent value it cannot read; the expected side raises
        if side.expected:
            raise ExpectedValueError(f"cannot read {value!r} as {name}: {exc}") from exc
        return Raw(value, dtype.name, str(exc))


def normalize_retrieved_data_upstream(raw: Any, schema: Any, side: Side) -> tuple[Any, ...] | None:
    """``retrieved_data`` as the official evaluator normalises it (``--rules upstream``).

    As :func:`normalize_retrieved_data`, except: a results schema that is not an array (the
    ``{"type": "null"}`` of "no data" tasks) is an error as soon as there is data to read; object
    items given as a list become a list of objects; a property without a schema is text; any list
    where one value belongs is a set of alternatives on both sides.
    """
    if is_no_data(raw):
        return None
    items = tuple(raw) if isinstance(raw, (list, tuple)) else (raw,)
    if schema is not None and not isinstance(schema, Mapping):
        raise SchemaError(f"results_schema must be an object, got {type(schema).__name__}")
    if schema is None:
        items_schema: Mapping[str, Any] = {}
    else:
        if schema.get("type", "array") != "array":
            raise SchemaError(f"results_schema type must be 'array', got {schema.get('type')!r}")
        items_schema = schema.get("items", {})
    if items_schema.get("type", "string") == "object":
        return tuple(_upstream_object_or_list(item, items_schema, side) for item in items)
    name = items_schema.get("format") or items_schema.get("type", "string")
    data_type({"type": name})  # an unknown type name is an error of the task, on both sides
    return tuple(_upstream_leaf(item, name, side) for item in items)


def _upstream_object_or_list(value: Any, schema: Mapping[str, Any], side: Side) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_upstream_object(item, schema, side) for item in value)
    return _upstream_object(value, schema, side)


def _upstream_object(value: Any, schema: Mapping[str, Any], side: Side) -> Any:
    if isinstance(value, str):
        value = _parsed_if(value, dict)
    if not isinstance(value, Mapping):
        if side.expected:
            raise ExpectedValueError(f"expected an object, got {type(value).__name__}")
        return Raw(value, "object", f"expected an object, got {type(value).__name__}")
    properties = schema.get("properties", {})
    result: dict[str, Any] = {}
    for key, item in value.items():
        if item is None:
            result[key] = None
            continue
        prop = properties.get(key)
        if prop is None:
            result[key] = _upstream_leaf(item, "string", side)
            continue
        kind, is_array = _upstream_type_of(prop)
        try:
            if is_array:
                result[key] = _upstream_array(item, kind, side)
            elif isinstance(kind, Mapping):
                result[key] = _upstream_object(item, kind, side)
            else:
                name = kind if isinstance(kind, str) and _known(kind) else "string"
                result[key] = _upstream_leaf(item, name, side)
        except (ExpectedValueError, SchemaError):
            raise
        except Exception as exc:  # pragma: no cover - defensive, as upstream
            if side.expected:
                raise ExpectedValueError(f"{key}: {exc}") from exc
            result[key] = Raw(item, "?", str(exc))
    return result


def _known(name: str) -> bool:
    try:
        data_type({"type": name})
    except SchemaError:
        return False
    return True


def _upstream_array(value: Any, kind: Any, side: Side) -> Any:
    value = _parsed_if(value, list)
    if not isinstance(value, (list, tuple)):
        if side.expected:
            raise ExpectedValueError(f"expected an array, got {type(value).__name__}")
        return Raw(value, "array", f"expected an array, got {type(value).__name__}")
    if isinstance(kind, Mapping):
        return tuple(_upstream_object(item, kind, side) for item in value)
    if not _known(str(kind)):
        if side.expected:
            raise SchemaError(f"unknown data type {kind!r} in results schema")
        return Raw(value, str(kind), f"unknown data type {kind!r}")
    return tuple(_upstream_leaf(item, str(kind), side) for item in value)
