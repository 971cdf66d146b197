"""Producer and transaction handlers: DescribeProducers (at leaders), ListTransactions (per
broker), DescribeTransactions (per coordinator)."""

from __future__ import annotations

from _admin_scripted import (
    NO_JITTER,
    answer_coordinators,
    answer_metadata,
    broker,
    metadata,
    start,
    take,
)

from krafka.errors import TransactionalIdNotFoundError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    FindCoordinatorRequest,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from krafka.sansio.admin.routing import ToBrokers, ToCoordinators, ToLeaders
from krafka.sansio.admin.transactions import (
    DescribeProducers,
    DescribeTransactions,
    ListTransactions,
    ProducerState,
    TransactionState,
)
from krafka.sansio.coordinator import CoordinatorType
from krafka.structs import TopicPartition

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def test_describe_producers_at_each_leader() -> None:
    _, talk, op = start(DescribeProducers(), ToLeaders(), [T0, T1])
    answer_metadata(talk, metadata({"t": {0: 1, 1: 1}}))
    sent, request = take(talk, DescribeProducersRequest)
    assert [(t.name, t.partition_indexes) for t in request.topics] == [("t", [0, 1])]
    T = DescribeProducersResponse.TopicResponse
    P = T.PartitionResponse
    S = P.ProducerState
    talk.reply(
        sent,
        DescribeProducersResponse(
            topics=[
                T(
                    name="t",
                    partitions=[
                        P(
                            partition_index=0,
                            active_producers=[
                                S(
                                    producer_id=7,
                                    producer_epoch=2,
                                    last_sequence=41,
                                    last_timestamp=1000,
                                    coordinator_epoch=3,
                                    current_txn_start_offset=120,
                                ),
                                S(
                                    producer_id=8,
                                    producer_epoch=0,
                                    last_sequence=0,
                                    last_timestamp=1001,
                                    coordinator_epoch=-1,
                                    current_txn_start_offset=-1,
                                ),
                            ],
                        ),
                        P(partition_index=1, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER),
                    ],
                )
            ]
        ),
    )
    talk.advance_to_deadline()
    answer_metadata(talk, metadata({"t": {1: 2}}))
    sent, _ = take(talk, DescribeProducersRequest)
    assert sent.target == broker(2)
    talk.reply(
        sent, DescribeProducersResponse(topics=[T(name="t", partitions=[P(partition_index=1)])])
    )
    results = talk.outcome(op)
    assert results[T0] == (
        ProducerState(7, 2, 41, 1000, 3, 120),
        ProducerState(8, 0, 0, 1001, -1, None),
    )
    assert results[T1] == ()


def test_list_transactions_on_a_broker_with_filters() -> None:
    handler = ListTransactions([TransactionState.ONGOING], [7, 3], 60_000)
    _, talk, op = start(
        handler,
        ToBrokers(lambda b: b, nodes={2: broker(2)}),
        [2],
        versions={ApiKey.LIST_TRANSACTIONS: 1},
    )
    sent, request = take(talk, ListTransactionsRequest)
    assert sent.min_version == 1 and sent.target == broker(2)
    assert (request.state_filters, request.producer_id_filters, request.duration_filter) == (
        ["Ongoing"],
        [3, 7],
        60_000,
    )
    S = ListTransactionsResponse.TransactionState
    talk.reply(
        sent,
        ListTransactionsResponse(
            transaction_states=[
                S(transactional_id="tx", producer_id=7, transaction_state="Ongoing")
            ]
        ),
    )
    (listing,) = talk.outcome(op)[2]
    assert (listing.transactional_id, listing.producer_id, listing.state) == (
        "tx",
        7,
        TransactionState.ONGOING,
    )


def test_describe_transactions_batched_per_coordinator() -> None:
    routing: ToCoordinators[str] = ToCoordinators(
        CoordinatorType.TRANSACTION, str, NO_JITTER, lambda: 0.5
    )
    _, talk, op = start(DescribeTransactions(), routing, ["tx1", "tx2"])
    talk.step()
    lookup = talk.request(talk.outbox[0])
    assert isinstance(lookup, FindCoordinatorRequest) and lookup.key_type == 1
    answer_coordinators(talk, 3)
    sent, request = take(talk, DescribeTransactionsRequest)
    assert request.transactional_ids == ["tx1", "tx2"] and sent.target == broker(3)
    S = DescribeTransactionsResponse.TransactionState
    Topic = S.TopicData
    talk.reply(
        sent,
        DescribeTransactionsResponse(
            transaction_states=[
                S(
                    transactional_id="tx1",
                    transaction_state="Ongoing",
                    transaction_timeout_ms=60000,
                    transaction_start_time_ms=1700000000000,
                    producer_id=9,
                    producer_epoch=1,
                    topics=[Topic(topic="t", partitions=[0, 1])],
                ),
                S(
                    transactional_id="tx2",
                    error_code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
                    transaction_state="",
                    transaction_start_time_ms=-1,
                ),
            ]
        ),
    )
    results = talk.outcome(op)
    tx1 = results["tx1"]
    assert (tx1.state, tx1.coordinator_id, tx1.timeout, tx1.start_time) == (
        TransactionState.ONGOING,
        3,
        60.0,
        1700000000000,
    )
    assert tx1.partitions == {T0, T1}
    assert isinstance(results["tx2"], TransactionalIdNotFoundError)
