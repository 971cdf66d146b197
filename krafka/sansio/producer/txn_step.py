"""One coordinator request of the transaction machine: what it is, and its retry state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from krafka.sansio.actions import SendRequest
from krafka.sansio.backoff import Backoff
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition


class StepKind(Enum):
    INIT_PRODUCER_ID = "InitProducerId"
    ADD_PARTITIONS = "AddPartitionsToTxn"
    ADD_OFFSETS = "AddOffsetsToTxn"
    TXN_OFFSET_COMMIT = "TxnOffsetCommit"
    END_TXN = "EndTxn"


@dataclass(slots=True, eq=False)
class TxnStep:
    """One coordinator request to make (and retry) before the next one."""

    kind: StepKind
    op: int | None = None
    partitions: tuple[TopicPartition, ...] = ()
    offsets: Mapping[TopicPartition, OffsetAndMetadata] = field(default_factory=dict)
    group: ConsumerGroupMetadata | None = None
    committed: bool = False
    fresh_id: bool = False
    sent: SendRequest[Any] | None = None
    backoff: Backoff | None = None

    @property
    def what(self) -> str:
        if self.kind is StepKind.END_TXN:
            return f"EndTxn({'commit' if self.committed else 'abort'})"
        return str(self.kind.value)
