"""OpenTelemetry GenAI traces as trajectories: OTLP/JSON files, JSON Lines of spans, span dumps.

Files read:

- OTLP/JSON (``{"resourceSpans": [{resource, scopeSpans: [{scope, spans: [...]}]}]}``), one object per
  file or one per line (the collector's and the Python SDK's file exporters write a line per export);
  attribute values of every OTLP ``AnyValue`` kind (string, int as a decimal string, double, bool,
  bytes, array, kvlist);
- JSON Lines of single spans, and JSON lists of spans as SDKs dump them (attributes as a plain map;
  ids in ``traceId``/``spanId``, ``spanContext`` or ``context.trace_id``), and a bare attribute map of
  one span (test fixtures).

Mapping:

- spans are grouped by trace id (a file without ids is one trace) into trajectories, in start order;
  an agent span (``gen_ai.operation.name`` ``invoke_agent``/``create_agent``, OpenInference ``AGENT``)
  inside another agent span is a sub-agent: a trajectory of its own after its parent (its
  ``parent``: the episode, the call of a tool span around it, ``source`` the operation name),
  holding the spans below it;
- an LLM span (``gen_ai.operation.name`` chat / text_completion / generate_content, OpenInference
  ``LLM``, OpenLLMetry ``llm.request.type``/``gen_ai.prompt.N.*``, Vercel AI SDK ``ai.*.doGenerate`` /
  ``doStream``) → a step: prompt = its input messages (semconv ``gen_ai.system_instructions`` +
  ``gen_ai.input.messages``; older ``gen_ai.prompt`` attribute or ``gen_ai.*.message`` events;
  OpenLLMetry ``gen_ai.prompt.N.*``; OpenInference ``llm.input_messages.N.message.*``; Vercel
  ``ai.prompt.messages``), action = the first tool call of its output (the others in ``extra``),
  content/thinking = its output text and reasoning, tools = the span's tool definitions (inferred
  from the calls otherwise);
- an LLM span's start and end → the step's ``timestamp`` and ``duration``; ``gen_ai.usage.*``
  (OpenInference ``llm.token_count.*``, ``llm.cost.total``; Vercel ``ai.usage.*``) → ``usage``;
  ``gen_ai.response.model`` (else the request's, ``llm.model_name``, ``ai.model.id``) → ``model``;
  an error status → ``error``;
- a tool span (``execute_tool``, OpenInference ``TOOL``, Vercel ``ai.toolCall``) is the result of the
  call with its id (``gen_ai.tool.call.id``, ``tool_call.id``, ``ai.toolCall.id``);
- outcome: status ``error`` when a span of the trajectory has an error status (the first such span's
  ``error.type`` or ``exception`` event, status message and stack trace as the error), else ``ok``;
  each ``gen_ai.evaluation.result`` (a span event, or a span with ``gen_ai.evaluation.name``) a
  check: its name, ``score.value``, ``score.label`` (pass/fail labels decide ``passed``) and
  ``explanation``; all passed or one failed decides success; one evaluation's score is the reward;
  the last LLM answer without a call is the answer.
"""

from __future__ import annotations

import base64
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import orjson
import stringzilla as sz

from replay_tui.episodes.model import (
    ChatMessage,
    Outcome,
    OutcomeCheck,
    ParentLink,
    TokenUsage,
    ToolCall,
    Trajectory,
    TrajectoryStep,
    infer_tools,
    parse_timestamp,
)
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import UTF8_BOM, Detection, EpisodeSummary, ReadItem, strip_bom

_OTLP = re.compile(rb'"(resourceSpans|resource_spans|scopeSpans)"\s*:')
_SPAN_IDS = re.compile(rb'"(traceId|trace_id|spanContext|parentSpanId|parent_id|spanId)"\s*:')
_GENAI = re.compile(
    rb'"(gen_ai\.[a-z_.]+|openinference\.span\.kind|ai\.operationId|llm\.request\.type|traceloop\.[a-z_.]+)"'
)
_ATTRIBUTE_MAP = re.compile(rb'\A\s*\{\s*"(gen_ai\.|openinference\.span\.kind|llm\.|input"|ai\.)')

LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})


@dataclass
class Span:
    """One span, whatever file shape it came from: ids, name, attributes as plain values, events."""

    trace: str | None
    id: str | None
    parent: str | None
    name: str
    attrs: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    start: int = 0
    end: int = 0
    """Start and end, in nanoseconds since the epoch (0: not recorded)."""
    order: int = 0
    error: bool = False
    status_message: str = ""

    @cached_property
    def kind(self) -> str:
        """llm, tool, agent or other (once per span: grouping a trace asks it of every span several times)."""
        operation = self.attrs.get("gen_ai.operation.name")
        openinference = str(self.attrs.get("openinference.span.kind") or "").upper()
        traceloop = self.attrs.get("traceloop.span.kind")
        if traceloop in ("tool", "agent") and operation is None:
            return str(traceloop)
        if operation in LLM_OPERATIONS or openinference == "LLM":
            return "llm"
        if operation == "execute_tool" or openinference == "TOOL" or self.name == "ai.toolCall":
            return "tool"
        if operation in AGENT_OPERATIONS or openinference == "AGENT":
            return "agent"
        if self.name.startswith("ai.") and self.name.endswith((".doGenerate", ".doStream")):
            return "llm"
        if "llm.request.type" in self.attrs or any(key.startswith("gen_ai.prompt.") for key in self.attrs):
            return "llm"
        return "other"


class OtelGenAiReader:
    name = "otel-genai"
    label = "OpenTelemetry GenAI traces (OTLP/JSON, spans JSONL, span dumps)"
    description = (
        "episode = trace (nested agent spans as sub-agents); step = LLM span (prompt = its input messages, "
        "action = first output tool call); tool spans = results; gen_ai.* semconv, OpenInference, OpenLLMetry, "
        "Vercel AI SDK attributes"
    )

    def sniff(self, path: Path, head: bytes) -> Detection:
        if path.is_dir():
            return Detection.no("a folder")
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text[:1] not in (b"{", b"["):
            return Detection.no("not JSON")
        if _OTLP.search(head):
            return Detection.yes("OTLP/JSON traces (resourceSpans → scopeSpans → spans)")
        if _SPAN_IDS.search(head) and _GENAI.search(head):
            return Detection(0.9, "spans with GenAI attributes (gen_ai.*, OpenInference, Vercel AI SDK)")
        if _ATTRIBUTE_MAP.match(text) and _GENAI.search(head):
            return Detection(0.6, "one span's GenAI attribute map")
        return Detection.no("no OTLP resourceSpans and no spans with gen_ai.* / OpenInference attributes")

    def read(self, path: Path) -> Iterator[ReadItem]:
        try:
            raw = strip_bom(path.read_bytes())
        except OSError as exc:
            yield LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
            return
        spans: list[Span] = []
        problems: list[LoadProblem] = []
        try:
            documents = [orjson.loads(raw)]
        except orjson.JSONDecodeError:
            documents = []
            for number, line in enumerate(raw.splitlines()):
                if not line.strip():
                    continue
                try:
                    documents.append(orjson.loads(line))
                except (orjson.JSONDecodeError, RecursionError) as exc:
                    problems.append(
                        LoadProblem(file=path.name, index=number, message=f"line {number + 1}: not valid JSON: {exc}")
                    )
        except RecursionError:
            yield LoadProblem(file=path.name, message="not readable: JSON nested too deep")
            return
        for document in documents:
            try:
                _collect(document, spans)
            except (_Bad, TypeError, ValueError, OverflowError, RecursionError) as exc:
                problems.append(LoadProblem(file=path.name, message=f"not read: {exc}"))
        yield from problems
        if not spans:
            if not problems:
                yield LoadProblem(file=path.name, message="no spans found (expected resourceSpans or a list of spans)")
            return
        try:
            yield from _trajectories(path, spans)
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:  # a trace too odd to group
            yield LoadProblem(file=path.name, message=f"not read: {exc}")

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every trajectory's summary, in :meth:`read`'s order, with its problems.

        JSON Lines (what the SDK's and the collector's file exporters write: one export a line) are
        read twice: the first pass searches the bytes for trace ids (no line parsed) to bound where
        each trace ends, the second parses the lines and builds each trace as soon as it is read
        past its bound, keeping only its summaries, so memory holds the traces still open (a
        trace's spans are exported together) and never the file. ``locator`` = (trace, its lines'
        offsets and lengths packed, the how-manieth trajectory of the trace). One JSON document (a
        file of one line, or pretty-printed) is read whole, as :meth:`read` does (memory: the
        file's parse), ``locator`` = ("document", position)."""
        try:
            scan = _trace_ends(path) if _by_lines(path) else None
            if scan is not None and scan.cr and _has_lone_cr(path):
                scan = None
        except OSError as exc:
            yield LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
            return
        if scan is None:
            record = 0
            for item in self.read(path):
                if isinstance(item, Trajectory):
                    yield EpisodeSummary.of(item, record, ("document", record))
                    record += 1
                else:
                    yield item
            return
        yield from _index_lines(path, scan)

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The trajectory ``summary`` points at: its trace's lines read again (a JSON document: the
        file read whole)."""
        if summary.locator[0] == "document":
            found = list(self.read(path))
            position = summary.locator[1]
        else:
            trace, lines, position = summary.locator
            try:
                found = list(_trajectories(path, _trace_spans(path, trace, lines)))
            except OSError as exc:
                return LoadProblem(file=path.name, session_id=summary.id, message=f"cannot read: {exc.strerror or exc}")
        items = [item for item in found if isinstance(item, Trajectory)]
        if position < len(items) and items[position].id == summary.id:
            return items[position]
        return LoadProblem(
            file=path.name, session_id=summary.id, message="the file changed since it was indexed: reopen it"
        )


READER = OtelGenAiReader()


def _by_lines(path: Path) -> bool:
    """True when the file may be JSON Lines (its first line a whole JSON value and more lines
    follow), as :meth:`OtelGenAiReader.read` would take it (unless a lone ``\r`` splits a line:
    :func:`_has_lone_cr`, asked when the index's scan saw a ``\r``); False for one JSON document."""
    with path.open("rb") as handle:
        first = b""
        for line in handle:
            if line.strip():
                first = line
                break
        if not first or (b"\r" in first.rstrip(b"\r\n")):
            return False
        try:
            orjson.loads(strip_bom(first) if first.startswith(UTF8_BOM) else first)
        except (orjson.JSONDecodeError, RecursionError):
            return False
        return any(line.strip() for line in handle)


def _has_lone_cr(path: Path) -> bool:
    """A ``\r`` that is not the ``\r`` of a ``\r\n`` (``bytes.splitlines`` would split there: in
    ``\r\r\n`` too, and a ``\r`` at the end of the file is taken as lone)."""
    with path.open("rb") as handle:
        while chunk := handle.read(16 << 20):  # most files have no \r at all: found at memchr's speed
            if b"\r" in chunk:
                break
        else:
            return False
        handle.seek(0)
        for line in handle:
            if b"\r" in (line[:-2] if line.endswith(b"\r\n") else line):
                return True
    return False


def _lines(path: Path, size: int) -> Iterator[tuple[int, int, bytes]]:
    """Each line's number (0-based, blank ones counted), offset and bytes in the first ``size``
    bytes (what pass 1 read: a file growing meanwhile is read as it was, its last line as cut then)."""
    offset = 0
    with path.open("rb") as handle:
        for number, line in enumerate(handle):
            if offset >= size:
                return
            line = line[: size - offset]
            yield number, offset, line
            offset += len(line)


def _content(line: bytes, number: int) -> bytes:
    """A line as :meth:`OtelGenAiReader.read` parses it: without its ``\n`` or ``\r\n`` (a line cut
    inside a string while the file grows is then named by the same error), nor the file's BOM."""
    line = line[:-1] if line.endswith(b"\n") else line
    line = line[:-1] if line.endswith(b"\r") else line
    return strip_bom(line) if number == 0 else line


def _line_spans(line: bytes, number: int) -> list[Span]:
    """The spans of one line, as :meth:`OtelGenAiReader.read` collects them (the spans before a
    malformed part kept); a line that is no JSON holds none."""
    spans: list[Span] = []
    try:
        _collect(orjson.loads(strip_bom(line) if number == 0 else line), spans)
    except (orjson.JSONDecodeError, _Bad, TypeError, ValueError, OverflowError, RecursionError):
        pass
    return spans


def _trace_keys(document: Any) -> list[str | None] | None:
    """The trace of each span of an OTLP document as :func:`_span` reads it, without building the
    spans; None for any other shape (those lines go through :func:`_collect`)."""
    resources = document.get("resourceSpans") if isinstance(document, dict) else None
    if not isinstance(resources, list) or "resource_spans" in document:
        return None
    keys: list[str | None] = []
    for resource in resources:
        scopes = resource.get("scopeSpans") if isinstance(resource, dict) and "scope_spans" not in resource else None
        if not isinstance(scopes, list):
            return None
        for scope in scopes:
            raws = scope.get("spans") if isinstance(scope, dict) else None
            if not isinstance(raws, list):
                return None
            for raw in raws:
                if not isinstance(raw, dict) or raw.get("spanContext") or raw.get("context"):
                    return None
                trace = raw.get("traceId") or raw.get("trace_id")
                keys.append(str(trace) if trace else None)
    return keys


class _SpanIds(msgspec.Struct):
    traceId: Any = None  # OTLP/JSON spells it so
    trace_id: Any = None
    spanContext: Any = None
    context: Any = None


class _ScopeIds(msgspec.Struct):
    spans: list[_SpanIds]


class _ResourceIds(msgspec.Struct):
    scopeSpans: list[_ScopeIds]
    scope_spans: Any = msgspec.UNSET


class _ExportIds(msgspec.Struct):
    resourceSpans: list[_ResourceIds]
    resource_spans: Any = msgspec.UNSET


_EXPORT_IDS = msgspec.json.Decoder(_ExportIds)
"""An OTLP export line read for its spans' trace ids alone: the rest of the line is skipped, not
built (13x faster than ``orjson.loads`` of the line on the SDK's exports)."""


def _line_trace_keys(line: bytes) -> list[str | None] | None:
    """:func:`_trace_keys` of an OTLP export line without building it; None when the line is no
    such export (or no JSON: the caller parses it whole and names the problem)."""
    try:
        export = _EXPORT_IDS.decode(line)
    except msgspec.DecodeError:
        return None
    if export.resource_spans is not msgspec.UNSET:
        return None
    keys: list[str | None] = []
    for resource in export.resourceSpans:
        if resource.scope_spans is not msgspec.UNSET:
            return None
        for scope in resource.scopeSpans:
            for raw in scope.spans:
                if raw.spanContext or raw.context:
                    return None
                trace = raw.traceId or raw.trace_id
                keys.append(str(trace) if trace else None)
    return keys


_COMPACT_KEY = b'"traceId":"'
"""A span's trace id key as OTLP/JSON exporters write it (compact: no space around the colon)."""
_TRACE_KEY = re.compile(rb'"trace(?:Id|_id)"[ \t\r]*:?[ \t\r]*("[^"\\\n]*"|)')
"""Any other spelling :func:`_span` reads: ``"traceId"`` or ``"trace_id"`` and a plain string (no
escape) after the colon, quoted; empty when the key is followed by anything else (a number, null, an
id with an escape, or no colon)."""
_KEY_ESCAPES = (b"\\u004", b"\\u005", b"\\u006", b"\\u007")
"""The letters and ``_`` of ``traceId``/``trace_id`` written as ``\\u00XX``: a key spelled so is
found only by parsing."""
_SCAN_CHUNK = 1 << 20


class _Scan(NamedTuple):
    ends: dict[str | None, int]
    """A bound on each trace's spans: past this offset the file holds none."""
    size: int
    """The bytes read (a file growing meanwhile is indexed as it was then)."""
    cr: bool
    """A ``\r`` was seen (the file may be one document: :func:`_has_lone_cr`)."""


def _trace_ends(path: Path) -> _Scan:
    """Pass 1 of the index: for each trace id, an offset past which the file holds none of its
    spans, and the size read. The file is read 1 MB at a time and each run of whole lines searched
    for the trace id keys (no line parsed: :func:`_compact_ids`, else :data:`_TRACE_KEY`), so a
    trace's bound is the end of the last run naming it (pass 2 builds the first traces after a MB
    or two).

    The search finds every id :func:`_span` can take (perhaps more: a link's trace, a key of a line
    that is no JSON; a trace then ends later, never earlier). A run where a trace id key is followed
    by no plain string (a number, null, an escape in the id) or a key may be spelled with escapes is
    read line by line for its spans' ids instead (:func:`_exact_trace_keys`). Spans without an id
    (trace None) have no bound: their trace ends with the file."""
    found: dict[bytes, int] = {}
    exact: dict[str | None, int] = {}
    pending: list[bytes] = []
    """A line begun in an earlier read, at ``pending_at``."""
    pending_at = offset = 0
    cr = False
    with path.open("rb") as handle:
        while chunk := handle.read(_SCAN_CHUNK):
            cr = cr or b"\r" in chunk
            first = chunk.find(b"\n") + 1
            if not first:  # one long line goes on
                pending_at = pending_at if pending else offset
                pending.append(chunk)
                offset += len(chunk)
                continue
            last = chunk.rfind(b"\n") + 1
            if pending:
                head = b"".join([*pending, chunk[:first]])
                _scan(head, 0, len(head), pending_at, found, exact)
            _scan(chunk, first if pending else 0, last, offset, found, exact)
            pending = [chunk[last:]] if last < len(chunk) else []
            pending_at = offset + last
            offset += len(chunk)
    if pending:  # the last line, with no end of line (perhaps cut while the file grows)
        tail = b"".join(pending)
        _scan(tail, 0, len(tail), pending_at, found, exact)
    ends: dict[str | None, int] = {key.decode("utf-8", "replace") or None: end for key, end in found.items()}
    ends.pop(None, None)
    for key, end in exact.items():
        if key is not None and end > ends.get(key, -1):
            ends[key] = end
    return _Scan(ends, offset, cr)


def _scan(
    buffer: bytes, start: int, end: int, base: int, found: dict[bytes, int], exact: dict[str | None, int]
) -> None:
    """The trace ids of the whole lines ``buffer[start:end]`` (``base``: the file offset of
    ``buffer[0]``), each bounded by the end of the run, into ``found`` or, when no search can be
    trusted on the run, ``exact``."""
    if start >= end:
        return
    bound = base + end
    if sz.find(buffer, b"\\u00", start, end) < 0 or all(sz.find(buffer, key, start, end) < 0 for key in _KEY_ESCAPES):
        ids = _compact_ids(buffer, start, end)
        if ids is None:
            quoted = _TRACE_KEY.findall(buffer, start, end)
            ids = None if b"" in quoted else [value[1:-1] for value in quoted]
        if ids is not None:
            found.update(dict.fromkeys(ids, bound))
            return
    at = base + start
    for line in buffer[start:end].split(b"\n"):
        if line.strip():
            for key in _exact_trace_keys(strip_bom(line) if at == 0 else line):
                exact[key] = bound
        at += len(line) + 1


def _compact_ids(buffer: bytes, start: int, end: int) -> list[bytes] | None:
    """The ids after each ``"traceId":"`` of the run, found by StringZilla's SIMD search (several
    times the speed of a regex: the 1 GB file's first rows wait for this pass); None unless every
    trace id key of the run is written so and its id has no escape."""
    keys = sz.count(buffer, b'"traceId"', start, end) + sz.count(buffer, b'"trace_id"', start, end)
    ids: list[bytes] = []
    add, find, quote, skip = ids.append, sz.find, buffer.find, len(_COMPACT_KEY)
    at = find(buffer, _COMPACT_KEY, start, end)
    while at >= 0:
        at += skip
        close = at + 32  # OTLP's ids: 32 hex digits
        if close >= end or buffer[close] != 34:  # '"'
            close = quote(b'"', at, end)
            if close < 0:
                return None
        add(buffer[at:close])
        at = find(buffer, _COMPACT_KEY, close, end)
    if len(ids) != keys:
        return None
    every = b"".join(ids)
    # an escape, a line end or a quote (an id shorter than 32 read up to another string's quote)
    return None if b"\\" in every or b"\n" in every or b'"' in every else ids


def _exact_trace_keys(text: bytes) -> list[str | None]:
    """The trace of each span of one line, as :func:`_collect` reads them (none when it is no JSON)."""
    keys = _line_trace_keys(text)
    if keys is not None:
        return keys
    try:
        document = orjson.loads(text)
    except (orjson.JSONDecodeError, RecursionError):
        return []
    keys = _trace_keys(document)
    if keys is None:
        spans: list[Span] = []
        try:
            _collect(document, spans)
        except (_Bad, TypeError, ValueError, OverflowError, RecursionError):
            pass
        keys = [span.trace for span in spans]
    return keys


def _index_lines(path: Path, scan: _Scan) -> Iterator[EpisodeSummary | LoadProblem]:
    """Pass 1 (:func:`_trace_ends`) bounds where each trace ends; pass 2 reads the lines, builds
    each trace once it has read past its bound (a trace without one, and any trace still open, at
    the end), and yields its summaries as soon as the traces before it (in :meth:`OtelGenAiReader.read`'s
    order: by their first span) are built: the app's first rows come with the first traces of pass
    2, not at the end of the file. Memory holds the traces still open (a trace's spans are exported
    together), never the file. The problems come after the summaries, in the order
    :meth:`OtelGenAiReader.read` gives them."""
    name = path.name
    closing = sorted((offset, key) for key, offset in scan.ends.items())
    """The traces by where they end: each is built once pass 2 has read past its offset."""
    closed = 0
    open_traces: dict[str | None, list[Span]] = {}
    where: dict[str | None, array[int]] = {}
    """A trace's lines: offset, length, offset, length... (packed: 87,000 traces of a 1 GB file)."""
    built: dict[str | None, list[EpisodeSummary | LoadProblem]] = {}
    order: list[str | None] = []
    """The traces in read()'s order (by their first span): each one's summaries as soon as it and
    those before it are built."""
    unreadable: list[LoadProblem] = []
    unread: list[LoadProblem] = []
    trace_problems: list[LoadProblem] = []
    found = False
    done = 0
    record = 0
    for number, offset, line in _lines(path, scan.size):
        if line.strip():
            spans: list[Span] = []
            try:
                document = orjson.loads(_content(line, number))
            except (orjson.JSONDecodeError, RecursionError) as exc:
                message = f"line {number + 1}: not valid JSON: {exc}"
                unreadable.append(LoadProblem(file=name, index=number, message=message))
                document = None
            try:
                if document is not None:
                    _collect(document, spans)
            except (_Bad, TypeError, ValueError, OverflowError, RecursionError) as exc:
                unread.append(LoadProblem(file=name, message=f"not read: {exc}"))
            found = found or bool(spans)
            for span in spans:
                members = open_traces.get(span.trace)
                if members is None:
                    members = open_traces[span.trace] = []
                    order.append(span.trace)
                    where[span.trace] = array("q", (offset, len(line)))
                elif where[span.trace][-2] != offset:
                    where[span.trace].extend((offset, len(line)))
                span.order = len(members)
                members.append(span)
        past = offset + len(line)
        while closed < len(closing) and closing[closed][0] <= past:
            trace = closing[closed][1]
            closed += 1
            if trace in open_traces:
                built[trace] = _summaries(path, trace, open_traces.pop(trace), where.pop(trace).tobytes())
        while done < len(order) and order[done] in built:
            for item in built.pop(order[done]):
                if isinstance(item, EpisodeSummary):
                    yield replace(item, record=record)
                    record += 1
                else:
                    trace_problems.append(item)
            done += 1
    for trace in list(open_traces):  # no id to bound it (or the file changed under pass 1)
        built[trace] = _summaries(path, trace, open_traces.pop(trace), where.pop(trace).tobytes())
    for trace in order[done:]:
        for item in built.pop(trace):
            if isinstance(item, EpisodeSummary):
                yield replace(item, record=record)
                record += 1
            else:
                trace_problems.append(item)
    # the problems after the summaries (the app lists the first rows while the index goes on), in
    # read()'s order among themselves
    yield from sorted(unreadable, key=lambda problem: problem.index or 0)  # in line order, as read() names them
    yield from unread
    if not found and not unreadable and not unread:
        yield LoadProblem(file=name, message="no spans found (expected resourceSpans or a list of spans)")
    yield from trace_problems


def _summaries(path: Path, trace: str | None, spans: list[Span], lines: bytes) -> list[EpisodeSummary | LoadProblem]:
    out: list[EpisodeSummary | LoadProblem] = []
    nth = 0
    try:
        for item in _trajectories(path, spans, brief=True):
            if isinstance(item, Trajectory):
                out.append(EpisodeSummary.of(item, 0, (trace, lines, nth)))
                nth += 1
            else:
                out.append(item)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:  # a trace too odd to group
        out.append(LoadProblem(file=path.name, message=f"not read: {exc}"))
    return out


def _trace_spans(path: Path, trace: str | None, lines: bytes) -> list[Span]:
    """The spans of ``trace`` on its lines (offsets and lengths packed as in :func:`_index_lines`), in
    file order."""
    found: list[Span] = []
    packed = array("q")
    packed.frombytes(lines)
    with path.open("rb") as handle:
        for offset, length in zip(packed[::2], packed[1::2], strict=True):
            handle.seek(offset)
            for span in _line_spans(handle.read(length), 0 if offset == 0 else 1):
                if span.trace == trace:
                    span.order = len(found)
                    found.append(span)
    return found


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a malformed field reads as absent)."""
    return value if isinstance(value, dict) else {}


class _Bad(Exception):
    pass


# -- spans from any file shape ------------------------------------------------------------------


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": "x"}``…) as a plain value; anything else as it is."""
    if not isinstance(value, dict) or len(value) > 1:
        return value
    if not value:
        return None
    (kind, inner), *_ = value.items()
    if kind in ("stringValue", "string_value", "boolValue", "bool_value"):
        return inner
    if kind in ("intValue", "int_value"):
        try:
            return int(inner)
        except (TypeError, ValueError):
            return inner
    if kind in ("doubleValue", "double_value"):
        try:
            return float(inner)
        except (TypeError, ValueError):
            return inner
    if kind in ("bytesValue", "bytes_value"):
        try:
            return base64.b64decode(inner).decode("utf-8", "replace")
        except (ValueError, TypeError):
            return inner
    if kind in ("arrayValue", "array_value"):
        values = inner.get("values") if isinstance(inner, dict) else None
        return [any_value(v) for v in values] if isinstance(values, list) else []
    if kind in ("kvlistValue", "kvlist_value"):
        values = inner.get("values") if isinstance(inner, dict) else None
        return _attributes(values) if isinstance(values, list) else {}
    return value


def _attributes(value: Any) -> dict[str, Any]:
    """OTLP ``[{key, value}]`` or a plain map, as a plain map."""
    if isinstance(value, dict):
        return dict(value)
    out: dict[str, Any] = {}
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("key"), str):
                out[item["key"]] = any_value(item.get("value"))
    return out


def _nanos(value: Any) -> int:
    """A start time in nanoseconds from any shape it is logged in; 0 when it is none of them."""
    try:
        return _nanos_of(value)
    except (OverflowError, ValueError, TypeError):
        return 0


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def _nanos_of(value: Any) -> int:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) for v in value):
        return int(value[0] * 1_000_000_000 + value[1])
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        if value.isdigit():
            return int(value)
        from datetime import datetime

        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1_000_000_000)
        except ValueError:
            return 0
    return 0


def _span(raw: dict[str, Any], order: int) -> Span:
    context = raw.get("spanContext") or raw.get("context") or {}
    context = context if isinstance(context, dict) else {}
    trace = raw.get("traceId") or raw.get("trace_id") or context.get("traceId") or context.get("trace_id")
    ident = raw.get("spanId") or raw.get("span_id") or context.get("spanId") or context.get("span_id")
    parent = raw.get("parentSpanId") or raw.get("parent_span_id") or raw.get("parent_id")
    if isinstance(parent, dict):
        parent = parent.get("spanId") or parent.get("span_id")
    status = _obj(raw.get("status"))
    code = status.get("code", status.get("status_code"))
    events = []
    for event in raw.get("events") or []:
        if isinstance(event, dict):
            events.append((str(event.get("name") or ""), _attributes(event.get("attributes"))))
    return Span(
        trace=str(trace) if trace else None,
        id=str(ident) if ident else None,
        parent=str(parent) if parent else None,
        name=str(raw.get("name") or ""),
        attrs=_attributes(raw.get("attributes")),
        events=events,
        start=_nanos(raw.get("startTimeUnixNano") or raw.get("start_time") or raw.get("startTime")),
        end=_nanos(raw.get("endTimeUnixNano") or raw.get("end_time") or raw.get("endTime")),
        order=order,
        error=code in (2, "STATUS_CODE_ERROR", "ERROR"),
        status_message=str(status.get("message") or status.get("description") or ""),
    )


def _collect(document: Any, spans: list[Span]) -> None:
    if isinstance(document, list):
        for item in document:
            _collect(item, spans)
        return
    if not isinstance(document, dict):
        raise _Bad(f"expected spans, got {type(document).__name__}")
    resources = document.get("resourceSpans", document.get("resource_spans"))
    if isinstance(resources, list):
        for resource in resources:
            scopes = resource.get("scopeSpans", resource.get("scope_spans")) if isinstance(resource, dict) else None
            for scope in scopes if isinstance(scopes, list) else []:
                for raw in (scope.get("spans") or []) if isinstance(scope, dict) else []:
                    if isinstance(raw, dict):
                        spans.append(_span(raw, len(spans)))
        return
    if "name" in document and ("attributes" in document or "spanId" in document or "context" in document):
        spans.append(_span(document, len(spans)))
        return
    if _looks_like_attributes(document):
        spans.append(Span(None, None, None, "span", dict(document), order=len(spans)))
        return
    raise _Bad("an object without resourceSpans, span fields or GenAI attributes")


def _looks_like_attributes(document: dict[str, Any]) -> bool:
    return any(key.startswith(("gen_ai.", "llm.", "ai.")) or key == "openinference.span.kind" for key in document)


# -- attribute dialects ------------------------------------------------------------------------


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _tree(attrs: dict[str, Any], prefix: str) -> dict[str, Any]:
    """Flattened attributes under ``prefix`` (``llm.input_messages.0.message.role``) as nested maps."""
    root: dict[str, Any] = {}
    dot = prefix + "."
    for key, value in attrs.items():
        if not key.startswith(dot):
            continue
        node = root
        parts = key[len(dot) :].split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node[parts[-1]] = value
    return root


def _indexed(tree: dict[str, Any]) -> list[Any]:
    return [tree[key] for key in sorted((k for k in tree if k.isdigit()), key=int)]


def _call(ident: Any, name: Any, arguments: Any) -> ToolCall:
    if isinstance(arguments, str):
        parsed = _json(arguments)
        if isinstance(parsed, dict):
            return ToolCall(name=str(name or ""), arguments=parsed, id=str(ident) if ident else None)
        return ToolCall(name=str(name or ""), raw_arguments=arguments, id=str(ident) if ident else None)
    if isinstance(arguments, dict):
        return ToolCall(name=str(name or ""), arguments=arguments, id=str(ident) if ident else None)
    text = None if arguments is None else orjson.dumps(arguments, default=str).decode()
    return ToolCall(name=str(name or ""), raw_arguments=text, id=str(ident) if ident else None)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str).decode()


def _message(raw: Any) -> list[ChatMessage]:
    """One logged message in any of the JSON shapes: semconv ``parts``, OpenAI ``content``/``tool_calls``,
    Vercel content parts (``tool-call``/``tool-result``). A message of several tool results is several."""
    if not isinstance(raw, dict):
        return [ChatMessage(role="user", content=_text(raw))]
    role = str(raw.get("role") or "user")
    if isinstance(raw.get("parts"), list):
        texts, calls, reasoning, results = [], [], [], []
        for part in raw["parts"]:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append(_text(part.get("content")))
            elif kind == "tool_call":
                calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                results.append(
                    ChatMessage(
                        role="tool",
                        content=_text(part.get("response", part.get("result"))),
                        tool_call_id=str(part.get("id") or "") or None,
                    )
                )
            elif kind == "reasoning":
                reasoning.append(_text(part.get("content")))
        if results:
            return results
        return [
            ChatMessage(role=role, content="\n".join(texts), tool_calls=calls, reasoning="\n".join(reasoning) or None)
        ]
    content = raw.get("content")
    calls = []
    for call in raw.get("tool_calls") or []:
        if isinstance(call, dict):
            function = _obj(call.get("function")) or call
            calls.append(_call(call.get("id"), function.get("name"), function.get("arguments")))
    if isinstance(content, list):
        texts, results = [], []
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append(_text(part.get("text")))
            elif kind == "tool-call":
                calls.append(_call(part.get("toolCallId"), part.get("toolName"), part.get("input", part.get("args"))))
            elif kind == "tool-result":
                output = part.get("output", part.get("result"))
                if isinstance(output, dict) and "value" in output:
                    output = output["value"]
                results.append(
                    ChatMessage(
                        role="tool", content=_text(output), tool_call_id=str(part.get("toolCallId") or "") or None
                    )
                )
        if results:
            return results
        content = "\n".join(texts)
    return [
        ChatMessage(
            role=role,
            content=_text(content),
            tool_calls=calls,
            tool_call_id=_opt(raw.get("tool_call_id")),
            name=_opt(raw.get("name")),
        )
    ]


def _messages(value: Any) -> list[ChatMessage]:
    value = _json(value)
    if isinstance(value, dict):
        value = [value]
    out: list[ChatMessage] = []
    for raw in value if isinstance(value, list) else []:
        out.extend(_message(raw))
    return out


def _openinference(attrs: dict[str, Any], prefix: str) -> list[ChatMessage]:
    out = []
    for entry in _indexed(_tree(attrs, prefix)):
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if content is None and isinstance(message.get("contents"), dict):
            content = "\n".join(
                _text((part.get("message_content") or {}).get("text"))
                for part in _indexed(message["contents"])
                if isinstance(part, dict) and isinstance(part.get("message_content"), dict)
            )
        calls = []
        for call in _indexed(message.get("tool_calls") or {}):
            tool_call = call.get("tool_call") if isinstance(call, dict) else None
            if isinstance(tool_call, dict):
                function = _obj(tool_call.get("function"))
                calls.append(_call(tool_call.get("id"), function.get("name"), function.get("arguments")))
        out.append(
            ChatMessage(
                role=str(message.get("role") or "user"),
                content=_text(content),
                tool_calls=calls,
                tool_call_id=_opt(message.get("tool_call_id")),
                name=_opt(message.get("name")),
            )
        )
    return out


def _openllmetry(attrs: dict[str, Any], prefix: str) -> list[ChatMessage]:
    out = []
    for entry in _indexed(_tree(attrs, prefix)):
        if not isinstance(entry, dict):
            continue
        calls = []
        for call in _indexed(entry.get("tool_calls") or {}):
            if isinstance(call, dict):
                calls.append(_call(call.get("id"), call.get("name"), call.get("arguments")))
        out.append(
            ChatMessage(
                role=str(entry.get("role") or "user"),
                content=_text(entry.get("content")),
                tool_calls=calls,
                tool_call_id=_opt(entry.get("tool_call_id")),
            )
        )
    return out


_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def input_messages(span: Span) -> list[ChatMessage]:
    """The prompt of an LLM span, from whichever convention the instrumentation wrote."""
    attrs = span.attrs
    system: list[ChatMessage] = []
    instructions = _json(attrs.get("gen_ai.system_instructions"))
    if isinstance(instructions, list):
        text = "\n".join(_text(p.get("content")) for p in instructions if isinstance(p, dict))
        system = [ChatMessage(role="system", content=text)]
    elif isinstance(instructions, str):
        system = [ChatMessage(role="system", content=instructions)]
    if "gen_ai.input.messages" in attrs:
        return system + _messages(attrs["gen_ai.input.messages"])
    if any(key.startswith("llm.input_messages.") for key in attrs):
        return _openinference(attrs, "llm.input_messages")
    if any(key.startswith("gen_ai.prompt.") for key in attrs):
        return _openllmetry(attrs, "gen_ai.prompt")
    if "gen_ai.prompt" in attrs:
        return system + _messages(attrs["gen_ai.prompt"])
    if "ai.prompt.messages" in attrs:
        return _messages(attrs["ai.prompt.messages"])
    out = []
    for name, event_attrs in span.events:
        if name in _EVENT_ROLES:
            body = dict(event_attrs)
            body.setdefault("role", _EVENT_ROLES[name])
            body["content"] = _json(body.get("content"))
            out.extend(_message(body))
    return system + out


def output_message(span: Span) -> ChatMessage:
    """What the model answered in an LLM span (text, tool calls, reasoning)."""
    attrs = span.attrs
    if "gen_ai.output.messages" in attrs:
        found = _messages(attrs["gen_ai.output.messages"])
    elif any(key.startswith("llm.output_messages.") for key in attrs):
        found = _openinference(attrs, "llm.output_messages")
    elif any(key.startswith("gen_ai.completion.") for key in attrs):
        found = _openllmetry(attrs, "gen_ai.completion")
    elif "gen_ai.completion" in attrs:
        value = _json(attrs["gen_ai.completion"])
        if isinstance(value, dict) and "text" in value and "role" not in value:
            found = [ChatMessage(role="assistant", content=_text(value.get("text")))]
        else:
            found = _messages(value)
    elif "ai.response.text" in attrs or "ai.response.toolCalls" in attrs:
        calls = []
        for call in _json(attrs.get("ai.response.toolCalls")) or []:
            if isinstance(call, dict):
                calls.append(_call(call.get("toolCallId"), call.get("toolName"), call.get("input", call.get("args"))))
        reasoning = attrs.get("ai.response.reasoning")
        found = [
            ChatMessage(
                role="assistant",
                content=_text(attrs.get("ai.response.text")),
                tool_calls=calls,
                reasoning=_text(reasoning) if reasoning else None,
            )
        ]
    else:
        found = []
        for name, event_attrs in span.events:
            if name == "gen_ai.choice":
                message = _json(event_attrs.get("message"))
                found.extend(
                    _message(message if isinstance(message, dict) else {"role": "assistant", "content": message})
                )
    if not found:
        return ChatMessage(role="assistant")
    message = ChatMessage(role="assistant", content="\n".join(m.content for m in found if m.content))
    message.tool_calls = [call for m in found for call in m.tool_calls]
    reasoning = [m.reasoning for m in found if m.reasoning]
    message.reasoning = "\n".join(reasoning) if reasoning else None
    return message


def tool_definitions(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools offered to an LLM span, as OpenAI function schemas."""
    found: list[Any] = []
    if "gen_ai.tool.definitions" in attrs:
        value = _json(attrs["gen_ai.tool.definitions"])
        found = value if isinstance(value, list) else []
    elif any(key.startswith("llm.tools.") for key in attrs):
        found = [
            _json((t.get("tool") or {}).get("json_schema"))
            for t in _indexed(_tree(attrs, "llm.tools"))
            if isinstance(t, dict)
        ]
    elif "ai.prompt.tools" in attrs:
        value = attrs["ai.prompt.tools"]
        found = [_json(v) for v in (value if isinstance(value, list) else [value])]
    elif any(key.startswith("llm.request.functions.") for key in attrs):
        found = [f for f in _indexed(_tree(attrs, "llm.request.functions")) if isinstance(f, dict)]
    tools = []
    for tool in found:
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("function"), dict):
            tools.append(tool)
            continue
        function = {k: _json(v) if k == "parameters" else v for k, v in tool.items() if k != "type"}
        tools.append({"type": "function", "function": function})
    return tools


_TOOL_NAMES = ("gen_ai.tool.name", "tool.name", "ai.toolCall.name", "traceloop.entity.name")
_TOOL_OUTPUTS = (
    "gen_ai.tool.call.result",
    "output.value",
    "ai.toolCall.result",
    "traceloop.entity.output",
    "output",
    "gen_ai.tool.output",
)


def _tool_result(span: Span) -> tuple[str | None, str | None, str]:
    """A tool span's call id (None when the convention has none: OpenLLMetry), tool name and output."""
    attrs = span.attrs
    ident = attrs.get("gen_ai.tool.call.id") or attrs.get("tool_call.id") or attrs.get("ai.toolCall.id")
    name = next((str(attrs[key]) for key in _TOOL_NAMES if attrs.get(key)), None)
    output = next((_text(attrs[key]) for key in _TOOL_OUTPUTS if key in attrs), "")
    return (str(ident) if ident else None), name, output


# -- traces into trajectories ---------------------------------------------------------------------


def _trajectories(path: Path, spans: list[Span], brief: bool = False) -> Iterator[ReadItem]:
    """The trajectories of ``spans`` (``brief``: for a summary: steps without prompts, tools or results)."""
    traces: dict[str | None, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace, []).append(span)
    for trace, members in traces.items():
        by_id: dict[str | None, Span] = {span.id: span for span in members if span.id}
        owner_of = {id(span): _owner(span, by_id) for span in members}
        """Each span's sub-agent, once (asked again for every sub-agent's members)."""
        owners: dict[str, list[Span]] = {}
        agents: dict[str, Span] = {}
        parents: dict[str, str] = {}

        ordered = sorted(members, key=lambda s: (s.start, s.order))
        for span in ordered:
            if span.kind == "agent":
                owner = owner_of[id(span)]
                if owner:
                    agents[owner] = span
                    parent_span = by_id.get(span.parent) if span.parent else None
                    parents[owner] = _owner(parent_span, by_id) if parent_span is not None else ""
                continue
            if span.kind in ("llm", "tool"):
                owners.setdefault(owner_of[id(span)], []).append(span)
        root_id = str(trace or path.stem)
        order = ["", *agents]
        names = {"": root_id}
        for key in agents:
            agent = agents[key]
            label = agent.attrs.get("gen_ai.agent.name") or agent.attrs.get("agent.name") or agent.name
            names[key] = f"{root_id}/{label}#{key[:8]}"
        for key in order:
            try:
                trajectory = _build(
                    names[key],
                    owners.get(key, []),
                    [s for s in members if key == "" or owner_of[id(s)] == key],
                    brief,
                )
            except (ValueError, TypeError, OverflowError, RecursionError) as exc:
                yield LoadProblem(file=path.name, session_id=names[key], message=f"not read: {exc}")
                continue
            if key:
                agent = agents[key]
                above = by_id.get(agent.parent) if agent.parent else None
                call_id = _tool_result(above)[0] if above is not None and above.kind == "tool" else None
                operation = agent.attrs.get("gen_ai.operation.name")
                trajectory.parent = ParentLink(
                    episode=names[parents.get(key, "")],
                    call_id=call_id,
                    source=str(operation) if operation else "agent span",
                )
            yield trajectory


def _owner(span: Span, by_id: dict[str | None, Span]) -> str:
    """The id of the nearest enclosing sub-agent span (an agent span inside another agent span), or
    "" for the trace itself."""
    chain: list[Span] = []
    seen: set[str] = set()
    node = by_id.get(span.parent) if span.parent else None
    while node is not None and str(node.id) not in seen:
        seen.add(str(node.id))
        chain.append(node)
        node = by_id.get(node.parent) if node.parent else None
    agent_chain = [node for node in chain if node.kind == "agent"]
    if span.kind == "agent":
        agent_chain = [span, *agent_chain]
    return str(agent_chain[0].id) if len(agent_chain) >= 2 else ""


_INPUT_TOKENS: tuple[str, ...] = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
_INPUT_TOKENS += ("ai.usage.inputTokens", "ai.usage.promptTokens")
_OUTPUT_TOKENS: tuple[str, ...] = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
_OUTPUT_TOKENS += ("llm.token_count.completion", "ai.usage.outputTokens", "ai.usage.completionTokens")
_CACHE_READ = ("gen_ai.usage.cache_read.input_tokens", "llm.token_count.prompt_details.cache_read")
_CACHE_WRITE = ("gen_ai.usage.cache_creation.input_tokens", "llm.token_count.prompt_details.cache_write")
_REASONING: tuple[str, ...] = ("gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning")
_REASONING += ("ai.usage.reasoningTokens",)
_TOTAL = ("llm.token_count.total", "ai.usage.totalTokens")
_COST = ("llm.cost.total",)
_MODEL = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "ai.response.model", "ai.model.id")
"""Where each convention (GenAI semconv and its older names, OpenInference, Vercel AI SDK) records
an LLM span's usage and model, in the order looked at."""


def _first(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((attrs[key] for key in keys if attrs.get(key) is not None), None)


def _telemetry(step: TrajectoryStep, span: Span) -> None:
    """An LLM span's start, length, usage, model and error status as the step's typed fields."""
    attrs = span.attrs
    step.kind = "decision" if step.action is not None else "message"
    step.timestamp = parse_timestamp(span.start) if span.start > 0 else None
    step.duration = (span.end - span.start) / 1e9 if span.start > 0 and span.end >= span.start else None
    step.usage = TokenUsage.of(
        input=_first(attrs, _INPUT_TOKENS),
        output=_first(attrs, _OUTPUT_TOKENS),
        cache_read=_first(attrs, _CACHE_READ),
        cache_write=_first(attrs, _CACHE_WRITE),
        reasoning=_first(attrs, _REASONING),
        total=_first(attrs, _TOTAL),
        cost=_first(attrs, _COST),
    )
    model = _first(attrs, _MODEL)
    step.model = str(model) if model else None
    if span.error:
        step.error = span.status_message or str(attrs.get("error.type") or "error")


def _build(ident: str, spans: list[Span], members: list[Span], brief: bool = False) -> Trajectory:
    steps: list[TrajectoryStep] = []
    by_call: dict[str, TrajectoryStep] = {}
    """Calls not answered yet by a tool span: their id (or span#n) → the step that made them."""
    unanswered: dict[str, str] = {}
    all_calls: list[ToolCall] = []
    results = 0
    last_messages: list[ChatMessage] = []
    task = ""
    tools_seen: list[dict[str, Any]] = []
    for span in spans:
        if span.kind == "tool":
            results += 1
            call_id, name, text = _tool_result(span)
            step = by_call.pop(call_id, None) if call_id else None
            if step is None and name is not None:  # no call id: the oldest unanswered call of that name
                found = next(((key, s) for key, s in by_call.items() if unanswered.get(key) == name), None)
                if found is not None:
                    call_id, step = found[0], by_call.pop(found[0])
            if step is None:
                continue
            if step.action is not None and (step.action.id == call_id or call_id == f"{step.extra.get('span_id')}#0"):
                step.tool_result = text
            if "tool_calls" in step.extra:
                step.extra.setdefault("tool_results", []).append({"tool_call_id": call_id, "content": text})
            continue
        messages = [] if brief and task else input_messages(span)
        answer = output_message(span)
        if not task:
            task = next((m.content for m in messages if m.role == "user"), "")
        tools = [] if brief else tool_definitions(span.attrs)
        if tools and not tools_seen:
            tools_seen = tools
        calls = answer.tool_calls
        all_calls.extend(calls)
        observation = next((m.content for m in reversed(messages) if m.role in ("user", "tool")), "")
        step = TrajectoryStep(
            index=len(steps),
            observation=observation,
            messages=[] if brief else messages,
            tools=tools,
            thinking=answer.reasoning or "",
            content=answer.content,
            action=calls[0] if calls else None,
            extra={
                "span": span.name,
                "span_id": span.id,
                **{
                    k: v
                    for k, v in span.attrs.items()
                    if k.startswith(
                        (
                            "gen_ai.usage.",
                            "gen_ai.request.model",
                            "gen_ai.response.",
                            "llm.token_count.",
                            "llm.model_name",
                        )
                    )
                },
            },
        )
        _telemetry(step, span)
        if len(calls) > 1:
            step.extra["tool_calls"] = [call.model_dump(mode="json") for call in calls]
        for number, call in enumerate(calls):
            key = call.id or f"{span.id}#{number}"
            by_call[key] = step
            unanswered[key] = call.name
        steps.append(step)
        last_messages = [*messages, answer]
    inferred = [] if brief else infer_tools(all_calls)
    for step in steps:
        if not step.tools:
            step.tools = tools_seen or inferred
    if steps:
        steps[-1].done = True
    # results the trace holds only in later prompts (no tool spans): taken from the tool messages
    for step in [] if brief else steps:
        if step.action is not None and step.tool_result is None and step.action.id:
            for later in steps[step.index + 1 :]:
                answer_text = next(
                    (m.content for m in later.messages if m.role == "tool" and m.tool_call_id == step.action.id), None
                )
                if answer_text is not None:
                    step.tool_result = answer_text
                    break
    outcome = _outcome(members, steps)
    return Trajectory(
        id=ident,
        format="otel-genai",
        task=task,
        steps=steps,
        outcome=outcome,
        metadata={"spans": len(members), "messages": len(last_messages), "results": results},
    )


_PASSING_LABELS = frozenset({"pass", "passed", "correct", "relevant", "true", "yes", "success"})
_FAILING_LABELS = frozenset({"fail", "failed", "incorrect", "not_relevant", "irrelevant", "false", "no", "failure"})
"""``gen_ai.evaluation.score.label`` values that say pass or fail (the semantic conventions' examples:
relevant / not_relevant, correct / incorrect, pass / fail); any other label leaves it unknown."""


def _outcome(members: list[Span], steps: list[TrajectoryStep]) -> Outcome:
    """The trace's own verdict: ``error`` when a span has an error status (the first such span's
    ``error.type`` or ``exception`` event, its status message and stack trace as the error), else
    ``ok``; each ``gen_ai.evaluation.result`` (a span event, or a span carrying
    ``gen_ai.evaluation.name``) a check; the last answer without a call as the answer."""
    errors = [span for span in members if span.error]
    outcome = Outcome(status="error" if errors else "ok")
    if errors:
        outcome.scores["error_spans"] = [span.name for span in errors]
        outcome.error = _error_text(errors[0])
    for span in members:
        found = [attrs for name, attrs in span.events if name == "gen_ai.evaluation.result"]
        if "gen_ai.evaluation.name" in span.attrs:
            found.append(span.attrs)
        outcome.checks.extend(_evaluation(attrs) for attrs in found if "gen_ai.evaluation.name" in attrs)
    if outcome.checks:
        outcome.scores["evaluations"] = [check.model_dump(mode="json") for check in outcome.checks]
        verdicts = [check.passed for check in outcome.checks]
        if None not in verdicts:
            outcome.success = all(verdicts)
        if len(outcome.checks) == 1:
            only = outcome.checks[0]
            if isinstance(only.value, int | float) and not isinstance(only.value, bool):
                outcome.reward = float(only.value)
            outcome.explanation = only.detail or None
    last = steps[-1] if steps else None
    if last is not None and last.action is None and last.content.strip():
        outcome.answer = last.content
    return outcome


def _evaluation(attrs: dict[str, Any]) -> OutcomeCheck:
    label = attrs.get("gen_ai.evaluation.score.label")
    passed = None
    if isinstance(label, str):
        word = label.strip().lower()
        passed = True if word in _PASSING_LABELS else False if word in _FAILING_LABELS else None
    value = attrs.get("gen_ai.evaluation.score.value", label)
    explanation = attrs.get("gen_ai.evaluation.explanation")
    detail = str(explanation) if explanation is not None else ""
    if attrs.get("error.type"):
        detail = f"evaluation error: {attrs['error.type']}" + (f"; {detail}" if detail else "")
    return OutcomeCheck(name=str(attrs["gen_ai.evaluation.name"]), passed=passed, value=value, detail=detail)


def _error_text(span: Span) -> str:
    """A failed span as text: ``error.type`` (or its ``exception`` event's type), the status
    message (or the exception's message), then the stack trace when recorded."""
    exception = next((attrs for name, attrs in span.events if name == "exception"), {})
    kind = span.attrs.get("error.type") or exception.get("exception.type")
    message = span.status_message or exception.get("exception.message") or ""
    head = ": ".join(str(part) for part in (kind, message) if part) or f"span {span.name} failed"
    trace = exception.get("exception.stacktrace")
    return f"{head}\n\n{str(trace).strip()}" if isinstance(trace, str) and trace.strip() else head
