"""The seed's entry point: ``python -m replay_tui.replay --demos FILE --mode stub ...``.

Also re-exports the replay harness, so ``from replay_tui.replay import OfflineWebshopEnv,
Runner, StubPolicy`` works as the seed describes.
"""

import sys

from replay_tui.cli import replay_main
from replay_tui.env import OfflineWebshopEnv
from replay_tui.policies import HeuristicPolicy, StubPolicy
from replay_tui.runner import EpisodeReport, Runner, SummaryReport

__all__ = ["EpisodeReport", "HeuristicPolicy", "OfflineWebshopEnv", "Runner", "StubPolicy", "SummaryReport"]

if __name__ == "__main__":
    sys.exit(replay_main())
