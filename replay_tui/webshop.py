"""Reading WebShop observations: page kind, instruction, result items, item options, buttons.

Understands both observation forms the logs use: ``text_rich`` (``[button] X [button_]`` on its
own line, as LASER records it) and ``text`` (nodes joined with `` [SEP] ``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_BUTTON = re.compile(r"\[(?:clicked )?button\]\s*(.*?)\s*\[(?:clicked )?button_\]")
_ASIN = re.compile(r"^B[0-9A-Z]{9}$")
_PRICE = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)")
_PRICE_LIMIT = re.compile(r"price\s+(?:lower|less)\s+than\s+\$?\s*([0-9][0-9,]*(?:\.[0-9]+)?)", re.I)
_PAGE = re.compile(r"Page\s+(\d+)\s*\(Total results:\s*(\d+)\)")

SEARCH, RESULT, ITEM = "Search", "Result", "Item"
STATES = (SEARCH, RESULT, ITEM)


def _lines(observation: str) -> list[str]:
    """Observation nodes, one per entry, for either text_rich (lines) or text ([SEP]) form."""
    if "[SEP]" in observation and "[button]" not in observation:
        return [part.strip() for part in observation.split("[SEP]")]
    return [line.rstrip() for line in observation.splitlines()]


def buttons(observation: str) -> list[str]:
    """Labels of every ``[button]``/``[clicked button]`` in a text_rich observation, in order."""
    return _BUTTON.findall(observation)


def _has_button(observation: str, label: str) -> bool:
    if "[button" in observation:
        return label in buttons(observation)
    return label in _lines(observation)


def infer_state(observation: str) -> str:
    """The page kind a logged observation shows: Item, Result or Search (LASER's rule, plus Item)."""
    if _has_button(observation, "Buy Now") or _has_button(observation, "Description"):
        return ITEM
    if "Back to Search" in observation:
        return RESULT
    return SEARCH


def infer_available_actions(state: str, observation: str) -> list[str]:
    """The tool names an agent may use on this page, as the demos list them."""
    if state == SEARCH:
        return ["Search"]
    prev = ["Prev"] if _has_button(observation, "< Prev") else []
    if state == RESULT:
        return ["select_item", "Next", *prev, "Back_to_Search"]
    options = [value for values in parse_options(observation).values() for value in values]
    return ["Description", "Features", "Reviews", "Buy_Now", *prev, "Back_to_Search", *options]


def extract_instruction(observation: str) -> str:
    """The shopping instruction shown on every WebShop page ('' when absent)."""
    lines = _lines(observation)
    for position, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("Instruction:"):
            rest = stripped[len("Instruction:") :].strip()
            if rest:
                return rest
            for following in lines[position + 1 :]:
                if following.strip():
                    return following.strip()
    return ""


def price_limit(instruction: str) -> float | None:
    """The budget in 'price lower than X dollars', if the instruction states one."""
    match = _PRICE_LIMIT.search(instruction)
    return float(match.group(1).replace(",", "")) if match else None


def parse_prices(text: str) -> list[float]:
    """Every dollar amount in a price text ('$19.99 to $29.99' -> [19.99, 29.99])."""
    return [float(value.replace(",", "")) for value in _PRICE.findall(text)]


@dataclass(frozen=True)
class ResultItem:
    """One product on a results page."""

    asin: str
    title: str = ""
    price: str = ""
    visited: bool = False

    @property
    def min_price(self) -> float | None:
        prices = parse_prices(self.price)
        return min(prices) if prices else None


def parse_results(observation: str) -> list[ResultItem]:
    """Products listed on a results page, in order (ASIN, title, price, already visited)."""
    items: list[ResultItem] = []
    lines = [line.strip() for line in _lines(observation)]
    for position, line in enumerate(lines):
        match = _BUTTON.fullmatch(line)
        label = match.group(1) if match else line
        if not _ASIN.match(label):
            continue
        following = [text for text in lines[position + 1 : position + 3] if text and not _BUTTON.search(text)]
        title = following[0] if following else ""
        price = following[1] if len(following) > 1 and "$" in following[1] else ""
        items.append(ResultItem(label, title, price, visited=line.startswith("[clicked button]")))
    return items


def page_number(observation: str) -> int | None:
    """The results page number ('Page 2 (Total results: 50)' -> 2)."""
    match = _PAGE.search(observation)
    return int(match.group(1)) if match else None


@dataclass
class ItemPage:
    """What an item page offers: option groups, the chosen options, title and price."""

    options: dict[str, list[str]] = field(default_factory=dict)
    selected: list[str] = field(default_factory=list)
    title: str = ""
    price: str = ""


def parse_item_page(observation: str) -> ItemPage:
    """Option groups (name -> values), selected values, title and price of a text_rich item page.

    A group header is a plain line directly followed by two-space-indented buttons; the title is
    the line just above ``Price:``.
    """
    page = ItemPage()
    lines = observation.splitlines()
    group: str | None = None
    previous = ""
    for position, raw in enumerate(lines):
        text = raw.strip()
        match = _BUTTON.fullmatch(text)
        if match and raw.startswith("  ") and group is not None:
            page.options[group].append(match.group(1))
            if text.startswith("[clicked button]"):
                page.selected.append(match.group(1))
            continue
        group = None
        following = lines[position + 1] if position + 1 < len(lines) else ""
        if not match and text and following.startswith("  ") and _BUTTON.fullmatch(following.strip()):
            group = text
            page.options.setdefault(group, [])
        elif text.startswith("Price:"):
            page.price = text[len("Price:") :].strip()
            page.title = previous
        if text:
            previous = "" if match else text
    return page


def parse_options(observation: str) -> dict[str, list[str]]:
    """Option groups of an item page (name -> values)."""
    return parse_item_page(observation).options
