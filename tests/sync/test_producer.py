"""The blocking producer against Tansu: plain threads, several threads sharing one producer,
the Future API (result, exception, callbacks, wait, as_completed), errors of the async
classes, transactions, close joining its thread, and use from inside a running event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import gc
import inspect
import threading
import time
import types
import uuid
from typing import Any

import pytest

import krafka
from krafka.codec import murmur2_partition
from krafka.errors import InvalidStateError, KafkaTimeoutError
from krafka.sync import AdminClient, DeliveryFuture, Producer
from krafka.sync.parking import ParkingLock as LoopThreadLock
from krafka.sync.producer import compiled_send

pytestmark = [pytest.mark.broker, pytest.mark.timeout(120)]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def make_topic(bootstrap: str, partitions: int = 1) -> str:
    topic = unique("sync")
    with AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topics([krafka.NewTopic(topic, partitions)]).raise_for_errors()
    return topic


def read_back(bootstrap: str, topic: str, count: int, **config: Any) -> list[Any]:
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "sync-read-back", **config}
    )
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
    out: list[Any] = []
    deadline = time.monotonic() + 20
    try:
        while len(out) < count and time.monotonic() < deadline:
            out += [m for m in consumer.consume(1000, 0.2) if m.error() is None]
    finally:
        consumer.close()
    return out


def test_send_returns_a_future_and_send_and_wait_blocks(broker: Any) -> None:
    topic = make_topic(broker.bootstrap_servers, 2)
    with Producer(bootstrap_servers=broker.bootstrap_servers, linger=0.001) as producer:
        future = producer.send(topic, b"v", key=b"k", headers=[("h", b"1")], partition=1)
        assert isinstance(future, cf.Future) and isinstance(future, DeliveryFuture)
        meta = future.result(timeout=10)
        assert isinstance(meta, krafka.RecordMetadata)
        assert (meta.topic, meta.partition, meta.offset) == (topic, 1, 0)
        assert future.done() and future.exception() is None and not future.cancel()
        again = producer.send_and_wait(topic, b"w", partition=1)
        assert again.offset == 1
        assert producer.partitions_for(topic) == [0, 1]
        assert producer.metrics().records_sent >= 2  # type: ignore[attr-defined]


def test_future_api_wait_as_completed_and_callbacks(broker: Any) -> None:
    topic = make_topic(broker.bootstrap_servers)
    with Producer(bootstrap_servers=broker.bootstrap_servers) as producer:
        futures = [producer.send(topic, b"%d" % i, partition=0) for i in range(5000)]
        done, pending = cf.wait(futures, timeout=20)
        assert len(done) == 5000 and not pending
        assert [f.result().offset for f in futures] == list(range(5000))
        assert sum(1 for _ in cf.as_completed(
            [producer.send(topic, b"x", partition=0) for _ in range(200)], timeout=20
        )) == 200  # fmt: skip

        calls: list[tuple[str, int]] = []
        seen = threading.Event()

        def callback(f: cf.Future[krafka.RecordMetadata]) -> None:
            calls.append((threading.current_thread().name, f.result().offset))
            seen.set()

        producer.send(topic, b"cb", partition=0).add_done_callback(callback)
        assert seen.wait(10)
        assert calls == [("krafka producer", 5200)]  # on the producer's thread
        late = producer.send(topic, b"late", partition=0)
        producer.flush()
        late_calls: list[int] = []
        late.add_done_callback(lambda f: late_calls.append(f.result().offset))
        assert late_calls == [5201]  # done already: called at once, in this thread


SENDS = ["python", "compiled"] if compiled_send(LoopThreadLock()) is not None else ["python"]


@pytest.fixture(params=SENDS)
def send_kind(request: pytest.FixtureRequest) -> str:
    """Which `send` the producers of a test use: the compiled one (when built) or the Python
    reference it mirrors."""
    return str(request.param)


def producer_with(kind: str, **options: Any) -> Producer:
    producer = Producer(**options)
    if kind == "python":
        producer.send = types.MethodType(Producer.send, producer)  # type: ignore[method-assign]
    else:
        assert "DirectSend" in repr(producer.send)
    return producer


def test_errors_are_the_async_classes(broker: Any, send_kind: str) -> None:
    topic = make_topic(broker.bootstrap_servers)
    with producer_with(
        send_kind, bootstrap_servers=broker.bootstrap_servers, max_block=1.0
    ) as producer:
        bad = producer.send(topic, b"x", partition=7)
        error = bad.exception(timeout=10)
        assert isinstance(error, ValueError) and "partitions" in str(error)
        with pytest.raises(ValueError, match="partitions"):
            bad.result()
        with pytest.raises(ValueError, match="partitions"):
            producer.send_and_wait(topic, b"x", partition=7)
        assert producer.send_and_wait(topic, b"ok").offset == 0  # the producer goes on
    with pytest.raises(InvalidStateError):
        producer.send(topic, b"after close")
    with pytest.raises(InvalidStateError):
        producer.flush()


def test_threads_share_one_producer(broker: Any, send_kind: str) -> None:
    topic = make_topic(broker.bootstrap_servers)
    per_thread, threads = 3000, 6
    results: dict[int, list[krafka.RecordMetadata]] = {}
    with producer_with(send_kind, bootstrap_servers=broker.bootstrap_servers) as producer:

        def work(n: int) -> None:
            futures = [producer.send(topic, b"%d-%d" % (n, i), partition=0)
                       for i in range(per_thread)]  # fmt: skip
            if n % 2:
                producer.flush()
            results[n] = [f.result(timeout=30) for f in futures]

        pool = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join(60)
    offsets = [m.offset for metas in results.values() for m in metas]
    assert sorted(offsets) == list(range(per_thread * threads))
    for metas in results.values():  # each thread's records in the order it sent them
        assert [m.offset for m in metas] == sorted(m.offset for m in metas)
    values = {r.value() for r in read_back(broker.bootstrap_servers, topic, len(offsets))}
    assert values == {b"%d-%d" % (n, i) for n in range(threads) for i in range(per_thread)}


def test_records_keep_their_order_whichever_way_they_go(broker: Any, send_kind: str) -> None:
    """Records without headers are appended from the calling thread while the producer's loop
    is parked; others (headers, an unknown topic, a new batch needed while the loop runs) are
    handed to the loop. One thread's records still reach each partition in the order sent."""
    topic = make_topic(broker.bootstrap_servers, partitions=3)
    sent: list[tuple[int, bytes]] = []
    with producer_with(
        send_kind, bootstrap_servers=broker.bootstrap_servers, linger=0.001
    ) as producer:
        futures = []
        for i in range(6000):
            value = b"%d" % i
            headers = [("h", b"x")] if i % 7 == 0 else None
            key = b"k%d" % (i % 5)
            futures.append(producer.send(topic, value, key, headers=headers))
            if i % 1000 == 999:
                time.sleep(0.01)  # let the loop catch up: the next records may go either way
        metas = [f.result(timeout=30) for f in futures]
        sent = [(m.partition, m.offset) for m in metas]
    # the partitioner chose as Java's would: murmur2 of the key
    assert [p for p, _ in sent] == [murmur2_partition(b"k%d" % (i % 5), 3) for i in range(6000)]
    for partition in range(3):
        offsets = [o for p, o in sent if p == partition]
        assert offsets == sorted(offsets) == list(range(len(offsets)))


def test_a_callback_on_the_loop_may_send(broker: Any) -> None:
    """A done-callback runs on the producer's thread, which never waits for itself: a send
    from it is handed over, not appended in place, and nothing hangs."""
    topic = make_topic(broker.bootstrap_servers)
    with Producer(bootstrap_servers=broker.bootstrap_servers) as producer:
        chained: list[cf.Future[krafka.RecordMetadata]] = []
        first = producer.send(topic, b"first", partition=0)
        first.add_done_callback(lambda _: chained.append(producer.send(topic, b"second")))
        first.result(timeout=10)
        deadline = time.monotonic() + 10
        while not chained and time.monotonic() < deadline:
            time.sleep(0.01)
        assert chained[0].result(timeout=10).offset == 1


def test_transactions(broker: Any) -> None:
    topic = make_topic(broker.bootstrap_servers)
    with Producer(bootstrap_servers=broker.bootstrap_servers,
                  transactional_id=unique("sync-tx")) as producer:  # fmt: skip
        producer.begin_transaction()
        producer.send(topic, b"aborted", partition=0)
        producer.abort_transaction()
        producer.begin_transaction()
        futures = [producer.send(topic, b"committed-%d" % i, partition=0) for i in range(3)]
        producer.commit_transaction()  # the queued records are part of it
        assert all(f.done() for f in futures)
    records = read_back(broker.bootstrap_servers, topic, 3, **{"isolation.level": "read_committed"})
    assert [r.value() for r in records] == [b"committed-0", b"committed-1", b"committed-2"]


def test_close_joins_the_thread_within_its_timeout() -> None:
    from krafka.testing import LocalBroker

    with LocalBroker() as broker:
        producer = Producer(bootstrap_servers=broker.bootstrap_servers, request_timeout=1.0)
        producer.send_and_wait(unique("sync-close"), b"x")
        names = {t.name for t in threading.enumerate()}
        assert "krafka producer" in names
    pending = producer.send(unique("sync-close"), b"never delivered")  # the broker is gone
    started = time.monotonic()
    producer.close(timeout=2.0)
    assert time.monotonic() - started < 2.0 + 2.5
    assert all(t.name != "krafka producer" for t in threading.enumerate())
    assert isinstance(pending.exception(timeout=1), KafkaTimeoutError | InvalidStateError)


def test_a_producer_nobody_closed_stops_when_collected(broker: Any) -> None:
    producer = Producer(bootstrap_servers=broker.bootstrap_servers)
    thread = producer._thread.thread
    assert thread.is_alive()
    del producer
    gc.collect()
    thread.join(5)
    assert not thread.is_alive()


def test_inside_a_running_event_loop(broker: Any) -> None:
    """Jupyter's situation: sync calls from a thread that runs asyncio (directly, blocking
    that loop for the call, and through to_thread) never deadlock."""
    topic = make_topic(broker.bootstrap_servers)

    async def notebook_cell() -> list[int]:
        with Producer(bootstrap_servers=broker.bootstrap_servers) as producer:
            direct = producer.send_and_wait(topic, b"direct", partition=0)
            future = producer.send(topic, b"future", partition=0)
            threaded = await asyncio.to_thread(producer.send_and_wait, topic, b"t", partition=0)
            await asyncio.sleep(0)  # this loop still runs
            return [direct.offset, future.result(timeout=10).offset, threaded.offset]

    assert asyncio.run(notebook_cell()) == [0, 1, 2]


def test_every_async_method_has_a_blocking_twin() -> None:
    for sync_class, async_class in [(Producer, krafka.Producer), (AdminClient, krafka.AdminClient)]:
        public = {
            name for name, _ in inspect.getmembers(async_class, inspect.isfunction)
            if not name.startswith("_")
        }  # fmt: skip
        missing = {name for name in public if not hasattr(sync_class, name)}
        assert not missing, (sync_class.__name__, missing)


def test_futures_stay_out_of_the_collector_until_waited_on(broker: Any) -> None:
    """A future nobody waits on is untracked (the compiled build): a script holding many costs
    collections nothing; waiting on one or giving it a callback tracks it first."""
    from krafka.sync.untracked import new_untracked, pure_new_untracked

    if new_untracked is pure_new_untracked:
        pytest.skip("the compiled extensions are not built or not in use (KRAFKA_NO_EXTENSIONS)")
    topic = make_topic(broker.bootstrap_servers)
    with Producer(bootstrap_servers=broker.bootstrap_servers) as producer:
        futures = [producer.send(topic, b"%d" % i, partition=0) for i in range(100)]
        assert not any(gc.is_tracked(f) for f in futures)
        assert futures[-1].result(timeout=10).offset == 99
        futures[0].add_done_callback(lambda f: None)
        waited = producer.send(topic, b"late", partition=0)
        assert cf.wait([waited], timeout=10).done == {waited}
        assert gc.is_tracked(futures[0]) and gc.is_tracked(waited)
        assert [f.result().offset for f in futures] == list(range(100))


def test_send_many_returns_one_future_after_the_records_sent_before_it(broker: Any) -> None:
    topic = make_topic(broker.bootstrap_servers)
    values = [b"bulk-%d" % i for i in range(5000)]
    with Producer(
        bootstrap_servers=broker.bootstrap_servers, buffer_memory=30_000, batch_size=5000
    ) as producer:
        single = producer.send(topic, b"first")
        bulk = producer.send_many(topic, values, [b"k"] * 5000, partition=0)
        assert isinstance(bulk, cf.Future)
        assert bulk.result(timeout=30) == 5000 and single.result().offset == 0
        with pytest.raises(ValueError, match="does not exist"):
            producer.send_many(topic, [b"v"], partition=1)
        with pytest.raises(TypeError, match="encode it"):
            producer.send_many(topic, ["text"])  # type: ignore[list-item]
        refused: list[BaseException] = []

        def on_the_loop(_: Any) -> None:
            try:
                producer.send_many(topic, [b"never"])
            except Exception as exc:
                refused.append(exc)

        producer.send(topic, b"called back").add_done_callback(on_the_loop)
        deadline = time.monotonic() + 10
        while not refused and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "own loop" in str(refused[0])  # it would wait for itself
        lingering = producer.send_many(topic, [b"late"], partition=0)
    assert lingering.result(timeout=0) == 1  # close delivered it
    with pytest.raises(InvalidStateError, match="closed"):
        producer.send_many(topic, [b"v"])
    messages = read_back(broker.bootstrap_servers, topic, 5003)
    assert [m.value() for m in messages] == [b"first", *values, b"called back", b"late"]


def test_delivery_callbacks_may_send_whichever_thread_runs_them(
    broker: Any, send_kind: str
) -> None:
    """A sender's thread runs the loop's turns inside `send` (and `flush`), so a delivery
    callback may run there: it may `send` (the record goes the queued way, nothing waits on
    itself), and a blocking call from it raises instead of waiting forever."""
    topic = make_topic(broker.bootstrap_servers)
    chained: list[DeliveryFuture] = []
    refused: list[BaseException] = []
    with producer_with(
        send_kind, bootstrap_servers=broker.bootstrap_servers, linger=0.0
    ) as producer:

        def on_delivery(future: Any) -> None:
            if len(chained) < 50:
                chained.append(producer.send(topic, b"chained", partition=0))
            try:
                producer.flush()
            except RuntimeError as exc:
                refused.append(exc)

        for i in range(2000):
            producer.send(topic, b"%d" % i, partition=0).add_done_callback(on_delivery)
        producer.flush()
        assert [f.result(timeout=30).topic for f in chained] == [topic] * 50
    assert refused and all("its own loop" in str(e) for e in refused)
    assert len(read_back(broker.bootstrap_servers, topic, 2050)) == 2050
