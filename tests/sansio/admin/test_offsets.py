"""ListOffsets and DeleteRecords handlers: specs and the versions they need, isolation level,
answers per partition."""

from __future__ import annotations

import pytest
from _admin_scripted import answer_metadata, metadata, start, take

from krafka.errors import OffsetOutOfRangeError, UnsupportedVersionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
)
from krafka.sansio.admin.offsets import (
    DeleteRecords,
    IsolationLevel,
    ListedOffset,
    ListOffsets,
    OffsetSpec,
    spec_of,
)
from krafka.sansio.admin.routing import ToLeaders
from krafka.structs import TopicPartition

P = [TopicPartition("t", i) for i in range(5)]
LT = ListOffsetsResponse.ListOffsetsTopicResponse
LP = LT.ListOffsetsPartitionResponse


def test_specs() -> None:
    assert spec_of("earliest") == -2 and spec_of(OffsetSpec.MAX_TIMESTAMP) == -3
    assert spec_of(1_700_000_000_000) == 1_700_000_000_000
    with pytest.raises(ValueError):
        spec_of(-9)
    with pytest.raises(KeyError):
        spec_of("yesterday")


def test_each_spec_is_sent_at_the_version_it_needs() -> None:
    specs = {
        P[0]: int(OffsetSpec.EARLIEST),
        P[1]: int(OffsetSpec.LATEST),
        P[2]: 1_700_000_000_000,
        P[3]: int(OffsetSpec.MAX_TIMESTAMP),
        P[4]: int(OffsetSpec.EARLIEST_LOCAL),
    }
    _, talk, op = start(ListOffsets(specs, IsolationLevel.READ_COMMITTED), ToLeaders(), specs)
    answer_metadata(talk, metadata({"t": dict.fromkeys(range(5), 1)}))
    talk.step()
    calls = {
        s.min_version: sorted(
            (p.partition_index, p.timestamp) for p in talk.request(s).topics[0].partitions
        )
        for s in talk.outbox
    }
    assert calls == {
        2: [(0, -2), (1, -1), (2, 1_700_000_000_000)],
        7: [(3, -3)],
        8: [(4, -4)],
    }
    for sent in list(talk.outbox):
        talk.outbox.remove(sent)
        request = talk.request(sent)
        assert request.isolation_level == 1 and request.replica_id == -1
        if sent.min_version == 8:
            talk.fail(sent, UnsupportedVersionError("ListOffsets v8 is not supported"))
            continue
        parts = [
            LP(
                partition_index=p.partition_index,
                offset=-1 if p.partition_index == 2 else 10 * p.partition_index,
                timestamp=123 if p.partition_index == 3 else -1,
                leader_epoch=2,
            )
            for p in request.topics[0].partitions
        ]
        talk.reply(sent, ListOffsetsResponse(topics=[LT(name="t", partitions=parts)]))
    results = talk.outcome(op)
    assert results[P[0]] == ListedOffset(0, -1, 2)
    assert results[P[1]] == ListedOffset(10, -1, 2)
    assert results[P[2]] is None  # no record at or after the timestamp
    assert results[P[3]] == ListedOffset(30, 123, 2)
    assert isinstance(results[P[4]], UnsupportedVersionError)


def test_read_uncommitted_speaks_v1_up() -> None:
    _, talk, _ = start(
        ListOffsets({P[0]: -1}, IsolationLevel.READ_UNCOMMITTED), ToLeaders(), [P[0]]
    )
    answer_metadata(talk, metadata({"t": {0: 2}}))
    sent, request = take(talk, ListOffsetsRequest)
    assert sent.min_version == 1 and request.isolation_level == 0


def test_offset_not_available_is_retried() -> None:
    _, talk, op = start(
        ListOffsets({P[0]: -1}, IsolationLevel.READ_UNCOMMITTED), ToLeaders(), [P[0]]
    )
    answer_metadata(talk, metadata({"t": {0: 2}}))
    sent, _ = take(talk, ListOffsetsRequest)
    talk.reply(
        sent,
        ListOffsetsResponse(
            topics=[
                LT(
                    name="t",
                    partitions=[LP(partition_index=0, error_code=ErrorCode.OFFSET_NOT_AVAILABLE)],
                )
            ]
        ),
    )
    talk.advance_to_deadline()
    sent, _ = take(talk, ListOffsetsRequest)
    talk.reply(
        sent,
        ListOffsetsResponse(topics=[LT(name="t", partitions=[LP(partition_index=0, offset=9)])]),
    )
    assert talk.outcome(op)[P[0]].offset == 9


def test_delete_records_reports_low_watermarks() -> None:
    offsets = {P[0]: 100, P[1]: -1}
    _, talk, op = start(DeleteRecords(offsets, 5000), ToLeaders(), offsets)
    answer_metadata(talk, metadata({"t": {0: 1, 1: 1}}))
    sent, request = take(talk, DeleteRecordsRequest)
    assert request.timeout_ms == 5000
    assert [(p.partition_index, p.offset) for p in request.topics[0].partitions] == [
        (0, 100),
        (1, -1),
    ]
    T = DeleteRecordsResponse.DeleteRecordsTopicResult
    R = T.DeleteRecordsPartitionResult
    talk.reply(
        sent,
        DeleteRecordsResponse(
            topics=[
                T(
                    name="t",
                    partitions=[
                        R(partition_index=0, low_watermark=100),
                        R(
                            partition_index=1,
                            low_watermark=-1,
                            error_code=ErrorCode.OFFSET_OUT_OF_RANGE,
                        ),
                    ],
                )
            ]
        ),
    )
    results = talk.outcome(op)
    assert results[P[0]] == 100 and isinstance(results[P[1]], OffsetOutOfRangeError)
