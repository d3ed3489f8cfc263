"""``python -m replay_tui``: the same CLI as ``replay-tui``."""

import sys

from replay_tui.cli import main

if __name__ == "__main__":
    sys.exit(main())
