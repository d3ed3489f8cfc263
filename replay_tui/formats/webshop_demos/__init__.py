"""The seed's WebShop demonstration files, one reader among the others.

Everything of the format lives in this folder and code outside it imports the names below from the
package, never a module (import-linter contracts say so): :mod:`.contract` the files' pydantic
contract, :mod:`.index` the lazy, tolerant index of a file (``DemoFile``, followed with
``--follow``; ``open_demos`` a set of seed files alone), :mod:`.fast` the replay's fast msgspec
reading of a clean episode, :mod:`.trajectory` a parsed episode as the one model, :mod:`.reader` the
``READER`` and the helpers of a seed step's own panes. :mod:`.synth`, the synthetic generator behind
``replay-tui generate``, is imported on its own (``from replay_tui.formats.webshop_demos import
synth``), so reading a log never loads it.
"""

from replay_tui.formats.webshop_demos.index import DemoFile, open_demos
from replay_tui.formats.webshop_demos.reader import (
    READER,
    SeedStep,
    completed_by_backup,
    from_webshop_episode,
    is_seed,
)
from replay_tui.formats.webshop_demos.trajectory import SEED_STEP_FIELDS

__all__ = [
    "READER",
    "SEED_STEP_FIELDS",
    "DemoFile",
    "SeedStep",
    "completed_by_backup",
    "from_webshop_episode",
    "is_seed",
    "open_demos",
]
