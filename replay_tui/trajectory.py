"""The general episode model every log format maps onto: a task, steps, an outcome.

A step holds what the agent saw (observation text, an optional screenshot and accessibility
tree), the messages the model was sent (the prompt, as chat messages), the tool schemas it was
offered, what it thought and said, the recorded action as a tool call (name + typed arguments)
with its display string, the tool's result, reward/done, and anything else verbatim in ``extra``.

The seed's WebShop demonstration files map onto it without loss (:func:`from_webshop_episode`):
every field without a place of its own is kept in ``extra``.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field


class ToolCall(BaseModel):
    """A recorded (or predicted) tool call: ``name`` and its ``arguments`` as typed JSON values.

    ``raw_arguments`` keeps the arguments text as logged when it was not a JSON object (a model
    that wrote broken JSON is data, not an error).
    """

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    raw_arguments: str | None = None

    def display(self) -> str:
        """``name({"a": 1})``: compact, keys in the order the log had them."""
        if self.raw_arguments is not None and not self.arguments:
            return f"{self.name}({self.raw_arguments})"
        if not self.arguments:
            return f"{self.name}()"
        return call_text(self.name, self.arguments)


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """The canonical text of a tool call, ``name({"a": 1})``: what replays of tool-calling formats
    record as the expected and predicted action (arguments as JSON, keys in the order given)."""
    return f"{name}({orjson.dumps(arguments, option=orjson.OPT_NON_STR_KEYS).decode()})"


_CALL_TEXT = re.compile(r"\A\s*([^\s(]+)\s*\((.*)\)\s*\Z", re.DOTALL)


def parse_call_text(text: str) -> ToolCall | None:
    """:func:`call_text` read back; None when ``text`` is not ``name(...)``.

    Arguments that are not a JSON object are kept as ``raw_arguments`` (a model that wrote broken
    JSON is judged, not refused)."""
    found = _CALL_TEXT.match(text)
    if found is None:
        return None
    name, inner = found.group(1), found.group(2).strip()
    if not inner:
        return ToolCall(name=name)
    try:
        value = orjson.loads(inner)
    except orjson.JSONDecodeError:
        return ToolCall(name=name, raw_arguments=inner)
    if not isinstance(value, dict):
        return ToolCall(name=name, raw_arguments=inner)
    return ToolCall(name=name, arguments=value)


class ChatMessage(BaseModel):
    """One chat message as a model saw or wrote it (OpenAI-style roles: system, user, assistant, tool)."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None


class TrajectoryStep(BaseModel):
    """One decision of the agent, with everything the log recorded around it."""

    index: int
    """Position among the episode's steps (0-based)."""
    label: str = ""
    """How views name the step (``"3"``, ``"3.1"``...); ``str(index)`` when empty."""
    observation: str = ""
    screenshot: bytes | None = Field(default=None, exclude=True, repr=False)
    """The page as an image (PNG/JPEG bytes) when the log has one."""
    axtree: str | None = None
    """An accessibility tree or DOM excerpt, as text."""
    messages: list[ChatMessage] = Field(default_factory=list)
    """The prompt: the messages the model was sent for this decision."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """Tool schemas offered (OpenAI ``{"type": "function", "function": {...}}`` shape) when logged."""
    thinking: str = ""
    content: str = ""
    """The model's visible text besides the tool call."""
    action: ToolCall | None = None
    action_text: str = ""
    """The action as the log shows it (``search[shoes]``, ``bash(ls)``); ``action.display()`` when empty."""
    tool_result: str | None = None
    reward: float | None = None
    done: bool = False
    state: str | None = None
    """A state or page name when the format has one (WebShop: Search, Result, Item)."""
    extra: dict[str, Any] = Field(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        if not self.label:
            self.label = str(self.index)
        if not self.action_text and self.action is not None:
            self.action_text = self.action.display()


class Outcome(BaseModel):
    """How the episode ended: reward/score, success, and the format's own scores verbatim."""

    reward: float | None = None
    success: bool | None = None
    status: str | None = None
    """Why it ended when the log says (``submitted``, ``max_steps``, ``error``...)."""
    scores: dict[str, Any] = Field(default_factory=dict)


class Trajectory(BaseModel):
    """One episode in any format."""

    id: str
    """The episode's id in its log (a session id, a sample id, an instance id)."""
    format: str
    """The reader that produced it (:mod:`replay_tui.formats`)."""
    task: str = ""
    """The instruction or goal."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    steps: list[TrajectoryStep] = Field(default_factory=list)
    outcome: Outcome = Field(default_factory=Outcome)
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def recorded_calls(self) -> int:
        """Steps that carry a recorded tool call (what a stub replay can check)."""
        return sum(1 for step in self.steps if step.action is not None)


def from_webshop_episode(episode: Any) -> Trajectory:
    """The seed's WebShop episode (:class:`replay_tui.demos.models.Episode`) as a Trajectory.

    Decision steps become steps (their prompt parsed into messages when it parses); sub-events
    (item-page actions, detail exploration, backup agent...) are kept verbatim in the step they
    follow (``extra["sub_events"]``), the episode's own extra fields in ``extra``.
    """
    from replay_tui.demos.models import DecisionStep, PromptError

    steps: list[TrajectoryStep] = []
    leading: list[dict[str, Any]] = []
    for entry in episode.trajectory:
        if not isinstance(entry, DecisionStep):
            dumped = entry.model_dump(mode="json") if isinstance(entry, BaseModel) else entry
            (steps[-1].extra.setdefault("sub_events", []) if steps else leading).append(dumped)
            continue
        try:
            messages = [ChatMessage(role=m.role, content=m.content) for m in entry.prompt_messages()]
        except PromptError:
            messages = []
        known = {
            "step_number",
            "observation_before_llm",
            "llm_prompt",
            "llm_thinking",
            "llm_action_name",
            "llm_action_arguments",
            "state",
            "available_actions",
            "action_executed_in_env",
            "observation_after_action",
            "reward",
            "done",
        }
        data = entry.model_dump(mode="json")
        extra = {key: value for key, value in data.items() if key not in known}
        extra.update(
            available_actions=entry.available_actions,
            observation_after_action=entry.observation_after_action,
            llm_prompt=entry.llm_prompt,
        )
        steps.append(
            TrajectoryStep(
                index=len(steps),
                label=str(entry.step_number),
                observation=entry.observation_before_llm,
                messages=messages,
                thinking=entry.llm_thinking or "",
                action=ToolCall(name=entry.llm_action_name or "", arguments=dict(entry.llm_action_arguments or {})),
                action_text=entry.expected_action,
                reward=entry.reward,
                done=entry.done,
                state=entry.state,
                extra=extra,
            )
        )
    extra = {key: value for key, value in episode.model_dump(mode="json").items() if key not in ("trajectory",)}
    if leading:
        extra["leading_sub_events"] = leading
    return Trajectory(
        id=str(episode.session_id),
        format="webshop-demos",
        task=episode.instruction,
        steps=steps,
        outcome=Outcome(reward=episode.reward, success=episode.succeeded),
        extra=extra,
    )
