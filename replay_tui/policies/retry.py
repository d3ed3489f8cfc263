"""When to ask an LLM server again: exponential backoff with full jitter, and the server's own
``Retry-After`` / ``retry-after-ms`` headers.

Without jitter, ``--jobs 64`` workers that hit one overloaded server at once all retry at the same
instants and overload it again; full jitter (a uniform wait between 0 and the exponential bound,
"Exponential Backoff and Jitter", AWS Architecture Blog 2015) spreads them. A server that says when
to come back is believed (a little later, never sooner, so its clients do not return in one burst).
"""

from __future__ import annotations

import datetime
import email.utils
import random
import time
from collections.abc import Mapping
from typing import Any

RETRY_AFTER_SPREAD = 0.1
"""A Retry-After wait is lengthened by up to this share, at random, so clients told the same time spread out."""


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Seconds before retry number ``attempt + 1``: uniform in ``[0, min(cap, base * 2**attempt)]``."""
    bound = min(cap, base * (2**attempt))
    return (rng or random).uniform(0.0, bound) if bound > 0 else 0.0


def retry_after_seconds(headers: Mapping[str, Any] | None, now: float | None = None) -> float | None:
    """What the server asks to wait, in seconds, from ``retry-after-ms`` (milliseconds) or
    ``Retry-After`` (delta-seconds or an HTTP-date; a date in the past is 0); None when neither is
    given or readable."""
    if headers is None:
        return None
    milliseconds = _header(headers, "retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds)
        except ValueError:
            value = -1.0
        if value >= 0 and value == value:  # not NaN
            return value / 1000.0
    text = _header(headers, "retry-after")
    if text is None:
        return None
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP-date is GMT; parsedate gives a naive time for "-0000"
            when = when.replace(tzinfo=datetime.UTC)
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if seconds >= 0 and seconds == seconds else None


def retry_delay(
    attempt: int, base: float, cap: float, retry_after: float | None, rng: random.Random | None = None
) -> float:
    """The wait before the next attempt: the server's ``retry_after`` (capped at ``cap``, spread by up
    to :data:`RETRY_AFTER_SPREAD`) when it gave one, else :func:`backoff_delay`."""
    if retry_after is not None and retry_after >= 0:
        wait = min(retry_after, cap)
        return wait * (1.0 + (rng or random).uniform(0.0, RETRY_AFTER_SPREAD))
    return backoff_delay(attempt, base, cap, rng)


def _header(headers: Mapping[str, Any], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # a plain dict with other capitalisation (httpx's Headers ignore case)
        value = next((v for k, v in headers.items() if str(k).lower() == name), None)
    return None if value is None else str(value)
