"""What the stepper's panes show for an episode of another format (a :class:`TrajectoryStep`).

The messages the model was sent (roles, tool calls with their arguments, tool results), and what
it did: its visible text, the action as the log shows it, the call's arguments pretty-printed when
they are long, and the tool's result (indented when it is JSON). Everything is :class:`PaneLine`
text: never Rich markup, control sequences stripped by :func:`lines_from_text`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from replay_tui.episodes.model import ChatMessage, ToolCall, TrajectoryStep
from replay_tui.sanitize import one_line
from replay_tui.tui.widgets.text_pane import PaneLine, lines_from_text

ROLE_STYLES = {
    "system": "bold magenta",
    "developer": "bold magenta",
    "user": "bold cyan",
    "assistant": "bold green",
    "tool": "bold yellow",
    "function": "bold yellow",
}
HEADER_STYLE = "bold"
CALL_STYLE = "bold green"
INLINE_ARGUMENTS = 60
"""Arguments whose compact JSON is longer than this (or hold a multi-line string) are also shown indented."""
JSON_PRETTY_LIMIT = 1_000_000
"""Tool results longer than this are shown as logged (indenting them costs more than it helps)."""


def pretty_json(text: str | None) -> str | None:
    """``text`` indented when it is a JSON object or array, else None."""
    if not text:
        return None
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{" or len(stripped) > JSON_PRETTY_LIMIT:
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, (dict, list)):
        return None
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):  # pragma: no cover - what json.loads made, json.dumps writes
        return None


def result_lines(text: str | None) -> list[PaneLine]:
    """A tool result: indented when it is JSON, else as logged."""
    return lines_from_text(pretty_json(text) or text or "")


def _compact(arguments: dict[str, Any]) -> str:
    try:
        return json.dumps(arguments, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return repr(arguments)


def arguments_are_long(call: ToolCall) -> bool:
    """True when the call's arguments deserve an indented view of their own."""
    if call.raw_arguments is not None and not call.arguments:
        return len(call.raw_arguments) > INLINE_ARGUMENTS or "\n" in call.raw_arguments
    if not call.arguments:
        return False
    multiline = any(isinstance(value, str) and "\n" in value for value in call.arguments.values())
    return multiline or len(_compact(call.arguments)) > INLINE_ARGUMENTS


def argument_lines(call: ToolCall, indent: str = "") -> list[PaneLine]:
    """The call's arguments as indented JSON; a multi-line string argument also as its own block
    of text (a shell script, a file edit), which JSON would show as one line of ``\\n``."""
    if call.raw_arguments is not None and not call.arguments:
        return [PaneLine(indent + line.text) for line in lines_from_text(call.raw_arguments)]
    try:
        text = json.dumps(call.arguments, indent=2, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        text = repr(call.arguments)
    lines = [PaneLine(indent + line.text) for line in lines_from_text(text)]
    for key, value in call.arguments.items():
        if isinstance(value, str) and "\n" in value:
            lines.append(PaneLine(f"{indent}{key}:", "dim"))
            lines.extend(PaneLine(indent + "  " + line.text) for line in lines_from_text(value))
    return lines


def _section(lines: list[PaneLine], title: str, style: str = HEADER_STYLE) -> None:
    if lines:
        lines.append(PaneLine(""))
    lines.append(PaneLine(f"── {title} ──", style))


def message_lines(messages: Sequence[ChatMessage]) -> tuple[list[PaneLine], int]:
    """The prompt as chat messages: a header per role, the text, each tool call with its arguments,
    and the call a tool result answers. Also the line where the last message starts (what the
    model answered; the stepper scrolls there)."""
    lines: list[PaneLine] = []
    last = 0
    for message in messages:
        last = len(lines) + (1 if lines else 0)
        role = one_line(message.role) or "?"
        title = role
        if message.name:
            title += f" · {one_line(message.name)}"
        if message.tool_call_id:
            title += f" · answers {one_line(message.tool_call_id)}"
        _section(lines, title, ROLE_STYLES.get(role, HEADER_STYLE))
        if message.reasoning:
            lines.append(PaneLine("(reasoning)", "dim italic"))
            lines.extend(lines_from_text(message.reasoning, "dim"))
        if message.content:
            lines.extend(result_lines(message.content) if role == "tool" else lines_from_text(message.content))
        for call in message.tool_calls:
            if arguments_are_long(call):
                lines.append(PaneLine(f"→ {one_line(call.name)}", CALL_STYLE))
                lines.extend(argument_lines(call, indent="    "))
            else:
                lines.append(PaneLine(f"→ {one_line(call.display())}", CALL_STYLE))
        if not message.content and not message.tool_calls and not message.reasoning:
            lines.append(PaneLine("(empty)", "dim italic"))
    return lines, last


def action_lines(step: TrajectoryStep) -> list[PaneLine]:
    """What the model did at ``step``: the action as the log shows it, the arguments indented when
    long, its visible text (unless it repeats the thinking), and the tool's result."""
    lines: list[PaneLine] = []
    if step.action is not None or step.action_text:
        _section(lines, "action")
        lines.extend(lines_from_text(step.action_text or (step.action.display() if step.action else ""), CALL_STYLE))
        if step.action is not None and arguments_are_long(step.action):
            _section(lines, f"arguments of {one_line(step.action.name)}")
            lines.extend(argument_lines(step.action))
    content = step.content.strip()
    if content and content != step.thinking.strip():
        _section(lines, "content")
        lines.extend(lines_from_text(step.content))
    if step.tool_result:
        _section(lines, "tool result", ROLE_STYLES["tool"])
        lines.extend(result_lines(step.tool_result))
    return lines
