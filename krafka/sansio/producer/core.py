"""The producer's sans-IO parts, wired together once: accumulator, sender, transactions.

The transaction machine (also an idempotent producer's producer-id keeper) watches the sender's
progress and the sender asks it which partitions may be written: a cycle that is built here, so
a driver only ever gets the finished parts.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from krafka.sansio.producer.accumulator import RecordAccumulator, SealHook
from krafka.sansio.producer.config import ProducerConfig
from krafka.sansio.producer.idempotence import IdempotenceState
from krafka.sansio.producer.metrics import ProducerMetrics
from krafka.sansio.producer.sender import Sender
from krafka.sansio.producer.transaction import TransactionManager


@dataclass(frozen=True, slots=True)
class ProducerCore:
    """`transactions` is None only for a producer that is neither idempotent nor transactional."""

    accumulator: RecordAccumulator
    sender: Sender
    metrics: ProducerMetrics
    transactions: TransactionManager | None

    @classmethod
    def build(
        cls,
        config: ProducerConfig,
        on_seal: SealHook | None = None,
        rand: Callable[[], float] = random.random,
    ) -> ProducerCore:
        """`rand` is the jitter source of every backoff (tests pass a constant)."""
        metrics = ProducerMetrics()
        accumulator = RecordAccumulator(config, on_seal=on_seal)
        idempotence = IdempotenceState() if config.idempotent else None
        sender = Sender(config, accumulator, metrics, idempotence, rand=rand)
        transactions = None
        if idempotence is not None:
            transactions = TransactionManager(config, idempotence, sender, rand=rand)
            if config.transactional_id is not None:
                sender.transaction = transactions
        return cls(accumulator, sender, metrics, transactions)
