"""What the stepper's detail says of a step, as text: the step and its state, the expected action,
the predicted one (a mismatch as a character diff, with the stored reason), the policy call, the
log's step facts, the row's tags, note and invalid fields.

Apart from the screen so the screen only picks the row and its verdict; every word of a step's
detail is written here (the verdict itself is made once, in :mod:`replay_tui.matching`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text

from replay_tui.diff import char_diff
from replay_tui.episodes.problems import LoadProblem
from replay_tui.sanitize import excerpt, one_line, strip_control
from replay_tui.sources import note_kind
from replay_tui.tui.replay.step_list import StepRow
from replay_tui.tui.widgets.step_facts import append_step_facts

if TYPE_CHECKING:  # the runner loads at the first replay, not at the app's launch
    from replay_tui.annotations import Annotation
    from replay_tui.runner import StepResult


def trace_summary(trace: dict[str, Any]) -> str:
    """One line about a policy call: model, latency, tokens, cache (x shows the whole call)."""
    parts = []
    if trace.get("model"):
        parts.append(str(trace["model"]))
    if isinstance(trace.get("latency_ms"), (int, float)):
        parts.append(f"{trace['latency_ms']:.0f} ms")
    tokens = trace.get("tokens")
    if isinstance(tokens, dict) and tokens:
        parts.append(f"tokens {tokens.get('prompt', '?')}→{tokens.get('completion', '?')}")
    if trace.get("cache"):
        parts.append(f"cache {trace['cache']}")
    if trace.get("attempts", 1) not in (None, 1):
        parts.append(f"{trace['attempts']} attempts")
    return " · ".join(parts) + "  (x: whole call)"


def append_row_notes(text: Text, annotation: Annotation | None) -> None:
    """The row's tags and note (t and n edit them), under its detail."""
    if annotation is None:
        return
    text.append("\nnotes      ", style="dim")
    text.append(one_line(" ".join(annotation.tags)), style="cyan")
    if annotation.note:
        text.append("  " + one_line(annotation.note), style="italic")


def with_field_problems(text: Text, problems: Sequence[LoadProblem]) -> Text:
    """The detail of a step with an invalid field: which field, its value, why, and what was read instead."""
    for problem in problems:
        text.append("\n⚠ invalid field ", style="bold yellow")
        text.append(strip_control(problem.field or ""), style="bold yellow")
        text.append(": " + excerpt(problem.message, 300), style="yellow")
    return text


def detail_text(
    row: StepRow,
    verdict: StepResult | None,
    *,
    general: bool,
    not_replayed: Callable[[], Text],
    annotation: Annotation | None,
    shared_warnings: set[str],
) -> Text:
    """What the detail says of ``row``: its step, state, expected and predicted action (a mismatch
    as a diff, with why), the policy call, the log's step facts, its tags and note, its own
    warnings (``shared_warnings``, said once per file, left out); ``not_replayed`` says why there
    is no verdict yet."""
    text = Text(no_wrap=False)
    step = row.step
    entry = row.entry
    source_step = row.entry if general else None
    if step is None and source_step is not None:
        text.append(f"step {one_line(source_step.label)}", style="bold")
        text.append(f"  {strip_control(note_kind(source_step))}", style="bold cyan")
        text.append("  no recorded call: shown, not replayed", style="dim")
        if source_step.content:
            text.append("\ncontent    ", style="dim")
            text.append(excerpt(source_step.content, 300))
        append_step_facts(text, source_step)
        append_row_notes(text, annotation)
        return text
    if step is None:  # a seed sub-event the replay does not step through
        text.append(f"{one_line(entry.event or 'event')} ", style="bold")
        action = entry.action_text
        if action:
            text.append("action ", style="dim")
            text.append(strip_control(action))
        append_row_notes(text, annotation)
        return text
    text.append(f"step {one_line(step.label)}", style="bold")
    text.append(f"  {one_line(step.state)}", style="bold cyan")
    text.append(f"  reward {step.reward:.2f}  done {'yes' if step.done else 'no'}", style="dim")
    text.append("\navailable  ", style="dim")
    text.append(strip_control(", ".join(step.available_actions)) or "—")
    text.append("\nexpected   ", style="dim")
    text.append(strip_control(step.expected), style="green")
    shown = one_line(source_step.action_text) if source_step is not None else ""
    if source_step is not None and shown and shown != one_line(step.expected):  # a plain answer has no call text
        text.append("\nlog shows  ", style="dim")
        text.append(excerpt(source_step.action_text, 300))
    text.append("\npredicted  ", style="dim")
    if verdict is None:
        text.append(not_replayed())
    elif verdict.error:
        text.append(f"policy error: {strip_control(verdict.error)}", style="bold red")
    elif verdict.match:
        text.append(strip_control(verdict.predicted), style="green")
        text.append("  ✓ match", style="bold green")
    else:
        equivalent = verdict.is_equivalent
        text.append("(−expected +predicted) ", style="dim")
        for chunk in char_diff(strip_control(step.expected), strip_control(verdict.predicted), cleanup=True):
            if chunk.op == "equal":
                text.append(chunk.text)
            elif chunk.op == "insert":
                text.append(chunk.text, style="bold white on red")
            else:
                text.append(chunk.text, style="strike dim red")
        if equivalent:
            text.append(f"  ≈ equivalent under {verdict.policy}", style="bold yellow")
        else:
            text.append("  ✗ mismatch", style="bold red")
            if verdict.policy != "exact":
                text.append(f" under {verdict.policy}", style="bold red")
        if verdict.reason:
            text.append("\nwhy        ", style="dim")
            text.append(strip_control(verdict.reason), style="yellow")
    if verdict is not None and verdict.trace:
        text.append("\ncall       ", style="dim")
        text.append(strip_control(trace_summary(verdict.trace)), style="cyan")
    if verdict is not None and verdict.error_kind:
        text.append(f"  failure: {strip_control(verdict.error_kind)}", style="bold red")
    if source_step is not None:
        append_step_facts(text, source_step)
    append_row_notes(text, annotation)
    own = [warning for warning in step.warnings if warning not in shared_warnings]
    if own:
        text.append("\n⚠ " + strip_control("; ".join(own)), style="yellow")
    return text
