"""Python literals from untrusted text, parsed one at a time.

``ast.literal_eval`` never runs code, but CPython 3.11 keeps the AST constructor's recursion
counter in state shared by every thread: two parses at once (a replay with ``--jobs``) can fail
with ``SystemError: AST constructor recursion depth mismatch``. Every parse of this package goes
through the lock here; parses are short and hold the GIL anyway, so nothing is lost.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_LOCK = threading.Lock()


def literal_eval(source: str | ast.AST) -> Any:
    """``ast.literal_eval`` under the lock (raises what it raises)."""
    with _LOCK:
        return ast.literal_eval(source)


def parse_expression(text: str) -> ast.Expression:
    """``ast.parse(text, mode="eval")`` under the lock (raises ``SyntaxError`` and the rest)."""
    with _LOCK:
        return ast.parse(text, mode="eval")
