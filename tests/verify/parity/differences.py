"""The documented differences between ``--rules strict`` and the official evaluator.

Each entry has an id (also the first column of the README table "Differences from the official
evaluator"), and :func:`explain` names the entry that accounts for a strict/official disagreement
on a generated case, or None (an undocumented difference: the parity test fails on it).
"""

from __future__ import annotations

import re
from typing import Any

from replay_tui.verify.types import is_pattern

DIFFERENCES: dict[str, str] = {
    "agent-pattern": "an agent's ^...$ answer matches the expected value (symmetric regex)",
    "agent-alternatives": "an agent's list of alternatives passes when any one is right (hedging)",
    "task-319": "task 319 cannot be passed (its expected answer has no retrieved_data key)",
    "no-data-task-error": "data on a task whose results schema is {type: null} is an error, not a failure",
    "status-not-text": "a task_type or status that is not text (null, a number) is an error, not a failure",
    "fence-tag": "only ``` and ```json fences are read; ```JSON or ```python blocks are not",
    "greedy-lists": "unordered lists are matched greedily, so alternatives can make order matter",
    "circular-empty-lists": "two empty-list properties in one answer are an error (circular-reference check)",
    "currency-thousands": '"$1,000" is read as 1.0 (the comma taken as the decimal separator)',
    "first-alternative-only": "currency, coordinates and full_address compare only the first alternative of each side",
    "coordinates-hemisphere": '"40.7128 N, 74.0060 W" is refused (casefolded before geopy reads it)',
    "string-falsy": "0 and false given as text are read as the empty text",
    "month-boolean": "true is read as January",
    "string-list-non-text": "a number given as a comma-separated list is read as its text",
    "distance-arithmetic": 'pint arithmetic is read ("1/2 km", "2*250 m")',
    "null-empty-list": "[] given for an expected null is refused (alternatives need 2 or more values)",
    "urls-need-site-urls": "an http URL cannot be read without the site URLs (--site-url)",
    "date-default": "missing date parts are taken from the day the evaluator runs",
}

PATTERN_VARIANTS = {"status_pattern", "leaf_regex", "regex_items", "data_regex"}
HEDGE_VARIANTS = {"hedged", "leaf_hedged"}


def explain_task_case(variant: str, task_id: int, strict: str, official: str) -> str | None:
    """The documented difference behind a disagreement on one of the 812-task generated cases."""
    if task_id == 319 and (strict, official) == ("success", "failure"):
        return "task-319"
    if variant in PATTERN_VARIANTS and (strict, official) == ("failure", "success"):
        return "agent-pattern"
    if variant in HEDGE_VARIANTS and (strict, official) == ("failure", "success"):
        return "agent-alternatives"
    if variant in {"status_null", "status_number"} and (strict, official) == ("failure", "error"):
        return "status-not-text"
    if variant == "fenced_upper" and (strict, official) == ("success", "failure"):
        return "fence-tag"
    if variant in {"data_some", "data_zero", "data_regex"} and (strict, official) == ("failure", "error"):
        return "no-data-task-error"
    return None


_THOUSANDS = re.compile(r"\d,\d{3}(?!\d)")
_ARITHMETIC = re.compile(r"[*/()^]")
_HEMISPHERE = re.compile(r"\d\s*[NSEWnsew]\b")


def explain_typed_case(type_name: str, expected: Any, item: Any, strict: str, official: str) -> str | None:
    """The documented difference behind a disagreement on a one-value typed answer ``item``."""
    if isinstance(item, list):
        if len(item) >= 2:
            return "agent-alternatives"
        if type_name == "null" and (strict, official) == ("success", "failure"):
            return "null-empty-list"
        return None
    if is_pattern(item) and (strict, official) == ("failure", "success"):
        return "agent-pattern"
    if isinstance(expected, list) and type_name in ("currency", "coordinates", "full_address"):
        return "first-alternative-only"
    if type_name == "currency" and isinstance(item, str) and _THOUSANDS.search(item):
        return "currency-thousands"
    if type_name == "coordinates" and isinstance(item, str) and _HEMISPHERE.search(item):
        return "coordinates-hemisphere"
    if type_name == "distance" and isinstance(item, str) and _ARITHMETIC.search(item):
        return "distance-arithmetic"
    if type_name == "month" and isinstance(item, bool):
        return "month-boolean"
    if type_name == "string" and not isinstance(item, str) and not item:
        return "string-falsy"
    if type_name == "string_list" and not isinstance(item, str):
        return "string-list-non-text"
    return None


# Network checks (``--trace``): where ``--rules strict`` and the official evaluator disagree.
NETWORK_DIFFERENCES: dict[str, str] = {
    "url-pattern-trailing-slash": "a URL pattern ending in '/.*$' fails a request to that very '.../' URL",
    "site-url-case": "a site URL with a path (…/admin) is recognised only in its exact case",
    "bodies-upstream-cannot-read": "a body recorded base64-encoded or as JSON under another media type is not read",
}


def explain_network_case(variant: str, url: Any, strict: str, official: str) -> str | None:
    """The documented difference behind a strict/official disagreement on one network check whose
    expected URL is ``url``, on the synthetic trace ``variant``."""
    if (strict, official) != ("success", "failure"):
        return None
    if variant == "path_uppercase":
        return "site-url-case"
    if variant in ("response_base64", "json_media_type"):
        return "bodies-upstream-cannot-read"
    urls = url if isinstance(url, list) else [url]
    if any(is_pattern(u) for u in urls):
        return "url-pattern-trailing-slash"
    return None
