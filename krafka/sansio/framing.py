"""Kafka framing: every request and response is an int32 big-endian size, then that many bytes.

`ReceiveBuffer` accumulates bytes from the network and hands out complete frames. Reads go
through a cursor that is only made permanent by `commit()`; a partial frame is undone with
`rollback()`, so a frame split over any number of `feed()` calls is parsed exactly once.
Frame sizes come from the peer and are hostile: negative or oversized ones are rejected
before anything is allocated.

A large frame (a Fetch response of megabytes) is not grown in the buffer and copied out: once
its size prefix has passed the checks, the reader gives it a buffer of exactly that size and
received bytes are copied straight into it, once; the finished buffer is the payload.
"""

from __future__ import annotations

import struct
from typing import Final

from krafka.errors import RemoteProtocolError

_SIZE: Final = struct.Struct(">i")
SIZE_PREFIX: Final = _SIZE.size
DEFAULT_MAX_FRAME_SIZE: Final = 100 * 1024 * 1024
#: Frames at least this large that are still arriving are filled in place (see the module doc).
DIRECT_FILL_SIZE: Final = 64 * 1024


def frame(payload: bytes | bytearray | memoryview) -> bytes:
    """`payload` with its int32 size prefix."""
    return _SIZE.pack(len(payload)) + bytes(payload)


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

    __slots__ = ("_buffer", "_filled", "_large", "max_frame_size")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self._buffer = ReceiveBuffer()
        self.max_frame_size = max_frame_size
        #: A large frame being filled in place, and how many of its bytes have arrived.
        self._large: bytearray | None = None
        self._filled = 0

    @property
    def buffered(self) -> int:
        """Bytes held that do not yet form a complete frame."""
        return len(self._buffer) + self._filled

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        large = self._large
        if large is not None:
            filled, n = self._filled, len(data)
            need = len(large) - filled
            if n <= need:
                large[filled : filled + n] = data
                self._filled = filled + n
                return
            view = memoryview(data)
            large[filled:] = view[:need]
            self._filled = len(large)
            data = view[need:]
        self._buffer.feed(data)

    def next_frame(self) -> bytes | bytearray | None:
        """The next complete frame's payload (without its size prefix), or None."""
        large = self._large
        if large is not None:
            if self._filled < len(large):
                return None
            self._large, self._filled = None, 0
            return large
        buf = self._buffer
        prefix = buf.consume(SIZE_PREFIX)
        if prefix is None:
            return None
        (size,) = _SIZE.unpack(prefix)
        if size < 0 or size > self.max_frame_size:
            buf.rollback()
            raise RemoteProtocolError(
                f"frame size {size} outside 0..{self.max_frame_size} in the size prefix"
            )
        if size >= DIRECT_FILL_SIZE and len(buf) < size:
            self._start_large(size)
            return None
        payload = buf.consume(size)
        if payload is None:
            buf.rollback()
            return None
        buf.commit()
        return payload

    def _start_large(self, size: int) -> None:
        """The frame whose prefix was just read will not fit what is buffered: move what is
        here of it into a buffer of its size (the buffer holds nothing after it)."""
        rest = self._buffer.take_rest()
        large = bytearray(size)
        large[: len(rest)] = rest
        self._large, self._filled = large, len(rest)

    def frames(self) -> list[bytes | bytearray]:
        """Every complete frame buffered now, in order."""
        out: list[bytes | bytearray] = []
        while (payload := self.next_frame()) is not None:
            out.append(payload)
        return out
