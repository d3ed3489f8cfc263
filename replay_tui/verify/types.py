"""Typed normalisers for deterministic, data-type-aware exact matching (WebArena-Verified style).

A task's ``results_schema`` names a data type for every value (``format`` wins over ``type``). Each
:class:`DataType` turns a raw value into a canonical one and says when two canonical values are
equal, with the upstream tolerances (currency ±0.10, duration max(3 min, 10 %), distance
max(10 m, 2 %), coordinates 1e-5°, location names fuzzy ≥ 80). Both sides go through the same
normaliser; the expected side may also hold *alternatives* (a list of 2+ values: any of them) and
``^...$`` regular expressions, which the actual side may not (see :class:`Side`).

Parsing is left to well-kept libraries, as upstream does: python-dateutil (dates, months),
price-parser (currency), pint (distance), pytimeparse2 (duration), rapidfuzz (location names),
word2number (numbers in words), unidecode (ASCII folding), geopy (coordinates), url-normalize (URLs).
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import math
import re
import unicodedata
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, ClassVar
from urllib.parse import parse_qs, unquote, urlsplit

import regex
from unidecode import unidecode


class NormalizationError(ValueError):
    """A raw value that cannot be read as the data type its schema names."""


class SchemaError(ValueError):
    """A results schema (or expected value) the evaluator cannot work with: a task-file problem."""


# --------------------------------------------------------------------------------------------------
# Patterns and the side being normalised
# --------------------------------------------------------------------------------------------------


def is_pattern(value: Any) -> bool:
    """True for a string written as a regular expression: it starts with ``^`` and ends with ``$``."""
    return isinstance(value, str) and len(value) >= 2 and value.startswith("^") and value.endswith("$")


@dataclass(frozen=True)
class Pattern:
    """An expected ``^...$`` string: matched case-insensitively against the whole actual value.

    ``ignore_case=False`` patterns are case-sensitive (upstream's URL and base64 patterns);
    ``dotall`` lets ``.`` match newlines (base64 content).
    """

    text: str
    ignore_case: bool = True
    dotall: bool = False

    @property
    def regex(self) -> regex.Pattern[str] | None:
        flags = (regex.IGNORECASE if self.ignore_case else 0) | (regex.DOTALL if self.dotall else 0)
        return _compile(self.text, flags)

    def fullmatch(self, value: str) -> bool:
        return self._run("fullmatch", value)

    def match(self, value: str) -> bool:
        return self._run("match", value)

    def _run(self, how: str, value: str) -> bool:
        compiled = self.regex
        if compiled is None:
            return False
        try:
            return bool(getattr(compiled, how)(value, timeout=REGEX_SECONDS))
        except TimeoutError:  # a pattern that backtracks without end matches nothing
            return False


REGEX_SECONDS = 0.5
"""How long one pattern may take on one value. Task files carry regular expressions and answers are
untrusted text: with ``re`` a pattern like ``^(a+)+$`` took 30 s on a 30-character answer. The
``regex`` module (``re``'s syntax, with a timeout) bounds that."""


@lru_cache(maxsize=512)
def _compile(text: str, flags: int = regex.IGNORECASE) -> regex.Pattern[str] | None:
    try:
        return regex.compile(text, flags)
    except (regex.error, ValueError, OverflowError, RecursionError):
        return None  # an invalid pattern then only equals its own text


@dataclass(frozen=True)
class Side:
    """What is being normalised, and how.

    ``expected`` values come from the task file: alternatives and patterns are allowed and any
    failure is an error of the task. ``actual`` values come from the agent: a list of 2+ values
    where one belongs is a set of alternatives that must all be acceptable (see
    :meth:`TypedValue.matches`), a ``^...$`` string is only text, and failures are kept raw
    (so that part fails). ``derender`` turns real site URLs in text back into ``__SITE__``
    placeholders; ``render`` does the reverse for URL values.

    ``upstream`` selects the official evaluator's reading (``--rules upstream``): the agent's side
    may hold alternatives and patterns exactly like the expected side, and each type reads values
    the way the official types do, quirks included (see :meth:`DataType.upstream_equal`).
    """

    expected: bool
    derender: Callable[[str], str] | None = None
    render: Callable[[str], str] | None = None
    upstream: bool = False

    @property
    def patterns(self) -> bool:
        """Whether ``^...$`` strings on this side are patterns (always upstream, else expected only)."""
        return self.expected or self.upstream


EXPECTED = Side(expected=True)
ACTUAL = Side(expected=False)


# --------------------------------------------------------------------------------------------------
# The common string pre-pass
# --------------------------------------------------------------------------------------------------

_MARKS = {0x2122: None, 0x00AE: None, 0x2120: None, 0x00A9: None}  # ™ ® ℠ ©
_HYPHENS = "\u002d\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u00ad"
_HYPHEN_NEAR_LETTER = re.compile(rf"(?<=[a-zA-Z])[{_HYPHENS}]|[{_HYPHENS}](?=[a-zA-Z])")
_SPACES = re.compile(r"\s+")
# ASCII's control characters (Unicode category Cc: U+0000-U+001F, U+007F): tab and newlines become spaces
_ASCII_CONTROL = {code: (" " if chr(code) in "\t\n\r" else None) for code in [*range(0x20), 0x7F]}


def string_prepass(text: str, side: Side = ACTUAL) -> str:
    """The pre-pass every string goes through before its type reads it (upstream's rules).

    URLs are derendered to placeholders (when site URLs are known), ™ ® ℠ © removed, NFKC applied,
    hyphens next to a letter become spaces (``123-4567`` keeps its hyphen), control characters are
    dropped (tab and newlines become spaces), the text is folded to ASCII, whitespace is trimmed and
    collapsed, and the result is casefolded. ``^...$`` patterns are left untouched.
    """
    if not text or is_pattern(text):
        return text
    if side.derender is not None and "http" in text:
        try:
            text = side.derender(text)
        except Exception:  # best effort, as upstream
            pass
    text = unicodedata.normalize("NFKC", text.translate(_MARKS))
    text = _HYPHEN_NEAR_LETTER.sub(" ", text)
    if text.isascii():  # the common case, at a fraction of the cost: unidecode leaves ASCII as it is
        text = text.translate(_ASCII_CONTROL)
    else:
        text = "".join(
            (" " if ch in "\t\n\r" else "") if unicodedata.category(ch).startswith("C") else ch for ch in text
        )
        text = unidecode(text).encode("ascii", "ignore").decode("ascii")
    return _SPACES.sub(" ", text.strip()).casefold()


_PUNCT_EDGES = "'\"`.,;:!?"


def strip_edge_punctuation(text: str) -> str:
    """Remove leading and trailing quotes and ``. , ; : ! ?`` (upstream's second-chance string match)."""
    return text.strip(_PUNCT_EDGES)


# --------------------------------------------------------------------------------------------------
# Typed values
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TypedValue:
    """A normalised value: its data type, one or more canonical alternatives, and the raw input."""

    dtype: DataType
    alternatives: tuple[Any, ...]
    raw: Any

    @property
    def canonical(self) -> Any:
        return self.alternatives[0]

    def matches(self, actual: Any, upstream: bool = False) -> bool:
        """True when ``actual`` has the same data type and is one of the expected alternatives.

        An agent may list alternatives too (pasting a task's expected answer passes), but then
        every value it lists must be acceptable, so hedging with a wrong guess never pays. With
        ``upstream`` the official rule applies instead: the two sides' alternatives need only
        overlap (symmetric), so a hedged ``[right, wrong]`` or an agent's ``"^.*$"`` passes.
        """
        if not isinstance(actual, TypedValue) or actual.dtype is not self.dtype:
            return False
        if upstream:
            return self.dtype.upstream_equal(self.alternatives, actual.alternatives)
        return all(any(self.dtype.equal(e, a) for e in self.alternatives) for a in actual.alternatives)

    def to_json(self) -> Any:
        values = [self.dtype.to_json(v) for v in self.alternatives]
        return values[0] if len(values) == 1 else {"any_of": values}

    def __repr__(self) -> str:
        return f"{self.dtype.name}({self.to_json()!r})"


class DataType:
    """One data type: how to read a raw value, when two canonical values are equal, how to show one."""

    name: ClassVar[str] = "?"
    tolerance: ClassVar[str] = "exact"

    def make(self, raw: Any, side: Side) -> TypedValue:
        """Normalise ``raw`` (a value, or on the expected side a list of 2+ alternatives)."""
        if side.upstream and isinstance(raw, (list, tuple)) and self.upstream_list_is_alternatives(raw):
            if len(raw) < 2:
                raise NormalizationError(f"alternatives need 2 or more values, got {len(raw)}")
            return TypedValue(self, tuple(self._one(v, side) for v in raw), raw)
        if self.is_alternatives(raw):
            if len(raw) < 2:
                raise NormalizationError(f"alternatives need 2 or more values, got {len(raw)}")
            return TypedValue(self, tuple(self._one(v, side) for v in raw), raw)
        return TypedValue(self, (self._one(raw, side),), raw)

    def is_alternatives(self, raw: Any) -> bool:
        return isinstance(raw, (list, tuple))

    def upstream_list_is_alternatives(self, raw: list[Any] | tuple[Any, ...]) -> bool:
        """Under upstream rules, whether a list is a set of alternatives (any list, but a coordinate pair)."""
        return True

    def _one(self, value: Any, side: Side) -> Any:
        if isinstance(value, (list, tuple)) and not side.upstream:
            raise NormalizationError(f"a list where one {self.name} value belongs")
        if isinstance(value, str) and not is_pattern(value):
            value = self.prepare_string(value, side)
        return self.normalize(value, side)

    def prepare_string(self, text: str, side: Side) -> str:
        return string_prepass(text, side)

    def normalize(self, value: Any, side: Side) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def equal(self, expected: Any, actual: Any) -> bool:
        return bool(expected == actual)

    def upstream_equal(self, expected: tuple[Any, ...], actual: tuple[Any, ...]) -> bool:
        """The official equality: some expected alternative equals some actual one (symmetric)."""
        return any(self.equal(e, a) for e in expected for a in actual)

    def to_json(self, canonical: Any) -> Any:
        return canonical


def _fail(value: Any, what: str, reason: str = "") -> NormalizationError:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return NormalizationError(f"cannot read {shown} as {what}" + (f": {reason}" if reason else ""))


def _as_text(value: Any) -> str:
    """A value as upstream's symmetric equality reads it: a pattern by its text."""
    return value.text if isinstance(value, Pattern) else str(value)


def _pattern_matches_either_way(expected: tuple[Any, ...], actual: tuple[Any, ...]) -> bool:
    """Upstream's symmetric equality: a pattern among either side's alternatives matches one of the
    other side's (as text)."""
    for patterns, texts in ((expected, actual), (actual, expected)):
        for pattern in patterns:
            if isinstance(pattern, Pattern) and any(pattern.fullmatch(_as_text(t)) for t in texts):
                return True
    return False


def _text(value: Any, what: str) -> str:
    """``value`` when it is non-empty text; else why not (the text types refuse other values and '')."""
    if not isinstance(value, str):
        raise _fail(value, what, f"expected text, got {type(value).__name__}")
    if not value:
        raise _fail(value, what, "empty")
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


class StringType(DataType):
    """Text: the pre-pass, then exact equality (or a second try without edge punctuation).

    No substring matching: ``"Band"`` is not ``"Quest Band"``. Expected ``^...$`` strings are
    patterns matched case-insensitively against the whole normalised actual text.
    """

    name = "string"

    def normalize(self, value: Any, side: Side) -> Any:
        if side.upstream and not value:  # upstream: every falsy value (0, false, {}) is ""
            return ""
        if value is None or value == "":
            return ""
        if is_pattern(value):
            return Pattern(value.strip()) if side.patterns else value.strip()
        if isinstance(value, Mapping) and not side.upstream:
            raise _fail(value, "text", "an object where text belongs")
        return str(value).lower().strip()

    def equal(self, expected: Any, actual: Any) -> bool:
        if isinstance(expected, Pattern):
            if not isinstance(actual, str):
                return False
            # the pattern's own text also counts as an answer (pasted from the task), quoted or not
            return expected.fullmatch(actual) or strip_edge_punctuation(actual) == strip_edge_punctuation(expected.text)
        if expected == actual:
            return True
        return strip_edge_punctuation(expected) == strip_edge_punctuation(actual)

    def upstream_equal(self, expected: tuple[Any, ...], actual: tuple[Any, ...]) -> bool:
        """A pattern on either side matches the other side's text; then equal text; then equal text
        without edge punctuation (patterns taking part as their text)."""
        if _pattern_matches_either_way(expected, actual):
            return True
        if {_as_text(e) for e in expected} & {_as_text(a) for a in actual}:
            return True
        stripped = {strip_edge_punctuation(_as_text(e)) for e in expected}
        return bool(stripped & {strip_edge_punctuation(_as_text(a)) for a in actual})

    def to_json(self, canonical: Any) -> Any:
        return canonical.text if isinstance(canonical, Pattern) else canonical


class NumberType(DataType):
    """A number (``number`` and ``integer``): float, exact equality, no tolerance.

    Strings lose commas and spaces (``"1,234"``); number words are read with word2number (``"two"``).
    """

    name = "number"

    def normalize(self, value: Any, side: Side) -> float:
        if isinstance(value, (bool, int, float, Decimal)):
            return float(value)
        if not isinstance(value, str) or not value:
            raise _fail(value, "a number")
        try:
            return float(value.replace(",", "").replace(" ", ""))
        except ValueError:
            pass
        from word2number import w2n

        try:
            return float(w2n.word_to_num(value))
        except Exception as exc:
            raise _fail(value, "a number") from exc

    def to_json(self, canonical: float) -> Any:
        return canonical if math.isfinite(canonical) else str(canonical)


class CurrencyType(DataType):
    """An amount of money: price-parser, a leading ``-`` makes it negative, tolerance ±0.10.

    The decimal separator is whichever of ``.`` and ``,`` occurs last (``"€68,51"`` is 68.51).
    """

    name = "currency"
    tolerance = "±0.10"
    TOLERANCE = Decimal("0.1")

    def normalize(self, value: Any, side: Side) -> Decimal:
        if side.upstream:
            return self._upstream(value)
        if _is_number(value):
            try:
                result = Decimal(str(value))
            except InvalidOperation as exc:
                raise _fail(value, "an amount") from exc
            if not result.is_finite():
                raise _fail(value, "an amount")
            return result
        if not isinstance(value, str) or not value:
            raise _fail(value, "an amount")
        from price_parser import Price

        negative = value.startswith("-")
        text = value.replace("-", "") if negative else value
        separator = "." if text.rfind(".") > text.rfind(",") else ","
        groups = re.findall(r",(\d+)", text)
        if "." not in text and groups and all(len(g) == 3 for g in groups):
            separator = "."  # "$1,000" and "1,234,567" group thousands (upstream reads "$1,000" as 1.0)
        price = Price.fromstring(text, decimal_separator=separator)
        if price.amount_float is None:
            raise _fail(value, "an amount", "no number found")
        result = Decimal(str(price.amount_float))
        return -result if negative else result

    def _upstream(self, value: Any) -> Decimal:
        """The official reading: the value's text through price-parser, no thousands-group guess
        (``"$1,000"`` is 1.0 there: the last separator is taken as the decimal one)."""
        if not value and not isinstance(value, (int, float, Decimal)):
            raise _fail(value, "an amount")
        text = str(value)
        negative = text.startswith("-")
        if negative:
            text = text.replace("-", "")
        separator = "." if text.rfind(".") > text.rfind(",") else ","
        from price_parser import Price

        price = Price.fromstring(text, decimal_separator=separator)
        if price.amount_float is None:
            raise _fail(value, "an amount", "no number found")
        result = Decimal(str(price.amount_float))
        return -result if negative else result

    def equal(self, expected: Decimal, actual: Decimal) -> bool:
        return abs(expected - actual) <= self.TOLERANCE

    def upstream_equal(self, expected: tuple[Any, ...], actual: tuple[Any, ...]) -> bool:
        """Upstream compares the first alternative of each side only."""
        return self.equal(expected[0], actual[0])

    def to_json(self, canonical: Decimal) -> Any:
        return float(canonical)


# Missing date parts come from a fixed default, so a verdict never depends on the day it runs.
_DATE_DEFAULT = dt.datetime(1900, 1, 1)


class DateType(DataType):
    """A calendar date: python-dateutil, month first, to ISO ``YYYY-MM-DD``; exact equality."""

    name = "date"

    def normalize(self, value: Any, side: Side) -> str:
        if not isinstance(value, str) or not value:
            raise _fail(value, "a date")
        from dateutil import parser

        text = re.sub(r",(?! )", ", ", value)
        # upstream fills missing parts from today (its verdict can change with the date it runs on)
        default = None if side.upstream else _DATE_DEFAULT
        try:
            parsed = parser.parse(text, dayfirst=False, default=default)
        except (ValueError, OverflowError, TypeError) as exc:
            raise _fail(value, "a date") from exc
        return parsed.date().isoformat()


class MonthType(DataType):
    """A month: 1-12 or a name or abbreviation (python-dateutil) to the English month name; exact."""

    name = "month"

    def normalize(self, value: Any, side: Side) -> str:
        if _is_number(value) or (side.upstream and isinstance(value, bool)):  # upstream: true is January
            if value != int(value):
                raise _fail(value, "a month", "not a whole number")
            return self._from_number(int(value), value)
        if not isinstance(value, str) or not value.strip():
            raise _fail(value, "a month")
        text = value.strip()
        if re.fullmatch(r"[+-]?\d+", text):
            return self._from_number(int(text), value)
        if side.upstream:
            try:
                number = int(text)  # Python's int(): also "1_2" and " 7 "
            except ValueError:
                pass
            else:
                return self._from_number(number, value)
        from dateutil import parser

        try:
            parsed = parser.parse(text, default=dt.datetime(2000, 1, 1))
        except (ValueError, OverflowError, TypeError) as exc:
            raise _fail(value, "a month") from exc
        return calendar.month_name[parsed.month]

    @staticmethod
    def _from_number(number: int, value: Any) -> str:
        if not 1 <= number <= 12:
            raise _fail(value, "a month", "out of range 1-12")
        return calendar.month_name[number]


class DurationType(DataType):
    """A duration: pytimeparse2 to seconds; equal within max(3 minutes, 10 % of the larger).

    ``"1:35 hours"`` reads as 1 h 35 min; a bare number (no unit) is rejected.
    """

    name = "duration"
    tolerance = "max(180 s, 10%)"

    def prepare_string(self, text: str, side: Side) -> str:
        return re.sub(r"(\d+):(\d+)\s*hours?", r"\1h\2m", string_prepass(text, side))

    def normalize(self, value: Any, side: Side) -> float:
        if isinstance(value, dt.timedelta):
            return value.total_seconds()
        if value is None or value == "" or isinstance(value, (bool, Mapping)):
            raise _fail(value, "a duration")
        text = str(value)
        try:
            float(text)
        except ValueError:
            pass
        else:
            raise _fail(value, "a duration", "a number without a unit")
        from pytimeparse2 import parse

        try:
            seconds = parse(text)
        except Exception as exc:
            raise _fail(value, "a duration") from exc
        if isinstance(seconds, dt.timedelta):
            return seconds.total_seconds()
        if seconds is None:
            raise _fail(value, "a duration")
        return float(seconds)

    def equal(self, expected: float, actual: float) -> bool:
        return abs(expected - actual) <= max(180.0, 0.10 * max(expected, actual))

    def to_json(self, canonical: float) -> Any:
        return str(dt.timedelta(seconds=canonical))


@lru_cache(maxsize=1)
def _units() -> Any:
    import pint

    return pint.UnitRegistry()


# pint evaluates arithmetic ("2**10 km"); agent text only ever needs "<number> <unit>".
_UNSAFE_DISTANCE = re.compile(r"[*^/()\[\]{}=<>!@#$%&|\\]")
# Upstream hands any text to pint. Under upstream rules only powers that could run for minutes are
# refused: more than one power operator, or an exponent of more than three digits.
_POWER = re.compile(r"(\*\*|\^)\s*[-+]?\s*(\d*)")


def _unsafe_power(text: str) -> bool:
    powers = _POWER.findall(text)
    return len(powers) > 1 or any(len(digits) > 3 or not digits for _, digits in powers)


class DistanceType(DataType):
    """A distance: pint to metres (``"110k"`` is 110 km); equal within max(10 m, 2 % of the larger).

    A bare number (no unit) is rejected.
    """

    name = "distance"
    tolerance = "max(10 m, 2%)"

    def normalize(self, value: Any, side: Side) -> Decimal:
        if value is None or value == "" or isinstance(value, (bool, Mapping)):
            raise _fail(value, "a distance")
        text = re.sub(r"(\d+(?:\.\d+)?)\s*k(?=\s|$)", r"\1 km", str(value), flags=re.IGNORECASE)
        try:
            float(text)
        except ValueError:
            pass
        else:
            raise _fail(value, "a distance", "a number without a unit")
        unsafe = _unsafe_power(text) if side.upstream else bool(_UNSAFE_DISTANCE.search(text))
        if len(text) > (400 if side.upstream else 80) or unsafe:
            raise _fail(value, "a distance", "not of the form <number> <unit>")
        units = _units()
        try:
            quantity = units.parse_expression(text)
            metres = quantity.to(units.meter).magnitude
            return Decimal(str(metres))
        except Exception as exc:
            raise _fail(value, "a distance") from exc

    def equal(self, expected: Decimal, actual: Decimal) -> bool:
        return abs(expected - actual) <= max(Decimal(10), Decimal("0.02") * max(expected, actual))

    def to_json(self, canonical: Decimal) -> Any:
        return float(canonical)


_TRUE = frozenset({"true", "yes", "y", "1", "t", "on"})
_FALSE = frozenset({"false", "no", "n", "0", "f", "off"})


class BooleanType(DataType):
    """A truth value: booleans, numbers (nonzero is true), true/yes/y/1/t/on, false/no/n/0/f/off."""

    name = "boolean"

    def normalize(self, value: Any, side: Side) -> bool:
        if isinstance(value, bool):
            return value
        if _is_number(value):
            return bool(value)
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _TRUE:
                return True
            if word in _FALSE:
                return False
        raise _fail(value, "a boolean")


_EMPTY_WORDS = frozenset({"n/a", "na", "nan", "null", "none"})


class NullType(DataType):
    """An explicit "no value": None, "", [], {}, n/a, na, nan, null, none. Numeric 0 is not empty."""

    name = "null"

    def is_alternatives(self, raw: Any) -> bool:
        return isinstance(raw, (list, tuple)) and len(raw) > 0

    def prepare_string(self, text: str, side: Side) -> str:
        return re.sub(r"\s*/\s*", "/", _SPACES.sub(" ", text.strip().lower()))

    def _one(self, value: Any, side: Side) -> Any:
        if isinstance(value, str):
            value = self.prepare_string(value, side)
        return self.normalize(value, side)

    def normalize(self, value: Any, side: Side) -> None:
        if _is_number(value) or isinstance(value, bool):
            raise _fail(value, "an empty value", "a number is a value")
        if not value or (isinstance(value, str) and value in _EMPTY_WORDS):
            return None
        raise _fail(value, "an empty value")


# Upstream's fuzzy matcher (thefuzz) first drops the Latin-1 range (U+0080..U+00FF) from both texts.
_LATIN1 = {code: None for code in range(0x80, 0x100)}


class LocationNameType(DataType):
    """A place name: lowercase and trim; equal when token_sort_ratio ≥ 80 for some pair.

    The score is thefuzz's (upstream's): Latin-1 letters are dropped, then rapidfuzz's default
    processing, ``token_sort_ratio``, rounded half to even.
    """

    name = "location-name"
    tolerance = "token_sort_ratio >= 80"
    THRESHOLD = 80

    def normalize(self, value: Any, side: Side) -> str:
        if value is None or (isinstance(value, Mapping) and not side.upstream):
            raise _fail(value, "a place name")
        if side.upstream and not value:
            return ""
        return str(value).lower().strip() if value != "" else ""

    def equal(self, expected: str, actual: str) -> bool:
        if not expected or not actual:
            return expected == actual
        return fuzzy_score(expected, actual) >= self.THRESHOLD


def fuzzy_score(first: str, second: str) -> int:
    """thefuzz's ``token_sort_ratio`` (Latin-1 dropped, default processing, rounded half to even)."""
    from rapidfuzz import fuzz, utils

    a = utils.default_process(first.translate(_LATIN1))
    b = utils.default_process(second.translate(_LATIN1))
    return round(fuzz.token_sort_ratio(a, b))


class CoordinatesType(DataType):
    """A latitude/longitude pair (geopy): a dict, a ``[lat, lon]`` pair or a string; each axis ±1e-5°.

    A 2-item list of numbers or strings is one pair, not two alternatives.
    """

    name = "coordinates"
    tolerance = "±1e-5 deg per axis"
    TOLERANCE = 1e-5

    def is_alternatives(self, raw: Any) -> bool:
        if not isinstance(raw, (list, tuple)):
            return False
        return not (len(raw) == 2 and all(isinstance(v, (int, float, str)) for v in raw))

    def upstream_list_is_alternatives(self, raw: list[Any] | tuple[Any, ...]) -> bool:
        return self.is_alternatives(raw)

    def make(self, raw: Any, side: Side) -> TypedValue:
        """A 2-item list of scalars is a pair; upstream falls back to reading it as two alternatives
        when the pair does not parse (``["40.4, -79.9", "40.4, -79.9"]``)."""
        if side.upstream and isinstance(raw, (list, tuple)) and not self.is_alternatives(raw):
            try:
                return TypedValue(self, (self._one(raw, side),), raw)
            except NormalizationError:
                return TypedValue(self, tuple(self._one(v, side) for v in raw), raw)
        return super().make(raw, side)

    def _one(self, value: Any, side: Side) -> Any:
        if side.upstream:  # upstream casefolds first, so "40.7N 74.0W" (read as "40.7n 74.0w") fails there
            return super()._one(value, side)
        # The pre-pass would casefold "40.7N 74.0W" and turn "°" into "deg", which geopy then rejects.
        if isinstance(value, str):
            value = unicodedata.normalize("NFKC", value).strip()
        return self.normalize(value, side)

    def normalize(self, value: Any, side: Side) -> tuple[float, float]:
        from geopy import Point

        if side.upstream and not value:
            raise _fail(value, "coordinates")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                point = self._point(Point, value, retry_upper=not side.upstream)
        except NormalizationError:
            raise
        except (ValueError, TypeError, AttributeError) as exc:
            raise _fail(value, "coordinates") from exc
        if not -90.0 <= point.latitude <= 90.0:
            raise _fail(value, "coordinates", "latitude out of range")
        return (float(point.latitude), float(point.longitude))

    @staticmethod
    def _point(point_class: Any, value: Any, retry_upper: bool = True) -> Any:
        if isinstance(value, Mapping):
            lat_key = _coordinate_key(value, "latitude")
            lon_key = _coordinate_key(value, "longitude", extra=("lng",))
            if lat_key is None or lon_key is None:
                raise _fail(value, "coordinates", "needs latitude and longitude keys")
            return point_class(latitude=value[lat_key], longitude=value[lon_key])
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return point_class(latitude=value[0], longitude=value[1])
        if isinstance(value, str) and value:
            try:
                return point_class(value)
            except ValueError:
                if not retry_upper:
                    raise
                return point_class(value.upper())
        raise _fail(value, "coordinates")

    def equal(self, expected: tuple[float, float], actual: tuple[float, float]) -> bool:
        return all(abs(e - a) <= self.TOLERANCE for e, a in zip(expected, actual, strict=True))

    def upstream_equal(self, expected: tuple[Any, ...], actual: tuple[Any, ...]) -> bool:
        """Upstream compares the first alternative of each side only."""
        return self.equal(expected[0], actual[0])

    def to_json(self, canonical: tuple[float, float]) -> Any:
        return {"latitude": canonical[0], "longitude": canonical[1]}


def _coordinate_key(value: Mapping[Any, Any], word: str, extra: tuple[str, ...] = ()) -> Any:
    for key in value:
        if isinstance(key, str):
            low = key.lower()
            if (len(low) >= 2 and word.startswith(low)) or low in extra:
                return key
    return None


@dataclass(frozen=True)
class UrlValue:
    """A normalised URL: the base (scheme, host, path, fragment) and the query as a sorted multimap."""

    base: str
    query: tuple[tuple[str, tuple[str, ...]], ...] = ()
    pattern: bool = False

    def first_values(self) -> dict[str, str]:
        return {key: (values[0] if values else "") for key, values in self.query}


_PLACEHOLDER_URL = re.compile(r"^(__[A-Z0-9_]+__)(.*)$", re.DOTALL)


def _url_normalize(value: str) -> str | None:
    """url-normalize's reading of ``value``, remembered for URLs of ordinary length: a trace's URLs
    are read again for every network check they are compared with, and url-normalize (IDNA on the
    host) is most of a check's time."""
    return _url_normalize_remembered(value) if len(value) <= 4096 else _url_normalize_once(value)


def _url_normalize_once(value: str) -> str | None:
    from url_normalize import url_normalize

    return url_normalize(value)


_url_normalize_remembered = lru_cache(maxsize=4096)(_url_normalize_once)


class UrlType(DataType):
    """A URL: url-normalize, host and scheme lowercased, default ports and trailing ``/`` dropped,
    real site hosts back to ``__SITE__`` placeholders, the query as a sorted multimap of lowercased
    values. SSH clone URLs become ``user@__SSH_HOST__:path``. Bases compare case-insensitively (or
    by an expected ``^...$`` pattern); only the first value of each query key is compared, and a
    missing key equals an empty one.
    """

    name = "url"

    def prepare_string(self, text: str, side: Side) -> str:
        return text.strip()

    def normalize(self, value: Any, side: Side) -> UrlValue:
        if not isinstance(value, str) or not value.strip():
            raise _fail(value, "a URL")
        value = value.strip()
        if is_pattern(value):
            return UrlValue(base=value.rstrip("/"), pattern=side.patterns)
        value = value.rstrip("/")
        if value.startswith("__") and side.render is not None:
            value = side.render(value)
        low = value.lower()
        if low.startswith("ssh://") or (low.startswith("git@") and ":" in value and "://" not in value):
            return _ssh_url(value)
        placeholder = _PLACEHOLDER_URL.match(value)
        if side.upstream and side.derender is None:
            # upstream derenders every http URL against the configured sites and fails without them
            raise _fail(value, "a URL", "no site URLs configured for this task (upstream needs them for URLs)")
        try:
            if placeholder:
                parts = urlsplit("http://placeholder.invalid" + placeholder.group(2))
                base = placeholder.group(1) + parts.path
            else:
                normalized = _url_normalize(value)
                if not normalized:
                    raise _fail(value, "a URL")
                if side.derender is not None:
                    normalized = side.derender(normalized)
                parts = urlsplit(normalized)
                netloc = parts.netloc.lower()
                if (parts.scheme == "http" and parts.port == 80) or (parts.scheme == "https" and parts.port == 443):
                    netloc = (parts.hostname or netloc).lower()
                base = f"{parts.scheme.lower()}://{netloc}{parts.path}" if netloc else parts.path
        except NormalizationError:
            raise
        except (ValueError, TypeError) as exc:
            raise _fail(value, "a URL") from exc
        if len(base) > 1 and not side.upstream:  # upstream strips "/" off the whole URL only: "a/?q=1" keeps it
            base = base.rstrip("/")
        if parts.fragment:
            base += "#" + parts.fragment
        query: dict[str, list[str]] = {}
        for key, values in parse_qs(parts.query, keep_blank_values=True).items():
            query.setdefault(unquote(key), []).extend(unquote(v).lower().strip() for v in values)
        return UrlValue(base=base, query=tuple(sorted((k, tuple(sorted(v))) for k, v in query.items())))

    def equal(self, expected: UrlValue, actual: UrlValue) -> bool:
        if expected.pattern:
            if not pattern_matches_base(expected.base, actual.base):
                return False
        elif expected.base.lower().rstrip("/") != actual.base.lower().rstrip("/"):
            return False
        want, got = expected.first_values(), actual.first_values()
        for key in sorted(set(want) | set(got)):
            w, g = want.get(key, ""), got.get(key, "")
            if is_pattern(w):
                if not Pattern(w).match(g):
                    return False
            elif w != g:
                return False
        return True

    def upstream_equal(self, expected: tuple[Any, ...], actual: tuple[Any, ...]) -> bool:
        """Some pair whose bases match (a pattern on either side, matched case-sensitively from the
        start; else equal ignoring case and a trailing ``/``) and whose first query values are equal
        (an expected ``^...$`` value matched case-sensitively)."""
        return any(_upstream_base(e, a) and _upstream_query(e, a) for e in expected for a in actual)

    def to_json(self, canonical: UrlValue) -> Any:
        if not canonical.query:
            return canonical.base
        return {"base_url": canonical.base, "query_params": {k: list(v) for k, v in canonical.query}}


def pattern_matches_base(pattern: str, base: str) -> bool:
    """Whether a ``^...$`` URL pattern matches a normalised base, with or without the trailing ``/``
    normalisation removed (``^.../render/.*$`` matches a request to ``.../render/?namespace=...``)."""
    compiled = Pattern(pattern)
    return bool(compiled.match(base) or compiled.match(base + "/"))


def _upstream_base(one: UrlValue, other: UrlValue) -> bool:
    if one.pattern and Pattern(one.base, ignore_case=False).match(other.base):
        return True
    if other.pattern and Pattern(other.base, ignore_case=False).match(one.base):
        return True
    if one.pattern or other.pattern:
        return False
    return one.base.lower().rstrip("/") == other.base.lower().rstrip("/")


def _upstream_query(expected: UrlValue, actual: UrlValue) -> bool:
    want, got = expected.first_values(), actual.first_values()
    for key in set(want) | set(got):
        w, g = want.get(key, ""), got.get(key, "")
        if is_pattern(w):
            if not Pattern(w, ignore_case=False).match(g):
                return False
        elif w != g:
            return False
    return True


def _ssh_url(value: str) -> UrlValue:
    if value.lower().startswith("ssh://"):
        parts = urlsplit(value)
        user = parts.netloc.split("@", 1)[0].lower() if "@" in parts.netloc else "git"
        path = parts.path.lstrip("/").lower()
    else:
        user, host_path = value.split("@", 1)
        path = re.sub(r"^\d+/", "", host_path.split(":", 1)[1].lstrip("/")).lower()  # "host:2222/path": a port
        user = user.lower()
    return UrlValue(base=f"{user}@__SSH_HOST__:{path}")


class StringListType(DataType):
    """A comma-separated list of texts: split on commas, trimmed, empties dropped, sorted; exact."""

    name = "string_list"

    def normalize(self, value: Any, side: Side) -> tuple[str, ...]:
        if side.upstream and value and not isinstance(value, str):
            value = str(value)  # upstream reads any value's text
        if not isinstance(value, str):
            raise _fail(value, "a comma-separated list")
        parts = tuple(sorted(part.strip() for part in value.split(",") if part.strip()))
        if side.upstream and not parts:
            raise _fail(value, "a comma-separated list", "no items")
        return parts

    def to_json(self, canonical: tuple[str, ...]) -> Any:
        return list(canonical)


class JsonType(DataType):
    """A JSON document given as text: the string pre-pass (so it is casefolded and its whitespace
    collapsed, as upstream does), parsed, then dumped compactly with sorted keys; exact.

    Only text is accepted (upstream rejects an already-parsed object or list); empty text is refused.
    """

    name = "json"

    def normalize(self, value: Any, side: Side) -> str:
        value = _text(value, "JSON text")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as exc:
            raise _fail(value, "JSON") from exc
        try:
            return json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise _fail(value, "JSON") from exc


_MD_TRAILING = re.compile(r"[ \t]+$", re.MULTILINE)
_MD_BLANK_RUNS = re.compile(r"\n{3,}")
_MD_HEADER = re.compile(r"^(\s*)(#{1,6})[ \t]+", re.MULTILINE)
_MD_STAR_PLUS = re.compile(r"^(\s*)[*+][ \t]+", re.MULTILINE)
_MD_DASH_INDENT = re.compile(r"^[ \t]+-", re.MULTILINE)
_MD_SPLIT_LINK = re.compile(r"\[([^\]]*?)\n\s*([^\]]*?)\](\([^)]+\))")
_MD_LINK_TEXT = re.compile(r"\[([^\]]+)\]")
_MD_PARENS = re.compile(r"\(\s*([^)]+?)\s*\)")


class MarkdownType(DataType):
    """Markdown text, read as upstream reads it; exact (case and accents kept).

    Outer whitespace is trimmed; newlines unified; trailing spaces and runs of blank lines removed;
    ``##   Header`` becomes ``## Header``; ``*``/``+`` list markers become ``-`` and any indentation
    before a ``-`` becomes two spaces; a link text broken over lines is rejoined and its whitespace
    collapsed; ``( url )`` is trimmed to ``(url)``. Non-text and empty markdown are refused.
    """

    name = "markdown"

    def prepare_string(self, text: str, side: Side) -> str:
        return text.strip()

    def normalize(self, value: Any, side: Side) -> str:
        value = _text(value, "markdown text")
        text = value.replace("\r\n", "\n").replace("\r", "\n")
        text = _MD_TRAILING.sub("", text)
        text = _MD_BLANK_RUNS.sub("\n\n", text)
        text = _MD_HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)} ", text)
        text = _MD_STAR_PLUS.sub(lambda m: f"{m.group(1)}- ", text)
        text = _MD_DASH_INDENT.sub("  -", text)
        text = _MD_SPLIT_LINK.sub(lambda m: f"[{m.group(1)} {m.group(2)}]{m.group(3)}", text)
        text = _MD_LINK_TEXT.sub(lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
        text = _MD_PARENS.sub(lambda m: f"({m.group(1)})", text)
        return text.strip()


class Base64Type(DataType):
    """Base64 content (e.g. a file body a GitLab request carries): decoded as UTF-8, line endings
    unified, trimmed; case-sensitive. An expected ``^...$`` pattern matches the decoded text
    (case-sensitive, ``.`` matching newlines)."""

    name = "base64"

    def prepare_string(self, text: str, side: Side) -> str:
        return text.strip()

    def normalize(self, value: Any, side: Side) -> Any:
        value = _text(value, "base64 text")
        if is_pattern(value) and side.patterns:
            return Pattern(value.strip(), ignore_case=False, dotall=True)
        import base64
        import binascii

        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, ValueError) as exc:
            raise _fail(value, "base64 text") from exc
        return decoded.replace("\r\n", "\n").replace("\r", "\n").strip()

    def equal(self, expected: Any, actual: Any) -> bool:
        if isinstance(expected, Pattern):
            return isinstance(actual, str) and (expected.fullmatch(actual) or actual == expected.text)
        return bool(expected == actual)

    def upstream_equal(self, expected: tuple[Any, ...], actual: tuple[Any, ...]) -> bool:
        if _pattern_matches_either_way(expected, actual):
            return True
        return bool({_as_text(e) for e in expected} & {_as_text(a) for a in actual})

    def to_json(self, canonical: Any) -> Any:
        return canonical.text if isinstance(canonical, Pattern) else canonical


class FullAddressType(DataType):
    """A US postal address, read as upstream reads it: an object with ``city``, ``state``, ``street``,
    ``house_number`` and ``postcode`` (``name`` optional); the street gets USPS Pub. 28
    abbreviations (scourgify: ``North Main Street`` -> ``n main st``), the state its 2-letter code
    (``California`` -> ``CA``), the ZIP 5 or 5-4 digits. Equal on those five fields; ``name`` is not
    compared. Needs the ``address`` extra (``usaddress-scourgify``, ``us``), imported on first use.
    """

    name = "full_address"
    REQUIRED = ("city", "state", "street", "house_number", "postcode")

    def normalize(self, value: Any, side: Side) -> tuple[str, ...]:
        if not value:
            raise _fail(value, "an address", "empty")
        if not isinstance(value, Mapping):
            raise _fail(value, "an address", f"expected an object, got {type(value).__name__}")
        missing = [key for key in self.REQUIRED if key not in value]
        if missing:
            raise _fail(value, "an address", "missing " + ", ".join(missing))
        scourgify, us = self._libraries()
        try:
            record = scourgify.normalize_address_record(
                {
                    "address_line_1": f"{value['house_number']} {value['street']}".strip(),
                    "city": value["city"],
                    "state": value["state"],
                    "postal_code": value["postcode"],
                }
            )
            parts = str(record.get("address_line_1") or "").strip().split(maxsplit=1)
            if len(parts) < 2:
                raise ValueError("no house number and street")
            state = str(record.get("state", value["state"]) or "").strip()
            found = us.states.lookup(state) if state else None
            if found is None:
                raise ValueError(f"unknown US state {state!r}")
            digits = re.sub(r"\D", "", str(record.get("postal_code", value["postcode"]) or ""))
            if len(digits) not in (5, 9):
                raise ValueError(f"a ZIP code has 5 or 9 digits, got {len(digits)}")
            name = value.get("name")
            if isinstance(name, (list, tuple)) and (len(name) < 2 or None in name):
                raise ValueError("name: alternatives need 2 or more values")
        except NormalizationError:
            raise
        except Exception as exc:  # scourgify raises its own error classes, usaddress a RepeatedLabelError
            raise _fail(value, "an address", str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc
        city = record.get("city", value["city"])
        fields = (
            _plain_text(city),
            found.abbr,
            _plain_text(parts[1]),
            _plain_text(parts[0]),
            digits if len(digits) == 5 else f"{digits[:5]}-{digits[5:]}",
        )
        if not all(fields):
            raise _fail(value, "an address", "a required field is empty")
        return fields

    @staticmethod
    def _libraries() -> tuple[Any, Any]:
        try:
            import scourgify
            import us
        except ImportError as exc:
            raise NormalizationError(
                f"the full_address type needs the address extra (pip install 'replay_tui[address]'): {exc}"
            ) from None
        return scourgify, us

    def upstream_equal(self, expected: tuple[Any, ...], actual: tuple[Any, ...]) -> bool:
        """Upstream compares the first alternative of each side only."""
        return self.equal(expected[0], actual[0])

    def to_json(self, canonical: tuple[str, ...]) -> Any:
        return dict(zip(self.REQUIRED, canonical, strict=True))


def _plain_text(value: Any) -> str:
    """Upstream's plain string reading of one address field (pre-pass, lowercase, trimmed)."""
    if not value:
        return ""
    text = string_prepass(value) if isinstance(value, str) else str(value)
    return text.lower().strip()


STRING = StringType()
NUMBER = NumberType()

REGISTRY: dict[str, DataType] = {
    "string": STRING,
    "number": NUMBER,
    "integer": NUMBER,
    "currency": CurrencyType(),
    "date": DateType(),
    "month": MonthType(),
    "duration": DurationType(),
    "distance": DistanceType(),
    "boolean": BooleanType(),
    "null": NullType(),
    "location-name": LocationNameType(),
    "coordinates": CoordinatesType(),
    "url": UrlType(),
    "string_list": StringListType(),
    "json": JsonType(),
    "markdown": MarkdownType(),
    "base64": Base64Type(),
    "full_address": FullAddressType(),
}
"""Schema name (a ``format`` or a ``type``) -> data type."""


def type_name(schema: Mapping[str, Any] | None) -> str:
    """The data type a leaf schema names: ``format`` wins over ``type``; no schema means ``string``."""
    if not schema:
        return "string"
    name = schema.get("format") or schema.get("type") or "string"
    return str(name)


def data_type(schema: Mapping[str, Any] | None) -> DataType:
    """The :class:`DataType` for a leaf schema; :class:`SchemaError` for an unknown name."""
    name = type_name(schema)
    try:
        return REGISTRY[name]
    except KeyError:
        raise SchemaError(f"unknown data type {name!r} in results schema") from None
