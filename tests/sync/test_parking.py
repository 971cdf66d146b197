"""The lock a sync client's loop thread holds while it runs: the compiled `ParkingLock` and its
pure twin behave the same, and a `LoopThread` runs nothing while a caller holds it parked."""

from __future__ import annotations

import collections
import functools
import itertools
import operator
import threading
import time
from typing import Any

import pytest

from krafka.sync.loop import LoopThread
from krafka.sync.parking import implementations

pytestmark = pytest.mark.timeout(30)

IMPLEMENTATIONS = implementations()


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def lock_type(request: pytest.FixtureRequest) -> Any:
    return IMPLEMENTATIONS[request.param]


def test_a_parked_loop_is_paused_at_once_and_a_running_one_is_waited_for(lock_type: Any) -> None:
    lock = lock_type()
    events: list[str] = []
    started, go = threading.Event(), threading.Event()

    def loop() -> None:
        lock.run()
        started.set()
        go.wait(5)
        events.append("loop ran")
        lock.park()

    thread = threading.Thread(target=loop)
    thread.start()
    started.wait(5)
    assert not lock.try_pause()  # running: never waited for
    threading.Timer(0.2, go.set).start()
    assert lock.pause()  # waits until the loop parks
    events.append("caller paused")
    lock.resume()
    thread.join(5)
    assert events == ["loop ran", "caller paused"]
    assert lock.pause()  # nobody runs: held at once
    lock.resume()
    assert lock.try_pause()  # parked: held at once
    lock.resume()


def test_the_loop_waits_for_a_paused_caller(lock_type: Any) -> None:
    lock = lock_type()
    assert lock.pause()
    ran_at: list[float] = []

    def loop() -> None:
        lock.run()
        ran_at.append(time.monotonic())
        lock.park()

    thread = threading.Thread(target=loop)
    released = time.monotonic() + 0.2
    thread.start()
    time.sleep(0.2)
    lock.resume()
    thread.join(5)
    assert ran_at and ran_at[0] >= released - 0.01


def test_the_loop_thread_never_waits_for_itself(lock_type: Any) -> None:
    lock = lock_type()
    got: list[bool] = []

    def loop() -> None:
        lock.run()
        got.append(lock.pause())  # e.g. a callback on the loop calling a sync method
        lock.park()

    thread = threading.Thread(target=loop)
    thread.start()
    thread.join(5)
    assert got == [False]


def test_a_paused_loop_thread_runs_nothing_until_resumed() -> None:
    loop = LoopThread("krafka test loop")
    try:
        ran = threading.Event()
        assert loop.parking.pause()  # waits for the loop to park, then holds it there
        loop.call_soon(ran.set)
        assert not ran.wait(0.3)
        loop.parking.resume()
        assert ran.wait(5)
    finally:
        assert loop.stop(5)


def test_hold_waits_off_the_selector_until_the_hold_ends_a_nudge_or_a_timer_is_missed(
    lock_type: Any,
) -> None:
    """`hold` (the loop thread, while a caller runs the loop) ends when `hold_until` passes,
    read again as a caller moves it; at once when nudged; 1 ms after `next_timer` when no
    caller ran that timer. It lets go meanwhile and runs again after."""
    lock = lock_type()
    waited: list[float] = []

    def holds() -> None:
        lock.run()
        start = time.monotonic()
        lock.hold()
        waited.append(time.monotonic() - start)
        lock.park()

    def held(then: Any = None) -> float:
        thread = threading.Thread(target=holds)
        thread.start()
        if then is not None:
            time.sleep(0.1)
            then()
        thread.join(10)
        return waited.pop()

    lock.next_timer = time.monotonic() + 60
    lock.hold_until = time.monotonic() + 0.2
    assert 0.15 <= held() < 2.0  # the hold ends

    lock.hold_until = time.monotonic() + 0.3
    extended = held(lambda: setattr(lock, "hold_until", time.monotonic() + 0.4))
    assert 0.45 <= extended < 2.5  # moved while holding: read again

    lock.hold_until = time.monotonic() + 60
    assert held(lock.nudge) < 2.0  # nudged
    lock.next_timer = time.monotonic() + 0.2
    assert 0.15 <= held() < 2.0  # a timer nobody ran
    lock.next_timer = time.monotonic() + 0.3
    ran = held(lambda: setattr(lock, "next_timer", time.monotonic() + 0.4))
    assert 0.45 <= ran < 2.5  # a caller ran it, and the next one is later

    lock.next_timer = time.monotonic() + 60
    lock.nudge()  # while nobody holds: the next hold returns at once
    assert held() < 1.0
    lock.hold_until = time.monotonic() + 0.2
    assert 0.15 <= held() < 2.0  # and only that one

    assert lock.pause()  # let go meanwhile: a caller could pause it
    lock.resume()


def test_a_hold_that_ends_while_a_sender_has_the_gil_looks_again(lock_type: Any) -> None:
    """The sender holding the loop thread off may have the GIL when the hold runs out, and move
    the hold on before letting go of it: the loop thread, once it has the GIL, reads the hold
    again and keeps waiting (taking over would only take the GIL and the loop from the
    sender)."""
    lock = lock_type()
    lock.next_timer = time.monotonic() + 60
    start = time.monotonic()
    lock.hold_until = start + 0.1
    waited: list[float] = []

    def holds() -> None:
        lock.run()
        lock.hold()
        waited.append(time.monotonic() - start)
        lock.park()

    thread = threading.Thread(target=holds)
    thread.start()
    time.sleep(0.03)  # holding, without the GIL
    move_on = functools.partial(type(lock).hold_until.__set__, lock, start + 0.6)
    busy = itertools.takewhile(
        functools.partial(operator.gt, start + 0.3), iter(time.monotonic, None)
    )
    # One call in C, so the GIL is never let go: the clock read past the hold, then the hold
    # moved on.
    collections.deque(itertools.chain(busy, iter(move_on, None)), maxlen=0)
    thread.join(10)
    assert waited[0] >= 0.55


def test_sent_holds_the_loop_thread_off_and_says_when_a_timer_is_due(lock_type: Any) -> None:
    """A sender appending with the loop held calls `sent()` per record: every 32nd extends
    the hold by 1 ms and answers whether the loop's next timer is due (then the sender runs
    the loop's turns)."""
    lock = lock_type()
    lock.hold_until = 0.0
    lock.next_timer = time.monotonic() + 60
    answers = [lock.sent() for _ in range(64)]
    assert not any(answers)
    assert time.monotonic() < lock.hold_until < time.monotonic() + 0.01
    lock.next_timer = time.monotonic() - 1
    answers = [lock.sent() for _ in range(32)]
    assert answers == [False] * 31 + [True]


def test_a_thread_holding_the_lock_is_not_made_to_wait_for_itself(lock_type: Any) -> None:
    """A caller running the loop may run a callback that sends: its `pause` says no at once
    (the record then goes the queued way), as the loop thread's does."""
    lock = lock_type()
    assert lock.pause()
    assert lock.pause() is False and lock.try_pause() is False
    lock.resume()
    assert lock.try_pause()
    assert lock.pause() is False
    lock.resume()
