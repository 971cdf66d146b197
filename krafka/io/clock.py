"""The one clock of krafka's io: `anyio.current_time()`, the event loop's clock.

Every `now` handed to a sans-IO machine and every deadline slept on come from it, so times
from different parts of a client compare (trio's clock is offset from `time.monotonic` by a
random amount: two clocks made a producer's topics look idle for hours to its metadata).
Wall-clock timestamps (record timestamps, token expiry) are a different quantity and come
from `time.time()`, as inputs.

`loop_clock()` hands out that same clock as a plain callable: the sync facade appends records
on the caller's thread while the loop is parked, where `anyio.current_time()` cannot be called.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def loop_clock() -> Callable[[], float]:
    """(On the loop) the callable `anyio.current_time()` reads: asyncio's `loop.time` or
    trio's run clock (`trio.lowlevel.current_clock().current_time`, a custom clock included),
    callable from any thread."""
    try:
        return asyncio.get_running_loop().time
    except RuntimeError:  # not asyncio: anyio's other backend
        import trio

        return trio.lowlevel.current_clock().current_time
