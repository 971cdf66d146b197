"""The record accumulator: per-partition queues of batches, linger, and buffer accounting.

`append` puts a record in its partition's open batch (a new one once `batch_size` would be
exceeded); a batch is sendable when full, when its `linger` ran out, while `flushing`, or - for
a retry - when its backoff ended. Bytes buffered are counted against `buffer_memory`; the
producer engine refuses records while `has_room` is False. Retried batches go back in front of
their partition's queue in their original order, so order survives retries. Part of the
`ProducerEngine`, which alone calls it.

`append_open` has a compiled twin (`_append.pyx`, bound by the engine with its partition
choice as the engine's `append_open` when the extension is built).
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from krafka.errors import MessageTooLargeError
from krafka.sansio.producer.batch import BATCH_OVERHEAD, BatchState, ProducerBatch
from krafka.sansio.producer.config import ProducerConfig
from krafka.sansio.producer.record import RecordHandle

TopicPartition = tuple[str, int]
SealHook = Callable[[str, int], None]

APPENDED = 0
"""`append` result: the record joined an open batch."""
OPENED = 1
"""`append` result: the record opened a new batch (a linger deadline started)."""
SEALED = 2
"""`append` result: a batch was sealed (full): the sender has work now."""
_NOT_APPENDED: tuple[None, bool] = (None, False)
_NOT_ADDED: tuple[None, bool] = (None, False)


class RecordAccumulator:
    """Batches records per partition; knows which batches may be sent at `now`.

    Buffer accounting is per batch: `buffered` counts the bytes of sealed batches not yet
    released; open batches are added when they are checked (`has_room`), and a batch opened
    with little room left gets a `limit` below `batch_size`. `append_open` is the per-record
    fast path (an open batch with room); `append` does everything else.
    """

    def __init__(self, config: ProducerConfig, on_seal: SealHook | None = None) -> None:
        self.config = config
        self.batch_size = config.batch_size
        self.buffer_memory = config.buffer_memory
        self.buffered = 0
        #: The batch still taking records, per partition (at most one).
        self.open_batches: dict[TopicPartition, ProducerBatch] = {}
        #: The same, per topic as a list indexed by partition (None: no open batch), so
        #: `append_open` builds no (topic, partition) key per record. One dict for the
        #: accumulator's life (the compiled `append_open` keeps it): changed, never replaced.
        self.open_by_topic: dict[str, list[ProducerBatch | None]] = {}
        #: What `append` returns per record: `handle_type(batch, index)` (drivers use an
        #: awaitable one).
        self.handle_type: Callable[[ProducerBatch, int], RecordHandle] = RecordHandle
        #: Every batch is sendable now, linger or not (a flush or a commit is under way).
        self.flushing = False
        self._queues: dict[TopicPartition, deque[ProducerBatch]] = {}
        self._orders = 0
        self._on_seal = on_seal

    # -- appending ------------------------------------------------------------------------------

    def has_room(self, size: int) -> bool:
        """False while `size` more bytes would exceed `buffer_memory` (an empty buffer takes
        anything, so one oversized record still makes progress)."""
        used = self._used()
        return used == 0 or used + size <= self.buffer_memory

    def check_record_size(self, size: int) -> None:
        """Refuse a record (`size` estimated bytes) that could never be sent: with its batch's
        header it is larger than `max_request_size` or than the whole `buffer_memory` (Java's
        `RecordTooLargeException` at `send`)."""
        total = size + BATCH_OVERHEAD
        for limit, name in (
            (self.config.max_request_size, "max_request_size"),
            (self.buffer_memory, "buffer_memory"),
        ):
            if total > limit:
                raise MessageTooLargeError(
                    f"the record is {total} bytes when serialized, larger than {name}={limit}"
                )

    def used(self) -> int:
        """Bytes of `buffer_memory` taken by queued and open batches."""
        return self._used()

    def _used(self) -> int:
        used = self.buffered
        for batch in self.open_batches.values():
            used += batch.size - BATCH_OVERHEAD
        return used

    def append_open(
        self,
        topic: str,
        partition: int,
        key: bytes | None,
        value: bytes | None,
        timestamp: int | None,
    ) -> tuple[RecordHandle | None, bool]:
        """The fast path: add a record without headers to the partition's open batch if it
        has room.

        Returns the record's handle (None: no open batch with room - use `append`) and whether
        the batch is now full and sealed (the sender has work). No clock, no new batch.
        """
        batch, sealed = self.add_open(topic, partition, key, value, timestamp)
        if batch is None:
            return _NOT_APPENDED
        return self.handle_type(batch, batch.builder.count - 1), sealed

    def add_open(
        self,
        topic: str,
        partition: int,
        key: bytes | None,
        value: bytes | None,
        timestamp: int | None,
    ) -> tuple[ProducerBatch | None, bool]:
        """`append_open` without a handle: the batch the record joined (None: it did not) and
        whether it is now sealed."""
        slots = self.open_by_topic.get(topic)
        if slots is None or partition < 0:
            return _NOT_ADDED
        try:
            batch = slots[partition]
        except IndexError:
            return _NOT_ADDED
        if batch is None:
            return _NOT_ADDED
        size = batch.size + 21 + (len(value) if value is not None else 0)
        if key is not None:
            size += len(key)
        if size > batch.limit:
            return _NOT_ADDED
        batch.builder.append(timestamp, key, value)
        batch.size = size
        if timestamp is not None or batch.stamps is not None:
            batch.stamp(timestamp)
        if size < batch.limit:
            return batch, False
        self.seal(batch)
        return batch, True

    def append(
        self,
        topic: str,
        partition: int,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[tuple[str, bytes | None]] | None,
        size: int,
        now: float,
        now_ms: int,
    ) -> tuple[int, RecordHandle]:
        """Add a record (`size` estimated bytes): returns `APPENDED`, `OPENED` or `SEALED`
        (what the sender must know) and the record's handle.

        `now_ms` (the wall clock, in ms) stamps a new batch: records without a timestamp get it.
        """
        tp = (topic, partition)
        batch = self.open_batches.get(tp)
        result = APPENDED
        if batch is None:
            batch = self._new_batch(tp, now, now_ms, size)
            result = OPENED
        elif batch.size + size > batch.limit:
            self.seal(batch)
            batch = self._new_batch(tp, now, now_ms, size)
            result = SEALED
        handle = self.handle_type(batch, batch.add(timestamp, key, value, headers, size))
        if batch.size >= batch.limit:
            self.seal(batch)
            result = SEALED
        return result, handle

    def _new_batch(
        self, tp: TopicPartition, now: float, now_ms: int, first_size: int
    ) -> ProducerBatch:
        self._orders += 1
        batch = ProducerBatch(tp[0], tp[1], now, self._orders, now_ms)
        room = self.buffer_memory - self._used()
        largest = min(self.batch_size, self.config.max_request_size)
        batch.limit = min(largest, max(room, BATCH_OVERHEAD + first_size))
        queue = self._queues.get(tp)
        if queue is None:
            queue = self._queues[tp] = deque()
        queue.append(batch)
        self.open_batches[tp] = batch
        slots = self.open_by_topic.setdefault(tp[0], [])
        if len(slots) <= tp[1]:
            slots.extend([None] * (tp[1] + 1 - len(slots)))
        slots[tp[1]] = batch
        return batch

    def seal(self, batch: ProducerBatch) -> None:
        """Close `batch` to new records; its bytes now count in `buffered`."""
        if batch.state is BatchState.OPEN:
            batch.state = BatchState.SEALED
            self.buffered += batch.size - BATCH_OVERHEAD
            if self.open_batches.get(batch.tp) is batch:
                del self.open_batches[batch.tp]
                self.open_by_topic[batch.topic][batch.partition] = None
            if self._on_seal is not None:
                self._on_seal(batch.topic, batch.partition)

    # -- draining -------------------------------------------------------------------------------

    def sendable(self, now: float) -> Iterator[TopicPartition]:
        """Partitions whose head batch may be sent now."""
        linger = self.config.lingered
        for tp, queue in self._queues.items():
            if queue and self._head_ready(queue[0], now, linger):
                yield tp

    def _head_ready(self, head: ProducerBatch, now: float, linger: float) -> bool:
        state = head.state
        if state is BatchState.SEALED:
            return True
        if state is BatchState.OPEN:
            return self.flushing or now >= head.created + linger
        return state is BatchState.RETRY and now >= head.retry_at

    def head(self, tp: TopicPartition) -> ProducerBatch:
        """The batch of `tp` that goes next (`sendable` yielded `tp`)."""
        return self._queues[tp][0]

    def pop(self, tp: TopicPartition) -> ProducerBatch:
        """Take the head batch of `tp` (sealing it if it was still open)."""
        batch = self._queues[tp].popleft()
        self.seal(batch)
        return batch

    def reenqueue(self, batch: ProducerBatch, retry_at: float) -> None:
        """Put a batch back for a retry, in front of later batches of its partition."""
        batch.state = BatchState.RETRY
        batch.retry_at = retry_at
        queue = self._queues.setdefault(batch.tp, deque())
        orders = [b.order for b in queue]
        queue.insert(bisect.bisect(orders, batch.order), batch)

    def release(self, batch: ProducerBatch) -> None:
        """A batch finished (delivered or failed): its bytes leave the buffer."""
        self.buffered -= batch.size - BATCH_OVERHEAD

    # -- inspection -----------------------------------------------------------------------------

    def next_change(self, after: float) -> float | None:
        """The earliest time after `after` at which a head batch becomes sendable (its linger
        or backoff ends) or some queued batch outlives `delivery_timeout`. Heads that were
        sendable at `after` already are not counted: whatever kept them back (no producer id,
        requests in flight, no leader) ends with an input, not with time."""
        best: float | None = None
        linger = self.config.lingered
        timeout = self.config.delivery_timeout
        for queue in self._queues.values():
            if not queue:
                continue
            head = queue[0]
            due = head.created + timeout
            state = head.state
            if state is BatchState.OPEN and not self.flushing:
                ready = head.created + linger
                if after < ready < due:
                    due = ready
            elif state is BatchState.RETRY and after < head.retry_at < due:
                due = head.retry_at
            if best is None or due < best:
                best = due
        return best

    def batches(self) -> Iterator[ProducerBatch]:
        """Every batch not yet handed to the sender."""
        for queue in self._queues.values():
            yield from queue

    def expire(self, now: float) -> list[ProducerBatch]:
        """Remove and return queued batches older than `delivery_timeout`."""
        limit = now - self.config.delivery_timeout
        expired: list[ProducerBatch] = []
        for queue in self._queues.values():
            while queue and queue[0].created <= limit:
                batch = queue.popleft()
                self.seal(batch)
                expired.append(batch)
        return expired

    def drop_all(self) -> list[ProducerBatch]:
        """Remove and return every queued batch (abort, close without flush)."""
        out = [b for q in self._queues.values() for b in q]
        for batch in out:
            self.seal(batch)
        self._queues.clear()
        return out

    @property
    def empty(self) -> bool:
        return not any(self._queues.values())
