"""StubPolicy: replays the recorded tool call, validating the tool -> action mapping."""

from __future__ import annotations

from typing import Any

from replay_tui.actions import ActionError, format_env_action
from replay_tui.demos.models import _arguments_from_json


class StubPolicy:
    """Formats the recorded ``llm_action_name`` + ``llm_action_arguments`` as an env action.

    Stub mode on a clean log scores 100 %; anything less points at the mapping, the
    normalization or the log itself. A tool call that cannot be mapped yields the recorded
    ``action_executed_in_env`` only when ``fallback_to_recorded`` is set.
    """

    name = "stub"

    def __init__(self, *, fallback_to_recorded: bool = False):
        self.fallback_to_recorded = fallback_to_recorded

    def predict_action(
        self,
        observation: str,
        state: str,
        available_actions: list[str],
        llm_prompt_repr: str | None,
        recorded_step: dict[str, Any] | None = None,
    ) -> str:
        if recorded_step is None:
            raise ValueError("StubPolicy needs the recorded step (the Runner passes recorded_step=)")
        name = recorded_step.get("llm_action_name") or ""
        arguments = _arguments_from_json(recorded_step.get("llm_action_arguments"))
        try:
            return format_env_action(name, arguments)
        except ActionError:
            if self.fallback_to_recorded and recorded_step.get("action_executed_in_env"):
                return str(recorded_step["action_executed_in_env"])
            raise
