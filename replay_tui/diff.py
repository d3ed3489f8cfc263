"""Character-level diffs between an expected and a predicted action (no Textual, no Rich).

``char_diff`` turns two strings into a list of chunks: ``equal`` text is in both, ``delete``
text only in the expected one and ``insert`` text only in the predicted one. Joining the
``equal`` and ``delete`` chunks gives back the expected string; ``equal`` and ``insert`` give
back the predicted one. Views render the chunks (``<del>``/``<ins>`` in HTML, styles in the TUI).
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Literal, NamedTuple

DiffOp = Literal["equal", "delete", "insert"]

# SequenceMatcher without autojunk is quadratic: past this many character pairs (after the common
# prefix and suffix are taken off) the differing middle is reported as one delete + one insert.
MAX_CELLS = 1_000_000


class DiffChunk(NamedTuple):
    """A run of text that is in both strings (``equal``), only expected (``delete``) or only predicted (``insert``)."""

    op: DiffOp
    text: str


def char_diff(expected: str, predicted: str, *, cleanup: bool = False, max_cells: int = MAX_CELLS) -> list[DiffChunk]:
    """The character diff of ``expected`` -> ``predicted`` as merged chunks (no empty chunks).

    A ``replace`` becomes a ``delete`` followed by an ``insert``; adjacent chunks of the same op
    are merged. Identical strings give a single ``equal`` chunk (none when both are empty).
    With ``cleanup`` coincidental short matches inside a change are folded into it (see
    :func:`cleanup_semantic`), which reads better when the two actions are unrelated.
    """
    expected = expected or ""
    predicted = predicted or ""
    if cleanup:
        return cleanup_semantic(char_diff(expected, predicted, max_cells=max_cells))
    if len(expected) * len(predicted) <= max_cells:
        return _merge(_opcodes(expected, predicted))
    # Too large for a quadratic diff: keep the common ends exact and diff the middle if it is small now.
    prefix = _common_prefix(expected, predicted)
    limit = min(len(expected), len(predicted)) - prefix
    suffix = _common_suffix(expected, predicted, limit)
    a_mid = expected[prefix : len(expected) - suffix]
    b_mid = predicted[prefix : len(predicted) - suffix]
    chunks: list[DiffChunk] = [DiffChunk("equal", expected[:prefix])]
    if len(a_mid) * len(b_mid) <= max_cells:
        chunks.extend(_opcodes(a_mid, b_mid))
    else:
        chunks.extend([DiffChunk("delete", a_mid), DiffChunk("insert", b_mid)])
    chunks.append(DiffChunk("equal", expected[len(expected) - suffix :]))
    return _merge(chunks)


def cleanup_semantic(chunks: list[DiffChunk]) -> list[DiffChunk]:
    """Fold each ``equal`` chunk that sits between two changes and is no longer than either into them.

    ``click[Next >]`` vs ``click[B0DY81I2W6]`` then reads ``click[`` + changed + ``]`` instead of
    a change sprinkled with single matching letters. Both sides still rebuild exactly; leading
    and trailing equal text is always kept.
    """
    # Segments: ["equal", text] or ["edit", deleted, inserted].
    segments: list[list[str]] = []
    for op, text in chunks:
        if op == "equal":
            segments.append(["equal", text])
        elif segments and segments[-1][0] == "edit":
            segments[-1][1 if op == "delete" else 2] += text
        else:
            segments.append(["edit", text, ""] if op == "delete" else ["edit", "", text])
    changed = True
    while changed:
        changed = False
        for i in range(1, len(segments) - 1):
            before, middle, after = segments[i - 1], segments[i], segments[i + 1]
            if middle[0] != "equal" or before[0] != "edit" or after[0] != "edit":
                continue
            size = len(middle[1])
            if size <= max(len(before[1]), len(before[2])) and size <= max(len(after[1]), len(after[2])):
                segments[i - 1 : i + 2] = [["edit", before[1] + middle[1] + after[1], before[2] + middle[1] + after[2]]]
                changed = True
                break
    result: list[DiffChunk] = []
    for segment in segments:
        if segment[0] == "equal":
            result.append(DiffChunk("equal", segment[1]))
        else:
            result += [DiffChunk("delete", segment[1]), DiffChunk("insert", segment[2])]
    return _merge(result)


def diff_ratio(a: str, b: str) -> float:
    """Similarity in [0, 1] as ``SequenceMatcher.ratio()``: twice the matched characters over the total."""
    a = a or ""
    b = b or ""
    total = len(a) + len(b)
    if not total:
        return 1.0
    matched = sum(len(chunk.text) for chunk in char_diff(a, b) if chunk.op == "equal")
    return 2.0 * matched / total


def expected_side(chunks: list[DiffChunk]) -> str:
    """The expected string a diff was made from (its ``equal`` and ``delete`` chunks)."""
    return "".join(chunk.text for chunk in chunks if chunk.op != "insert")


def predicted_side(chunks: list[DiffChunk]) -> str:
    """The predicted string a diff was made from (its ``equal`` and ``insert`` chunks)."""
    return "".join(chunk.text for chunk in chunks if chunk.op != "delete")


def _opcodes(a: str, b: str) -> list[DiffChunk]:
    chunks: list[DiffChunk] = []
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            chunks.append(DiffChunk("equal", a[i1:i2]))
            continue
        if tag in ("delete", "replace"):
            chunks.append(DiffChunk("delete", a[i1:i2]))
        if tag in ("insert", "replace"):
            chunks.append(DiffChunk("insert", b[j1:j2]))
    return chunks


def _merge(chunks: list[DiffChunk]) -> list[DiffChunk]:
    merged: list[DiffChunk] = []
    for chunk in chunks:
        if not chunk.text:
            continue
        if merged and merged[-1].op == chunk.op:
            merged[-1] = DiffChunk(chunk.op, merged[-1].text + chunk.text)
        else:
            merged.append(chunk)
    return merged


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _common_suffix(a: str, b: str, limit: int) -> int:
    n = 0
    while n < limit and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n
