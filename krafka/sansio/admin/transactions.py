"""Producers and transactions: the active producers of partitions (DescribeProducers, at each
partition's leader), the transactions of every coordinator (ListTransactions), and given
transactional ids (DescribeTransactions, batched per coordinator)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from krafka.protocol.messages import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from krafka.protocol.messages.describe_producers_request import TopicRequest
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import (
    COORDINATOR_MOVED,
    LEADER_MOVED,
    NOTHING_MOVES,
    Done,
    ItemResult,
    for_code,
)
from krafka.sansio.admin.routing import Target
from krafka.structs import TopicPartition


class TransactionState(Enum):
    UNKNOWN = "Unknown"
    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"

    @classmethod
    def parse(cls, text: str | TransactionState) -> TransactionState:
        if isinstance(text, TransactionState):
            return text
        folded = text.replace("_", "").lower()
        return next((s for s in cls if s.value.lower() == folded), cls.UNKNOWN)


@dataclass(frozen=True, slots=True)
class ProducerState:
    """An active producer of a partition, as its leader knows it."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_transaction_start_offset: int | None


@dataclass(frozen=True, slots=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: TransactionState


@dataclass(frozen=True, slots=True)
class TransactionDescription:
    """A transactional id's state at its coordinator; `timeout` in seconds, `start_time` in
    ms since the epoch (None when no transaction is open)."""

    transactional_id: str
    coordinator_id: int | None
    state: TransactionState
    producer_id: int
    producer_epoch: int
    timeout: float
    start_time: int | None
    partitions: frozenset[TopicPartition]


class DescribeProducers(Handler[TopicPartition]):
    what = "describe producers"

    def describe(self, key: TopicPartition) -> str:
        return f"partition {key}"

    def requests(
        self, target: Target, keys: Sequence[TopicPartition]
    ) -> list[Call[TopicPartition]]:
        topics: dict[str, list[int]] = {}
        for tp in keys:
            topics.setdefault(tp.topic, []).append(tp.partition)
        request = DescribeProducersRequest(
            topics=[TopicRequest(name=t, partition_indexes=p) for t, p in topics.items()]
        )
        return [Call(request, tuple(keys))]

    def on_response(
        self, call: Call[TopicPartition], target: Target, response: Any
    ) -> Mapping[TopicPartition, ItemResult]:
        assert isinstance(response, DescribeProducersResponse)
        out: dict[TopicPartition, ItemResult] = {}
        for t in response.topics:
            for p in t.partitions:
                tp = TopicPartition(str(t.name), int(p.partition_index))
                code = int(p.error_code)
                what = f"describe producers of {tp}"
                outcome = for_code(code, what, p.error_message, moved=LEADER_MOVED)
                out[tp] = outcome or Done(tuple(_producer(s) for s in p.active_producers))
        return out


def _producer(s: Any) -> ProducerState:
    start = int(s.current_txn_start_offset)
    return ProducerState(
        producer_id=int(s.producer_id),
        producer_epoch=int(s.producer_epoch),
        last_sequence=int(s.last_sequence),
        last_timestamp=int(s.last_timestamp),
        coordinator_epoch=int(s.coordinator_epoch),
        current_transaction_start_offset=start if start >= 0 else None,
    )


class ListTransactions(Handler[int]):
    """Each broker (an item) lists the transactions it coordinates."""

    what = "list transactions"

    def __init__(
        self,
        states: Iterable[TransactionState],
        producer_ids: Iterable[int],
        duration_ms: int | None,
    ) -> None:
        self.states = sorted({s.value for s in states})
        self.producer_ids = sorted(set(producer_ids))
        self.duration_ms = duration_ms

    def describe(self, key: int) -> str:
        return f"broker {key}"

    def requests(self, target: Target, keys: Sequence[int]) -> list[Call[int]]:
        request = ListTransactionsRequest(
            state_filters=self.states,
            producer_id_filters=self.producer_ids,
            duration_filter=-1 if self.duration_ms is None else self.duration_ms,
        )
        minimum = None if self.duration_ms is None else 1
        return [Call(request, (k,), min_version=minimum) for k in keys]

    def on_response(
        self, call: Call[int], target: Target, response: Any
    ) -> Mapping[int, ItemResult]:
        assert isinstance(response, ListTransactionsResponse)
        (broker,) = call.keys
        what = f"list transactions on broker {broker}"
        outcome = for_code(int(response.error_code), what, moved=NOTHING_MOVES)
        if outcome is not None:
            return {broker: outcome}
        listings = tuple(
            TransactionListing(
                str(t.transactional_id),
                int(t.producer_id),
                TransactionState.parse(str(t.transaction_state)),
            )
            for t in response.transaction_states
        )
        return {broker: Done(listings)}


class DescribeTransactions(Handler[str]):
    what = "describe transactions"

    def describe(self, key: str) -> str:
        return f"transactional id {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        return [Call(DescribeTransactionsRequest(transactional_ids=list(keys)), tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, DescribeTransactionsResponse)
        coordinator = getattr(target, "node_id", None)
        out: dict[str, ItemResult] = {}
        for s in response.transaction_states:
            txn = str(s.transactional_id)
            code = int(s.error_code)
            what = f"describe transaction {txn!r}"
            outcome = for_code(code, what, moved=COORDINATOR_MOVED)
            out[txn] = outcome or Done(_transaction(s, coordinator))
        return out


def _transaction(s: Any, coordinator: int | None) -> TransactionDescription:
    start = int(s.transaction_start_time_ms)
    return TransactionDescription(
        transactional_id=str(s.transactional_id),
        coordinator_id=coordinator,
        state=TransactionState.parse(str(s.transaction_state)),
        producer_id=int(s.producer_id),
        producer_epoch=int(s.producer_epoch),
        timeout=int(s.transaction_timeout_ms) / 1000.0,
        start_time=start if start >= 0 else None,
        partitions=frozenset(
            TopicPartition(str(t.topic), int(p)) for t in s.topics for p in t.partitions
        ),
    )


__all__ = [
    "DescribeProducers",
    "DescribeTransactions",
    "ListTransactions",
    "ProducerState",
    "TransactionDescription",
    "TransactionListing",
    "TransactionState",
]
