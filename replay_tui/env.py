"""OfflineWebshopEnv: a deterministic, file-backed WebShop that replays one recorded episode.

Gym-style ``reset``/``step``; every observation, reward and ``done`` comes from the log. The agent
must follow the recorded branch: each action is judged by :mod:`replay_tui.matching` (match,
equivalent or mismatch, under the matching policy of the step's state). A match or an
equivalent follows the branch; a mismatch is handled by the mismatch policy (``stop`` ends the
episode there, ``allow`` forces the recorded action and carries on). ``info["match"]`` is true
when the branch is followed; ``info["verdict"]`` and ``info["reason"]`` say how it was judged.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from replay_tui.episodes.collection import EpisodeSet
from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.reading import ACTION_REBUILT, FastReading, FastStep
from replay_tui.formats.webshop_demos import SeedStep, is_seed
from replay_tui.matching import AnswerSpec, MatchPolicy, MatchSettings, judge_step
from replay_tui.sources import LogDecision, log_decisions, open_sources, tools_by_name
from replay_tui.webshop import ITEM, infer_available_actions, infer_state

MismatchPolicy = Literal["stop", "allow"]
_PLAIN = (str, int, float, bool, type(None))
MISMATCH_POLICIES: tuple[str, ...] = ("stop", "allow")


@dataclass(frozen=True)
class ReplayStep:
    """One step the env will replay: a decision step, or an item-page action sub-event.

    ``label`` is the decision ``step_number`` ("3"), or "3.1", "3.2"... for item-page actions
    taken after decision step 3.
    """

    index: int
    step_number: int
    label: str
    kind: Literal["decision", "item"]
    state: str
    available_actions: list[str]
    observation: str
    observation_after: str
    expected: str
    reward: float
    done: bool
    source: FastStep | LogDecision | SeedStep = field(repr=False)
    """The recorded step: a seed episode's Trajectory step (:class:`SeedStep`) or its fast reading's
    entry (:class:`~replay_tui.episodes.reading.FastStep`); a log of another format's Trajectory
    step, with its recorded-step fields (:class:`LogDecision`)."""
    trajectory_index: int = 0
    warnings: tuple[str, ...] = ()
    call: bool = False
    """True for a decision of another format: a tool call judged by name and typed arguments, or a
    plain answer (:func:`judge_step`)."""
    schema: dict[str, Any] | AnswerSpec | None = field(default=None, repr=False)
    """The recorded tool's JSON-schema ``parameters`` (types for the arguments), when known; for a
    plain answer, its :class:`~replay_tui.matching.AnswerSpec`."""

    @property
    def llm_prompt(self) -> str | None:
        """The recorded prompt (None for an item-page action); a log of another format's is built
        now, for this step only (see :class:`replay_tui.sources.StepPrompts`)."""
        source = self.source
        if isinstance(source, LogDecision):
            return self._log_prompt(source)
        # a fast entry's decision fields are set by decode_fast (typed with UNSET until then)
        return source.llm_prompt if self.kind == "decision" else None

    def _log_prompt(self, source: LogDecision) -> str | None:
        """A log step's prompt text, built once per replayed step (:attr:`recorded` holds it too):
        it is the whole conversation so far, dumped."""
        if "_prompt" not in self.__dict__:
            self.__dict__["_prompt"] = source.prompt_text()
        return self.__dict__["_prompt"]

    @property
    def recorded(self) -> dict[str, Any]:
        """The recorded decision as a plain dict in the decision-step shape (what policies receive),
        made on first use and kept (without functools.cached_property, whose lock every replay
        worker's every step would take)."""
        made = self.__dict__.get("_recorded")
        if made is None:
            made = self.__dict__["_recorded"] = self._recorded()
        return made

    @property
    def webshop_call(self) -> tuple[str, dict[str, Any]] | None:
        """The recorded WebShop tool call (name, arguments) as :attr:`recorded` holds it, when its
        arguments are plain JSON scalars (they then read the same in the model as in its dump);
        None for a tool call of another format and any other arguments."""
        source = self.source
        if self.call:
            return None
        if self.kind == "decision":
            name, arguments = source.llm_action_name, source.llm_action_arguments
        else:
            name, arguments = source.llm_action.name, source.llm_action.arguments  # type: ignore[union-attr]
        if type(arguments) is not dict or not all(type(value) in _PLAIN for value in arguments.values()):
            return None
        return str(name), arguments

    def _recorded(self) -> dict[str, Any]:
        if isinstance(self.source, LogDecision):
            data = copy.deepcopy(self.source.fields)  # a policy may change its dict; the step stays
            data["llm_prompt"] = self._log_prompt(self.source)
            if self.source.tool_call or self.source.answer:
                data["messages"] = self.source.messages
        elif isinstance(self.source, SeedStep) and self.kind == "decision":
            data = copy.deepcopy(self.source.fields)
        elif not isinstance(self.source, SeedStep) and self.kind == "decision":  # a fast reading's entry
            data = self.source.decision_dump()
        else:
            call: Any = self.source.llm_action  # an item-page action's (set on a fast entry too)
            data = {
                "step_number": self.step_number,
                "llm_action_name": call.name,
                "llm_action_arguments": dict(call.arguments),
                "observation_before_llm": self.observation,
                "observation_after_action": self.observation_after,
                "llm_prompt": None,
                "reward": self.reward,
                "done": self.done,
            }
        data.update(
            state=self.state, available_actions=list(self.available_actions), action_executed_in_env=self.expected
        )
        return data


def _log_steps(trajectory: Trajectory) -> list[ReplayStep]:
    """The steps to replay of a log of another format, read from its Trajectory: each decision
    (a tool call, a plain answer, a WebShop human trace's action) as :func:`decision_fields` reads it."""
    steps: list[ReplayStep] = []
    for position, decision in log_decisions(trajectory):
        step, fields = decision.step, decision.fields
        judged = decision.tool_call or decision.answer
        warnings: list[str] = []
        state: str = fields["state"] or ""
        available: list[str] | None = fields["available_actions"]
        schema: dict[str, Any] | AnswerSpec | None = None
        if decision.answer:
            schema = AnswerSpec(fields["answer_type"])
        elif judged:
            schema = tools_by_name(fields["tools"]).get(decision.llm_action_name)
        else:  # WebShop actions: what the log leaves out is inferred, as for a seed file
            if not state:
                state = infer_state(step.observation)
                warnings.append(f"state missing; inferred {state!r} from the observation")
            if available is None:
                available = infer_available_actions(state, step.observation)
                warnings.append("available_actions missing; inferred from the observation")
        steps.append(
            ReplayStep(
                index=len(steps),
                step_number=step.index,
                label=step.label if judged else str(step.index),
                kind="decision",
                state=state,
                available_actions=list(available or ()),
                observation=step.observation,
                observation_after=fields["observation_after_action"],
                expected=fields["action_executed_in_env"] or "",
                reward=fields["reward"],
                done=step.done,
                source=decision,
                trajectory_index=position,
                warnings=(*warnings, *step.warnings),  # the reader's own last, as a seed step's
                call=judged,
                schema=schema,
            )
        )
    return steps


def _seed_steps(trajectory: Trajectory, include_item_steps: bool) -> list[ReplayStep]:
    """The steps to replay of a seed demo file's Trajectory (:mod:`replay_tui.formats.webshop_demos`):
    its decisions, and its item-page actions when asked, as the Episode's are replayed, with the
    same warnings (the reader's own, :attr:`TrajectoryStep.warnings`, last)."""
    steps: list[ReplayStep] = []
    number = -1
    for position, step in enumerate(trajectory.steps):
        if step.kind == "decision":
            number = int(step.label)
        elif step.kind != "item" or not include_item_steps:
            continue
        warnings: list[str] = []
        source = SeedStep(step)
        call, label, tools = source.call_fields()
        state = step.state or ""
        available = step.available_actions
        if call:  # a seed step that says it is a tool call (its own tool_call field): judged as one
            state = state or source.llm_action_name
            available = available or []
        elif step.kind == "decision" and not state:
            state = infer_state(step.observation)
            warnings.append(f"state missing; inferred {state!r} from the observation")
        if available is None:
            available = infer_available_actions(state, step.observation)
            missing = "available_actions" if step.kind == "decision" else "available_options"
            warnings.append(f"{missing} missing; inferred from the observation")
        if not call:  # as the parsed episode's: a tool call's action is its call
            warnings += step.warnings
        steps.append(
            ReplayStep(
                index=len(steps),
                step_number=number if step.kind == "decision" else max(number, 0),
                label=label or step.label,
                kind="decision" if step.kind == "decision" else "item",
                state=state,
                available_actions=list(available),
                observation=step.observation,
                observation_after=step.tool_result or "",
                expected=step.action_text,
                reward=step.reward if step.reward is not None else 0.0,
                done=step.done,
                source=source,
                trajectory_index=position,
                warnings=tuple(warnings),
                call=call,
                schema=tools_by_name(tools).get(source.llm_action_name) if call else None,
            )
        )
    return steps


def replay_steps(episode: Trajectory | FastReading, *, include_item_steps: bool = False) -> list[ReplayStep]:
    """The steps to replay for an episode, with missing state and actions inferred (and warned): a
    Trajectory's (a seed demo's, or a log of another format's), or a clean seed episode's fast
    reading, whose steps are the same as its Trajectory's (:meth:`EpisodeSet.replay_episode`)."""
    if not isinstance(episode, Trajectory):
        return _fast_steps(episode, include_item_steps)
    if is_seed(episode):
        return _seed_steps(episode, include_item_steps)
    return _log_steps(episode)


def _fast_steps(episode: FastReading, include_item_steps: bool) -> list[ReplayStep]:
    """The steps to replay of a clean seed episode's fast reading, read from its entries (no
    Trajectory built: a stub replay's cost is mostly this reading; a fast entry is never a tool
    call, a step with the call fields has no fast reading)."""
    steps: list[ReplayStep] = []
    last_number = -1
    item_count = 0
    entries: Sequence[Any] = episode.trajectory  # their decision fields are set by decode_fast (typed UNSET until then)
    for position, entry in enumerate(entries):
        warnings: list[str] = []
        if entry.is_decision:
            last_number, item_count = entry.step_number, 0
            observation = entry.observation_before_llm
            available: list[str]
            state = entry.state or ""
            if not state:
                state = infer_state(observation)
                warnings.append(f"state missing; inferred {state!r} from the observation")
            if entry.available_actions is None:
                available = infer_available_actions(state, observation)
                warnings.append("available_actions missing; inferred from the observation")
            else:
                available = entry.available_actions
            if entry.action_rebuilt:
                warnings.append(ACTION_REBUILT)
            steps.append(
                ReplayStep(
                    index=len(steps),
                    step_number=entry.step_number,
                    label=str(entry.step_number),
                    kind="decision",
                    state=state,
                    available_actions=list(available),
                    observation=observation,
                    observation_after=entry.observation_after_action,
                    expected=entry.expected_action,
                    reward=entry.reward,
                    done=entry.done,
                    source=entry,
                    trajectory_index=position,
                    warnings=tuple(warnings),
                )
            )
        elif include_item_steps and entry.is_item_action:
            expected = entry.action
            if expected is None:
                continue  # a tool call we cannot map; nothing to compare against
            item_count += 1
            if entry.available_options is None:
                available = infer_available_actions(ITEM, entry.observation_before_action)
                warnings.append("available_options missing; inferred from the observation")
            else:
                available = entry.available_options
            steps.append(
                ReplayStep(
                    index=len(steps),
                    step_number=max(last_number, 0),
                    label=f"{max(last_number, 0)}.{item_count}",
                    kind="item",
                    state=ITEM,
                    available_actions=list(available),
                    observation=entry.observation_before_action,
                    observation_after=entry.observation_after_action,
                    expected=expected,
                    reward=entry.reward,
                    done=entry.done,
                    source=entry,
                    trajectory_index=position,
                    warnings=tuple(warnings),
                )
            )
    return steps


class EpisodeFinished(RuntimeError):
    """``step`` was called after the episode ended; call ``reset`` first."""


class OfflineWebshopEnv:
    """A WebShop environment backed by recorded demonstrations.

    ``env = OfflineWebshopEnv("webshop_demonstrations_0-99.json")``; ``obs, info = env.reset(0)``;
    ``obs, reward, done, info = env.step("search[...]")`` with info ``{match, step_number, state,
    expected, ...}``.
    """

    def __init__(
        self,
        demos: EpisodeSet | str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        mismatch_policy: MismatchPolicy = "stop",
        include_item_steps: bool = False,
        case: MatchPolicy = "exact",
        matching: MatchSettings | None = None,
    ):
        if mismatch_policy not in MISMATCH_POLICIES:
            raise ValueError(f"mismatch_policy must be one of {MISMATCH_POLICIES}, got {mismatch_policy!r}")
        self.demos = demos if isinstance(demos, EpisodeSet) else open_sources(demos)
        self.mismatch_policy: MismatchPolicy = mismatch_policy
        self.include_item_steps = include_item_steps
        self.matching: MatchSettings = matching if matching is not None else MatchSettings(case)
        self.replayed: Trajectory | FastReading | None = None
        """The episode being replayed, as the replay read it (:meth:`EpisodeSet.replay_episode`; what
        reports say of it: :func:`replay_tui.sources.facts_of`)."""
        self.steps: list[ReplayStep] = []
        self.cursor = 0
        self.finished = True
        self._session_id = 0

    @property
    def trajectory(self) -> Trajectory | None:
        """The episode being replayed as the one model (read now, through the set's cache, when the
        replay read it the fast way)."""
        replayed = self.replayed
        if replayed is None or isinstance(replayed, Trajectory):
            return replayed
        return self.demos.trajectory(self._session_id)

    @property
    def case(self) -> MatchPolicy:
        """The default matching policy (every state without its own in ``matching``)."""
        return self.matching.default

    @property
    def current(self) -> ReplayStep | None:
        """The step the next ``step()`` call will be judged against (None when finished)."""
        if self.finished or self.cursor >= len(self.steps):
            return None
        return self.steps[self.cursor]

    def reset(self, session_id: int) -> tuple[str, dict[str, Any]]:
        """Start the episode ``session_id``; return its first observation and step meta.

        Raises KeyError for an unknown session and EpisodeLoadError for a malformed one.
        """
        self.replayed = self.demos.replay_episode(session_id)
        self._session_id = session_id
        self.steps = replay_steps(self.replayed, include_item_steps=self.include_item_steps)
        self.cursor = 0
        self.finished = not self.steps
        first = self.current
        info: dict[str, Any] = {"step_index": 0, "total_steps": len(self.steps), "session_id": session_id}
        if first is None:
            return "", info
        info.update(
            state=first.state,
            available_actions=list(first.available_actions),
            step_number=first.step_number,
            warnings=list(first.warnings),
        )
        return first.observation, info

    def step(self, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        """Judge ``action`` against the recorded one and return ``(obs, reward, done, info)``.

        On a match, or a mismatch under ``allow``, the recorded outcome is returned and the cursor
        advances. A mismatch under ``stop`` ends the episode: the observation is unchanged,
        reward 0 and ``done`` True, like an action the offline world cannot follow.
        """
        step = self.current
        if step is None:
            raise EpisodeFinished("the episode is finished; call reset() to start another")
        verdict = judge_step(self.matching, step.expected, action, step.state, call=step.call, schema=step.schema)
        match = verdict.accepted
        info: dict[str, Any] = {
            "match": match,
            "verdict": verdict.verdict,
            "reason": verdict.reason,
            "policy": verdict.policy,
            "step_number": step.step_number,
            "step_label": step.label,
            "step_index": step.index,
            "state": step.state,
            "expected": step.expected,
            "predicted": action,
            "forced": False,
            "stopped": False,
            "exhausted": False,
            "warnings": list(step.warnings),
        }
        if not match and self.mismatch_policy == "stop":
            self.finished = True
            info["stopped"] = True
            return step.observation, 0.0, True, info
        info["forced"] = not match
        self.cursor += 1
        if step.done or self.cursor >= len(self.steps):
            self.finished = True
            info["exhausted"] = self.cursor >= len(self.steps)
        return step.observation_after, step.reward, step.done, info
