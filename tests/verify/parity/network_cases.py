"""Synthetic network traces for the dataset's network checks: for each check, HAR entries a browser
could have recorded (the request the check describes, rendered against made-up site URLs), and
variations that should and should not pass (status, method, path, a value, an extra parameter,
an earlier good request followed by a bad one, an empty trace).

A check whose request cannot be derived from its expectation (a URL pattern or key this module
cannot invent an example for) contributes only the variations that need no request of its kind.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

from replay_tui.verify.models import Task
from replay_tui.verify.types import is_pattern

SITE_URLS: dict[str, str] = {
    "shopping": "http://127.0.0.1:7770",
    "shopping_admin": "http://127.0.0.1:7780/admin",
    "reddit": "http://127.0.0.1:9999",
    "gitlab": "http://127.0.0.1:8023",
    "wikipedia": "http://127.0.0.1:8888",
    "map": "http://127.0.0.1:3000",
    "homepage": "http://127.0.0.1:4399",
}
ENVIRONMENTS = {site: {"urls": [url]} for site, url in SITE_URLS.items()}


class Unsupported(ValueError):
    """No example can be made for this part of an expectation."""


def render(text: str) -> str:
    """``__SITE__`` placeholders replaced by the made-up site URLs (the longest name first)."""
    for site in sorted(SITE_URLS, key=len, reverse=True):
        text = text.replace(f"__{site.upper()}__", SITE_URLS[site])
    return text


_REGEX_PIECES = [
    (r"\d+", "7"),
    (r"\d*", ""),
    (r"[0-9]+", "7"),
    (r"[^/]+", "x"),
    (r"[^/]*", ""),
    (r".+", "x"),
    (r".*", ""),
    (r"\s*", ""),
    (r"\s+", " "),
    (r"?", ""),
]


def example(pattern: str) -> str:
    """A text that ``^...$`` ``pattern`` fully matches (common constructs only), or Unsupported."""
    body = pattern[1:-1]
    text = body
    for piece, replacement in _REGEX_PIECES:
        text = text.replace(piece, replacement)
    text = re.sub(r"\(\?:([^()|]*)(?:\|[^()]*)?\)", r"\1", text)  # (?:a|b) -> a
    text = re.sub(r"\(([^()|]*)(?:\|[^()]*)?\)", r"\1", text)  # (a|b) -> a
    text = re.sub(r"\\(.)", r"\1", text)
    try:
        if re.fullmatch(render(body), render(text), re.IGNORECASE | re.DOTALL):
            return text
    except re.error:
        pass
    raise Unsupported(pattern)


def _value(raw: Any) -> Any:
    """One concrete value for an expected one: a pattern's example, an alternatives list's first."""
    if isinstance(raw, str) and is_pattern(raw):
        return example(raw)
    return raw


def _text(raw: Any) -> str:
    value = _value(raw)
    if isinstance(value, list):
        value = _value(value[0]) if value else ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


_SIMPLE_PATH = re.compile(r"^\$((?:\.[A-Za-z_][\w-]*|\[\d+\]|\['[^']+'\])+)$")
_FILTER_PATH = re.compile(r"^\$\['([^']+)'\]\[\?\(@\.(\w+) == (\d+)\)\]\.(\w+)$")


def _put(body: dict[str, Any], key: str, value: Any, as_array: bool) -> bool:
    """Put ``value`` where ``key`` (plain, ``$.path``, ``$.^regex$`` or a filter) reads it; whether
    the body must then be sent as JSON."""
    if key.startswith("$.^") or is_pattern(key):
        body[example(key[2:] if key.startswith("$.") else key)] = value
        return False
    filtered = _FILTER_PATH.match(key)
    if filtered:
        field, attribute, wanted, name = filtered.groups()
        values = value if isinstance(value, list) else [value]
        body[field] = json.dumps([{attribute: int(wanted), name: v} for v in values])
        return False
    simple = _SIMPLE_PATH.match(key)
    if not key.startswith("$"):
        body[key] = value
        return not isinstance(value, str)
    if simple is None:
        raise Unsupported(key)
    steps = re.findall(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]|\['([^']+)'\]", simple.group(1))
    node: Any = body
    for i, (name, index, quoted) in enumerate(steps):
        last = i == len(steps) - 1
        if index:
            if not isinstance(node, list):
                raise Unsupported(key)
            while len(node) <= int(index):
                node.append({})
            if last:
                node[int(index)] = value
            else:
                node = node[int(index)]
            continue
        child = name or quoted
        if not isinstance(node, dict):
            raise Unsupported(key)
        if last:
            node[child] = value
        else:
            nxt = steps[i + 1]
            node = node.setdefault(child, [] if nxt[1] else {})
    return True


def _body(fields: Mapping[str, Any], schema: Mapping[str, Any] | None) -> tuple[dict[str, Any], bool]:
    properties = (schema or {}).get("properties") or {}
    body: dict[str, Any] = {}
    as_json = False
    for key, raw in fields.items():
        prop = properties.get(key) or {}
        is_array = prop.get("type") == "array"
        if is_array and isinstance(raw, list):
            value: Any = [_value(v) for v in raw]
        elif isinstance(raw, list):
            value = _value(raw[0]) if raw else []
        else:
            value = _value(raw)
        as_json |= _put(body, str(key), value, is_array)
    return body, as_json


def entry(
    method: str,
    url: str,
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    post: tuple[dict[str, Any], bool] | None = None,
    response: dict[str, Any] | None = None,
    cookies: Mapping[str, str] | None = None,
    navigation: bool = False,
) -> dict[str, Any]:
    """One HAR entry."""
    sent = {"Accept": "text/html,application/xhtml+xml" if navigation else "application/json"}
    sent |= dict(headers or {})
    request: dict[str, Any] = {
        "method": method,
        "url": url,
        "headers": [{"name": k, "value": v} for k, v in sent.items()],
    }
    if post is not None:
        body, as_json = post
        if as_json:
            request["postData"] = {"mimeType": "application/json", "text": json.dumps(body)}
        else:
            text = urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()})
            request["postData"] = {"mimeType": "application/x-www-form-urlencoded", "text": text}
    return {
        "request": request,
        "response": {
            "status": status,
            "headers": [],
            "cookies": [{"name": k, "value": v} for k, v in (cookies or {}).items()],
            "content": {"mimeType": "application/json", "text": json.dumps(response or {})},
            "redirectURL": "",
        },
    }


def request_for(check: Mapping[str, Any], navigate: bool) -> dict[str, Any]:
    """The HAR entry of the request ``check`` expects (Unsupported when it cannot be derived)."""
    want = check["expected"]
    raw_url = want["url"]
    url = _text(raw_url[0] if isinstance(raw_url, list) else raw_url)
    url = render(url)
    query = want.get("query_params")
    if query:
        pairs = [(k, _text(v if not isinstance(v, list) else (v[0] if v else ""))) for k, v in query.items()]
        url = url.split("?", 1)[0] + "?" + urlencode(pairs)
    method = str(want.get("http_method") or "GET").upper()
    headers = {str(k): render(_text(v)) for k, v in (want.get("headers") or {}).items()}
    post = _body(want["post_data"], check.get("post_data_schema")) if want.get("post_data") else None
    response = _body(want["response_content"], None)[0] if want.get("response_content") else None
    cookies = {str(k): _text(v) for k, v in (want.get("response_cookies") or {}).items()}
    return entry(
        method,
        url,
        status=int(want.get("response_status", 200) or 200),
        headers=headers,
        post=post,
        response=response,
        cookies=cookies,
        navigation=navigate and method == "GET",
    )


def _first_value_changed(good: dict[str, Any]) -> dict[str, Any] | None:
    changed = copy.deepcopy(good)
    post = changed["request"].get("postData")
    if post:
        if post["mimeType"] == "application/json":
            body = json.loads(post["text"])
            key = next(iter(body))
            body[key] = "zzz"
            post["text"] = json.dumps(body)
        else:
            post["text"] = re.sub(r"=[^&]*", "=zzz", post["text"], count=1)
        return changed
    if "?" in changed["request"]["url"]:
        changed["request"]["url"] = re.sub(r"=[^&]*", "=zzz", changed["request"]["url"], count=1)
        return changed
    return None


def _with_base(entries: list[dict[str, Any]], change: Callable[[str], str]) -> list[dict[str, Any]]:
    """Copies of ``entries`` whose request URLs have ``change`` applied to the part before the query."""
    changed = copy.deepcopy(entries)
    for e in changed:
        base, _, query = e["request"]["url"].partition("?")
        e["request"]["url"] = change(base) + ("?" + query if query else "")
    return changed


def _path_upper(base: str) -> str:
    head, _, path = base.partition("//")
    host, _, rest = path.partition("/")
    return f"{head}//{host}/{rest.upper()}"


UNRELATED = entry("GET", SITE_URLS["gitlab"] + "/static/app.css")
ELSEWHERE = entry("GET", SITE_URLS["shopping"] + "/somewhere/else", navigation=True)


def trace_cases(task: Task) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(variation name, HAR entries) for every network check of ``task`` together."""
    checks = [c for c in task.eval if c.get("evaluator") == "NetworkEventEvaluator"]
    if not checks:
        return
    navigate = task.agent_response_config.task_type.value.lower() == "navigate"
    yield "empty", [UNRELATED, ELSEWHERE]
    goods = []
    for check in checks:
        try:
            goods.append(request_for(check, navigate))
        except (Unsupported, KeyError, TypeError, ValueError):
            continue
    if not goods:
        return
    yield "exact", [UNRELATED, *goods]
    yield "exact_then_noise", [*goods, UNRELATED]
    bad_status = copy.deepcopy(goods)
    for e in bad_status:
        e["response"]["status"] = 500 if e["response"]["status"] != 500 else 200
    yield "status_off", bad_status
    yield "good_then_bad_status", [*goods, *bad_status]
    bad_method = copy.deepcopy(goods)
    for e in bad_method:
        e["request"]["method"] = "GET" if e["request"]["method"] != "GET" else "POST"
    yield "method_off", bad_method
    lower_method = copy.deepcopy(goods)
    for e in lower_method:
        e["request"]["method"] = e["request"]["method"].lower()
    yield "method_lowercase", lower_method
    yield "path_off", _with_base(goods, lambda base: base.rstrip("/") + "/zzz")
    yield "path_uppercase", _with_base(goods, _path_upper)
    extra = copy.deepcopy(goods)
    for e in extra:
        url = e["request"]["url"]
        e["request"]["url"] = url + ("&" if "?" in url else "?") + "zzz=1"
    yield "extra_query", extra
    yield "trailing_slash", _with_base(goods, lambda base: base.rstrip("/") + "/")
    changed = [_first_value_changed(e) for e in goods]
    if any(c is not None for c in changed):
        yield "value_off", [c if c is not None else g for c, g in zip(changed, goods, strict=True)]
    no_body = copy.deepcopy(goods)
    for e in no_body:
        e["request"].pop("postData", None)
        e["response"]["content"] = {"mimeType": "text/html", "text": "<html></html>"}
    yield "no_bodies", no_body
    encoded = copy.deepcopy(goods)
    for e in encoded:
        content = e["response"]["content"]
        content["text"] = base64.b64encode(content["text"].encode()).decode()
        content["encoding"] = "base64"
    yield "response_base64", encoded
    other_json = copy.deepcopy(goods)
    for e in other_json:
        post = e["request"].get("postData")
        if post and post["mimeType"] == "application/json":
            post["mimeType"] = "application/vnd.api+json"
    yield "json_media_type", other_json
