"""pydantic models of the demonstration-log contract (seed 002): episodes, decision steps, sub-events.

The models accept what real logs contain (numeric strings, "true"/"false" strings, tool arguments
as a JSON string, a missing executed action) and keep every unknown field, so nothing a log holds
is ever dropped. ``llm_prompt`` stays a string until someone asks for the chat messages.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, model_validator

from replay_tui.actions import ActionError, format_env_action
from replay_tui.episodes.problems import problems_at
from replay_tui.episodes.recorded import PROMPT_SIZE_LIMIT, arguments_from_json, parse_prompt


def _bool_from_text(value: Any) -> Any:
    """Accept "true"/"false" (any case, padded) as well as real booleans and 0/1."""
    if isinstance(value, str):
        folded = value.strip().lower()
        if folded in ("true", "1", "yes"):
            return True
        if folded in ("false", "0", "no", ""):
            return False
    return value


def _int_from_text(value: Any) -> Any:
    """Accept "3" and "3.0" (and 3.0) as 3; refuse booleans; leave anything else for pydantic to reject."""
    if isinstance(value, bool):
        raise ValueError("must be an integer, not a boolean")
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text)
        except ValueError:
            return value
        if number.is_integer():
            return int(number)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


ID_MIN, ID_MAX = -(2**63), 2**63 - 1


def _id_in_range(value: int) -> int:
    if not ID_MIN <= value <= ID_MAX:
        raise ValueError("out of range: must fit in 64 bits (-2**63 to 2**63-1)")
    return value


LaxBool = Annotated[bool, BeforeValidator(_bool_from_text)]
LaxInt = Annotated[int, BeforeValidator(_int_from_text), AfterValidator(_id_in_range)]
"""An id (``session_id``, ``step_number``): an integer in 64 bits, given as one, as an integral float or as text."""
Arguments = Annotated[dict[str, Any], BeforeValidator(arguments_from_json)]


class DecisionStep(BaseModel):
    """A top-level decision of the agent: a trajectory entry that has ``step_number``."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    step_number: LaxInt
    observation_before_llm: str = ""
    llm_prompt: str | None = None
    llm_thinking: str | None = None
    llm_action_name: str = ""
    llm_action_arguments: Arguments = Field(default_factory=dict)
    state: str | None = None
    available_actions: list[str] | None = None
    action_executed_in_env: str | None = None
    observation_after_action: str = ""
    reward: float = 0.0
    done: LaxBool = False

    action_rebuilt: bool = Field(default=False, exclude=True)
    """True when ``action_executed_in_env`` was empty or missing and was rebuilt from the tool call."""

    @model_validator(mode="after")
    def _rebuild_action(self) -> DecisionStep:
        if self.action_executed_in_env is None or not self.action_executed_in_env.strip():
            try:
                self.action_executed_in_env = format_env_action(self.llm_action_name, self.llm_action_arguments)
            except (ActionError, TypeError, ValueError) as exc:
                raise ValueError(
                    f"action_executed_in_env is empty and cannot be rebuilt from the tool call: {exc}"
                ) from None
            self.action_rebuilt = True
        return self

    @property
    def expected_action(self) -> str:
        """The recorded env action (rebuilt from the tool call when the log left it empty)."""
        return self.action_executed_in_env or ""

    def prompt_messages(self, *, limit: int = PROMPT_SIZE_LIMIT) -> list[dict[str, Any]]:
        """The prompt as chat messages, parsed on demand (see :func:`parse_prompt`)."""
        return parse_prompt(self.llm_prompt, limit=limit)

    @property
    def call_fields(self) -> tuple[bool, str | None, list[Any]]:
        """(judged as a tool call, the log's step label, the tool schemas): a step may carry
        ``tool_call``/``step_label``/``tools`` as fields of its own (the contract keeps unknown
        fields), and is judged as a tool call of another format then."""
        extra = self.model_extra or {}
        if not extra.get("tool_call"):
            return False, None, []
        label, tools = extra.get("step_label"), extra.get("tools")
        return True, label if isinstance(label, str) else None, tools if isinstance(tools, list) else []


class SubEvent(BaseModel):
    """A non-decision trajectory entry, tagged by ``type``; every field it carries is kept."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    type: str = ""
    kind: ClassVar[str] = ""

    @property
    def action(self) -> str | None:
        """The env action this event recorded, when it has one."""
        value = (self.model_extra or {}).get("action")
        return value if isinstance(value, str) else None

    @property
    def observation(self) -> str:
        """The most informative observation text the event carries (after, else before)."""
        extra = self.model_extra or {}
        for key in ("observation_after_action", "observation", "observation_before_action"):
            value = getattr(self, key, None) if key in type(self).model_fields else extra.get(key)
            if isinstance(value, str) and value:
                return value
        return ""


class LlmAction(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    name: str = ""
    arguments: Arguments = Field(default_factory=dict)


class ItemPageAction(SubEvent):
    """A decision taken on an item page (Description, Features, Reviews, an option, Buy Now, Prev)."""

    kind: ClassVar[str] = "item_page_action"

    llm_action: LlmAction = Field(default_factory=LlmAction)
    observation_before_action: str = ""
    available_options: list[str] | None = None
    observation_after_action: str = ""
    reward: float = 0.0
    done: LaxBool = False

    @property
    def action(self) -> str | None:
        """The recorded ``action`` if present, else the env action the tool call maps to."""
        recorded = (self.model_extra or {}).get("action")
        if isinstance(recorded, str) and recorded.strip():
            return recorded
        try:
            return format_env_action(self.llm_action.name, self.llm_action.arguments)
        except ActionError:
            return None


class DetailExploration(SubEvent):
    kind: ClassVar[str] = "detail_exploration"


class BackFromDetail(SubEvent):
    kind: ClassVar[str] = "back_from_detail"


class CustomizationClick(SubEvent):
    kind: ClassVar[str] = "customization_click"


class AgentBuy(SubEvent):
    kind: ClassVar[str] = "agent_buy"

    reward: float = 0.0
    done: LaxBool = True


class BackupAgentEvent(SubEvent):
    """Any ``backup_agent_*`` event: the fallback agent that completes an episode."""

    kind: ClassVar[str] = "backup_agent"


class UnknownEvent(SubEvent):
    """A sub-event of a type this version does not know; kept verbatim."""

    kind: ClassVar[str] = "unknown"


SUB_EVENT_TYPES: dict[str, type[SubEvent]] = {
    cls.kind: cls for cls in (ItemPageAction, DetailExploration, BackFromDetail, CustomizationClick, AgentBuy)
}


def sub_event_class(type_name: str) -> type[SubEvent]:
    """The model for a sub-event ``type``; ``backup_agent_*`` share one, unknown types keep theirs."""
    if type_name in SUB_EVENT_TYPES:
        return SUB_EVENT_TYPES[type_name]
    if type_name.startswith("backup_agent"):
        return BackupAgentEvent
    return UnknownEvent


TrajectoryEntry = DecisionStep | SubEvent

ACTION_FIELDS = frozenset(
    {"step_number", "type", "llm_action_name", "llm_action_arguments", "action_executed_in_env", "llm_action"}
)
"""The fields that say what a step is and which action it recorded: an invalid one is never read as
its default (the step would be judged against an action nobody took), so the episode stays a problem."""


class EpisodeHeader(BaseModel):
    """The episode-level fields, without the trajectory (what the session browser shows)."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    session_id: LaxInt
    instruction: str = ""
    final_reward: float | None = None
    success: LaxBool | None = None
    completed_by_backup: LaxBool = False


class Episode(EpisodeHeader):
    """One recorded episode: its header plus the ordered trajectory of steps and sub-events."""

    trajectory: list[Any] = Field(default_factory=list)

    _problems: list[Any] = PrivateAttr(default_factory=list)
    """The :class:`~replay_tui.episodes.problems.LoadProblem` of each trajectory field that was invalid
    and read as its default (see ``loader.parse_episode``): one bad field no longer hides the episode."""

    @property
    def problems(self) -> list[Any]:
        """The invalid fields of this episode's steps, each read as its default (LoadProblems)."""
        return self._problems

    def problems_at(self, position: int) -> list[Any]:
        """The invalid fields of the trajectory entry at ``position``."""
        return problems_at(self._problems, position)

    @property
    def episode_id(self) -> str:
        """The episode's id in its own log: its session id."""
        return str(self.session_id)

    @property
    def decision_steps(self) -> list[DecisionStep]:
        return [e for e in self.trajectory if isinstance(e, DecisionStep)]

    @property
    def sub_events(self) -> list[SubEvent]:
        return [e for e in self.trajectory if isinstance(e, SubEvent)]

    @property
    def reward(self) -> float:
        """``final_reward``, or the last reward in the trajectory when the log omits it."""
        if self.final_reward is not None:
            return self.final_reward
        for entry in reversed(self.trajectory):
            value = getattr(entry, "reward", None)
            if isinstance(value, (int, float)) and value:
                return float(value)
        return 0.0

    @property
    def succeeded(self) -> bool:
        """``success``, or reward == 1.0 (LASER's definition) when the log omits it."""
        return self.success if self.success is not None else self.reward == 1.0
