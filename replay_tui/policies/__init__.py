"""Policies: what drives a replay (recorded decisions, rules, an LLM, a LangGraph agent, yours)."""

from replay_tui.policies.base import (
    FunctionPolicy,
    Policy,
    PolicyFailure,
    Prediction,
    accepts_recorded_step,
    call_policy,
    close_policies,
    policy_name,
)
from replay_tui.policies.heuristic import HeuristicPolicy
from replay_tui.policies.loading import PolicyLoadError, load_policy
from replay_tui.policies.registry import (
    BUILTIN_MODES,
    POLICY_BUILD_ERRORS,
    POLICY_MODES,
    PolicyMode,
    builtin_policy,
    policy_mode,
)
from replay_tui.policies.stub import StubPolicy

__all__ = [
    "BUILTIN_MODES",
    "POLICY_BUILD_ERRORS",
    "POLICY_MODES",
    "FunctionPolicy",
    "HeuristicPolicy",
    "Policy",
    "PolicyFailure",
    "PolicyLoadError",
    "PolicyMode",
    "Prediction",
    "StubPolicy",
    "accepts_recorded_step",
    "builtin_policy",
    "call_policy",
    "close_policies",
    "load_policy",
    "policy_mode",
    "policy_name",
]
