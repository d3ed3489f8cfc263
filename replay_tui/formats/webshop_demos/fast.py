"""The replay's fast reading of a clean episode: one typed msgspec decode, no pydantic objects.

A replay reads every episode once and needs only its steps; validating each trajectory entry into
a pydantic model cost more than the rest of a stub replay (issue 14). :func:`decode_fast` decodes an
episode straight into the structs below, whose fields are the seed contract's with its exact JSON
types and no unknown field allowed (so every byte is decoded and checked, as the dict decode checks
it). Anything else (numeric strings, "true" as text, an unknown field, a bad value) returns None and
the caller takes the pydantic path, which accepts, repairs or names the problem as before.

So a fast result always stands for an episode the pydantic models accept with the same values:
``tests/formats/webshop_demos/test_fast_episode.py`` compares both readings of every episode of
the sample, the synthetic files (quirks included) and the hostile fixtures. The engines read it
through :mod:`replay_tui.episodes.reading`'s protocols, never this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, overload

import msgspec
from msgspec import UNSET, UnsetType

from replay_tui.actions import ActionError, format_env_action
from replay_tui.episodes.model import ChatMessage, ToolCall, Trajectory, TrajectoryStep, seed_success, webshop_outcome
from replay_tui.episodes.reading import ACTION_REBUILT
from replay_tui.episodes.recorded import PromptError, arguments_from_json, parse_prompt
from replay_tui.formats.webshop_demos.contract import ID_MAX, ID_MIN, DecisionStep
from replay_tui.webshop import ITEM

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
    # decision steps (unset until :func:`decode_fast` gives a decision its defaults: a sub-event's
    # mapping keeps only the fields its JSON had, as the models keep its extra fields)
    observation_before_llm: str | UnsetType = UNSET
    llm_prompt: str | UnsetType | None = UNSET
    llm_thinking: str | UnsetType | None = UNSET
    llm_action_name: str | UnsetType = UNSET
    llm_action_arguments: dict[str, Any] | str | UnsetType | None = UNSET
    state: str | UnsetType | None = UNSET
    available_actions: list[str] | UnsetType | None = UNSET
    action_executed_in_env: str | UnsetType | None = UNSET
    observation_after_action: str | UnsetType = UNSET
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
    for name, default in _DECISION_DEFAULTS:
        if getattr(entry, name) is UNSET:
            setattr(entry, name, default)
    try:
        entry.llm_action_arguments = arguments_from_json(entry.llm_action_arguments)
    except ValueError:
        return False
    _default_outcome(entry)
    action = entry.action_executed_in_env
    if not isinstance(action, str) or not action.strip():
        try:
            arguments: Any = entry.llm_action_arguments
            entry.action_executed_in_env = format_env_action(str(entry.llm_action_name), arguments)
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
        call.arguments = arguments_from_json(call.arguments)
    except ValueError:
        return False
    _default_outcome(entry)
    if entry.observation_before_action is UNSET:
        entry.observation_before_action = ""
    if entry.available_options is UNSET:
        entry.available_options = None
    if entry.observation_after_action is UNSET:
        entry.observation_after_action = ""
    return True


_DECISION_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("observation_before_llm", ""),
    ("llm_prompt", None),
    ("llm_thinking", None),
    ("llm_action_name", ""),
    ("state", None),
    ("available_actions", None),
    ("action_executed_in_env", None),
    ("observation_after_action", ""),
)
"""A decision step's fields the JSON may leave out, with ``DecisionStep``'s defaults (arguments,
reward and done are given theirs with their parsing)."""


def _default_outcome(entry: FastEntry) -> None:
    """``reward`` 0.0 and ``done`` False when the entry leaves them out (the models' defaults)."""
    if entry.done is UNSET:
        entry.done = False
    if entry.reward is UNSET:
        entry.reward = 0.0


class PromptMessages(Sequence[ChatMessage]):
    """A seed step's ``llm_prompt`` as chat messages, parsed on first read (:func:`parse_prompt`;
    one that does not parse is no message): a replay never reads most prompts, and parsing each
    (a Python literal) cost more than the rest of its reading."""

    __slots__ = ("_messages", "_text")

    def __init__(self, text: str | None) -> None:
        self._text = text
        self._messages: list[ChatMessage] | None = None

    def _parsed(self) -> list[ChatMessage]:
        if self._messages is None:
            try:
                parsed = parse_prompt(self._text)
            except PromptError:
                parsed = []
            self._messages = [ChatMessage(role=m["role"], content=m["content"]) for m in parsed]
        return self._messages

    def __len__(self) -> int:
        return len(self._parsed())

    @overload
    def __getitem__(self, index: int) -> ChatMessage: ...
    @overload
    def __getitem__(self, index: slice) -> list[ChatMessage]: ...
    def __getitem__(self, index: int | slice) -> ChatMessage | list[ChatMessage]:
        return self._parsed()[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return self._parsed() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PromptMessages({self._parsed()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (PromptMessages, (self._text,))


ITEM_FIELDS = frozenset(
    {"llm_action", "observation_before_action", "available_options", "observation_after_action", "reward", "done"}
)
"""An item-page action's fields with a place of their own in its step; the others stay in ``extra``,
``type`` too (the step's ``event`` besides)."""
NAMELESS_EVENT = "UnknownEvent"
"""A sub-event without a ``type``, named as the contract's model that keeps it."""
_OBSERVATIONS = ("observation_after_action", "observation", "observation_before_action")
"""A sub-event's observation fields, the most informative first (the page after, else the one seen)."""
_EVENT_FIELDS = tuple(name for name in FastEntry.__struct_fields__ if name not in ("step_number", "action_rebuilt"))
_JSON_NAMES = dict(zip(FastEntry.__struct_fields__, FastEntry.__struct_encode_fields__, strict=True))
_EVENT_DEFAULTS: dict[str, dict[str, Any]] = {
    "agent_buy": {"reward": 0.0, "done": True},
    ITEM_PAGE_ACTION: {
        "llm_action": {"name": "", "arguments": {}},
        "observation_before_action": "",
        "available_options": None,
        "observation_after_action": "",
        "reward": 0.0,
        "done": False,
    },
}
"""The fields a sub-event's model declares, with their defaults (its dump has them when the JSON
has not); any other sub-event's model declares only ``type``."""


def _event_extra(entry: FastEntry) -> dict[str, Any]:
    """A sub-event as its model dumps it (``model_dump(mode="json")``): ``type``, the declared fields
    and every field its JSON had."""
    kind = entry.type if isinstance(entry.type, str) else ""
    data: dict[str, Any] = {"type": kind, **_EVENT_DEFAULTS.get(kind, {})}
    for name in _EVENT_FIELDS:
        value = getattr(entry, name)
        if value is UNSET or name == "type":
            continue
        if isinstance(value, FastLlmAction):
            value = {"name": value.name, "arguments": value.arguments}
        data[_JSON_NAMES[name]] = value
    return data


_STEP = TrajectoryStep(index=0)
_TRAJECTORY = Trajectory(id="", format="webshop-demos")
_CALL = ToolCall(name="")


def _step(**values: Any) -> TrajectoryStep:
    """``TrajectoryStep(**values)`` without validation (msgspec has checked every type): a copy of
    a default step, its mutable defaults fresh. (pydantic's ``model_construct`` inspects each default
    factory's signature on every call: slower than validating.)"""
    return _step_of(values)


def _step_of(values: dict[str, Any]) -> TrajectoryStep:
    """:func:`_step` of a dict of the values, which it completes and keeps (no copy)."""
    for key in ("messages", "tools", "other_actions", "warnings"):
        if key not in values:
            values[key] = []
    if "extra" not in values:
        values["extra"] = {}
    return _STEP.model_copy(update=values)


def _call(name: str, arguments: dict[str, Any]) -> ToolCall:
    """``ToolCall(name=..., arguments=...)`` without validation (see :func:`_step`)."""
    return _CALL.model_copy(update={"name": name, "arguments": arguments})


def decision_step(entry: Any, index: int, extra: dict[str, Any], *, checked: bool) -> TrajectoryStep:
    """A seed decision step as a ``decision`` step, from its parsed model (``DecisionStep``) or its fast
    reading (:class:`FastEntry`: the same field names): the page before the prompt as its observation,
    the call and the env action it stands for, the page after as ``tool_result``, its prompt parsed into
    messages when they are first read (:class:`PromptMessages`: opening an episode parses no prompt);
    ``extra``, what has no place of its own. ``checked``: built without validation (:func:`_step`, the
    fast reading: msgspec has checked every type); the parsed model's step is validated, so a reward
    that is no number is read as missing and said in the step's warnings."""
    name, arguments = entry.llm_action_name or "", dict(entry.llm_action_arguments or {})
    fields: dict[str, Any] = {
        "index": index,
        "label": str(entry.step_number),
        "observation": entry.observation_before_llm,
        "thinking": entry.llm_thinking or "",
        "action": _call(name, arguments) if checked else ToolCall(name=name, arguments=arguments),
        "action_text": entry.expected_action,
        "tool_result": entry.observation_after_action,
        "reward": entry.reward,
        "done": entry.done,
        "state": entry.state,
        "available_actions": entry.available_actions,
        "prompt_text": entry.llm_prompt,
        "extra": extra,
        "kind": "decision",
        "warnings": [ACTION_REBUILT] if entry.action_rebuilt else [],
    }
    if checked:
        fields["messages"] = PromptMessages(entry.llm_prompt)
        return _step_of(fields)
    step = TrajectoryStep(**fields)
    step.messages = PromptMessages(entry.llm_prompt)  # set, not validated: validation would parse it
    return step


def item_step(
    entry: Any, index: int, label: str, name: str, arguments: dict[str, Any], action: str, fields: dict[str, Any]
) -> TrajectoryStep:
    """A seed item-page action as an ``item`` step, from its parsed model (``ItemPageAction``) or its
    fast reading (:class:`FastEntry`: the same field names): the page before it as its observation,
    its call and the env action it maps to, the page after, its outcome and options; ``fields``, the
    event as its model dumps it, in ``extra`` but for the fields with a place of their own. Built
    without validation (:func:`_step`): both readings have checked every type."""
    return _step(
        index=index,
        label=label,
        observation=entry.observation_before_action,
        action=_call(name, dict(arguments)),
        action_text=action,
        tool_result=entry.observation_after_action,
        reward=entry.reward,
        done=entry.done,
        state=ITEM,
        available_actions=entry.available_options,
        extra={key: value for key, value in fields.items() if key not in ITEM_FIELDS},
        kind="item",
        event=_event_name(fields),
    )


def event_step(index: int, label: str, fields: dict[str, Any]) -> TrajectoryStep:
    """A seed sub-event that is no item-page step (a detail page explored, the backup agent's turn, an
    item-page action whose call maps to no env action) as an ``event`` step, from the event as its
    model dumps it (``fields``): named by its ``type``; an item-page action's pages before and after as
    its observation and ``tool_result``, another event's most informative page as its observation; the
    env action it recorded, if any, as its action text; the event verbatim in ``extra``."""
    event = _event_name(fields)
    values: dict[str, Any] = {"index": index, "label": label, "kind": "event", "event": event}
    if event == "item_page_action":
        values["observation"] = _text(fields.get("observation_before_action"))
        values["tool_result"] = _text(fields.get("observation_after_action"))
    else:
        values["observation"] = next((text for key in _OBSERVATIONS if (text := _text(fields.get(key)))), "")
        action = fields.get("action")
        if isinstance(action, str):
            values["action_text"] = action
    values["extra"] = fields
    return _step_of(values)


def _event_name(fields: dict[str, Any]) -> str:
    """A sub-event's ``type``, or :data:`NAMELESS_EVENT` when it has none."""
    kind = fields.get("type")
    return kind if isinstance(kind, str) and kind else NAMELESS_EVENT


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def fast_trajectory(episode: FastEpisode) -> Trajectory:
    """A clean episode's fast reading as the Trajectory the webshop-demos reader makes of its
    parsed episode (:func:`replay_tui.formats.webshop_demos.trajectory.from_webshop_episode`), built without
    validation (msgspec has checked every field's type: :func:`_step`) and with each prompt
    parsed when read (:class:`PromptMessages`)."""
    steps: list[TrajectoryStep] = []
    last_number, items = 0, 0
    for entry in episode.trajectory:
        if entry.is_decision:
            assert isinstance(entry.step_number, int)
            last_number, items = entry.step_number, 0
            steps.append(decision_step(entry, len(steps), {}, checked=True))
            continue
        action = entry.action if entry.is_item_action else None
        if action is not None:
            items += 1
            call = entry.llm_action
            assert isinstance(call, FastLlmAction)
            label = f"{max(last_number, 0)}.{items}"
            arguments: Any = call.arguments or {}
            steps.append(item_step(entry, len(steps), label, call.name, arguments, action, _event_extra(entry)))
            continue
        label = f"{max(last_number, 0)}.-"
        steps.append(event_step(len(steps), label, _event_extra(entry)))
    extra = {
        "session_id": episode.session_id,
        "instruction": episode.instruction,
        "final_reward": episode.final_reward,
        "success": episode.success,
        "completed_by_backup": episode.completed_by_backup,
    }
    if episode.synthetic is not UNSET:
        extra["_synthetic"] = episode.synthetic
    outcome = webshop_outcome(
        episode.final_reward,
        seed_success(episode.final_reward, episode.success),
        episode.completed_by_backup,
        episode.trajectory,
    )
    return _TRAJECTORY.model_copy(
        update={
            "id": str(episode.session_id),
            "task": episode.instruction,
            "metadata": {},
            "steps": steps,
            "outcome": outcome,
            "side_calls": [],
            "extra": extra,
            "problems": [],
        }
    )
