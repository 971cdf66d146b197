"""End-to-end consume throughput: krafka beside confluent-kafka (librdkafka) and aiokafka.

One local Tansu broker (or `--mock`: librdkafka's 3-broker mock cluster with 12 partitions), a
topic filled once with N records of 100-byte values; each client, in a fresh process, reads
all of it from offset 0 by manual assignment (no group), fetch_max_wait 100 ms. Runs alternate
between clients; medians of records/s and client CPU µs per record (`time.process_time`, which
includes librdkafka's threads) are printed with krafka's ratios to each peer. The clock starts
when the first record arrived (connection and metadata are not counted).

Clients: `krafka` (`poll()` lists), `krafka-iter` (`async for`, record by record),
`krafka-arrow` (`poll_arrow()`, Arrow batches; not run by default), `-otel` (tracing on, an
SDK provider dropping every span), `-sdk` (OpenTelemetry's SDK imported and a provider made,
tracing off: what the SDK alone costs the process),
`krafka-otel-metrics` (`krafka` recording OpenTelemetry messaging metrics; not run by default),
`confluent-kafka` (`consume(num_messages=...)`, its fastest path, with
`fetch.queue.backoff.ms=10` so it never idles for the default second once its queue is full),
`aiokafka` (`getmany`), `aiokafka-iter` (`async for`). Every client reads every record's value
(the same work on each side: `record.value`, `message.value()`).

Arrow clients (`--clients krafka-arrow,aiokafka-arrow`): `krafka-arrow` (`poll_arrow`: Arrow
record batches in Spark's Kafka row, headers included, decoded straight from the fetched
batches) beside `aiokafka-arrow` (`getmany`, then a `pyarrow.RecordBatch` of the same schema
built from its records): rows/s with decode included, one process (one core) each.

    python benches/consume.py [--records 500000] [--rounds 3] [--mock | --kafka] [--clients ...]
    python benches/consume.py --kafka --records 2000000 --clients krafka-arrow,aiokafka-arrow
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _otel import child_env, noop_provider, source_root, split, tracing_options

source_root(__file__)

VALUE = b"x" * 100
BATCH = 10_000
CLIENTS = ("krafka", "krafka-iter", "confluent-kafka", "aiokafka", "aiokafka-iter")
ARROW_CLIENTS = ("krafka-arrow", "aiokafka-arrow")


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    cpu: float


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> Run:
    wall, cpu = _clock()
    return Run(wall - start[0], cpu - start[1])


def krafka_run(
    bootstrap: str,
    topic: str,
    partitions: int,
    n: int,
    iterate: bool,
    otel: bool = False,
    metrics: bool = False,
    arrow: bool = False,
) -> Run:
    import anyio

    from krafka import Consumer, TopicPartition

    async def run() -> Run:
        async with Consumer(
            bootstrap,
            auto_offset_reset="earliest",
            fetch_max_wait=0.1,
            max_poll_records=BATCH,
            **tracing_options("-otel" if otel else ""),
            meter_provider=meter_provider() if metrics else None,
        ) as consumer:
            await consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
            if arrow:
                return await arrow_read(consumer, n)
            first = await consumer.recv()
            start, seen = _clock(), 1
            size = len(first.value)
            if iterate:
                async for record in consumer:
                    size += len(record.value)
                    seen += 1
                    if seen >= n:
                        break
            else:
                while seen < n:
                    records = await consumer.poll(timeout=1.0)
                    for record in records:
                        size += len(record.value)
                    seen += len(records)
            assert first.value == VALUE and size == seen * len(VALUE)
            return _since(start)

    return anyio.run(run)


async def arrow_read(consumer: Any, n: int) -> Run:
    """`poll_arrow()` until `n` rows came (the clock starts at the first), reading every value
    (the lengths of the `value` column)."""
    import pyarrow.compute as pc

    seen = size = 0
    start = None
    while seen < n:
        batches = await consumer.poll_arrow(timeout=1.0)
        if batches and start is None:
            start = _clock()  # the rows that came before the clock started are not counted
            n -= sum(batch.num_rows for batch in batches)
            continue
        for batch in batches:
            size += pc.sum(pc.binary_length(batch.column("value"))).as_py() or 0
            seen += batch.num_rows
    assert start is not None and size == seen * len(VALUE)
    return _since(start)


def _arrow_totals(batches: list[object]) -> tuple[int, int]:
    """Rows and value bytes of Arrow record batches (the values' buffer, no copy)."""
    import pyarrow.compute as pc

    rows = sum(b.num_rows for b in batches)  # type: ignore[attr-defined]
    size = sum(pc.sum(pc.binary_length(b.column("value"))).as_py() or 0 for b in batches)  # type: ignore[attr-defined]
    return rows, size


def aiokafka_arrow_run(bootstrap: str, topic: str, partitions: int, n: int) -> Run:
    """aiokafka's records made into the `poll_arrow` schema by pyarrow (what a user of it would
    write to get Arrow)."""
    import pyarrow as pa
    from aiokafka import AIOKafkaConsumer, TopicPartition

    from krafka.arrow import kafka_schema

    schema = kafka_schema()

    def to_arrow(topic: str, records: list[object]) -> object:
        rs: list = records  # type: ignore[type-arg]
        return pa.RecordBatch.from_arrays(
            [
                pa.array([r.key for r in rs], pa.binary()),
                pa.array([r.value for r in rs], pa.binary()),
                pa.array([topic] * len(rs), pa.string()),
                pa.array([r.partition for r in rs], pa.int32()),
                pa.array([r.offset for r in rs], pa.int64()),
                pa.array([r.timestamp * 1000 for r in rs], pa.timestamp("us", tz="UTC")),
                pa.array([r.timestamp_type for r in rs], pa.int32()),
                pa.array([list(r.headers) or None for r in rs], schema.field("headers").type),
            ],
            schema=schema,
        )

    async def run() -> Run:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, fetch_max_wait_ms=100, auto_offset_reset="earliest"
        )
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
            first = await consumer.getmany(timeout_ms=1000, max_records=BATCH)
            while not first:
                first = await consumer.getmany(timeout_ms=1000, max_records=BATCH)
            start = _clock()
            seen, size = 0, 0
            fetched = first
            while True:
                tables = [to_arrow(tp.topic, records) for tp, records in fetched.items()]
                got, more = _arrow_totals(tables)
                seen, size = seen + got, size + more
                if seen >= n:
                    break
                fetched = await consumer.getmany(timeout_ms=1000, max_records=BATCH)
            assert size == seen * len(VALUE)
            return _since(start)
        finally:
            await consumer.stop()

    return asyncio.run(run())


def confluent_run(bootstrap: str, topic: str, partitions: int, n: int) -> Run:
    from confluent_kafka import Consumer as RdConsumer
    from confluent_kafka import TopicPartition as RdTopicPartition

    consumer = RdConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            "fetch.queue.backoff.ms": 10,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([RdTopicPartition(topic, p, 0) for p in range(partitions)])
    seen, size, start = 0, 0, None
    while seen < n:
        messages = consumer.consume(num_messages=BATCH, timeout=1.0)
        if messages and start is None:
            start = _clock()  # when the first batch arrived (the others: the first record)
        for message in messages:
            size += len(message.value())
        seen += len(messages)
    assert start is not None and size == seen * len(VALUE)
    result = _since(start)
    consumer.close()
    return result


def aiokafka_run(bootstrap: str, topic: str, partitions: int, n: int, iterate: bool) -> Run:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> Run:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, fetch_max_wait_ms=100, auto_offset_reset="earliest"
        )
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
            first = await consumer.getone()
            start, seen, size = _clock(), 1, len(first.value)
            if iterate:
                async for record in consumer:
                    size += len(record.value)
                    seen += 1
                    if seen >= n:
                        break
            else:
                while seen < n:
                    batches = await consumer.getmany(timeout_ms=1000, max_records=BATCH)
                    for records in batches.values():
                        for record in records:
                            size += len(record.value)
                        seen += len(records)
            assert size == seen * len(VALUE)
            return _since(start)
        finally:
            await consumer.stop()

    return asyncio.run(run())


def meter_provider() -> object:
    """An OpenTelemetry SDK meter provider whose reader never exports (the metrics' recording
    cost alone)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    return MeterProvider(metric_readers=[InMemoryMetricReader()])


def child(name: str, bootstrap: str, topic: str, partitions: int, records: int) -> None:
    runs = {
        "krafka": lambda: krafka_run(bootstrap, topic, partitions, records, False),
        "krafka-otel": lambda: krafka_run(bootstrap, topic, partitions, records, False, True),
        "krafka-iter": lambda: krafka_run(bootstrap, topic, partitions, records, True),
        "krafka-otel-metrics": lambda: krafka_run(
            bootstrap, topic, partitions, records, False, metrics=True
        ),
        "krafka-iter-otel": lambda: krafka_run(bootstrap, topic, partitions, records, True, True),
        "krafka-arrow": lambda: krafka_run(
            bootstrap, topic, partitions, records, False, arrow=True
        ),
        "krafka-arrow-otel": lambda: krafka_run(
            bootstrap, topic, partitions, records, False, True, arrow=True
        ),
        "confluent-kafka": lambda: confluent_run(bootstrap, topic, partitions, records),
        "aiokafka": lambda: aiokafka_run(bootstrap, topic, partitions, records, False),
        "aiokafka-iter": lambda: aiokafka_run(bootstrap, topic, partitions, records, True),
        "aiokafka-arrow": lambda: aiokafka_arrow_run(bootstrap, topic, partitions, records),
    }
    base = split(name)[0]
    if base.endswith("-sdk"):  # OpenTelemetry's SDK in the process, tracing off
        noop_provider()
        base = base.removesuffix("-sdk")
    run = runs[base]()
    print(json.dumps({"seconds": run.seconds, "cpu": run.cpu}))


def measure(
    name: str, bootstrap: str, topic: str, partitions: int, records: int, baseline: str | None
) -> Run:
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, bootstrap, topic, str(partitions),
         str(records)],
        check=True, capture_output=True, text=True, timeout=600,
        env=child_env(name, baseline),
    )  # fmt: skip
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return Run(data["seconds"], data["cpu"])


def fill(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    import anyio

    from krafka import Producer

    async def run() -> None:
        async with Producer(bootstrap, linger=0.005) as producer:
            for i in range(records):
                await producer.send(topic, VALUE, partition=i % partitions)
            await producer.flush()

    anyio.run(run)


def report(results: dict[str, list[Run]], records: int) -> None:
    rates = {k: statistics.median(records / r.seconds for r in v) for k, v in results.items()}
    cpus = {k: statistics.median(r.cpu * 1e6 / records for r in v) for k, v in results.items()}
    for name in results:
        print(f"{name:16} {rates[name] / 1e6:6.3f} M rec/s   {cpus[name]:5.2f} µs CPU/rec")
    for mine, peer in (
        ("krafka-otel", "krafka"),
        ("krafka-iter-otel", "krafka-iter"),
        ("krafka-otel", "krafka-sdk"),
        ("krafka-iter-otel", "krafka-iter-sdk"),
        ("krafka", "krafka@base"),
        ("krafka-iter", "krafka-iter@base"),
        ("krafka-arrow", "krafka-arrow@base"),
        ("krafka-arrow-otel", "krafka-arrow"),
        ("krafka", "confluent-kafka"),
        ("krafka", "aiokafka"),
        ("krafka-iter", "confluent-kafka"),
        ("krafka-iter", "aiokafka-iter"),
        ("krafka-otel-metrics", "krafka"),
        ("krafka-arrow", "aiokafka-arrow"),
        ("krafka-arrow", "krafka"),
    ):
        if mine in rates and peer in rates:
            print(f"{mine} / {peer}: {rates[mine] / rates[peer]:.2f}x")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mock", action="store_true", help="3-broker mock cluster, 12 partitions")
    parser.add_argument("--kafka", action="store_true", help="Apache Kafka, 1 node, 4 partitions")
    parser.add_argument(
        "--clients",
        default=",".join(CLIENTS),
        help="also krafka-otel, krafka-iter-otel (tracing on, spans dropped); NAME@base: "
        "krafka from --baseline",
    )
    parser.add_argument("--baseline", help="a krafka source tree for the NAME@base clients")
    args = parser.parse_args()
    clients = args.clients.split(",")
    topic = f"bench-consume-{time.time_ns()}"
    if args.mock:
        from krafka.testing.mockcluster import MockCluster

        partitions = 12
        context: object = MockCluster(3, topics={topic: partitions})
    elif args.kafka:
        from krafka.testing import KafkaCluster

        partitions = 4
        context = KafkaCluster(broker_config={"num.partitions": str(partitions)})
    else:
        from krafka.testing import LocalBroker

        partitions = 1
        context = LocalBroker()
    with context as cluster:  # type: ignore[attr-defined]
        bootstrap = cluster.bootstrap_servers
        fill(bootstrap, topic, partitions, args.records)
        results: dict[str, list[Run]] = {c: [] for c in clients}
        for _ in range(args.rounds):
            for name in clients:
                results[name].append(
                    measure(name, bootstrap, topic, partitions, args.records, args.baseline)
                )
        print(f"{args.records} records x 100 B, {partitions} partition(s), medians of "
              f"{args.rounds} rounds")  # fmt: skip
        report(results, args.records)


if __name__ == "__main__":
    main()
