"""Policies: what drives a replay (recorded decisions, rules, an LLM, a LangGraph agent, yours)."""

from replay_tui.policies.base import FunctionPolicy, Policy, PolicyFailure, accepts_recorded_step, policy_name
from replay_tui.policies.heuristic import HeuristicPolicy
from replay_tui.policies.loading import BUILTIN_MODES, PolicyLoadError, builtin_policy, load_policy
from replay_tui.policies.stub import StubPolicy

__all__ = [
    "BUILTIN_MODES",
    "FunctionPolicy",
    "HeuristicPolicy",
    "Policy",
    "PolicyFailure",
    "PolicyLoadError",
    "StubPolicy",
    "accepts_recorded_step",
    "builtin_policy",
    "load_policy",
    "policy_name",
]
