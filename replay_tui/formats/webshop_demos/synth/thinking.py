"""The agent's thoughts (``llm_thinking``): why it searches, opens, pages or gives up, in the words of
a careful shopper, from what the episode knows at that step. A mixin of :class:`.episode.Episode`:
the templates apart from the mechanics of the session, drawing from the same Random in the same order."""

from __future__ import annotations

import random
from collections.abc import Sequence

from replay_tui.formats.webshop_demos.synth.goals import GoalInfo
from replay_tui.formats.webshop_demos.synth.products import Product, ResultSet
from replay_tui.formats.webshop_demos.synth.prompts import join_words


class Thoughts:
    """What the agent thinks before each decision; the attributes are the episode's (set by its ``__init__``)."""

    rng: random.Random
    info: GoalInfo
    what: str
    qwords: list[str]
    budget: float
    page: int
    visited: list[str]
    rs: ResultSet | None
    left_results: list[Product]
    note: str

    def _overlap(self, p: Product) -> list[str]:
        return [w for w in self.qwords if w in p.words]

    def _reason(self, p: Product) -> str:
        if p.low >= self.budget:
            return f"over budget at {p.price}"
        if p.kind == "off":
            return f"a different product altogether ({p.short(5)})"
        missing = [a for a in self.info.attributes if a not in p.title.lower()]
        if missing:
            return f"not described as {missing[0]}"
        return "a weaker title match"

    def _budget(self) -> str:
        return f"${self.budget:.2f}"

    def _opts(self) -> list[str]:
        return [f"{g} {v}" if g != "color" else v for g, v in self.info.options]

    def _think_search(self, query: str) -> str:
        g, rng = self.info, self.rng
        attrs, opts = list(g.stated), self._opts()
        reqs = join_words([*attrs, *opts]) or "nothing beyond the product type"
        templates = (
            f"The customer wants {self.what}{', ' + join_words(attrs) if attrs else ''}, with a budget of "
            f'{self._budget()}. I\'ll search for "{query}" and compare the results against these requirements.',
            f"Key requirements from the instruction: {reqs}. The price must stay below {self._budget()}. "
            f'A concise keyword search should surface the right product type first: "{query}".',
            f"Let me break the request down. Product: {self.what}. Must have: {join_words(attrs) or 'n/a'}. "
            f"Options to pick on the product page: {join_words(opts) or 'none'}. Max price: {self.budget:.2f} dollars. "
            "Starting with a keyword search.",
            f"I need to find {self.what} for less than {self._budget()}. "
            + (
                f"Options such as {join_words(opts, 'or')} are chosen later on the product page, so I'll keep the "
                "query focused on the product itself."
                if opts
                else f"The important detail is {join_words(attrs)}, which I'll verify on the product page."
            )
            + f' Query: "{query}".',
        )
        return rng.choice(templates)

    def _think_research(self, query: str) -> str:
        off = [p for p in self.left_results if p.kind == "off"][:2]
        seen = join_words([p.short(4) for p in off]) or "unrelated products"
        return self.rng.choice(
            (
                f'The previous results were dominated by items like {seen}. I\'ll rephrase the query as "{query}" '
                f"to get closer to {self.what}.",
                f'Back on the search page. This time I\'ll use "{query}", which should match {self.what} better '
                f"while keeping the budget of {self._budget()} in mind.",
            )
        )

    def _think_select(self, p: Product, products: Sequence[Product]) -> str:
        rng = self.rng
        overlap = self._overlap(p)
        ov = join_words(overlap[:5]) or "the product type"
        others = [q for q in products if q is not p and q.asin not in self.visited]
        other = rng.choice(others) if others else None
        lead = self._lead()
        templates = [
            f'{p.asin} "{p.short()}" at {p.price} fits the budget of {self._budget()} and mentions {ov}. '
            f"It looks like the best match on page {self.page}; opening it to check the options.",
            f'Item {p.asin} ({p.price}), "{p.short(9)}": its title matches {len(overlap)} of my '
            f"{len(self.qwords)} key words ({ov}). Let me look at the product page.",
        ]
        if other is not None:
            templates.append(
                f"Comparing the listings: {p.asin} covers {ov}, while {other.asin} ({other.short(5)}) is "
                f"{self._reason(other)}. I'll select {p.asin}."
            )
        return lead + rng.choice(templates)

    def _think_next(self, products: Sequence[Product]) -> str:
        rng = self.rng
        cands = [p for p in products if p.asin not in self.visited]
        pair = rng.sample(cands, min(2, len(cands))) if cands else []
        lead = self._lead()
        if len(pair) == 2:
            a, b = pair
            body = rng.choice(
                (
                    f"Nothing on page {self.page} is a convincing match: {a.asin} is {self._reason(a)}, and "
                    f"{b.asin} is {self._reason(b)}. I'll check page {self.page + 1}.",
                    f"Page {self.page} shows {a.short(4)} and {b.short(4)} among others, but none of them clearly "
                    f"is {self.what} under {self._budget()}. Moving to the next page.",
                )
            )
        else:
            body = f"No good candidate on page {self.page}; let me see the next page of results."
        return lead + body

    def _think_prev(self) -> str:
        prev = self.rs.pages.get(self.page - 1, []) if self.rs else []
        best = max(prev, key=lambda p: len(self._overlap(p)), default=None)
        hint = f"; {best.asin} there looked closer" if best is not None else ""
        return (
            f"{self._lead()}Page {self.page} is less relevant than page {self.page - 1}{hint}. "
            "Going back to the previous page."
        )

    def _think_back(self, products: Sequence[Product]) -> str:
        off = [p.short(4) for p in products if p.kind == "off"][:2]
        return self._lead() + self.rng.choice(
            (
                f"These results don't fit: most items are things like {join_words(off) or 'unrelated products'}. "
                "Better to go back and search with different keywords.",
                f"I'm not finding {self.what} with this query. I'll return to the search page and try again.",
            )
        )

    def _lead(self) -> str:
        """The pending note about the last item page, as the start of the next thought (consumed)."""
        lead, self.note = (self.note + " " if self.note else ""), ""
        return lead
