"""HeuristicPolicy: a deterministic rule-based shopper that reads only what an agent sees.

It looks at the observation and the available actions (never the recorded decision), so its
choices differ from the log the way a weak agent's would: other search keywords, another item,
no detour through Description, a skipped option. That makes mismatches visible without an LLM.
"""

from __future__ import annotations

import re
from typing import Any

from replay_tui.actions import BACK_TO_SEARCH, BUY_NOW, NEXT
from replay_tui.policies.base import PolicyFailure
from replay_tui.webshop import (
    ITEM,
    RESULT,
    SEARCH,
    extract_instruction,
    infer_state,
    page_number,
    parse_item_page,
    parse_results,
    price_limit,
)

_PRICE_CLAUSE = re.compile(r",?\s*and\s+price\s+(?:lower|less)\s+than.*$", re.I)
_LEADS = (
    "i am looking for",
    "i'm looking for",
    "im looking for",
    "looking for",
    "i would like to buy",
    "i would like",
    "i'd like to buy",
    "id like to buy",
    "i'd like",
    "id like",
    "i want to buy",
    "i want",
    "i need to buy",
    "i need",
    "find me",
    "get me",
    "please find",
    "buy me",
    "search for",
    "show me",
)
_STOPWORDS = frozenset(
    "a an the that which is are be it its with for and or of in to my me some please should has have i "
    "can you too also this these those them their there so very as by on at from will would want need "
    "like get find buy am what who".split()
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'\-./]*")


def content_words(text: str) -> list[str]:
    """Lowercased words of ``text`` without stopwords, in order, each once."""
    seen: list[str] = []
    for word in _WORD.findall(text.lower()):
        word = word.strip(".,'")
        if word and word not in _STOPWORDS and word not in seen:
            seen.append(word)
    return seen


def search_keywords(instruction: str, *, max_words: int = 8) -> str:
    """Keywords a simple shopper would type for an instruction."""
    text = _PRICE_CLAUSE.sub("", instruction.strip().lower())
    for lead in _LEADS:
        if text.startswith(lead):
            text = text[len(lead) :]
            break
    return " ".join(content_words(text)[:max_words])


class HeuristicPolicy:
    """Search with instruction keywords, pick the best-overlapping affordable item, choose options
    named in the instruction, then buy.

    ``min_overlap`` is the share of instruction words an item title must contain before the
    shopper clicks it rather than paging on (up to ``max_pages``).
    """

    name = "heuristic"

    def __init__(self, *, min_overlap: float = 0.3, max_pages: int = 2):
        self.min_overlap = min_overlap
        self.max_pages = max_pages

    def predict_action(
        self,
        observation: str,
        state: str,
        available_actions: list[str],
        llm_prompt_repr: str | None,
        recorded_step: dict[str, Any] | None = None,
        **_: Any,
    ) -> str:
        if recorded_step is not None and recorded_step.get("tool_call"):
            fmt = recorded_step.get("format") or "another format"
            raise PolicyFailure(
                "webshop_only", f"the heuristic shopper plays WebShop only; this step is a {fmt} tool call"
            )
        state = state if state in (SEARCH, RESULT, ITEM) else infer_state(observation)
        instruction = extract_instruction(observation)
        if state == SEARCH:
            return f"search[{search_keywords(instruction)}]"
        if state == RESULT:
            return self._choose_result(observation, instruction, available_actions)
        return self._choose_on_item(observation, instruction)

    def _choose_result(self, observation: str, instruction: str, available_actions: list[str]) -> str:
        wanted = content_words(_PRICE_CLAUSE.sub("", instruction))
        limit = price_limit(instruction)
        best, best_score = None, -1.0
        for item in parse_results(observation):
            title = set(content_words(item.title))
            score = sum(1 for word in wanted if word in title) / max(1, len(wanted))
            price = item.min_price
            if limit is not None and price is not None and price > limit:
                score *= 0.5
            if item.visited:
                score *= 0.8
            if score > best_score:
                best, best_score = item, score
        page = page_number(observation) or 1
        if best is not None and (best_score >= self.min_overlap or page >= self.max_pages):
            return f"click[{best.asin}]"
        if "Next" in available_actions or not available_actions:
            return f"click[{NEXT}]"
        if best is not None:
            return f"click[{best.asin}]"
        return f"click[{BACK_TO_SEARCH}]"

    def _choose_on_item(self, observation: str, instruction: str) -> str:
        page = parse_item_page(observation)
        text = " " + " ".join(_WORD.findall(instruction.lower())) + " "
        for values in page.options.values():
            if any(value in page.selected for value in values):
                continue
            for value in values:
                if f" {value.lower()} " in text:
                    return f"click[{value}]"
        return f"click[{BUY_NOW}]"
