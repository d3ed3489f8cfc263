"""The replay's fast reading of a clean episode: one typed msgspec decode, no pydantic objects.

A replay reads every episode once and needs only its steps; validating each trajectory entry into
a pydantic model cost more than the rest of a stub replay (issue 14). :func:`decode_fast` decodes an
episode straight into the structs below, whose fields are the seed contract's with its exact JSON
types and no unknown field allowed (so every byte is decoded and checked, as the dict decode checks
it). Anything else (numeric strings, "true" as text, an unknown field, a bad value) returns None and
the caller takes the pydantic path, which accepts, repairs or names the problem as before.

So a fast result always stands for an episode the pydantic models accept with the same values:
``tests/core/demos/test_fast_episode.py`` compares both readings of every episode of the sample, the synthetic
files (quirks included) and the hostile fixtures.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from replay_tui.actions import ActionError, format_env_action
from replay_tui.demos.models import ID_MAX, ID_MIN, DecisionStep, _arguments_from_json

Id = Annotated[int, msgspec.Meta(ge=ID_MIN, le=ID_MAX)]

ITEM_PAGE_ACTION = "item_page_action"


class FastLlmAction(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An item-page action's tool call (``LlmAction``)."""

    name: str = ""
    arguments: dict[str, Any] | str | None = None


class FastEntry(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A trajectory entry of the seed contract: a decision step (it has ``step_number``) or a
    sub-event (tagged by ``type``); the fields of both, typed as the models type them (a field only
    one kind declares is typed for the other too: a value of another type falls back)."""

    step_number: Id | UnsetType = UNSET
    type: str | UnsetType = UNSET
    # decision steps
    observation_before_llm: str = ""
    llm_prompt: str | None = None
    llm_thinking: str | None = None
    llm_action_name: str = ""
    llm_action_arguments: dict[str, Any] | str | None = None
    state: str | None = None
    available_actions: list[str] | None = None
    action_executed_in_env: str | None = None
    observation_after_action: str = ""
    reward: float | UnsetType = UNSET
    done: bool | UnsetType = UNSET
    # item-page actions
    llm_action: FastLlmAction | UnsetType = UNSET
    observation_before_action: str | UnsetType = UNSET
    available_options: list[str] | UnsetType | None = UNSET
    # the other sub-events' fields (kept by the models as extra fields of any type)
    recorded_action: Any = msgspec.field(default=UNSET, name="action")
    observation: Any = UNSET
    detail: Any = UNSET
    option_type: Any = UNSET
    option_value: Any = UNSET

    action_rebuilt: bool = False
    """Set by :func:`decode_fast` (never read from JSON: it is not a field of the contract)."""

    @property
    def is_decision(self) -> bool:
        return self.step_number is not UNSET

    @property
    def is_item_action(self) -> bool:
        return self.step_number is UNSET and self.type == ITEM_PAGE_ACTION

    @property
    def expected_action(self) -> str:
        return self.action_executed_in_env or ""

    @property
    def action(self) -> str | None:
        """An item-page action's env action, as :attr:`ItemPageAction.action` reads it."""
        recorded = self.recorded_action
        if isinstance(recorded, str) and recorded.strip():
            return recorded
        call = self.llm_action if isinstance(self.llm_action, FastLlmAction) else FastLlmAction(arguments={})
        try:
            return format_env_action(call.name, call.arguments)  # type: ignore[arg-type]
        except ActionError:
            return None

    def decision_dump(self) -> dict[str, Any]:
        """What ``DecisionStep.model_dump()`` gives for this decision step (its fields, in its order)."""
        data = {name: getattr(self, name) for name in _DECISION_DUMPED}
        data["llm_action_arguments"] = dict(data["llm_action_arguments"])
        return data


_DECISION_DUMPED = tuple(name for name, info in DecisionStep.model_fields.items() if not info.exclude)
"""The fields ``DecisionStep.model_dump()`` writes (``action_rebuilt`` is excluded)."""


class FastEpisode(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A clean episode as the replay reads it; the same header answers as :class:`Episode`."""

    session_id: Id
    trajectory: list[FastEntry]
    instruction: str = ""
    final_reward: float | None = None
    success: bool | None = None
    completed_by_backup: bool = False
    synthetic: Any = msgspec.field(default=UNSET, name="_synthetic")
    """The synthetic generator's marker (kept by the model as an extra field)."""

    source = None
    """Never another format's trajectory (those are built as :class:`Episode` objects)."""

    @property
    def episode_id(self) -> str:
        return str(self.session_id)

    @property
    def reward(self) -> float:
        """``final_reward``, or the last reward in the trajectory (as :attr:`Episode.reward`)."""
        if self.final_reward is not None:
            return self.final_reward
        for entry in reversed(self.trajectory):
            if entry.reward is not UNSET and entry.reward:
                return float(entry.reward)
        return 0.0

    @property
    def succeeded(self) -> bool:
        return self.success if self.success is not None else self.reward == 1.0


_DECODER = msgspec.json.Decoder(FastEpisode)


def decode_fast(raw: Any) -> FastEpisode | None:
    """The episode's JSON bytes as a :class:`FastEpisode`, or None when anything in it is not the
    contract's exact form (the pydantic path then reads it). Call only on bytes already checked for
    nesting depth (the loader's index or its per-episode check)."""
    try:
        episode = _DECODER.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # ValidationError is a DecodeError
        return None
    for entry in episode.trajectory:
        if entry.step_number is not UNSET:
            if not _finish_decision(entry):
                return None
        elif entry.type == ITEM_PAGE_ACTION and not _finish_item_action(entry):
            return None
    return episode


def _finish_decision(entry: FastEntry) -> bool:
    """Give a decision step the values ``DecisionStep`` validation gives it (parsed arguments, the
    defaults, the action rebuilt from the call when empty); False where that validation would keep
    an extra field or fail."""
    if (
        entry.type is not UNSET
        or entry.llm_action is not UNSET
        or entry.observation_before_action is not UNSET
        or entry.available_options is not UNSET
        or entry.recorded_action is not UNSET
        or entry.observation is not UNSET
        or entry.detail is not UNSET
        or entry.option_type is not UNSET
        or entry.option_value is not UNSET
    ):  # a field a decision step would keep as an extra: its dump would not be the model's
        return False
    try:
        entry.llm_action_arguments = _arguments_from_json(entry.llm_action_arguments)
    except ValueError:
        return False
    _default_outcome(entry)
    action = entry.action_executed_in_env
    if action is None or not action.strip():
        try:
            arguments: Any = entry.llm_action_arguments
            entry.action_executed_in_env = format_env_action(entry.llm_action_name, arguments)
        except (ActionError, TypeError, ValueError):
            return False
        entry.action_rebuilt = True
    return True


def _finish_item_action(entry: FastEntry) -> bool:
    """The same for an item-page action (``ItemPageAction``'s defaults and parsed call arguments)."""
    call = entry.llm_action
    if call is UNSET:
        entry.llm_action = call = FastLlmAction()
    try:
        call.arguments = _arguments_from_json(call.arguments)
    except ValueError:
        return False
    _default_outcome(entry)
    if entry.observation_before_action is UNSET:
        entry.observation_before_action = ""
    if entry.available_options is UNSET:
        entry.available_options = None
    return True


def _default_outcome(entry: FastEntry) -> None:
    """``reward`` 0.0 and ``done`` False when the entry leaves them out (the models' defaults)."""
    if entry.done is UNSET:
        entry.done = False
    if entry.reward is UNSET:
        entry.reward = 0.0
