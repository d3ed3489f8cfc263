"""Goals: the real WebShop instructions and queries (``data/goal_query_map.json``) parsed into
category, attributes and options, and the product titles that nearly or not at all match each."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from replay_tui.formats.webshop_demos.synth.draws import choice, two
from replay_tui.formats.webshop_demos.synth.products import style_title, title_case
from replay_tui.formats.webshop_demos.synth.vocabulary import (
    ALT_WORDS,
    ATTR_RE,
    BRANDS,
    CATEGORIES,
    COLOR_RE,
    DEFAULT_ATTRS,
    EDGE_WORDS,
    FASHION_SIZE_RE,
    FEATURES,
    FILLER,
    KEYWORD_CATEGORY,
    MEASURE_RE,
    PRICE_PHRASE,
    SIZE_RE,
    WORD,
)


@lru_cache(maxsize=1)
def goal_pairs() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Real WebShop (instruction, queries) pairs, sorted by instruction for a stable order."""
    text = resources.files(__package__).joinpath("data/goal_query_map.json").read_text(encoding="utf-8")
    data: dict[str, list[str]] = json.loads(text)
    pairs = []
    for instruction, queries in sorted(data.items()):
        unique: list[str] = []
        for q in queries:
            q = q.strip()
            if q and q not in unique:
                unique.append(q)
        if unique:
            pairs.append((instruction, tuple(unique)))
    return tuple(pairs)


def _content_words(text: str) -> list[str]:
    """Lowercase content words of a query, without price phrases and filler, edges trimmed."""
    text = PRICE_PHRASE.sub(" ", text.lower()).replace(",", " ")
    words = [w.strip(".'") for w in WORD.findall(text)]
    words = [w for w in words if w and w not in FILLER]
    while words and words[0] in EDGE_WORDS:
        words.pop(0)
    while words and words[-1] in EDGE_WORDS:
        words.pop()
    return words[:10]


def _category(core: Sequence[str], words: Iterable[str]) -> str:
    """The product category: keyword votes, with the query's last words (the head noun) counting more."""
    counts = dict.fromkeys(CATEGORIES, 0)
    weighted = [(w, 1) for w in words] + [(w, 2) for w in core[-2:]]
    for w, weight in weighted:
        cat = KEYWORD_CATEGORY.get(w) or (KEYWORD_CATEGORY.get(w[:-1]) if w.endswith("s") else None)
        if cat is not None:
            counts[cat] += weight
    best = max(CATEGORIES, key=lambda c: counts[c])
    return best if counts[best] else "home"


def _option_value(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower().replace("/", " | "))


def _extract_options(text: str, category: str) -> list[tuple[str, str]]:
    """Goal options (group, value) mentioned in an instruction: at most one color and one size."""
    options: list[tuple[str, str]] = []
    m = COLOR_RE.search(text)
    if m:
        options.append(("color", _option_value(m.group(0))))
    size: str | None = None
    m = SIZE_RE.search(text)
    if m:
        size = m.group(1) or m.group(2) or m.group(3)
    if size is None and category == "fashion":
        m = FASHION_SIZE_RE.search(text)
        if m:
            size = m.group(1)
    if size is None:
        m = MEASURE_RE.search(text)
        if m:
            size = m.group(3) or f"{m.group(1)} {m.group(2)}"
    if size is not None:
        options.append(("size", _option_value(size)))
    return options


_CLAUSE_WORDS = frozenset({*EDGE_WORDS, "made", "that", "which", "size", "color", "colored", "pack"})


def _noun_phrase(core: Sequence[str]) -> str:
    """The last two words of the query's main segment (cut at "for", "with", "made"...): its head noun."""
    segments: list[list[str]] = [[]]
    for w in core:
        if w in _CLAUSE_WORDS:
            segments.append([])
        elif not any(ch.isdigit() for ch in w):
            segments[-1].append(w)
    segments = [seg for seg in segments if seg] or [list(core) or ["item"]]
    keyed = [seg for seg in segments if any(w in KEYWORD_CATEGORY or w[:-1] in KEYWORD_CATEGORY for w in seg)]
    best = max(keyed or segments, key=len)
    return " ".join(best[-2:])


@dataclass(frozen=True, slots=True)
class GoalInfo:
    base: str
    queries: tuple[str, ...]
    category: str
    core: tuple[str, ...]
    attributes: tuple[str, ...]
    stated: tuple[str, ...]  # the attributes the instruction states (the rest are implicit)
    options: tuple[tuple[str, str], ...]
    noun: str  # a short noun phrase for the product ("seed oil"), for descriptions


@cache
def goal_info(index: int) -> GoalInfo:
    instruction, queries = goal_pairs()[index]
    base = re.sub(r"[\s.]+$", "", instruction.strip())
    text = base.lower().replace("-", " ")
    core = _content_words(queries[0]) or _content_words(base)
    category = _category(core, WORD.findall(text))
    attrs: list[str] = []
    for m in ATTR_RE.finditer(text):
        if m.group(1) not in attrs:
            attrs.append(m.group(1))
    stated = tuple(attrs[:3])
    if not attrs:
        defaults = DEFAULT_ATTRS[category]
        attrs.append(defaults[index % len(defaults)])
    options = _extract_options(base.lower(), category)
    noun = _noun_phrase(core)
    return GoalInfo(base, queries, category, tuple(core), tuple(attrs[:3]), stated, tuple(options), noun)


@cache
def near_titles(index: int, hits: int) -> tuple[tuple[str, str], ...]:
    """(title, noun) variants of near misses for goal ``index`` that have only ``hits`` of its attributes."""
    info = goal_info(index)
    rng = random.Random(f"replay_tui.synth:near:{index}:{hits}")
    kept = info.attributes[:hits]
    text = " ".join(info.core)
    for a in info.attributes[hits:]:
        text = text.replace(a, " ")
    base = [w for w in text.split() if w != "size"] or list(info.core)
    variants = []
    for _ in range(_NEAR_TITLES):
        words = list(base)
        for _ in range(rng.randint(1, 2)):
            if len(words) > 2:
                words.pop(rng.randrange(len(words) - 1))
        words.insert(rng.randrange(len(words) + 1), rng.choice(ALT_WORDS).lower())
        shown = [title_case(a.split()) for a in kept if a not in text]
        feats = ([" & ".join(shown)] if shown else []) + rng.sample(FEATURES[info.category], 2)
        title = style_title(rng, rng.choice(BRANDS), title_case(words), feats, info.category)
        variants.append((title, info.noun))
    return tuple(variants)


@cache
def off_parts(index: int) -> tuple[tuple[str, ...], str, str]:
    """Product titles, noun phrase and category for goal ``index``, used as unrelated search results."""
    info = goal_info(index)
    core = [w for w in info.core if w != "size"] or ["gift", "set"]
    rng = random.Random(f"replay_tui.synth:off:{index}")
    text, features = title_case(core), FEATURES[info.category]
    titles = tuple(
        style_title(rng, choice(rng, BRANDS), text, two(rng, features), info.category) for _ in range(_OFF_TITLES)
    )
    return titles, info.noun, info.category


@cache
def goals_by_category() -> dict[str, tuple[int, ...]]:
    groups: dict[str, list[int]] = {c: [] for c in CATEGORIES}
    for i in range(len(goal_pairs())):
        groups[goal_info(i).category].append(i)
    return {c: tuple(v) for c, v in groups.items()}


_NEAR_TITLES = 8  # title variants per (goal, attribute hits) for near-miss search results


_OFF_TITLES = 6  # title variants per goal when it shows up as an unrelated search result
