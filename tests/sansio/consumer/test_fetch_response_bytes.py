"""A Fetch response on the wire: split at every byte it decodes the same and yields the same
records; hostile record bytes inside it fail that partition only, with CorruptRecordError."""

from __future__ import annotations

from typing import Any

import pytest

from krafka.codec import Record, encode_batch
from krafka.errors import CorruptRecordError, KrafkaError
from krafka.protocol.messages import FetchRequest, FetchResponse
from krafka.protocol.messages.fetch_response import (
    AbortedTransaction,
    FetchableTopicResponse,
    PartitionData,
)
from krafka.sansio.connection import BrokerConnection
from krafka.sansio.consumer.completed_fetch import CompletedFetch
from krafka.sansio.events import ResponseReceived
from krafka.structs import TopicPartition
from krafka.testing.scripted import negotiate, response_bytes, sent_by

TP = TopicPartition("t", 0)


def records_bytes() -> bytes:
    first = encode_batch([Record(i, 1000, b"k", b"v%d" % i, []) for i in range(3)], "lz4", 0)
    second = encode_batch([Record(i, 1000, None, b"w%d" % i, []) for i in range(2)], "none", 3)
    return first + second


def wire(records: bytes) -> tuple[BrokerConnection, bytes]:
    conn = BrokerConnection(now=0.0)
    negotiate(conn)
    conn.send_request(FetchRequest(max_wait_ms=0, topics=[]), 0.0)
    (sent,) = sent_by(conn)
    part = PartitionData(
        partition_index=0,
        high_watermark=5,
        last_stable_offset=5,
        log_start_offset=0,
        aborted_transactions=[AbortedTransaction(producer_id=9, first_offset=0)],
        records=records,
    )
    body = FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=[part])])
    return conn, response_bytes(sent, body)


def values_of(response: Any) -> list[bytes]:
    part = response.responses[0].partitions[0]
    fetch = CompletedFetch(TP, part.records, start=1, epoch=0)
    out: list[Any] = []
    while fetch.take(out, 100):
        pass
    return [r.value for r in out]


def test_every_split_point_gives_the_same_records() -> None:
    _, data = wire(records_bytes())
    expected = None
    for cut in range(1, len(data)):
        conn, _ = wire(records_bytes())
        events = conn.receive_data(data[:cut], 1.0) + conn.receive_data(data[cut:], 1.0)
        (event,) = [e for e in events if isinstance(e, ResponseReceived)]
        values = values_of(event.response)
        expected = expected or values
        assert values == expected == [b"v1", b"v2", b"w0", b"w1"]


@pytest.mark.parametrize("damage", ["flip", "truncate-inner", "huge-length"])
def test_hostile_record_bytes_fail_the_partition_only(damage: str) -> None:
    good = records_bytes()
    bad = bytearray(good)
    if damage == "flip":
        bad[30] ^= 0xFF
    elif damage == "truncate-inner":
        bad = bad[:20] + bytes(8) + bad[28:]
    else:
        bad[8:12] = (0x7FFFFFF0).to_bytes(4, "big")  # a batch claiming ~2 GB
    conn, data = wire(bytes(bad))
    (event,) = [e for e in conn.receive_data(data, 1.0) if isinstance(e, ResponseReceived)]
    part = event.response.responses[0].partitions[0]
    fetch = CompletedFetch(TP, part.records, start=0, epoch=0)
    out: list[Any] = []
    try:
        while fetch.take(out, 100):
            pass
    except CorruptRecordError as exc:
        assert "t-0" in str(exc)
    else:
        # a batch longer than the data is an incomplete trailing batch: trimmed, nothing read
        assert damage == "huge-length" and out == [] and fetch.size == 0


def test_truncated_response_frame_is_a_clear_error() -> None:
    conn, data = wire(records_bytes())
    length = int.from_bytes(data[:4], "big")
    short = (length - 40).to_bytes(4, "big") + data[4 : length - 36]
    events = conn.receive_data(short, 1.0)
    errors = [getattr(e, "error", None) for e in events]
    assert any(isinstance(e, KrafkaError) for e in errors), events
