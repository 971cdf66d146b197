"""The blocking Consumer: in a plain thread, inside a running event loop, iteration, errors."""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import threading
import time
from typing import Any

import pytest

from krafka import OffsetAndMetadata, TopicPartition
from krafka.errors import IllegalStateError, OffsetMetadataTooLargeError, WakeupError
from krafka.sync import Consumer, Producer

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]


def fill(bootstrap: str, topic: str, count: int) -> None:
    with Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(count):
            producer.send(topic, b"%d" % i, partition=0)
        producer.flush()


def test_poll_iterate_commit_and_errors(broker: Any) -> None:
    topic, group = f"sync-{time.time_ns()}", f"g-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    fill(broker.bootstrap_servers, topic, 100)
    with Consumer(
        bootstrap_servers=broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        fetch_max_wait=0.1,
    ) as consumer:
        consumer.assign([tp])
        assert consumer.assignment() == {tp}
        got = []
        for record in consumer:
            got.append(record.offset)
            if len(got) == 100:
                break
        assert got == list(range(100))
        consumer.commit()
        assert consumer.committed([tp])[tp].offset == 100
        assert consumer.lag() == {tp: 0}
        consumer.seek(tp, 95)
        assert [r.offset for r in consumer.poll(5.0)] == [95, 96, 97, 98, 99]
        with pytest.raises(IllegalStateError):
            consumer.subscribe([topic])
    assert consumer.closed


def test_inside_a_running_event_loop(broker: Any) -> None:
    topic = f"sync-loop-{time.time_ns()}"
    fill(broker.bootstrap_servers, topic, 10)

    async def notebook_cell() -> list[int]:
        with Consumer(
            bootstrap_servers=broker.bootstrap_servers,
            auto_offset_reset="earliest",
            fetch_max_wait=0.1,
        ) as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            out: list[int] = []
            while len(out) < 10:
                out += [r.offset for r in consumer.poll(1.0)]
            return out

    assert asyncio.run(notebook_cell()) == list(range(10))


def test_commit_async_gives_a_future_and_calls_back_on_the_application_thread(
    kafka_cluster: Any,
) -> None:
    """Java's `commitAsync(offsets, callback)`: the future completes from the loop, the
    callback runs on the application's thread during its next poll / commit / close."""
    bootstrap = kafka_cluster.bootstrap_for("PLAINTEXT")
    topic, group = f"sync-async-{time.time_ns()}", f"g-{time.time_ns()}"
    tp, here = TopicPartition(topic, 0), threading.current_thread()
    fill(bootstrap, topic, 5)
    calls: list[tuple[threading.Thread, dict[TopicPartition, OffsetAndMetadata], Any]] = []

    def on_commit(offsets: dict[TopicPartition, OffsetAndMetadata], error: Any) -> None:
        calls.append((threading.current_thread(), offsets, error))

    with Consumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        fetch_max_wait=0.05,
    ) as consumer:
        consumer.assign([tp])
        got: list[Any] = []
        while len(got) < 5:
            got += consumer.poll(10.0)
        future = consumer.commit_async(callback=on_commit)
        assert isinstance(future, concurrent.futures.Future)
        assert future.result(10)[tp].offset == 5  # with the leader epoch of the record
        assert calls == []  # not on the loop's thread: on the application's, later
        assert consumer.poll(0) == []
        assert calls == [(here, future.result(0), None)]
        assert consumer.committed([tp])[tp].offset == 5

        refused = consumer.commit_async({tp: OffsetAndMetadata(1, "m" * 5000)}, on_commit)
        later = [consumer.commit_async({tp: offset}, on_commit) for offset in (2, 3)]
        consumer.commit({tp: 4})  # the commits before it have finished, their callbacks ran
        assert isinstance(refused.exception(0), OffsetMetadataTooLargeError)
        assert [f.result(0) for f in later] == [
            {tp: OffsetAndMetadata(2)},
            {tp: OffsetAndMetadata(3)},
        ]
        assert [(t, o[tp].offset) for t, o, _ in calls[1:]] == [(here, 1), (here, 2), (here, 3)]
        errors = [type(error) for _, _, error in calls[1:]]
        assert errors == [OffsetMetadataTooLargeError, type(None), type(None)]
        assert consumer.committed([tp])[tp].offset == 4

        with pytest.raises(IllegalStateError):  # cannot start: raised at once
            consumer.commit_async({TopicPartition(topic, 1): 1}, on_commit)

        def failing(offsets: Any, error: Any) -> None:
            raise ValueError("from the callback")

        consumer.commit_async({tp: 5}, failing).result(10)
        with pytest.raises(ValueError, match="from the callback"):
            consumer.poll(0)
        assert consumer.poll(0) == []  # it ran once
        consumer.commit_async({tp: 5}, on_commit)  # still in flight when close begins
        before = len(calls)
    assert calls[before:] == [(here, {tp: OffsetAndMetadata(5)}, None)]


def test_wakeup_from_another_thread_ends_the_poll_loop_as_javas_shutdown_hook(
    broker: Any,
) -> None:
    """The javadoc's pattern: the loop thread polls until `WakeupError`, then closes; another
    thread (the shutdown hook) calls `wakeup()`. A pending wakeup raises once, in the next
    `poll`, `commit` or `committed`."""
    topic, group = f"sync-wakeup-{time.time_ns()}", f"g-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    fill(broker.bootstrap_servers, topic, 10)
    consumed: list[int] = []
    ended = threading.Event()
    consumer = Consumer(
        bootstrap_servers=broker.bootstrap_servers, group_id=group,
        auto_offset_reset="earliest", enable_auto_commit=False, fetch_max_wait=0.1,
    )  # fmt: skip

    def poll_loop() -> None:
        try:
            consumer.assign([tp])
            while True:
                consumed.extend(r.offset for r in consumer.poll(None))
        except WakeupError:
            consumer.commit()
        finally:
            consumer.close()
            ended.set()

    thread = threading.Thread(target=poll_loop)
    thread.start()
    deadline = time.monotonic() + 20
    while len(consumed) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    consumer.wakeup()  # the shutdown hook
    assert ended.wait(20)
    thread.join(5)
    assert consumed == list(range(10)) and consumer.closed
    with Consumer(
        bootstrap_servers=broker.bootstrap_servers, group_id=group, fetch_max_wait=0.1
    ) as again:
        again.assign([tp])
        assert again.committed([tp])[tp].offset == 10
        again.wakeup()
        with pytest.raises(WakeupError):
            again.committed([tp])
        again.wakeup()
        with pytest.raises(WakeupError):
            again.commit({tp: 10})
        again.commit({tp: 10})
        again.wakeup()
        with pytest.raises(WakeupError):
            next(iter(again))
        assert again.poll(0.1) == []
    consumer.wakeup()  # closed: nothing to wake


def test_wakeup_from_a_signal_handler(broker: Any) -> None:
    """`wakeup()` does not wait for the loop: a signal handler on the polling thread may call
    it while that thread is blocked in `poll`."""
    topic = f"sync-signal-{time.time_ns()}"
    fill(broker.bootstrap_servers, topic, 1)
    with Consumer(
        bootstrap_servers=broker.bootstrap_servers, auto_offset_reset="earliest",
        fetch_max_wait=0.1,
    ) as consumer:  # fmt: skip
        consumer.assign([TopicPartition(topic, 0)])
        while not consumer.poll(1.0):
            pass
        previous = signal.signal(signal.SIGALRM, lambda *_: consumer.wakeup())
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with pytest.raises(WakeupError):
                consumer.poll(None)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
