"""The workloads, each a krafka client doing what applications do, recording into a `History`:

- `IdempotentWriter`: acks=all, idempotent, keyed records `<writer>:<seq>` to the plain topic;
- `TxnWriter`: transactions of 2-6 records, one in five aborted (half of those once their
  records are in the log); a failed commit recreates the producer (its InitProducerId settles
  the open transaction) and counts as outcome unknown;
- `GroupMember`: a consumer group member processing the plain topic and committing what it
  processed after each poll; `Churner` joins and leaves the group to keep rebalances coming;
- `PipelineWorker`: consume -> transform -> produce, exactly once: each poll's records become
  `out|<input>|<txn>` records in one transaction with the input offsets
  (`send_offsets_to_transaction` + `group_metadata()`); after a failure it recreates its
  producer and rewinds to the group's committed offsets;
- `read_all`: the final read of every partition from the beginning.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from faultkit.checker import PIPELINE_PREFIX
from faultkit.history import History, Processed, Read, Sent, TxnOutcome
from krafka import Consumer, OffsetAndMetadata, Producer, TopicPartition
from krafka.errors import KrafkaError

KEYS = 64


@dataclass(frozen=True, slots=True)
class Topics:
    plain: str
    txn: str
    out: str
    partitions: int = 3

    def of(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in range(self.partitions)]


@dataclass(frozen=True, slots=True)
class Settings:
    bootstrap: str
    request_timeout: float = 5.0
    delivery_timeout: float = 60.0
    session_timeout: float = 6.0
    transaction_timeout: float = 15.0
    rate: float = 300.0  # records per second per writer
    run: str = "run"

    def producer(self, name: str, **options: Any) -> Producer:
        return Producer(
            self.bootstrap,
            client_id=name,
            acks="all",
            linger=0.005,
            request_timeout=self.request_timeout,
            delivery_timeout=self.delivery_timeout,
            transaction_timeout=self.transaction_timeout,
            **options,
        )

    def consumer(self, name: str, **options: Any) -> Consumer:
        return Consumer(
            self.bootstrap,
            client_id=name,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            fetch_max_wait=0.1,
            request_timeout=self.request_timeout,
            session_timeout=self.session_timeout,
            heartbeat_interval=0.5,
            **options,
        )


def _key(rng: random.Random) -> bytes:
    return b"k%d" % rng.randrange(KEYS)


class IdempotentWriter:
    def __init__(self, name: str, settings: Settings, topics: Topics, history: History, seed: int):
        self.name, self.settings, self.topic, self.history = name, settings, topics.plain, history
        self.rng = random.Random(seed)

    async def run(self, stop: anyio.Event) -> None:
        send, receive = anyio.create_memory_object_stream[tuple[bytes, Any]](2000)
        producer = self.settings.producer(self.name, enable_idempotence=True)
        async with producer, anyio.create_task_group() as tg:
            tg.start_soon(self._collect, receive)
            async with send:
                await self._produce(producer, send, stop)

    async def _produce(
        self,
        producer: Producer,
        out: anyio.abc.ObjectSendStream[tuple[bytes, Any]],
        stop: anyio.Event,
    ) -> None:
        seq = 0
        started = anyio.current_time()
        while not stop.is_set():
            due = int((anyio.current_time() - started) * self.settings.rate)
            for _ in range(min(due - seq, 1000)):
                rid = f"{self.name}:{seq}".encode()
                key = _key(self.rng)
                self.history.send(Sent(rid, self.topic, key, self.name, seq))
                seq += 1
                try:
                    handle = await producer.send(self.topic, rid, key=key)
                except KrafkaError as exc:
                    self.history.fail(rid, exc)
                else:
                    await out.send((rid, handle))
            await anyio.sleep(0.01)

    async def _collect(self, results: anyio.abc.ObjectReceiveStream[tuple[bytes, Any]]) -> None:
        async with results:
            async for rid, handle in results:
                try:
                    meta = await handle
                except KrafkaError as exc:
                    self.history.fail(rid, exc)
                else:
                    self.history.ack(rid, meta.partition, meta.offset)


class TxnWriter:
    def __init__(self, name: str, settings: Settings, topics: Topics, history: History, seed: int):
        self.name, self.settings, self.topic, self.history = name, settings, topics.txn, history
        self.rng = random.Random(seed)
        self.seq = 0
        self.txn_id = f"{settings.run}-{name}"

    def _producer(self) -> Producer:
        return self.settings.producer(self.name, transactional_id=self.txn_id)

    async def run(self, stop: anyio.Event) -> None:
        producer = await _started(self._producer)
        number = 0
        try:
            while not stop.is_set():
                ok = await self._one(producer, f"{self.name}:txn{number}")
                number += 1
                if not ok:
                    producer = await _renew(producer, self._producer)
                await anyio.sleep(0.01)
        finally:
            with anyio.CancelScope(shield=True):
                await producer.close(timeout=10)

    async def _one(self, producer: Producer, txn: str) -> bool:
        """One transaction; False when the producer must be replaced."""
        producer.begin_transaction()
        handles = []
        aborting = self.rng.random() < 0.2
        try:
            for _ in range(self.rng.randint(2, 6)):
                rid = f"{self.name}:{self.seq}".encode()
                key = _key(self.rng)
                self.history.send(Sent(rid, self.topic, key, self.name, self.seq, txn=txn))
                self.seq += 1
                handles.append((rid, await producer.send(self.topic, rid, key=key)))
            if aborting:
                if self.rng.random() < 0.5:  # the records in the log first: their abort is read
                    await producer.flush()
                await producer.abort_transaction()
                self.history.txn_outcome(txn, TxnOutcome.ABORTED)
                return True
        except KrafkaError as exc:
            # no commit was asked for: once the producer is replaced, the transaction is aborted
            self.history.txn_outcome(txn, TxnOutcome.ABORTED)
            self.history.notes.append(f"{txn}: {type(exc).__name__} before commit: {exc}")
            return False
        try:
            await producer.commit_transaction()
        except KrafkaError as exc:
            self.history.txn_outcome(txn, TxnOutcome.UNKNOWN)
            self.history.notes.append(f"{txn}: commit failed: {type(exc).__name__}: {exc}")
            return False
        self.history.txn_outcome(txn, TxnOutcome.COMMITTED)
        for rid, handle in handles:
            with contextlib.suppress(KrafkaError):
                meta = await handle
                self.history.ack(rid, meta.partition, meta.offset)
        return True


async def _renew(producer: Producer, make: Callable[[], Producer]) -> Producer:
    """Close a failed transactional producer and start its successor (same transactional id)."""
    with anyio.CancelScope(shield=True), contextlib.suppress(KrafkaError):
        await producer.close(timeout=5)
    return await _started(make)


async def _started(make: Callable[[], Producer]) -> Producer:
    """A started transactional producer, retrying (as Java's documentation advises for
    `initTransactions`) while the cluster cannot give it a producer id yet."""
    while True:
        fresh = make()
        try:
            await fresh.start()
            return fresh
        except KrafkaError:
            with anyio.CancelScope(shield=True), contextlib.suppress(KrafkaError):
                await fresh.close(timeout=5)
            await anyio.sleep(0.5)


class GroupMember:
    """Processes records (recording them) and commits what it processed after each poll."""

    def __init__(self, name: str, settings: Settings, topics: Topics, history: History, group: str):
        self.name, self.settings, self.topics, self.history = name, settings, topics, history
        self.group = group

    async def run(self, done: Callable[[], bool]) -> None:
        async with self.settings.consumer(self.name, group_id=self.group) as consumer:
            await consumer.subscribe([self.topics.plain])
            while not done():
                await self._poll_once(consumer)

    async def _poll_once(self, consumer: Consumer) -> None:
        try:
            records = await consumer.poll(timeout=0.3, max_records=500)
        except KrafkaError as exc:
            self.history.notes.append(f"{self.name} poll: {type(exc).__name__}: {exc}")
            await anyio.sleep(0.2)
            return
        if not records:
            return
        upto: dict[tuple[str, int], int] = {}
        for r in records:
            self.history.processed.append(
                Processed(self.name, r.topic, r.partition, r.offset, r.value)
            )
            upto[(r.topic, r.partition)] = max(upto.get((r.topic, r.partition), 0), r.offset + 1)
        try:
            await consumer.commit(
                {TopicPartition(*tp): OffsetAndMetadata(o) for tp, o in upto.items()}
            )
        except KrafkaError:
            self.history.commit_failures += 1
        else:
            self.history.group_commit(upto)


async def churn(member: Callable[[Callable[[], bool]], Awaitable[None]], stop: anyio.Event) -> None:
    """Join the group for a while, leave, repeat: rebalances racing the members' commits."""
    while not stop.is_set():
        until = anyio.current_time() + 1.5
        with contextlib.suppress(KrafkaError):
            await member(lambda until=until: anyio.current_time() > until or stop.is_set())
        await anyio.sleep(1.0)


class PipelineWorker:
    def __init__(self, name: str, settings: Settings, topics: Topics, history: History, group: str):
        self.name, self.settings, self.topics, self.history = name, settings, topics, history
        self.group = group
        self.txn_id = f"{settings.run}-{name}"
        self.number = 0

    def _producer(self) -> Producer:
        return self.settings.producer(self.name, transactional_id=self.txn_id)

    async def run(self, done: Callable[[], bool], progress: dict[TopicPartition, int]) -> None:
        consumer = self.settings.consumer(
            self.name, group_id=self.group, isolation_level="read_committed"
        )
        async with consumer:
            producer = await _started(self._producer)
            try:
                await consumer.subscribe([self.topics.plain])
                while not done():
                    ok = await self._one(consumer, producer, progress)
                    if not ok:
                        producer = await _renew(producer, self._producer)
                        await self._rewind(consumer)
            finally:
                with anyio.CancelScope(shield=True):
                    await producer.close(timeout=10)

    async def _one(
        self, consumer: Consumer, producer: Producer, progress: dict[TopicPartition, int]
    ) -> bool:
        try:
            records = await consumer.poll(timeout=0.3, max_records=500)
        except KrafkaError as exc:
            self.history.notes.append(f"{self.name} poll: {type(exc).__name__}: {exc}")
            await anyio.sleep(0.2)
            return True
        if not records:
            return True
        txn = f"{self.name}.{self.number}"
        self.number += 1
        positions: dict[TopicPartition, OffsetAndMetadata] = {}
        committing = False
        try:
            producer.begin_transaction()
            for r in records:
                value = PIPELINE_PREFIX + (r.value or b"") + b"|" + txn.encode()
                await producer.send(self.topics.out, value, key=r.key)
                positions[TopicPartition(r.topic, r.partition)] = OffsetAndMetadata(r.offset + 1)
            await producer.send_offsets_to_transaction(positions, consumer.group_metadata())
            committing = True
            await producer.commit_transaction()
        except KrafkaError as exc:
            outcome = TxnOutcome.UNKNOWN if committing else TxnOutcome.ABORTED
            self.history.pipeline_txns[txn] = outcome
            self.history.notes.append(f"{txn}: {type(exc).__name__}: {exc}")
            return False
        self.history.pipeline_txns[txn] = TxnOutcome.COMMITTED
        for tp, offset in positions.items():
            progress[tp] = max(progress.get(tp, 0), offset.offset)
        return True

    async def _rewind(self, consumer: Consumer) -> None:
        """Back to the group's committed offsets: what the failed transaction read is read again."""
        assigned = consumer.assignment()
        while assigned:
            try:
                committed = await consumer.committed(assigned)
                break
            except KrafkaError:
                await anyio.sleep(0.3)
        else:
            return
        for tp in assigned:
            offset = committed.get(tp)
            if offset is None:
                await consumer.seek_to_beginning(tp)
            else:
                await consumer.seek(tp, offset.offset)


async def read_all(
    bootstrap: str, partitions: list[TopicPartition], isolation: str, timeout: float = 60.0
) -> list[Read]:
    """Every record of `partitions` from the beginning to the end offsets seen at the start."""
    out: list[Read] = []
    async with Consumer(
        bootstrap,
        client_id=f"final-{isolation}",
        isolation_level=isolation,
        auto_offset_reset="earliest",
        fetch_max_wait=0.1,
    ) as consumer:
        await consumer.assign(partitions)
        ends = await consumer.end_offsets(partitions)
        with anyio.fail_after(timeout):
            while True:
                for r in await consumer.poll(timeout=0.5, max_records=5000):
                    out.append(Read(r.topic, r.partition, r.offset, r.key, r.value))
                positions = {tp: await consumer.position(tp) for tp in partitions}
                if all(positions[tp] >= ends[tp] for tp in partitions):
                    break
    return out


def ends_reached(
    progress: Mapping[TopicPartition, int], ends: Mapping[TopicPartition, int]
) -> bool:
    return all(progress.get(tp, 0) >= end for tp, end in ends.items() if end > 0)
