"""The one place a step's verdict is made: recorded action vs predicted action, under a policy.

Every view (step list, detail pane, CLI tables, reports, exports) shows what :func:`judge`
returned and :class:`~replay_tui.runner.StepResult` stored; nothing judges a second time.

A verdict is one of three:

- ``match``: the two actions are the same after the seed's normalisation (whitespace stripped
  and collapsed, case kept);
- ``equivalent``: they differ, but the matching policy tolerates the difference (a lower-cased
  button, a plural search keyword...). Neither a match nor a mismatch: counted on its own;
- ``mismatch``: they differ in a way the policy does not tolerate.

Policies (:data:`MATCH_POLICIES`), chosen per state with :class:`MatchSettings`:

- ``exact`` (the default, the seed's harness): only ``match`` or ``mismatch``;
- ``lower``: a difference in letter case anywhere is tolerated;
- ``env``: a difference in the case of the bracket argument is tolerated (WebShop lowercases it);
- ``typed``: the argument is read by what it is (:func:`compare_actions`): search keywords as
  normalised text (case, accents, hyphens, spacing and edge punctuation do not count), item ids
  exactly, buttons and option values without case;
- ``tolerant``: ``typed``, plus search keywords compared as a set of lemmas (word order,
  singular/plural, stop words and inner punctuation do not count; lemmas from the ``simplemma``
  library), and item ids without case (WebShop lowercases clicks before it looks them up).

The reason of a verdict says which part differed, in the words the stepper shows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, cast

import orjson

from replay_tui.actions import (
    BACK_TO_SEARCH,
    BUY_NOW,
    NEXT,
    PREV,
    ActionError,
    ParsedAction,
    normalize_action,
    parse_action,
)

Verdict = Literal["match", "equivalent", "mismatch"]
VERDICTS: tuple[Verdict, ...] = ("match", "equivalent", "mismatch")
VERDICT_MARKS: dict[str, str] = {"match": "✓", "equivalent": "≈", "mismatch": "✗"}

MatchPolicy = Literal["exact", "lower", "env", "typed", "tolerant"]
MATCH_POLICIES: tuple[MatchPolicy, ...] = ("exact", "lower", "env", "typed", "tolerant")
DEFAULT_POLICY: MatchPolicy = "exact"
POLICY_DESCRIPTIONS: dict[str, str] = {
    "exact": "exact (the seed's harness: every character counts)",
    "lower": "lower (letter case anywhere tolerated)",
    "env": "env (argument case tolerated, as WebShop reads it)",
    "typed": "typed (keywords normalised, buttons and options any case, item ids exact)",
    "tolerant": "tolerant (typed + keyword order, plurals, stop words; item ids any case)",
}

# Kept for callers of the earlier name: the policy that judged a run was called its "case".
CasePolicy = MatchPolicy
CASE_POLICIES = MATCH_POLICIES

ActionPart = Literal["kind", "argument", "parse"]
ArgumentType = Literal["keywords", "item_id", "button", "option", "text"]

_ASIN = re.compile(r"^B0[A-Z0-9]{8}$", re.IGNORECASE)
_BUTTONS = frozenset(
    b.casefold() for b in (NEXT, PREV, BACK_TO_SEARCH, BUY_NOW, "description", "features", "reviews", "attributes")
)
_SPACES = re.compile(r"\s+")


# -- the typed comparison ---------------------------------------------------------------------


@dataclass(frozen=True)
class TypedComparison:
    """The typed comparison of two actions (a building block of the ``typed`` policy).

    ``match`` is true when the kinds agree and the arguments are equal as read by their type;
    ``part`` names what differed (None when they match). ``expected_kind`` / ``predicted_kind``
    and ``expected_value`` / ``predicted_value`` are the normalised parts that were compared
    (the raw action text when it could not be parsed), ``argument_type`` says how the argument
    was read, and ``message`` says it in one line.
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


def _plain(text: str) -> str:
    """``text`` as the typed string normaliser compares it (case, accents, spacing, edge punctuation).

    :mod:`replay_tui.verify.types` (and ``regex``, ``unidecode``) is imported on the first comparison,
    not with the episode model that imports this module: opening a log judges nothing."""
    from replay_tui.verify.types import string_prepass, strip_edge_punctuation

    return strip_edge_punctuation(string_prepass(text))


def normalize_argument(kind: ArgumentType, argument: str) -> str:
    """The comparable form of an argument of the given type."""
    if kind == "keywords":
        return _plain(argument)
    if kind == "item_id":
        return argument.strip()
    return _SPACES.sub(" ", argument.strip()).casefold()


def compare_actions(expected: str, predicted: str) -> TypedComparison:
    """Compare a recorded (expected) action with a predicted one, kind first, then argument by kind."""
    try:
        want = parse_action(expected)
    except ActionError:
        if _SPACES.sub(" ", (expected or "").strip()) == _SPACES.sub(" ", (predicted or "").strip()):
            text = _SPACES.sub(" ", (expected or "").strip())
            return TypedComparison(True, None, None, None, text, text, None, "same (unparsed) action text")
        return _unparsed(expected, predicted, "expected")
    try:
        got = parse_action(predicted)
    except ActionError:
        return _unparsed(expected, predicted, "predicted")
    want_kind, got_kind = want.kind.lower(), got.kind.lower()
    if want_kind != got_kind:
        return TypedComparison(
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


def _compare_arguments(kind: str, want: ParsedAction, got: ParsedAction) -> TypedComparison:
    want_type, got_type = argument_type(kind, want.argument), argument_type(kind, got.argument)
    # An item id on either side makes it an item comparison: ids are compared exactly.
    compared: ArgumentType = "item_id" if "item_id" in (want_type, got_type) else want_type
    want_value = normalize_argument(compared, want.argument)
    got_value = normalize_argument(compared, got.argument)
    if want_value == got_value:
        return TypedComparison(True, None, kind, kind, want_value, got_value, compared, f"same {_LABELS[compared]}")
    if want_type != got_type:
        message = (
            f"argument differs: expected {_LABELS[want_type]} {want.argument!r}, "
            f"got {_LABELS[got_type]} {got.argument!r}"
        )
    elif compared == "item_id" and want_value.casefold() == got_value.casefold():
        message = f"item id differs in letter case: expected {want_value!r}, got {got_value!r} (ids compare exactly)"
    else:
        message = f"{_PLURALS[compared]} differ: expected {want_value!r}, got {got_value!r}"
    return TypedComparison(False, "argument", kind, kind, want_value, got_value, compared, message)


_PLURALS: dict[str, str] = {
    "keywords": "search keywords",
    "item_id": "item ids",
    "button": "buttons",
    "option": "option values",
    "text": "arguments",
}
_LABELS: dict[str, str] = {
    "keywords": "search keywords",
    "item_id": "item id",
    "button": "button",
    "option": "option value",
    "text": "argument",
}


def _unparsed(expected: str, predicted: str, which: str) -> TypedComparison:
    shown = expected if which == "expected" else predicted
    return TypedComparison(
        match=False,
        part="parse",
        expected_kind=None,
        predicted_kind=None,
        expected_value=expected,
        predicted_value=predicted,
        argument_type=None,
        message=f"{which} action is not of the form kind[argument]: {shown!r}",
    )


# -- tolerant search keywords -----------------------------------------------------------------

STOP_WORDS: frozenset[str] = frozenset(
    "a an the and or of for with in on to by from at as is are be that this these those it its "
    "i me my we our you your some any please".split()
)
"""Function words that carry no product meaning in a search query (a short, fixed list)."""

_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
_POSSESSIVE = re.compile(r"(\w)'s\b")


@lru_cache(maxsize=65_536)
def lemma(word: str) -> str:
    """The English lemma of a lower-case word (``chairs`` -> ``chair``), by ``simplemma``."""
    import simplemma  # its dictionary loads on first use (~0.3 s), only when tolerant matching runs

    found = str(simplemma.lemmatize(word, lang="en")).casefold()
    if found == word and len(word) > 3 and word.endswith("s"):
        # A possessive written without its apostrophe ("womens", "mens"): the word before the s.
        stem = str(simplemma.lemmatize(word[:-1], lang="en")).casefold()
        if stem != word[:-1]:
            return stem
    return found


def keyword_words(text: str) -> list[str]:
    """The words of a search query: pre-passed (case, accents, hyphens), possessives dropped."""
    from replay_tui.verify.types import string_prepass

    return _WORD.findall(_POSSESSIVE.sub(r"\1", string_prepass(text)))


def keyword_lemmas(text: str) -> frozenset[str]:
    """What a tolerant search compares: the set of lemmas of the query's content words."""
    return frozenset(lemma(w) for w in keyword_words(text) if w not in STOP_WORDS)


def _keyword_differences(want: str, got: str) -> list[str]:
    """Which tolerated kinds of difference separate two queries that have the same lemma set."""
    w, g = keyword_words(want), keyword_words(got)
    if w == g:
        return ["letter case"] if want.casefold() == got.casefold() else ["case, accents or punctuation"]
    found: list[str] = []
    if sorted(x for x in w if x in STOP_WORDS) != sorted(x for x in g if x in STOP_WORDS):
        found.append("stop words")
    w_content = [x for x in w if x not in STOP_WORDS]
    g_content = [x for x in g if x not in STOP_WORDS]
    if set(w_content) != set(g_content):
        found.append("singular/plural")
    w_lemmas = list(dict.fromkeys(lemma(x) for x in w_content))
    g_lemmas = list(dict.fromkeys(lemma(x) for x in g_content))
    if w_lemmas != g_lemmas:
        found.append("word order")
    if Counter(map(lemma, w_content)) != Counter(map(lemma, g_content)):
        found.append("repeated words")
    return found or ["punctuation"]


def _words_only_in(a: Iterable[str], b: Iterable[str]) -> list[str]:
    seen = set(b)
    return sorted({x for x in a if x not in seen})


# -- verdicts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActionVerdict:
    """The verdict on one step: ``verdict``, the ``reason`` in one line, the ``part`` that differed
    (``kind``, ``argument`` or ``parse``; None when the actions are the same) and the ``policy``
    that judged it."""

    verdict: Verdict
    reason: str
    part: ActionPart | None = None
    policy: MatchPolicy = DEFAULT_POLICY
    argument_type: ArgumentType | None = None

    @property
    def match(self) -> bool:
        """True only for ``match`` (an ``equivalent`` step is not a match)."""
        return self.verdict == "match"

    @property
    def accepted(self) -> bool:
        """True for ``match`` and ``equivalent``: the replay follows the recorded branch."""
        return self.verdict != "mismatch"

    @property
    def message(self) -> str:
        return self.reason


def judge(expected: str, predicted: str, policy: MatchPolicy = DEFAULT_POLICY) -> ActionVerdict:
    """The verdict on a predicted action against the recorded (expected) one under ``policy``."""
    if policy not in MATCH_POLICIES:
        raise ValueError(f"unknown matching policy {policy!r}; choose one of {', '.join(MATCH_POLICIES)}")
    # the same text normalizes to the same text: the common case of a replay needs no parsing
    if predicted == expected or normalize_action(predicted) == normalize_action(expected):
        return ActionVerdict("match", "same action", None, policy, None)
    typed = compare_actions(expected, predicted)
    if policy in ("lower", "env"):
        if normalize_action(predicted, policy) == normalize_action(expected, policy):
            what = "letter case" if policy == "lower" else "the argument's letter case (WebShop lowercases it)"
            return ActionVerdict("equivalent", f"same action up to {what}", None, policy, typed.argument_type)
        return _mismatch(typed, policy, expected, predicted)
    if policy == "exact":
        return _mismatch(typed, policy, expected, predicted)
    if typed.match:
        detail = _typed_detail(typed, expected, predicted)
        return ActionVerdict(
            "equivalent",
            f"same {_LABELS[typed.argument_type or 'text']} up to {detail}",
            None,
            policy,
            typed.argument_type,
        )
    if policy == "tolerant" and typed.part == "argument":
        tolerated = _tolerant_argument(typed, expected, predicted)
        if tolerated is not None:
            return tolerated
    return _mismatch(typed, policy, expected, predicted)


def _typed_detail(typed: TypedComparison, expected: str, predicted: str) -> str:
    want, got = _argument(expected), _argument(predicted)
    if typed.argument_type is None:
        return "spacing"
    if want is not None and got is not None:
        if _SPACES.sub(" ", want.argument) == _SPACES.sub(" ", got.argument):
            return "the action kind's letter case"
        if want.argument.casefold() == got.argument.casefold():
            return "letter case"
    if typed.argument_type == "keywords":
        return "case, accents, hyphens or edge punctuation"
    return "letter case and spacing"


def _argument(action: str) -> ParsedAction | None:
    try:
        return parse_action(action)
    except ActionError:
        return None


def _tolerant_argument(typed: TypedComparison, expected: str, predicted: str) -> ActionVerdict | None:
    want, got = _argument(expected), _argument(predicted)
    if want is None or got is None:
        return None
    kind = typed.argument_type
    if kind == "item_id" and typed.expected_value.casefold() == typed.predicted_value.casefold():
        return ActionVerdict(
            "equivalent", "same item id up to letter case (WebShop lowercases clicks)", None, "tolerant", kind
        )
    if kind == "keywords":
        want_lemmas, got_lemmas = keyword_lemmas(want.argument), keyword_lemmas(got.argument)
        if want_lemmas and want_lemmas == got_lemmas:
            detail = ", ".join(_keyword_differences(want.argument, got.argument))
            return ActionVerdict("equivalent", f"same search keywords up to {detail}", None, "tolerant", kind)
    return None


def _mismatch(typed: TypedComparison, policy: MatchPolicy, expected: str, predicted: str) -> ActionVerdict:
    if typed.match:
        # The typed reading finds them the same; this policy counts the difference.
        detail = _typed_detail(typed, expected, predicted)
        reason = (
            f"differs only in {detail} from the recorded action; {policy} matching counts it "
            "(typed or tolerant matching would call it equivalent)"
        )
        return ActionVerdict("mismatch", reason, "argument", policy, typed.argument_type)
    reason = typed.message
    if typed.argument_type == "keywords" and typed.part == "argument":
        want, got = _argument(expected), _argument(predicted)
        if want is not None and got is not None:
            wl, gl = keyword_lemmas(want.argument), keyword_lemmas(got.argument)
            missing, extra = _words_only_in(wl, gl), _words_only_in(gl, wl)
            if wl and wl == gl:
                detail = ", ".join(_keyword_differences(want.argument, got.argument))
                reason += f" (the same words up to {detail}: tolerant matching would call it equivalent)"
            elif missing or extra:
                parts = []
                if missing:
                    parts.append("missing " + ", ".join(missing))
                if extra:
                    parts.append("extra " + ", ".join(extra))
                reason += f" ({'; '.join(parts)})"
    return ActionVerdict("mismatch", reason, typed.part, policy, typed.argument_type)


def actions_match(predicted: str, expected: str, case: MatchPolicy = DEFAULT_POLICY) -> bool:
    """True when ``predicted`` is accepted for ``expected`` under the policy (match or equivalent)."""
    return judge(expected, predicted, case).accepted


# -- tool calls (any agent) ----------------------------------------------------------------------

_NAME_FOLD = re.compile(r"[\s_\-.]+")
_MISSING = object()


def judge_call(
    expected_name: str,
    expected_arguments: Mapping[str, Any],
    predicted_name: str,
    predicted_arguments: Mapping[str, Any],
    policy: MatchPolicy = DEFAULT_POLICY,
    schema: Mapping[str, Any] | None = None,
) -> ActionVerdict:
    """The verdict on a predicted tool call against the recorded one, for any agent's tools.

    The tool name must be the same (``typed``/``tolerant`` tolerate case and ``_``/``-``/space);
    arguments are compared key by key, each value by its JSON-schema type when ``schema`` (the
    tool's ``parameters``) gives one, else by its JSON type: numbers by value (``3`` is ``3.0``),
    strings exactly (``typed``: case, accents, spacing and edge punctuation tolerated;
    ``tolerant``: also word order, plurals and stop words), booleans exactly; under ``typed`` and
    ``tolerant`` a string holding the schema's number or boolean (``"3"``, ``"true"``) is
    equivalent. The reason names the argument's path (``arguments.passengers[0].name``).
    """
    if policy not in MATCH_POLICIES:
        raise ValueError(f"unknown matching policy {policy!r}; choose one of {', '.join(MATCH_POLICIES)}")
    tolerated: list[str] = []
    if expected_name != predicted_name:
        loose = policy in ("lower", "env", "typed", "tolerant")
        if loose and _NAME_FOLD.sub("", expected_name).casefold() == _NAME_FOLD.sub("", predicted_name).casefold():
            tolerated.append(f"the tool name {predicted_name!r} for {expected_name!r}")
        else:
            return ActionVerdict(
                "mismatch", f"tool differs: expected {expected_name!r}, got {predicted_name!r}", "kind", policy
            )
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    problem = _compare_value(
        dict(expected_arguments),
        dict(predicted_arguments),
        "arguments",
        {"type": "object", "properties": properties or {}},
        policy,
        tolerated,
    )
    if problem is not None:
        return ActionVerdict("mismatch", problem, "argument", policy)
    if tolerated:
        return ActionVerdict("equivalent", "same call, tolerating " + "; ".join(tolerated), None, policy)
    return ActionVerdict("match", "same call", None, policy)


_CALL_TEXT = re.compile(r"\A\s*([^\s(]+)\s*\((.*)\)\s*\Z", re.DOTALL)


@dataclass(frozen=True)
class CallText:
    """A tool call read back from its canonical text ``name({"a": 1})``: the name, the arguments
    (a JSON object), or ``raw_arguments`` when the text between the brackets is not one."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str | None = None


def split_call_text(text: str) -> CallText | None:
    """``name({...})`` read back; None when ``text`` is not ``name(...)``.

    Arguments that are not a JSON object are kept as ``raw_arguments`` (a model that wrote broken
    JSON is judged, not refused)."""
    found = _CALL_TEXT.match(text)
    if found is None:
        return None
    name, inner = found.group(1), found.group(2).strip()
    if not inner:
        return CallText(name)
    try:
        value = orjson.loads(inner)
    except orjson.JSONDecodeError:
        return CallText(name, raw_arguments=inner)
    if not isinstance(value, dict):
        return CallText(name, raw_arguments=inner)
    return CallText(name, value)


def judge_step(
    matching: MatchSettings, expected: str, predicted: str, state: str, *, call: bool, schema: Any = None
) -> ActionVerdict:
    """The verdict on one recorded step, the only entry every engine (replay, re-judgement,
    ``--repeat``, comparisons) calls: WebShop actions by :meth:`MatchSettings.judge`, tool calls
    (their canonical text, ``name({...})``) by :func:`judge_call` under the policy of their state
    (the tool's name), typed by ``schema`` (the recorded tool's spec) when given; plain answers
    (``schema`` an :class:`AnswerSpec`) by :func:`judge_answer`."""
    if isinstance(schema, AnswerSpec):
        return judge_answer(expected, predicted, matching.policy_for(state), schema.kind)
    if not call:
        return matching.judge(expected, predicted, state)
    policy = matching.policy_for(state)
    want = split_call_text(expected)
    got = split_call_text(predicted)
    if want is None:  # not a call text: compare as written
        return matching.judge(expected, predicted, state)
    if got is None:
        shown = predicted if len(predicted) <= 80 else predicted[:79] + "…"
        return ActionVerdict("mismatch", f"not a tool call: {shown!r}", "kind", policy)
    if want.raw_arguments is not None or got.raw_arguments is not None:
        if want.name == got.name and want.raw_arguments == got.raw_arguments:
            return ActionVerdict("match", "same call", None, policy)
        if got.raw_arguments is not None and want.raw_arguments is None:
            shown = got.raw_arguments[:80]
            return ActionVerdict("mismatch", f"arguments are not a JSON object: {shown!r}", "argument", policy)
    parameters = schema.get("parameters") if isinstance(schema, dict) else None
    return judge_call(want.name, want.arguments, got.name, got.arguments, policy, parameters)


# -- plain answers (a decision without a tool call) ----------------------------------------------

ANSWER_STATE = "answer"
"""The state of a plain-answer step (``--match answer=typed`` sets its policy; reports count it apart)."""
ANSWER_TYPES: tuple[str, ...] = ("choice", "number")
"""The answer types a task may declare (:attr:`AnswerSpec.kind`); any other answer is text."""

_CHOICE_STRICT = re.compile(r"(?i)^ANSWER\s*:\s*([A-Za-z\d ,]+)\s*(?:$|\n|\.)", re.MULTILINE)
_CHOICE_LOOSE = re.compile(r"(?i)ANSWER\s*:\s*([A-Za-z\d ,]+)(?:[^\w]|\n|$|\.)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_NUMBER_MARKS = str.maketrans("", "", "$€£,*_")


@dataclass(frozen=True)
class AnswerSpec:
    """What :func:`judge_step` needs to judge a plain answer (given where a tool call gives its
    schema): the type the task declares, ``choice``, ``number`` or None (text)."""

    kind: str | None = None


def choice_letters(text: str) -> str | None:
    """The letters of a multiple-choice answer as inspect_ai's ``multiple_choice`` solver reads
    them: the last ``ANSWER: <letters>`` line (else the last ``ANSWER:`` anywhere), separated by
    commas, spaces or ``and`` or run together in capitals (``AC``), upper-cased and sorted
    (``"ANSWER: c, a"`` is ``"AC"``); None when there is none or it holds a word (``B because``)."""
    found = _CHOICE_STRICT.findall(text) or _CHOICE_LOOSE.findall(text)
    if not found:
        return None
    written = found[-1].strip().rstrip(".")
    tokens = [t for t in re.split(r"\s+and\s+|[\s,]+", written, flags=re.IGNORECASE) if t]
    if tokens and all(len(t) == 1 and t.isalnum() for t in tokens):
        return "".join(sorted({t.upper() for t in tokens}))
    if len(tokens) == 1 and tokens[0].isalpha() and tokens[0].isupper():  # "AC": letters run together
        return "".join(sorted(set(tokens[0])))
    return None


def answer_number(text: str) -> Any:
    """The number an answer ends with (as inspect_ai's numeric ``match`` reads the end of the
    output: currency signs, thousands separators and ``*``/``_`` marks dropped), read by the
    ``number`` normaliser of :mod:`replay_tui.verify.types`; None when it holds no number."""
    from replay_tui.verify.types import ACTUAL, NormalizationError, data_type

    found = _NUMBER.findall(text.translate(_NUMBER_MARKS))
    if not found:
        return None
    try:
        return data_type({"type": "number"}).make(found[-1], ACTUAL)
    except NormalizationError:
        return None


def _typed_answer(kind: str | None, text: str) -> tuple[Any, str] | None:
    """``(comparable value, how it is shown)`` of an answer read as ``kind``; None when it cannot be."""
    if kind == "choice":
        letters = choice_letters(text)
        return None if letters is None else (letters, f"choice {letters}")
    if kind == "number":
        number = answer_number(text)
        return None if number is None else (number, f"number {number.to_json()!r}")
    plain = _plain(text)
    return (plain, f"text {_short(plain)}") if plain else None


def judge_answer(
    expected: str, predicted: str, policy: MatchPolicy = DEFAULT_POLICY, kind: str | None = None
) -> ActionVerdict:
    """The verdict on a predicted plain answer against the recorded one.

    The same text up to spacing is a match. ``exact`` counts any other difference; ``lower`` and
    ``env`` tolerate letter case; ``typed`` and ``tolerant`` read both answers as the task declares
    (``kind``): a multiple-choice letter (:func:`choice_letters`), a number (:func:`answer_number`),
    else text through :mod:`replay_tui.verify`'s string pre-pass (case, accents, spacing, edge
    punctuation); the same reading is ``equivalent``. Never a model: deterministic."""
    if policy not in MATCH_POLICIES:
        raise ValueError(f"unknown matching policy {policy!r}; choose one of {', '.join(MATCH_POLICIES)}")
    if _SPACES.sub(" ", expected.strip()) == _SPACES.sub(" ", predicted.strip()):
        return ActionVerdict("match", "same answer", None, policy, None)
    differs = f"answer differs: expected {_short(expected)}, got {_short(predicted)}"
    if policy == "exact":
        return ActionVerdict("mismatch", differs, "argument", policy, None)
    if policy in ("lower", "env"):
        if _SPACES.sub(" ", expected.strip()).casefold() == _SPACES.sub(" ", predicted.strip()).casefold():
            return ActionVerdict("equivalent", "same answer up to letter case", None, policy, None)
        return ActionVerdict("mismatch", differs, "argument", policy, None)
    want, got = _typed_answer(kind, expected), _typed_answer(kind, predicted)
    what = kind or "text"
    if want is None:
        return ActionVerdict("mismatch", f"{differs} (the recorded answer holds no {what})", "argument", policy, None)
    if got is None:
        return ActionVerdict("mismatch", f"no {what} in the answer {_short(predicted)}", "parse", policy, None)
    same = want[0].matches(got[0]) if kind == "number" else want[0] == got[0]
    if same:
        return ActionVerdict("equivalent", f"same answer read as {want[1]}", None, policy, None)
    return ActionVerdict(
        "mismatch", f"answer differs as a {what}: expected {want[1]}, got {got[1]}", "argument", policy, None
    )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _schema_types(schema: Any) -> set[str]:
    if not isinstance(schema, Mapping):
        return set()
    kind = schema.get("type")
    kinds = (
        {kind}
        if isinstance(kind, str)
        else {k for k in kind if isinstance(k, str)}
        if isinstance(kind, list)
        else set()
    )
    return {"number" if k == "integer" else k for k in kinds}


def _coerce(text: str, kinds: set[str]) -> Any:
    """A string read as the number or boolean the schema says the value is (``_MISSING`` if it is not one)."""
    stripped = text.strip()
    if "boolean" in kinds and stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    if "number" in kinds:
        try:
            return float(stripped)
        except ValueError:
            return _MISSING
    return _MISSING


def _compare_value(
    want: Any, got: Any, path: str, schema: Any, policy: MatchPolicy, tolerated: list[str]
) -> str | None:
    """None when ``got`` is accepted for ``want`` (noting tolerated differences), else why not."""
    want_type, got_type = _json_type(want), _json_type(got)
    loose = policy in ("typed", "tolerant")
    if want_type != got_type:
        kinds = _schema_types(schema) or {want_type}
        if loose and got_type == "string" and want_type in ("number", "boolean") and want_type in kinds:
            value = _coerce(got, kinds)
            if value is not _MISSING and value == want and _json_type(value) == want_type:
                tolerated.append(f"{path} as the string {got!r}")
                return None
        return f"{path}: expected a {want_type} {_short(want)}, got a {got_type} {_short(got)}"
    if want_type == "object":
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        missing = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        if missing or extra:
            parts = ([f"missing {', '.join(map(repr, missing))}"] if missing else []) + (
                [f"unexpected {', '.join(map(repr, extra))}"] if extra else []
            )
            return f"{path}: {'; '.join(parts)}"
        for key in want:
            sub = properties.get(key) if isinstance(properties, Mapping) else None
            problem = _compare_value(want[key], got[key], f"{path}.{key}", sub, policy, tolerated)
            if problem is not None:
                return problem
        return None
    if want_type == "array":
        if len(want) != len(got):
            return f"{path}: expected {len(want)} items, got {len(got)}"
        items = schema.get("items") if isinstance(schema, Mapping) else None
        for position, (a, b) in enumerate(zip(want, got, strict=True)):
            problem = _compare_value(a, b, f"{path}[{position}]", items, policy, tolerated)
            if problem is not None:
                return problem
        return None
    if want == got:
        return None
    if want_type == "string":
        if policy in ("lower", "env") and want.casefold() == got.casefold():
            tolerated.append(f"{path} (letter case)")
            return None
        if loose and _plain(want) == _plain(got):
            tolerated.append(f"{path} (case, accents or spacing)")
            return None
        if policy == "tolerant" and keyword_lemmas(want) and keyword_lemmas(want) == keyword_lemmas(got):
            tolerated.append(f"{path} ({', '.join(_keyword_differences(want, got))})")
            return None
    return f"{path} differs: expected {_short(want)}, got {_short(got)}"


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- settings: a policy per state -----------------------------------------------------------------


class MatchSpecError(ValueError):
    """A ``--match`` value that cannot be read; the message is one line."""


@dataclass(frozen=True)
class MatchSettings:
    """Which policy judges the steps of each state: ``default`` for every state not in ``by_state``."""

    default: MatchPolicy = DEFAULT_POLICY
    by_state: tuple[tuple[str, MatchPolicy], ...] = field(default=())

    def __post_init__(self) -> None:
        for policy in (self.default, *(p for _, p in self.by_state)):
            if policy not in MATCH_POLICIES:
                raise MatchSpecError(f"unknown matching policy {policy!r}; choose one of {', '.join(MATCH_POLICIES)}")
        # One entry per state (the last wins), in state order, so equal settings compare equal.
        object.__setattr__(self, "by_state", tuple(sorted(dict(self.by_state).items())))

    @classmethod
    def build(cls, default: str = DEFAULT_POLICY, by_state: Mapping[str, str] | None = None) -> MatchSettings:
        entries = {state: policy for state, policy in (by_state or {}).items() if policy != default}
        return cls(cast(MatchPolicy, default), tuple((s, cast(MatchPolicy, p)) for s, p in entries.items()))

    @classmethod
    def parse(cls, specs: Iterable[str], default: str = DEFAULT_POLICY) -> MatchSettings:
        """Read ``--match`` values: ``STATE=POLICY`` for one state, or ``POLICY`` for every state."""
        by_state: dict[str, str] = {}
        for spec in specs:
            text = spec.strip()
            if "=" in text:
                state, _, policy = (part.strip() for part in text.partition("="))
                if not state:
                    raise MatchSpecError(f"--match {spec!r}: the state before '=' is empty")
                by_state[_state_name(state)] = _policy_name(policy, spec)
            else:
                default = _policy_name(text, spec)
        return cls.build(default, by_state)

    def policy_for(self, state: str) -> MatchPolicy:
        for name, policy in self.by_state:
            if name.casefold() == (state or "").casefold():
                return policy
        return self.default

    def judge(self, expected: str, predicted: str, state: str) -> ActionVerdict:
        return judge(expected, predicted, self.policy_for(state))

    @property
    def is_default(self) -> bool:
        """True for the seed's behaviour (``exact`` everywhere): reports then keep their old form."""
        return self.default == DEFAULT_POLICY and not self.by_state

    def as_dict(self) -> dict[str, object]:
        return {"default": self.default, "by_state": dict(self.by_state)}

    def specs(self) -> list[str]:
        """The ``--match`` values that rebuild these settings."""
        return ([self.default] if self.default != DEFAULT_POLICY else []) + [f"{s}={p}" for s, p in self.by_state]

    def describe(self) -> str:
        """``exact`` or ``exact, Search=tolerant``: which policy produced the figures."""
        return ", ".join([self.default, *(f"{s}={p}" for s, p in self.by_state)])


MATCH_STATES: tuple[str, ...] = ("Search", "Result", "Item")
"""The WebShop states a policy can be chosen for (any other state name is accepted too)."""


def _state_name(state: str) -> str:
    for known in MATCH_STATES:
        if known.casefold() == state.casefold():
            return known
    return state


def _policy_name(policy: str, spec: str) -> MatchPolicy:
    name = policy.strip().lower()
    if name not in MATCH_POLICIES:
        raise MatchSpecError(f"--match {spec!r}: unknown policy {policy!r}; choose one of {', '.join(MATCH_POLICIES)}")
    return name  # narrowed to MatchPolicy by the membership test
