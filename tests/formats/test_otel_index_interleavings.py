"""The OTLP index's first pass (a bytes scan for trace ids, no line parsed) against the whole read, on
files made by hypothesis from the real instrumentations' spans: each trace copied, its spans spread
over lines in any order and batch (as exporters batch them), lines of other shapes between them, ids
spelled in every way a JSON writer may (spaces, escapes, numbers, ``trace_id``, none), span links
naming other traces, and a last line cut while the file grows. Index + load must give exactly
:meth:`read`'s trajectories, steps, counts and problems, whatever the scan's chunk size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.formats import otel_genai
from tests.formats.test_index_big_logs import check_index_equals_read

DATA = Path(__file__).parent.parent / "data" / "formats" / "otel_genai"
SAMPLES = (
    "openai-v2__agent_loop.otlp.jsonl",
    "openllmetry__agent_loop.otlp.jsonl",
    "openinference__agent_loop.otlp.json",
)


def _spans(name: str) -> list[tuple[Any, Any, dict[str, Any]]]:
    """Each span of a real export with its resource and scope."""
    out = []
    for line in (DATA / name).read_bytes().splitlines():
        if line.strip():
            for resource in orjson.loads(line)["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    out.extend((resource["resource"], scope["scope"], span) for span in scope["spans"])
    return out


SPANS = [_spans(name) for name in SAMPLES]


def _copy(span: dict[str, Any], copy: int, length: int) -> dict[str, Any]:
    """The span in the ``copy``-th copy of its trace: every id made the copy's own, the trace id
    ``length`` characters long (OTLP's are 32; a file's own may be any)."""
    out = dict(span)
    for key in ("traceId", "spanId", "parentSpanId"):
        if out.get(key):
            out[key] = f"{copy:02x}{out[key][2:]}"
    out["traceId"] = out["traceId"][:length]
    return out


ODDITIES = ("spaced", "escaped-id", "escaped-key", "number-id", "null-id", "no-id", "snake-key", "link", "plain")
"""How a line's spans spell their trace: JSON with spaces, an id with a ``\\u00XX`` escape, the key
``traceId`` with one, an id that is a number, null or absent (the spans' trace is None), ``trace_id``,
a span link naming another trace, or the exporter's own compact JSON."""


def _line(units: list[tuple[Any, Any, dict[str, Any]]], oddity: str, other: str) -> bytes:
    resource_spans = []
    for resource, scope, span in units:
        span = dict(span)
        if oddity == "number-id":
            span["traceId"] = 42
        elif oddity == "null-id":
            span["traceId"] = None
        elif oddity == "no-id":
            span.pop("traceId")
        elif oddity == "link":
            span["links"] = [{"traceId": other, "spanId": "0" * 16}]
        resource_spans.append({"resource": resource, "scopeSpans": [{"scope": scope, "spans": [span]}]})
    export = {"resourceSpans": resource_spans}
    if oddity == "spaced":
        return json.dumps(export, ensure_ascii=True).encode()
    line = orjson.dumps(export)
    if oddity == "escaped-id":
        first = line.split(b'"traceId":"')[1][:1]  # the id's first character written as an escape
        return line.replace(b'"traceId":"' + first, b'"traceId":"\\u00%02x' % ord(first), 1)
    if oddity == "escaped-key":
        return line.replace(b'"traceId"', b'"\\u0074raceId"')
    if oddity == "snake-key":
        return line.replace(b'"traceId"', b'"trace_id"')
    return line


@st.composite
def otlp_files(draw: st.DrawFn) -> bytes:
    copies = draw(st.lists(st.sampled_from(range(len(SPANS))), min_size=1, max_size=5))
    length = draw(st.sampled_from([32, 32, 4, 21, 23, 30, 40]))  # a quote 32 characters after a short id's start
    units = [
        (resource, scope, _copy(span, copy, length))
        for copy, sample in enumerate(copies)
        for resource, scope, span in SPANS[sample]
    ]
    units = draw(st.permutations(units))
    traces = sorted({span["traceId"] for _, _, span in units})
    lines: list[bytes] = []
    while units:
        size = draw(st.integers(1, 6))
        batch, units = units[:size], units[size:]
        oddity = draw(st.sampled_from(ODDITIES)) if draw(st.integers(0, 3)) == 0 else "plain"
        lines.append(_line(batch, oddity, draw(st.sampled_from(traces))))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([b"", b"{not json", b"[1, 2]", b'{"traceId": "' + traces[0].encode()])))
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))
    data = ending.join(lines) + ending
    if draw(st.booleans()):
        data = data[: draw(st.integers(len(data) // 2, len(data) - 1))]  # the last line cut as the file grows
    return (b"\xef\xbb\xbf" if draw(st.integers(0, 9)) == 0 else b"") + data


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=otlp_files(), chunk=st.sampled_from([64, 1000, 4096, 1 << 20]))
def test_the_index_of_spans_spread_over_lines_equals_the_whole_read(
    tmp_path_factory: Any, data: bytes, chunk: int
) -> None:
    path = tmp_path_factory.mktemp("otlp") / "spans.otlp.jsonl"
    path.write_bytes(data)
    with patch.object(otel_genai, "_SCAN_CHUNK", chunk):
        check_index_equals_read("otel-genai", path)
