"""Admin calls on producers and transactions."""

from __future__ import annotations

from collections.abc import Iterable

from krafka.errors import KrafkaError
from krafka.io.admin.base import AdminBase, names_of, partitions_of
from krafka.sansio.admin.results import Results
from krafka.sansio.admin.routing import Routing, ToBrokers, ToCoordinators, ToLeaders
from krafka.sansio.admin.transactions import (
    DescribeProducers,
    DescribeTransactions,
    ListTransactions,
    ProducerState,
    TransactionDescription,
    TransactionListing,
    TransactionState,
)
from krafka.sansio.coordinator import CoordinatorType
from krafka.structs import TopicPartition


class TransactionsAdmin(AdminBase):
    async def describe_producers(
        self,
        partitions: Iterable[TopicPartition],
        *,
        broker_id: int | None = None,
        timeout: float | None = None,
    ) -> Results[TopicPartition, tuple[ProducerState, ...]]:
        """The active producers of partitions, as each leader (or broker `broker_id`, e.g. a
        follower) knows them."""
        wanted = partitions_of(partitions)
        routing: Routing[TopicPartition] = (
            ToLeaders() if broker_id is None else ToBrokers(lambda _: broker_id)
        )
        return Results(await self._run(DescribeProducers(), routing, wanted, timeout))

    async def list_transactions(
        self,
        *,
        states: Iterable[TransactionState | str] = (),
        producer_ids: Iterable[int] = (),
        duration: float | None = None,
        timeout: float | None = None,
    ) -> list[TransactionListing]:
        """Every transactional id of the cluster (asked of every broker), sorted; filtered by
        state, producer id, or running for at least `duration` seconds (Kafka 3.8+)."""
        duration_ms = None if duration is None else int(duration * 1000)
        handler = ListTransactions(
            [TransactionState.parse(s) for s in states], producer_ids, duration_ms
        )
        nodes = await self._brokers(timeout)
        routing: ToBrokers[int] = ToBrokers(lambda b: b, nodes=nodes)
        per_broker = await self._run(handler, routing, sorted(nodes), timeout)
        listings: dict[str, TransactionListing] = {}
        for value in per_broker.values():
            if isinstance(value, KrafkaError):
                raise value
            listings.update((t.transactional_id, t) for t in value)
        return [listings[t] for t in sorted(listings)]

    async def describe_transactions(
        self, transactional_ids: Iterable[str], *, timeout: float | None = None
    ) -> Results[str, TransactionDescription]:
        """`{transactional id: TransactionDescription}`, asked of each one's coordinator."""
        ids = names_of(transactional_ids, "describe_transactions")
        routing: ToCoordinators[str] = ToCoordinators(
            CoordinatorType.TRANSACTION, str, self.backoff, self._rand
        )
        return Results(await self._run(DescribeTransactions(), routing, ids, timeout))
