"""Typed normalisers: normalisation, equality and tolerance edges, per data type."""

from __future__ import annotations

import pytest

from replay_tui.verify.types import (
    ACTUAL,
    EXPECTED,
    REGISTRY,
    NormalizationError,
    SchemaError,
    data_type,
    string_prepass,
    type_name,
)
from tests.verify.conftest import actual, expected, same

# (data type, expected value, agent value, equal?)
ADDRESS = {
    "house_number": "123",
    "street": "North Main Street",
    "city": "San Francisco",
    "state": "California",
    "postcode": "94102-1234",
}

EQUALITY = [
    # string: pre-pass, exact, edge punctuation, no substring
    ("string", "Quest Lumaflex™ Band", "quest lumaflex band", True),
    ("string", "Quest Lumaflex™ Band", "QUEST LUMAFLEX® BAND", True),
    ("string", "Quest Lumaflex™ Band", "Band", False),
    ("string", "Band", "Quest Lumaflex Band", False),
    ("string", "Buffalo-Niagara", "buffalo niagara", True),
    ("string", "Buffalo–Niagara", "Buffalo Niagara", True),
    ("string", "123-4567", "123 4567", False),
    ("string", "Café", "cafe", True),
    ("string", "ﬁne", "fine", True),
    ("string", "a  b\tc\nd", "a b c d", True),
    ("string", "abc", "'abc.'", True),
    ("string", "abc", '"abc"!', True),
    ("string", "abc", "abcd", False),
    ("string", "5", 5, True),
    ("string", "0", 0, True),
    # number: float, exact, commas, words
    ("number", 2, "2.0", True),
    ("number", 2, 2.0, True),
    ("number", 2, 2.0001, False),
    ("number", 1234, "1,234", True),
    ("number", 10000, "10 000", True),
    ("number", 2, "two", True),
    ("number", 23, "twenty-three", True),
    ("number", 0, 0, True),
    ("number", 1, True, True),
    ("integer", 7, "7", True),
    # currency: ±0.10 inclusive
    ("currency", 36.39, "$36.39", True),
    ("currency", 68.51, "€68,51", True),
    ("currency", 1234.56, "$1,234.56", True),
    ("currency", 1234.56, "1.234,56 €", True),
    ("currency", 10.0, "10.10", True),
    ("currency", 10.0, "9.90", True),
    ("currency", 10.0, "10.11", False),
    ("currency", 10.0, "9.89", False),
    ("currency", -5, "-$5.00", True),
    ("currency", -5, "$5.00", False),
    ("currency", 36.39, "[36.39]", True),
    ("currency", 1000, "$1,000", True),
    ("currency", 1234567, "1,234,567", True),
    ("currency", 0, "Free", True),
    # date: month first, ISO
    ("date", "March 2, 2022", "2022-03-02", True),
    ("date", "March 2, 2022", "03/02/2022", True),
    ("date", "March 2, 2022", "March 2,2022", True),
    ("date", "March 2, 2022", "Mar 2nd 2022", True),
    ("date", "2023-01-16", "16/01/2023", True),
    ("date", "March 2, 2022", "2022-02-03", False),
    ("date", "May 23 2023", "23 May 2023", True),
    # month: numbers and names to the English name
    ("month", "May", "5", True),
    ("month", "May", "05", True),
    ("month", "May", 5, True),
    ("month", "May", 5.0, True),
    ("month", "January", "Jan", True),
    ("month", "January", "JANUARY", True),
    ("month", "September", "sept", True),
    ("month", "May", "June", False),
    # duration: max(180 s, 10 % of the larger), inclusive
    ("duration", "2min", "5min", True),
    ("duration", "2min", "5min1s", False),
    ("duration", "3h", "3h 20min", True),
    ("duration", "3h", "3h 21min", False),
    ("duration", "1hr 35min", "1:35 hours", True),
    ("duration", "1hr 35min", "95 minutes", True),
    ("duration", "01:33:00", "1h33m", True),
    ("duration", "16min", "00:16:00", True),
    ("duration", "5 hours, 34 minutes", "5h34m", True),
    # distance: max(10 m, 2 % of the larger), inclusive
    ("distance", "100 m", "110 m", True),
    ("distance", "100 m", "111m", False),
    ("distance", "914km", "932km", True),
    ("distance", "914km", "935 km", False),
    ("distance", "110km", "110k", True),
    ("distance", "1 mi", "1609m", True),
    ("distance", "1.4km", "1400 meters", True),
    # boolean
    ("boolean", True, "Yes", True),
    ("boolean", True, "TRUE", True),
    ("boolean", True, 1, True),
    ("boolean", False, "off", True),
    ("boolean", False, 0, True),
    ("boolean", True, "no", False),
    # null
    ("null", None, "N / A", True),
    ("null", None, "none", True),
    ("null", None, "", True),
    ("null", "n/a", None, True),
    # location-name: token_sort_ratio >= 80
    ("location-name", "DoubleTree by Hilton Hotel Pittsburgh Airport", "DoubleTree Hotel Pittsburgh Airport", True),
    ("location-name", "Carnegie Mellon University", "University Carnegie Mellon", True),
    ("location-name", "DoubleTree by Hilton Hotel Pittsburgh Airport", "Hilton Garden Inn Pittsburgh", False),
    ("location-name", "Giant Eagle", "giant eagle", True),
    # coordinates: ±1e-5 degrees per axis
    ("coordinates", {"latitude": "40.4424191", "longitude": "-79.9397388"}, "40.4424191, -79.9397388", True),
    ("coordinates", {"latitude": "40.4424191", "longitude": "-79.9397388"}, [40.44242, -79.93974], True),
    (
        "coordinates",
        {"latitude": "40.4424191", "longitude": "-79.9397388"},
        {"lat": 40.44243, "lng": -79.9397388},
        False,
    ),
    ("coordinates", {"latitude": 40.7, "longitude": -74.0}, {"Lat": 40.7, "Long": -74.0}, True),
    ("coordinates", {"latitude": 40.7, "longitude": -74.0}, "40.7N 74.0W", True),
    ("coordinates", {"latitude": 40.7, "longitude": -74.0}, "40° 42' N, 74° 0' W", True),
    ("coordinates", {"latitude": 40.7, "longitude": -74.0}, "40.7, 74.0", False),
    # url
    (
        "url",
        "git@__SSH_HOST__:convexegg/chatgpt.git",
        "ssh://git@metis.lti.cs.cmu.edu:2222/convexegg/chatgpt.git",
        True,
    ),
    ("url", "git@__SSH_HOST__:convexegg/chatgpt.git", "git@localhost:ConvexEgg/ChatGPT.git", True),
    ("url", "git@__SSH_HOST__:convexegg/chatgpt.git", "git@localhost:2222/convexegg/chatgpt.git", True),
    ("url", "git@__SSH_HOST__:convexegg/chatgpt.git", "git@localhost:convexegg/other.git", False),
    ("url", "__GITLAB__/a/b?x=1", "__GITLAB__/a/b/?x=1&y=", True),
    ("url", "__GITLAB__/a/b?x=1", "__GITLAB__/a/b?x=2", False),
    ("url", "__GITLAB__/a/b?x=Open", "__GITLAB__/A/B?x=open", True),
    ("url", "http://Example.com:80/a/", "http://example.com/a", True),
    ("url", "^__GITLAB__/projects/\\d+$", "__GITLAB__/projects/42", True),
    ("url", "^__GITLAB__/projects/\\d+$", "__GITLAB__/projects/x", False),
    # string_list, json, markdown (registered, unused by the dataset)
    ("string_list", "b, a", "A,B,", True),
    ("json", '{"a": 1, "b": [1, 2]}', '{"b": [1,2],\n "a": 1}', True),
    ("json", '{"name": "Alice"}', '{"NAME":  "alice"}', True),  # upstream casefolds (the string pre-pass)
    ("markdown", "##  Title\n* item\n\n\n[a  b](x)", "## Title  \n- item\n\n[a b](x)\n", True),
    ("markdown", "# Title\n    - item", "  # Title\n - item  ", True),  # indentation before "-" is 2 spaces
    ("markdown", "[GE heater won't stay\nlit](http://x.org)", "[GE heater won't stay lit]( http://x.org )", True),
    ("markdown", "#Title", "# Title", False),  # upstream does not add a space after "#"
    ("markdown", "# Title", "# title", False),  # case kept
    ("base64", "SGVsbG8gV29ybGQ=", "SGVsbG8gV29ybGQ=\n", True),
    ("base64", "SGVsbG8gV29ybGQ=", "aGVsbG8gd29ybGQ=", False),  # "hello world": case-sensitive
    ("base64", "^.*MIT License.*$", "TUlUIExpY2Vuc2U=", True),  # a pattern on the decoded text
    ("base64", "^.*mit license.*$", "TUlUIExpY2Vuc2U=", False),
    # full_address: USPS abbreviations (scourgify), state codes, ZIP digits; name not compared
    ("full_address", ADDRESS, ADDRESS | {"street": "N. Main St", "state": "CA", "name": "Bob"}, True),
    ("full_address", ADDRESS, {k: f" {v.upper()} " for k, v in ADDRESS.items()}, True),
    ("full_address", ADDRESS, ADDRESS | {"postcode": "941021234", "house_number": 123}, True),
    ("full_address", ADDRESS, ADDRESS | {"postcode": "94102"}, False),  # ZIP+4 is not the 5-digit ZIP
    ("full_address", ADDRESS, ADDRESS | {"street": "South Main Street"}, False),
    ("full_address", ADDRESS, ADDRESS | {"city": "Oakland"}, False),
]


@pytest.mark.parametrize(("name", "want", "got", "equal"), EQUALITY)
def test_equality_and_tolerance(name: str, want: object, got: object, equal: bool) -> None:
    assert same(name, want, got) is equal


@pytest.mark.parametrize(("name", "want", "got", "_"), EQUALITY)
def test_equality_is_symmetric_where_types_allow(name: str, want: object, got: object, _: bool) -> None:
    """Swapping sides never changes a verdict, except for expected-only patterns."""
    if isinstance(want, str) and want.startswith("^"):
        return
    forward = same(name, want, got)
    try:
        backward = same(name, got, want)
    except NormalizationError:
        return
    assert forward is backward


# (data type, raw value, canonical JSON view)
CANONICAL = [
    ("string", "  Quest   Lumaflex™ Band ", "quest lumaflex band"),
    ("string", "^#?\\s*0*170$", "^#?\\s*0*170$"),
    ("number", "1,234.5", 1234.5),
    ("currency", "€68,51", 68.51),
    ("currency", "-$1,000", -1000.0),
    ("date", "March 2, 2022", "2022-03-02"),
    ("date", "March 2022", "2022-03-01"),
    ("month", 12, "December"),
    ("month", "feb", "February"),
    ("duration", "1hr 35min", "1:35:00"),
    ("duration", "4:13", "0:04:13"),
    ("distance", "2km", 2000.0),
    ("distance", "110k", 110000.0),
    ("boolean", "y", True),
    ("null", "NULL", None),
    ("location-name", "  Giant Eagle ", "giant eagle"),
    ("coordinates", [40.5, -79.9], {"latitude": 40.5, "longitude": -79.9}),
    ("url", "git@LOCALHOST:Root/Metaseq.git", "git@__SSH_HOST__:root/metaseq.git"),
    (
        "url",
        "https://Example.com:443/p/?b=2&a=1",
        {"base_url": "https://example.com/p", "query_params": {"a": ["1"], "b": ["2"]}},
    ),
    ("string_list", "b, a,, c", ["a", "b", "c"]),
    (
        "full_address",
        ADDRESS,
        {
            "city": "san francisco",
            "state": "CA",
            "street": "n main st",
            "house_number": "123",
            "postcode": "94102-1234",
        },
    ),
]


@pytest.mark.parametrize(("name", "raw", "view"), CANONICAL)
def test_canonical_form(name: str, raw: object, view: object) -> None:
    assert expected(name, raw).to_json() == view


# (data type, agent value that cannot be read as that type)
UNREADABLE = [
    ("number", "abc"),
    ("number", ""),
    ("number", None),
    ("currency", "n/a"),
    ("currency", ""),
    ("date", "someday"),
    ("date", 2022),
    ("month", 13),
    ("month", "0"),
    ("month", 5.5),
    ("month", "blursday"),
    ("duration", "5"),
    ("duration", 5),
    ("duration", "soon"),
    ("distance", "2000"),
    ("distance", "far away"),
    ("distance", "2 kg"),
    ("distance", "9**9**9 km"),
    ("boolean", "maybe"),
    ("boolean", ""),
    ("null", 0),
    ("null", "nothing"),
    ("coordinates", "north pole-ish"),
    ("coordinates", {"x": 1, "y": 2}),
    ("coordinates", [95.0, 10.0]),
    ("url", ""),
    ("url", 42),
    ("json", "{not json"),
    ("json", {"b": [1, 2], "a": 1}),  # upstream takes JSON as text only
    ("json", ""),
    ("markdown", "   "),
    ("markdown", 42),
    ("base64", "not base64!"),
    ("string", {"an": "object"}),
    ("full_address", "123 Main St, San Francisco, CA 94102"),  # an object, not a line
    ("full_address", ADDRESS | {"state": "Narnia"}),
    ("full_address", ADDRESS | {"postcode": "941021"}),
    ("full_address", {k: v for k, v in ADDRESS.items() if k != "city"}),
    ("full_address", ADDRESS | {"street": ""}),
    ("full_address", {}),
]


@pytest.mark.parametrize(("name", "raw"), UNREADABLE)
def test_unreadable_values_raise(name: str, raw: object) -> None:
    with pytest.raises(NormalizationError):
        actual(name, raw)


class TestStringPrepass:
    def test_rules(self) -> None:
        assert string_prepass("  Sprite™ Stasis—Ball ©  ") == "sprite stasis ball"
        assert string_prepass("ＦＵＬＬ width") == "full width"
        assert string_prepass("tab\there\x00\x07") == "tab here"
        assert string_prepass("Nüñez-Łódź") == "nunez lodz"
        assert string_prepass("call 555-1234") == "call 555-1234"
        assert string_prepass("ß") == "ss"

    def test_ascii_text_reads_as_any_text_does(self) -> None:
        """ASCII text takes a shorter path; a zero-width space (dropped) sends the same text down the
        general one: both agree on every ASCII character, controls included."""
        for code in range(128):
            text = f"Ab{chr(code)}-c {chr(code)}\t"
            assert string_prepass(text) == string_prepass(text + "\u200b"), code
        assert string_prepass("a\x7fb\rc\x1b") == "ab c"

    def test_patterns_are_untouched(self) -> None:
        assert string_prepass("^Foo-Bar$") == "^Foo-Bar$"

    def test_urls_are_derendered_when_sites_are_known(self) -> None:
        from replay_tui.verify.evaluate import sides_for

        _, side = sides_for(["gitlab"], {"gitlab": ["http://localhost:8023"]})
        assert string_prepass("See http://localhost:8023/a11y", side) == "see __gitlab__/a11y"
        assert string_prepass("See http://localhost:8023/a11y") == "see http://localhost:8023/a11y"


class TestAlternatives:
    def test_expected_list_is_any_of(self) -> None:
        alternatives = expected("string", ["Sprite Stasis Ball 65 cm", "Cruise Stasis Ball 65 cm"])
        assert alternatives.matches(actual("string", "cruise stasis ball 65 cm"))
        assert alternatives.matches(actual("string", "Sprite Stasis Ball 65 cm"))
        assert not alternatives.matches(actual("string", "Sprite Stasis Ball 55 cm"))
        assert alternatives.to_json() == {"any_of": ["sprite stasis ball 65 cm", "cruise stasis ball 65 cm"]}

    def test_single_item_list_is_rejected(self) -> None:
        with pytest.raises(NormalizationError, match="2 or more"):
            expected("string", ["only one"])

    def test_agent_alternatives_must_all_be_acceptable(self) -> None:
        alternatives = expected("string", ["a", "b", "c"])
        assert alternatives.matches(actual("string", ["a", "b"]))
        assert not alternatives.matches(actual("string", ["a", "z"]))  # a hedge with a wrong guess
        assert not expected("string", "a").matches(actual("string", ["a", "b"]))
        with pytest.raises(NormalizationError, match="2 or more"):
            actual("string", ["a"])

    def test_alternatives_with_tolerance(self) -> None:
        assert same("currency", [10, 20], "$20.05")
        assert same("duration", ["10min", "1h"], "62 minutes")
        assert not same("number", [1, 2], 3)

    def test_coordinate_pair_is_one_value(self) -> None:
        pair = expected("coordinates", ["40.7", "-74.0"])
        assert len(pair.alternatives) == 1
        two = expected("coordinates", [{"lat": 1, "lon": 2}, {"lat": 3, "lon": 4}])
        assert len(two.alternatives) == 2
        assert two.matches(actual("coordinates", [3, 4]))
        assert actual("coordinates", [40.7, -74.0]).canonical == (40.7, -74.0)


class TestPatterns:
    def test_expected_pattern_full_match_ignoring_case(self) -> None:
        assert same("string", "^#?\\s*0*170$", "#00170")
        assert same("string", "^#?\\s*0*170$", "170")
        assert not same("string", "^#?\\s*0*170$", "1700")
        assert same("string", "^@?yjlou$", "@YJLOU")

    def test_agent_pattern_is_only_text(self) -> None:
        assert not same("string", "anything", "^.*$")
        assert same("string", "^#?\\s*0*170$", "^#?\\s*0*170$")  # the pattern's own text

    def test_invalid_pattern_compares_as_text(self) -> None:
        assert same("string", "^(unclosed$", "^(unclosed$")
        assert not same("string", "^(unclosed$", "unclosed")


class TestTypeResolution:
    def test_format_wins_over_type(self) -> None:
        assert type_name({"type": "number", "format": "currency"}) == "currency"
        assert type_name({"type": "string", "format": "duration"}) == "duration"
        assert type_name({"format": "coordinates"}) == "coordinates"
        assert type_name({"type": "integer"}) == "integer"
        assert type_name({}) == "string"
        assert type_name(None) == "string"

    def test_integer_and_number_are_one_type(self) -> None:
        assert data_type({"type": "integer"}) is data_type({"type": "number"})
        assert REGISTRY["integer"].make(3, EXPECTED).matches(REGISTRY["number"].make("3", ACTUAL))

    def test_different_types_never_match(self) -> None:
        assert not expected("number", 5).matches(actual("string", "5"))

    def test_unknown_type(self) -> None:
        with pytest.raises(SchemaError, match="unknown data type"):
            data_type({"type": "string", "format": "postal_address"})
