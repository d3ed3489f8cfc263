"""Task-level expected vs actual: the reference's actions aligned with the agent's recorded calls.

A log may carry the task's own reference (tau2's ``evaluation_criteria.actions``): the calls a
correct agent makes. Each expected action is **matched** (a call with the same tool and equal
arguments, judged by :func:`replay_tui.matching.judge_call`), **different** (the tool was called,
with an argument that differs: the reason names it), or **missing**. This is the second, stronger
"expected" beside teacher-forced replay's per-step one, and is kept apart from it by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from replay_tui.matching import MatchPolicy, judge_call
from replay_tui.trajectory import ToolCall, Trajectory

EXPECTED_STATUSES = ("matched", "different", "missing")


@dataclass(frozen=True, slots=True)
class ExpectedHit:
    """One expected action and what the agent did about it."""

    position: int
    """The action's position in the reference (0-based)."""
    expected: ToolCall
    status: str
    """One of :data:`EXPECTED_STATUSES`."""
    step: int | None = None
    """The trajectory step (index) of the call that matched or came closest; None when missing."""
    reason: str = ""
    """For ``different``: the judge's reason, naming the differing argument."""

    @property
    def name(self) -> str:
        return self.expected.name


@dataclass(frozen=True, slots=True)
class TaskAlignment:
    """Every expected action's hit, in the reference's order."""

    hits: list[ExpectedHit] = field(default_factory=list)

    @property
    def missed(self) -> list[str]:
        """The names of the expected actions missed or matched with different arguments, in order."""
        return [hit.name for hit in self.hits if hit.status != "matched"]

    def count(self, status: str) -> int:
        return sum(1 for hit in self.hits if hit.status == status)


def align_expected(
    expected: Sequence[ToolCall], calls: Sequence[tuple[int, ToolCall]], policy: MatchPolicy = "exact"
) -> TaskAlignment:
    """Align ``expected`` actions with the agent's ``calls`` (``(step index, call)`` in order).

    Order-independent, as tau2 checks its reference: an expected action is matched by any call of
    the same tool with equal arguments; failing that, the first call of the same tool gives the
    differing argument; a tool never called is missing.
    """
    hits: list[ExpectedHit] = []
    for position, want in enumerate(expected):
        closest: tuple[int, str] | None = None
        found: int | None = None
        for step, call in calls:
            verdict = judge_call(want.name, want.arguments, call.name, call.arguments, policy)
            if verdict.accepted:
                found = step
                break
            if closest is None and verdict.part != "kind":
                closest = (step, verdict.reason)
        if found is not None:
            hits.append(ExpectedHit(position, want, "matched", found))
        elif closest is not None:
            hits.append(ExpectedHit(position, want, "different", closest[0], closest[1]))
        else:
            hits.append(ExpectedHit(position, want, "missing"))
    return TaskAlignment(hits)


def align_trajectory(trajectory: Trajectory, policy: MatchPolicy = "exact") -> TaskAlignment | None:
    """The alignment of ``trajectory``'s recorded calls with its log's expected actions; None when
    the log has no reference actions."""
    expected = trajectory.outcome.expected_actions
    if not expected:
        return None
    calls = [(step.index, step.action) for step in trajectory.steps if step.action is not None]
    return align_expected(expected, calls, policy)
