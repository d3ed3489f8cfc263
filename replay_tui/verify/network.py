"""Network-trace checks (WebArena-Verified's ``NetworkEventEvaluator``): did the agent's browser
make the request the task describes?

A trace is read from a HAR file (what browsers and Playwright write: ``{"log": {"entries": [...]}}``),
a JSON list of HAR entries, or upstream's Playwright trace format (a ``.zip`` or directory holding
``trace.network``, whose ``resource-snapshot`` lines are HAR entries). Static assets (``.css``,
``.js``, images, fonts) are not evaluation events.

One check, as the task file describes it (``expected`` holds ``url`` and optionally
``http_method`` (default GET), ``headers``, ``query_params``, ``post_data``, ``response_status``
(default 200), ``response_content``, ``response_cookies``):

1. Candidates: for a navigate task whose expected method is GET, the last page navigation;
   otherwise every event with that method whose URL path matches ``url`` (placeholders, ``^...$``
   patterns and alternatives as in answers; the query is not looked at yet) and, when a
   ``referer`` header is expected and sent, whose referer path matches too.
2. ``last_event_only`` (the default) keeps the last candidate; otherwise any candidate may match.
3. A candidate matches when every expected field does: the whole URL (query included, minus
   ``ignored_query_params``/``..._patterns``; ``query_params`` given separately replace the
   expected URL's query; ``decode_base64_query`` moves base64 query path segments into the query;
   ``query_params_schema`` types the values), headers by case-insensitive name, ``post_data`` (form,
   JSON or multipart) and ``response_content`` keys (also ``$.a.b[0]`` paths, ``[?(@.k == v)]``
   filters, JSON held in form fields, ``$.^regex$`` keys; ``post_data_schema`` types the values,
   ``ignored_post_data_params_patterns`` drops fields), the status, cookies.
4. No candidate matching: ``missing_navigation_event``, plus the mismatches of the last candidate
   (the offending request) at paths like ``network_event.post_data.name``. With ``should_not_exist``
   any candidate is ``unexpected_navigation_event``.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

from replay_tui.verify.models import Assertion, EvaluatorResult
from replay_tui.verify.normalize import Raw, normalize_object, to_display
from replay_tui.verify.types import (
    STRING,
    NormalizationError,
    Pattern,
    Side,
    TypedValue,
    UrlType,
    UrlValue,
    data_type,
    is_pattern,
    pattern_matches_base,
)

STATIC_SUFFIXES = (".css", ".js", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".woff", ".woff2", ".ttf", ".ico", ".webp")
NETWORK_EVALUATOR = "NetworkEventEvaluator"


class TraceError(ValueError):
    """A trace file that cannot be read."""


@dataclass(frozen=True)
class Event:
    """One request of a trace, with its response."""

    index: int
    method: str
    url: str
    status: int
    request_headers: Mapping[str, str]
    post_data: Mapping[str, Any] | None = None
    response_content: Mapping[str, Any] | None = None
    cookies: Mapping[str, str] = field(default_factory=dict)
    upstream_unreadable: frozenset[str] = frozenset()
    """Which of ``post_data``/``response_content`` upstream cannot read (recorded base64-encoded, or
    JSON under a media type other than ``application/json``); read here, ignored under upstream rules."""

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def is_evaluation_event(self) -> bool:
        return not self.path.endswith(STATIC_SUFFIXES)

    @property
    def is_navigation(self) -> bool:
        """A top-level page load: a GET for a document (``Sec-Fetch-*`` headers, else ``Accept``)."""
        if self.method != "GET":
            return False
        headers = {k: v.lower() for k, v in self.request_headers.items()}
        if "sec-fetch-user" in headers:
            return (
                headers.get("sec-fetch-dest") == "document"
                and headers.get("sec-fetch-mode") == "navigate"
                and headers.get("sec-fetch-user") == "?1"
                and "text/html" in headers.get("accept", "")
            )
        return headers.get("accept", "").startswith("text/html")

    def describe(self) -> dict[str, Any]:
        """The request as a report shows it."""
        return {"index": self.index, "method": self.method, "url": self.url, "status": self.status}


def _parse_body(content: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A HAR ``postData``/``content`` as an object: form fields (first value), a JSON object, or None."""
    if not isinstance(content, Mapping):
        return None
    text = content.get("text") or ""
    mime = str(content.get("mimeType") or "").lower()
    if not isinstance(text, str) or not text:
        return None
    if content.get("encoding") == "base64":
        import base64
        import binascii

        try:
            text = base64.b64decode(text).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    if "application/x-www-form-urlencoded" in mime:
        return {k: (v[0] if v else "") for k, v in parse_qs(text, keep_blank_values=True).items()}
    if "json" in mime:
        try:
            parsed = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return None
        return parsed if isinstance(parsed, dict) else None
    if "multipart/form-data" in mime:
        boundary = re.search(r"boundary=([^;\s]+)", mime, re.IGNORECASE)
        if boundary is None:
            return None
        return _multipart_fields(text, str(content.get("mimeType"))[boundary.start(1) : boundary.end(1)])
    return None


_FIELD_NAME = re.compile(r'name="([^"]+)"')


def _multipart_fields(text: str, boundary: str) -> dict[str, str]:
    """The text fields of a ``multipart/form-data`` body (a file part's content is its text), as upstream
    splits it: on ``--boundary``, headers from body at the first blank line, trailing line breaks dropped."""
    fields: dict[str, str] = {}
    for part in text.split(f"--{boundary}"):
        part = part.strip()
        if not part or part == "--":
            continue
        separator = "\r\n\r\n" if "\r\n\r\n" in part else "\n\n" if "\n\n" in part else None
        if separator is None:
            continue
        head, body = part.split(separator, 1)
        for line in head.split("\r\n"):
            if line.lower().startswith("content-disposition:"):
                name = _FIELD_NAME.search(line)
                if name:
                    fields[name.group(1)] = body.rstrip("\r\n")
                break
    return fields


def _upstream_unreadable(body: Any) -> bool:
    if not isinstance(body, Mapping) or not body.get("text"):
        return False
    mime = str(body.get("mimeType") or "").lower()
    other_json = "json" in mime and "application/json" not in mime and "x-www-form-urlencoded" not in mime
    return body.get("encoding") == "base64" or other_json


def event_from_har(entry: Mapping[str, Any], index: int) -> Event:
    """One HAR entry as an :class:`Event` (:class:`TraceError` when it lacks a request)."""
    request = entry.get("request")
    if not isinstance(request, Mapping) or not isinstance(request.get("url"), str):
        raise TraceError(f"entry {index}: no request URL")
    response = entry.get("response") if isinstance(entry.get("response"), Mapping) else {}
    assert isinstance(response, Mapping)
    headers = {
        str(h.get("name", "")).lower(): str(h.get("value", ""))
        for h in request.get("headers") or []
        if isinstance(h, Mapping)
    }
    cookies = {
        str(c.get("name", "")): unquote(str(c.get("value", "")))
        for c in response.get("cookies") or []
        if isinstance(c, Mapping)
    }
    status = response.get("status")
    return Event(
        index=index,
        method=str(request.get("method") or "GET"),
        url=request["url"],
        status=status if isinstance(status, int) else 0,
        request_headers=headers,
        post_data=_parse_body(request.get("postData")),
        response_content=_parse_body(response.get("content")),
        upstream_unreadable=frozenset(
            name
            for name, body in (("post_data", request.get("postData")), ("response_content", response.get("content")))
            if _upstream_unreadable(body)
        ),
        cookies=cookies,
    )


def load_trace(path: str | Path) -> list[Event]:
    """Read a HAR file, a JSON list of HAR entries, or a Playwright trace (``.zip`` or directory)."""
    path = Path(path)
    try:
        if path.is_dir() or path.suffix == ".zip":
            entries = _playwright_entries(path)
        else:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, Mapping) and isinstance(data.get("log"), Mapping):
                entries = data["log"].get("entries") or []
            elif isinstance(data, list):
                entries = [e.get("snapshot", e) if isinstance(e, Mapping) else e for e in data]
            else:
                raise TraceError(f"{path}: neither a HAR file nor a list of HAR entries")
    except TraceError:
        raise
    except (OSError, UnicodeDecodeError, zipfile.BadZipFile, KeyError) as exc:
        raise TraceError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise TraceError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(entries, list):
        raise TraceError(f"{path}: HAR entries must be a list")
    return [event_from_har(entry, i) for i, entry in enumerate(entries) if isinstance(entry, Mapping)]


def _playwright_entries(path: Path) -> list[Any]:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            text = archive.read("trace.network").decode("utf-8", errors="replace")
    else:
        text = (path / "trace.network").read_text(encoding="utf-8", errors="replace")
    entries = []
    for line in text.splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if isinstance(item, Mapping) and item.get("type") == "resource-snapshot":
            entries.append(item.get("snapshot"))
    return entries


def find_trace(where: Path, task_id: int) -> Path | None:
    """The trace of one task in a traces directory: ``<id>.har``, ``<id>.json``, ``<id>.zip``, or
    ``<id>/network.har`` / ``<id>/trace.zip`` / ``<id>/trace.network`` (upstream's layout)."""
    for candidate in (
        where / f"{task_id}.har",
        where / f"{task_id}.json",
        where / f"{task_id}.zip",
        where / str(task_id) / "network.har",
        where / str(task_id) / "trace.zip",
    ):
        if candidate.is_file():
            return candidate
    folder = where / str(task_id)
    if (folder / "trace.network").is_file():
        return folder
    return None


# --------------------------------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------------------------------

URL = UrlType()


@dataclass(frozen=True)
class QueryRules:
    """How a check reads URLs' queries: the parameters it does not look at, whether base64 path
    segments are queries (``decode_base64_query``), and the types of the values (``query_params_schema``)."""

    names: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    decode_base64: bool = False
    schema: Mapping[str, Any] | None = None

    def keep(self, key: str) -> bool:
        if key in self.names:
            return False
        return not any(_search(p, key) for p in self.patterns)


def _search(pattern: str, text: str, flags: int = re.IGNORECASE) -> bool:
    try:
        return re.search(pattern, text, flags) is not None
    except re.error:
        return False


def _url(raw: Any, side: Side, rules: QueryRules, query: Mapping[str, Any] | None = None) -> TypedValue:
    """A URL (or alternatives) with ignored query parameters removed; ``query`` replaces its query.

    With ``rules.decode_base64`` a path segment that is base64 of a query string (Magento's
    ``.../filter/cmVwb3J0X3R5cGU9.../``) leaves the path and joins the query; with ``rules.schema``
    the query values are read by their types (``from`` as a date, ...) before they are compared.
    """
    if rules.decode_base64 and query is None:
        raw = [_decode_base64_segments(r) for r in raw] if isinstance(raw, list) else _decode_base64_segments(raw)
    value = URL.make(raw, side)
    alternatives = []
    for alt in value.alternatives:
        params: list[tuple[str, tuple[str, ...]]] = list(alt.query)
        if query is not None:
            params = [
                (str(k), tuple(str(x).lower().strip() for x in (v if isinstance(v, list) else [v])))
                for k, v in query.items()
            ]
        kept = tuple(sorted((k, tuple(sorted(v))) for k, v in params if rules.keep(k)))
        if rules.schema is not None:
            kept = _typed_query(kept, rules.schema, side)
        alternatives.append(UrlValue(base=alt.base, query=kept, pattern=alt.pattern))
    return TypedValue(URL, tuple(alternatives), raw)


_BASE64_SEGMENT = re.compile(r"^[A-Za-z0-9_-]{4,}={0,2}$")


def _decode_base64_segments(raw: Any) -> Any:
    """``raw`` with each base64-encoded query-string path segment moved into its query (upstream's
    ``decode_base64_query``): a segment of 4+ URL-safe base64 characters that decodes to UTF-8 text
    holding ``=``. Patterns and non-text are left alone."""
    if not isinstance(raw, str) or is_pattern(raw.strip()):
        return raw
    text = raw.strip()
    placeholder = re.match(r"^(__[A-Z0-9_]+__)(.*)$", text, re.DOTALL)
    prefix, rest = (placeholder.group(1), placeholder.group(2)) if placeholder else ("", text)
    parts = urlsplit(rest)
    segments = parts.path.split("/")
    queries: list[str] = []
    for index, segment in enumerate(segments):
        if not segment or not _BASE64_SEGMENT.match(segment):
            continue
        import base64

        try:
            decoded = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)).decode("utf-8")
        except ValueError:
            continue
        if "=" not in decoded:
            continue
        decoded = unquote(decoded).strip()
        if decoded:
            queries.append(decoded.lstrip("?&"))
            segments[index] = ""
    if not queries:
        return raw
    kept = [segment for segment in segments if segment]
    path = "/".join(kept)
    if kept:
        path = ("/" if parts.path.startswith("/") else "") + path
        path += "/" if parts.path.endswith("/") and not path.endswith("/") else ""
    else:
        path = "/" if parts.path.startswith("/") else ""
    query = "&".join([*queries, *([parts.query.strip()] if parts.query else [])])
    return prefix + urlunsplit((parts.scheme, parts.netloc, path, query, parts.fragment))


def _typed_query(
    query: tuple[tuple[str, tuple[str, ...]], ...], schema: Mapping[str, Any], side: Side
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Query values read by ``query_params_schema`` (each key's property schema, text when none),
    kept as canonical text so that equal typed values compare equal (``02/1/2023`` = ``2023-02-01``);
    a value that cannot be read keeps its text and a mark that makes it equal no typed value."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    assert isinstance(properties, Mapping)
    out = []
    for key, values in query:
        prop = properties.get(key)
        if not isinstance(prop, Mapping):
            out.append((key, values))
            continue
        items = prop.get("items") if prop.get("type") == "array" else prop
        typed = []
        for value in values:
            try:
                read = data_type(items if isinstance(items, Mapping) else None).make(value, side)
            except NormalizationError:
                if side.expected:
                    raise
                typed.append(f"\x00unreadable:{value}")
                continue
            typed.append(value if is_pattern(value) else json.dumps(read.to_json(), sort_keys=True, default=str))
        out.append((key, tuple(sorted(typed))))
    return tuple(out)


def _paths_match(expected: TypedValue, actual: TypedValue, upstream: bool = False) -> bool:
    """Whether some pair of alternatives has matching bases (the query is not looked at); upstream
    matches patterns case-sensitively."""
    for e in expected.alternatives:
        for a in actual.alternatives:
            if e.pattern:
                if (
                    Pattern(e.base, ignore_case=False).match(a.base)
                    if upstream
                    else pattern_matches_base(e.base, a.base)
                ):
                    return True
            elif e.base.lower().rstrip("/") == a.base.lower().rstrip("/"):
                return True
    return False


_JSONPATH_STEP = re.compile(
    r"\.([^.\[\]]+)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]"
    r"|\[\?\(@\.([A-Za-z_][\w-]*)\s*==\s*(?:(-?\d+(?:\.\d+)?)|'([^']*)'|\"([^\"]*)\")\)\]"
)


def lookup(data: Any, key: str) -> Any:
    """``key`` in ``data``: a plain key, a ``$.a.b[0]`` path (also ``['quoted key']`` and
    ``[?(@.field == value)]`` filters), or a ``$.^regex$`` / ``^regex$`` key (exactly one top-level
    key must match it). A path that finds nothing is tried again with text values that hold JSON
    parsed (a form field carrying a JSON document). Several matches, or a filter, give a tuple;
    none gives None."""
    if not isinstance(data, Mapping):
        return None
    regex_key = key[2:] if key.startswith("$.^") else key if is_pattern(key) else None
    if regex_key is not None:
        hits = [k for k in data if isinstance(k, str) and Pattern(regex_key, ignore_case=False).fullmatch(k)]
        return data[hits[0]] if len(hits) == 1 else None
    if not key.startswith("$"):
        return data.get(key)
    found = _path_values(data, key[1:])
    if not found:
        found = _path_values(_json_fields(data), key[1:])
    if found is None or not found:
        return None
    return found[0] if len(found) == 1 and "?(" not in key else tuple(found)


def _path_values(data: Any, path: str) -> list[Any] | None:
    """Every value ``path`` (after the ``$``) reaches in ``data``; None when the path cannot be read."""
    nodes = [data]
    position = 0
    while position < len(path):
        step = _JSONPATH_STEP.match(path, position)
        if step is None:
            return None
        name, index, quoted, field, number, single, double = step.groups()
        following: list[Any] = []
        for node in nodes:
            if field is not None:
                if isinstance(node, list):
                    want: Any = (float(number) if "." in number else int(number)) if number is not None else None
                    text = single if single is not None else double
                    following += [
                        item
                        for item in node
                        if isinstance(item, Mapping)
                        and field in item
                        and (item[field] == want if number is not None else item[field] == text)
                        and not isinstance(item[field], bool)
                    ]
            elif index is not None:
                if isinstance(node, list) and int(index) < len(node):
                    following.append(node[int(index)])
            elif isinstance(node, Mapping):
                child = name if name is not None else quoted
                if child in node:
                    following.append(node[child])
        nodes = following
        position = step.end()
    return nodes


def _json_fields(data: Any) -> Any:
    """``data`` with every text value that parses as JSON parsed (one level; containers recursed)."""
    if isinstance(data, Mapping):
        out = {}
        for key, value in data.items():
            if isinstance(value, str):
                try:
                    out[key] = json.loads(value)
                except (json.JSONDecodeError, RecursionError):
                    out[key] = value
            else:
                out[key] = _json_fields(value)
        return out
    if isinstance(data, list):
        return [_json_fields(item) for item in data]
    return data


@dataclass(frozen=True)
class NetworkCheck:
    """One ``NetworkEventEvaluator`` entry of a task."""

    expected: Mapping[str, Any]
    last_event_only: bool = True
    should_not_exist: bool = False
    query_rules: QueryRules = QueryRules()
    ignored_post_patterns: tuple[str, ...] = ()
    post_data_schema: Mapping[str, Any] | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> NetworkCheck:
        expected = config.get("expected")
        if not isinstance(expected, Mapping) or "url" not in expected:
            raise ValueError("a network check needs expected.url")
        return cls(
            expected=expected,
            last_event_only=bool(config.get("last_event_only", True)),
            should_not_exist=bool(config.get("should_not_exist", False)),
            query_rules=QueryRules(
                frozenset(config.get("ignored_query_params") or ()),
                tuple(config.get("ignored_query_params_patterns") or ()),
                decode_base64=bool(config.get("decode_base64_query", False)),
                schema=config.get("query_params_schema") or None,
            ),
            ignored_post_patterns=tuple(config.get("ignored_post_data_params_patterns") or ()),
            post_data_schema=config.get("post_data_schema"),
        )


def _assertion(path: str, kind: str, expected: Any, actual: Any, message: str, name: str | None = None) -> Assertion:
    """An assertion named ``<path>_<kind>`` unless ``name`` says otherwise (upstream's navigation names)."""
    return Assertion(
        name=name or f"{path}_{kind}",
        kind=kind,
        path=path,
        expected=to_display(expected),
        actual=actual,
        message=message,
    )


def check_events(
    check: NetworkCheck, events: Sequence[Event], sides: tuple[Side, Side], *, navigate_task: bool = False
) -> EvaluatorResult:
    """Run one network check over a trace's events."""
    expected_side, actual_side = sides
    want = check.expected
    try:
        expected_url = _url(want["url"], expected_side, check.query_rules, want.get("query_params"))
        method = str(want.get("http_method") or "GET").upper()
        raw_headers = want.get("headers")
        headers: Mapping[str, Any] = raw_headers if isinstance(raw_headers, Mapping) else {}
        referer = _url(headers["referer"], expected_side, check.query_rules) if "referer" in headers else None
        for where in ("post_data", "response_content"):  # a broken expectation is an error, trace or not
            fields = want.get(where)
            if isinstance(fields, Mapping) and fields:
                normalize_object({str(k): v for k, v in fields.items()}, _schema(check, where), expected_side, where)
    except (NormalizationError, ValueError) as exc:
        return EvaluatorResult.create(evaluator_name=NETWORK_EVALUATOR, error_msg=f"network check: {exc}")
    usable = [e for e in events if e.is_evaluation_event]
    if navigate_task and method == "GET":
        navigations = [e for e in usable if e.is_navigation]
        candidates = navigations[-1:]
    else:
        candidates = [
            e
            for e in usable
            if e.method.upper() == method
            and _url_matches_path(expected_url, e.url, actual_side, check.query_rules)
            and (
                referer is None
                or "referer" not in e.request_headers
                or _url_matches_path(referer, e.request_headers["referer"], actual_side, check.query_rules)
            )
        ]
    if check.last_event_only:
        candidates = candidates[-1:]
    shown = {"expected": dict(want), "candidates": [e.describe() for e in candidates]}
    if check.should_not_exist:
        if not candidates:
            return EvaluatorResult.create(evaluator_name=NETWORK_EVALUATOR, assertions=[], expected=shown)
        offending = candidates[-1].describe()
        message = (
            f"{len(candidates)} matching request(s) when none may exist: "
            f"{offending['method']} {offending['url']} -> {offending['status']}"
        )
        found = _assertion("network_event", "unexpected", None, offending, message, "unexpected_navigation_event")
        return EvaluatorResult.create(evaluator_name=NETWORK_EVALUATOR, assertions=[found], expected=shown)
    if not candidates:
        message = f"no {method} request to {_short_url(want['url'])}"
        missing = _assertion("network_event", "missing", expected_url, None, message, "missing_navigation_event")
        return EvaluatorResult.create(evaluator_name=NETWORK_EVALUATOR, assertions=[missing], expected=shown)
    details: list[Assertion] = []
    for event in candidates:
        details = _compare_event(check, event, expected_url, sides)
        if not details:
            return EvaluatorResult.create(
                evaluator_name=NETWORK_EVALUATOR, assertions=[], expected=shown, actual=event.describe()
            )
    offending = candidates[-1].describe()
    message = (
        f"{len(candidates)} candidate request(s), none matched all expected fields; last: "
        f"{offending['method']} {offending['url']} -> {offending['status']}"
    )
    summary = _assertion("network_event", "missing", expected_url, offending, message, "missing_navigation_event")
    return EvaluatorResult.create(
        evaluator_name=NETWORK_EVALUATOR, assertions=[summary, *details], expected=shown, actual=offending
    )


def request_text(request: Mapping[str, Any]) -> str:
    """``POST http://host/path -> 201``."""
    return f"{request.get('method')} {request.get('url')} -> {request.get('status')}"


def _short_url(raw: Any) -> str:
    text = json.dumps(raw, ensure_ascii=False) if not isinstance(raw, str) else raw
    return text if len(text) <= 120 else text[:119] + "…"


def _url_matches_path(expected: TypedValue, url: str, side: Side, rules: QueryRules) -> bool:
    try:
        return _paths_match(expected, _url(url, side, rules), side.upstream)
    except NormalizationError:
        return False


def _compare_event(
    check: NetworkCheck, event: Event, expected_url: TypedValue, sides: tuple[Side, Side]
) -> list[Assertion]:
    expected_side, actual_side = sides
    want = check.expected
    request = event.describe()
    out: list[Assertion] = []

    def fail(field: str, expected: Any, actual: Any, message: str) -> None:
        message += f" (in {request_text(request)})"
        out.append(
            _assertion(f"network_event.{field}", "mismatch", expected, {"value": actual, "request": request}, message)
        )

    try:
        actual_url: Any = _url(event.url, actual_side, check.query_rules)
    except NormalizationError as exc:
        actual_url = Raw(event.url, "url", str(exc))
    if not expected_url.matches(actual_url, upstream=actual_side.upstream):
        fail("url", expected_url, to_display(actual_url), f"expected {_short_url(want['url'])}, got {event.url}")
    method = str(want.get("http_method") or "GET")
    if event.method != method:  # the filter ignores case; the request itself must say it exactly
        fail("http_method", method, event.method, f"expected {method}, got {event.method}")
    status = want.get("response_status", 200)
    if status is not None and status != event.status:
        fail(
            "response_status",
            status,
            event.status,
            f"expected {status}, got {event.status}",
        )
    for name, value in (want.get("headers") or {}).items():
        sent = event.request_headers.get(str(name).lower())
        if sent is None:
            fail(f"headers.{name}", value, None, f"header {name} was not sent")
        elif str(name).lower() == "referer":
            rules = check.query_rules
            if not _url(value, expected_side, rules).matches(
                _url(sent, actual_side, rules), upstream=actual_side.upstream
            ):
                fail(f"headers.{name}", value, sent, f"expected referer {_short_url(value)}, got {sent}")
        elif not _text_matches(value, sent, sides):
            fail(f"headers.{name}", value, sent, f"expected {_short_url(value)}, got {_short_url(sent)}")
    for name, value in (want.get("response_cookies") or {}).items():
        got = event.cookies.get(name)
        if got is None or not _text_matches(value, got, sides):
            fail(f"response_cookies.{name}", value, got, f"cookie {name}: expected {_short_url(value)}, got {got!r}")
    for where, body in (("post_data", event.post_data), ("response_content", event.response_content)):
        if actual_side.upstream and where in event.upstream_unreadable:
            body = None
        out += _compare_fields(where, want.get(where), body, check, sides, request)
    return out


def _text_matches(expected: Any, actual: str, sides: tuple[Side, Side]) -> bool:
    try:
        return STRING.make(expected, sides[0]).matches(STRING.make(actual, sides[1]), upstream=sides[1].upstream)
    except NormalizationError:
        return False


def _compare_fields(
    where: str,
    expected: Any,
    actual: Mapping[str, Any] | None,
    check: NetworkCheck,
    sides: tuple[Side, Side],
    request: dict[str, Any],
) -> list[Assertion]:
    """Each expected key (plain, ``$.path`` or ``$.^regex$``) of a request or response body."""
    if not isinstance(expected, Mapping) or not expected:
        return []
    if actual is None:
        return [
            _assertion(
                f"network_event.{where}",
                "missing_or_null",
                expected,
                {"value": None, "request": request},
                f"the request has no {where.replace('_', ' ')} that could be read (form or JSON object)",
            )
        ]
    if where == "post_data" and check.ignored_post_patterns:
        actual = {k: v for k, v in actual.items() if not any(_search(p, k, 0) for p in check.ignored_post_patterns)}
    picked = {str(key): lookup(actual, str(key)) for key in expected}
    schema = _schema(check, where)
    try:
        want = normalize_object({str(k): v for k, v in expected.items()}, schema, sides[0], where)
    except Exception as exc:
        return [_assertion(f"network_event.{where}", "invalid_expected", expected, None, f"cannot read: {exc}")]
    got = normalize_object(picked, schema, sides[1], where)
    out: list[Assertion] = []
    for key, value in want.items():
        have = got.get(key)
        if value is None and have is None:
            continue
        if value is None or have is None or not _leaf_equal(value, have, sides[1].upstream):
            out.append(
                _assertion(
                    f"network_event.{where}.{key}",
                    "mismatch",
                    value,
                    {"value": to_display(have), "request": request},
                    f"{where}.{key}: expected {json.dumps(to_display(value), ensure_ascii=False)}, "
                    f"got {json.dumps(to_display(have), ensure_ascii=False)} (in {request_text(request)})",
                )
            )
    return out


def _schema(check: NetworkCheck, where: str) -> Mapping[str, Any]:
    """The schema a body's expected fields are read by (``post_data_schema`` for post data)."""
    return check.post_data_schema if where == "post_data" and check.post_data_schema else {"type": "object"}


def _leaf_equal(expected: Any, actual: Any, upstream: bool = False) -> bool:
    from replay_tui.verify.compare import compare, compare_upstream

    if upstream:
        return not compare_upstream(expected, actual, path="value")
    if isinstance(expected, TypedValue):
        return expected.matches(actual)
    return not compare(expected, actual, path="value")
