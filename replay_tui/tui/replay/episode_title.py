"""The stepper's title: the episode's outcome as far as its log records it, the replay's counts,
its tags, its instruction and its note, as text.

Apart from the screen so the words of an episode's header are in one place; the outcome's own
wording is :mod:`replay_tui.tui.widgets.outcome_text`'s, shared with every view that shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from replay_tui.episodes.model import BACKUP_STATUS, Trajectory
from replay_tui.sanitize import excerpt, one_line, strip_control
from replay_tui.tui.widgets.outcome_text import append_headline

if TYPE_CHECKING:  # the runner loads at the first replay, not at the app's launch
    from replay_tui.annotations import Annotation
    from replay_tui.runner import StepResult


def episode_title(
    session_id: int,
    trajectory: Trajectory | None,
    *,
    general: bool,
    invalid_fields: int,
    verdicts: Mapping[str, StepResult],
    tags: Sequence[str],
    note: Annotation | None,
) -> Text:
    """A line each: outcome and counts, instruction, episode note (None ``trajectory``: malformed)."""
    text = Text()
    text.append(f"session {session_id}  ", style="bold")
    if trajectory is None:
        text.append("malformed episode", style="bold red")
        return text
    if general:
        append_log_outcome(text, trajectory)
    else:  # a seed file's outcome as the browser's row shows it: its reward (0 when left out), its success
        reward = trajectory.outcome.reward or 0.0
        text.append(f"reward {reward:.2f} ", style="green" if reward == 1.0 else "yellow" if reward else "red")
        succeeded = bool(trajectory.outcome.success)
        text.append("success  " if succeeded else "failure  ", style="green" if succeeded else "red")
    if not general and trajectory.outcome.status == BACKUP_STATUS:  # the log's outcome above says it otherwise
        text.append("backup  ", style="magenta")
    if invalid_fields:  # read as their defaults; the steps are marked ⚠
        field = "field" if invalid_fields == 1 else "fields"
        text.append(f"⚠ {invalid_fields} invalid {field} read as defaults  ", style="yellow")
    if verdicts:
        bad = sum(1 for v in verdicts.values() if v.is_mismatch)
        same = sum(1 for v in verdicts.values() if v.is_equivalent)
        text.append(
            f"{len(verdicts)} replayed, " + (f"{same} equivalent, " if same else "") + f"{bad} mismatched  ",
            style="bold red" if bad else "bold green",
        )
    if tags:
        text.append(one_line(" ".join(tags)) + "  ", style="cyan")
    text.append("\n")
    text.append(one_line(trajectory.task), style="italic")
    append_episode_note(text, note)
    return text


def append_log_outcome(text: Text, trajectory: Trajectory) -> None:
    """The log's episode id and format, and its outcome as far as the log records it (score, kind,
    termination reason); its particulars are in the outcome detail below the title."""
    text.append("episode ", style="dim")
    text.append(excerpt(str(trajectory.id), 60) + "  ", style="bold cyan")
    text.append(strip_control(trajectory.format) + "  ", style="dim")
    if trajectory.parent is not None:
        text.append("sub-agent of ", style="dim")
        text.append(excerpt(trajectory.parent.episode or "an episode the log does not name", 60) + "  ")
    outcome = trajectory.outcome
    append_headline(text, outcome)
    if outcome.kind in ("failed", "errored"):
        text.append("O: why  ", style="dim")


def append_episode_note(text: Text, annotation: Annotation | None) -> None:
    """The episode's note under its instruction (first lines; N edits it)."""
    if annotation is None or not annotation.note.strip():
        return
    lines = [one_line(line) for line in annotation.note.strip().splitlines() if line.strip()]
    text.append("\n✎ ", style="bold cyan")
    text.append(excerpt(" ⏎ ".join(lines[:3]), 300), style="cyan")
    if len(lines) > 3:
        text.append(f" (+{len(lines) - 3} lines: N)", style="dim")
