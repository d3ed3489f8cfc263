"""The policy modes: one :class:`PolicyMode` per way of driving a replay.

Every list of modes reads :data:`POLICY_MODES`: the ``--mode`` choices, the policy dialog's
buttons, ``ReplaySettings.make_policy``/``describe`` and which policies replay workers may share.
The LLM and LangGraph modes import their modules only when a policy is built or described, so
``replay-tui replay --help`` loads neither ``openai`` nor ``langgraph``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from replay_tui.policies.heuristic import HeuristicPolicy
from replay_tui.policies.loading import PolicyLoadError, load_policy
from replay_tui.policies.stub import StubPolicy

LlmSettingsDict = Mapping[str, Any] | None
"""The fields of :class:`replay_tui.policies.llm.LlmSettings` (``model``, ``base_url``...), or None."""

POLICY_BUILD_ERRORS: tuple[type[Exception], ...] = (PolicyLoadError, ValueError)
"""What building a policy raises for bad settings, with a one-line message (LlmConfigError is a ValueError)."""


@dataclass(frozen=True)
class PolicyMode:
    """One way of driving a replay, and how to build and describe its policy."""

    name: str
    label: str
    """The policy dialog's button text."""
    build: Callable[[str | None, LlmSettingsDict], Any]
    """``build(spec, llm)`` -> a policy; ``spec`` is the mode's spec (None when it needs none)."""
    shareable: bool
    """One instance may serve several replay workers at once (else each worker builds its own)."""
    spec: Literal["policy", "graph"] | None = None
    """The ``module:attr`` / ``file.py:attr`` spec the mode loads: a policy, a graph, or none."""
    needs_llm: bool = False
    """The mode reads the LLM settings (``--model``, ``--base-url``...)."""
    flag: bool = True
    """Offered by ``--mode`` (custom policies come from ``--policy`` instead)."""
    describe_as: Callable[[str | None, LlmSettingsDict], str] | None = None
    """The status line's name for the settings; the mode's name when None."""

    @property
    def needs_spec(self) -> bool:
        return self.spec is not None

    @property
    def builtin(self) -> bool:
        """Built from nothing: neither a spec nor LLM settings."""
        return not self.needs_spec and not self.needs_llm

    def make(self, spec: str | None = None, llm: LlmSettingsDict = None) -> Any:
        """Build the policy; raises ValueError without a needed spec, PolicyLoadError or
        LlmConfigError (a ValueError) for bad settings, each with a one-line message."""
        if self.spec is not None and not spec:
            raise ValueError(f"{self.name} mode needs a {self.spec} spec (module:attr or file.py:attr)")
        return self.build(spec, llm)

    def describe(self, spec: str | None = None, llm: LlmSettingsDict = None) -> str:
        return self.name if self.describe_as is None else self.describe_as(spec, llm)


def _build_llm(spec: str | None, llm: LlmSettingsDict) -> Any:
    from replay_tui.policies.llm import LlmPolicy

    return LlmPolicy.from_settings(llm or {})


def _describe_llm(spec: str | None, llm: LlmSettingsDict) -> str:
    from replay_tui.policies.llm import LlmSettings

    try:
        return LlmSettings.from_dict(llm).describe()
    except ValueError:
        return "llm"


def _build_langgraph(spec: str | None, llm: LlmSettingsDict) -> Any:
    from replay_tui.policies.langgraph_adapter import LangGraphPolicy, graph_settings

    assert spec is not None  # PolicyMode.make checks it
    return LangGraphPolicy.from_spec(spec, graph_settings(llm))


POLICY_MODES: tuple[PolicyMode, ...] = (
    PolicyMode("stub", "stub — the recorded decisions", lambda spec, llm: StubPolicy(), shareable=True),
    PolicyMode("heuristic", "heuristic — a rule-based shopper", lambda spec, llm: HeuristicPolicy(), shareable=True),
    PolicyMode(
        "custom",
        "custom — module:attr or file.py:attr",
        lambda spec, llm: load_policy(spec or ""),
        shareable=False,
        spec="policy",
        flag=False,
        describe_as=lambda spec, llm: str(spec),
    ),
    PolicyMode(
        "llm",
        "llm — any OpenAI-compatible endpoint",
        _build_llm,
        shareable=True,
        needs_llm=True,
        describe_as=_describe_llm,
    ),
    PolicyMode(
        "langgraph",
        "langgraph — a compiled graph (module:attr or file.py:attr)",
        _build_langgraph,
        shareable=False,
        spec="graph",
        needs_llm=True,
        describe_as=lambda spec, llm: f"langgraph {spec}",
    ),
)
"""Every mode, in the policy dialog's order."""

MODES_BY_NAME: dict[str, PolicyMode] = {mode.name: mode for mode in POLICY_MODES}
MODE_FLAGS: tuple[str, ...] = tuple(mode.name for mode in POLICY_MODES if mode.flag)
"""The ``--mode`` choices."""
LLM_MODES: tuple[str, ...] = tuple(mode.name for mode in POLICY_MODES if mode.needs_llm)
BUILTIN_MODES: tuple[str, ...] = tuple(mode.name for mode in POLICY_MODES if mode.builtin)


def policy_mode(name: str) -> PolicyMode:
    """The mode called ``name``; PolicyLoadError (one line) for an unknown one."""
    try:
        return MODES_BY_NAME[name]
    except KeyError:
        raise PolicyLoadError(f"unknown mode {name!r}; choose one of {', '.join(MODES_BY_NAME)}") from None


def builtin_policy(mode: str) -> Any:
    """The built-in policy for a ``--mode`` name (``stub``, ``heuristic``)."""
    found = MODES_BY_NAME.get(mode)
    if found is None or not found.builtin:
        raise PolicyLoadError(f"unknown mode {mode!r}; choose one of {', '.join(BUILTIN_MODES)}")
    return found.make()
