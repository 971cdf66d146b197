"""Protocol hot paths: krafka's generated codecs beside aiokafka's hand-written classes.

    python benches/protocol.py [--repeat 15] [--partitions 100]

Decodes a Fetch response with 100 partitions (records kept as zero-copy memoryviews by krafka,
copied to bytes by aiokafka) and encodes a Produce request with 100 partitions, both at the
newest version aiokafka speaks (Fetch v11, Produce v7), and prints per-call medians and the
ratio. krafka's flexible versions (Fetch v16, Produce v11) are shown too, for reference.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from krafka.protocol.messages import FetchResponse, ProduceRequest
from krafka.protocol.messages.fetch_response import (
    FetchableTopicResponse,
    PartitionData,
)
from krafka.protocol.messages.produce_request import (
    PartitionProduceData,
    TopicProduceData,
)

TOPICS = 4


def fetch_response(partitions: int, record_size: int) -> FetchResponse:
    per_topic = partitions // TOPICS
    return FetchResponse(
        responses=[
            FetchableTopicResponse(
                topic=f"topic-{t}",
                partitions=[
                    PartitionData(
                        partition_index=p,
                        high_watermark=1_000_000 + p,
                        last_stable_offset=1_000_000 + p,
                        log_start_offset=0,
                        aborted_transactions=[],
                        preferred_read_replica=-1,
                        records=bytes([p % 251]) * record_size,
                    )
                    for p in range(per_topic)
                ],
            )
            for t in range(TOPICS)
        ]
    )


def produce_request(partitions: int, record_size: int) -> ProduceRequest:
    per_topic = partitions // TOPICS
    return ProduceRequest(
        acks=-1,
        timeout_ms=30000,
        topic_data=[
            TopicProduceData(
                name=f"topic-{t}",
                partition_data=[
                    PartitionProduceData(index=p, records=bytes([p % 251]) * record_size)
                    for p in range(per_topic)
                ],
            )
            for t in range(TOPICS)
        ],
    )


def median_us(fn: Callable[[], object], repeat: int) -> float:
    number = 50
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--record-size", type=int, default=1024)
    args = parser.parse_args()

    from aiokafka.protocol.fetch import FetchResponse_v11
    from aiokafka.protocol.produce import ProduceRequest_v7

    fetch = fetch_response(args.partitions, args.record_size)
    wire11 = fetch.encode(11)
    wire16 = fetch.encode(16)
    ours = FetchResponse.decode(wire11, 11)
    theirs = FetchResponse_v11.decode(wire11)
    records = ours.responses[0].partitions[3].records
    assert len(theirs.topics) == len(ours.responses) == TOPICS
    assert theirs.topics[0][1][3][7] == bytes(records or b""), "decoders disagree"

    produce = produce_request(args.partitions, args.record_size)
    topics = [
        (t.name, [(p.index, bytes(p.records or b"")) for p in t.partition_data])
        for t in produce.topic_data
    ]
    aio_produce = ProduceRequest_v7(None, -1, 30000, topics)
    assert aio_produce.encode() == produce.encode(7), "aiokafka and krafka disagree on v7 bytes"

    rows = [
        ("Fetch response decode v11", lambda: FetchResponse.decode(wire11, 11),
         lambda: FetchResponse_v11.decode(wire11)),
        ("Produce request encode v7", lambda: produce.encode(7), aio_produce.encode),
    ]  # fmt: skip
    print(f"{args.partitions} partitions, {args.record_size}-byte record sets, "
          f"median of {args.repeat} runs")  # fmt: skip
    print(f"{'case':32} {'krafka µs':>11} {'aiokafka µs':>12} {'ratio':>7}")
    for name, ours_fn, theirs_fn in rows:
        k = median_us(ours_fn, args.repeat)
        a = median_us(theirs_fn, args.repeat)
        print(f"{name:32} {k:11.1f} {a:12.1f} {a / k:6.1f}x")
    k16 = median_us(lambda: FetchResponse.decode(wire16, 16), args.repeat)
    p11 = median_us(lambda: produce.encode(11), args.repeat)
    print(f"{'Fetch response decode v16':32} {k16:11.1f} {'-':>12}")
    print(f"{'Produce request encode v11':32} {p11:11.1f} {'-':>12}")


if __name__ == "__main__":
    main()
