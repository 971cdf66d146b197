"""End-to-end produce throughput: krafka beside librdkafka, aiokafka, kafka-python and Java.

One broker (`--cluster tansu`, the embedded Tansu, or `--cluster kafka`, one Apache Kafka 4.4
node), the same workload for each client: N records of `--value-size` bytes (100) to a topic of
`--partitions` partitions (1: every record to partition 0; more: each client's default
partitioner, sticky for records without a key), `--compression` (none), `--linger-ms` (5),
acks=1.
Every run is a fresh process; runs alternate between clients (round 1: a, b, c; round 2: a, b,
c; ...), and medians of records/s, client CPU µs per record (`time.process_time`, which includes
librdkafka's threads; for Java the whole JVM's CPU) and the broker's CPU seconds during the run
are printed with krafka's ratios to the peers doing the same work. The clock starts after a
warm-up record was delivered (connections, metadata and producer ids are not counted).

Peers: `confluent-kafka` (the sync API, `produce` + one `flush`), `confluent-aio`
(`confluent_kafka.aio.AIOProducer`, every future awaited), `aiokafka` (its compiled codec),
`kafka-python`, and `java`: Kafka's own `org.apache.kafka.tools.ProducerPerformance` (a callback
per record, i.e. every delivery confirmed) at the same batch size, linger and acks, after an
untimed warm-up run of the JVM tool; its rate is the tool's own, its CPU the JVM process tree's
(start-up and JIT included, so it is an upper bound). `java-warm` is the same work in a small
program of ours (`benches/java/KrafkaBench.java`, compiled with `compile_java`): one
KafkaProducer sends the N records twice, a callback per record, and the second, JIT-warm round is
timed, its CPU the JVM's process CPU over that round.

Variants (acks=1 unless named -idempotent):

* flush only - send everything, then one `flush()`: nobody looks at single deliveries;
* `-confirm` - every record's delivery is confirmed: krafka and aiokafka keep each `send`'s
  handle / future and await it, librdkafka calls an `on_delivery` callback per record;
* `-idempotent` - acks=all with idempotence on, flush only, on both sides;
* `-tasks` - `send_and_wait` in 1000 concurrent tasks (the other way asyncio code confirms
  every record; not run by default);
* `krafka-sync`, `krafka-sync-confirm` - the same through the blocking `krafka.sync.Producer`,
  compared with the async API;
* `krafka-many`, `krafka-sync-many` - the `-confirm` work in bulk: the records go out through
  `send_many` in chunks of `BULK_CHUNK` values (each chunk's list built inside the clock), and
  every chunk's one handle / future is awaited (all its records delivered), compared with
  `krafka-confirm` (not run by default);
* `-otel` - tracing on (`krafka.io.tracing`'s default mode: a span per batch), an SDK tracer
  provider exporting to nowhere; `krafka-otel-span` sends inside a sampled application span
  (every record carries its `traceparent`); `-otel-records` - the opt-in `trace_records=True`
  (an SDK span per record); `NAME@base` - NAME from `--baseline DIR` (not run by default);
* `krafka-otel-metrics-confirm` - `krafka-confirm` recording OpenTelemetry messaging metrics (an SDK
  meter provider whose reader never exports), compared with it (not run by default).

    python benches/e2e.py --cluster kafka [--records 1000000] [--rounds 5] [--partitions 1]
        [--value-size 100] [--compression none|lz4|zstd] [--clients krafka,java,...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cluster import CLUSTERS, Broker, broker, create_topic
from _installed import compile_krafka
from _otel import child_env, source_root, split, tracing_options
from _timing import Ratio, paired_ratio

source_root(__file__)

VALUE = b"x" * 100
#: Producer settings shared by every client (librdkafka's names).
LINGER_MS = 5
BATCH_BYTES = 1_000_000  # krafka's and librdkafka's default; given to every other client
PARTITION: int | None = 0
COMPRESSION = "none"


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


# -- krafka ---------------------------------------------------------------------------------------


TASKS = 1000


def krafka_run(
    bootstrap: str,
    topic: str,
    n: int,
    acks: int | str,
    confirm: bool,
    tasks: bool = False,
    otel: bool = False,
    metrics: bool = False,
    trace_records: bool = False,
    in_span: bool = False,
) -> Run:
    import contextlib

    import anyio

    from krafka import Producer

    options = tracing_options("-otel" if otel else "")
    if trace_records:
        options["trace_records"] = True

    async def main() -> Run:
        async with (
            Producer(
                bootstrap_servers=bootstrap,
                acks=acks,
                linger=LINGER_MS / 1000,
                compression=COMPRESSION,
                **options,
                meter_provider=meter_provider() if metrics else None,
            ) as producer,
            contextlib.AsyncExitStack() as stack,
        ):
            await producer.send_and_wait(topic, b"warm-up", partition=PARTITION)
            if in_span:
                tracer = options["tracer_provider"].get_tracer("bench")
                stack.enter_context(tracer.start_as_current_span("job"))
            start = _clock()
            send = producer.send
            if tasks:

                async def worker() -> None:
                    for _ in range(n // TASKS):
                        await producer.send_and_wait(topic, VALUE, partition=PARTITION)

                async with anyio.create_task_group() as tg:
                    for _ in range(TASKS):
                        tg.start_soon(worker)
            elif confirm:
                handles = [await send(topic, VALUE, partition=PARTITION) for _ in range(n)]
                for handle in handles:
                    await handle
            else:
                for _ in range(n):
                    await send(topic, VALUE, partition=PARTITION)
                await producer.flush()
            return _since(start)

    return asyncio.run(main())


def meter_provider() -> object:
    """An OpenTelemetry SDK meter provider whose reader never exports (the metrics' recording
    cost alone)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    return MeterProvider(metric_readers=[InMemoryMetricReader()])


# -- confluent-kafka ------------------------------------------------------------------------------


def confluent_run(bootstrap: str, topic: str, n: int, idempotent: bool, confirm: bool) -> Run:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all" if idempotent else 1,
            "enable.idempotence": idempotent,
            "linger.ms": LINGER_MS,
            "compression.type": COMPRESSION,
        }
    )
    producer.produce(topic, b"warm-up", partition=PARTITION or 0)
    producer.flush()
    confirmed = 0

    def delivered(err: object, msg: object) -> None:
        nonlocal confirmed
        if err is None:
            confirmed += 1

    start = _clock()
    produce, poll = producer.produce, producer.poll
    options: dict[str, object] = {} if PARTITION is None else {"partition": PARTITION}
    if confirm:
        options["on_delivery"] = delivered
    for _ in range(n):
        while True:
            try:
                produce(topic, VALUE, **options)
                break
            except BufferError:  # queue.buffering.max.messages reached: serve the reports
                poll(0.001)
    producer.flush()
    run = _since(start)
    assert not confirm or confirmed == n, confirmed
    return run


# -- aiokafka -------------------------------------------------------------------------------------


def aiokafka_run(bootstrap: str, topic: str, n: int, confirm: bool, tasks: bool = False) -> Run:
    import aiokafka

    async def main() -> Run:
        producer = aiokafka.AIOKafkaProducer(
            bootstrap_servers=bootstrap,
            acks=1,
            linger_ms=LINGER_MS,
            max_batch_size=BATCH_BYTES,
            compression_type=None if COMPRESSION == "none" else COMPRESSION,
        )
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"warm-up", partition=PARTITION)
            start = _clock()
            if tasks:

                async def worker() -> None:
                    for _ in range(n // TASKS):
                        await producer.send_and_wait(topic, VALUE, partition=PARTITION)

                await asyncio.gather(*(worker() for _ in range(TASKS)))
            elif confirm:
                futures = [await producer.send(topic, VALUE, partition=PARTITION) for _ in range(n)]
                for future in futures:
                    await future
            else:
                for _ in range(n):
                    await producer.send(topic, VALUE, partition=PARTITION)
                await producer.flush()
            return _since(start)
        finally:
            await producer.stop()

    return asyncio.run(main())


# -- confluent-kafka's asyncio API ----------------------------------------------------------------


def confluent_aio_run(bootstrap: str, topic: str, n: int) -> Run:
    """`AIOProducer.produce` returns a future per record; every one is awaited (it batches
    produce calls into a thread pool, its documented way)."""
    from confluent_kafka.aio import AIOProducer

    async def main() -> Run:
        producer = AIOProducer(
            {
                "bootstrap.servers": bootstrap,
                "acks": 1,
                "linger.ms": LINGER_MS,
                "compression.type": COMPRESSION,
            }
        )
        try:
            options = {} if PARTITION is None else {"partition": PARTITION}
            await (await producer.produce(topic, b"warm-up", partition=PARTITION or 0))
            start = _clock()
            futures = [await producer.produce(topic, VALUE, **options) for _ in range(n)]
            await producer.flush()
            for future in futures:
                await future
            return _since(start)
        finally:
            await producer.close()

    return asyncio.run(main())


# -- kafka-python ---------------------------------------------------------------------------------


def kafka_python_run(bootstrap: str, topic: str, n: int) -> Run:
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        acks=1,
        linger_ms=LINGER_MS,
        batch_size=BATCH_BYTES,
        compression_type=None if COMPRESSION == "none" else COMPRESSION,
    )
    producer.send(topic, b"warm-up", partition=PARTITION or 0).get(timeout=30)
    start = _clock()
    send = producer.send
    for _ in range(n):
        send(topic, VALUE, partition=PARTITION)
    producer.flush()
    run = _since(start)
    producer.close()
    return run


# -- the Java client (Kafka's ProducerPerformance) -------------------------------------------------


def java_run(bootstrap: str, topic: str, n: int) -> Run:
    """ProducerPerformance after an untimed warm-up run of it; the tool's rate, the JVM's CPU."""
    from _cluster import java, run_java

    def command(records: int) -> list[str]:
        return java(
            "org.apache.kafka.tools.ProducerPerformance",
            "--topic", topic, "--num-records", str(records), "--record-size", str(len(VALUE)),
            "--throughput", "-1", "--producer-props", f"bootstrap.servers={bootstrap}",
            "acks=1", f"linger.ms={LINGER_MS}", f"batch.size={BATCH_BYTES}",
            f"compression.type={COMPRESSION}",
        )  # fmt: skip

    run_java(command(max(1000, n // 5)))
    out, cpu = run_java(command(n))
    summary = [line for line in out.splitlines() if "records sent" in line][-1]
    rate = float(summary.split(",")[1].split()[0])
    return Run(n / rate, cpu)


def java_warm_run(bootstrap: str, topic: str, n: int) -> Run:
    """`benches/java/KrafkaBench.java produce`: one KafkaProducer sends N records twice, each
    delivery confirmed by a callback; the second (JIT-warm) round's time and process CPU."""
    from _cluster import bench_classes, java, run_java

    partitions = "1" if PARTITION == 0 else "0"
    out, _ = run_java(
        java(
            "KrafkaBench", "produce", bootstrap, topic, str(n), str(len(VALUE)), partitions,
            str(LINGER_MS), str(BATCH_BYTES), COMPRESSION, classes=bench_classes(),
        )
    )  # fmt: skip
    data = json.loads(out.strip().splitlines()[-1])
    return Run(data["seconds"], data["cpu"])


CLIENTS: dict[str, Callable[[str, str, int], Run]] = {
    "krafka": lambda b, t, n: krafka_run(b, t, n, 1, confirm=False),
    "confluent-kafka": lambda b, t, n: confluent_run(b, t, n, False, confirm=False),
    "aiokafka": lambda b, t, n: aiokafka_run(b, t, n, confirm=False),
    "krafka-confirm": lambda b, t, n: krafka_run(b, t, n, 1, confirm=True),
    "confluent-confirm": lambda b, t, n: confluent_run(b, t, n, False, confirm=True),
    "aiokafka-confirm": lambda b, t, n: aiokafka_run(b, t, n, confirm=True),
    "krafka-tasks": lambda b, t, n: krafka_run(b, t, n, 1, confirm=True, tasks=True),
    "aiokafka-tasks": lambda b, t, n: aiokafka_run(b, t, n, confirm=True, tasks=True),
    "krafka-idempotent": lambda b, t, n: krafka_run(b, t, n, "all", confirm=False),
    "confluent-idempotent": lambda b, t, n: confluent_run(b, t, n, True, confirm=False),
    "confluent-aio": confluent_aio_run,
    "kafka-python": kafka_python_run,
    "java": java_run,
    "java-warm": java_warm_run,
    "krafka-otel": lambda b, t, n: krafka_run(b, t, n, 1, confirm=False, otel=True),
    "krafka-confirm-otel": lambda b, t, n: krafka_run(b, t, n, 1, confirm=True, otel=True),
    "krafka-otel-span": lambda b, t, n: krafka_run(
        b, t, n, 1, confirm=False, otel=True, in_span=True
    ),
    "krafka-otel-records": lambda b, t, n: krafka_run(
        b, t, n, 1, confirm=False, otel=True, trace_records=True
    ),
    "krafka-confirm-otel-records": lambda b, t, n: krafka_run(
        b, t, n, 1, confirm=True, otel=True, trace_records=True
    ),
}
DEFAULT_CLIENTS = (
    "krafka",
    "confluent-kafka",
    "aiokafka",
    "kafka-python",
    "krafka-confirm",
    "confluent-confirm",
    "confluent-aio",
    "aiokafka-confirm",
    "java",
    "java-warm",
    "krafka-sync",
    "krafka-sync-confirm",
)
#: krafka variant -> the peers doing the same work.
PEERS = {
    "krafka": ("confluent-kafka", "aiokafka", "kafka-python", "java", "java-warm", "krafka@base"),
    "krafka-confirm": (
        "confluent-confirm",
        "confluent-aio",
        "aiokafka-confirm",
        "java",
        "java-warm",
        "krafka-confirm@base",
    ),
    "krafka-tasks": ("confluent-confirm", "aiokafka-tasks"),
    "krafka-idempotent": ("confluent-idempotent",),
    "krafka-otel": ("krafka",),
    "krafka-confirm-otel": ("krafka-confirm",),
    "krafka-otel-span": ("krafka",),
    "krafka-otel-records": ("krafka",),
    "krafka-confirm-otel-records": ("krafka-confirm",),
}


# -- krafka.sync (the blocking facade, beside the async API) ---------------------------------------


def krafka_sync_run(bootstrap: str, topic: str, n: int, confirm: bool) -> Run:
    """The async `krafka` workload through `krafka.sync.Producer` (its own loop thread):
    `send` returns a `concurrent.futures.Future`; `-confirm` calls `result()` on every one."""
    from krafka.sync import Producer

    with Producer(
        bootstrap_servers=bootstrap, acks=1, linger=LINGER_MS / 1000, compression=COMPRESSION
    ) as producer:
        producer.send_and_wait(topic, b"warm-up", partition=PARTITION)
        start = _clock()
        send = producer.send
        if confirm:
            futures = [send(topic, VALUE, partition=PARTITION) for _ in range(n)]
            for future in futures:
                future.result()
        else:
            for _ in range(n):
                send(topic, VALUE, partition=PARTITION)
            producer.flush()
        return _since(start)


#: Records per `send_many` call in the bulk variants (what a Spark task's Arrow batch holds).
BULK_CHUNK = 10_000


def krafka_many_run(bootstrap: str, topic: str, n: int) -> Run:
    """`krafka-confirm`'s work through `send_many`: one handle per chunk, all awaited."""
    from krafka import Producer

    async def main() -> Run:
        async with Producer(
            bootstrap_servers=bootstrap, acks=1, linger=LINGER_MS / 1000, compression=COMPRESSION
        ) as producer:
            await producer.send_and_wait(topic, b"warm-up", partition=PARTITION)
            start = _clock()
            send_many = producer.send_many
            bulks = [
                await send_many(topic, [VALUE] * min(BULK_CHUNK, n - first), partition=PARTITION)
                for first in range(0, n, BULK_CHUNK)
            ]
            for bulk in bulks:
                await bulk
            return _since(start)

    return asyncio.run(main())


def krafka_sync_many_run(bootstrap: str, topic: str, n: int) -> Run:
    """`krafka-many` through `krafka.sync.Producer`: one `Future` per chunk, all waited on."""
    from krafka.sync import Producer

    with Producer(
        bootstrap_servers=bootstrap, acks=1, linger=LINGER_MS / 1000, compression=COMPRESSION
    ) as producer:
        producer.send_and_wait(topic, b"warm-up", partition=PARTITION)
        start = _clock()
        send_many = producer.send_many
        futures = [
            send_many(topic, [VALUE] * min(BULK_CHUNK, n - first), partition=PARTITION)
            for first in range(0, n, BULK_CHUNK)
        ]
        for future in futures:
            future.result()
        return _since(start)


CLIENTS.update(
    {
        "krafka-many": krafka_many_run,
        "krafka-sync-many": krafka_sync_many_run,
        "krafka-sync": lambda b, t, n: krafka_sync_run(b, t, n, confirm=False),
        "krafka-sync-confirm": lambda b, t, n: krafka_sync_run(b, t, n, confirm=True),
    }
)
PEERS.update(
    {
        "krafka-sync": ("krafka",),
        "krafka-sync-confirm": ("krafka-confirm",),
        "krafka-many": ("krafka-confirm", "confluent-confirm", "java-warm"),
        "krafka-sync-many": ("krafka-sync-confirm", "krafka-many", "krafka-confirm"),
    }
)
CLIENTS["krafka-otel-metrics-confirm"] = lambda b, t, n: krafka_run(
    b, t, n, 1, confirm=True, metrics=True
)
PEERS["krafka-otel-metrics-confirm"] = ("krafka-confirm",)


def configure(value_size: int, partitions: int, compression: str, linger_ms: int) -> None:
    """Set this process's workload (a child's, from its command line)."""
    global VALUE, PARTITION, COMPRESSION, LINGER_MS
    VALUE = b"x" * value_size
    PARTITION = 0 if partitions == 1 else None
    COMPRESSION = compression
    LINGER_MS = linger_ms


def topic_of(name: str) -> str:
    return f"bench-{name.replace('@', '-')}"


def child(name: str, bootstrap: str, records: int) -> None:
    """One measured run in this (fresh) process; prints it as JSON."""
    run = CLIENTS[split(name)[0]](bootstrap, topic_of(name), records)
    print(json.dumps({"seconds": run.seconds, "cpu": run.cpu}))


def measure(name: str, broker: Broker, args: argparse.Namespace) -> Run:
    broker_cpu = broker.cpu()
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, "--bootstrap", broker.bootstrap,
         "--records", str(args.records), "--value-size", str(args.value_size),
         "--partitions", str(args.partitions), "--compression", args.compression,
         "--linger-ms", str(args.linger_ms)],
        check=True, capture_output=True, text=True, env=child_env(name, args.baseline),
        timeout=900,
    )  # fmt: skip
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return Run(data["seconds"], data["cpu"], broker.cpu() - broker_cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=CLUSTERS, default="tansu")
    # At ~2 M records/s, a million keeps krafka's timed part >= 0.5 s (BENCHMARKS.md: shorter,
    # one-off costs such as the process's first full garbage collection weigh in the ratios).
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--compression", default="none", choices=("none", "lz4", "zstd"))
    parser.add_argument("--linger-ms", type=int, default=LINGER_MS, help="every client's linger")
    parser.add_argument(
        "--clients", default=",".join(DEFAULT_CLIENTS), help=f"any of {', '.join(CLIENTS)}"
    )
    parser.add_argument("--baseline", help="a krafka source tree for the NAME@base clients")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    args = parser.parse_args()
    compile_krafka()
    if args.baseline:
        compile_krafka(Path(args.baseline))
    configure(args.value_size, args.partitions, args.compression, args.linger_ms)
    if args.child:
        child(args.child, args.bootstrap, args.records)
        return
    names = args.clients.split(",")
    results: dict[str, list[Run]] = {name: [] for name in names}
    with broker(args.cluster) as running:
        for name in names:
            create_topic(running.bootstrap, topic_of(name), args.partitions)
        for rnd in range(args.rounds):
            for name in names[rnd % len(names) :] + names[: rnd % len(names)]:
                run = measure(name, running, args)
                results[name].append(run)
                print(
                    f"round {rnd + 1} {name:20s} {args.records / run.seconds:>12,.0f} rec/s "
                    f"{run.cpu / args.records * 1e6:6.2f} CPU µs/rec  broker {run.broker:5.2f} s",
                    flush=True,
                )
    print(
        f"\n{args.cluster}: medians over {args.rounds} rounds (fresh processes), "
        f"{args.records:,} x {args.value_size} B, {args.partitions} partition(s), "
        f"compression {args.compression}, linger {LINGER_MS} ms, batch {BATCH_BYTES:,} B; acks=1 "
        "except -idempotent (acks=all, idempotence on, both sides):"
    )
    report(results, args.records)


def report(results: dict[str, list[Run]], records: int) -> None:
    medians = {
        name: (
            statistics.median(records / r.seconds for r in runs),
            statistics.median(r.cpu / records * 1e6 for r in runs),
            statistics.median(r.broker for r in runs),
        )
        for name, runs in results.items()
    }
    print(f"  {'client':20s} {'rec/s':>12s}  {'CPU µs/rec':>10s}  {'broker CPU s':>12s}")
    for name, (rate, cpu, broker_cpu) in medians.items():
        print(f"  {name:20s} {rate:>12,.0f}  {cpu:10.2f}  {broker_cpu:12.2f}")
    for ours, peers in PEERS.items():
        for peer in peers:
            if ours in medians and peer in medians:
                (rate, cpu, _), (peer_rate, peer_cpu, _) = medians[ours], medians[peer]
                same_round = paired_ratio(
                    [1 / r.seconds for r in results[ours]], [1 / r.seconds for r in results[peer]]
                )
                print("  " + Ratio(rate / peer_rate, same_round, cpu / peer_cpu).line(ours, peer))


if __name__ == "__main__":
    main()
