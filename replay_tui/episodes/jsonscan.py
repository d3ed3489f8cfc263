"""Byte-level checks made before any parser sees a demo file: nesting depth, text encoding, and the
field that holds an out-of-range number or bytes that are not UTF-8.

msgspec, orjson, the json module and pydantic all recurse on nested JSON, so a file nested a few
thousand levels deep would end in a RecursionError (or worse). :func:`first_too_deep` finds the
first bracket past the limit without recursion: a C-level regex walk for small inputs, numpy for
large ones (the same lexical rule, so both give the same answer on any bytes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting an episode may have; the episode object itself is level 1. Real logs need ~6."""

_NUMPY_FROM = 4 * 1024 * 1024
"""Inputs at least this big are scanned with numpy (its import costs more than scanning a small file)."""
_CHUNK = 1 << 24

# A quote after an odd run of backslashes is escaped, wherever it is, and a string runs to its
# closing quote (or the end of the input): the rule both scanners follow, so they agree on any bytes.
_LEXEME = re.compile(rb'\\[\\"]?|"[^"\\]*(?:\\[\s\S][^"\\]*)*(?:"|\\?\Z)|([\[{])|([\]}])')


def first_too_deep(data: Any, limit: int = MAX_DEPTH, start: int = 0) -> int | None:
    """Offset of the first ``[``/``{`` outside a string that opens level ``limit + 1``, or None.

    ``data`` is any bytes-like object (bytes, mmap, memoryview); nothing is copied for big inputs.
    """
    return scan_depth(data, limit, start)[0]


def scan_depth(
    data: Any, limit: int = MAX_DEPTH, start: int = 0, spans_at: int | None = None
) -> tuple[int | None, list[tuple[int, int]]]:
    """:func:`first_too_deep`, and in the same pass the ``(start, end)`` byte spans of the values
    that open at level ``spans_at`` (level 1 is the outermost value; the episodes of a JSON array
    are at level 2, those of JSON Lines at level 1). The spans are only meaningful when the data is
    not too deep (the scan stops at the first bracket past ``limit``) and is well-formed JSON.
    """
    size = len(memoryview(data))
    if size - start >= _NUMPY_FROM:
        return _scan_depth_numpy(data, limit, start, spans_at)
    depth = 0
    spans: list[tuple[int, int]] = []
    opened = -1
    for match in _LEXEME.finditer(data, start):
        if match.lastindex == 1:
            depth += 1
            if depth > limit:
                return match.start(), spans
            if depth == spans_at:
                opened = match.start()
        elif match.lastindex == 2:
            if depth == spans_at:
                spans.append((opened, match.end()))
            depth -= 1
    return None, spans


def _first_too_deep_numpy(data: Any, limit: int, start: int = 0) -> int | None:
    """:func:`first_too_deep` with numpy, whatever the input's size."""
    return _scan_depth_numpy(data, limit, start)[0]


def _scan_depth_numpy(
    data: Any, limit: int, start: int = 0, spans_at: int | None = None
) -> tuple[int | None, list[tuple[int, int]]]:
    """:func:`scan_depth` in chunks: find the unescaped quotes, then count brackets only in the
    gaps between strings (a small share of a demo file, whose bulk is observation text).

    Finding a chunk's quotes needs nothing from the chunks before it, so a helper thread finds the
    next chunk's while this one's brackets are counted (numpy releases the GIL: two cores work)."""
    import numpy as np

    delta_of = np.zeros(256, dtype=np.int8)
    delta_of[[0x5B, 0x7B]] = 1
    delta_of[[0x5D, 0x7D]] = -1
    buf = np.frombuffer(data, dtype=np.uint8)
    total_size = len(buf)
    depth = 0
    in_string = False
    opens: list[Any] = []
    closes: list[Any] = []
    bounds = [(pos, min(total_size, pos + _CHUNK)) for pos in range(start, total_size, _CHUNK)]
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scan") as pool:
            ahead = [pool.submit(_chunk_quotes, np, buf, pos, end, start) for pos, end in bounds[:2]]
            for number, (pos, end) in enumerate(bounds):
                quotes = ahead.pop(0).result()
                if number + 2 < len(bounds):
                    ahead.append(pool.submit(_chunk_quotes, np, buf, *bounds[number + 2], start))
                chunk = buf[pos:end]
                size = end - pos
                # Gaps between strings: [gap_start, gap_end) outside any string.
                if in_string:
                    gap_starts = quotes[0::2] + 1
                    gap_ends = np.concatenate((quotes[1::2], [size]))[: len(gap_starts)]
                else:
                    gap_starts = np.concatenate(([0], quotes[1::2] + 1))
                    gap_ends = np.concatenate((quotes[0::2], [size]))[: len(gap_starts)]
                lengths = gap_ends - gap_starts
                length = int(lengths.sum())
                if length:
                    offsets = np.cumsum(lengths) - lengths
                    index = np.repeat(gap_starts - offsets, lengths) + np.arange(length)
                    deltas = delta_of[chunk[index]]
                    moves = np.flatnonzero(deltas)
                    if len(moves):
                        steps = deltas[moves]
                        levels = depth + np.cumsum(steps, dtype=np.int64)
                        over = np.flatnonzero(levels > limit)
                        if len(over):
                            for future in ahead:
                                future.cancel()
                            return pos + int(index[moves[over[0]]]), []
                        depth = int(levels[-1])
                        if spans_at is not None:
                            at = pos + index[moves]
                            opens.append(at[(steps > 0) & (levels == spans_at)])
                            closes.append(at[(steps < 0) & (levels == spans_at - 1)] + 1)
                in_string ^= len(quotes) % 2 == 1
    finally:
        del buf  # release the export of an mmap, so it can be closed (the pool has stopped using it)
    if spans_at is None:
        return None, []
    starts = np.concatenate(opens).tolist() if opens else []
    ends = np.concatenate(closes).tolist() if closes else []
    return None, list(zip(starts, ends, strict=False))


def _chunk_quotes(np: Any, buf: Any, pos: int, end: int, start: int) -> Any:
    """Offsets (in the chunk ``buf[pos:end]``) of its quotes that are not escaped; a run of
    backslashes before the chunk (back to ``start``) counts as it would in one pass."""
    chunk = buf[pos:end]
    quotes = np.flatnonzero(chunk == 0x22)
    if len(quotes):
        carry = _backslashes_before(np, buf, pos, start) if pos > start and buf[pos - 1] == 0x5C else 0
        maybe = np.flatnonzero(chunk[np.maximum(quotes - 1, 0)] == 0x5C)
        maybe = maybe[quotes[maybe] > 0]
        if carry and quotes[0] == 0:
            maybe = np.concatenate(([0], maybe))
        if len(maybe):
            escaped = np.zeros(len(quotes), dtype=bool)
            escaped[maybe] = _odd_backslash_runs(np, chunk, quotes[maybe], carry)
            quotes = quotes[~escaped]
    return quotes


def _backslashes_before(np: Any, buf: Any, pos: int, start: int) -> int:
    """How many backslashes run right up to ``pos`` (not counting any before ``start``)."""
    count = 0
    while pos > start:
        low = max(start, pos - 4096)
        others = np.flatnonzero(buf[low:pos][::-1] != 0x5C)
        if len(others):
            return count + int(others[0])
        count += pos - low
        pos = low
    return count


def _odd_backslash_runs(np: Any, chunk: Any, quotes: Any, carry: int) -> Any:
    """For quotes preceded by a backslash: is the run of backslashes before each one odd?"""
    runs = np.zeros(len(quotes), dtype=np.int64)
    active = np.arange(len(quotes))
    back = 1
    while len(active):
        at = quotes[active] - back
        inside = at >= 0
        runs[active[~inside]] += carry  # the run goes on into the previous chunk
        active, at = active[inside], at[inside]
        active = active[chunk[at] == 0x5C]
        runs[active] += 1
        back += 1
    return runs % 2 == 1


# -- encodings --------------------------------------------------------------------------------
_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)


def sniff_encoding(head: bytes) -> tuple[str, int]:
    """(codec, length of its byte order mark) from a file's first bytes.

    A BOM decides; without one, the zero bytes around the first (ASCII) character of a JSON text
    tell UTF-16 and UTF-32 from UTF-8 (RFC 4627, section 3).
    """
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec, len(bom)
    if len(head) >= 4:
        zeros = tuple(byte == 0 for byte in head[:4])
        if zeros == (True, True, True, False):
            return "utf-32-be", 0
        if zeros == (False, True, True, True):
            return "utf-32-le", 0
        if zeros[0] and zeros[2] and not zeros[1] and not zeros[3]:
            return "utf-16-be", 0
        if zeros[1] and zeros[3] and not zeros[0] and not zeros[2]:
            return "utf-16-le", 0
    return "utf-8", 0


def transcode(data: Any, codec: str, bom: int) -> tuple[bytes, str | None]:
    """UTF-16/32 bytes as UTF-8; when they are not valid, the valid part and a one-line reason."""
    raw = bytes(memoryview(data)[bom:])
    try:
        return raw.decode(codec).encode("utf-8"), None
    except UnicodeDecodeError as exc:
        reason = f"not valid {codec.upper()} at byte {bom + exc.start:,} ({exc.reason}); the file is read up to there"
        return raw[: exc.start].decode(codec).encode("utf-8"), reason


def utf8_error(raw: Any) -> tuple[int, int] | None:
    """(offset, byte) of the first byte of ``raw`` that is not UTF-8, or None when it all is."""
    data = bytes(raw)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start, data[exc.start]
    return None


def not_utf8_message(byte: int, offset: int | None) -> str:
    where = f" at byte {offset:,}" if offset is not None else ""
    return (
        f"not valid UTF-8: byte 0x{byte:02X}{where} (is the file Latin-1 or Windows-1252? "
        f"save it as UTF-8, or UTF-16 with a byte order mark)"
    )


# -- finding the field behind a parser's complaint ----------------------------------------------
class _Unreadable:
    """A number no parser can hold (``1e400``, an integer of thousands of digits)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _parse_int(text: str) -> Any:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts
        return _Unreadable(text)


def _parse_float(text: str) -> Any:
    value = float(text)
    return _Unreadable(text) if value in (float("inf"), float("-inf")) else value


def _parse_constant(text: str) -> Any:
    return _Unreadable(text)


NON_JSON_CONSTANTS = frozenset({"NaN", "Infinity", "-Infinity"})


def number_message(text: str) -> str:
    """Why a number cannot be read: out of range, or one of the constants Python's ``json`` writes
    for floats (``NaN``, ``Infinity``) that JSON does not have."""
    if text in NON_JSON_CONSTANTS:
        return f"{text} is not a JSON number (Python's json writes it for such a float; write null)"
    return f"number out of range: {literal(text)}"


def literal(text: str, limit: int = 24) -> str:
    """A number's text for a message, shortened when it is long."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def find_bad_value(raw: Any) -> tuple[str | None, str] | None:
    """Where in one JSON value (an episode) the first unreadable number or non-UTF-8 text is.

    Returns (field path such as ``trajectory[3].reward``, reason), or None when the value has none
    of these (or is not JSON at all). Only used after a fast parser refused ``raw``, whose depth
    has been checked, so the recursive json module is safe here.
    """
    try:
        text = bytes(raw).decode("utf-8", "surrogateescape")
        value = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, _Unreadable):
            return path or None, number_message(item.text)
        if isinstance(item, str):
            if _has_escaped_byte(item):
                return path or None, "not valid UTF-8 text"
        elif isinstance(item, dict):
            children = []
            for key, child in item.items():
                where = f"{path}.{key}" if path else key
                if _has_escaped_byte(key):
                    return path or None, f"a key is not valid UTF-8 text: {key.encode('utf-8', 'surrogateescape')!r}"
                children.append((where, child))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend(reversed([(f"{path}[{i}]", child) for i, child in enumerate(item)]))
    return None


def _has_escaped_byte(text: str) -> bool:
    return any("\udc80" <= char <= "\udcff" for char in text) if not text.isascii() else False


class NotAnArray(ValueError):
    """The text :func:`array_batches` reads is JSON but not an array."""


_SPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


def array_batches(
    pieces: Iterable[bytes], loads: Callable[[bytes], Any], *, first: int = 64 << 10, most: int = 16 << 20
) -> Iterator[list[Any]]:
    """The elements of the JSON array that ``pieces`` make up (a zip member as it inflates), a batch
    at a time, each batch parsed by ``loads`` as soon as its last object is complete: the first
    after ``first`` bytes, the next ones each twice as big, up to ``most``. So the first elements
    of a member of hundreds of MB are known in milliseconds, and the parse costs one call per batch.

    A batch ends at the last complete object of the bytes so far (found by :func:`scan_depth`,
    strings and escapes respected); what follows waits for the next piece. Raises ``loads``'s error
    (or a ValueError) on text that is not JSON, :class:`NotAnArray` on JSON that is not an array,
    once the batches before the bad bytes are yielded."""
    buffer = bytearray()
    opened = False  # past the array's "["
    taken = False  # a batch was yielded: what follows starts with its ","
    want = first
    for piece in pieces:
        buffer += piece
        if len(buffer) < want:
            continue
        opened = opened or _open_array(buffer)
        if not opened:
            continue
        batch = _guessed_batch(buffer, taken, loads)
        if batch is None and (spans := scan_depth(buffer, 1 << 30, 0, spans_at=1)[1]):
            end = spans[-1][1]
            batch = end, loads(b"[" + _elements(buffer[:end], taken) + b"]")
        if batch is not None:
            yield batch[1]
            del buffer[: batch[0]]
            taken = True
        want = min(most, max(want * 2, len(buffer) + first))
    if not (opened or _open_array(buffer)):
        loads(bytes(buffer))  # not JSON: its error; JSON of another kind:
        raise NotAnArray("not an array")
    yield loads(b"[" + _elements(buffer, taken))  # the rest, up to the array's "]"


def _guessed_batch(buffer: bytearray, taken: bool, loads: Callable[[bytes], Any]) -> tuple[int, list[Any]] | None:
    """The batch up to the last ``}`` followed by ``,`` and ``{`` (the usual end of an array of
    objects), parsed: when it parses, its brackets and strings are balanced, so it ends at an
    element; None when there is no such ``}`` or it is one inside a string (then the bracket scan
    finds the end, at the cost of a pass over the bytes)."""
    end, tries = len(buffer), 2
    for _ in range(256):  # the last element's own "}"s, before the "}" that ends the one before it
        end = buffer.rfind(b"}", 0, end)
        if end < 0:
            return None
        after = buffer[end + 1 : end + 65].lstrip(_SPACE)
        if after[:1] == b"," and after[1:].lstrip(_SPACE)[:1] == b"{":
            try:
                return end + 1, loads(b"[" + _elements(buffer[: end + 1], taken) + b"]")
            except ValueError:
                tries -= 1
                if not tries:
                    return None
    return None


def _open_array(buffer: bytearray) -> bool:
    """Drop what comes before the first element (a BOM, spaces, the ``[``); False while the bytes
    so far are only those; NotAnArray when they start another value."""
    if len(buffer) < 3 and _BOM.startswith(buffer):
        return False  # a BOM cut between two pieces
    start = 3 if buffer[:3] == _BOM else 0
    while start < len(buffer) and buffer[start] in _SPACE:
        start += 1
    if start == len(buffer):
        return False
    if buffer[start] != ord("["):
        raise NotAnArray("not an array")
    del buffer[: start + 1]
    return True


def _elements(text: bytearray, taken: bool) -> bytes:
    """Elements of an array as they follow one another in its text (the ``,`` before the first
    dropped when elements were taken before it)."""
    body = bytes(text).lstrip(_SPACE)
    if taken and body[:1] != b"]":
        if body[:1] != b",":
            raise ValueError(f"expected ',' between array elements, found {body[:16]!r}")
        body = body[1:]
        if body.lstrip(_SPACE)[:1] == b"]":
            raise ValueError("a ',' after the array's last element")
    return body
