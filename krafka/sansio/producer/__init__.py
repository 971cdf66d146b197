"""The producer as I/O-free state machines: accumulate, partition, batch, send, retry.

* `accumulator.RecordAccumulator` — per-partition batches, linger, buffer memory.
* `sender.Sender` — which batches go where now; what each Produce response means.
* `idempotence.IdempotenceState` — producer id, epoch, per-partition sequences.
* `transaction.TransactionManager` — producer ids, epoch bumps and transactions: a machine of
  the `krafka.sansio.actions` contract (state table in `txn_state`).
* `core.ProducerCore` — the parts above wired together.
* `wire` / `txn_wire` — building requests and reading their responses.

A driver (`krafka.io.producer`) feeds it `now`, responses and failures; the machines never
touch a socket or a clock.
"""

from __future__ import annotations

from krafka.sansio.producer.accumulator import RecordAccumulator
from krafka.sansio.producer.batch import BatchState, ProducerBatch
from krafka.sansio.producer.config import Acks, ProducerConfig
from krafka.sansio.producer.core import ProducerCore
from krafka.sansio.producer.idempotence import IdempotenceState, ProducerIdentity
from krafka.sansio.producer.metrics import ProducerMetrics, ProducerMetricsSnapshot
from krafka.sansio.producer.record import RecordHandle, RecordMetadata, estimate_size
from krafka.sansio.producer.sender import (
    Drained,
    LeaderView,
    PartitionResult,
    ProduceRequestPlan,
    Sender,
)
from krafka.sansio.producer.transaction import TransactionManager
from krafka.sansio.producer.txn_state import TRANSITIONS, TxnEvent, TxnState

__all__ = [
    "TRANSITIONS",
    "Acks",
    "BatchState",
    "Drained",
    "IdempotenceState",
    "LeaderView",
    "PartitionResult",
    "ProduceRequestPlan",
    "ProducerBatch",
    "ProducerConfig",
    "ProducerCore",
    "ProducerIdentity",
    "ProducerMetrics",
    "ProducerMetricsSnapshot",
    "RecordAccumulator",
    "RecordHandle",
    "RecordMetadata",
    "Sender",
    "TransactionManager",
    "TxnEvent",
    "TxnState",
    "estimate_size",
]
