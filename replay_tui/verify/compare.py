"""Structural comparison of normalised values, producing named assertions with paths.

Rules (upstream's, except where noted):

- ``None`` equals ``None``; ``None`` against a value is ``<path>_none_mismatch``.
- Objects need exactly the expected keys (``<path>_keys_mismatch``); values are compared key by key
  (``<path>.<key>``). A non-object where an object belongs is ``<path>_invalid_format``.
- Unordered arrays (the default) are multisets: every expected item must be matched by its own
  actual item and nothing may be left over. The matching is an *optimal* bipartite assignment
  (``scipy.optimize.linear_sum_assignment``), so the verdict never depends on order, also when
  alternatives overlap (upstream matches greedily: expected ``[["a","b"], "a"]`` against
  ``["a", "b"]`` fails there, passes here). A failure is one ``<path>_array_values_mismatch``, plus,
  for each unmatched expected item paired with its closest unmatched actual item, that pair's own
  assertions (``retrieved_data[2].price_mismatch``) so the report says what differed.
- Ordered arrays compare position by position (``<path>[i]...``), with an
  ``<path>_array_values_mismatch`` summary when lengths differ or nothing more specific was found.
- Leaves are typed values: equal when some pair of alternatives is equal by the type's rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from replay_tui.verify.models import Assertion
from replay_tui.verify.normalize import Raw, to_display
from replay_tui.verify.types import TypedValue


def _assertion(path: str, kind: str, expected: Any, actual: Any, message: str) -> Assertion:
    return Assertion(
        name=f"{path}_{kind}",
        kind=kind,
        path=path,
        expected=to_display(expected),
        actual=to_display(actual),
        message=message,
    )


def _short(value: Any, limit: int = 120) -> str:
    import json

    try:
        text = json.dumps(to_display(value), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, TypedValue):
        return value.dtype.name
    if isinstance(value, Raw):
        raw = value.value
        return "object" if isinstance(raw, dict) else "array" if isinstance(raw, list) else type(raw).__name__
    if isinstance(value, dict):
        return "object"
    if isinstance(value, tuple):
        return "array"
    return type(value).__name__


def compare(
    expected: Any,
    actual: Any,
    *,
    path: str,
    ordered: bool = False,
    ignored_keys: Iterable[str] = (),
) -> list[Assertion]:
    """Compare normalised ``actual`` against normalised ``expected``; an empty list means equal.

    ``ignored_keys`` are top-level object keys whose *values* are not compared (their presence is).
    """
    return _compare(expected, actual, path, ordered, frozenset(ignored_keys))


def _compare(
    expected: Any, actual: Any, path: str, ordered: bool, ignored: frozenset[str] = frozenset()
) -> list[Assertion]:
    if expected is None and actual is None:
        return []
    if expected is None or actual is None:
        return [
            _assertion(path, "none_mismatch", expected, actual, f"expected {_short(expected)}, got {_short(actual)}")
        ]
    if isinstance(expected, dict):
        return _compare_objects(expected, actual, path, ordered, ignored)
    if isinstance(expected, tuple):
        return _compare_arrays(expected, actual, path, ordered)
    if isinstance(expected, TypedValue):
        if expected.matches(actual):
            return []
        if isinstance(actual, Raw):
            message = f"expected {expected.dtype.name} {_short(expected)}, got {_short(actual)} ({actual.reason})"
        elif isinstance(actual, TypedValue):
            rule = expected.dtype.tolerance
            suffix = "" if rule == "exact" else f" (tolerance {rule})"
            message = f"expected {_short(expected)}, got {_short(actual)}{suffix}"
        else:
            message = f"expected {expected.dtype.name} {_short(expected)}, got {_kind_of(actual)} {_short(actual)}"
        return [_assertion(path, "mismatch", expected, actual, message)]
    if expected == actual:  # plain values (e.g. in hand-built structures)
        return []
    return [_assertion(path, "mismatch", expected, actual, f"expected {_short(expected)}, got {_short(actual)}")]


def _keys_mismatch(expected: dict[str, Any], actual: dict[Any, Any], path: str) -> list[Assertion]:
    """The assertion for an object whose keys are not the expected ones (the same under both rule sets)."""
    missing = sorted(k for k in expected if k not in actual)
    extra = sorted(str(k) for k in actual if k not in expected)
    if not (missing or extra):
        return []
    parts = ([f"missing keys {missing}"] if missing else []) + ([f"extra keys {extra}"] if extra else [])
    return [
        Assertion(
            name=f"{path}_keys_mismatch",
            kind="keys_mismatch",
            path=path,
            expected=sorted(expected),
            actual=sorted(str(k) for k in actual),
            message="; ".join(parts),
        )
    ]


def _compare_objects(
    expected: dict[str, Any], actual: Any, path: str, ordered: bool, ignored: frozenset[str]
) -> list[Assertion]:
    if not isinstance(actual, dict):
        return [
            _assertion(
                path, "invalid_format", expected, actual, f"expected an object, got {_kind_of(actual)} {_short(actual)}"
            )
        ]
    assertions = _keys_mismatch(expected, actual, path)
    for key in expected:
        if key in actual and key not in ignored:
            assertions.extend(_compare(expected[key], actual[key], f"{path}.{key}", ordered))
    return assertions


def _compare_arrays(expected: tuple[Any, ...], actual: Any, path: str, ordered: bool) -> list[Assertion]:
    if not isinstance(actual, tuple):
        return [
            _assertion(
                path, "invalid_format", expected, actual, f"expected an array, got {_kind_of(actual)} {_short(actual)}"
            )
        ]
    if ordered:
        return _compare_ordered(expected, actual, path)
    return _compare_unordered(expected, actual, path)


def _compare_ordered(expected: tuple[Any, ...], actual: tuple[Any, ...], path: str) -> list[Assertion]:
    assertions: list[Assertion] = []
    matched = 0
    for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
        nested = _compare(e, a, f"{path}[{i}]", True)
        if nested:
            assertions.extend(nested)
        else:
            matched += 1
    if len(expected) != len(actual) or (matched < len(expected) and not assertions):
        if len(actual) < len(expected):
            detail = f"; missing items at positions {len(actual)}..{len(expected) - 1}"
        elif len(actual) > len(expected):
            detail = f"; extra items at positions {len(expected)}..{len(actual) - 1}"
        else:
            detail = ""
        assertions.append(
            _assertion(
                path,
                "array_values_mismatch",
                expected,
                actual,
                f"ordered array mismatch: matched {matched}/{len(expected)}, got {len(actual)} items{detail}",
            )
        )
    return assertions


def _compare_unordered(expected: tuple[Any, ...], actual: tuple[Any, ...], path: str) -> list[Assertion]:
    n, m = len(expected), len(actual)
    trials = [[_compare(e, a, f"{path}[{i}]", False) for a in actual] for i, e in enumerate(expected)]
    pairs = _max_matching([[not cell for cell in row] for row in trials]) if n and m else []
    matched_e = {i for i, _ in pairs}
    matched_a = {j for _, j in pairs}
    missing = [i for i in range(n) if i not in matched_e]
    extra = [j for j in range(m) if j not in matched_a]
    if not missing and not extra:
        return []
    count = len(pairs)
    if missing and not extra:
        message = f"array is missing {len(missing)} expected item(s): matched {count}/{n}"
    elif extra and not missing:
        message = f"array has all {n} expected item(s) but {len(extra)} extra"
    else:
        message = f"array mismatch (unordered): matched {count}/{n}, missing {len(missing)}, extra {len(extra)}"
    details: list[Assertion] = []
    closest = _closest_pairs(trials, missing, extra)
    for i, j in closest:
        note = f" (closest actual item: [{j}])"
        details.extend(a.model_copy(update={"message": a.message + note}) for a in trials[i][j])
    paired_e = {i for i, _ in closest}
    paired_a = {j for _, j in closest}
    missing_values = tuple(expected[i] for i in missing)
    extra_values = tuple(actual[j] for j in extra)
    if len(paired_e) < len(missing):
        message += "; missing: " + ", ".join(_short(expected[i], 60) for i in missing if i not in paired_e)
    if len(paired_a) < len(extra):
        message += "; extra: " + ", ".join(_short(actual[j], 60) for j in extra if j not in paired_a)
    summary = _assertion(path, "array_values_mismatch", missing_values, extra_values, message)
    return [summary, *details]


def _max_matching(ok: list[list[bool]]) -> list[tuple[int, int]]:
    """A maximum set of (expected, actual) pairs that match, one actual per expected."""
    n, m = len(ok), len(ok[0])
    if n == 1 or m == 1:  # no choice to make: take the first match
        for i in range(n):
            for j in range(m):
                if ok[i][j]:
                    return [(i, j)]
        return []
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    cost = np.array([[0.0 if cell else 1.0 for cell in row] for row in ok])
    rows, cols = linear_sum_assignment(cost)
    return [(int(i), int(j)) for i, j in zip(rows, cols, strict=True) if ok[i][j]]


# How far apart two items are, by the kinds of assertions comparing them produces.
_WEIGHTS = {"invalid_format": 10, "keys_mismatch": 3, "array_values_mismatch": 2}


def _closest_pairs(trials: list[list[list[Assertion]]], missing: list[int], extra: list[int]) -> list[tuple[int, int]]:
    """Pair unmatched expected items with the unmatched actual items that differ from them least."""
    if not missing or not extra:
        return []
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    cost = np.array([[float(sum(_WEIGHTS.get(a.kind, 1) for a in trials[i][j])) for j in extra] for i in missing])
    rows, cols = linear_sum_assignment(cost)
    return sorted((missing[r], extra[c]) for r, c in zip(rows, cols, strict=True))


# --------------------------------------------------------------------------------------------------
# Upstream rules: greedy matching, one summary per array, and the official circular-reference check
# --------------------------------------------------------------------------------------------------


class CircularReferenceError(ValueError):
    """Upstream refuses to visit one actual container twice in a comparison (an ``error`` verdict).

    Normalised containers are fresh objects, except that every empty array is the same ``()``: an
    answer with two empty-array properties trips the check there, so it does here under upstream rules.
    """


def compare_upstream(
    expected: Any,
    actual: Any,
    *,
    path: str,
    ordered: bool = False,
    ignored_keys: Iterable[str] = (),
) -> list[Assertion]:
    """Compare as the official evaluator does (``--rules upstream``); an empty list means equal.

    Unordered arrays are matched greedily: each expected item in turn takes the first unused actual
    item that matches it, so with alternatives the verdict can depend on order. A failed array is a
    single ``<path>_array_values_mismatch``. Leaves use the types' symmetric
    :meth:`~replay_tui.verify.types.DataType.upstream_equal`.
    """
    return _upstream(expected, actual, path, ordered, frozenset(ignored_keys), set())


def _upstream(
    expected: Any, actual: Any, path: str, ordered: bool, ignored: frozenset[str], visited: set[int]
) -> list[Assertion]:
    if isinstance(actual, (dict, tuple, list)):
        if id(actual) in visited:
            raise CircularReferenceError(f"circular reference at {path!r}: one container visited twice")
        visited.add(id(actual))
    if expected is None and actual is None:
        return []
    if expected is None or actual is None:
        return [
            _assertion(path, "none_mismatch", expected, actual, f"expected {_short(expected)}, got {_short(actual)}")
        ]
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            message = f"expected an object, got {_kind_of(actual)} {_short(actual)}"
            return [_assertion(path, "invalid_format", expected, actual, message)]
        if not expected:
            raise ValueError(f"{path}: the expected object has no keys")
        assertions = _keys_mismatch(expected, actual, path)
        for key in expected:
            if key in actual and key not in ignored:
                assertions.extend(_upstream(expected[key], actual[key], f"{path}.{key}", ordered, ignored, visited))
        return assertions
    if isinstance(expected, tuple):
        if not isinstance(actual, (tuple, list)):
            message = f"expected an array, got {_kind_of(actual)} {_short(actual)}"
            return [_assertion(path, "invalid_format", expected, actual, message)]
        items = tuple(actual)
        if ordered:
            return _upstream_ordered(expected, items, path, ignored, visited)
        return _upstream_greedy(expected, items, path, ignored, visited)
    if isinstance(expected, TypedValue):
        if expected.matches(actual, upstream=True):
            return []
        if isinstance(actual, Raw):
            message = f"expected {expected.dtype.name} {_short(expected)}, got {_short(actual)} ({actual.reason})"
        else:
            message = f"expected {_short(expected)}, got {_short(actual)}"
        return [_assertion(path, "mismatch", expected, actual, message)]
    if expected == actual:
        return []
    return [_assertion(path, "mismatch", expected, actual, f"expected {_short(expected)}, got {_short(actual)}")]


def _upstream_greedy(
    expected: tuple[Any, ...], actual: tuple[Any, ...], path: str, ignored: frozenset[str], visited: set[int]
) -> list[Assertion]:
    used = [False] * len(actual)
    missing: list[int] = []
    for i, want in enumerate(expected):
        for j, got in enumerate(actual):
            if used[j]:
                continue
            trial = set(visited)
            if not _upstream(want, got, f"{path}[{i}]", False, ignored, trial):
                used[j] = True
                visited |= trial
                break
        else:
            missing.append(i)
    extra = [j for j, taken in enumerate(used) if not taken]
    if not missing and not extra:
        return []
    matched = len(expected) - len(missing)
    if not missing:
        message = f"array has all {len(expected)} expected item(s) but {len(extra)} extra"
    elif not extra:
        message = f"array is missing {len(missing)} expected item(s): matched {matched}/{len(expected)}"
    else:
        message = (
            f"array mismatch (unordered, greedy): matched {matched}/{len(expected)}, "
            f"missing {len(missing)}, extra {len(extra)}"
        )
    missing_values = tuple(expected[i] for i in missing)
    extra_values = tuple(actual[j] for j in extra)
    return [_assertion(path, "array_values_mismatch", missing_values, extra_values, message)]


def _upstream_ordered(
    expected: tuple[Any, ...], actual: tuple[Any, ...], path: str, ignored: frozenset[str], visited: set[int]
) -> list[Assertion]:
    assertions: list[Assertion] = []
    matched = 0
    for i, (want, got) in enumerate(zip(expected, actual, strict=False)):
        nested = _upstream(want, got, f"{path}[{i}]", True, ignored, visited)
        assertions.extend(nested)
        matched += not nested
    shorter = min(len(expected), len(actual))
    if len(expected) != len(actual) or (matched < shorter and not assertions):
        message = f"ordered array mismatch: matched {matched}/{len(expected)}, got {len(actual)} items"
        assertions.append(_assertion(path, "array_values_mismatch", expected, actual, message))
    return assertions
