"""The WebShop env-action grammar: tool call <-> action string, parsing and normalization.

Actions look like ``search[<keywords>]`` or ``click[<button or item>]``. Agents speak in tool
calls (``Search {"keywords": ...}``, ``select_item {"item_id": ...}``); the recorded logs store
both; :mod:`replay_tui.matching` compares them after this module's normalization.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

StringCase = Literal["exact", "lower", "env", "typed", "tolerant"]
"""How :func:`normalize_action` folds case: ``exact`` keeps it, ``lower`` lowercases everything,
``env`` (and the typed policies, whose string form it is) lowercases only the bracket argument.
Verdicts are made in :mod:`replay_tui.matching`, not here."""

# Buttons whose text is fixed in WebShop's templates.
NEXT = "Next >"
PREV = "< Prev"
BACK_TO_SEARCH = "Back to Search"
BUY_NOW = "Buy Now"

# Canonical tool name -> constant action (tools without arguments).
CONSTANT_TOOLS: dict[str, str] = {
    "Next": f"click[{NEXT}]",
    "Prev": f"click[{PREV}]",
    "Back_to_Search": f"click[{BACK_TO_SEARCH}]",
    "Description": "click[description]",
    "Features": "click[features]",
    "Reviews": "click[reviews]",
    "Buy_Now": f"click[{BUY_NOW}]",
}

CANONICAL_TOOLS: tuple[str, ...] = ("Search", "select_item", "select_option", *CONSTANT_TOOLS)

# Folded alias (lowercase, no separators) -> canonical tool name.
_ALIASES: dict[str, str] = {
    "search": "Search",
    "searchproducts": "Search",
    "selectitem": "select_item",
    "clickitem": "select_item",
    "selectproduct": "select_item",
    "item": "select_item",
    "next": "Next",
    "nextpage": "Next",
    "prev": "Prev",
    "previous": "Prev",
    "previouspage": "Prev",
    "prevpage": "Prev",
    "goback": "Prev",
    "backtosearch": "Back_to_Search",
    "description": "Description",
    "features": "Features",
    "reviews": "Reviews",
    "buynow": "Buy_Now",
    "buy": "Buy_Now",
    "selectoption": "select_option",
    "option": "select_option",
    "chooseoption": "select_option",
    "clickoption": "select_option",
    "customize": "select_option",
}

_KEYWORD_ARGS = ("keywords", "keyword", "query", "search_query", "search_term", "text")
_ITEM_ARGS = ("item_id", "item", "asin", "product_id", "id")
_OPTION_ARGS = ("option_value", "value", "option", "choice")


class ActionError(ValueError):
    """A tool call or action string that cannot be turned into a WebShop action."""


class ParsedAction(NamedTuple):
    """An action string split into its kind (``search`` or ``click``) and its bracket argument."""

    kind: str
    argument: str


_SEPARATORS = re.compile(r"[\s_\-.]+")
_CANONICAL: dict[str, str | None] = {}
"""canonical_tool's answers by name: a log uses a handful of tool names, asked once per step."""


def fold_tool_name(name: str) -> str:
    """Fold a tool name for alias lookup: lowercase, without ``_``, ``-``, spaces and dots."""
    return _SEPARATORS.sub("", name).lower()


def canonical_tool(name: str) -> str | None:
    """Return the canonical tool name for ``name`` (any case, any alias), or None when unknown."""
    try:
        return _CANONICAL[name]
    except KeyError:
        found = _ALIASES.get(fold_tool_name(name))
        if len(_CANONICAL) < 4096:  # bounded: names come from the logs
            _CANONICAL[name] = found
        return found


def _first_arg(arguments: Mapping[str, Any], names: tuple[str, ...]) -> str | None:
    for key in names:
        value = arguments.get(key)
        if value is not None and str(value).strip():
            return str(value)
    # Tolerate odd key case ("Keywords") before giving up.
    lowered = {str(k).lower(): v for k, v in arguments.items()}
    for key in names:
        value = lowered.get(key)
        if value is not None and str(value).strip():
            return str(value)
    return None


def format_env_action(name: str, arguments: Mapping[str, Any] | None = None) -> str:
    """Format a tool call as the env action string the demos record.

    ``Search{keywords}`` -> ``search[keywords]``, ``select_item{item_id}`` -> ``click[item_id]``,
    ``Next`` -> ``click[Next >]`` ... ``select_option{value}`` -> ``click[value]``.
    Raises :class:`ActionError` for an unknown tool or a missing required argument.
    """
    arguments = dict(arguments or {})
    tool = canonical_tool(name or "")
    if tool is None:
        # An option value used directly as the tool name, with a value argument, is still a click.
        value = _first_arg(arguments, _OPTION_ARGS)
        if value is not None:
            return f"click[{value}]"
        raise ActionError(f"unknown tool {name!r}; known tools: {', '.join(CANONICAL_TOOLS)}")
    if tool in CONSTANT_TOOLS:
        return CONSTANT_TOOLS[tool]
    if tool == "Search":
        keywords = _first_arg(arguments, _KEYWORD_ARGS)
        if keywords is None:
            raise ActionError(f"tool {name!r} needs a 'keywords' argument, got {sorted(arguments)}")
        return f"search[{keywords}]"
    if tool == "select_item":
        item = _first_arg(arguments, _ITEM_ARGS)
        if item is None:
            raise ActionError(f"tool {name!r} needs an 'item_id' argument, got {sorted(arguments)}")
        return f"click[{item}]"
    value = _first_arg(arguments, _OPTION_ARGS)
    if value is None:
        raise ActionError(f"tool {name!r} needs a 'value' argument, got {sorted(arguments)}")
    return f"click[{value}]"


_ACTION_RE = re.compile(r"^\s*([A-Za-z_]+)\s*\[(.*)\]\s*$", re.DOTALL)


def parse_action(action: str) -> ParsedAction:
    """Split ``kind[argument]`` into its parts (argument stripped); raise :class:`ActionError` if not."""
    match = _ACTION_RE.match(action or "")
    if match is None:
        raise ActionError(f"not an action of the form kind[argument]: {action!r}")
    return ParsedAction(match.group(1), match.group(2).strip())


def try_parse_action(action: str) -> ParsedAction | None:
    """:func:`parse_action`, returning None instead of raising."""
    try:
        return parse_action(action)
    except ActionError:
        return None


_SPACES = re.compile(r"\s+")


def normalize_action(action: str, case: StringCase = "exact") -> str:
    """Normalize an action string for comparison, as the seed specifies.

    Strips, collapses every whitespace run to one space, and strips inside the brackets, so
    ``" click[ Next  > ] "`` becomes ``"click[Next >]"``. Case follows ``case``. Text that is not
    of the form ``kind[argument]`` is only stripped, collapsed and case-folded.
    """
    if case in ("typed", "tolerant"):
        case = "env"  # the closest string form; the typed comparisons live in replay_tui.matching
    text = _SPACES.sub(" ", (action or "").strip())
    parsed = try_parse_action(text)
    if parsed is not None:
        kind, argument = parsed
        if case == "env":
            argument = argument.lower()
        text = f"{kind}[{argument}]"
    if case == "lower":
        text = text.lower()
    return text
