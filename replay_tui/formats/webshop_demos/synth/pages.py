"""WebShop's text observations (``text_rich``) of the search, results, item, detail and done pages,
and LASER's collapsed form of them."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from replay_tui.formats.webshop_demos.synth.products import Product


def render_results(instruction: str, page: int, products: Sequence[Product], visited: Sequence[str]) -> str:
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


def render_search(instruction: str) -> str:
    return f"WebShop\nInstruction: \n{instruction}\n[button] Search [button_]\n"


def render_item(instruction: str, p: Product, selected: dict[str, str], clicked: str | None = None) -> str:
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


def render_detail(instruction: str, p: Product, detail: str) -> str:
    head = f"Instruction:\n{instruction}\n[button] Back to Search [button_]\n[button] < Prev [button_]\n"
    if detail == "description":
        return f"{head}{p.description}\n"
    if detail == "features":
        return head + "".join(f" {b}\n" for b in p.bullets)
    return head  # reviews are empty in the WebShop text env


def render_done(asin: str, selected: dict[str, str], reward: float) -> str:
    return (
        "Thank you for shopping with us!\nYour code: \nNone\n (Paste it in your MTurk interface.)\nPurchased\n"
        f"asin\n{asin}\noptions\n{json.dumps(selected)}\nattrs\nNone\ncategory\nNone\nquery\nNone\n"
        "product category\nNone\nTarget\nasin\noptions\nattrs\nprice upper\ninstuction text\ncategory\n"
        "product category\nquery\nGoal \nNone\nReward\nYour score (min 0.0, max 1.0)\n"
        f"{reward!r}\nReward Details \nNone\n"
    )


_BLANK_LINES = re.compile(r"\n(?:[ \t]*\n)+")


def collapse(raw: str) -> str:
    """LASER's observation form: blank lines dropped, no trailing newline."""
    return _BLANK_LINES.sub("\n", raw).strip("\n")
