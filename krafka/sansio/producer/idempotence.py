"""Idempotent-producer bookkeeping: the producer id and epoch, and per-partition sequences.

Each batch gets a base sequence when it is first sent and keeps it (and its bytes) on every
retry, so the broker drops duplicates. When the broker no longer knows the producer
(UNKNOWN_PRODUCER_ID), sequences broke (OUT_OF_ORDER_SEQUENCE_NUMBER with no earlier batch
to blame) or a sent batch failed (expired, refused: the broker may or may not hold its
sequences) the epoch is bumped (KIP-360): once nothing is in flight the driver sends
InitProducerId with the current id and epoch, and sequences restart at 0 for every partition.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.transitions import transition

_MAX_SEQUENCE = 2**31 - 1


_log = logging.getLogger("krafka.producer")


@dataclass(frozen=True, slots=True)
class ProducerIdentity:
    """What InitProducerId returned."""

    producer_id: int
    producer_epoch: int


class IdempotenceState:
    """Producer id, epoch and the next sequence of every partition."""

    __slots__ = ("_next", "bump_needed", "identity")

    def __init__(self) -> None:
        self.identity: ProducerIdentity | None = None
        self.bump_needed = False
        self._next: dict[tuple[str, int], int] = {}

    @property
    def ready(self) -> bool:
        """True when batches may be stamped and sent."""
        return self.identity is not None and not self.bump_needed

    def set_identity(self, producer_id: int, producer_epoch: int) -> None:
        """InitProducerId answered: a new id or epoch, so every sequence restarts at 0."""
        new = ProducerIdentity(producer_id, producer_epoch)
        transition(_log, "idempotence", _described(self.identity), _described(new))
        self.identity = new
        self.bump_needed = False
        self._next.clear()

    def request_bump(self) -> None:
        if not self.bump_needed:
            transition(_log, "idempotence", _described(self.identity), "EPOCH_BUMP_NEEDED")
        self.bump_needed = True

    def stamped_now(self, batch: ProducerBatch) -> bool:
        """`batch` carries a sequence of the current producer id and epoch."""
        identity = self.identity
        return (
            identity is not None
            and batch.base_sequence >= 0
            and batch.producer_id == identity.producer_id
            and batch.producer_epoch == identity.producer_epoch
        )

    def stamp(self, batch: ProducerBatch) -> None:
        """Give `batch` the producer id, epoch and the partition's next base sequence."""
        identity = self.identity
        if identity is None:
            raise RuntimeError("no producer id yet")
        tp = (batch.topic, batch.partition)
        seq = self._next.get(tp, 0)
        batch.producer_id = identity.producer_id
        batch.producer_epoch = identity.producer_epoch
        batch.base_sequence = seq
        batch.payload = None
        self._next[tp] = (seq + batch.count) & _MAX_SEQUENCE


def _described(identity: ProducerIdentity | None) -> str:
    if identity is None:
        return "NO_PRODUCER_ID"
    return f"producer_id={identity.producer_id} epoch={identity.producer_epoch}"
