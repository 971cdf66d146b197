from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krafka.errors import RemoteProtocolError
from krafka.sansio.framing import SCRATCH_SIZE, FrameReader, ReceiveBuffer, frame


def test_receive_buffer_commit_and_rollback() -> None:
    buf = ReceiveBuffer()
    buf.feed(b"abcdef")
    assert buf.consume(2) == b"ab"
    assert buf.consume(10) is None
    buf.rollback()
    assert buf.consume(3) == b"abc"
    buf.commit()
    assert len(buf) == 3
    assert buf.consume(3) == b"def"


def test_frame_split_over_many_feeds() -> None:
    reader = FrameReader()
    data = frame(b"hello") + frame(b"") + frame(b"world!")
    got = []
    for i in range(len(data)):
        reader.feed(data[i : i + 1])
        got += reader.frames()
    assert got == [b"hello", b"", b"world!"]
    assert reader.buffered == 0


@given(st.lists(st.binary(max_size=64), max_size=8), st.data())
def test_frames_round_trip_any_chunking(payloads: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(frame(p) for p in payloads)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    reader = FrameReader()
    out: list[bytes] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        reader.feed(stream[start:cut])
        start = cut
        out += reader.frames()
    assert out == payloads


@pytest.mark.parametrize("size", [-1, 2**31 - 1])
def test_hostile_frame_size_rejected_before_allocation(size: int) -> None:
    reader = FrameReader(max_frame_size=1024)
    reader.feed(struct.pack(">i", size))
    with pytest.raises(RemoteProtocolError, match="frame size"):
        reader.next_frame()


@pytest.mark.parametrize(
    ("first", "says"),
    [
        (b"HTTP/1.1 400 Bad Request\r\n", "not a Kafka broker but an HTTP server"),
        (b"\x15\x03\x03\x00\x02\x02\x46", "TLS alert: the listener expects TLS"),
        (b"+OK POP3 ready\r\n", "not a Kafka broker (it answered in text: '+OK '"),
    ],
)
def test_a_peer_speaking_another_protocol_is_named(first: bytes, says: str) -> None:
    reader = FrameReader(max_frame_size=1024)
    reader.feed(first)
    with pytest.raises(RemoteProtocolError, match="frame size") as info:
        reader.next_frame()
    assert says in str(info.value)


@given(
    st.lists(st.sampled_from([0, 5, 65_535, 65_536, 70_001, 200_000]), min_size=1, max_size=5),
    st.data(),
    st.sampled_from([bytes, bytearray, memoryview]),
)
def test_large_frames_are_copied_into_place_under_any_chunking(
    sizes: list[int], data: st.DataObject, chunk_type: type
) -> None:
    """Frames from the large-frame size up are copied into their payload as their chunks
    arrive; any cut of the stream, small frames around them included, gives the same payloads,
    whatever the type of the chunks."""
    payloads = [bytes([i % 251]) * size for i, size in enumerate(sizes)]
    stream = b"".join(frame(p) for p in payloads)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=30)))
    reader = FrameReader()
    out: list[bytes] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        reader.feed(chunk_type(stream[start:cut]))
        start = cut
        out += reader.frames()
    assert out == payloads
    assert reader.buffered == 0


def test_a_large_frame_is_held_until_complete_and_checked_first() -> None:
    reader = FrameReader(max_frame_size=1 << 20)
    body = b"x" * 100_000
    reader.feed(frame(body)[:50_000])
    assert reader.next_frame() is None
    assert reader.buffered == 50_000 - 4
    reader.feed(frame(body)[50_000:] + frame(b"next"))
    assert reader.frames() == [body, b"next"]
    reader.feed(struct.pack(">i", (1 << 20) + 1) + b"y" * 70_000)
    with pytest.raises(RemoteProtocolError, match="frame size"):
        reader.next_frame()


def test_a_large_frame_does_not_keep_the_callers_buffer() -> None:
    """A chunk is kept past `feed`: a caller reusing its buffer must not change the frame."""
    body = bytes(range(256)) * 400
    stream = frame(body)
    reader = FrameReader()
    reader.feed(stream[:1000])
    assert reader.next_frame() is None  # its size is known: the frame is kept in chunks now
    scratch = bytearray(stream[1000:50_000])
    reader.feed(scratch)
    scratch[:] = b"\xff" * len(scratch)
    reader.feed(memoryview(bytearray(stream[50_000:])))
    assert reader.frames() == [body]


def test_a_chunk_starting_a_large_frame_is_checked_and_not_kept_when_reused() -> None:
    """A chunk that begins with a large frame's size prefix is taken as the frame's first part:
    a bytearray the caller reuses is copied, an oversized prefix is still refused."""
    body = bytes(range(256)) * 400
    stream = frame(body)
    reader = FrameReader()
    first = bytearray(stream[:50_000])
    reader.feed(first)
    assert reader.next_frame() is None and reader.buffered == 50_000 - 4
    first[:] = b"\xff" * len(first)
    reader.feed(stream[50_000:])
    assert reader.frames() == [body] and reader.buffered == 0
    refused = FrameReader(max_frame_size=1 << 16)
    refused.feed(struct.pack(">i", (1 << 16) + 1) + b"y" * 1000)
    with pytest.raises(RemoteProtocolError, match="frame size"):
        refused.next_frame()


@given(
    st.lists(st.sampled_from([0, 5, 65_535, 65_536, 70_001, 200_000]), min_size=1, max_size=5),
    st.lists(st.integers(1, 300_000), max_size=40),
)
def test_reads_into_get_buffer_give_the_same_frames(sizes: list[int], reads: list[int]) -> None:
    """A transport that reads into `get_buffer()` (up to any number of bytes each time) gets
    the same payloads as one feeding chunks; a large frame's rest is read straight into the
    payload handed out, and the scratch buffer between frames is reused."""
    payloads = [bytes([i % 251]) * size for i, size in enumerate(sizes)]
    stream = memoryview(b"".join(frame(p) for p in payloads))
    reader = FrameReader()
    out: list[bytes | bytearray] = []
    scratch = reader.get_buffer().obj
    pos = 0
    for want in [*reads, *[1 << 20] * (len(stream) // SCRATCH_SIZE + 2 * len(sizes) + 1)]:
        if pos == len(stream):
            break
        view = reader.get_buffer()
        target = view.obj
        assert len(view) > 0
        n = min(want, len(view), len(stream) - pos)
        view[:n] = stream[pos : pos + n]
        pos += n
        reader.buffer_updated(n)
        got = reader.frames()
        if target is not scratch:  # read into a large frame: the payload is that block
            assert got in ([], [target])
        out += got
    assert out == payloads
    assert reader.buffered == 0
    assert reader.get_buffer().obj is scratch


def test_a_complete_large_frame_not_taken_yet_leaves_room_to_read_on() -> None:
    """Once a large frame is whole, `get_buffer()` is the scratch buffer again (an empty one
    would read as the end of the stream), and what is read there follows the frame."""
    body = b"z" * 70_000
    stream = frame(body) + frame(b"after")
    reader = FrameReader()
    pos = 0
    while pos < len(stream):
        view = reader.get_buffer()
        assert len(view) > 0
        n = min(len(view), len(stream) - pos)
        view[:n] = stream[pos : pos + n]
        pos += n
        reader.buffer_updated(n)
    assert reader.frames() == [body, b"after"]
