"""Kafka framing: every request and response is an int32 big-endian size, then that many bytes.

`ReceiveBuffer` accumulates bytes from the network and hands out complete frames. Reads go
through a cursor that is only made permanent by `commit()`; a partial frame is undone with
`rollback()`, so a frame split over any number of `feed()` calls is parsed exactly once.
Frame sizes come from the peer and are hostile: negative or oversized ones are rejected
before anything is allocated.

A large frame (a Fetch response of megabytes) is not grown in the buffer and copied out: once
its size prefix has passed the checks, the reader allocates its payload at its full size and
copies each chunk received for it into place once. A transport that can read into a buffer it
is given (asyncio's `BufferedProtocol`) asks `get_buffer()` where the next bytes go and reports
them with `buffer_updated(n)`: the rest of a large frame is then read straight into its payload,
with no chunk objects and no copy, so a consumer's responses allocate one block each.
"""

from __future__ import annotations

import struct
from typing import Final

from krafka._codec import impl
from krafka.errors import RemoteProtocolError

_SIZE: Final = struct.Struct(">i")
SIZE_PREFIX: Final = _SIZE.size
DEFAULT_MAX_FRAME_SIZE: Final = 100 * 1024 * 1024
#: Frames at least this large that are still arriving are read into their payload (module doc).
LARGE_FRAME_SIZE: Final = 64 * 1024
#: `get_buffer`'s buffer between large frames: size prefixes and small frames are read into it.
SCRATCH_SIZE: Final = 64 * 1024


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

    __slots__ = ("_buffer", "_filled", "_frame", "_in_frame", "_scratch", "max_frame_size")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self._buffer = ReceiveBuffer()
        self.max_frame_size = max_frame_size
        #: The payload of a large frame being received (none: no such frame), and how many of
        #: its bytes have arrived.
        self._frame: bytearray | None = None
        self._filled = 0
        self._scratch: bytearray | None = None
        #: Whether the last `get_buffer()` was the large frame's (else the scratch buffer).
        self._in_frame = False

    @property
    def buffered(self) -> int:
        """Bytes held that do not yet form a complete frame."""
        return len(self._buffer) + self._filled

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Bytes read from the stream (copied where kept: the caller may reuse its buffer)."""
        if self._frame is not None:
            data = self._fill(data)
            if not data:
                return
        elif not self._buffer and self._starts_large_frame(data):
            return
        self._buffer.feed(data)

    def get_buffer(self) -> memoryview:
        """Where the next bytes read from the stream should be written (never empty): the rest
        of the large frame being received, else a scratch buffer kept for this;
        `buffer_updated` takes them."""
        frame = self._frame
        self._in_frame = frame is not None and self._filled < len(frame)
        if self._in_frame:
            assert frame is not None
            return memoryview(frame)[self._filled :]
        if self._scratch is None:
            self._scratch = bytearray(SCRATCH_SIZE)
        return memoryview(self._scratch)

    def buffer_updated(self, n: int) -> None:
        """`n` bytes were written at the start of the last `get_buffer()`."""
        if self._in_frame:
            self._filled += n
        elif self._scratch is not None:
            self.feed(memoryview(self._scratch)[:n])

    def _begin(self, size: int, data: bytes | bytearray | memoryview) -> None:
        """Start receiving a large frame of `size` bytes, all of `data` its first ones."""
        self._frame, self._filled = impl.receive_buffer(size), 0
        self._fill(data)

    def _fill(self, data: bytes | bytearray | memoryview) -> memoryview:
        """Copy into the large frame's payload what `data` has of it; the rest of `data`."""
        frame, start = self._frame, self._filled
        assert frame is not None
        view = memoryview(data)
        n = min(len(view), len(frame) - start)
        frame[start : start + n] = view[:n]
        self._filled = start + n
        return view[n:]

    def _starts_large_frame(self, data: bytes | bytearray | memoryview) -> bool:
        """Begin a large frame whose size prefix starts `data` (nothing buffered before it)
        with the rest of `data`, not copied through the buffer; False (and nothing done) for any
        other data, a size the checks refuse included."""
        if len(data) < SIZE_PREFIX:
            return False
        (size,) = _SIZE.unpack_from(data)
        if not LARGE_FRAME_SIZE <= size <= self.max_frame_size or len(data) - SIZE_PREFIX >= size:
            return False
        self._begin(size, memoryview(data)[SIZE_PREFIX:])
        return True

    def next_frame(self) -> bytes | bytearray | None:
        """The next complete frame's payload (without its size prefix), or None. A large
        frame's is the bytearray it was received into, handed over."""
        frame = self._frame
        if frame is not None:
            if self._filled < len(frame):
                return None
            self._frame, self._filled = None, 0
            return frame
        buf = self._buffer
        prefix = buf.consume(SIZE_PREFIX)
        if prefix is None:
            return None
        (size,) = _SIZE.unpack(prefix)
        if size < 0 or size > self.max_frame_size:
            buf.rollback()
            raise RemoteProtocolError(_bad_size(prefix, size, self.max_frame_size))
        if size >= LARGE_FRAME_SIZE and len(buf) < size:
            self._begin(size, buf.take_rest())  # all of it belongs to this frame
            return None
        payload = buf.consume(size)
        if payload is None:
            buf.rollback()
            return None
        buf.commit()
        return payload

    def frames(self) -> list[bytes | bytearray]:
        """Every complete frame buffered now, in order."""
        out: list[bytes | bytearray] = []
        while (payload := self.next_frame()) is not None:
            out.append(payload)
        return out
