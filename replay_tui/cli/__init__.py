"""Every command line of replay-tui (the top floor: nothing below imports it).

- :mod:`~replay_tui.cli.entry`: ``main``, the ``replay-tui`` console script and ``python -m replay_tui``:
  commands that parse alone start without importing the others' dependencies.
- :mod:`~replay_tui.cli.commands`: the full parser and the dispatch of ``replay``, ``export``,
  ``generate``, ``runs`` and ``tui``; ``python -m replay_tui.replay``.
- :mod:`~replay_tui.cli.visual`: ``visual`` (Design2Code scores of page pairs) and ``inspect``.
- :mod:`~replay_tui.cli.verify`: ``verify`` (agent answers against WebArena-Verified tasks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.cli.common import UsageError
from replay_tui.cli.entry import main

if TYPE_CHECKING:
    from replay_tui.cli.commands import build_parser, parse_sessions, replay_main

__all__ = ["UsageError", "build_parser", "main", "parse_sessions", "replay_main"]

_FULL = frozenset({"build_parser", "parse_sessions", "replay_main"})


def __getattr__(name: str) -> Any:
    """The full parser's names, imported when first asked for (``import replay_tui.cli`` stays light)."""
    if name in _FULL:
        from replay_tui.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
