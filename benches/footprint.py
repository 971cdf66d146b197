"""Footprint and start: resident memory of an idle and a busy producer and consumer per client,
and the time from a consumer's constructor to its first record.

One broker (`--cluster tansu|kafka`), a one-partition topic filled once with N records of
`--value-size` bytes. Each measurement is a fresh process (the interpreter or JVM and the client
library loaded, nothing else):

* consumer: `start` = seconds from the constructor to the first record (manual assignment from
  offset 0; connection, metadata and the first fetch included); `idle` = resident memory
  (VmRSS) once it arrived; `busy` = peak resident memory (VmHWM) after reading all N records;
* producer: `idle` = VmRSS after one record was delivered; `busy` = VmHWM after sending N more
  and a flush (linger 5 ms, acks=1).

Clients: `krafka`, `krafka-sync`, `confluent-kafka`, `aiokafka`, `kafka-python`, `java`
(`benches/java/KrafkaBench.java footprint`). Medians over `--rounds` alternating rounds.

    python benches/footprint.py --cluster kafka [--records 200000] [--rounds 5] [--clients ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cluster import CLUSTERS, bench_classes, broker, create_topic, java, run_java
from _installed import compile_krafka
from _otel import source_root

source_root(__file__)

CLIENTS = ("krafka", "krafka-sync", "confluent-kafka", "aiokafka", "kafka-python", "java")
BATCH = 10_000
Figures = dict[str, float]


def memory(key: str) -> float:
    """`VmRSS` (now) or `VmHWM` (peak) of this process, bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) * 1024
    raise LookupError(key)


# -- krafka ---------------------------------------------------------------------------------------


def krafka_consumer(bootstrap: str, topic: str, n: int) -> Figures:
    import anyio

    from krafka import Consumer, TopicPartition

    async def run() -> Figures:
        constructed = time.perf_counter()
        async with Consumer(
            bootstrap, auto_offset_reset="earliest", max_poll_records=BATCH
        ) as consumer:
            await consumer.assign([TopicPartition(topic, 0)])
            await consumer.recv()
            out = {"start": time.perf_counter() - constructed, "idle": memory("VmRSS")}
            seen = 1
            while seen < n:
                seen += sum(len(r.value) > 0 for r in await consumer.poll(timeout=1.0))
            return {**out, "busy": memory("VmHWM")}

    return anyio.run(run)


def krafka_producer(bootstrap: str, topic: str, n: int, value: bytes) -> Figures:
    import anyio

    from krafka import Producer

    async def run() -> Figures:
        async with Producer(bootstrap, acks=1, linger=0.005) as producer:
            await producer.send_and_wait(topic, value, partition=0)
            idle = memory("VmRSS")
            for _ in range(n):
                await producer.send(topic, value, partition=0)
            await producer.flush()
            return {"idle": idle, "busy": memory("VmHWM")}

    return anyio.run(run)


def krafka_sync_consumer(bootstrap: str, topic: str, n: int) -> Figures:
    from krafka import TopicPartition
    from krafka.sync import Consumer

    constructed = time.perf_counter()
    with Consumer(bootstrap, auto_offset_reset="earliest", max_poll_records=BATCH) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        seen = 0
        while not seen:
            seen += len(consumer.poll(timeout=1.0))
        out = {"start": time.perf_counter() - constructed, "idle": memory("VmRSS")}
        while seen < n:
            seen += sum(len(r.value) > 0 for r in consumer.poll(timeout=1.0))
        return {**out, "busy": memory("VmHWM")}


def krafka_sync_producer(bootstrap: str, topic: str, n: int, value: bytes) -> Figures:
    from krafka.sync import Producer

    with Producer(bootstrap, acks=1, linger=0.005) as producer:
        producer.send_and_wait(topic, value, partition=0)
        idle = memory("VmRSS")
        for _ in range(n):
            producer.send(topic, value, partition=0)
        producer.flush()
        return {"idle": idle, "busy": memory("VmHWM")}


# -- confluent-kafka ------------------------------------------------------------------------------


def confluent_consumer(bootstrap: str, topic: str, n: int) -> Figures:
    from confluent_kafka import Consumer, TopicPartition

    constructed = time.perf_counter()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-footprint",
            "enable.auto.commit": False,
            "fetch.queue.backoff.ms": 10,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    seen = 0
    while not seen:
        seen += len(consumer.consume(num_messages=BATCH, timeout=1.0))
    out = {"start": time.perf_counter() - constructed, "idle": memory("VmRSS")}
    while seen < n:
        seen += sum(len(m.value()) > 0 for m in consumer.consume(num_messages=BATCH, timeout=1.0))
    out["busy"] = memory("VmHWM")
    consumer.close()
    return out


def confluent_producer(bootstrap: str, topic: str, n: int, value: bytes) -> Figures:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 5})
    producer.produce(topic, value, partition=0)
    producer.flush()
    idle = memory("VmRSS")
    for _ in range(n):
        while True:
            try:
                producer.produce(topic, value, partition=0)
                break
            except BufferError:
                producer.poll(0.001)
    producer.flush()
    return {"idle": idle, "busy": memory("VmHWM")}


# -- aiokafka -------------------------------------------------------------------------------------


def aiokafka_consumer(bootstrap: str, topic: str, n: int) -> Figures:
    import asyncio

    from aiokafka import AIOKafkaConsumer, TopicPartition

    async def run() -> Figures:
        constructed = time.perf_counter()
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, 0)])
            await consumer.getone()
            out = {"start": time.perf_counter() - constructed, "idle": memory("VmRSS")}
            seen = 1
            while seen < n:
                batches = await consumer.getmany(timeout_ms=1000, max_records=BATCH)
                seen += sum(len(r.value) > 0 for rs in batches.values() for r in rs)
            return {**out, "busy": memory("VmHWM")}
        finally:
            await consumer.stop()

    return asyncio.run(run())


def aiokafka_producer(bootstrap: str, topic: str, n: int, value: bytes) -> Figures:
    import asyncio

    from aiokafka import AIOKafkaProducer

    async def run() -> Figures:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5)
        await producer.start()
        try:
            await producer.send_and_wait(topic, value, partition=0)
            idle = memory("VmRSS")
            for _ in range(n):
                await producer.send(topic, value, partition=0)
            await producer.flush()
            return {"idle": idle, "busy": memory("VmHWM")}
        finally:
            await producer.stop()

    return asyncio.run(run())


# -- kafka-python ---------------------------------------------------------------------------------


def kafka_python_consumer(bootstrap: str, topic: str, n: int) -> Figures:
    from kafka import KafkaConsumer, TopicPartition

    constructed = time.perf_counter()
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    consumer.assign([TopicPartition(topic, 0)])
    seen = 0
    while not seen:
        seen += sum(len(rs) for rs in consumer.poll(timeout_ms=1000).values())
    out = {"start": time.perf_counter() - constructed, "idle": memory("VmRSS")}
    while seen < n:
        batches = consumer.poll(timeout_ms=1000, max_records=BATCH)
        seen += sum(len(r.value) > 0 for rs in batches.values() for r in rs)
    out["busy"] = memory("VmHWM")
    consumer.close()
    return out


def kafka_python_producer(bootstrap: str, topic: str, n: int, value: bytes) -> Figures:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5)
    producer.send(topic, value, partition=0).get(timeout=30)
    idle = memory("VmRSS")
    for _ in range(n):
        producer.send(topic, value, partition=0)
    producer.flush()
    out = {"idle": idle, "busy": memory("VmHWM")}
    producer.close()
    return out


# -- Java -----------------------------------------------------------------------------------------


def java_role(role: str) -> Callable[..., Figures]:
    def run(bootstrap: str, topic: str, n: int, value: bytes = b"") -> Figures:
        command = java(
            "KrafkaBench", "footprint", bootstrap, topic, str(n), str(len(value) or 100), role,
            classes=bench_classes(),
        )  # fmt: skip
        result: Figures = json.loads(run_java(command)[0].strip().splitlines()[-1])
        return result

    return run


CONSUMERS: dict[str, Callable[[str, str, int], Figures]] = {
    "krafka": krafka_consumer,
    "krafka-sync": krafka_sync_consumer,
    "confluent-kafka": confluent_consumer,
    "aiokafka": aiokafka_consumer,
    "kafka-python": kafka_python_consumer,
    "java": java_role("consumer"),
}
PRODUCERS: dict[str, Callable[[str, str, int, bytes], Figures]] = {
    "krafka": krafka_producer,
    "krafka-sync": krafka_sync_producer,
    "confluent-kafka": confluent_producer,
    "aiokafka": aiokafka_producer,
    "kafka-python": kafka_python_producer,
    "java": java_role("producer"),
}


def child(role: str, name: str, bootstrap: str, topic: str, n: int, size: int) -> None:
    if role == "consumer":
        result = CONSUMERS[name](bootstrap, topic, n)
    else:
        result = PRODUCERS[name](bootstrap, f"{topic}-{name}", n, b"x" * size)
    print(json.dumps(result))


def measure(role: str, name: str, bootstrap: str, topic: str, args: argparse.Namespace) -> Figures:
    out = subprocess.run(
        [sys.executable, __file__, "--child", role, name, bootstrap, topic, str(args.records),
         str(args.value_size)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    result: Figures = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def fill(bootstrap: str, topic: str, n: int, value: bytes) -> None:
    import anyio

    from krafka import Producer

    async def run() -> None:
        async with Producer(bootstrap, linger=0.005) as producer:
            for _ in range(n):
                await producer.send(topic, value, partition=0)
            await producer.flush()

    anyio.run(run)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        role, name, bootstrap, topic, n, size = sys.argv[2:8]
        child(role, name, bootstrap, topic, int(n), int(size))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=CLUSTERS, default="tansu")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    args = parser.parse_args()
    compile_krafka()
    clients = args.clients.split(",")
    topic = f"bench-footprint-{time.time_ns()}"
    with broker(args.cluster) as running:
        create_topic(running.bootstrap, topic, 1)
        for name in clients:
            create_topic(running.bootstrap, f"{topic}-{name}", 1)
        fill(running.bootstrap, topic, args.records, b"x" * args.value_size)
        runs: dict[tuple[str, str], list[Figures]] = {}
        for rnd in range(args.rounds):
            for name in clients[rnd % len(clients) :] + clients[: rnd % len(clients)]:
                for role in ("consumer", "producer"):
                    figures = measure(role, name, running.bootstrap, topic, args)
                    runs.setdefault((name, role), []).append(figures)
    print(
        f"\n{args.cluster}: {args.records:,} records x {args.value_size} B, medians of "
        f"{args.rounds} fresh processes; MB resident (idle: VmRSS, busy: peak VmHWM)"
    )
    print(f"{'client':16} {'start s':>8} {'cons idle':>10} {'cons busy':>10} "
          f"{'prod idle':>10} {'prod busy':>10}")  # fmt: skip
    for name in clients:
        consumer = {
            k: statistics.median(r[k] for r in runs[name, "consumer"])
            for k in runs[name, "consumer"][0]
        }
        producer = {
            k: statistics.median(r[k] for r in runs[name, "producer"])
            for k in runs[name, "producer"][0]
        }
        mb = 1024 * 1024
        print(
            f"{name:16} {consumer['start']:8.3f} {consumer['idle'] / mb:10.1f} "
            f"{consumer['busy'] / mb:10.1f} {producer['idle'] / mb:10.1f} "
            f"{producer['busy'] / mb:10.1f}"
        )


if __name__ == "__main__":
    main()
