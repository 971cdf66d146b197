"""The Fetcher against a partition in trouble, scripted over simulated time: corrupt data and
failing partitions are fetched again only after a backoff (or a seek), and the healthy
partitions on the same broker keep being fetched and delivered."""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from krafka.codec import Record, encode_batch
from krafka.errors import CorruptRecordError, KrafkaError, TopicAuthorizationFailedError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import FetchResponse
from krafka.protocol.messages.fetch_response import FetchableTopicResponse, PartitionData
from krafka.sansio.actions import SendRequest
from krafka.sansio.consumer.fetcher import IsolationLevel
from krafka.structs import TopicPartition
from tests.sansio.consumer.test_fetcher import T0, T2, fetcher

#: Bytes no decoder can read past: a batch header with an unknown magic byte.
GARBAGE = struct.pack(">qiib", 0, 60, 0, 7) + b"\xff" * 60
#: The partition in trouble answers with this (bytes, or an error code).
Trouble = bytes | int


def good(offset: int) -> bytes:
    return encode_batch([Record(0, 5, None, b"v%d" % offset, [])], "none", offset)


def corrupt_marker(offset: int) -> bytes:
    key, value = struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 0)
    batch = bytearray(
        encode_batch([Record(0, 5, key, value, [])], "none", offset, 7, 0, -1, True, control=True)
    )
    batch[-1] ^= 0xFF
    return bytes(batch)


def respond(trouble: Trouble, healthy_end: int) -> Callable[[TopicPartition, int], PartitionData]:
    """Broker 1's answers: T0 is in trouble; T2 holds records 0..healthy_end-1."""

    def answer(tp: TopicPartition, offset: int) -> PartitionData:
        code, records = 0, b""
        if tp == T0:
            code, records = (trouble, b"") if isinstance(trouble, int) else (0, trouble)
        elif offset < healthy_end:
            records = good(offset)
        return PartitionData(
            partition_index=tp.partition, error_code=code, high_watermark=50,
            last_stable_offset=50, log_start_offset=0, records=records,
        )  # fmt: skip

    return answer


def run(
    trouble: Trouble, seconds: float = 10.0, healthy_end: int = 20, **config: Any
) -> tuple[Counter[TopicPartition], list[Record | KrafkaError]]:
    """Fetch and poll every 10 ms of simulated time; what was fetched and what polls got."""
    f, _ = fetcher(**config)
    answer = respond(trouble, healthy_end)
    fetched: Counter[TopicPartition] = Counter()
    polled: list[Any] = []
    now = 0.0
    while now < seconds:
        for action in f.next_actions(now):
            if not isinstance(action, SendRequest) or action.target.node_id != 1:
                continue
            request = action.request.build(12)
            parts = []
            for topic in request.topics:
                for p in topic.partitions:
                    tp = TopicPartition(topic.topic, p.partition)
                    fetched[tp] += 1
                    parts.append(answer(tp, p.fetch_offset))
            response = FetchResponse(
                responses=[FetchableTopicResponse(topic="t", partitions=parts)]
            )
            f.on_response(action, response, now)
        try:
            polled.extend(f.fetched_records(100))
        except KrafkaError as exc:
            polled.append(exc)
        now += 0.01
    return fetched, polled


def healthy_values(polled: list[Any]) -> list[bytes]:
    return [r.value for r in polled if not isinstance(r, KrafkaError) and r.partition == 2]


def errors(polled: list[Any]) -> list[KrafkaError]:
    return [e for e in polled if isinstance(e, KrafkaError)]


@pytest.mark.parametrize(
    ("trouble", "isolation"),
    [
        (GARBAGE, IsolationLevel.READ_UNCOMMITTED),
        (good(0)[:-1] + bytes([good(0)[-1] ^ 0xFF]), IsolationLevel.READ_UNCOMMITTED),
        (corrupt_marker(0), IsolationLevel.READ_COMMITTED),
    ],
    ids=["garbage", "bad-crc", "bad-marker-read-committed"],
)
def test_corrupt_data_is_not_fetched_again_and_the_others_are_delivered(
    trouble: bytes, isolation: IsolationLevel
) -> None:
    fetched, polled = run(trouble, isolation_level=isolation)
    assert fetched[T0] <= 3  # once, and at most the prefetches made before it was read
    assert healthy_values(polled) == [b"v%d" % i for i in range(20)]
    assert errors(polled) and all(isinstance(e, CorruptRecordError) for e in errors(polled))
    assert all("t-0" in str(e) for e in errors(polled))


def test_a_retriable_partition_error_backs_off_exponentially() -> None:
    fetched, polled = run(ErrorCode.KAFKA_STORAGE_ERROR)
    # 100 ms doubling to 1 s: about 13 fetches in 10 s (jitter-free here), not one per tick
    assert 8 <= fetched[T0] <= 16
    assert fetched[T2] > 100 and healthy_values(polled) == [b"v%d" % i for i in range(20)]
    assert not errors(polled)


def test_a_failing_partition_raises_per_backoff_and_the_others_flow() -> None:
    fetched, polled = run(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    assert 8 <= fetched[T0] <= 16
    assert len(errors(polled)) == fetched[T0]  # each failure raised once, none piled up
    assert all(isinstance(e, TopicAuthorizationFailedError) for e in errors(polled))
    assert healthy_values(polled) == [b"v%d" % i for i in range(20)]
