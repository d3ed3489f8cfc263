"""The seed's WebShop demonstration files, one reader among the others.

:mod:`.reader` recognises the format and maps each episode onto the one model (Trajectory). Code
outside this folder imports the names below from the package, never a module inside it.
"""

from replay_tui.formats.webshop_demos.reader import (
    READER,
    SeedStep,
    WebshopDemosReader,
    completed_by_backup,
    event_action,
    event_fields,
    event_label,
    event_observation,
    event_type,
    from_webshop_episode,
    is_seed,
    prompt_problem,
    recorded_step,
    seed_prompt,
)

__all__ = [
    "READER",
    "SeedStep",
    "WebshopDemosReader",
    "completed_by_backup",
    "event_action",
    "event_fields",
    "event_label",
    "event_observation",
    "event_type",
    "from_webshop_episode",
    "is_seed",
    "prompt_problem",
    "recorded_step",
    "seed_prompt",
]
