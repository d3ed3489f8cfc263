"""StubPolicy: replays the recorded tool call, validating the tool -> action mapping (WebShop) or as
the call's canonical text (general tool-calling steps)."""

from __future__ import annotations

from typing import Any

from replay_tui.actions import ActionError, format_env_action
from replay_tui.episodes.model import call_text
from replay_tui.episodes.recorded import arguments_from_json


def recorded_call_text(recorded_step: dict[str, Any]) -> str:
    """A general tool-calling step's recorded call as its canonical text, ``name({"a": 1})``.

    Arguments logged as a JSON string are read as JSON; a string that is not a JSON object is kept
    as written, ``name(<text>)``, as the log's own display of the call shows it."""
    name = str(recorded_step.get("llm_action_name") or "")
    arguments = recorded_step.get("llm_action_arguments")
    try:
        parsed = arguments_from_json(arguments)
    except ValueError:
        return f"{name}({arguments})"
    if not isinstance(parsed, dict):
        return f"{name}({arguments})"
    return call_text(name, parsed)


class StubPolicy:
    """Formats the recorded ``llm_action_name`` + ``llm_action_arguments`` as an env action.

    Stub mode on a clean log scores 100 %; anything less points at the mapping, the
    normalization or the log itself. A tool call that cannot be mapped yields the recorded
    ``action_executed_in_env`` only when ``fallback_to_recorded`` is set. A general tool-calling
    step (``recorded_step["tool_call"]``) gives the recorded call's text (:func:`recorded_call_text`),
    a plain-answer step (``recorded_step["answer"]``) the recorded answer.
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
        if recorded_step.get("answer"):  # a plain answer: the recorded one
            return str(recorded_step.get("action_executed_in_env") or "")
        if recorded_step.get("tool_call"):
            return recorded_call_text(recorded_step)
        name = recorded_step.get("llm_action_name") or ""
        arguments = arguments_from_json(recorded_step.get("llm_action_arguments"))
        return self._webshop_action(name, arguments, recorded_step.get("action_executed_in_env"))

    def predict_from_step(self, step: Any) -> str:
        """:meth:`predict_action` for a replay step (:class:`replay_tui.env.ReplayStep`), without
        building the step's ``recorded`` dict (a dump of the whole step) when the answer only needs
        its WebShop tool call (:attr:`~replay_tui.env.ReplayStep.webshop_call`); the same answer."""
        if step.call:  # a tool call of another format: its text needs the call, not the step's prompt
            source = step.source
            if getattr(source, "answer", False):  # a plain answer: the recorded one
                return str(step.expected)
            return recorded_call_text(
                {"llm_action_name": source.llm_action_name, "llm_action_arguments": source.llm_action_arguments}
            )
        call = step.webshop_call
        if call is None:
            return self.predict_action(
                step.observation, step.state, list(step.available_actions), step.llm_prompt, recorded_step=step.recorded
            )
        name, arguments = call
        return self._webshop_action(name or "", arguments, step.expected)

    def _webshop_action(self, name: str, arguments: dict[str, Any], executed: Any) -> str:
        try:
            return format_env_action(name, arguments)
        except ActionError:
            if self.fallback_to_recorded and executed:
                return str(executed)
            raise
