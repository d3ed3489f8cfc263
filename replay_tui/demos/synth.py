"""Deterministic generator of realistic, synthetic WebShop demonstration logs.

Episodes follow the demonstration-log data contract (``webshop_demonstrations_{start}-{end}.json``):
a JSON array of episodes whose trajectories hold LASER-style decision steps (``Search`` / ``Result``
states) and item-page sub-events (``item_page_action``, ``detail_exploration``, ``back_from_detail``,
``customization_click``, ``agent_buy``, ``backup_agent_*``). Observations are rendered in WebShop's
``text_rich`` form. Instructions and search queries are real WebShop crowd-sourced pairs
(``data/goal_query_map.json``, MIT); products, prices, rewards and trajectories are invented.

Every episode is a pure function of ``(seed, session_id)``, so any slice of sessions is reproducible.
``replay-tui generate`` is its command line; ``replay-tui generate --bundled`` regenerates the bundled
example file.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from replay_tui.actions import format_env_action

__all__ = [
    "BUNDLED_COUNT",
    "BUNDLED_QUIRK_RATE",
    "BUNDLED_SEED",
    "BUNDLED_START",
    "DemoFileStats",
    "bundled_example_path",
    "default_filename",
    "generate_episode",
    "iter_episodes",
    "write_bundled_example",
    "write_demo_file",
]

BUNDLED_SEED = 0
BUNDLED_START = 0
BUNDLED_COUNT = 100
BUNDLED_QUIRK_RATE = 0.1

# Outcome mix of non-quirk content: success, partial reward, zero reward, completed by the backup agent.
_OUTCOMES: tuple[tuple[str, float], ...] = (("success", 0.55), ("partial", 0.30), ("zero", 0.05), ("backup", 0.10))

# --------------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------------

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

_BRANDS = (
    "Lumora",
    "KASTELL",
    "Brightfield",
    "NovaHome",
    "Zephyr & Co.",
    "PURELEAF",
    "Hollis",
    "OAKRIDGE",
    "Veloce",
    "Mirabel",
    "Tidewell",
    "QUNMEI",
    "AURORA LANE",
    "Greystone",
    "Pinecrest",
    "Sundew",
    "Kindred Kitchen",
    "Altura",
    "BLISSO",
    "Fernhill",
    "Copperline",
    "YOUNGSTAR",
    "Everwell",
    "Harbor & Pine",
    "VIVREAL",
    "Maple Row",
    "ZENKO",
    "Solvane",
    "Norvik",
    "Bellarosa",
    "TRUEMADE",
    "Wildgrain",
    "Coastline",
    "HEXWARE",
    "Ardent",
    "Moss & Fern",
    "ELEVOR",
    "Quillon",
    "Saffire",
    "Kettle Creek",
    "OMNIVOLT",
    "Linden Lane",
    "Petalique",
    "RIVERSTONE",
    "Gallant",
    "Yuzuki",
)

_SMALL_WORDS = frozenset({"for", "with", "and", "of", "in", "to", "or", "on", "by", "a", "the", "at"})
_UPPER_WORDS = frozenset(
    {
        "hdmi",
        "usb",
        "led",
        "hd",
        "uhd",
        "4k",
        "tv",
        "ssd",
        "ram",
        "lcd",
        "bpa",
        "gmo",
        "usda",
        "uv",
        "spf",
        "ac",
        "dc",
        "pc",
        "xl",
        "xxl",
        "diy",
        "rgb",
        "ipad",
        "gps",
        "cpu",
        "hdr",
        "oz",
    }
)
_FILLER = frozenset(
    {
        "i",
        "im",
        "i'm",
        "id",
        "i'd",
        "need",
        "want",
        "looking",
        "please",
        "cheap",
        "me",
        "my",
        "some",
        "a",
        "an",
        "the",
        "that",
        "is",
        "are",
        "which",
        "also",
        "choose",
        "would",
        "like",
        "get",
        "find",
        "buy",
        "dollars",
        "dollar",
        "price",
        "thats",
        "it",
        "its",
        "should",
        "be",
        "can",
        "you",
        "this",
        "something",
    }
)
_EDGE_WORDS = frozenset({"for", "with", "and", "of", "in", "to", "or", "on", "by", "at", "from"})
_PRICE_PHRASE = re.compile(
    r"\b(?:up to|under|less than|lower than|below|within|max|around)\s*\$?\s*\d+(?:\.\d+)?\s*(?:dollars?|usd)?",
)
_ALNUM_WORD = re.compile(r"[a-z0-9]+")
_WORD = re.compile(r"[a-z0-9][a-z0-9.'&+/-]*")

_CATEGORY_KEYWORDS: dict[str, tuple[str, ...]] = {
    "fashion": (
        "shoe",
        "shoes",
        "sneaker",
        "sneakers",
        "boot",
        "boots",
        "sandal",
        "sandals",
        "slipper",
        "slippers",
        "dress",
        "shirt",
        "t-shirt",
        "shirts",
        "pants",
        "jeans",
        "jacket",
        "coat",
        "hoodie",
        "sweater",
        "pullover",
        "underwear",
        "bra",
        "socks",
        "sock",
        "jumpsuit",
        "leggings",
        "shorts",
        "skirt",
        "blouse",
        "tank",
        "hat",
        "sweatshirt",
        "womens",
        "mens",
        "sleeve",
        "waist",
        "fit",
        "loafers",
        "heels",
        "swimsuit",
        "pajama",
        "pajamas",
        "vest",
        "tunic",
        "polo",
        "romper",
        "cardigan",
        "tops",
    ),
    "beauty": (
        "hair",
        "shampoo",
        "conditioner",
        "lipstick",
        "lip",
        "makeup",
        "nail",
        "serum",
        "cream",
        "lotion",
        "mask",
        "perfume",
        "deodorant",
        "brush",
        "wig",
        "extension",
        "extensions",
        "toothpaste",
        "skin",
        "face",
        "eye",
        "spray",
        "foundation",
        "toothbrush",
        "teeth",
        "beauty",
        "salon",
        "oil",
        "scrub",
        "soap",
        "polish",
        "eyeliner",
        "mascara",
        "moisturizer",
        "fragrance",
        "cosmetic",
        "dye",
    ),
    "grocery": (
        "snack",
        "snacks",
        "cookie",
        "cookies",
        "candy",
        "chocolate",
        "tea",
        "coffee",
        "sauce",
        "cereal",
        "granola",
        "chips",
        "cheese",
        "nuts",
        "protein",
        "gluten",
        "keto",
        "flavor",
        "flavored",
        "syrup",
        "juice",
        "jerky",
        "bars",
        "seasoning",
        "cupcake",
        "cake",
        "sugar",
        "organic",
        "drink",
        "fruit",
        "butter",
        "salt",
        "honey",
        "crackers",
        "popcorn",
        "spice",
        "gum",
        "toppers",
        "almond",
        "vegan",
        "raspberry",
        "snackbar",
        "nut",
        "sodium",
        "food",
        "meal",
        "bar",
        "jelly",
        "oatmeal",
        "pasta",
        "rice",
        "soup",
        "water",
        "milk",
        "creamer",
        "beef",
        "chicken",
        "dessert",
    ),
    "home": (
        "table",
        "chair",
        "sofa",
        "bed",
        "desk",
        "lamp",
        "light",
        "lights",
        "curtain",
        "curtains",
        "rug",
        "shelf",
        "cabinet",
        "bench",
        "mattress",
        "pillow",
        "storage",
        "wall",
        "decor",
        "ottoman",
        "stool",
        "room",
        "living",
        "dining",
        "bedroom",
        "blanket",
        "throw",
        "vanity",
        "sconce",
        "pendant",
        "mirror",
        "towel",
        "shower",
        "bathroom",
        "kitchen",
        "candle",
        "candles",
        "frame",
        "furniture",
        "nightstand",
        "finish",
        "nickel",
        "metal",
        "wood",
        "wooden",
        "mount",
        "hanging",
        "coasters",
        "cushion",
        "cushions",
    ),
    "electronics": (
        "camera",
        "cable",
        "hdmi",
        "charger",
        "headphone",
        "headphones",
        "earbuds",
        "speaker",
        "tv",
        "projector",
        "laptop",
        "computer",
        "usb",
        "bluetooth",
        "wireless",
        "router",
        "phone",
        "case",
        "keyboard",
        "mouse",
        "monitor",
        "battery",
        "batteries",
        "amplifier",
        "adapter",
        "tablet",
        "desktop",
        "intel",
        "core",
        "ram",
        "ssd",
        "gb",
        "samsung",
        "galaxy",
        "iphone",
        "charging",
        "remote",
        "screen",
    ),
}
_CATEGORIES = tuple(_CATEGORY_KEYWORDS)
_KEYWORD_CATEGORY = {w: c for c, ws in _CATEGORY_KEYWORDS.items() for w in ws}

_PRICE_RANGE = {"fashion": (9, 75), "beauty": (5, 55), "grocery": (4, 45), "home": (25, 320), "electronics": (9, 260)}

_FEATURES: dict[str, tuple[str, ...]] = {
    "fashion": (
        "Casual Comfortable Fit",
        "Lightweight & Breathable",
        "Gift for Women",
        "Men's Classic Style",
        "Soft Stretch Fabric",
        "Everyday Wear",
        "Slip-On Design",
        "Regular Fit",
        "All-Season",
        "Athletic Workout Gear",
        "Women's Fashion",
        "Non-Slip Outsole",
        "Vintage Look",
        "Daily Outfit",
    ),
    "beauty": (
        "Cruelty Free",
        "For All Skin Types",
        "Travel Size",
        "Salon Quality",
        "Gift Set for Women",
        "Vegan Formula",
        "Paraben Free",
        "Professional Use",
        "Dermatologist Tested",
        "Gentle & Soothing",
        "Fast Absorbing",
        "Lightweight Formula",
        "Made with Botanicals",
    ),
    "grocery": (
        "Healthy Snack",
        "Resealable Bag",
        "Family Size",
        "Keto Friendly",
        "No Artificial Flavors",
        "Individually Wrapped",
        "Great for Gifting",
        "Made in USA",
        "Kosher",
        "Non-GMO Project Verified",
        "Low Sodium",
        "Party Favor",
        "Breakfast & Brunch",
    ),
    "home": (
        "Modern Design",
        "Easy Assembly",
        "for Living Room Bedroom",
        "Space Saving",
        "Heavy Duty",
        "Home Decor",
        "Farmhouse Style",
        "Mid-Century",
        "Non-Slip Feet",
        "Rustic Brown Finish",
        "Office & Dorm",
        "Sturdy Metal Frame",
        "Decorative Accent",
    ),
    "electronics": (
        "Plug and Play",
        "Fast Charging",
        "4K@60Hz",
        "Gold Plated Connectors",
        "Compatible with iPhone & Android",
        "Noise Cancelling",
        "Long Battery Life",
        "Bluetooth 5.0",
        "1 Year Warranty",
        "USB-C",
        "Durable Nylon Braided",
        "Ultra Slim",
        "Low Latency",
    ),
}

_ALT_WORDS = (
    "Premium",
    "Classic",
    "Deluxe",
    "Mini",
    "Pro",
    "Vintage",
    "Compact",
    "Plus",
    "Original",
    "Ultra",
    "Essential",
    "Signature",
    "Everyday",
    "Elite",
    "Basic",
    "Travel",
    "Kids",
    "Outdoor",
    "Studio",
)

_DEFAULT_ATTRS = {
    "fashion": ("machine wash", "daily wear"),
    "beauty": ("long lasting", "easy to use"),
    "grocery": ("ready to eat", "great for gifting"),
    "home": ("easy to assemble", "living room"),
    "electronics": ("high speed", "easy to use"),
}

_ATTRIBUTE_PHRASES = (
    "gluten free",
    "sugar free",
    "dairy free",
    "soy free",
    "fat free",
    "non gmo",
    "usda organic",
    "organic",
    "keto",
    "low carb",
    "low fat",
    "low calorie",
    "zero sugar",
    "plant based",
    "vegan",
    "caffeine free",
    "ready to eat",
    "individually wrapped",
    "natural ingredients",
    "high protein",
    "long lasting",
    "natural looking",
    "easy to use",
    "easy to clean",
    "easy to install",
    "easy to assemble",
    "easy to apply",
    "easy to carry",
    "high quality",
    "high speed",
    "high resolution",
    "optical zoom",
    "wireless",
    "bluetooth",
    "noise cancelling",
    "fast charging",
    "water resistant",
    "waterproof",
    "non slip",
    "anti slip",
    "rubber sole",
    "arch support",
    "machine wash",
    "machine washable",
    "hand wash",
    "quick drying",
    "loose fit",
    "relaxed fit",
    "slim fit",
    "high waist",
    "elastic waist",
    "long sleeve",
    "short sleeve",
    "button closure",
    "memory foam",
    "solid wood",
    "living room",
    "dining room",
    "storage space",
    "stainless steel",
    "heavy duty",
    "lightweight",
    "portable",
    "dust proof",
    "gold plated",
    "brushed nickel",
    "tempered glass",
    "cruelty free",
    "paraben free",
    "alcohol free",
    "fragrance free",
    "sensitive skin",
    "dry skin",
    "hair loss",
    "hair growth",
    "bad breath",
    "fine mist",
    "clinically proven",
    "highly pigmented",
    "faux fur",
    "mid century",
    "plug and play",
    "dual band",
    "super soft",
    "daily wear",
    "nut free",
    "low sodium",
    "bpa free",
    "dishwasher safe",
    "fully assembled",
    "non toxic",
)
_ATTR_RE = re.compile(
    r"\b(" + "|".join(re.escape(p) for p in sorted(_ATTRIBUTE_PHRASES, key=len, reverse=True)) + r")\b"
)

_COLOR_WORDS = (
    "black",
    "white",
    "grey",
    "gray",
    "navy",
    "red",
    "pink",
    "blue",
    "green",
    "brown",
    "beige",
    "ivory",
    "silver",
    "yellow",
    "orange",
    "purple",
    "khaki",
    "tan",
    "cream",
    "burgundy",
    "teal",
    "charcoal",
    "multicolor",
    "olive",
    "coral",
    "mint",
    "lavender",
    "turquoise",
    "maroon",
    "walnut",
    "espresso",
)
_COLOR_RE = re.compile(
    r"\b((?:dark|light|deep|pale|hot|navy|royal|sky|rose|off|bright|baby)\s)?(" + "|".join(_COLOR_WORDS) + r")\b"
    r"(?!\s(?:tea|plated|tone|toned|label|apple|bean|beans|chili|pepper|onion|olives|card))"
)
_SIZE_RE = re.compile(
    r"\bsize\s+(\d+(?:\.\d+)?(?:\s+wide)?|\d?x{0,3}-?(?:small|large)|medium|small|large)\b"
    r"|\b(\d?x{1,3}-(?:small|large)|x-small)\b"
    r"|\b(twin|full|queen|king|california king) size\b"
)
_FASHION_SIZE_RE = re.compile(r"\b(?:in (?:a |size )?)?(small|medium|large)\b(?!\s(?:capacity|size|room|dog|batch))")
_MEASURE_RE = re.compile(
    r"\b(\d+(?:\.\d+)?)\s*(inch|inches|feet|foot|ft|fl oz|fluid ounce|oz|ounce|ounces|pound|pounds|lb|lbs|"
    r"count|ct|pack|pcs|piece|pieces|gb|tb|ml)\b"
    r"|\b(pack of \d+)\b"
)

_APPAREL_SIZES = ("x-small", "small", "medium", "large", "x-large", "xx-large", "3x-large")
_SHOE_WORDS = frozenset(
    {
        "shoe",
        "shoes",
        "sneaker",
        "sneakers",
        "boot",
        "boots",
        "sandal",
        "sandals",
        "slipper",
        "slippers",
        "loafers",
        "heels",
    }
)

_GROUP_POOLS: dict[str, dict[str, tuple[str, ...]]] = {
    "fashion": {
        "color": (
            "black",
            "white",
            "navy blue",
            "grey",
            "beige",
            "red",
            "pink",
            "dark brown",
            "light blue",
            "green",
            "khaki",
            "burgundy",
            "black | white",
            "brown | tan",
            "olive",
        ),
        "size": _APPAREL_SIZES,
    },
    "beauty": {
        "color": (
            "natural black",
            "dark brown",
            "light brown",
            "blonde",
            "#02 nude",
            "#05 rose",
            "ruby red",
            "clear",
            "ash brown | blonde",
        ),
        "size": ("0.5 fl oz", "1 fl oz (pack of 1)", "1.7 fl oz", "3.4 fl oz", "8 fl oz (pack of 2)", "travel size"),
        "scent": ("lavender", "unscented", "vanilla", "coconut", "fresh linen", "eucalyptus mint", "rose"),
    },
    "grocery": {
        "flavor name": (
            "original",
            "honey",
            "chocolate",
            "vanilla",
            "sea salt",
            "cinnamon",
            "strawberry",
            "variety pack",
            "peanut butter",
            "sea salt & vinegar",
        ),
        "size": (
            "4 ounce (pack of 1)",
            "6 ounce (pack of 6)",
            "12 ounce (pack of 12)",
            "1 pound (pack of 1)",
            "2 pound",
            "24 count",
            "16 count (pack of 2)",
        ),
    },
    "home": {
        "color": (
            "walnut",
            "oak",
            "espresso",
            "white",
            "black",
            "grey wash",
            "rustic brown",
            "natural",
            "navy",
            "beige | cream",
        ),
        "size": ('24" x 36"', "30 inch", "36 inch", "48 inch", "small", "large", "queen", "king", "2 pack"),
        "style": ("modern", "farmhouse", "industrial", "mid-century", "contemporary", "classic"),
    },
    "electronics": {
        "color": ("black", "white", "silver", "space grey", "blue", "red", "rose gold"),
        "size": ("3 feet", "6 feet", "10 feet", "15 feet", "1 pack", "2 pack", "3 pack"),
        "style": ("standard", "pro", "with adapter", "bundle", "international version"),
    },
}

_DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "fashion": (
        "Designed for all-day comfort, this {noun} pairs a relaxed silhouette with durable stitching.",
        "Our {noun} is cut from soft, breathable fabric that keeps its shape wash after wash.",
        "A wardrobe staple: the {noun} goes from weekend errands to casual Fridays with ease.",
        "Please check the size chart before ordering; this {noun} runs true to size.",
    ),
    "beauty": (
        "This {noun} is formulated without harsh chemicals and suits sensitive skin.",
        "Salon-grade results at home: apply the {noun} evenly and enjoy a natural finish.",
        "Each {noun} is tested for safety and never tested on animals.",
        "A lightweight {noun} that blends in seconds and lasts through the day.",
    ),
    "grocery": (
        "Our {noun} is made in small batches from simple, recognizable ingredients.",
        "Perfect for lunch boxes, road trips and afternoon cravings, this {noun} travels well.",
        "Every bag of {noun} is packed fresh and sealed to lock in flavor.",
        "Enjoy the {noun} on its own or pair it with your favorite recipes.",
    ),
    "home": (
        "Crafted with a sturdy frame, this {noun} adds warmth to any living space.",
        "The {noun} arrives with all hardware included and assembles in about 20 minutes.",
        "A clean, timeless {noun} that complements modern and farmhouse interiors alike.",
        "Wipe the {noun} clean with a damp cloth; avoid harsh detergents.",
    ),
    "electronics": (
        "This {noun} delivers reliable performance with broad device compatibility.",
        "Plug in the {noun} and go: no drivers or setup required.",
        "Built to last, the {noun} is tested for thousands of cycles.",
        "Package includes the {noun}, a quick start guide and our 12-month warranty card.",
    ),
}

_BULLETS: dict[str, tuple[str, ...]] = {
    "fashion": (
        "Soft, breathable material that is gentle on skin",
        "Reinforced stitching for everyday durability",
        "Machine wash cold, tumble dry low",
        "True to size; see the size chart in the images",
        "Versatile look for work, travel and weekends",
        "Imported",
    ),
    "beauty": (
        "Gentle formula suitable for daily use",
        "Free of parabens, sulfates and phthalates",
        "Dermatologist tested and cruelty free",
        "Compact packaging that is easy to carry",
        "Apply to clean skin or hair for best results",
        "Satisfaction guaranteed",
    ),
    "grocery": (
        "Made with simple, high-quality ingredients",
        "No artificial colors, flavors or preservatives",
        "Resealable packaging keeps it fresh",
        "A satisfying snack between meals",
        "Produced in a facility that also handles tree nuts",
        "Store in a cool, dry place",
    ),
    "home": (
        "Sturdy construction supports everyday use",
        "Easy to assemble with the included tools",
        "Timeless design that fits most room styles",
        "Scratch-resistant finish that wipes clean",
        "Dimensions are listed in the product images",
        "Backed by a 1-year limited warranty",
    ),
    "electronics": (
        "Plug and play with no additional software",
        "Compatible with most laptops, TVs and consoles",
        "Durable housing protects internal components",
        "Supports fast, stable data transfer",
        "Compact size that is easy to carry",
        "12-month worry-free warranty",
    ),
}

# --------------------------------------------------------------------------------------------------
# Goals
# --------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _goal_pairs() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Real WebShop (instruction, queries) pairs, sorted by instruction for a stable order."""
    text = resources.files("replay_tui.demos").joinpath("data/goal_query_map.json").read_text(encoding="utf-8")
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
    text = _PRICE_PHRASE.sub(" ", text.lower()).replace(",", " ")
    words = [w.strip(".'") for w in _WORD.findall(text)]
    words = [w for w in words if w and w not in _FILLER]
    while words and words[0] in _EDGE_WORDS:
        words.pop(0)
    while words and words[-1] in _EDGE_WORDS:
        words.pop()
    return words[:10]


def _category(core: Sequence[str], words: Iterable[str]) -> str:
    """The product category: keyword votes, with the query's last words (the head noun) counting more."""
    counts = dict.fromkeys(_CATEGORIES, 0)
    weighted = [(w, 1) for w in words] + [(w, 2) for w in core[-2:]]
    for w, weight in weighted:
        cat = _KEYWORD_CATEGORY.get(w) or (_KEYWORD_CATEGORY.get(w[:-1]) if w.endswith("s") else None)
        if cat is not None:
            counts[cat] += weight
    best = max(_CATEGORIES, key=lambda c: counts[c])
    return best if counts[best] else "home"


def _option_value(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower().replace("/", " | "))


def _extract_options(text: str, category: str) -> list[tuple[str, str]]:
    """Goal options (group, value) mentioned in an instruction: at most one color and one size."""
    options: list[tuple[str, str]] = []
    m = _COLOR_RE.search(text)
    if m:
        options.append(("color", _option_value(m.group(0))))
    size: str | None = None
    m = _SIZE_RE.search(text)
    if m:
        size = m.group(1) or m.group(2) or m.group(3)
    if size is None and category == "fashion":
        m = _FASHION_SIZE_RE.search(text)
        if m:
            size = m.group(1)
    if size is None:
        m = _MEASURE_RE.search(text)
        if m:
            size = m.group(3) or f"{m.group(1)} {m.group(2)}"
    if size is not None:
        options.append(("size", _option_value(size)))
    return options


_CLAUSE_WORDS = frozenset({*_EDGE_WORDS, "made", "that", "which", "size", "color", "colored", "pack"})


def _noun_phrase(core: Sequence[str]) -> str:
    """The last two words of the query's main segment (cut at "for", "with", "made"...): its head noun."""
    segments: list[list[str]] = [[]]
    for w in core:
        if w in _CLAUSE_WORDS:
            segments.append([])
        elif not any(ch.isdigit() for ch in w):
            segments[-1].append(w)
    segments = [seg for seg in segments if seg] or [list(core) or ["item"]]
    keyed = [seg for seg in segments if any(w in _KEYWORD_CATEGORY or w[:-1] in _KEYWORD_CATEGORY for w in seg)]
    best = max(keyed or segments, key=len)
    return " ".join(best[-2:])


@dataclass(frozen=True, slots=True)
class _GoalInfo:
    base: str
    queries: tuple[str, ...]
    category: str
    core: tuple[str, ...]
    attributes: tuple[str, ...]
    stated: tuple[str, ...]  # the attributes the instruction states (the rest are implicit)
    options: tuple[tuple[str, str], ...]
    noun: str  # a short noun phrase for the product ("seed oil"), for descriptions


@cache
def _goal_info(index: int) -> _GoalInfo:
    instruction, queries = _goal_pairs()[index]
    base = re.sub(r"[\s.]+$", "", instruction.strip())
    text = base.lower().replace("-", " ")
    core = _content_words(queries[0]) or _content_words(base)
    category = _category(core, _WORD.findall(text))
    attrs: list[str] = []
    for m in _ATTR_RE.finditer(text):
        if m.group(1) not in attrs:
            attrs.append(m.group(1))
    stated = tuple(attrs[:3])
    if not attrs:
        defaults = _DEFAULT_ATTRS[category]
        attrs.append(defaults[index % len(defaults)])
    options = _extract_options(base.lower(), category)
    noun = _noun_phrase(core)
    return _GoalInfo(base, queries, category, tuple(core), tuple(attrs[:3]), stated, tuple(options), noun)


@cache
def _near_titles(index: int, hits: int) -> tuple[tuple[str, str], ...]:
    """(title, noun) variants of near misses for goal ``index`` that have only ``hits`` of its attributes."""
    info = _goal_info(index)
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
        words.insert(rng.randrange(len(words) + 1), rng.choice(_ALT_WORDS).lower())
        shown = [_title_case(a.split()) for a in kept if a not in text]
        feats = ([" & ".join(shown)] if shown else []) + rng.sample(_FEATURES[info.category], 2)
        title = _style_title(rng, rng.choice(_BRANDS), _title_case(words), feats, info.category)
        variants.append((title, info.noun))
    return tuple(variants)


@cache
def _off_parts(index: int) -> tuple[tuple[str, ...], str, str]:
    """Product titles, noun phrase and category for goal ``index``, used as unrelated search results."""
    info = _goal_info(index)
    core = [w for w in info.core if w != "size"] or ["gift", "set"]
    rng = random.Random(f"replay_tui.synth:off:{index}")
    text, features = _title_case(core), _FEATURES[info.category]
    titles = tuple(
        _style_title(rng, _ch(rng, _BRANDS), text, _two(rng, features), info.category) for _ in range(_OFF_TITLES)
    )
    return titles, info.noun, info.category


@cache
def _goals_by_category() -> dict[str, tuple[int, ...]]:
    groups: dict[str, list[int]] = {c: [] for c in _CATEGORIES}
    for i in range(len(_goal_pairs())):
        groups[_goal_info(i).category].append(i)
    return {c: tuple(v) for c, v in groups.items()}


# --------------------------------------------------------------------------------------------------
# Products and pages
# --------------------------------------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class _Product:
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
            self._words = frozenset(_ALNUM_WORD.findall(self.title.lower()))
        return self._words

    def short(self, n: int = 7) -> str:
        parts = self.title.split()
        return " ".join(parts[:n]) + ("..." if len(parts) > n else "")


@dataclass(slots=True)
class _ResultSet:
    query: str
    target_at: tuple[int, int] | None
    pinned: _Product | None = None
    pages: dict[int, list[_Product]] = field(default_factory=dict)


_UNIT_TOKEN = re.compile(r"\d+(gb|tb|mm|ml|oz|w|v|hz|mah)")


@lru_cache(maxsize=16384)
def _title_word(word: str, first: bool) -> str:
    if word in _UPPER_WORDS:
        return word.upper()
    if word in _SMALL_WORDS and not first:
        return word
    if _UNIT_TOKEN.fullmatch(word):
        return word.upper() if word.endswith(("gb", "tb")) else word
    return word[:1].upper() + word[1:]


@lru_cache(maxsize=65536)
def _title_case_cached(words: tuple[str, ...]) -> str:
    return " ".join(_title_word(w, i == 0) for i, w in enumerate(words))


def _title_case(words: Sequence[str]) -> str:
    """Amazon-style title case: small words lowercase, acronyms and storage units uppercase."""
    return _title_case_cached(tuple(words))


def _ch(rng: random.Random, seq: Sequence[Any]) -> Any:
    """A fast ``rng.choice`` (one C-level draw)."""
    return seq[int(rng.random() * len(seq))]


def _two(rng: random.Random, seq: Sequence[Any]) -> list[Any]:
    """A fast ``rng.sample(seq, 2)``."""
    n = len(seq)
    i = int(rng.random() * n)
    j = int(rng.random() * (n - 1))
    return [seq[i], seq[j + 1 if j >= i else j]]


_NEAR_TITLES = 8  # title variants per (goal, attribute hits) for near-miss search results
_OFF_TITLES = 6  # title variants per goal when it shows up as an unrelated search result
_CENTS = (0.99, 0.99, 0.95, 0.49, 0.89, 0.0, 0.97, 0.79, 0.5)
_PAIRS36 = tuple(a + b for a in _ALNUM for b in _ALNUM)


def _money(rng: random.Random, amount: float) -> float:
    return max(1, int(amount)) + _ch(rng, _CENTS)


def _price_pair(rng: random.Random, low_amount: float, range_prob: float = 0.25) -> tuple[float, float]:
    low = _money(rng, low_amount)
    if rng.random() < range_prob:
        high = _money(rng, low * rng.uniform(1.2, 1.9))
        if high > low:
            return low, high
    return low, low


def _style_title(rng: random.Random, brand: str, core: str, feats: Sequence[str], category: str) -> str:
    f1 = feats[0] if feats else "Gift Idea"
    f2 = feats[1] if len(feats) > 1 else _ch(rng, _FEATURES[category])
    pattern = int(rng.random() * 9)
    if pattern == 0:
        return f"{brand} {core}, {f1}, {f2}"
    if pattern == 1:
        return f"{brand} {core} - {f1} & {f2}"
    if pattern == 2:
        return f"{core} by {brand} | {f1} | {f2}"
    if pattern == 3:
        return f"[{_ch(rng, (2, 3, 4, 6))} Pack] {brand} {core}, {f1}"
    if pattern == 4:
        return f"{brand} {core} with {f1}, {f2} (Pack of {_ch(rng, (1, 2, 3, 6, 12))})"
    if pattern == 5 and category in ("home", "electronics"):
        return f'{brand} {_ch(rng, (6, 10, 12, 24, 32, 36, 48))}" {core} - {f1}, {f2}'
    if pattern == 6:
        return f'{brand.upper()} {core} "{f1}" Edition, {f2}'
    if pattern == 7:
        return f"{core}, {f1} - {f2} | {brand}"
    return f"{brand} {core} {f1}"


def _render_results(instruction: str, page: int, products: Sequence[_Product], visited: Sequence[str]) -> str:
    parts = [f"Instruction:\n{instruction}\n[button] Back to Search [button_]\nPage {page} (Total results: 50)\n"]
    if page > 1:
        parts.append("[button] < Prev [button_]\n")
    parts.append("[button] Next > [button_]\n")
    for p in products:
        if p.asin in visited:
            parts.append(f"\n[clicked button] {p.asin} [clicked button_]\n{p.title}\n{p.price}\n")
        else:
            parts.append(f"\n[button] {p.asin} [button_]\n{p.title}\n{p.price}\n")
    return "".join(parts)


def _render_search(instruction: str) -> str:
    return f"WebShop\nInstruction: \n{instruction}\n[button] Search [button_]\n"


def _render_item(instruction: str, p: _Product, selected: dict[str, str], clicked: str | None = None) -> str:
    parts = [f"You have clicked {clicked}.\n"] if clicked is not None else []
    parts.append(f"Instruction:\n{instruction}\n[button] Back to Search [button_]\n[button] < Prev [button_]\n")
    for group, values in p.groups or ():
        parts.append(f"{group}\n")
        for v in values:
            if selected.get(group) == v:
                parts.append(f"  [clicked button] {v} [clicked button_]\n")
            else:
                parts.append(f"  [button] {v} [button_]\n")
    parts.append(
        f"{p.title}\nPrice: {p.price}\nRating: N.A.\n[button] Description [button_]\n"
        "[button] Features [button_]\n[button] Reviews [button_]\n[button] Buy Now [button_]\n"
    )
    return "".join(parts)


def _render_detail(instruction: str, p: _Product, detail: str) -> str:
    head = f"Instruction:\n{instruction}\n[button] Back to Search [button_]\n[button] < Prev [button_]\n"
    if detail == "description":
        return f"{head}{p.description}\n"
    if detail == "features":
        return head + "".join(f" {b}\n" for b in p.bullets)
    return head  # reviews are empty in the WebShop text env


def _render_done(asin: str, selected: dict[str, str], reward: float) -> str:
    return (
        "Thank you for shopping with us!\nYour code: \nNone\n (Paste it in your MTurk interface.)\nPurchased\n"
        f"asin\n{asin}\noptions\n{json.dumps(selected)}\nattrs\nNone\ncategory\nNone\nquery\nNone\n"
        "product category\nNone\nTarget\nasin\noptions\nattrs\nprice upper\ninstuction text\ncategory\n"
        "product category\nquery\nGoal \nNone\nReward\nYour score (min 0.0, max 1.0)\n"
        f"{reward!r}\nReward Details \nNone\n"
    )


_BLANK_LINES = re.compile(r"\n(?:[ \t]*\n)+")


def _collapse(raw: str) -> str:
    """LASER's observation form: blank lines dropped, no trailing newline."""
    return _BLANK_LINES.sub("\n", raw).strip("\n")


def _sibling_values(group: str, value: str, category: str, rng: random.Random, k: int) -> list[str]:
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
    if value in _APPAREL_SIZES:
        return list(_APPAREL_SIZES[: max(k + 1, _APPAREL_SIZES.index(value) + 1)])
    pools = _GROUP_POOLS[category]
    names = list(pools.get(group) or pools.get("color") or ())
    if group == "color":
        names += ["black", "white", "grey", "navy", "brown", "beige"]
    others = [v for v in dict.fromkeys(names) if v != value]
    values = [*rng.sample(others, min(k, len(others))), value]
    rng.shuffle(values)
    return values


# --------------------------------------------------------------------------------------------------
# Prompts and thinking
# --------------------------------------------------------------------------------------------------

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
def _system_prefix(tools: tuple[str, ...]) -> str:
    """``repr`` of the prompt list up to the user message's content."""
    return f"[{{'role': 'system', 'content': {_system_prompt(tools)!r}}}, {{'role': 'user', 'content': "


def _join(items: Sequence[str], last: str = "and") -> str:
    items = list(items)
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


# --------------------------------------------------------------------------------------------------
# Episode construction
# --------------------------------------------------------------------------------------------------


def _pick(rng: random.Random, weighted: Sequence[tuple[Any, float]]) -> Any:
    x = rng.random() * sum(w for _, w in weighted)
    for value, w in weighted:
        x -= w
        if x < 0:
            return value
    return weighted[-1][0]


class _Episode:
    """Builds one episode: a simulated WebShop session driven by a scripted, plausibly fallible agent."""

    def __init__(self, session_id: int, rng: random.Random) -> None:
        self.rng = rng
        self.session_id = session_id
        self.goal_index = rng.randrange(len(_goal_pairs()))
        g = self.info = _goal_info(self.goal_index)
        lo, hi = _PRICE_RANGE[g.category]
        self.target_low, self.target_high = _price_pair(rng, rng.uniform(lo, hi), 0.2)
        self.budget = float((math.floor(self.target_high / 10) + 1 + _pick(rng, ((0, 5), (1, 3), (2, 2)))) * 10)
        self.instruction = f"{g.base}, and price lower than {self.budget:.2f} dollars"
        self.what = " ".join(g.core) or g.queries[0]
        self.qwords = [w for w in dict.fromkeys(g.core) if w not in _EDGE_WORDS]
        self.trajectory: list[dict[str, Any]] = []
        self.n_steps = 0
        self.history: list[str] = []
        self.with_history = rng.random() < 0.4
        self.raw = _render_search(self.instruction)
        self.rsets: dict[str, _ResultSet] = {}
        self.rs: _ResultSet | None = None
        self.page = 0
        self.visited: list[str] = []
        self.asins: set[str] = set()
        self.seen: dict[str, _Product] = {}  # products shown on results pages, by ASIN
        self.item: _Product | None = None
        self.selected: dict[str, str] = {}
        self.left_results: list[_Product] = []  # the results page left with Back_to_Search
        self.note = ""  # what the agent learned on the last item page, for its next thought
        self.same_category = _goals_by_category()[g.category]
        self.all_goals = _goal_pairs()
        self.target = self._make_target()

    # ---- products -------------------------------------------------------------------------------

    def _asin(self) -> str:
        pairs = _PAIRS36
        while True:
            n = self.rng.getrandbits(42)
            asin = f"B0{pairs[n % 1296]}{pairs[n // 1296 % 1296]}{pairs[n // 1679616 % 1296]}{pairs[n >> 32]}"
            if asin not in self.asins:
                self.asins.add(asin)
                return asin

    def _make_target(self) -> _Product:
        g, rng = self.info, self.rng
        core = [w for w in g.core if w != "size"]
        text = " ".join(core)
        extra = [a for a in g.attributes if a not in text]
        # Every goal attribute is in the title (in the query words or the first feature).
        feats = [" & ".join(_title_case(a.split()) for a in extra)] if extra else []
        feats += rng.sample(_FEATURES[g.category], 2)
        title = _style_title(rng, rng.choice(_BRANDS), _title_case(core), feats[:2], g.category)
        return _Product(
            self._asin(),
            title,
            self.target_low,
            self.target_high,
            "target",
            g.category,
            len(g.attributes),
            1.0,
            g.noun,
            goal_values=True,
        )

    def _make_near(self, in_budget: bool | None = None) -> _Product:
        g, rng = self.info, self.rng
        hits = int(rng.random() * len(g.attributes))  # always misses at least one attribute
        pool = _near_titles(self.goal_index, hits)
        title, noun = pool[int(rng.random() * len(pool))]
        if in_budget is None:
            in_budget = rng.random() < 0.7
        amount = (0.3 + 0.6 * rng.random() if in_budget else 1.05 + 0.55 * rng.random()) * self.budget
        low, high = _price_pair(rng, amount, 0.0 if in_budget else 0.25)
        if in_budget and high >= self.budget:
            low = high = max(1.0, self.budget - 1.01)
        return _Product(
            self._asin(), title, low, high, "near", g.category, hits, 1.0, noun, goal_values=rng.random() < 0.6
        )

    def _make_off(self) -> _Product:
        # The hot path of generation (most search results are unrelated items): keep it lean.
        r = self.rng.random
        same = self.same_category
        index = same[int(r() * len(same))] if same and r() < 0.7 else int(r() * len(self.all_goals))
        titles, noun, category = _off_parts(index)
        low = max(1, int((0.2 + 1.2 * r()) * self.budget)) + _CENTS[int(r() * len(_CENTS))]
        high = low
        if r() < 0.25:
            high = max(1, int(low * (1.2 + 0.7 * r()))) + _CENTS[int(r() * len(_CENTS))]
            high = max(high, low)
        return _Product(self._asin(), titles[int(r() * len(titles))], low, high, "off", category, 0, 0.0, noun)

    def _details(self, p: _Product) -> None:
        """Option groups, description and feature bullets, created on the first visit."""
        if p.groups is not None:
            return
        rng, g = self.rng, self.info
        pools = _GROUP_POOLS[p.category]
        groups: dict[str, list[str]] = {}
        if p.goal_values and p.category == g.category:
            for group, value in g.options:
                groups[group] = _sibling_values(group, value, p.category, rng, rng.randint(2, 5))
        for group in pools:
            if group not in groups and rng.random() < 0.3:
                pool = list(pools[group])
                if group == "size" and p.category == "fashion" and _SHOE_WORDS.intersection(g.core):
                    pool = [f"{x / 2:g}" for x in range(12, 25)]
                values = rng.sample(pool, min(len(pool), rng.randint(3, 6)))
                groups[group] = values
        p.groups = [(group, groups[group]) for group in [*pools, *groups] if group in groups]
        p.groups = list(dict(p.groups).items())
        desc = rng.sample(_DESCRIPTIONS[p.category], 2)
        p.description = " ".join(s.format(noun=p.noun.lower()) for s in desc)
        bullets = rng.sample(_BULLETS[p.category], rng.randint(3, 5))
        if p.kind == "target":
            bullets.insert(0, f"{_title_case(g.attributes[0].split()).upper()}: {bullets.pop()}")
        if rng.random() < 0.3:
            bullets = [f"【{b.split()[0].upper()}】 {b}" for b in bullets]
        p.bullets = tuple(bullets)

    def _result_set(
        self, query: str, target_at: tuple[int, int] | None = None, pinned: _Product | None = None
    ) -> _ResultSet:
        rs = self.rsets.get(query)
        if rs is None:
            rs = self.rsets[query] = _ResultSet(query, target_at, pinned)
        return rs

    def _page_products(self, rs: _ResultSet, page: int) -> list[_Product]:
        products = rs.pages.get(page)
        if products is not None:
            return products
        rng = self.rng
        target_page = rs.target_at is not None and rs.target_at[0] == page
        near_prob = 0.4 if target_page else (0.3 if rs.target_at is not None else 0.15)
        products = []
        for i in range(10):
            if rs.target_at == (page, i):
                products.append(self.target)
            elif rs.pinned is not None and page == 1 and i == 0:
                products.append(rs.pinned)
            elif rng.random() < near_prob:
                products.append(self._make_near())
            else:
                products.append(self._make_off())
        if target_page:
            # The agent's possible mistakes need candidates: two near misses (one in budget) and two off items.
            slots = [i for i, p in enumerate(products) if p.kind != "target"]
            rng.shuffle(slots)
            near = [i for i in slots if products[i].kind == "near"]
            off = [i for i in slots if products[i].kind == "off"]
            while len(near) < 2 and len(off) > 2:
                i = off.pop()
                products[i] = self._make_near()
                near.append(i)
            if not any(products[i].high < self.budget for i in near):
                products[near[0]] = self._make_near(in_budget=True)
            while len(off) < 2 and len(near) > 2:
                i = near.pop()
                products[i] = self._make_off()
                off.append(i)
        rs.pages[page] = products
        for p in products:
            self.seen.setdefault(p.asin, p)
        return products

    # ---- reasoning helpers ----------------------------------------------------------------------

    def _overlap(self, p: _Product) -> list[str]:
        return [w for w in self.qwords if w in p.words]

    def _reason(self, p: _Product) -> str:
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
        reqs = _join([*attrs, *opts]) or "nothing beyond the product type"
        templates = (
            f"The customer wants {self.what}{', ' + _join(attrs) if attrs else ''}, with a budget of "
            f'{self._budget()}. I\'ll search for "{query}" and compare the results against these requirements.',
            f"Key requirements from the instruction: {reqs}. The price must stay below {self._budget()}. "
            f'A concise keyword search should surface the right product type first: "{query}".',
            f"Let me break the request down. Product: {self.what}. Must have: {_join(attrs) or 'n/a'}. "
            f"Options to pick on the product page: {_join(opts) or 'none'}. Max price: {self.budget:.2f} dollars. "
            "Starting with a keyword search.",
            f"I need to find {self.what} for less than {self._budget()}. "
            + (
                f"Options such as {_join(opts, 'or')} are chosen later on the product page, so I'll keep the "
                "query focused on the product itself."
                if opts
                else f"The important detail is {_join(attrs)}, which I'll verify on the product page."
            )
            + f' Query: "{query}".',
        )
        return rng.choice(templates)

    def _think_research(self, query: str) -> str:
        off = [p for p in self.left_results if p.kind == "off"][:2]
        seen = _join([p.short(4) for p in off]) or "unrelated products"
        return self.rng.choice(
            (
                f'The previous results were dominated by items like {seen}. I\'ll rephrase the query as "{query}" '
                f"to get closer to {self.what}.",
                f'Back on the search page. This time I\'ll use "{query}", which should match {self.what} better '
                f"while keeping the budget of {self._budget()} in mind.",
            )
        )

    def _think_select(self, p: _Product, products: Sequence[_Product]) -> str:
        rng = self.rng
        overlap = self._overlap(p)
        ov = _join(overlap[:5]) or "the product type"
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

    def _think_next(self, products: Sequence[_Product]) -> str:
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

    def _think_back(self, products: Sequence[_Product]) -> str:
        off = [p.short(4) for p in products if p.kind == "off"][:2]
        return self._lead() + self.rng.choice(
            (
                f"These results don't fit: most items are things like {_join(off) or 'unrelated products'}. "
                "Better to go back and search with different keywords.",
                f"I'm not finding {self.what} with this query. I'll return to the search page and try again.",
            )
        )

    # ---- decision steps -------------------------------------------------------------------------

    def _emit(
        self, ctx: tuple[str, str, int, str], name: str, args: dict[str, Any], thinking: str, new_raw: str
    ) -> None:
        obs, state, page, prompt = ctx
        if state == "Search":
            available = ["Search"]
        elif page > 1:
            available = ["select_item", "Next", "Prev", "Back_to_Search"]
        else:
            available = ["select_item", "Next", "Back_to_Search"]
        action = format_env_action(name, args)
        self.trajectory.append(
            {
                "step_number": self.n_steps,
                "observation_before_llm": obs,
                "llm_prompt": prompt,
                "llm_thinking": thinking,
                "llm_action_name": name,
                "llm_action_arguments": args,
                "state": state,
                "available_actions": available,
                "action_executed_in_env": action,
                "observation_after_action": new_raw,
                "reward": 0.0,
                "done": False,
            }
        )
        self.n_steps += 1
        self.history.append(action)
        self.raw = new_raw

    def _ctx(self) -> tuple[str, str, int, str]:
        obs = "Current observation:\n" + _collapse(self.raw)
        state = "Result" if "[button] Back to Search [button_]" in self.raw else "Search"
        if state == "Search":
            tools: tuple[str, ...] = ("Search",)
        elif self.page > 1:
            tools = ("select_item", "Next", "Prev", "Back_to_Search")
        else:
            tools = ("select_item", "Next", "Back_to_Search")
        user = obs
        if state == "Result" and self.with_history and self.history:
            recent = self.history[-5:]
            first = len(self.history) - len(recent) + 1
            user += "\n\nPrevious actions:\n" + "\n".join(f"{first + i}. {a}" for i, a in enumerate(recent))
        # Same text as repr([{"role": "system", ...}, {"role": "user", ...}]), with the system part cached.
        prompt = f"{_system_prefix(tools)}{user!r}}}]"
        return obs, state, self.page, prompt

    def _results_raw(self) -> str:
        assert self.rs is not None
        return _render_results(self.instruction, self.page, self._page_products(self.rs, self.page), self.visited)

    def search(self, query: str, thinking: str, target_at: tuple[int, int] | None) -> None:
        ctx = self._ctx()
        self.rs = self._result_set(query, target_at)
        self.page, self.visited = 1, []
        self._emit(ctx, "Search", {"keywords": query, "max_price": f"{self.budget:.2f}"}, thinking, self._results_raw())

    def next_page(self) -> None:
        assert self.rs is not None
        thinking = self._think_next(self._page_products(self.rs, self.page))
        ctx = self._ctx()
        self.page += 1
        self._emit(ctx, "Next", {}, thinking, self._results_raw())

    def prev_page(self) -> None:
        thinking = self._think_prev()
        ctx = self._ctx()
        self.page -= 1
        self._emit(ctx, "Prev", {}, thinking, self._results_raw())

    def back_to_search(self) -> None:
        assert self.rs is not None
        thinking = self._think_back(self._page_products(self.rs, self.page))
        ctx = self._ctx()
        self.left_results = self._on_page()
        self.rs, self.page, self.visited = None, 0, []
        self._emit(ctx, "Back_to_Search", {}, thinking, _render_search(self.instruction))

    def select(self, p: _Product, thinking: str | None = None) -> None:
        assert self.rs is not None
        if thinking is None:
            thinking = self._think_select(p, self._page_products(self.rs, self.page))
        ctx = self._ctx()
        self._details(p)
        self.item, self.selected = p, {}
        if p.asin not in self.visited:
            self.visited.append(p.asin)
        self._emit(ctx, "select_item", {"item_id": p.asin}, thinking, _render_item(self.instruction, p, self.selected))

    # ---- item-page sub-events -------------------------------------------------------------------

    def _item_action(
        self, name: str, args: dict[str, Any], new_raw: str, reward: float = 0.0, done: bool = False
    ) -> None:
        assert self.item is not None
        options = ["Description", "Features", "Reviews", "Buy_Now", "Prev"]
        options += [v for _, values in self.item.groups or () for v in values]
        self.trajectory.append(
            {
                "type": "item_page_action",
                "llm_action": {"name": name, "arguments": args},
                "observation_before_action": self.raw,
                "available_options": options,
                "observation_after_action": new_raw,
                "reward": reward,
                "done": done,
            }
        )
        self.history.append(format_env_action(name, args))

    def detail(self, detail: str) -> None:
        assert self.item is not None
        page = _render_detail(self.instruction, self.item, detail)
        self._item_action(detail.capitalize(), {}, page)
        self.trajectory.append(
            {"type": "detail_exploration", "detail": detail, "action": f"click[{detail}]", "observation": page}
        )
        item_raw = _render_item(self.instruction, self.item, self.selected)
        self.trajectory.append(
            {"type": "back_from_detail", "action": "click[< Prev]", "observation_after_action": item_raw}
        )
        self.history.append("click[< Prev]")
        self.raw = item_raw

    def choose(self, group: str, value: str) -> None:
        assert self.item is not None
        self.selected[group] = value
        new_raw = _render_item(self.instruction, self.item, self.selected, clicked=value)
        self._item_action("select_option", {"value": value}, new_raw)
        self.trajectory.append(
            {
                "type": "customization_click",
                "option_type": group,
                "option_value": value,
                "action": f"click[{value}]",
                "observation_after_action": new_raw,
            }
        )
        self.raw = new_raw

    def leave_item(self) -> None:
        new_raw = self._results_raw()
        self._item_action("Prev", {}, new_raw)
        self.raw, self.item = new_raw, None

    def reward(self, p: _Product, selected: dict[str, str]) -> float:
        g = self.info
        n = len(g.attributes) + len(g.options) + 1
        hits = sum(1 for group, value in g.options if selected.get(group) == value)
        price_ok = 1 if p.high < self.budget else 0
        return (p.attr_hits + hits + price_ok) / n * p.r_type

    def buy(self) -> float:
        assert self.item is not None
        r = self.reward(self.item, self.selected)
        done_raw = _render_done(self.item.asin, self.selected, r)
        self._item_action("Buy_Now", {}, done_raw, r, True)
        self.trajectory.append(
            {
                "type": "agent_buy",
                "action": "click[Buy Now]",
                "observation_after_action": done_raw,
                "reward": r,
                "done": True,
            }
        )
        self.raw = done_raw
        return r

    # ---- scripted agent -------------------------------------------------------------------------

    def _alt_query(self) -> str:
        g, rng = self.info, self.rng
        if len(g.queries) > 1:
            return g.queries[1]
        words = list(g.core)
        extra = [a for a in (*g.stated, *(v for _, v in g.options)) if a not in g.queries[0]]
        if extra and rng.random() < 0.6:
            variant = " ".join([*words, rng.choice(extra)])
        elif len(words) > 3:
            variant = " ".join(words[-rng.randint(2, 3) :])
        else:
            variant = ""
        if not variant or variant == g.queries[0]:
            variant = f"{g.queries[0]} {rng.choice(_ALT_WORDS).lower()}"
        return variant

    def _peek(self, candidates: Sequence[_Product]) -> None:
        """Open a tempting item, maybe read about it, and go back to the results."""
        rng, g = self.rng, self.info
        p = rng.choice(candidates)
        ov = _join(self._overlap(p)[:4]) or "some of the keywords"
        thinking = self._lead() + rng.choice(
            (
                f"{p.asin} ({p.short(6)}, {p.price}) mentions {ov}. I should check its details before deciding.",
                f"Let me inspect {p.asin}; the title looks related to {self.what}, but I'm not sure it is "
                f"{g.stated[0] if g.stated else 'the right product'}.",
            )
        )
        self.select(p, thinking)
        if rng.random() < 0.5:
            self.detail(rng.choice(("description", "features", "features")))
        self.leave_item()
        missing_opt = [v for grp, v in g.options if all(grp != name for name, _ in p.groups or ())]
        if p.low >= self.budget:
            self.note = f"{p.asin} costs {p.price}, which is over the {self._budget()} budget."
        elif p.kind == "off":
            self.note = f"{p.asin} turned out to be {p.short(5)}, not what the customer asked for."
        elif missing_opt:
            self.note = f"{p.asin} does not offer the {missing_opt[0]} option."
        else:
            missing = [a for a in g.attributes if a not in p.title.lower()]
            self.note = f"{p.asin} doesn't mention {missing[0] if missing else 'the key attributes'}."

    def _on_page(self) -> list[_Product]:
        assert self.rs is not None
        return self._page_products(self.rs, self.page)

    def _unvisited(self, kinds: tuple[str, ...]) -> list[_Product]:
        return [p for p in self._on_page() if p.kind in kinds and p.asin not in self.visited]

    def _lead(self) -> str:
        """The pending note about the last item page, as the start of the next thought (consumed)."""
        lead, self.note = (self.note + " " if self.note else ""), ""
        return lead

    def play(self) -> tuple[float, bool]:
        """Run the episode; return (final reward, completed by backup)."""
        outcome = _pick(self.rng, _OUTCOMES)
        if outcome == "backup":
            return self._play_backup(), True
        return self._play_normal(outcome), False

    def _play_normal(self, outcome: str) -> float:
        rng, g = self.rng, self.info
        target_at = (_pick(rng, ((1, 0.6), (2, 0.22), (3, 0.12), (4, 0.06))), rng.randrange(10))
        research = rng.random() < 0.15
        first = g.queries[0]
        if research:
            second = self._alt_query()
            self.search(first, self._think_search(first), None)
            if rng.random() < 0.35:
                self.next_page()
            self.back_to_search()
            self.search(second, self._think_research(second), target_at)
        else:
            self.search(first, self._think_search(first), target_at)
        while self.page < target_at[0]:
            peek = self._unvisited(("near", "off"))
            if peek and rng.random() < 0.25:
                self._peek(peek)
            self.next_page()
        if target_at[0] < 5 and rng.random() < 0.1:
            self.next_page()
            self.prev_page()
        peek = self._unvisited(("near",))
        if peek and rng.random() < 0.15:
            self._peek(peek)

        mode = outcome
        if outcome == "partial":
            mode = "wrong_option" if g.options and rng.random() < 0.5 else "near"
        if mode in ("success", "wrong_option"):
            item = self.target
        elif mode == "near":
            on_page = self._unvisited(("near", "off", "target")) if self.rs is not None else []
            cands = [p for p in on_page if p.kind == "near" and p.high < self.budget]
            item = rng.choice(cands or [p for p in self._on_page() if p.kind == "near" and p.high < self.budget])
        else:
            cands = self._unvisited(("off",))
            item = rng.choice(cands or [p for p in self._on_page() if p.kind == "off"])
        self.select(item)
        for d in ("description", "features", "reviews"):
            if rng.random() < {"description": 0.35, "features": 0.25, "reviews": 0.08}[d]:
                self.detail(d)
        goal = dict(g.options)
        wrong = rng.choice([grp for grp, _ in g.options]) if mode == "wrong_option" else None
        for group, values in item.groups or ():
            if group in goal and goal[group] in values:
                if group == wrong:
                    others = [v for v in values if v != goal[group]]
                    if others and rng.random() < 0.6:
                        self.choose(group, rng.choice(others))
                    continue
                self.choose(group, goal[group])
            elif rng.random() < 0.5:
                self.choose(group, values[0] if rng.random() < 0.5 else rng.choice(values))
        return self.buy()

    def _play_backup(self) -> float:
        rng, g = self.rng, self.info
        budget = rng.randint(6, 11)
        target_at = (_pick(rng, ((1, 0.3), (2, 0.3), (3, 0.2), (4, 0.1), (5, 0.1))), rng.randrange(10))
        self.search(g.queries[0], self._think_search(g.queries[0]), target_at)
        researched = False
        while self.n_steps < budget:
            remaining = budget - self.n_steps
            choices: list[tuple[str, float]] = []
            if self.page < 5:
                choices.append(("next", 3.0))
            if self.page > 1:
                choices.append(("prev", 0.7))
            if self._unvisited(("near", "off")):
                choices.append(("peek", 2.5))
            if not researched and remaining >= 2:
                choices.append(("research", 0.8))
            action = _pick(rng, choices)
            if action == "next":
                self.next_page()
            elif action == "prev":
                self.prev_page()
            elif action == "peek":
                self._peek(self._unvisited(("near", "off")))
            else:
                researched = True
                query = self._alt_query()
                self.back_to_search()
                self.search(query, self._think_research(query), None)
        return self._backup()

    def _backup(self) -> float:
        """LASER-style fallback: re-find the most promising item seen so far and buy it."""
        rng, g = self.rng, self.info
        if self.target.asin in self.seen:
            candidate = self.target
        else:
            near = [p for p in self.seen.values() if p.kind == "near"] or list(self.seen.values())
            candidate = max(near, key=lambda p: len(self._overlap(p)))
        search_raw = _render_search(self.instruction)
        self.trajectory.append(
            {"type": "backup_agent_reset", "action": "click[Back to Search]", "observation_after_action": search_raw}
        )
        rs = _ResultSet(candidate.title, None, candidate)
        self.rs, self.page, self.visited = rs, 1, []
        self.trajectory.append(
            {
                "type": "backup_agent_search",
                "action": f"search[{candidate.title}]",
                "observation_after_action": self._results_raw(),
            }
        )
        self._details(candidate)
        self.item, self.selected = candidate, {}
        self.trajectory.append(
            {
                "type": "backup_agent_click",
                "action": f"click[{candidate.asin}]",
                "observation_after_action": _render_item(self.instruction, candidate, {}),
            }
        )
        goal = dict(g.options)
        for group, values in candidate.groups or ():
            if group in goal and goal[group] in values and rng.random() < 0.75:
                value = goal[group]
            elif group in goal or rng.random() < 0.4:
                value = values[0]
            else:
                continue
            self.selected[group] = value
            self.trajectory.append(
                {
                    "type": "backup_agent_option",
                    "option_type": group,
                    "option_value": value,
                    "action": f"click[{value}]",
                    "observation_after_action": _render_item(self.instruction, candidate, self.selected, clicked=value),
                }
            )
        r = self.reward(candidate, self.selected)
        self.trajectory.append(
            {
                "type": "backup_agent_buy",
                "action": "click[Buy Now]",
                "observation_after_action": _render_done(candidate.asin, self.selected, r),
                "reward": r,
                "done": True,
            }
        )
        return r


# --------------------------------------------------------------------------------------------------
# Quirks: messy-but-valid forms seen in real logs
# --------------------------------------------------------------------------------------------------

_QUIRKS = ("step_str", "reward_str", "done_str", "args_json", "action_empty", "action_missing", "action_ws")


def _drift(action: str, rng: random.Random) -> str:
    """Whitespace drift that normalizes back to ``action`` (strip, collapse, strip inside brackets)."""
    m = re.fullmatch(r"(\w+)\[(.*)\]", action, re.DOTALL)
    if m is None:
        return f" {action} "
    kind, arg = m.groups()
    if " " in arg and rng.random() < 0.6:
        arg = arg.replace(" ", "  ", rng.randint(1, 3))
    arg = " " * rng.randint(0, 2) + arg + " " * rng.randint(0, 2)
    out = f"{kind}[{arg}]"
    if out == action or rng.random() < 0.4:
        out = f" {out} "
    return out


def _apply_quirks(trajectory: list[dict[str, Any]], rng: random.Random) -> None:
    steps = [e for e in trajectory if "step_number" in e]
    if not steps:
        return
    for quirk in rng.sample(_QUIRKS, rng.randint(2, 5)):
        chosen = [s for s in steps if rng.random() < 0.5] or [rng.choice(steps)]
        for s in chosen:
            if quirk == "step_str":
                s["step_number"] = str(s["step_number"])
            elif quirk == "reward_str":
                s["reward"] = str(float(s["reward"]))
            elif quirk == "done_str":
                s["done"] = "true" if s["done"] is True else "false"
            elif quirk == "args_json":
                if isinstance(s["llm_action_arguments"], dict):
                    s["llm_action_arguments"] = json.dumps(s["llm_action_arguments"])
            elif quirk == "action_empty":
                if "action_executed_in_env" in s:
                    s["action_executed_in_env"] = ""
            elif quirk == "action_missing":
                s.pop("action_executed_in_env", None)
            elif s.get("action_executed_in_env"):
                s["action_executed_in_env"] = _drift(s["action_executed_in_env"], rng)


# --------------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------------


def generate_episode(session_id: int, rng: random.Random, *, quirks: bool = False) -> dict[str, Any]:
    """Generate one episode (a dict in the demo-log contract) using ``rng``.

    With ``quirks``, some decision steps get messy-but-valid field forms (string numbers, JSON-string
    arguments, empty/missing/whitespace-drifted actions); the clean content is drawn first, so it is
    the same with or without quirks.
    """
    ep = _Episode(session_id, rng)
    final_reward, by_backup = ep.play()
    if quirks:
        _apply_quirks(ep.trajectory, rng)
    return {
        "session_id": session_id,
        "instruction": ep.instruction,
        "_synthetic": True,
        "trajectory": ep.trajectory,
        "final_reward": final_reward,
        "success": final_reward == 1.0,
        "completed_by_backup": by_backup,
    }


def _episode_rng(seed: int, session_id: int, salt: str = "") -> random.Random:
    return random.Random(f"replay_tui.synth:{seed}:{session_id}{salt}")


def _generate(session_id: int, seed: int, quirk_rate: float) -> dict[str, Any]:
    quirks = quirk_rate > 0 and _episode_rng(seed, session_id, ":quirks").random() < quirk_rate
    return generate_episode(session_id, _episode_rng(seed, session_id), quirks=quirks)


def iter_episodes(start: int = 0, count: int = 100, seed: int = 0, *, quirk_rate: float = 0.0) -> Iterator[dict]:
    """Yield episodes for sessions ``start .. start+count-1``.

    Each episode depends only on ``(seed, session_id)`` (and whether it is drawn as quirky, which
    depends on the same pair and ``quirk_rate``), so episode k is identical for any ``count``.
    """
    for session_id in range(start, start + count):
        yield _generate(session_id, seed, quirk_rate)


@dataclass(frozen=True, slots=True)
class DemoFileStats:
    """What :func:`write_demo_file` wrote."""

    path: Path
    episodes: int
    bytes: int


def default_filename(start: int, count: int) -> str:
    """The conventional demo file name, ``webshop_demonstrations_{start}-{end}.json``."""
    return f"webshop_demonstrations_{start}-{start + count - 1}.json"


def _dump(episode: dict[str, Any], indent: bool) -> bytes:
    if not indent:
        return orjson.dumps(episode)
    data = orjson.dumps(episode, option=orjson.OPT_INDENT_2)
    return b"  " + data.replace(b"\n", b"\n  ")


def write_demo_file(
    path: str | os.PathLike[str],
    start: int = 0,
    count: int = 100,
    seed: int = 0,
    *,
    quirk_rate: float = 0.0,
    target_bytes: int | None = None,
    indent: bool = False,
) -> DemoFileStats:
    """Stream episodes into a JSON-array demo file, atomically (temp file + ``os.replace``).

    With ``target_bytes``, ``count`` is ignored and sessions ``start, start+1, ...`` are written until
    the file reaches about that size. ``indent`` writes a readable, 2-space-indented file; otherwise
    one compact episode per line. Output is UTF-8 with non-ASCII characters kept as they are.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sessions: Iterable[int] = itertools.count(start) if target_bytes is not None else range(start, start + count)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    written = episodes = 0
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as fh:
            fh.write(b"[")
            written = 1
            for session_id in sessions:
                if target_bytes is not None and written + 3 >= target_bytes:
                    break
                data = _dump(_generate(session_id, seed, quirk_rate), indent)
                sep = b"\n" if episodes == 0 else b",\n"
                fh.write(sep)
                fh.write(data)
                written += len(sep) + len(data)
                episodes += 1
            tail = b"\n]\n" if episodes else b"]\n"
            fh.write(tail)
            written += len(tail)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return DemoFileStats(path, episodes, written)


def bundled_example_path() -> Path:
    """Path of the bundled example file (``replay_tui/examples/webshop_demonstrations_0-99.json``)."""
    return Path(__file__).resolve().parent.parent / "examples" / default_filename(BUNDLED_START, BUNDLED_COUNT)


def write_bundled_example(path: str | os.PathLike[str] | None = None) -> DemoFileStats:
    """(Re)generate the bundled example: sessions 0..99, seed 0, quirk rate 0.1, indented."""
    return write_demo_file(
        path if path is not None else bundled_example_path(),
        BUNDLED_START,
        BUNDLED_COUNT,
        BUNDLED_SEED,
        quirk_rate=BUNDLED_QUIRK_RATE,
        indent=True,
    )
