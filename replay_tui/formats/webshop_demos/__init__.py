"""The seed's WebShop demonstration files, one reader among the others.

:mod:`.reader` recognises the format and maps each episode onto the one model (Trajectory); code
outside this folder imports the names below from the package, never the module. :mod:`.synth`, the
synthetic generator behind ``replay-tui generate``, is imported on its own (``from
replay_tui.formats.webshop_demos import synth``), so reading a log never loads it.
"""

from replay_tui.formats.webshop_demos.reader import (
    READER,
    SeedStep,
    completed_by_backup,
    event_action,
    event_fields,
    event_label,
    event_observation,
    event_type,
    from_webshop_episode,
    is_seed,
    prompt_problem,
    seed_prompt,
)

__all__ = [
    "READER",
    "SeedStep",
    "completed_by_backup",
    "event_action",
    "event_fields",
    "event_label",
    "event_observation",
    "event_type",
    "from_webshop_episode",
    "is_seed",
    "prompt_problem",
    "seed_prompt",
]
