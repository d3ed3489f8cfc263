"""The policy protocol every replay driver implements, and how the Runner calls it."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable


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
