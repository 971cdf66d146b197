"""The fetch path as a sans-IO machine (`krafka.sansio.actions.Machine`).

`next_actions(now)` plans one Fetch per broker for all of its fetchable partitions (the
leader's, or the KIP-392 preferred read replica's) with that broker's fetch session, and says
when data arrived (`FetchCompleted`), metadata is stale (`RefreshMetadata`) or positions need a
reset (`ResetNeeded`). Responses become `CompletedFetch`es in a buffer the application drains
with `fetched_records` or `fetched_batches`. A partition is fetched again while up to two of its
fetches wait unread in the buffer (librdkafka-style prefetch: the next fetches are in flight
while the last one is processed), from the end of that data, as long as the buffer is under its
caps.

One partition's trouble never stalls the others: a partition whose fetch failed (an error code,
corrupt data) is fetched again only after a per-partition backoff (Java's `retry.backoff.ms`
doubling to `retry.backoff.max.ms`), one whose buffered data cannot be read past is not fetched
again until a seek, and a poll that raised one partition's error serves the other partitions
first next time.
"""

from __future__ import annotations

import contextlib
import random
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka.errors import KrafkaError, OffsetOutOfRangeError, error_for_code
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey, FetchRequest, FetchResponse
from krafka.protocol.messages.fetch_request import FetchPartition
from krafka.sansio.actions import Broker, RefreshMetadata, SendRequest, Versioned
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.codes import STALE_METADATA_CODES
from krafka.sansio.consumer.completed_fetch import CompletedFetch, Deserializer
from krafka.sansio.consumer.fetch_data import PartitionFetchData
from krafka.sansio.consumer.fetch_session import FetchSessionHandler, FetchSessionRequest
from krafka.sansio.consumer.metrics import ConsumerMetrics
from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch
from krafka.sansio.consumer.subscription import ResetStrategy, SubscriptionState
from krafka.sansio.consumer.view import MetadataView
from krafka.sansio.isolation import IsolationLevel
from krafka.structs import TopicPartition

_TOPIC_ID_VERSION: Final = 13
#: Fetches of one partition buffered and not yet started before it is fetched again.
_PREFETCH_DEPTH: Final = 2
_REPLICA_ERRORS: Final = frozenset(
    {ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.REPLICA_NOT_AVAILABLE}
)
_RETRY_CODES: Final = STALE_METADATA_CODES | {
    ErrorCode.REPLICA_NOT_AVAILABLE,
    ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.OFFSET_NOT_AVAILABLE,
    ErrorCode.UNKNOWN_SERVER_ERROR,
}


@dataclass(frozen=True, slots=True)
class FetchConfig:
    """Fetch settings (Java's consumer names in snake_case; durations in seconds)."""

    fetch_min_bytes: int = 1
    fetch_max_bytes: int = 52_428_800
    max_partition_fetch_bytes: int = 1_048_576
    fetch_max_wait: float = 0.5
    isolation_level: IsolationLevel = IsolationLevel.READ_UNCOMMITTED
    client_rack: str | None = None
    check_crcs: bool = True
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED
    max_buffered_records: int = 0
    preferred_replica_ttl: float = 300.0
    retry_backoff: BackoffPolicy = field(
        default_factory=lambda: BackoffPolicy(initial=0.1, maximum=1.0, max_retries=None)
    )

    @property
    def buffer_bytes(self) -> int:
        """Buffered fetch data allowed before fetching pauses (the prefetch bound)."""
        return self.fetch_max_bytes


@dataclass(frozen=True, slots=True)
class FetchCompleted:
    """New data is buffered: a waiting poll can take it."""


@dataclass(frozen=True, slots=True)
class ResetNeeded:
    """A fetch found a position out of range: partitions await a reset by policy."""


@dataclass(slots=True)
class _InFlight:
    node: int
    wanted: dict[TopicPartition, tuple[int, PartitionFetchData]]
    sent_at: float = 0.0
    version: int = -1
    session: FetchSessionRequest | None = None
    topic_ids: dict[uuid.UUID, str] = field(default_factory=dict)


class Fetcher:
    """Plans Fetches, keeps fetch sessions, buffers and hands out their data."""

    def __init__(
        self,
        config: FetchConfig,
        subscription: SubscriptionState,
        metadata: MetadataView,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self.subscription = subscription
        self.metadata = metadata
        self._rand = rand
        self.metrics = ConsumerMetrics()
        #: How many records of each partition the last `fetched_records` returned.
        self.taken: dict[TopicPartition, int] = {}
        #: The last `fetched_records` / `fetched_batches` used a buffered fetch up (or dropped a
        #: stale one): the next Fetch may be planned now (a driver steps at once instead of when
        #: it next runs).
        self.drained = False
        self._sessions: dict[int, FetchSessionHandler] = {}
        self._in_flight: dict[SendRequest[Any], _InFlight] = {}
        self._busy_nodes: set[int] = set()
        self._busy_partitions: set[TopicPartition] = set()
        self._node_backoff: dict[int, Backoff] = {}
        self._partition_backoff: dict[TopicPartition, Backoff] = {}
        self._throttled: dict[int, float] = {}
        self._buffer: deque[CompletedFetch] = deque()
        self._fetch_offsets: dict[TopicPartition, tuple[int, int]] = {}
        self._stale: set[str] = set()
        self._arrived = False
        self._resets = False
        self._wakeup: float | None = None
        #: A partition's error for the application, with the partition's epoch when it arose:
        #: one at a time, and the partition is not fetched again until poll raised it (or a
        #: seek made it stale), as Java raises a partition's error from the poll that finds it.
        self._errors: dict[TopicPartition, tuple[int, KrafkaError]] = {}

    # -- Machine ------------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        actions: list[Any] = []
        if self._arrived:
            self._arrived = False
            actions.append(FetchCompleted())
        if self._resets:
            self._resets = False
            actions.append(ResetNeeded())
        for node, wanted in self._plan(now).items():
            actions.append(self._fetch(node, wanted, now))
        if self._stale:
            actions.append(RefreshMetadata(frozenset(self._stale)))
            self._stale.clear()
        return actions

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        flight = self._finish(sent)
        if flight is None:
            return
        assert isinstance(response, FetchResponse)
        throttle = int(response.throttle_time_ms or 0)
        self.metrics.fetch_answered(now - flight.sent_at, throttle / 1000, now)
        if throttle > 0:
            self._throttled[flight.node] = now + throttle / 1000
        session = self._session(flight.node)
        if not session.handle_response(response, flight.version):
            code = int(response.error_code)
            if code not in (ErrorCode.NONE, ErrorCode.FETCH_SESSION_ID_NOT_FOUND):
                self._backoff(flight.node).failed(now, self._rand)
                self._stale.update(tp.topic for tp in flight.wanted)
            return
        self._backoff(flight.node).succeeded()
        for topic in response.responses:
            name = str(topic.topic) or flight.topic_ids.get(topic.topic_id, "")
            for part in topic.partitions:
                tp = TopicPartition(name, int(part.partition_index))
                asked = flight.wanted.get(tp)
                if asked is not None:
                    self._partition_response(tp, asked, part, flight.node, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        flight = self._finish(sent)
        if flight is None:
            return
        self._session(flight.node).handle_error()
        self._backoff(flight.node).failed(now, self._rand)
        self._stale.update(tp.topic for tp in flight.wanted)

    def next_deadline(self) -> float | None:
        return self._wakeup

    # -- the application's side ---------------------------------------------------------------

    def fetched_records(
        self,
        max_records: int,
        key_deserializer: Deserializer | None = None,
        value_deserializer: Deserializer | None = None,
    ) -> list[ConsumerRecord]:
        """Up to `max_records` buffered records, in fetch order; positions move past them.

        Raises a partition's pending error (corrupt data, a deserializer failure, an offset
        out of range with no reset policy) once no record precedes it in this call.
        """
        out: list[ConsumerRecord] = []
        taken: dict[TopicPartition, int] = {}
        self.taken = taken
        self.drained = False
        self._raise_pending()
        subscription = self.subscription
        for completed in list(self._buffer):
            if len(out) >= max_records:
                break
            tp = completed.partition
            if not self._current(completed):
                self._drop(completed)
                self.drained = True
                continue
            if subscription.is_paused(tp):
                continue
            before = len(out)
            try:
                completed.take(out, max_records - len(out), key_deserializer, value_deserializer)
            except KrafkaError:
                if out:
                    break
                self._to_back(tp)
                raise
            finally:
                subscription.advance(tp, completed.next_offset, completed.leader_epoch)
                taken[tp] = taken.get(tp, 0) + len(out) - before
            if completed.drained:
                self._drop(completed)
                self.drained = True
        return out

    def fetched_batches(self) -> list[FetchedBatch]:
        """Every buffered partition's data undecoded; positions move past all of it."""
        self.drained = False
        self._raise_pending()
        out: list[FetchedBatch] = []
        for completed in list(self._buffer):
            tp = completed.partition
            if not self._current(completed):
                self._drop(completed)
                self.drained = True
                continue
            if self.subscription.is_paused(tp) or completed.started:
                continue
            batch = completed.raw()
            self.subscription.advance(tp, batch.next_offset, None)
            self._drop(completed)
            self.drained = True
            if batch.data:
                out.append(batch)
        return out

    def has_data(self) -> bool:
        """Something a poll would return now (records, or an error to raise)."""
        if any(self._is_current(tp, epoch) for tp, (epoch, _) in self._errors.items()):
            return True
        return any(
            self._current(c) and not self.subscription.is_paused(c.partition) for c in self._buffer
        )

    @property
    def in_flight(self) -> bool:
        """A Fetch is sent and not answered yet."""
        return bool(self._in_flight)

    def buffered_records(self) -> int:
        return sum(c.record_count for c in self._buffer)

    def close_requests(self) -> list[SendRequest[Any]]:
        """Fetches that close every open fetch session (sent on shutdown, answers ignored)."""
        out = []
        for node, session in self._sessions.items():
            closing = session.close_request()
            if closing is not None:
                request = _request(self.config, closing, {})
                out.append(SendRequest(Broker(node), request, min_version=7))
        return out

    # -- planning -----------------------------------------------------------------------------

    def _plan(self, now: float) -> dict[int, dict[TopicPartition, tuple[int, PartitionFetchData]]]:
        plan: dict[int, dict[TopicPartition, tuple[int, PartitionFetchData]]] = {}
        self._wakeup = None
        if self._over_caps():
            return plan
        unread = self._unread()
        config = self.config
        for tp in self.subscription.fetchable_partitions():
            if tp in self._busy_partitions or unread.get(tp, 0) >= _PREFETCH_DEPTH:
                continue
            held = tp in self._errors and self._is_current(tp, self._errors[tp][0])
            if held or not self._partition_ready(tp, now):
                continue
            node, leader_epoch = self._node_for(tp, now)
            if node is None:
                self._stale.add(tp.topic)
                continue
            if node in self._busy_nodes:
                continue
            ready_at = self._ready_at(node)
            if ready_at > now:
                self._wakeup = ready_at if self._wakeup is None else min(self._wakeup, ready_at)
                continue
            state = self.subscription.state_of(tp)
            offset = self._fetch_offset(tp, state.epoch, state.position)
            data = PartitionFetchData(
                offset, -1, config.max_partition_fetch_bytes, leader_epoch, -1
            )
            plan.setdefault(node, {})[tp] = (state.epoch, data)
        return plan

    def _unread(self) -> dict[TopicPartition, int]:
        """Buffered fetches not yet started, per partition; a partition whose buffered data
        cannot be read past (corrupt, or nothing decodable) counts as full until a seek."""
        unread: dict[TopicPartition, int] = {}
        for c in self._buffer:
            if not self._current(c):
                continue
            if c.error is not None or c.end_offset <= c.start:
                unread[c.partition] = _PREFETCH_DEPTH
            elif not c.started:
                unread[c.partition] = unread.get(c.partition, 0) + 1
        return unread

    def _partition_ready(self, tp: TopicPartition, now: float) -> bool:
        """False while `tp` backs off after a failed fetch (the wakeup is set for then)."""
        backoff = self._partition_backoff.get(tp)
        if backoff is None or backoff.retry_at <= now:
            return True
        retry_at = backoff.retry_at
        self._wakeup = retry_at if self._wakeup is None else min(self._wakeup, retry_at)
        return False

    def _partition_failed(self, tp: TopicPartition, now: float) -> None:
        backoff = self._partition_backoff.get(tp)
        if backoff is None:
            backoff = self._partition_backoff[tp] = Backoff(self.config.retry_backoff)
        backoff.failed(now, self._rand)

    def _over_caps(self) -> bool:
        size = sum(c.size for c in self._buffer)
        if size >= self.config.buffer_bytes:
            return True
        cap = self.config.max_buffered_records
        return cap > 0 and self.buffered_records() >= cap

    def _node_for(self, tp: TopicPartition, now: float) -> tuple[int | None, int]:
        info = self.metadata.partition(tp.topic, tp.partition)
        if info is None or info.leader < 0:
            return None, -1
        if self.config.client_rack is not None:
            replica = self.subscription.preferred_replica(tp, now)
            if replica is not None and self.metadata.broker(replica) is not None:
                return replica, info.leader_epoch
        return info.leader, info.leader_epoch

    def _ready_at(self, node: int) -> float:
        """When `node` may be fetched from again (backoff after failures, KIP-219 throttle)."""
        backoff = self._node_backoff.get(node)
        retry_at = backoff.retry_at if backoff is not None and backoff.failures else 0.0
        return max(retry_at, self._throttled.get(node, 0.0))

    def _fetch_offset(self, tp: TopicPartition, epoch: int, position: int) -> int:
        known = self._fetch_offsets.get(tp)
        if known is not None and known[0] == epoch:
            return max(known[1], position)
        return position

    def _fetch(
        self, node: int, wanted: dict[TopicPartition, tuple[int, PartitionFetchData]], now: float
    ) -> SendRequest[FetchResponse]:
        flight = _InFlight(node, wanted, now)
        topics = {tp.topic for tp in wanted}
        ids = {t: self.metadata.topic_id(t) for t in topics}
        known_ids = {t: i for t, i in ids.items() if i is not None}
        max_version = None if len(known_ids) == len(topics) else _TOPIC_ID_VERSION - 1
        session = self._session(node)
        read_committed = self.config.isolation_level is IsolationLevel.READ_COMMITTED
        config = self.config

        def build(version: int) -> FetchRequest:
            by_id = version >= _TOPIC_ID_VERSION
            flight.version = version
            flight.topic_ids = {i: t for t, i in known_ids.items()} if by_id else {}
            request = session.build(
                {tp: d for tp, (_, d) in wanted.items()},
                version=version,
                topic_ids=known_ids if by_id else None,
            )
            flight.session = request
            return _request(config, request, known_ids if by_id else {})

        send = SendRequest(
            Broker(node),
            Versioned(ApiKey.FETCH, build),
            timeout=None,
            max_version=max_version,
            min_version=4 if read_committed else None,
        )
        self._in_flight[send] = flight
        self._busy_nodes.add(node)
        self._busy_partitions.update(wanted)
        return send

    def _finish(self, sent: SendRequest[Any]) -> _InFlight | None:
        flight = self._in_flight.pop(sent, None)
        if flight is not None:
            self._busy_nodes.discard(flight.node)
            self._busy_partitions.difference_update(flight.wanted)
        return flight

    def _session(self, node: int) -> FetchSessionHandler:
        session = self._sessions.get(node)
        if session is None:
            session = self._sessions[node] = FetchSessionHandler(node)
        return session

    def _backoff(self, node: int) -> Backoff:
        backoff = self._node_backoff.get(node)
        if backoff is None:
            backoff = self._node_backoff[node] = Backoff(self.config.retry_backoff)
        return backoff

    # -- responses ----------------------------------------------------------------------------

    def _partition_response(
        self,
        tp: TopicPartition,
        asked: tuple[int, PartitionFetchData],
        part: Any,
        node: int,
        now: float,
    ) -> None:
        epoch, data = asked
        subscription = self.subscription
        if not subscription.is_assigned(tp) or subscription.state_of(tp).epoch != epoch:
            return
        code = int(part.error_code)
        if code == ErrorCode.NONE:
            self._partition_backoff.pop(tp, None)
            self._buffer_data(tp, epoch, data, part, now)
            return
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            self._out_of_range(tp, data, node)
            return
        self._partition_failed(tp, now)
        if code in _RETRY_CODES:
            subscription.clear_preferred_replica(tp)
            if code in STALE_METADATA_CODES or code in _REPLICA_ERRORS:
                self._stale.add(tp.topic)
        else:
            message = f"fetch of {tp.topic}-{tp.partition} at offset {data.fetch_offset} failed"
            self._hold(tp, epoch, error_for_code(code, message))

    def _buffer_data(
        self,
        tp: TopicPartition,
        epoch: int,
        asked: PartitionFetchData,
        part: Any,
        now: float,
    ) -> None:
        subscription = self.subscription
        hw, lso, lstart = (
            int(part.high_watermark),
            int(part.last_stable_offset),
            int(part.log_start_offset),
        )
        subscription.update_watermarks(tp, hw, lso, lstart)
        replica = int(part.preferred_read_replica)
        if replica >= 0 and self.config.client_rack is not None:
            subscription.set_preferred_replica(tp, replica, now + self.config.preferred_replica_ttl)
        records = part.records
        if not records:
            return
        aborted = tuple(
            (int(a.producer_id), int(a.first_offset)) for a in (part.aborted_transactions or ())
        )
        completed = CompletedFetch(
            tp,
            records,
            start=asked.fetch_offset,
            epoch=epoch,
            high_watermark=hw,
            last_stable_offset=lso,
            log_start_offset=lstart,
            aborted_transactions=aborted,
            read_committed=self.config.isolation_level is IsolationLevel.READ_COMMITTED,
            check_crc=self.config.check_crcs,
            max_decompressed_size=self.config.max_decompressed_size,
        )
        if completed.size == 0 and completed.error is None:
            return
        end = completed.end_offset
        if completed.read_committed and lso >= 0:
            end = min(end, lso)  # nothing past the last stable offset was handed out
        self._fetch_offsets[tp] = (epoch, max(end, asked.fetch_offset))
        self._buffer.append(completed)
        self.metrics.fetched(completed.size)
        self._arrived = True

    def _out_of_range(self, tp: TopicPartition, asked: PartitionFetchData, node: int) -> None:
        subscription = self.subscription
        state = subscription.state_of(tp)
        if state.preferred_replica is not None and state.preferred_replica == node:
            subscription.clear_preferred_replica(tp)
            return
        if subscription.default_reset is ResetStrategy.NONE:
            error = OffsetOutOfRangeError(
                f"offset {asked.fetch_offset} is out of range for {tp.topic}-{tp.partition}"
                " and auto_offset_reset is none: seek to a valid offset"
            )
            self._hold(tp, state.epoch, error)
            return
        subscription.request_offset_reset(tp)
        self._resets = True

    # -- buffer -------------------------------------------------------------------------------

    def _current(self, completed: CompletedFetch) -> bool:
        tp = completed.partition
        subscription = self.subscription
        return subscription.is_assigned(tp) and subscription.state_of(tp).epoch == completed.epoch

    def _drop(self, completed: CompletedFetch) -> None:
        with contextlib.suppress(ValueError):
            self._buffer.remove(completed)

    def _to_back(self, tp: TopicPartition) -> None:
        """`tp`'s data just raised: the next poll serves the other partitions' data first."""
        mine = [c for c in self._buffer if c.partition == tp]
        if len(mine) < len(self._buffer):
            kept = [c for c in self._buffer if c.partition != tp]
            self._buffer.clear()
            self._buffer.extend(kept + mine)

    def _hold(self, tp: TopicPartition, epoch: int, error: KrafkaError) -> None:
        """A partition's fetch failed for good: wake a poll to raise `error`, and fetch the
        partition again only once it has (or a seek made it stale: `epoch` is the partition's
        when it arose), as Java's one fetch per poll, not in a loop."""
        self._errors[tp] = (epoch, error)
        self._arrived = True

    def _raise_pending(self) -> None:
        """Raise one partition's error (the oldest still current); it is fetched again after
        its backoff."""
        for tp, (epoch, error) in list(self._errors.items()):
            del self._errors[tp]
            if self._is_current(tp, epoch):
                raise error

    def _is_current(self, tp: TopicPartition, epoch: int) -> bool:
        subscription = self.subscription
        return subscription.is_assigned(tp) and subscription.state_of(tp).epoch == epoch


def _request(
    config: FetchConfig,
    session: FetchSessionRequest,
    topic_ids: dict[str, uuid.UUID],
) -> FetchRequest:
    topics: dict[str, list[FetchPartition]] = {}
    for tp, data in session.to_send.items():
        topics.setdefault(tp.topic, []).append(
            FetchPartition(
                partition=tp.partition,
                current_leader_epoch=data.current_leader_epoch,
                fetch_offset=data.fetch_offset,
                last_fetched_epoch=data.last_fetched_epoch,
                log_start_offset=data.log_start_offset,
                partition_max_bytes=data.max_bytes,
            )
        )
    forgotten: dict[str, list[int]] = {}
    for tp in (*session.to_forget, *session.to_replace):
        forgotten.setdefault(tp.topic, []).append(tp.partition)
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=int(config.fetch_max_wait * 1000),
        min_bytes=config.fetch_min_bytes,
        max_bytes=config.fetch_max_bytes,
        isolation_level=int(config.isolation_level),
        session_id=session.session_id,
        session_epoch=session.epoch,
        topics=[
            FetchRequest.FetchTopic(
                topic=t, topic_id=topic_ids.get(t, uuid.UUID(int=0)), partitions=p
            )
            for t, p in topics.items()
        ],
        forgotten_topics_data=[
            FetchRequest.ForgottenTopic(
                topic=t, topic_id=topic_ids.get(t, uuid.UUID(int=0)), partitions=p
            )
            for t, p in forgotten.items()
        ],
        rack_id=config.client_rack or "",
    )


__all__ = [
    "FetchCompleted",
    "FetchConfig",
    "Fetcher",
    "IsolationLevel",
    "RefreshMetadata",
    "ResetNeeded",
]
