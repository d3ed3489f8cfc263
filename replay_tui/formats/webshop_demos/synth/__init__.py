"""Deterministic generator of realistic, synthetic WebShop demonstration logs.

Episodes follow the demonstration-log data contract (``webshop_demonstrations_{start}-{end}.json``):
a JSON array of episodes whose trajectories hold LASER-style decision steps (``Search`` / ``Result``
states) and item-page sub-events (``item_page_action``, ``detail_exploration``, ``back_from_detail``,
``customization_click``, ``agent_buy``, ``backup_agent_*``). Observations are rendered in WebShop's
``text_rich`` form. Instructions and search queries are real WebShop crowd-sourced pairs
(``data/goal_query_map.json``, MIT); products, prices, rewards and trajectories are invented.

Every episode is a pure function of ``(seed, session_id)``, so any slice of sessions is reproducible.
``replay-tui generate`` is its command line; ``replay-tui generate --bundled`` regenerates the bundled
example file.

By concern, bottom up: :mod:`.vocabulary` (word lists), :mod:`.draws` (fast draws from the episode's
Random), :mod:`.products` (titles, prices, options), :mod:`.goals` (the real instructions parsed),
:mod:`.pages` (WebShop's text observations), :mod:`.prompts` (the agent's system prompt),
:mod:`.thinking` (the agent's thoughts), :mod:`.episode` (the player), :mod:`.quirks`
(messy-but-valid fields), :mod:`.generate` (an episode from its seed and session id), :mod:`.writer`
(the demo file). Code outside imports this package's names.
"""

from replay_tui.formats.webshop_demos.synth.generate import generate_episode, iter_episodes
from replay_tui.formats.webshop_demos.synth.writer import (
    BUNDLED_COUNT,
    BUNDLED_QUIRK_RATE,
    BUNDLED_SEED,
    BUNDLED_START,
    DemoFileStats,
    bundled_example_path,
    default_filename,
    write_bundled_example,
    write_demo_file,
)

__all__ = [
    "BUNDLED_COUNT",
    "BUNDLED_QUIRK_RATE",
    "BUNDLED_SEED",
    "BUNDLED_START",
    "DemoFileStats",
    "bundled_example_path",
    "default_filename",
    "generate_episode",
    "iter_episodes",
    "write_bundled_example",
    "write_demo_file",
]
