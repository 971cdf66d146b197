"""The one clock of krafka's io: `anyio.current_time()`, the event loop's clock.

Every `now` handed to a sans-IO machine and every deadline slept on come from it, so times
from different parts of a client compare (trio's clock is offset from the process's monotonic
clock by a random amount: two clocks made a producer's topics look idle for hours to its
metadata). Wall-clock timestamps (record timestamps, token expiry) are a different quantity,
handed to the machines as inputs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import anyio


def loop_clock() -> Callable[[], float]:
    """`anyio.current_time` of the running loop as a plain callable (on asyncio the loop's
    `time`, which is what anyio reads, without its backend lookup: the client reads the clock
    a few times per request). Call it on the loop."""
    try:
        return asyncio.get_running_loop().time
    except RuntimeError:  # trio
        return anyio.current_time


def loop_time() -> float | None:
    """`anyio.current_time()` on the client's event loop; None off it (a metrics exporter's
    thread), where a client reports as of the last time its machines saw instead of reading
    a second clock."""
    try:
        return anyio.current_time()
    except RuntimeError:  # no event loop in this thread
        return None
