"""Invented products: their titles (Amazon-style title case and title shapes), prices and option
values, and the result sets a search shows them in."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from replay_tui.formats.webshop_demos.synth.draws import choice
from replay_tui.formats.webshop_demos.synth.vocabulary import (
    ALNUM,
    ALNUM_WORD,
    APPAREL_SIZES,
    FEATURES,
    GROUP_POOLS,
    SMALL_WORDS,
    UPPER_WORDS,
)


@dataclass(slots=True, eq=False)
class Product:
    asin: str
    title: str
    low: float
    high: float
    kind: str  # "target", "near" or "off"
    category: str
    attr_hits: int
    r_type: float
    noun: str
    goal_values: bool = False  # whether its option groups offer the goal's option values
    groups: list[tuple[str, list[str]]] | None = None
    description: str = ""
    bullets: tuple[str, ...] = ()
    _words: frozenset[str] | None = None

    price: str = ""  # as displayed: "$x.xx" or "$x.xx to $y.yy"

    def __post_init__(self) -> None:
        if self.high > self.low:
            self.price = f"${self.low:.2f} to ${self.high:.2f}"
        else:
            self.price = f"${self.low:.2f}"

    @property
    def words(self) -> frozenset[str]:
        """Lowercase alphanumeric words of the title (computed once)."""
        if self._words is None:
            self._words = frozenset(ALNUM_WORD.findall(self.title.lower()))
        return self._words

    def short(self, n: int = 7) -> str:
        parts = self.title.split()
        return " ".join(parts[:n]) + ("..." if len(parts) > n else "")


@dataclass(slots=True)
class ResultSet:
    query: str
    target_at: tuple[int, int] | None
    pinned: Product | None = None
    pages: dict[int, list[Product]] = field(default_factory=dict)


_UNIT_TOKEN = re.compile(r"\d+(gb|tb|mm|ml|oz|w|v|hz|mah)")


@lru_cache(maxsize=16384)
def _title_word(word: str, first: bool) -> str:
    if word in UPPER_WORDS:
        return word.upper()
    if word in SMALL_WORDS and not first:
        return word
    if _UNIT_TOKEN.fullmatch(word):
        return word.upper() if word.endswith(("gb", "tb")) else word
    return word[:1].upper() + word[1:]


@lru_cache(maxsize=65536)
def _title_case_cached(words: tuple[str, ...]) -> str:
    return " ".join(_title_word(w, i == 0) for i, w in enumerate(words))


def title_case(words: Sequence[str]) -> str:
    """Amazon-style title case: small words lowercase, acronyms and storage units uppercase."""
    return _title_case_cached(tuple(words))


CENTS = (0.99, 0.99, 0.95, 0.49, 0.89, 0.0, 0.97, 0.79, 0.5)


PAIRS36 = tuple(a + b for a in ALNUM for b in ALNUM)


def _money(rng: random.Random, amount: float) -> float:
    return max(1, int(amount)) + choice(rng, CENTS)


def price_pair(rng: random.Random, low_amount: float, range_prob: float = 0.25) -> tuple[float, float]:
    low = _money(rng, low_amount)
    if rng.random() < range_prob:
        high = _money(rng, low * rng.uniform(1.2, 1.9))
        if high > low:
            return low, high
    return low, low


def style_title(rng: random.Random, brand: str, core: str, feats: Sequence[str], category: str) -> str:
    f1 = feats[0] if feats else "Gift Idea"
    f2 = feats[1] if len(feats) > 1 else choice(rng, FEATURES[category])
    pattern = int(rng.random() * 9)
    if pattern == 0:
        return f"{brand} {core}, {f1}, {f2}"
    if pattern == 1:
        return f"{brand} {core} - {f1} & {f2}"
    if pattern == 2:
        return f"{core} by {brand} | {f1} | {f2}"
    if pattern == 3:
        return f"[{choice(rng, (2, 3, 4, 6))} Pack] {brand} {core}, {f1}"
    if pattern == 4:
        return f"{brand} {core} with {f1}, {f2} (Pack of {choice(rng, (1, 2, 3, 6, 12))})"
    if pattern == 5 and category in ("home", "electronics"):
        return f'{brand} {choice(rng, (6, 10, 12, 24, 32, 36, 48))}" {core} - {f1}, {f2}'
    if pattern == 6:
        return f'{brand.upper()} {core} "{f1}" Edition, {f2}'
    if pattern == 7:
        return f"{core}, {f1} - {f2} | {brand}"
    return f"{brand} {core} {f1}"


def sibling_values(group: str, value: str, category: str, rng: random.Random, k: int) -> list[str]:
    """Other plausible values of an option group, for the options next to a goal value."""
    m = re.search(r"\d+(?:\.\d+)?", value)
    if m:
        n = float(m.group(0))
        if "." in m.group(0) or (category == "fashion" and n <= 15):
            pool = [x / 2 for x in range(10, 27)]
        else:
            pool = [float(x) for x in (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 16, 20, 24, 32, 36, 48, 64)]
        candidates = [x for x in pool if x != n]
        picks = sorted([*rng.sample(candidates, min(k, len(candidates))), n])
        return [value[: m.start()] + f"{x:g}" + value[m.end() :] for x in picks]
    if value in APPAREL_SIZES:
        return list(APPAREL_SIZES[: max(k + 1, APPAREL_SIZES.index(value) + 1)])
    pools = GROUP_POOLS[category]
    names = list(pools.get(group) or pools.get("color") or ())
    if group == "color":
        names += ["black", "white", "grey", "navy", "brown", "beige"]
    others = [v for v in dict.fromkeys(names) if v != value]
    values = [*rng.sample(others, min(k, len(others))), value]
    rng.shuffle(values)
    return values
