"""Kafka framing: every request and response is an int32 big-endian size, then that many bytes.

`ReceiveBuffer` accumulates bytes from the network and hands out complete frames. Reads go
through a cursor that is only made permanent by `commit()`; a partial frame is undone with
`rollback()`, so a frame split over any number of `feed()` calls is parsed exactly once.
Frame sizes come from the peer and are hostile: negative or oversized ones are rejected
before anything is allocated.

A large frame (a Fetch response of megabytes) is not grown in the buffer and copied out: once
its size prefix has passed the checks, the reader keeps the chunks received for it as they are
and joins them once, when the last one arrives (one copy, into memory nobody zeroed first). A
chunk starting with such a frame's size prefix (nothing buffered before it) is kept as it is too.
"""

from __future__ import annotations

import struct
from typing import Final

from krafka.errors import RemoteProtocolError

_SIZE: Final = struct.Struct(">i")
SIZE_PREFIX: Final = _SIZE.size
DEFAULT_MAX_FRAME_SIZE: Final = 100 * 1024 * 1024
#: Frames at least this large that are still arriving are kept as chunks (see the module doc).
LARGE_FRAME_SIZE: Final = 64 * 1024


def frame(payload: bytes | bytearray | memoryview) -> bytes:
    """`payload` with its int32 size prefix."""
    return _SIZE.pack(len(payload)) + bytes(payload)


def frame_parts(parts: list[bytes | bytearray | memoryview]) -> bytes:
    """The frame of `parts` concatenated, made in one copy: its first part is a placeholder
    the size prefix replaces (a produce request's batches are copied once, into the frame)."""
    parts[0] = _SIZE.pack(sum(map(len, parts)) - len(parts[0]))
    return b"".join(parts)


def _bad_size(prefix: bytes, size: int, limit: int) -> str:
    """Why a size prefix is refused, naming the peer when its first bytes give it away: a web
    server answers `HTTP/...`, a TLS listener a TLS alert record (`0x15 0x03`)."""
    reason = f"frame size {size} outside 0..{limit} in the size prefix"
    if prefix == b"HTTP":
        return (
            f"the peer is not a Kafka broker but an HTTP server (it answered 'HTTP/...'; {reason})"
        )
    if prefix[:2] == b"\x15\x03":
        return f"the peer answered with a TLS alert: the listener expects TLS ({reason})"
    if all(32 <= b < 127 for b in prefix):
        text = prefix.decode()
        return f"the peer is not a Kafka broker (it answered in text: {text!r}...; {reason})"
    return reason


class ReceiveBuffer:
    """Bytes received but not yet parsed, with a read cursor and commit/rollback."""

    __slots__ = ("_data", "_pos")

    def __init__(self) -> None:
        self._data = bytearray()
        self._pos = 0

    def __len__(self) -> int:
        """Bytes not yet consumed (committed or not)."""
        return len(self._data) - self._pos

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        self._data += data

    def consume(self, n: int) -> bytes | None:
        """The next `n` bytes, advancing the cursor, or None (cursor unmoved) if not all here."""
        end = self._pos + n
        if end > len(self._data):
            return None
        with memoryview(self._data) as view:
            chunk = bytes(view[self._pos : end])
        self._pos = end
        return chunk

    def take_rest(self) -> bytearray:
        """Every byte after the cursor; the buffer is left empty."""
        rest = self._data[self._pos :]
        self._data = bytearray()
        self._pos = 0
        return rest

    def commit(self) -> None:
        """Make everything consumed so far permanent and free its memory."""
        del self._data[: self._pos]
        self._pos = 0

    def rollback(self) -> None:
        """Undo every `consume` since the last `commit`."""
        self._pos = 0


class FrameReader:
    """Splits a byte stream into size-prefixed frames."""

    __slots__ = ("_buffer", "_missing", "_parts", "max_frame_size")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self._buffer = ReceiveBuffer()
        self.max_frame_size = max_frame_size
        #: The chunks of a large frame being received (none: no such frame), and how many of
        #: its bytes are still missing.
        self._parts: list[bytes | bytearray | memoryview] = []
        self._missing = 0

    @property
    def buffered(self) -> int:
        """Bytes held that do not yet form a complete frame."""
        return len(self._buffer) + sum(len(p) for p in self._parts)

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        if self._missing:
            if not isinstance(data, bytes):
                data = bytes(data)  # kept past this call: the caller may reuse its buffer
            n = len(data)
            if n <= self._missing:
                self._parts.append(data)
                self._missing -= n
                return
            view = memoryview(data)
            self._parts.append(view[: self._missing])
            data = view[self._missing :]
            self._missing = 0
        elif not self._buffer and self._starts_large_frame(data):
            return
        self._buffer.feed(data)

    def _starts_large_frame(self, data: bytes | bytearray | memoryview) -> bool:
        """Begin a large frame whose size prefix starts `data` (nothing buffered before it)
        with the rest of `data` as its first chunk, not copied through the buffer; False (and
        nothing done) for any other data, a size the checks refuse included."""
        if len(data) < SIZE_PREFIX:
            return False
        (size,) = _SIZE.unpack_from(data)
        if not LARGE_FRAME_SIZE <= size <= self.max_frame_size or len(data) - SIZE_PREFIX >= size:
            return False
        rest = memoryview(data)[SIZE_PREFIX:]
        self._parts = [rest if isinstance(data, bytes) else bytes(rest)]
        self._missing = size - len(rest)
        return True

    def next_frame(self) -> bytes | None:
        """The next complete frame's payload (without its size prefix), or None."""
        if self._parts:
            if self._missing:
                return None
            payload = b"".join(self._parts)
            self._parts = []
            return payload
        buf = self._buffer
        prefix = buf.consume(SIZE_PREFIX)
        if prefix is None:
            return None
        (size,) = _SIZE.unpack(prefix)
        if size < 0 or size > self.max_frame_size:
            buf.rollback()
            raise RemoteProtocolError(_bad_size(prefix, size, self.max_frame_size))
        if size >= LARGE_FRAME_SIZE and len(buf) < size:
            rest = buf.take_rest()  # all of it belongs to this frame
            self._parts, self._missing = [rest], size - len(rest)
            return None
        frame = buf.consume(size)
        if frame is None:
            buf.rollback()
            return None
        buf.commit()
        return frame

    def frames(self) -> list[bytes]:
        """Every complete frame buffered now, in order."""
        out: list[bytes] = []
        while (payload := self.next_frame()) is not None:
            out.append(payload)
        return out
