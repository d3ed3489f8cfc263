"""Messages posted by replay workers; handlers on the App own every state change."""

from __future__ import annotations

from textual.message import Message

from replay_tui.demos.problems import LoadProblem
from replay_tui.runner import EpisodeReport, StepResult


class StepReplayed(Message):
    """One step's verdict, as soon as it is judged."""

    def __init__(self, result: StepResult):
        super().__init__()
        self.result = result


class EpisodeReplayed(Message):
    """An episode's report; ``mode`` names the policy that replayed it (what reports say)."""

    def __init__(self, report: EpisodeReport, done: int, total: int, mode: str | None = None):
        super().__init__()
        self.report = report
        self.done = done
        self.total = total
        self.mode = mode


class EpisodeFailed(Message):
    """An episode turned out malformed while replaying; its problem is shown instead."""

    def __init__(self, problem: LoadProblem, done: int, total: int):
        super().__init__()
        self.problem = problem
        self.done = done
        self.total = total


class ReplayFinished(Message):
    def __init__(self, cancelled: bool, error: str | None = None):
        super().__init__()
        self.cancelled = cancelled
        self.error = error
