"""Text a log records that is itself structured, decoded without trusting it: a prompt recorded as
the text of a list of chat messages (the seed's ``llm_prompt``: :func:`parse_prompt`) and a call's
arguments recorded as a JSON string (:func:`arguments_from_json`). The seed's contract validates its
fields with them, its fast reading decodes with them, and the policies read a recorded prompt again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from replay_tui.episodes.jsonscan import MAX_DEPTH, first_too_deep
from replay_tui.pyliteral import literal_eval

if TYPE_CHECKING:
    from replay_tui.episodes.model import TrajectoryStep

PROMPT_SIZE_LIMIT = 4 * 1024 * 1024
"""Largest ``llm_prompt`` (in characters) that :func:`parse_prompt` will evaluate."""


def arguments_from_json(value: Any) -> Any:
    """Tool arguments arrive as a dict or, OpenAI function-call style, as a JSON string."""
    if value is None:
        return {}
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return {}
        if first_too_deep(text.encode("utf-8", "surrogatepass"), MAX_DEPTH) is not None:
            raise ValueError(f"arguments string is nested more than {MAX_DEPTH} levels deep")
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"arguments string is not JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise ValueError(f"arguments JSON must be an object, got {type(parsed).__name__}")
        return parsed
    return value


class PromptError(ValueError):
    """An ``llm_prompt`` that cannot be parsed into chat messages (too big, not a literal, bad shape)."""


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(_text(part.get("text", part.get("content", ""))))
            else:
                parts.append(_text(part))
        return "\n".join(parts)
    return _text(content)


def parse_prompt(text: str | None, *, limit: int = PROMPT_SIZE_LIMIT) -> list[dict[str, Any]]:
    """Parse an ``llm_prompt`` (the repr of a list of chat dicts) with ``ast.literal_eval``: each
    message as the prompt recorded it, its ``role`` and ``content`` as text (content parts joined),
    its other keys (``name``, ``tool_calls``...) as they are. The one chat message model is
    :class:`replay_tui.episodes.model.ChatMessage`; a recorded prompt is sent again as it was.

    Never ``eval``. Text longer than ``limit`` is refused. A prompt that is a JSON list, a single
    dict, or plain prose is accepted too (prose becomes one user message).
    """
    if text is None or not text.strip():
        return []
    if len(text) > limit:
        raise PromptError(f"llm_prompt is {len(text):,} characters, over the {limit:,} limit")
    stripped = text.strip()
    if stripped[0] not in "[{":
        return [{"role": "user", "content": text}]
    if first_too_deep(stripped.encode("utf-8", "surrogatepass"), MAX_DEPTH) is not None:
        raise PromptError(f"llm_prompt is nested more than {MAX_DEPTH} levels deep")
    try:
        value = literal_eval(stripped)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError, MemoryError):
            raise PromptError(f"llm_prompt is not a Python or JSON literal: {exc}") from None
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise PromptError(f"llm_prompt must be a list of messages, got {type(value).__name__}")
    messages = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise PromptError(f"llm_prompt[{index}] is a {type(item).__name__}, not a message dict")
        try:
            fields = {"role": _text(item.get("role", "user")), "content": _content_text(item.get("content"))}
            fields.update((str(k), v) for k, v in item.items() if k not in ("role", "content"))
            messages.append(fields)
        except (ValueError, TypeError, RecursionError) as exc:
            raise PromptError(f"llm_prompt[{index}] is not a chat message: {str(exc).splitlines()[0]}") from None
    return messages


def _text(value: Any) -> str:
    """``str()`` that cannot fail (a huge integer has no decimal text in Python by default)."""
    try:
        return str(value)
    except ValueError:
        return f"<{type(value).__name__}>"


def prompt_problem(step: TrajectoryStep) -> str | None:
    """Why a step's recorded prompt text gave no messages (it does not parse: too big, not a
    literal...); None when it parses or the step has no prompt text."""
    recorded = step.prompt_text
    if not recorded or step.messages:
        return None
    try:
        parse_prompt(recorded)
    except PromptError as exc:
        return str(exc)
    return None
