"""`LoopThread.drive` and `run_held`: a caller runs the sync client's loop on its own thread
(the loop thread kept off the selector meanwhile, and for a moment after), and the loop thread
takes over again: I/O, timers and hand-overs work whichever thread runs the loop."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from typing import Any

import anyio
import pytest

from krafka.sync.loop import LoopThread

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def thread() -> Any:
    loop_thread = LoopThread("test drive")
    yield loop_thread
    loop_thread.stop(5)


class _Reader(asyncio.Protocol):
    """Collects what a socket reads; `arrived` is set by each chunk."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.arrived = asyncio.Event()
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.data += data
        self.arrived.set()


async def _connect(sock: socket.socket) -> _Reader:
    loop = asyncio.get_running_loop()
    _, reader = await loop.connect_accepted_socket(_Reader, sock)
    return reader


async def _read_until(reader: _Reader, size: int) -> bytes:
    with anyio.fail_after(10):
        while len(reader.data) < size:
            reader.arrived.clear()
            await reader.arrived.wait()
    return bytes(reader.data)


def test_drive_runs_the_coroutine_on_the_calling_thread(thread: LoopThread) -> None:
    here = threading.current_thread()

    async def where() -> Any:
        await anyio.sleep(0.01)  # a timer of the loop, run by this thread
        return threading.current_thread()

    assert thread.drive(where) is here
    assert thread.call(where) is thread.thread  # and the loop thread's again after

    async def fails() -> None:
        await anyio.sleep(0)
        raise LookupError("from the coroutine")

    with pytest.raises(LookupError, match="from the coroutine"):
        thread.drive(fails)


def test_io_waited_for_in_a_drive_is_read_on_the_calling_thread(thread: LoopThread) -> None:
    """The loop thread waits in its selector when the drive starts (it is woken off it): what
    arrives during the drive is read by the driving caller."""
    ours, theirs = socket.socketpair()
    try:
        reader = thread.call(_connect, ours)
        time.sleep(0.1)  # the loop thread idle in its selector
        threading.Timer(0.2, theirs.sendall, (b"x" * 100,)).start()
        started = time.monotonic()
        assert thread.drive(_read_until, reader, 100) == b"x" * 100
        assert time.monotonic() - started < 5
    finally:
        theirs.close()


def test_the_loop_thread_takes_over_after_a_drive(thread: LoopThread) -> None:
    """After a drive the loop thread serves what arrives (right away for a call it must
    serve, after the hold for a task already running)."""
    ours, theirs = socket.socketpair()
    try:
        reader = thread.call(_connect, ours)
        thread.drive(anyio.sleep, 0)
        waiting = thread.submit(_read_until, reader, 3)
        time.sleep(0.05)
        theirs.sendall(b"abc")
        assert waiting.result(10) == b"abc"
        thread.drive(anyio.sleep, 0)
        threading.Timer(0.05, theirs.sendall, (b"def",)).start()
        assert thread.call(_read_until, reader, 6) == b"abcdef"
    finally:
        theirs.close()


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="counts a thread's wake-ups")
def test_drives_in_a_row_leave_the_loop_thread_asleep(thread: LoopThread) -> None:
    """What finishing a drive's coroutine makes ready (its done callbacks) runs on the driving
    thread: a poll loop's drives do not wake the loop thread, each one taking the GIL and the
    loop from the caller for nothing."""

    def wakeups() -> int:
        with open(f"/proc/self/task/{thread.thread.native_id}/status") as status:
            for line in status:
                if line.startswith("voluntary_ctxt_switches:"):
                    return int(line.split()[1])
        raise AssertionError("no context switch count")

    async def step() -> None:
        await anyio.sleep(0)

    thread.drive(step)
    before = wakeups()
    for _ in range(200):
        thread.drive(step)
    assert wakeups() - before < 50


def test_a_reader_replaced_while_the_loop_thread_was_held_keeps_reading(
    thread: LoopThread,
) -> None:
    """The loop thread woke for data while a caller held the loop, and that caller replaced
    the socket's reader (a protocol that pauses and resumes reading): the loop thread must
    not act on its stale event afterwards (asyncio would drop the new reader for the
    cancelled old one) and the socket goes on being read."""
    ours, theirs = socket.socketpair()
    try:
        reader = thread.call(_connect, ours)
        time.sleep(0.1)
        assert thread.parking.pause()
        try:
            theirs.sendall(b"first")
            time.sleep(0.1)  # the loop thread woke for it, and waits for the lock

            def replace_reader() -> None:
                reader.transport.pause_reading()
                reader.transport.resume_reading()

            thread.run_held(replace_reader)
        finally:
            thread.parking.resume()
        assert thread.call(_read_until, reader, 5) == b"first"
        theirs.sendall(b"second")
        assert thread.call(_read_until, reader, 11) == b"firstsecond"
    finally:
        theirs.close()


def test_on_caller_inside_a_drive_runs_here_with_the_loop_let_go(thread: LoopThread) -> None:
    here = threading.current_thread()

    async def asks(func: Any) -> Any:
        return await thread.on_caller(func)

    assert thread.drive(asks, threading.current_thread) is here

    def nested() -> str:  # a listener calling its client: the loop thread serves it
        return thread.call(asks, lambda: "inner", serve=True) + " outer"

    assert thread.drive(asks, nested) == "inner outer"
    assert thread.drive(asks, lambda: thread.drive(asks, lambda: "deep")) == "deep"


def test_drive_from_inside_trio(thread: LoopThread) -> None:
    """A blocking call from a trio task (sniffio names trio on that thread): the coroutine
    still sees asyncio, and trio's own state is back after."""
    trio = pytest.importorskip("trio")

    sniffio = pytest.importorskip("sniffio")

    async def on_the_loop() -> str:
        await anyio.sleep(0)
        return str(sniffio.current_async_library())

    async def main() -> None:
        assert thread.drive(on_the_loop) == "asyncio"
        assert sniffio.current_async_library() == "trio"  # trio's again
        await anyio.sleep(0)

    trio.run(main)


def test_drive_in_asyncio_debug_mode(thread: LoopThread) -> None:
    """Debug mode (`python -X dev`) checks that the loop is used from its thread: whoever runs
    it is that thread meanwhile."""

    async def debug() -> None:
        asyncio.get_running_loop().set_debug(True)

    async def schedules() -> str:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        loop.call_soon(done.set_result, "called")
        return await done

    thread.call(debug)
    try:
        assert thread.drive(schedules) == "called"
        assert thread.call(schedules) == "called"
        thread.parking.pause()
        try:
            thread.run_held(asyncio.get_running_loop)
        finally:
            thread.parking.resume()
        assert thread.call(schedules) == "called"
    finally:
        thread.call(_no_debug)


async def _no_debug() -> None:
    asyncio.get_running_loop().set_debug(False)
