"""Bounded inflation of zip members: how many bytes a compressed log may turn into.

A 4 MB ``.eval`` whose deflate (or 150 KB LZMA, or zstd) member inflates to GiBs is a bomb, not a log.
Declared sizes (central directory, local headers) can lie, so they are checked first and then
verified: the data is inflated a small slice of input at a time (LZMA turns 4 KiB into ~28 MB of
zeros, so never more at once) and counted, and the read stops at the first byte past the cap.

Two caps, whichever is smaller:

- per member, :data:`MEMBER_LIMIT` (and the member's declared size, when its headers give one);
- per file, :class:`Budget`: :data:`FILE_RATIO` times the file's size, at least :data:`FILE_FLOOR`
  (real inspect_ai logs inflate 3-16x; deflate itself cannot exceed ~1,032x).
"""

from __future__ import annotations

import mmap
import sys
import zlib
from collections.abc import Generator, Iterator
from typing import Protocol

if sys.version_info >= (3, 14):
    from compression import zstd
else:  # the same module, backported (Python 3.14 ships it as compression.zstd)
    from backports import zstd

ZIP_ZSTANDARD = 93
"""The zip method number of zstd members: what inspect_ai >= 0.3.206 writes (Python < 3.14's zipfile
cannot read them)."""
ZstdError = zstd.ZstdError

MiB = 2**20
MEMBER_LIMIT = 1024 * MiB
"""No member inflates past this (parsing a member takes several times its size again)."""
FILE_RATIO = 100
"""A file inflates to at most this many times its size..."""
FILE_FLOOR = 64 * MiB
"""...or this much, whichever is more (small files may compress well)."""
INPUT_SLICE = 4096
"""Compressed bytes inflated at once: what one step can overshoot a cap by is this times the ratio."""
STREAM_PIECE = 64 * 1024
"""Inflated bytes one read of a zip member's stream asks for, when it is read a piece at a time."""

Pieces = Generator[bytes, None, bool]
"""Inflated pieces of a member, in order; the generator returns whether the compressed stream ended."""


def joined(pieces: Pieces) -> tuple[bytes, bool]:
    """A member's pieces as one: ``(data, whether the compressed stream ended)``."""
    chunks: list[bytes] = []
    while True:
        try:
            chunks.append(next(pieces))
        except StopIteration as stop:
            return b"".join(chunks), stop.value


class InflateLimit(ValueError):
    """A member that would inflate past a cap; the message names the cap (the caller names the member).

    ``file_wide``: the whole file's budget is spent (later members are not read either)."""

    def __init__(self, message: str, *, file_wide: bool = False) -> None:
        super().__init__(message)
        self.file_wide = file_wide


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _size(count: int) -> str:
    return f"{count / MiB:,.1f} MiB" if count >= MiB else f"{count:,} bytes"


class Budget:
    """The bytes one zip file may inflate to, over all its members."""

    def __init__(self, file_size: int) -> None:
        self.limit = max(FILE_FLOOR, FILE_RATIO * file_size)
        self.file_size = file_size
        self.used = 0

    @property
    def left(self) -> int:
        return max(0, self.limit - self.used)

    def cap(self, declared: int | None) -> tuple[int, str]:
        """The most the next member may inflate to, and that cap's name; raises InflateLimit (before
        anything is inflated) when the member declares more."""
        if self.left < MEMBER_LIMIT:
            limit, file_wide = self.left, True
            name = (
                f"the file's cap of {_size(self.limit)} ({FILE_RATIO}x its {_size(self.file_size)}, "
                f"at least {_size(FILE_FLOOR)}; {_size(self.used)} inflated before it)"
            )
        else:
            limit, file_wide, name = MEMBER_LIMIT, False, f"the cap of {_size(MEMBER_LIMIT)} per member"
        if declared is None:
            return limit, name
        if declared > limit:
            raise InflateLimit(f"declares {declared:,} bytes inflated, over {name}; not read", file_wide=file_wide)
        return declared, f"its declared size of {declared:,} bytes"

    def read(self, stream: Readable, declared: int | None) -> bytes | bytearray:
        """Everything ``stream`` (a zip member opened for reading) inflates to, within the caps (read
        into one buffer of the declared size when there is one: the member is never held twice).
        What was inflated counts against the file even when the member turns out damaged."""
        _, name = self.cap(declared)
        if declared is not None:
            buffer = bytearray(declared)
            filled = 0
            while filled < declared and (chunk := stream.read(min(INPUT_SLICE, declared - filled))):
                buffer[filled : filled + len(chunk)] = chunk
                filled += len(chunk)
                self.used += len(chunk)
            if stream.read(1):
                self.used += 1
                raise InflateLimit(f"inflated past {name}; not read", file_wide=self.left == 0)
            del buffer[filled:]
            return buffer
        return b"".join(self.read_pieces(stream, None, INPUT_SLICE))

    def read_pieces(self, stream: Readable, declared: int | None, piece: int = STREAM_PIECE) -> Iterator[bytes]:
        """:meth:`read` a piece at a time (a member parsed as it inflates), within the same caps."""
        limit, name = self.cap(declared)
        total = 0
        while chunk := stream.read(piece):
            total += len(chunk)
            self.used += len(chunk)
            if total > limit:
                raise InflateLimit(f"inflated past {name}; not read", file_wide=self.left == 0)
            yield chunk

    def inflate(self, raw: bytes | memoryview, declared: int | None) -> tuple[bytes, bool]:
        """A raw deflate stream inflated within the caps: ``(data, whether the stream ended)``."""
        return joined(self.inflate_pieces(raw, declared))

    def inflate_pieces(self, raw: bytes | memoryview, declared: int | None) -> Pieces:
        """:meth:`inflate` a piece at a time."""
        limit, name = self.cap(declared)
        decompressor = zlib.decompressobj(-15)
        total = 0
        for start in range(0, len(raw), INPUT_SLICE):
            pending = raw[start : start + INPUT_SLICE]
            while pending:
                chunk = decompressor.decompress(pending, INPUT_SLICE * 8)
                pending = decompressor.unconsumed_tail
                total += len(chunk)
                self.used += len(chunk)
                if total > limit:
                    raise InflateLimit(f"inflated past {name}; not read", file_wide=self.left == 0)
                if chunk:
                    yield chunk
            if decompressor.eof:
                break
        return bool(decompressor.eof)

    def inflate_zstd(self, raw: bytes | memoryview, declared: int | None) -> tuple[bytes, bool]:
        """A zstd member (one frame or several, as written one after the other) inflated within the
        caps: ``(data, whether the last frame ended)``. Raises ZstdError on damaged data."""
        return joined(self.zstd_pieces(raw, declared))

    def zstd_pieces(self, raw: bytes | memoryview, declared: int | None) -> Pieces:
        """:meth:`inflate_zstd` a piece at a time."""
        limit, name = self.cap(declared)
        decompressor = zstd.ZstdDecompressor()
        total = 0
        position = 0
        pending: bytes | memoryview = b""
        while True:
            if decompressor.eof:
                pending = decompressor.unused_data
                if not pending and position >= len(raw):
                    return True
                decompressor = zstd.ZstdDecompressor()  # the next frame
            if decompressor.needs_input:
                if not pending:
                    if position >= len(raw):
                        return not raw
                    pending = raw[position : position + INPUT_SLICE]
                    position += len(pending)
                chunk = decompressor.decompress(pending, INPUT_SLICE * 8)
                pending = b""
            else:  # more output from the input already given
                chunk = decompressor.decompress(b"", INPUT_SLICE * 8)
            total += len(chunk)
            self.used += len(chunk)
            if total > limit:
                raise InflateLimit(f"inflated past {name}; not read", file_wide=self.left == 0)
            if chunk:
                yield chunk


def deflate_end(data: bytes | mmap.mmap, start: int, limit: int = MEMBER_LIMIT) -> int | None:
    """Where the raw deflate stream at ``data[start:]`` ends (its compressed length), found by
    inflating it without keeping the output; None when it is cut off or damaged. Raises InflateLimit
    when it inflates past ``limit`` (its end cannot be known within the cap)."""
    decompressor = zlib.decompressobj(-15)
    total = 0
    position = start
    try:
        while position < len(data) and not decompressor.eof:
            pending = data[position : position + INPUT_SLICE]
            position += len(pending)
            while pending and not decompressor.eof:
                total += len(decompressor.decompress(pending, INPUT_SLICE * 8))
                pending = decompressor.unconsumed_tail
                if total > limit:
                    raise InflateLimit(f"inflated past the cap of {_size(limit)} per member; not read")
    except zlib.error:
        return None
    if not decompressor.eof:
        return None
    return position - start - len(decompressor.unused_data)
