"""The policy protocol every replay driver implements, and how the engines call and close policies."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, runtime_checkable


@runtime_checkable
class Policy(Protocol):
    """Anything with ``predict_action`` is a policy.

    The seed's four-argument signature is enough; a policy that also accepts ``recorded_step``
    (or ``**kwargs``) receives the recorded decision as a dict in the decision-step shape.
    """

    def predict_action(
        self,
        observation: str,
        state: str,
        available_actions: list[str],
        llm_prompt_repr: str | None,
    ) -> str: ...


class PolicyFailure(Exception):
    """A policy could not produce an action, for a reason worth counting (timeout, no tool call...).

    The Runner records ``kind`` on the step and counts failures per kind in the report; the run
    goes on. ``raw`` is an excerpt of what came back, for the step view.
    """

    def __init__(self, kind: str, message: str, raw: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.raw = raw


class ThreadLocalTrace:
    """``last_trace`` kept per thread, so one policy object can serve several replay workers.

    Subclasses create ``self._local = threading.local()`` in ``__init__``.
    """

    _local: threading.local

    @property
    def last_trace(self) -> dict[str, Any] | None:
        """The trace of this thread's latest call (what the Runner copies into ``StepResult.trace``)."""
        return getattr(self._local, "trace", None)

    @last_trace.setter
    def last_trace(self, value: dict[str, Any] | None) -> None:
        self._local.trace = value

    def record_failure(self, trace: dict[str, Any], failure: PolicyFailure) -> PolicyFailure:
        """Keep ``failure`` in ``trace`` as this thread's last trace; returns it for the caller to raise."""
        trace["failure"] = {"kind": failure.kind, "message": failure.message, "raw": failure.raw}
        self.last_trace = trace
        return failure


def takes_recorded_step(function: Callable[..., Any]) -> bool:
    """True when ``function`` accepts a ``recorded_step`` keyword (or ``**kwargs``)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        (p.name == "recorded_step" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)) or p.kind is p.VAR_KEYWORD
        for p in parameters
    )


def accepts_recorded_step(policy: Any) -> bool:
    """True when ``policy.predict_action`` should be given ``recorded_step=``."""
    return takes_recorded_step(policy.predict_action)


class PolicyInput(Protocol):
    """What a policy is asked about: a recorded step (``replay_tui.env.ReplayStep``)."""

    @property
    def observation(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def available_actions(self) -> list[str]: ...
    @property
    def llm_prompt(self) -> str | None: ...
    @property
    def recorded(self) -> dict[str, Any]: ...


class Prediction(NamedTuple):
    """A policy's answer for one step: the action, or ``""`` with why there is none."""

    action: str
    error: str | None = None
    error_kind: str | None = None
    """A PolicyFailure's kind, ``exception`` or ``not_a_string``; None when there is an action."""


def call_policy(
    policy: Policy,
    step: PolicyInput,
    *,
    pass_step: bool | None = None,
    sample: int | None = None,
    from_step: Callable[[Any], str] | None = None,
) -> Prediction:
    """Ask ``policy`` for ``step``'s action; a failure is a Prediction, never an exception.

    The policy sees what the recorded agent saw (``step.observation``, its state, actions and
    prompt), plus ``recorded_step=step.recorded`` when it accepts it (``pass_step``, worked out
    from its signature when None: give the answer when calling in a loop) and ``sample=`` when
    ``sample`` is not None. A PolicyFailure gives its kind; any other exception the kind
    ``exception``; an answer that is not a string the kind ``not_a_string``. ``from_step`` (the
    stub's ``predict_from_step``) answers for the step itself, as ``predict_action`` would have.
    """
    if pass_step is None:
        pass_step = accepts_recorded_step(policy)
    kwargs: dict[str, Any] = {}
    if pass_step and from_step is None:
        kwargs["recorded_step"] = step.recorded
    if sample is not None:
        kwargs["sample"] = sample
    try:
        if from_step is not None and sample is None:
            predicted = from_step(step)
        else:
            predicted = policy.predict_action(
                step.observation,
                step.state,
                list(step.available_actions),
                step.llm_prompt,
                **kwargs,
            )
    except PolicyFailure as exc:
        return Prediction("", exc.message, exc.kind)
    except Exception as exc:
        return Prediction("", f"{type(exc).__name__}: {exc}", "exception")
    if not isinstance(predicted, str):
        return Prediction("", f"policy returned {type(predicted).__name__}, not an action string", "not_a_string")
    return Prediction(predicted)


def close_policies(*policies: Any) -> None:
    """Let policies finish a run: LlmPolicy writes its ``record`` cassette and closes its client.

    Call it once a run is over; a policy without ``close`` is left alone. Every policy is closed
    even when one fails; the first failure is raised afterwards.
    """
    failure: BaseException | None = None
    for policy in policies:
        close = getattr(policy, "close", None)
        if not callable(close):
            continue
        try:
            close()
        except Exception as exc:
            if failure is None:
                failure = exc
    if failure is not None:
        raise failure


def policy_name(policy: Any) -> str:
    """A short name for reports: the policy's ``name`` attribute, else its class name."""
    name = getattr(policy, "name", None)
    return name if isinstance(name, str) and name else type(policy).__name__


class FunctionPolicy:
    """Wraps a plain ``predict_action``-shaped function as a policy."""

    def __init__(self, function: Callable[..., str]):
        self.function = function
        self.name = getattr(function, "__name__", "function")
        self._takes_step = takes_recorded_step(function)

    def predict_action(
        self,
        observation: str,
        state: str,
        available_actions: list[str],
        llm_prompt_repr: str | None,
        recorded_step: dict[str, Any] | None = None,
    ) -> str:
        if self._takes_step:
            return self.function(observation, state, available_actions, llm_prompt_repr, recorded_step=recorded_step)
        return self.function(observation, state, available_actions, llm_prompt_repr)
