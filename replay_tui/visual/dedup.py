"""Repetition cut for generated pages (the reference's ``check_repetitive_content``), compat and fixed.

Compat keeps every quirk (tags stripped with a one-line non-greedy regex, so CSS and JS text stays in; clean-text
and file offsets mixed; a prettified page's whitespace chunks look "repetitive"), but filters candidate chunks with
``real_quick_ratio``/``quick_ratio`` first. Both are upper bounds of ``ratio``, so the result is unchanged.

Fixed mode looks only at the visible text (no ``<script>``/``<style>``/comments, whitespace collapsed), maps the
cut back to a file offset correctly, and keeps the first copy of the repeated content (the cut lands before the
markup of its second occurrence).
"""

from __future__ import annotations

import difflib
import re
import time
from dataclasses import dataclass

import numpy as np

from replay_tui.visual.models import OutOfTime

CHUNK = 100
REPEATS = 5
SIMILARITY = 0.8


@dataclass
class DedupResult:
    cut_at: int | None  # file offset where the page is cut, None when nothing is cut
    original_length: int

    @property
    def cut(self) -> bool:
        return self.cut_at is not None


def _position_map(clean: str, content: str) -> list[int]:
    positions = []
    index = 0
    find = content.find
    for char in clean:
        index = find(char, index)
        positions.append(index)
        index += 1
    return positions


def _scan(chunks: list[str], similarity: float, repeats: int, on_repeat, deadline: float | None = None) -> None:
    """The reference's insertion-ordered first-hit scan; ``on_repeat(group)`` each time a group is long enough.

    Exact speed-up: ``quick_ratio`` (the multiset overlap, an upper bound of ``ratio``) is computed for all seen
    chunks at once from character histograms, with difflib's own float expression ``2.0 * matches / length``;
    ``ratio`` is then tried only on the seen chunks that pass, still in insertion order, so the first hit is the
    reference's first hit.
    """
    vocab: dict[str, int] = {}
    for chunk in chunks:
        for char in chunk:
            if char not in vocab:
                vocab[char] = len(vocab)
    width = max(1, len(vocab))
    hist = np.zeros((max(1, len(chunks)), width), dtype=np.int32)
    lengths = np.zeros(max(1, len(chunks)), dtype=np.int64)
    groups: list[list[int]] = []
    matchers: list[difflib.SequenceMatcher] = []
    for i, chunk in enumerate(chunks):
        if deadline is not None and i % 64 == 0 and time.monotonic() > deadline:
            raise OutOfTime(f"the repetition check stopped at chunk {i} of {len(chunks)}: the pair's deadline passed")
        h = np.bincount([vocab[c] for c in chunk], minlength=width).astype(np.int32)
        count = len(groups)
        hit = -1
        if count:
            matches = np.minimum(hist[:count], h).sum(axis=1)
            total = lengths[:count] + len(chunk)
            upper = np.where(total > 0, 2.0 * matches / np.maximum(total, 1), 1.0)
            for k in np.flatnonzero(upper >= similarity):
                matcher = matchers[k]
                matcher.set_seq1(chunk)
                if matcher.ratio() >= similarity:
                    hit = int(k)
                    break
        if hit >= 0:
            group = groups[hit]
            group.append(i)
            if len(group) >= repeats:
                on_repeat(group)
        else:
            # new content: a chunk equal to a seen one (< 200 chars, so no autojunk) has ratio 1.0 and always hits
            groups.append([i])
            matchers.append(difflib.SequenceMatcher(None, "", chunk))
            hist[count] = h
            lengths[count] = len(chunk)


def check_repetitive_compat(content: str, deadline: float | None = None) -> DedupResult:
    """Where the reference cuts ``content`` (a file offset), or None; :class:`OutOfTime` past ``deadline``."""
    clean = re.sub("<.*?>", "", content)
    positions = _position_map(clean, content)
    chunks = [clean[i : i + CHUNK] for i in range(0, len(clean), CHUNK)]
    state = {"start": len(clean)}

    def on_repeat(indexes: list[int]) -> None:
        clean_start = min(state["start"], indexes[0] * CHUNK)
        candidate = positions[clean_start] if clean_start < len(positions) else len(content)
        if candidate < state["start"]:
            state["start"] = candidate

    _scan(chunks, SIMILARITY, REPEATS, on_repeat, deadline)
    start = state["start"]
    return DedupResult(cut_at=start if start != len(clean) else None, original_length=len(content))


_INVISIBLE = re.compile(
    r"<(script|style|template|noscript)\b[^>]*>.*?</\1\s*>|<!--.*?-->|<[^>]*>", re.IGNORECASE | re.DOTALL
)


def check_repetitive_fixed(content: str, deadline: float | None = None) -> DedupResult:
    """Repetition in the visible text only; a cut lands at the start of the first repeated visible chunk."""
    words: list[tuple[str, int]] = []  # (word, file offset)
    position = 0
    for match in _INVISIBLE.finditer(content + "<x>"):
        segment = content[position : match.start()]
        for found in re.finditer(r"\S+", segment):
            words.append((found.group(), position + found.start()))
        position = match.end()
    text = ""
    offsets: list[int] = []
    for word, offset in words:
        if text:
            text += " "
            offsets.append(offset)
        text += word
        offsets.extend(range(offset, offset + len(word)))
    chunks = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]
    state: dict[str, int | None] = {"second": None}

    def on_repeat(indexes: list[int]) -> None:
        # keep one copy of the repeated content: cut where its second occurrence starts
        second = indexes[1]
        if state["second"] is None or second < state["second"]:
            state["second"] = second

    _scan(chunks, SIMILARITY, REPEATS, on_repeat, deadline)
    if state["second"] is None:
        return DedupResult(cut_at=None, original_length=len(content))
    cut = offsets[state["second"] * CHUNK]
    # Cut before the markup that holds that text, not in the middle of a text run.
    open_tag = content.rfind("<", 0, cut)
    if open_tag != -1:
        cut = open_tag
    return DedupResult(cut_at=cut, original_length=len(content))
