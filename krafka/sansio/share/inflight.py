"""The records a share consumer holds and the settlements it owes, partition by partition.

Every acquired offset is in exactly one place until the broker has its settlement: buffered
(fetched, not yet handed out), delivered (handed out by the last poll, not yet acknowledged),
pending (acknowledged, to be sent) or sending (in a request not yet answered). Java's rules
for the two acknowledgement modes are applied here: implicit mode accepts everything
delivered at the next poll or commit; explicit mode refuses a poll while a record of the last
one is unacknowledged, and only lets records of the last poll be acknowledged.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from krafka.errors import IllegalStateError
from krafka.sansio.share.acknowledgements import AcknowledgeType
from krafka.sansio.share.record import ShareRecord
from krafka.structs import TopicPartition

Acks = dict[int, int]


class AcknowledgementMode(Enum):
    """Java's `share.acknowledgement.mode`."""

    IMPLICIT = "implicit"
    EXPLICIT = "explicit"

    @classmethod
    def parse(cls, value: AcknowledgementMode | str) -> AcknowledgementMode:
        if isinstance(value, AcknowledgementMode):
            return value
        try:
            return cls(value.lower())
        except ValueError:
            raise ValueError(
                f'acknowledgement_mode must be "implicit" or "explicit", not {value!r}'
            ) from None


@dataclass(slots=True)
class PartitionRecords:
    """One partition's share of the consumer's records and settlements."""

    buffered: deque[ShareRecord] = field(default_factory=deque)
    delivered: dict[int, ShareRecord] = field(default_factory=dict)
    pending: Acks = field(default_factory=dict)
    sending: int = 0  # requests carrying this partition's settlements, not yet answered
    #: delivered records whose acquisition went with a lost share session: settling them
    #: fails here (sent into a new session it could settle a later acquisition of the offset)
    stale: set[int] = field(default_factory=set)
    failed: Acks = field(default_factory=dict)  # settlements of stale records, to report

    @property
    def idle(self) -> bool:
        return not (self.buffered or self.delivered or self.pending or self.sending or self.failed)

    def settle(self, offset: int, kind: int) -> None:
        if offset in self.stale:
            self.stale.discard(offset)
            self.failed[offset] = kind
        else:
            self.pending[offset] = kind


class InFlightRecords:
    """Every partition's records and settlements, and the mode's rules."""

    def __init__(self, mode: AcknowledgementMode) -> None:
        self.mode = mode
        self.partitions: dict[TopicPartition, PartitionRecords] = {}

    def of(self, tp: TopicPartition) -> PartitionRecords:
        state = self.partitions.get(tp)
        if state is None:
            state = self.partitions[tp] = PartitionRecords()
        return state

    # -- the application's side ---------------------------------------------------------------

    def before_poll(self) -> None:
        """Implicit: accept the last poll's records. Explicit: all must be acknowledged."""
        if self.mode is AcknowledgementMode.IMPLICIT:
            self.settle_delivered(AcknowledgeType.ACCEPT)
            return
        for tp, state in self.partitions.items():
            if state.delivered:
                offset = min(state.delivered)
                raise IllegalStateError(
                    "explicit acknowledgement mode: every record of the last poll must be "
                    f"acknowledged before the next poll ({tp.topic}-{tp.partition} offset "
                    f"{offset} is not)"
                )

    def take(self, max_records: int) -> list[ShareRecord]:
        """Up to `max_records` buffered records, now delivered."""
        out: list[ShareRecord] = []
        for state in self.partitions.values():
            while state.buffered and len(out) < max_records:
                record = state.buffered.popleft()
                state.delivered[record.offset] = record
                out.append(record)
            if len(out) >= max_records:
                break
        return out

    def acknowledge(self, tp: TopicPartition, offset: int, kind: AcknowledgeType) -> None:
        if self.mode is AcknowledgementMode.IMPLICIT:
            raise IllegalStateError(
                'acknowledge() needs acknowledgement_mode="explicit" (implicit mode accepts '
                "every record at the next poll or commit)"
            )
        state = self.partitions.get(tp)
        record = state.delivered.pop(offset, None) if state is not None else None
        if state is None or record is None:
            raise IllegalStateError(
                f"{tp.topic}-{tp.partition} offset {offset} was not delivered by the last poll "
                "or is already acknowledged"
            )
        state.settle(offset, int(kind))
        if kind is AcknowledgeType.RENEW and offset in state.pending:
            state.buffered.appendleft(record)  # still the application's: handed out again

    def settle_delivered(self, kind: AcknowledgeType) -> None:
        for state in self.partitions.values():
            for offset in state.delivered:
                state.settle(offset, int(kind))
            state.delivered.clear()

    def release_all(self) -> None:
        """Closing or giving up: everything not acknowledged goes back to the group."""
        self.settle_delivered(AcknowledgeType.RELEASE)
        for state in self.partitions.values():
            for record in state.buffered:
                state.pending[record.offset] = int(AcknowledgeType.RELEASE)
            state.buffered.clear()

    def release_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        """Partitions no longer assigned: their buffered records go back (delivered ones are
        still the application's to acknowledge)."""
        for tp in partitions:
            state = self.partitions.get(tp)
            if state is None:
                continue
            for record in state.buffered:
                state.pending[record.offset] = int(AcknowledgeType.RELEASE)
            state.buffered.clear()

    # -- the network's side ---------------------------------------------------------------------

    def session_lost(self, partitions: Iterable[TopicPartition]) -> None:
        """The share session these partitions were acquired through is gone, and with it their
        acquisitions: buffered records are dropped, delivered ones become stale."""
        for tp in partitions:
            state = self.partitions.get(tp)
            if state is not None:
                state.buffered.clear()
                state.stale.update(state.delivered)

    def take_failed(self) -> dict[TopicPartition, Acks]:
        """Settlements of stale records (they fail without being sent)."""
        out: dict[TopicPartition, Acks] = {}
        for tp, state in list(self.partitions.items()):
            if state.failed:
                out[tp], state.failed = state.failed, {}
                if state.idle:
                    del self.partitions[tp]
        return out

    def add(
        self, tp: TopicPartition, records: list[ShareRecord], settled: Mapping[int, int]
    ) -> None:
        state = self.of(tp)
        state.buffered.extend(records)
        state.pending.update(settled)

    def take_pending(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, Acks]:
        """The pending settlements of `partitions`, now sending."""
        out: dict[TopicPartition, Acks] = {}
        for tp in partitions:
            state = self.partitions.get(tp)
            if state is not None and state.pending:
                out[tp], state.pending = state.pending, {}
                state.sending += 1
        return out

    def sent(self, tp: TopicPartition) -> None:
        """A request carrying `tp`'s settlements was answered (or failed)."""
        state = self.partitions.get(tp)
        if state is not None:
            state.sending = max(0, state.sending - 1)
            if state.idle:
                del self.partitions[tp]

    def with_pending(self) -> set[TopicPartition]:
        return {tp for tp, state in self.partitions.items() if state.pending}

    def has_buffered(self, tp: TopicPartition) -> bool:
        state = self.partitions.get(tp)
        return state is not None and bool(state.buffered)

    @property
    def unsettled(self) -> bool:
        """Settlements are still owed or travelling."""
        return any(state.pending or state.sending for state in self.partitions.values())

    @property
    def holds_unacknowledged(self) -> bool:
        """Explicit mode: the application still holds records of the last poll (no more are
        fetched meanwhile: they would only sit locked)."""
        if self.mode is AcknowledgementMode.IMPLICIT:
            return False
        return any(state.delivered for state in self.partitions.values())

    @property
    def has_records(self) -> bool:
        return any(state.buffered for state in self.partitions.values())


__all__ = ["AcknowledgementMode", "InFlightRecords", "PartitionRecords"]
