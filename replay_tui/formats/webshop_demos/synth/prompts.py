"""The agent's system prompt per page (its tools) and the words it joins lists with."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

_SYSTEM_HEAD = (
    "You are a meticulous online shopping assistant operating the WebShop website for a customer. "
    "Your goal is to buy the single product that best satisfies the customer's instruction: the right "
    "product type, every requested attribute and option, and a price below the stated budget.\n"
)


_SYSTEM_RULES = (
    "Rules:\n"
    "- Call exactly one of the available tools per turn; do not answer in plain text.\n"
    "- Base every decision on the current observation; never invent item IDs.\n"
    "- Prefer items whose title matches the product type and key attributes, within budget.\n"
    "- Think step by step before calling a tool, and keep your reasoning brief."
)


_TOOL_DOCS = {
    "Search": "- Search(keywords, max_price): search the catalogue with a short keyword query.",
    "select_item": "- select_item(item_id): open the product page of a listed item (its ID, e.g. B0XXXXXXXX).",
    "Next": "- Next(): show the next page of search results.",
    "Prev": "- Prev(): show the previous page of search results.",
    "Back_to_Search": "- Back_to_Search(): return to the search page to try different keywords.",
}


@lru_cache(maxsize=8)
def _system_prompt(tools: tuple[str, ...]) -> str:
    where = "the search page" if tools == ("Search",) else "a page of search results"
    docs = "\n".join(_TOOL_DOCS[t] for t in tools)
    return f"{_SYSTEM_HEAD}You are on {where}. Available tools:\n{docs}\n{_SYSTEM_RULES}"


@lru_cache(maxsize=8)
def system_prefix(tools: tuple[str, ...]) -> str:
    """``repr`` of the prompt list up to the user message's content."""
    return f"[{{'role': 'system', 'content': {_system_prompt(tools)!r}}}, {{'role': 'user', 'content': "


def join_words(items: Sequence[str], last: str = "and") -> str:
    items = list(items)
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} {last} {items[-1]}"
