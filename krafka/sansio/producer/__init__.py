"""The producer as one I/O-free engine: accumulate, partition, batch, send, retry, transact.

* `engine.ProducerEngine` — the producer: speaks the `krafka.sansio.actions.Machine` contract
  (Produce requests per leader, transaction requests to coordinators, delivery events,
  `RefreshMetadata`, an honest `next_deadline`) and takes the application's calls (`append`,
  `flush`, transactions, `close`). Drive it with any loop; `krafka.io.producer` is one.
* `events` — what it tells its driver besides requests (`BatchDone`, `TopicsInUse`, ...).
* Its parts, driven by it alone: `accumulator.RecordAccumulator` (per-partition batches,
  linger, buffer memory), `sender.Sender` (which batches go where, what an answer means),
  `idempotence.IdempotenceState` (producer id, epoch, sequences), `transaction.
  TransactionManager` (producer ids, epoch bumps, transactions; state table in `txn_state`),
  `wire` / `txn_wire` (requests and responses in protocol terms).
* `record` — the handle `append` returns and the `RecordMetadata` of a delivered record.

The engine never touches a socket or a clock: `now` (and the wall clock, for timestamps) are
inputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from krafka.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from krafka.sansio.producer.batch import BatchState, ProducerBatch
    from krafka.sansio.producer.config import Acks, ProducerConfig
    from krafka.sansio.producer.engine import (
        AppendBlocked,
        AppendWait,
        Due,
        MetadataView,
        ProducerEngine,
    )
    from krafka.sansio.producer.events import BatchDone, ProducerFatal, TopicsInUse
    from krafka.sansio.producer.metrics import ProducerMetrics, ProducerMetricsSnapshot
    from krafka.sansio.producer.record import RecordHandle, RecordMetadata, estimate_size
    from krafka.sansio.producer.txn_state import TRANSITIONS, TxnEvent, TxnState

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "BatchState": "krafka.sansio.producer.batch",
        "ProducerBatch": "krafka.sansio.producer.batch",
        "Acks": "krafka.sansio.producer.config",
        "ProducerConfig": "krafka.sansio.producer.config",
        "AppendBlocked": "krafka.sansio.producer.engine",
        "AppendWait": "krafka.sansio.producer.engine",
        "Due": "krafka.sansio.producer.engine",
        "MetadataView": "krafka.sansio.producer.engine",
        "ProducerEngine": "krafka.sansio.producer.engine",
        "BatchDone": "krafka.sansio.producer.events",
        "ProducerFatal": "krafka.sansio.producer.events",
        "TopicsInUse": "krafka.sansio.producer.events",
        "ProducerMetrics": "krafka.sansio.producer.metrics",
        "ProducerMetricsSnapshot": "krafka.sansio.producer.metrics",
        "RecordHandle": "krafka.sansio.producer.record",
        "RecordMetadata": "krafka.sansio.producer.record",
        "estimate_size": "krafka.sansio.producer.record",
        "TRANSITIONS": "krafka.sansio.producer.txn_state",
        "TxnEvent": "krafka.sansio.producer.txn_state",
        "TxnState": "krafka.sansio.producer.txn_state",
    },
)

__all__ = [
    "TRANSITIONS",
    "Acks",
    "AppendBlocked",
    "AppendWait",
    "BatchDone",
    "BatchState",
    "Due",
    "MetadataView",
    "ProducerBatch",
    "ProducerConfig",
    "ProducerEngine",
    "ProducerFatal",
    "ProducerMetrics",
    "ProducerMetricsSnapshot",
    "RecordHandle",
    "RecordMetadata",
    "TopicsInUse",
    "TxnEvent",
    "TxnState",
    "estimate_size",
]
