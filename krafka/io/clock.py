"""The one clock of krafka's io: `anyio.current_time()`, the event loop's clock.

Every `now` handed to a sans-IO machine and every deadline slept on come from it, so times
from different parts of a client compare (trio's clock is offset from `time.monotonic` by a
random amount: two clocks made a producer's topics look idle for hours to its metadata).
Wall-clock timestamps (record timestamps, token expiry) are a different quantity and come
from `time.time()`, as inputs.

`LoopClock` reads the same clock from a thread outside the loop: the sync facade appends
records on the caller's thread while the loop is parked.
"""

from __future__ import annotations

import time

import anyio


class LoopClock:
    """`anyio.current_time()` of the loop it was made on, readable from any thread.

    Both backends' clocks run at the rate of the system's monotonic clock (asyncio reads it,
    trio adds a fixed offset), so the offset measured once on the loop holds.
    """

    __slots__ = ("_offset",)

    def __init__(self) -> None:
        self._offset = anyio.current_time() - time.monotonic()

    def __call__(self) -> float:
        return time.monotonic() + self._offset
