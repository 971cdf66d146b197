"""What the `ProducerEngine` tells its driver besides requests (all values, no callbacks).

* `BatchDone(batch)` — a batch was delivered or failed (its records' handles are `done`), or was
  split into halves after MESSAGE_TOO_LARGE (its records moved on): wake whoever waits for
  them, count it as progress (a flush, a full buffer).
* `TopicsInUse(topics)` — topics written to lately: keep their metadata fresh (at most one a
  second; the metadata forgets topics nobody uses).
* `RefreshMetadata(topics)` (`krafka.sansio.actions`) — no leader is known for partitions of
  these topics, or a broker said the metadata is stale: refresh it, then call the engine's
  `metadata_updated(now)` (partitions waiting for a leader wait for that input, not for time).
* `CoordinatorMoved(key, key_type)` (`krafka.sansio.actions`) — an answer only the engine reads
  said the transaction coordinator moved: look it up again.
* `ProducerFatal(error)` — the producer can no longer send (fenced): raise `error` from the
  application's next call.
* `ProducerIdAssigned`, `PartitionsAdded`, `TransactionAbortable(error)` — news of the
  transaction machine (the engine acts on them itself: sends resume, queued records of an
  abortable transaction fail).
* `Completed(op)` / `Failed(op, error)` (`krafka.sansio.actions`) — a flush or a transactional
  call finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from krafka.sansio.actions import Completed, CoordinatorMoved, Failed, RefreshMetadata
from krafka.sansio.producer.txn_events import (
    PartitionsAdded,
    ProducerFatal,
    ProducerIdAssigned,
    TransactionAbortable,
)

if TYPE_CHECKING:
    from krafka.sansio.producer.batch import ProducerBatch


@dataclass(frozen=True, slots=True)
class BatchDone:
    """`batch` finished: delivered, failed, or split (see the module doc)."""

    batch: ProducerBatch


@dataclass(frozen=True, slots=True)
class TopicsInUse:
    """Topics the engine wrote to since it last said so."""

    topics: frozenset[str]


ProducerEvent = (
    BatchDone
    | TopicsInUse
    | RefreshMetadata
    | CoordinatorMoved
    | ProducerFatal
    | ProducerIdAssigned
    | PartitionsAdded
    | TransactionAbortable
    | Completed
    | Failed
)

__all__ = [
    "BatchDone",
    "CoordinatorMoved",
    "PartitionsAdded",
    "ProducerEvent",
    "ProducerFatal",
    "ProducerIdAssigned",
    "TopicsInUse",
    "TransactionAbortable",
]
