"""The log's own outcome as text for the views (the stepper's header, the outcome screen).

What the log says of the task (succeeded, failed, errored; score, termination reason, target,
answer, the scorer's explanation, each check), never what a replay found: that is *agreement*, said
elsewhere in other words. Every piece comes from an untrusted log: it goes into ``Text`` through
:mod:`replay_tui.sanitize`, never through markup.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from replay_tui.episodes.model import Outcome, OutcomeCheck
from replay_tui.sanitize import excerpt, one_line

KIND_LABELS = {
    "succeeded": ("✓ succeeded", "bold green"),
    "failed": ("✗ failed", "bold red"),
    "errored": ("! errored", "bold yellow"),
    "unknown": ("? outcome unknown", "dim"),
}
"""How each outcome kind (:data:`replay_tui.episodes.model.OUTCOME_KINDS`) is written, and its style."""
PIECE = 160
"""A target, an answer, an explanation or a check's detail is cut to this many characters here
(the outcome screen shows them whole)."""


def value_text(value: Any) -> str:
    """A check's or a score's value as compact text (numbers with two decimals, JSON otherwise)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, (int, str)):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def append_headline(text: Text, outcome: Outcome) -> None:
    """``score 0.00 ✗ failed · user_stop`` on a title line: what the log records (nothing when it
    records neither a score, an outcome nor a termination reason)."""
    if outcome.reward is not None:
        reward = outcome.reward
        text.append(f"score {reward:.2f} ", style="green" if reward == 1.0 else "yellow" if reward else "red")
    kind = outcome.kind
    if kind != "unknown":
        label, style = KIND_LABELS[kind]
        text.append(label, style=style)
    if outcome.status:
        text.append(" · " if kind != "unknown" else "", style="dim")
        text.append(excerpt(outcome.status, 60), style="dim")
    if kind != "unknown" or outcome.status or outcome.reward is not None:
        text.append("  ")


def check_text(check: OutcomeCheck, limit: int = PIECE) -> Text:
    """``✗ db: the database differs`` (a check that only records a value: ``· accuracy = 0.50``; a
    failed one the score does not count: ``✗ action 1 book (not scored): ...``, dim)."""
    failed = check.passed is False and check.counts
    mark, style = (
        ("✓", "green") if check.passed else ("✗", "red" if failed else "dim") if check.passed is False else ("·", "dim")
    )
    text = Text()
    text.append(mark + " ", style=style)
    text.append(excerpt(check.name, 60), style="bold" if failed else "")
    if check.passed is False and not check.counts:
        text.append(" (not scored)", style="dim")
    if check.passed is None and check.value is not None:
        text.append(" = " + excerpt(value_text(check.value), 40))
    if check.detail and check.passed is not True:
        text.append(": " + excerpt(check.detail, limit))
    return text


def _labelled(label: str, value: Text | str, style: str = "") -> Text:
    text = Text()
    text.append(label + " ", style="dim")
    if isinstance(value, Text):
        text.append_text(value)
    else:
        text.append(value, style=style)
    return text


def outcome_detail(outcome: Outcome) -> Text | None:
    """The outcome's particulars, a line each, what says why first (the view wraps them at word
    boundaries and may cut the last): the checks (each failed one named with why, the passed ones
    by name, the failed ones the score does not count by number), the error, target and answer, the
    scorer's explanation. None when the log records none of them."""
    lines: list[Text] = []
    if outcome.checks:
        failed = outcome.failed_checks
        values = [check for check in outcome.checks if check.passed is None]
        passed = [check for check in outcome.checks if check.passed]
        unscored = sum(1 for check in outcome.checks if check.passed is False and not check.counts)
        pieces = [check_text(check, PIECE // 2) for check in failed + values]
        if passed:
            pieces.append(Text.assemble(("✓ ", "green"), ", ".join(excerpt(c.name, 40) for c in passed)))
        if unscored:
            pieces.append(Text(f"{unscored} failed, not scored", style="dim"))
        lines.append(_labelled("checks", Text(" · ").join(pieces)))
    if outcome.error and one_line(outcome.error):
        lines.append(_labelled("error", excerpt(outcome.error, PIECE), "yellow"))
    pair = Text()
    for label, value in (("target", outcome.target), ("answer", outcome.answer)):
        if value is not None and one_line(value):
            if pair:
                pair.append("  ")
            pair.append_text(_labelled(label, excerpt(value, PIECE // 2)))
    if pair:
        lines.append(pair)
    if outcome.explanation and one_line(outcome.explanation):
        lines.append(_labelled("explanation", excerpt(outcome.explanation, PIECE)))
    if not lines:
        return None
    return Text("\n").join(lines)
