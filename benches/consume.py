"""End-to-end consume throughput: krafka beside librdkafka, aiokafka, kafka-python and Java.

One broker (`--cluster tansu`: the embedded Tansu; `--cluster kafka`: one Apache Kafka 4.4 node;
`--mock`: librdkafka's 3-broker mock cluster with 12 partitions), a topic of `--partitions`
partitions filled once by krafka with N records of `--value-size` bytes (`--compression`); each
client, in a fresh process, reads all of it from offset 0 by manual assignment (no group),
fetch_max_wait 100 ms, up to 10,000 records a poll. Runs alternate between clients; medians of
records/s, client CPU µs per record (`time.process_time`, which includes librdkafka's threads;
for Java the JVM's) and the broker's CPU seconds during the run are printed with krafka's ratios
to each peer. The clock starts when the first record arrived (connection and metadata are not
counted). Every client reads every record's value (`record.value`, `message.value()`; for Arrow
the value column's lengths).

Clients: `krafka` (`poll()` lists), `krafka-iter` (`async for`, record by record), `krafka-arrow`
(`poll_arrow`: `pyarrow.RecordBatch`es decoded with no object per record), `krafka-sync`
(`krafka.sync.Consumer.poll`), `krafka-otel-metrics` (`krafka` recording OpenTelemetry messaging
metrics; not run by default), `confluent-kafka` (`consume(num_messages=...)`, its fastest path,
with `fetch.queue.backoff.ms=10` so it never idles for the default second once its queue is
full), `confluent-aio` (`confluent_kafka.aio.AIOConsumer.consume(num_messages=...)`), `aiokafka`
(`getmany`, compiled codec), `aiokafka-iter` (`async for`), `kafka-python` (`poll`), `java`
(Kafka's `ConsumerPerformance` after an untimed warm-up run; its `fetch.nMsg.sec`, which leaves
out the group join; CPU: the whole JVM's, start-up included) and `java-warm`
(`benches/java/KrafkaBench.java consume`: a KafkaConsumer reads the topic once untimed to warm
the JIT, then a fresh one reads it again timed from its first record, 10,000 records a poll).

Variants: `-otel` (tracing on, an SDK provider dropping every span: `krafka-otel`,
`krafka-iter-otel`, `krafka-arrow-otel`), `-sdk` (OpenTelemetry's SDK imported and a provider
made, tracing off: what the SDK alone costs the process), `NAME@base` (krafka from
`--baseline`). `aiokafka-arrow` (`getmany`, then a `pyarrow.RecordBatch` of `poll_arrow`'s
schema built from its records: what an aiokafka user writes to get Arrow) is `krafka-arrow`'s
peer (`--clients krafka-arrow,aiokafka-arrow`).

    python benches/consume.py --cluster kafka [--records 2000000] [--rounds 5] [--partitions 1]
        [--value-size 100] [--compression none|lz4|zstd] [--clients ...] [--mock]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cluster import CLUSTERS, Broker, bench_classes, broker, create_topic, java, run_java
from _installed import compile_krafka
from _otel import child_env, noop_provider, source_root, split, tracing_options
from _timing import Ratio, paired_ratio

source_root(__file__)

VALUE = b"x" * 100
BATCH = 10_000
CLIENTS = (
    "krafka",
    "krafka-iter",
    "krafka-arrow",
    "krafka-sync",
    "confluent-kafka",
    "confluent-aio",
    "aiokafka",
    "aiokafka-iter",
    "kafka-python",
    "java",
    "java-warm",
)


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    cpu: float
    broker: float = 0.0


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


def krafka_arrow_run(
    bootstrap: str, topic: str, partitions: int, n: int, otel: bool = False
) -> Run:
    """`poll_arrow`: Arrow record batches; every value's length summed from the column."""
    import anyio
    import pyarrow.compute as pc

    from krafka import Consumer, TopicPartition

    async def run() -> Run:
        async with Consumer(
            bootstrap,
            auto_offset_reset="earliest",
            fetch_max_wait=0.1,
            max_poll_records=BATCH,
            **tracing_options("-otel" if otel else ""),
        ) as consumer:
            await consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
            seen, size, start = 0, 0, None
            while seen < n:
                for batch in await consumer.poll_arrow(timeout=1.0, max_records=BATCH):
                    if start is None:
                        start = _clock()
                    size += pc.sum(pc.binary_length(batch.column("value"))).as_py() or 0
                    seen += batch.num_rows
            assert start is not None and size == seen * len(VALUE)
            return _since(start)

    return anyio.run(run)


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


def krafka_sync_run(bootstrap: str, topic: str, partitions: int, n: int) -> Run:
    """The `krafka` workload through the blocking `krafka.sync.Consumer`."""
    from krafka import TopicPartition
    from krafka.sync import Consumer

    with Consumer(
        bootstrap, auto_offset_reset="earliest", fetch_max_wait=0.1, max_poll_records=BATCH
    ) as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        seen, size, start = 0, 0, None
        while seen < n:
            records = consumer.poll(timeout=1.0)
            if records and start is None:
                start = _clock()
            for record in records:
                size += len(record.value)
            seen += len(records)
        assert start is not None and size == seen * len(VALUE)
        return _since(start)


def confluent_aio_run(bootstrap: str, topic: str, partitions: int, n: int) -> Run:
    from confluent_kafka import TopicPartition as RdTopicPartition
    from confluent_kafka.aio import AIOConsumer

    async def run() -> Run:
        consumer = AIOConsumer(_confluent_config(bootstrap))
        await consumer.assign([RdTopicPartition(topic, p, 0) for p in range(partitions)])
        seen, size, start = 0, 0, None
        while seen < n:
            messages = await consumer.consume(num_messages=BATCH, timeout=1.0)
            if messages and start is None:
                start = _clock()
            for message in messages:
                size += len(message.value())
            seen += len(messages)
        assert start is not None and size == seen * len(VALUE)
        result = _since(start)
        await consumer.close()
        return result

    return asyncio.run(run())


def kafka_python_run(bootstrap: str, topic: str, partitions: int, n: int) -> Run:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KpTopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
        max_poll_records=BATCH,
    )
    consumer.assign([KpTopicPartition(topic, p) for p in range(partitions)])
    seen, size, start = 0, 0, None
    while seen < n:
        batches = consumer.poll(timeout_ms=1000, max_records=BATCH)
        if batches and start is None:
            start = _clock()
        for records in batches.values():
            for record in records:
                size += len(record.value)
            seen += len(records)
    assert start is not None and size == seen * len(VALUE)
    result = _since(start)
    consumer.close()
    return result


def java_run(bootstrap: str, topic: str, partitions: int, n: int) -> Run:
    """ConsumerPerformance after an untimed warm-up run; its fetch rate, the JVM's CPU."""

    def command(records: int) -> list[str]:
        return java(
            "org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", bootstrap,
            "--topic", topic, "--num-records", str(records), "--timeout", "30000",
            "--command-property", "fetch.max.wait.ms=100",
            "--command-property", f"max.poll.records={BATCH}",
        )  # fmt: skip

    run_java(command(max(1000, n // 5)))
    out, cpu = run_java(command(n))
    header, values = [line for line in out.splitlines() if line.strip()][-2:]
    row = dict(zip((h.strip() for h in header.split(",")), values.split(","), strict=True))
    return Run(n / float(row["fetch.nMsg.sec"]), cpu)


def java_warm_run(bootstrap: str, topic: str, partitions: int, n: int) -> Run:
    command = java(
        "KrafkaBench", "consume", bootstrap, topic, str(n), str(partitions), classes=bench_classes()
    )
    data = json.loads(run_java(command)[0].strip().splitlines()[-1])
    return Run(data["seconds"], data["cpu"])


def _confluent_config(bootstrap: str) -> dict[str, object]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": "bench",
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 100,
        "fetch.queue.backoff.ms": 10,
        "auto.offset.reset": "earliest",
    }


def confluent_run(bootstrap: str, topic: str, partitions: int, n: int) -> Run:
    from confluent_kafka import Consumer as RdConsumer
    from confluent_kafka import TopicPartition as RdTopicPartition

    consumer = RdConsumer(_confluent_config(bootstrap))
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
        "confluent-kafka": lambda: confluent_run(bootstrap, topic, partitions, records),
        "krafka-arrow": lambda: krafka_arrow_run(bootstrap, topic, partitions, records),
        "krafka-arrow-otel": lambda: krafka_arrow_run(bootstrap, topic, partitions, records, True),
        "aiokafka-arrow": lambda: aiokafka_arrow_run(bootstrap, topic, partitions, records),
        "krafka-sync": lambda: krafka_sync_run(bootstrap, topic, partitions, records),
        "confluent-aio": lambda: confluent_aio_run(bootstrap, topic, partitions, records),
        "kafka-python": lambda: kafka_python_run(bootstrap, topic, partitions, records),
        "java": lambda: java_run(bootstrap, topic, partitions, records),
        "java-warm": lambda: java_warm_run(bootstrap, topic, partitions, records),
        "aiokafka": lambda: aiokafka_run(bootstrap, topic, partitions, records, False),
        "aiokafka-iter": lambda: aiokafka_run(bootstrap, topic, partitions, records, True),
    }
    base = split(name)[0]
    if base.endswith("-sdk"):  # OpenTelemetry's SDK in the process, tracing off
        noop_provider()
        base = base.removesuffix("-sdk")
    run = runs[base]()
    print(json.dumps({"seconds": run.seconds, "cpu": run.cpu}))


def measure(name: str, bootstrap: str, topic: str, args: argparse.Namespace) -> Run:
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, bootstrap, topic, str(args.partitions),
         str(args.records), str(args.value_size)],
        check=True, capture_output=True, text=True, timeout=900,
        env=child_env(name, args.baseline),
    )  # fmt: skip
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return Run(data["seconds"], data["cpu"])


def fill(bootstrap: str, topic: str, partitions: int, records: int, compression: str) -> None:
    import anyio

    from krafka import Producer

    async def run() -> None:
        async with Producer(bootstrap, linger=0.005, compression=compression) as producer:
            for i in range(records):
                await producer.send(topic, VALUE, partition=i % partitions)
            await producer.flush()

    anyio.run(run)


def report(results: dict[str, list[Run]], records: int) -> None:
    rates = {k: statistics.median(records / r.seconds for r in v) for k, v in results.items()}
    cpus = {k: statistics.median(r.cpu * 1e6 / records for r in v) for k, v in results.items()}
    brokers = {k: statistics.median(r.broker for r in v) for k, v in results.items()}
    print(f"{'client':16} {'M rec/s':>8}   {'CPU µs/rec':>10}   {'broker CPU s':>12}")
    for name in results:
        print(f"{name:16} {rates[name] / 1e6:8.3f}   {cpus[name]:10.2f}   {brokers[name]:12.2f}")
    for mine, peer in (
        ("krafka-otel", "krafka"),
        ("krafka-iter-otel", "krafka-iter"),
        ("krafka-otel", "krafka-sdk"),
        ("krafka-iter-otel", "krafka-iter-sdk"),
        ("krafka", "krafka@base"),
        ("krafka-iter", "krafka-iter@base"),
        ("krafka-arrow", "krafka-arrow@base"),
        ("krafka-arrow-otel", "krafka-arrow"),
        ("krafka-arrow", "aiokafka-arrow"),
        ("krafka-arrow", "krafka"),
        ("krafka-otel-metrics", "krafka"),
        ("krafka-sync", "krafka"),
        *(
            (mine, peer)
            for mine in ("krafka", "krafka-iter", "krafka-arrow", "krafka-sync")
            for peer in (
                "confluent-kafka", "confluent-aio", "aiokafka", "aiokafka-iter", "kafka-python",
                "java", "java-warm",
            )
        ),
    ):  # fmt: skip
        if mine in rates and peer in rates:
            same_round = paired_ratio(
                [1 / r.seconds for r in results[mine]], [1 / r.seconds for r in results[peer]]
            )
            ratio = Ratio(rates[mine] / rates[peer], same_round, cpus[mine] / cpus[peer])
            print(ratio.line(mine, peer))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        global VALUE
        VALUE = b"x" * int(sys.argv[7])
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=CLUSTERS, default="tansu")
    # At ~3.5 M records/s, two million keep krafka's timed part >= 0.5 s (BENCHMARKS.md).
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--compression", default="none", choices=("none", "lz4", "zstd"))
    parser.add_argument("--mock", action="store_true", help="3-broker mock cluster, 12 partitions")
    parser.add_argument(
        "--clients",
        default=",".join(CLIENTS),
        help="also krafka-otel, krafka-iter-otel (tracing on, spans dropped); NAME@base: "
        "krafka from --baseline",
    )
    parser.add_argument("--baseline", help="a krafka source tree for the NAME@base clients")
    args = parser.parse_args()
    compile_krafka()
    if args.baseline:
        compile_krafka(Path(args.baseline))
    clients = args.clients.split(",")
    topic = f"bench-consume-{time.time_ns()}"
    if args.mock:
        from krafka.testing.mockcluster import MockCluster

        args.partitions = 12
        with MockCluster(3, topics={topic: 12}) as cluster:
            run_all(Broker("mock", cluster.bootstrap_servers, os.getpid()), topic, clients, args)
        return
    with broker(args.cluster) as running:
        create_topic(running.bootstrap, topic, args.partitions)
        run_all(running, topic, clients, args)


def run_all(running: Broker, topic: str, clients: list[str], args: argparse.Namespace) -> None:
    global VALUE
    VALUE = b"x" * args.value_size
    fill(running.bootstrap, topic, args.partitions, args.records, args.compression)
    results: dict[str, list[Run]] = {c: [] for c in clients}
    for rnd in range(args.rounds):
        for name in clients[rnd % len(clients) :] + clients[: rnd % len(clients)]:
            before = running.cpu()
            run = measure(name, running.bootstrap, topic, args)
            run = Run(run.seconds, run.cpu, running.cpu() - before)
            results[name].append(run)
            print(
                f"round {rnd + 1} {name:16} {args.records / run.seconds:>12,.0f} rec/s "
                f"{run.cpu / args.records * 1e6:6.2f} CPU µs/rec  broker {run.broker:5.2f} s",
                flush=True,
            )
    print(
        f"\n{running.kind}: {args.records:,} records x {args.value_size} B, "
        f"{args.partitions} partition(s), compression {args.compression}, medians of "
        f"{args.rounds} rounds"
    )
    report(results, args.records)


if __name__ == "__main__":
    main()
