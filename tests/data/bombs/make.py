"""Write the stored bombs of ``tests/hostile.py`` (those that take seconds to build) into this folder.

Run from the clone's root: ``python tests/data/bombs/make.py``. ``tests/core/test_hostile_limits.py`` checks
the stored files' shape (what each member declares, what its first bytes inflate to) without building them.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.hostile import LZMA_BOMB, GiB, eval_bomb

if __name__ == "__main__":
    LZMA_BOMB.write_bytes(eval_bomb("lzma", GiB))
    print(f"wrote {LZMA_BOMB} ({LZMA_BOMB.stat().st_size:,} bytes)")
