"""A log step's recorded facts as one line of the stepper's detail: model, tokens, cost, duration."""

from __future__ import annotations

from rich.text import Text

from replay_tui.episodes.model import TrajectoryStep
from replay_tui.sanitize import excerpt, one_line


def facts_line(step: TrajectoryStep) -> str:
    """``claude-sonnet-4 · 1,234 in / 56 out · $0.0123 · 2.3 s``: what the log records of the
    step's model call, short; empty when it records none of it."""
    parts = []
    if step.model:
        parts.append(one_line(step.model))
    if step.usage is not None:
        usage = step.usage.short()
        if usage:
            parts.append(usage)
    if step.duration is not None:
        parts.append(f"{step.duration:.1f} s" if step.duration < 60 else f"{step.duration / 60:.1f} min")
    return " · ".join(parts)


def append_step_facts(text: Text, step: TrajectoryStep) -> None:
    """The facts line, the step's error and the sub-agent it started, each only when recorded."""
    facts = facts_line(step)
    if facts:
        text.append("\nmodel      ", style="dim")
        text.append(facts, style="cyan")
    if step.error:
        text.append("\nerror      ", style="dim")
        text.append(excerpt(step.error, 200), style="red")
    if step.subagent:
        text.append("\nsub-agent  ", style="dim")
        text.append(excerpt(step.subagent, 80), style="bold cyan")
        text.append("  a: open it", style="dim")
