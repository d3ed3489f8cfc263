"""Every command line of replay-tui (the top floor: nothing below imports it).

- :mod:`~replay_tui.cli.main`: the parser and the dispatch of ``replay``, ``export``, ``generate`` and ``tui``;
  ``main`` is the ``replay-tui`` console script, ``python -m replay_tui`` and ``python -m replay_tui.replay``.
- :mod:`~replay_tui.cli.visual`: ``visual`` (Design2Code scores of page pairs) and ``inspect``.
- :mod:`~replay_tui.cli.verify`: ``verify`` (agent answers against WebArena-Verified tasks).
"""

from replay_tui.cli.main import UsageError, build_parser, main, parse_sessions, replay_main

__all__ = ["UsageError", "build_parser", "main", "parse_sessions", "replay_main"]
