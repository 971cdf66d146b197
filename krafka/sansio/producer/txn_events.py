"""What the transaction machine tells its driver (events out of `TransactionManager`), and
what it must know of the sender (`ProduceProgress`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from krafka.errors import KrafkaError
from krafka.sansio.producer.idempotence import ProducerIdentity
from krafka.structs import TopicPartition


class ProduceProgress(Protocol):
    """What the transaction machine must know of the sender: are records still unsettled?"""

    @property
    def in_flight(self) -> int: ...

    def has_unsent(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class ProducerIdAssigned:
    """InitProducerId answered: batches may be stamped and sent (wake the sender)."""

    identity: ProducerIdentity


@dataclass(frozen=True, slots=True)
class PartitionsAdded:
    """These partitions joined the transaction: their batches may be sent (wake the sender)."""

    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class TransactionAbortable:
    """The transaction can only be aborted now; its queued records should fail with `error`."""

    error: KrafkaError


@dataclass(frozen=True, slots=True)
class ProducerFatal:
    """The producer is fenced (or otherwise unusable): fail everything with `error`."""

    error: KrafkaError
