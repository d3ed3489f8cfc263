"""Typed comparison of WebShop actions for the replay debugger: which part of a step differed, and how.

``compare_actions(expected, predicted)`` parses both ``kind[argument]`` strings with
:func:`replay_tui.actions.parse_action`, compares the kind, then the argument by what it is:

- ``search[...]`` keywords: as normalised text (the verifier's string pre-pass: case, accents,
  hyphens, whitespace and edge punctuation do not count);
- item ids (ASIN-like ``B0...``): exactly;
- fixed buttons (``Next >``, ``< Prev``, ``Back to Search``, ``Buy Now``, ``Description``...) and
  option values: case-insensitively, with whitespace collapsed.

The verdict names the part that differed (``kind``, ``argument`` or ``parse``) and carries the
normalised values, so a view can say *why* a step mismatched. This does not change the env's own
(string) comparison.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from replay_tui.actions import BACK_TO_SEARCH, BUY_NOW, NEXT, PREV, ActionError, ParsedAction, parse_action
from replay_tui.verify.types import string_prepass, strip_edge_punctuation

ActionPart = Literal["kind", "argument", "parse"]
ArgumentType = Literal["keywords", "item_id", "button", "option", "text"]

_ASIN = re.compile(r"^B0[A-Z0-9]{8}$", re.IGNORECASE)
_BUTTONS = frozenset(
    b.casefold() for b in (NEXT, PREV, BACK_TO_SEARCH, BUY_NOW, "description", "features", "reviews", "attributes")
)
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class ActionVerdict:
    """The typed comparison of two actions.

    ``match`` is the verdict; ``part`` names what differed (None when they match). ``expected_kind``
    / ``predicted_kind`` and ``expected_value`` / ``predicted_value`` are the normalised parts that
    were compared (the raw action text when it could not be parsed), ``argument_type`` says how
    the argument was read, and ``message`` says it in one line.
    """

    match: bool
    part: ActionPart | None
    expected_kind: str | None
    predicted_kind: str | None
    expected_value: str
    predicted_value: str
    argument_type: ArgumentType | None
    message: str


def argument_type(kind: str, argument: str) -> ArgumentType:
    """How an action's argument is read: ``keywords`` for a search, else item id, button or option."""
    if kind == "search":
        return "keywords"
    if kind != "click":
        return "text"
    text = argument.strip()
    if _ASIN.match(text):
        return "item_id"
    if _SPACES.sub(" ", text).casefold() in _BUTTONS:
        return "button"
    return "option"


def normalize_argument(kind: ArgumentType, argument: str) -> str:
    """The comparable form of an argument of the given type."""
    if kind == "keywords":
        return strip_edge_punctuation(string_prepass(argument))
    if kind == "item_id":
        return argument.strip()
    return _SPACES.sub(" ", argument.strip()).casefold()


def compare_actions(expected: str, predicted: str) -> ActionVerdict:
    """Compare a recorded (expected) action with a predicted one, kind first, then argument by kind."""
    try:
        want = parse_action(expected)
    except ActionError:
        if _SPACES.sub(" ", (expected or "").strip()) == _SPACES.sub(" ", (predicted or "").strip()):
            text = _SPACES.sub(" ", (expected or "").strip())
            return ActionVerdict(True, None, None, None, text, text, None, "same (unparsed) action text")
        return _unparsed(expected, predicted, "expected")
    try:
        got = parse_action(predicted)
    except ActionError:
        return _unparsed(expected, predicted, "predicted")
    want_kind, got_kind = want.kind.lower(), got.kind.lower()
    if want_kind != got_kind:
        return ActionVerdict(
            match=False,
            part="kind",
            expected_kind=want_kind,
            predicted_kind=got_kind,
            expected_value=want.argument,
            predicted_value=got.argument,
            argument_type=None,
            message=f"action kind differs: expected {want_kind}[...], got {got_kind}[...]",
        )
    return _compare_arguments(want_kind, want, got)


def _compare_arguments(kind: str, want: ParsedAction, got: ParsedAction) -> ActionVerdict:
    want_type, got_type = argument_type(kind, want.argument), argument_type(kind, got.argument)
    # An item id on either side makes it an item comparison: ids are compared exactly.
    compared: ArgumentType = "item_id" if "item_id" in (want_type, got_type) else want_type
    want_value = normalize_argument(compared, want.argument)
    got_value = normalize_argument(compared, got.argument)
    if want_value == got_value:
        return ActionVerdict(True, None, kind, kind, want_value, got_value, compared, f"same {_LABELS[compared]}")
    if want_type != got_type:
        message = (
            f"argument differs: expected {_LABELS[want_type]} {want.argument!r}, "
            f"got {_LABELS[got_type]} {got.argument!r}"
        )
    elif compared == "item_id" and want_value.casefold() == got_value.casefold():
        message = f"item id differs in letter case: expected {want_value!r}, got {got_value!r} (ids compare exactly)"
    else:
        message = f"{_LABELS[compared]} differ: expected {want_value!r}, got {got_value!r}"
    return ActionVerdict(False, "argument", kind, kind, want_value, got_value, compared, message)


_LABELS: dict[str, str] = {
    "keywords": "search keywords",
    "item_id": "item id",
    "button": "button",
    "option": "option value",
    "text": "argument",
}


def _unparsed(expected: str, predicted: str, which: str) -> ActionVerdict:
    shown = expected if which == "expected" else predicted
    return ActionVerdict(
        match=False,
        part="parse",
        expected_kind=None,
        predicted_kind=None,
        expected_value=expected,
        predicted_value=predicted,
        argument_type=None,
        message=f"{which} action is not of the form kind[argument]: {shown!r}",
    )
