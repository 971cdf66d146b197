"""`LoopThread.on_caller`: a coroutine on the loop runs a plain function on the thread blocked in
a serving `call` (a sync consumer's listener on the polling thread), on the loop when none is."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from krafka.sync.loop import LoopThread


def test_on_caller_runs_on_the_serving_thread_and_on_the_loop_without_one() -> None:
    thread = LoopThread("test on_caller")
    try:
        here = threading.current_thread()

        async def asks(func: Any) -> Any:
            return await thread.on_caller(func)

        assert thread.call(asks, threading.current_thread, serve=True) is here
        assert thread.call(asks, threading.current_thread) is thread.thread

        def nested() -> str:
            return thread.call(asks, lambda: "inner", serve=True) + " outer"

        assert thread.call(asks, nested, serve=True) == "inner outer"

        def fails() -> None:
            raise LookupError("from the callback")

        with pytest.raises(LookupError, match="from the callback"):
            thread.call(asks, fails, serve=True)
    finally:
        thread.stop(5)
