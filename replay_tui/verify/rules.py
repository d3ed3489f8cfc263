"""The evaluator's two sets of verdict rules, named apart from the models so the command line's
choices are known without building them."""

from __future__ import annotations

from typing import Literal

Rules = Literal["strict", "upstream"]
"""Which verdicts to give: ``strict`` (replay_tui's corrections, the default) or ``upstream`` (the
official evaluator's, quirks included). README: "Differences from the official evaluator"."""

RULES: tuple[Rules, ...] = ("strict", "upstream")
