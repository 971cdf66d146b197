"""A share consumer (KIP-932) as one sans-IO machine: its group membership (`ShareMember`), a
share session per broker, and the records and settlements it holds (`InFlightRecords`).

Inputs, each with `now`: the application's `subscribe`, `poll`, `acknowledge`, `commit`,
`unsubscribe` and `close`; the driver's metadata (`update_metadata`: topic ids and leaders; or,
built with the core's `ClusterMetadata` view, `metadata_updated(now)` after each refresh);
answers and failures of the requests it asked for. Outputs (`next_actions`): heartbeats,
ShareFetch and ShareAcknowledge requests, and events - `RecordsAvailable`,
`AcknowledgementsCommitted` (for the acknowledgement commit callback), `RefreshMetadata`,
`GroupFailed` - and the outcomes of `commit`, `unsubscribe` and `close`.

One request is in flight per broker at a time (a session's epochs are sequential). A broker is
fetched from once a poll asked for records, when the member owns partitions it leads, none of
them has records still buffered and (explicit mode) the application holds no unacknowledged
record: acquired records are locked, so none is fetched to sit unseen. Settlements ride on that
ShareFetch, or go in a ShareAcknowledge when no fetch is due or a commit asked for them. When a
session is lost, the records acquired through it went back to the group: buffered ones are
dropped, and settling delivered ones fails here rather than in the next session.

Closing settles (explicit: the acknowledgements made; both modes: RELEASE for the rest), sends
each open session's final ShareAcknowledge (epoch -1), then leaves the group.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka.errors import (
    IllegalStateError,
    InvalidRecordStateError,
    InvalidStateError,
    KrafkaError,
    error_for_code,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ShareAcknowledgeResponse, ShareFetchResponse
from krafka.sansio.actions import Broker, Completed, RefreshMetadata, SendRequest, next_op
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.codes import STALE_METADATA_CODES, code_name
from krafka.sansio.metadata import ClusterMetadata
from krafka.sansio.share.acknowledgements import AcknowledgeType
from krafka.sansio.share.commits import AcknowledgementsCommitted, Commits
from krafka.sansio.share.inflight import AcknowledgementMode, InFlightRecords
from krafka.sansio.share.member import ShareMember
from krafka.sansio.share.metrics import ShareConsumerMetrics
from krafka.sansio.share.record import Deserializer, ShareRecord, decode_share_data
from krafka.sansio.share.session import SESSION_RESET_CODES, ShareSession
from krafka.sansio.share.wire import (
    RENEW_MIN_VERSION,
    FetchLimits,
    acknowledge_request,
    fetch_request,
    has_renew,
    partitions_of,
)
from krafka.sansio.transitions import transition
from krafka.structs import TopicPartition

Acks = dict[int, int]
_FATAL_FETCH_CODES: Final = frozenset(
    {
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ErrorCode.UNSUPPORTED_VERSION,
        ErrorCode.INVALID_REQUEST,
    }
)


@dataclass(frozen=True, slots=True)
class ShareFetchConfig:
    """What the share consumer machine needs to decide."""

    acknowledgement_mode: AcknowledgementMode = AcknowledgementMode.IMPLICIT
    max_poll_records: int = 500
    fetch_max_wait: float = 0.5
    fetch_min_bytes: int = 1
    fetch_max_bytes: int = 52_428_800
    check_crcs: bool = True
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED
    key_deserializer: Deserializer | None = None
    value_deserializer: Deserializer | None = None
    retry_backoff: float = 0.1
    retry_backoff_max: float = 1.0

    def limits(self) -> FetchLimits:
        return FetchLimits(
            max_wait_ms=int(self.fetch_max_wait * 1000),
            min_bytes=self.fetch_min_bytes,
            max_bytes=self.fetch_max_bytes,
            max_records=self.max_poll_records,
            batch_size=self.max_poll_records,
        )


@dataclass(frozen=True, slots=True)
class RecordsAvailable:
    """Notice: a poll would return records now."""


_log = logging.getLogger("krafka.share")


class Phase(Enum):
    ACTIVE = "active"
    FLUSHING = "flushing"  # closing: final settlements on their way
    LEAVING = "leaving"  # closing: the leave heartbeat
    CLOSED = "closed"


_PHASES: Final = {
    (Phase.ACTIVE, Phase.FLUSHING),
    (Phase.FLUSHING, Phase.LEAVING),
    (Phase.LEAVING, Phase.CLOSED),
    (Phase.ACTIVE, Phase.CLOSED),
}


@dataclass(slots=True, eq=False)
class _Node:
    node_id: int
    session: ShareSession = field(default_factory=ShareSession)
    in_flight: SendRequest[Any] | None = None
    carried: dict[TopicPartition, Acks] = field(default_factory=dict)
    closing: bool = False
    backoff: Backoff | None = None
    retry_at: float = 0.0  # after a failed request: nothing is sent here before this
    sent_at: float = 0.0  # when the request in flight went out


class ShareConsumerMachine:
    """Everything a share consumer of `group_id` decides."""

    def __init__(
        self,
        group_id: str,
        config: ShareFetchConfig,
        member: ShareMember,
        metadata: ClusterMetadata | None = None,
    ) -> None:
        self.group_id = group_id
        self._metadata = metadata
        self.config = config
        self.member = member
        self.records = InFlightRecords(config.acknowledgement_mode)
        self.phase = Phase.ACTIVE
        self.acquisition_lock_timeout: float | None = None
        self.metrics = ShareConsumerMetrics()
        self._policy = BackoffPolicy(
            initial=config.retry_backoff, maximum=config.retry_backoff_max, max_retries=None
        )
        self._limits = config.limits()
        self._ids: dict[str, uuid.UUID] = {}
        self._names: dict[uuid.UUID, str] = {}
        self._leaders: dict[TopicPartition, int] = {}
        self._nodes: dict[int, _Node] = {}
        self._commits = Commits()
        self._events: list[Any] = []
        self._errors: list[KrafkaError] = []
        self._close_ops: list[int] = []
        self._leave_ops: set[int] = set()
        self._unsubscribe_ops: dict[int, int] = {}
        self._metadata_asked = False
        self._fetch_wanted = False

    # -- the application's calls ----------------------------------------------------------------

    def subscribe(self, topics: Iterable[str], now: float) -> None:
        self._require_active()
        self.member.subscribe(topics, now)

    def poll(self, now: float, max_records: int | None = None) -> list[ShareRecord]:
        """Settle the last poll's records by the mode's rule, then hand out buffered ones.
        Polling without a subscription is an `IllegalStateError` (as Java's)."""
        self._require_active()
        if not self.member.subscription():
            raise IllegalStateError("Consumer is not subscribed to any topics.")
        if self._errors and not self.records.has_records:
            raise self._errors.pop(0)
        self.records.before_poll()
        self.member.poll(now)
        self._fetch_wanted = True
        records = self.records.take(max_records or self.config.max_poll_records)
        self.metrics.polled(now, len(records))
        return records

    def acknowledge(self, tp: TopicPartition, offset: int, kind: AcknowledgeType) -> None:
        self._require_active()
        self.records.acknowledge(tp, offset, AcknowledgeType.parse(kind))

    def commit(self, now: float) -> int:
        """Send every settlement made so far at once; completes with {partition: error or
        None} (each result is also an `AcknowledgementsCommitted` event)."""
        self._require_active()
        if self.config.acknowledgement_mode is AcknowledgementMode.IMPLICIT:
            self.records.settle_delivered(AcknowledgeType.ACCEPT)
        self._report_stale()
        op = next_op()
        waiting = self.records.with_pending() | self._carried_partitions()
        self._commits.start(op, waiting, self._events)
        return op

    def unsubscribe(self, now: float) -> int:
        """Release what is held, settle it, and leave the group (the consumer stays open)."""
        self._require_active()
        self.records.release_all()
        op = next_op()
        self._unsubscribe_ops[self.member.leave(now, close=False)] = op
        return op

    def close(self, now: float) -> int:
        op = next_op()
        self._close_ops.append(op)
        if self.phase is Phase.ACTIVE:
            self.records.release_all()
            self._move(Phase.FLUSHING)
        elif self.phase is Phase.CLOSED:
            self._events.append(Completed(op))
            self._close_ops.remove(op)
        return op

    def update_metadata(
        self, ids: Mapping[str, uuid.UUID], leaders: Mapping[TopicPartition, int], now: float
    ) -> None:
        """The driver's metadata: topic ids (Metadata v10+) and partition leaders."""
        self._ids = dict(ids)
        self._names = {i: n for n, i in ids.items()}
        self._leaders = dict(leaders)
        self._metadata_asked = False
        self.member.update_topic_ids(ids, now)

    def metadata_updated(self, now: float) -> None:
        """A metadata round ended (`ClientCore` calls this): take the topic ids and leaders of
        the subscribed and assigned topics from the view the machine was built with; a topic it
        lacks (never asked for, or dropped as idle) is asked for again."""
        metadata = self._metadata
        topics = self._topics()
        if metadata is None or not topics:
            return
        ids = {t: i for t in topics if (i := metadata.topic_id(t)) is not None}
        leaders: dict[TopicPartition, int] = {}
        for topic in topics:
            for partition in metadata.partitions_for(topic):
                leader = metadata.leader(topic, partition)
                if leader is not None:
                    leaders[TopicPartition(topic, partition)] = leader
        self.update_metadata(ids, leaders, now)
        if any(topic not in metadata.topics for topic in topics):
            self._need_metadata()

    def _topics(self) -> frozenset[str]:
        """The topics whose metadata the machine needs: subscribed and assigned."""
        assigned = {tp.topic for tp in self.member.assignment()}
        return frozenset(self.member.subscription()) | assigned

    # -- the contract ---------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        actions: list[Any] = []
        self._report_stale()
        if self.phase is not Phase.CLOSED:
            self._member_actions(now, actions)
        if self.phase is not Phase.LEAVING and self.phase is not Phase.CLOSED:
            self.records.release_partitions(self._unowned_buffered())
            if any(tp not in self._leaders for tp in self.member.assignment()):
                self._need_metadata()
            for node_id in sorted(self._wanted_nodes()):
                request = self._next_request(node_id, now)
                if request is not None:
                    actions.append(request)
        if self.phase is Phase.FLUSHING and not self._flushing():
            self._move(Phase.LEAVING)
            self._leave_ops.add(self.member.leave(now, close=True))
            self._member_actions(now, actions)
        actions[:0], self._events = self._events, []
        return actions

    def next_deadline(self) -> float | None:
        times = [self.member.heartbeat_deadline()]
        for node_id in self._wanted_nodes():
            node = self._nodes.get(node_id)
            if node is not None and node.in_flight is None and node.retry_at > 0:
                times.append(node.retry_at)
        return min((t for t in times if t is not None), default=None)

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        node = self._node_of(sent)
        if node is None:
            self.member.heartbeat_response(sent, response, now)
            return
        node.in_flight = None
        if isinstance(response, ShareFetchResponse):
            throttle = int(response.throttle_time_ms or 0) / 1000
            self.metrics.fetch_answered(now - node.sent_at, throttle, now)
        else:
            self.metrics.acknowledge_answered(now - node.sent_at)
        code = int(response.error_code)
        was_open = node.session.is_open
        if node.closing:
            node.session.reset()
        else:
            node.session.answered(code)
        node.closing = False
        if was_open and not node.session.is_open:
            self._session_lost(node)
        if code != ErrorCode.NONE:
            error = error_for_code(code, _message(response, sent))
            self._request_failed(node, error, now, session_reset=code in SESSION_RESET_CODES)
            if code in STALE_METADATA_CODES:
                self._need_metadata()
            elif code in _FATAL_FETCH_CODES:
                self._errors.append(error)
            return
        if node.backoff is not None:
            node.backoff.succeeded()
        if isinstance(response, ShareFetchResponse):
            self._fetched(node, response)
        else:
            assert isinstance(response, ShareAcknowledgeResponse)
            self._acknowledged(node, response)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        node = self._node_of(sent)
        if node is None:
            self.member.heartbeat_failure(sent, error, now)
            return
        node.in_flight = None
        node.closing = False
        node.session.reset()
        self._session_lost(node)
        self._request_failed(node, error, now)
        self._need_metadata()

    # -- requests -------------------------------------------------------------------------------

    def _next_request(self, node_id: int, now: float) -> SendRequest[Any] | None:
        node = self._nodes.setdefault(node_id, _Node(node_id))
        if node.in_flight is not None or node.retry_at > now:
            return None
        node.retry_at = 0.0
        node.sent_at = now
        acked = {tp for tp in self.records.with_pending() if self._leaders.get(tp) == node_id}
        if self.phase is Phase.FLUSHING:
            if not node.session.is_open:
                self._drop_unsendable(acked)
                return None
            return self._acknowledge(node_id, node, acked, closing=True)
        if acked and not node.session.is_open:
            acked = self._drop_unsendable(acked)
        owned = self._owned_here(node_id)
        urgent = self._commits.wants(acked)
        fetch = (
            self._fetch_wanted
            and not self.records.holds_unacknowledged
            and bool(owned)
            and not any(self.records.has_buffered(tp) for tp in owned)
            and self.member.state.in_group
            and not self.member.state.leaving
        )
        renew = has_renew({tp: self.records.of(tp).pending for tp in acked})
        if acked and (urgent or renew or not fetch):
            return self._acknowledge(node_id, node, acked, closing=False)
        if fetch:
            return self._fetch(node_id, node, owned, acked)
        return None

    def _fetch(
        self, node_id: int, node: _Node, owned: set[TopicPartition], acked: set[TopicPartition]
    ) -> SendRequest[Any] | None:
        wanted = {self._id_partition(tp) for tp in owned | acked}
        if None in wanted:
            self._need_metadata()
            return None
        session = node.session.next_request({w for w in wanted if w is not None})
        node.carried = self.records.take_pending(acked)
        self.metrics.sent(kind for acks in node.carried.values() for kind in acks.values())
        carried = self._by_id(node.carried)
        request = fetch_request(
            self.group_id, self.member.member_id, session, carried, self._limits
        )
        timeout = self.config.fetch_max_wait + 30.0
        node.in_flight = SendRequest(Broker(node_id), request, timeout=timeout, min_version=1)
        return node.in_flight

    def _acknowledge(
        self, node_id: int, node: _Node, acked: set[TopicPartition], *, closing: bool
    ) -> SendRequest[Any] | None:
        if not acked and not closing:
            return None
        node.carried = self.records.take_pending(acked)
        self.metrics.sent(kind for acks in node.carried.values() for kind in acks.values())
        epoch = node.session.closing_request().epoch if closing else node.session.epoch
        node.closing = closing
        request = acknowledge_request(
            self.group_id, self.member.member_id, epoch, self._by_id(node.carried)
        )
        minimum = RENEW_MIN_VERSION if has_renew(node.carried) else 1
        node.in_flight = SendRequest(Broker(node_id), request, min_version=minimum)
        return node.in_flight

    def _drop_unsendable(self, acked: set[TopicPartition]) -> set[TopicPartition]:
        """Settlements for a broker with no open session cannot be sent (ShareAcknowledge cannot
        open one, and the records acquired in a lost session went back to the group with it):
        they fail. Returns what is left to send (nothing)."""
        carried = self.records.take_pending(acked)
        error = InvalidRecordStateError(
            "the share session with the partition's leader was lost; the records it had "
            "acquired were released"
        )
        self._finish_acks(carried, {tp: error for tp in carried})
        return set()

    # -- answers --------------------------------------------------------------------------------

    def _fetched(self, node: _Node, response: ShareFetchResponse) -> None:
        if response.acquisition_lock_timeout_ms and response.acquisition_lock_timeout_ms > 0:
            self.acquisition_lock_timeout = response.acquisition_lock_timeout_ms / 1000.0
        results: dict[TopicPartition, KrafkaError | None] = {}
        owned = self.member.assignment()
        arrived = False
        for tp, part in partitions_of(response, self._names.get):
            code = int(part.error_code)
            if code != ErrorCode.NONE:
                self._partition_error(tp, code, part.error_message)
            ack_code = int(part.acknowledge_error_code)
            if tp in node.carried:
                results[tp] = (
                    error_for_code(ack_code, part.acknowledge_error_message) if ack_code else None
                )
            acquired = [
                (a.first_offset, a.last_offset, a.delivery_count)
                for a in part.acquired_records or ()
            ]
            if not acquired:
                continue
            decoded = decode_share_data(
                tp, part.records, acquired,
                check_crc=self.config.check_crcs,
                max_decompressed_size=self.config.max_decompressed_size,
                key_deserializer=self.config.key_deserializer,
                value_deserializer=self.config.value_deserializer,
            )  # fmt: skip
            self._errors.extend(decoded.errors)
            self.metrics.fetched(
                len(decoded.records),
                len(part.records or b""),
                sum(record.delivery_count > 1 for record in decoded.records),
            )
            self.records.add(tp, decoded.records, decoded.settled)
            if tp not in owned or self.phase is not Phase.ACTIVE:
                self.records.release_partitions([tp])
            else:
                arrived = arrived or bool(decoded.records)
        self._finish_acks(node.carried, results)
        node.carried = {}
        if arrived or self._errors:
            self._fetch_wanted = False
            self._events.append(RecordsAvailable())

    def _acknowledged(self, node: _Node, response: ShareAcknowledgeResponse) -> None:
        results: dict[TopicPartition, KrafkaError | None] = {}
        for tp, part in partitions_of(response, self._names.get):
            code = int(part.error_code)
            results[tp] = error_for_code(code, part.error_message) if code else None
            if code in STALE_METADATA_CODES:
                self._need_metadata()
        self._finish_acks(node.carried, results)
        node.carried = {}

    def _request_failed(
        self, node: _Node, error: KrafkaError, now: float, *, session_reset: bool = False
    ) -> None:
        """The request's settlements failed; the next request to the broker backs off (a lost
        session is reopened at once)."""
        carried, node.carried = node.carried, {}
        self._finish_acks(carried, {tp: error for tp in carried})
        if node.backoff is None:
            node.backoff = Backoff(self._policy)
        if session_reset:
            node.backoff.succeeded()
        else:
            node.retry_at = node.backoff.failed(now)

    def _finish_acks(
        self,
        carried: Mapping[TopicPartition, Acks],
        results: Mapping[TopicPartition, KrafkaError | None],
        *,
        sent: bool = True,
    ) -> None:
        for tp, acks in carried.items():
            if sent:
                self.records.sent(tp)
            error = results.get(tp)
            if error is not None:
                self.metrics.refused(len(acks))
            self._commits.result(
                tp, error, pending=tp in self.records.with_pending(), events=self._events
            )
            self._events.append(AcknowledgementsCommitted({tp: frozenset(acks)}, error))

    def _session_lost(self, node: _Node) -> None:
        self.records.session_lost(tp for tp, n in self._leaders.items() if n == node.node_id)

    def _report_stale(self) -> None:
        """Settlements of records whose session was lost fail here (see `session_lost`)."""
        failed = self.records.take_failed()
        if failed:
            error = InvalidRecordStateError(
                "the share session the records were acquired through was lost; they went back "
                "to the group"
            )
            self._finish_acks(failed, {tp: error for tp in failed}, sent=False)

    def _partition_error(self, tp: TopicPartition, code: int, message: str | None) -> None:
        if code in STALE_METADATA_CODES:
            self._need_metadata()
        else:
            detail = f": {message}" if message else ""
            self._errors.append(
                error_for_code(code, f"ShareFetch {tp.topic}-{tp.partition}{detail}")
            )

    # -- helpers --------------------------------------------------------------------------------

    def _member_actions(self, now: float, actions: list[Any]) -> None:
        for action in self.member.actions(now):
            if isinstance(action, Completed) and action.op in self._leave_ops:
                self._leave_ops.discard(action.op)
                self._move(Phase.CLOSED)
                self._events.extend(Completed(op) for op in self._close_ops)
                self._close_ops.clear()
            elif isinstance(action, Completed) and action.op in self._unsubscribe_ops:
                self._events.append(Completed(self._unsubscribe_ops.pop(action.op)))
            elif isinstance(action, RefreshMetadata):
                self._need_metadata()
            else:
                actions.append(action)

    def _wanted_nodes(self) -> set[int]:
        nodes = {self._leaders[tp] for tp in self.member.assignment() if tp in self._leaders}
        nodes |= {self._leaders[tp] for tp in self.records.with_pending() if tp in self._leaders}
        nodes |= {n for n, node in self._nodes.items() if node.in_flight is not None}
        if self.phase is Phase.FLUSHING:
            nodes |= {n for n, node in self._nodes.items() if node.session.is_open}
        return nodes

    def _flushing(self) -> bool:
        """Closing still has settlements or session closes to send or wait for."""
        if any(node.in_flight is not None for node in self._nodes.values()):
            return True
        if any(node.session.is_open for node in self._nodes.values()):
            return True
        return any(tp in self._leaders for tp in self.records.with_pending())

    def _owned_here(self, node_id: int) -> set[TopicPartition]:
        return {tp for tp in self.member.assignment() if self._leaders.get(tp) == node_id}

    def _unowned_buffered(self) -> list[TopicPartition]:
        owned = self.member.assignment()
        return [tp for tp in self.records.partitions if tp not in owned]

    def _carried_partitions(self) -> set[TopicPartition]:
        return {tp for node in self._nodes.values() for tp in node.carried}

    def _by_id(self, acks: Mapping[TopicPartition, Acks]) -> dict[tuple[uuid.UUID, int], Acks]:
        out: dict[tuple[uuid.UUID, int], Acks] = {}
        for tp, offsets in acks.items():
            key = self._id_partition(tp)
            if key is not None:
                out[key] = offsets
        return out

    def _id_partition(self, tp: TopicPartition) -> tuple[uuid.UUID, int] | None:
        topic_id = self._ids.get(tp.topic)
        return None if topic_id is None else (topic_id, tp.partition)

    def _node_of(self, sent: SendRequest[Any]) -> _Node | None:
        for node in self._nodes.values():
            if node.in_flight is sent:
                return node
        return None

    def _need_metadata(self) -> None:
        if not self._metadata_asked:
            self._metadata_asked = True
            topics = self._topics()
            self._events.append(RefreshMetadata(topics if self._metadata is not None else None))

    def _move(self, new: Phase) -> None:
        if (self.phase, new) not in _PHASES:
            raise AssertionError(f"share consumer: no transition {self.phase} -> {new}")
        transition(_log, "share consumer", self.phase, new)
        self.phase = new

    def _require_active(self) -> None:
        if self.phase is not Phase.ACTIVE:
            raise InvalidStateError("the share consumer is closed")


def _message(response: Any, sent: SendRequest[Any]) -> str:
    name = type(sent.request).__name__.removesuffix("Request")
    code = int(response.error_code)
    detail = f": {response.error_message}" if response.error_message else ""
    return f"{name} failed with {code_name(code)}{detail}"


__all__ = ["Phase", "RecordsAvailable", "ShareConsumerMachine", "ShareFetchConfig"]
