"""``replay-tui``'s entry point: the commands whose module holds their whole parser start without the rest.

The full parser (:mod:`replay_tui.cli.commands`) imports what ``replay`` and the app need, a quarter
second of CPU before any command runs; ``compare``, ``formats``, ``convert``, ``verify``, ``visual`` and
``mcp`` each register their own sub-parser, so they are parsed alone (the same parser, usage and errors)
and import only their own dependencies. Everything else goes to the full parser.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence

from replay_tui.cli.common import PROG, run_parsed
from replay_tui.gcpause import gc_paused

STANDALONE = {
    "compare": "replay_tui.cli.compare",
    "formats": "replay_tui.cli.formats",
    "convert": "replay_tui.cli.convert",
    "verify": "replay_tui.cli.verify",
    "visual": "replay_tui.cli.visual",
    "mcp": "replay_tui.cli.mcp",
}
"""Command -> the module whose ``register(commands)`` adds its whole sub-parser."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``replay-tui``; returns the process exit code.

    With no command, the arguments are demo files for the debugger: ``replay-tui FILE...``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    module = STANDALONE.get(argv[0]) if argv else None
    if module is None:
        # importing the full parser allocates what lives as long as the process and frees almost
        # nothing: kept from the collector (frozen before it is back), once per process; see run_tui
        with gc_paused(tenure=False):
            first = "replay_tui.cli.commands" not in sys.modules
            from replay_tui.cli.commands import main as full

            if first:
                gc.freeze()
        return full(argv)
    parser = argparse.ArgumentParser(prog=PROG)
    importlib.import_module(module).register(parser.add_subparsers(dest="command", metavar="COMMAND"))
    return run_parsed(parser, argv)
