"""Synthetic one-type tasks and hypothesis strategies of agent answers per data type, for the
property-based parity test (answers an agent could plausibly write, plus hedges and patterns)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# (data type, expected values): one synthetic task per expected value.
EXPECTED: dict[str, list[Any]] = {
    "string": ["Quest Lumaflex™ Band", "0", "^#?\\s*0*170$", ["Sprite", "Sprite Sports"]],
    "number": [12, 1234.5, 0],
    "currency": [1000, 36.39, 1.0, [10, 20]],
    "date": ["March 2, 2022", "2023-01-16"],
    "month": ["January", "May"],
    "duration": ["1hr 35min", "7 min"],
    "distance": ["914km", "500 m"],
    "boolean": [True, False],
    "null": [None, "n/a"],
    "location-name": ["Carnegie Mellon University", "Café Du Monde", "Zürich Hauptbahnhof"],
    "coordinates": [{"latitude": "40.4424191", "longitude": "-79.9397388"}, "40.7128, -74.0060"],
    "string_list": ["b, a", "632,64,86", "5"],
    "json": ['{"a": 1, "b": [1, 2]}', '{"Name": "Alice"}'],
    "markdown": ["## Most Active\n- [GE heater](http://x.org)\n- item", "# Title"],
    "base64": ["SGVsbG8gV29ybGQ=", "^.*MIT License.*$"],
    "full_address": [
        {
            "name": "Carnegie Mellon University",
            "house_number": "5000",
            "street": "Forbes Avenue",
            "city": "Pittsburgh",
            "state": "PA",
            "postcode": "15213",
        },
        {
            "house_number": "123",
            "street": "North Main Street",
            "city": "San Francisco",
            "state": "California",
            "postcode": "94102-1234",
        },
        [
            {"house_number": "1", "street": "Penn Plaza", "city": "New York", "state": "NY", "postcode": "10119"},
            {"house_number": "2", "street": "Penn Plaza", "city": "New York", "state": "NY", "postcode": "10119"},
        ],
    ],
}

STRING_ITEMS = {"type": "array", "items": {"type": "string"}}


def extra_tasks() -> dict[str, tuple[dict[str, Any], list[Any]]]:
    """Named (results schema, expected retrieved_data) for the documented-difference demonstrations."""
    import datetime as dt

    two_lists = {
        "type": "array",
        "items": {"type": "object", "properties": {"a": STRING_ITEMS, "b": STRING_ITEMS}},
    }
    return {
        "greedy": (STRING_ITEMS, [["a", "b"], "a"]),
        "circular": (two_lists, [{"a": [], "b": []}]),
        "url": ({"type": "array", "items": {"type": "string", "format": "url"}}, ["__GITLAB__/a/b"]),
        "date-this-year": (
            {"type": "array", "items": {"type": "string", "format": "date"}},
            [f"{dt.date.today().year}-03-02"],
        ),
    }


def synthetic_tasks(real: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """The real task list with the first tasks' answer checks replaced: one retrieve task per
    (type, expected value), then the :func:`extra_tasks`. (The official reader insists on exactly
    812 tasks, so the real ones are reused.)"""
    tasks = [dict(task) for task in real]
    ids: dict[str, list[int]] = {}
    specs: list[tuple[str, dict[str, Any], list[Any]]] = []
    for type_name, values in EXPECTED.items():
        schema = {"type": "array", "items": {"type": "string", "format": type_name}}
        if type_name in ("number", "boolean", "null", "string"):
            schema = {"type": "array", "items": {"type": type_name}}
        specs += [(type_name, schema, [value]) for value in values]
    specs += [(name, schema, data) for name, (schema, data) in extra_tasks().items()]
    for index, (name, schema, data) in enumerate(specs):
        task = tasks[index]
        task["eval"] = [
            {
                "evaluator": "AgentResponseEvaluator",
                "results_schema": schema,
                "expected": {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": data},
            }
        ]
        ids.setdefault(name, []).append(task["task_id"])
    return tasks, ids


words = st.sampled_from(["quest", "band", "Sprite", "café", "Zürich", "mellon", "n/a", "none", "", " ", "x-y"])
numbers = st.one_of(
    st.integers(-5, 5000), st.floats(-1e4, 1e4, allow_nan=False).map(lambda f: round(f, 2)), st.booleans()
)
number_texts = st.one_of(
    numbers.map(str),
    numbers.map(lambda n: f"{n:,}" if not isinstance(n, bool) else str(n)),
    st.sampled_from(["two", "twenty-three", "1 000", "1,234.56", "1.234,56", "$1,000", "€68,51", "-$5.00", "Free"]),
)
junk = st.sampled_from(["zzz wrong", "^.*$", "", 0, None, [], {}, "N/A", "[1]", '{"a": 1}'])


def _texts(*samples: str) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(samples), st.builds(lambda a, b: f"{a} {b}", st.sampled_from(samples), words))


PER_TYPE: dict[str, st.SearchStrategy[Any]] = {
    "string": st.one_of(
        _texts("Quest Lumaflex Band", "QUEST LUMAFLEX® BAND", '"quest lumaflex band."', "#170", "000170", "Sprite"),
        numbers,
        words,
    ),
    "number": st.one_of(numbers, number_texts),
    "currency": st.one_of(numbers, number_texts),
    "date": st.sampled_from(
        [
            "March 2, 2022",
            "2022-03-02",
            "03/02/2022",
            "March 2,2022",
            "Mar 2nd 2022",
            "2 March",
            "16/01/2023",
            "2023-01-16",
            "Jan 16",
            "someday",
            "2022",
            20220302,
        ]
    ),
    "month": st.one_of(
        st.integers(-1, 14),
        st.booleans(),
        st.sampled_from(["Jan", "JANUARY", "may", "05", " 5 ", "1_2", "sept", "blursday"]),
    ),
    "duration": st.sampled_from(
        [
            "1:35 hours",
            "95 minutes",
            "1h35m",
            "1 hour 35 minutes",
            "7min",
            "00:07:00",
            "10 min",
            "5",
            5,
            "soon",
            "1.5 hours",
        ]
    ),
    "distance": st.sampled_from(
        [
            "914 km",
            "932km",
            "935 km",
            "110k",
            "500m",
            "0.5 km",
            "1/2 km",
            "2*250 m",
            "1 mi",
            "500",
            500,
            "far",
            "9**9 km",
        ]
    ),
    "boolean": st.one_of(st.booleans(), st.integers(-1, 2), st.sampled_from(["yes", "No", "TRUE", "off", "maybe", ""])),
    "null": st.one_of(st.sampled_from([None, "", "N / A", "none", "null", "nan", "0", 0, "nothing", {}]), st.just([])),
    "location-name": _texts(
        "carnegie mellon university",
        "University Carnegie Mellon",
        "Cafe du Monde",
        "Café Du Monde",
        "Zurich HB",
        "Zürich Hauptbahnhof",
        "Zürích Hâuptbahnhöf",
        "Caffè Nero",
        "São Paulo",
    ),
    "coordinates": st.one_of(
        st.sampled_from(
            [
                "40.4424191, -79.9397388",
                "40.7128 N, 74.0060 W",
                "40.7128, -74.0060",
                "40° 42' 46\" N 74° 0' 22\" W",
                "north-ish",
                "95, 10",
            ]
        ),
        st.tuples(st.floats(-90, 90), st.floats(-180, 180)).map(list),
        st.just({"lat": 40.7128, "lng": -74.006}),
    ),
    "string_list": st.one_of(st.sampled_from(["a,b", "B, A", "a, b, c", "", ",", "86,64,632"]), numbers),
    "json": st.one_of(
        st.sampled_from(['{"b": [1,2], "a": 1}', '{"name": "alice"}', "[]", "{bad", ""]), st.just({"a": 1})
    ),
    "markdown": st.sampled_from(
        [
            "##  Most Active\n* [GE heater](http://x.org)\n+ item",
            "## Most Active\n    - [GE\nheater]( http://x.org )\n- item",
            "#Title",
            "# Title  ",
            "  # Title\n",
            "",
            "   ",
            "# title",
        ]
    ),
    "base64": st.sampled_from(
        ["SGVsbG8gV29ybGQ=", "SGVsbG8gV29ybGQ=\n", "aGVsbG8gd29ybGQ=", "TUlUIExpY2Vuc2U=", "!!", "", "^.*$"]
    ),
}


def _address_variations(address: dict[str, Any]) -> list[Any]:
    """Upstream's own address format variations (``tests/api/format_variations_utils.py``:
    exact, lowercase, uppercase, extra whitespace, state abbreviation swapped, field order reversed)
    plus abbreviations, a changed field, a missing field and malformed values."""
    states = {"Pennsylvania": "PA", "California": "CA", "New York": "NY"}
    states |= {v: k for k, v in states.items()}
    text = {k: v for k, v in address.items() if isinstance(v, str)}
    return [
        dict(address),
        {k: v.lower() for k, v in text.items()},
        {k: v.upper() for k, v in text.items()},
        {k: f" {v} " for k, v in text.items()},
        address | {"state": states.get(address["state"], address["state"])},
        dict(reversed(list(address.items()))),
        address | {"street": address["street"].replace("Avenue", "Ave").replace("Street", "St")},
        address | {"street": address["street"].replace("North ", "N. ")},
        address | {"name": "Somewhere Else"},
        address | {"house_number": int(address["house_number"])},
        address | {"postcode": address["postcode"][:5]},
        address | {"postcode": address["postcode"].replace("-", "") + "0"},
        address | {"postcode": "00000"},
        address | {"city": "Philadelphia"},
        address | {"state": "Calif."},
        address | {"state": "Narnia"},
        address | {"street": ""},
        address | {"name": ["Someone"]},
        {k: v for k, v in address.items() if k != "city"},
        ", ".join(str(v) for v in address.values()),
    ]


_ADDRESSES = [one for a in EXPECTED["full_address"] for one in (a if isinstance(a, list) else [a])]
PER_TYPE["full_address"] = st.sampled_from([v for a in _ADDRESSES for v in _address_variations(a)])


def answers(type_name: str) -> st.SearchStrategy[Any]:
    """A retrieved_data item of this type: a value, a hedge (value and junk), or junk."""
    value = PER_TYPE[type_name]
    return st.one_of(value, value, st.lists(st.one_of(value, junk), min_size=1, max_size=3), junk)
