"""End-to-end latency at fixed rates, and commit latency: krafka beside librdkafka and Java.

One broker (`--cluster tansu|kafka`), one partition. In each run (a fresh process) a producer
sends records of `--value-size` bytes at a fixed rate to partition 0 while a consumer of the same
process, positioned at the log's end, reads them; every record carries its index and its
*intended* send time (start + i / rate, so a client that falls behind shows it rather than
hiding it), and its latency is the time it was received minus that. The first second is a
warm-up; p50/p99/p99.9 of the next `--seconds` are printed per client, rate and linger (0 ms and
each client's default: 5 ms for all three) and in-flight limit (`--in-flight`: each client's
default, 5 for all three with idempotence, and/or a number for
`max.in.flight.requests.per.connection`), medians over the rounds, with the client's CPU µs per
record and the broker's CPU seconds.

Clients: `krafka` (async Producer and Consumer, `async for`), `confluent-kafka` (the sync
Producer in the main thread, a Consumer's `consume(num_messages=...)` in another thread, which
librdkafka allows), `java` (`benches/java/KrafkaBench.java latency`: a KafkaProducer in the main
thread and a KafkaConsumer's `poll` in another, compiled against Kafka's jars with
`krafka.testing.runtime.compile_java`; `EndToEndLatency` only measures one record at a time).
acks=1 on every producer.

Commit latency (`--commit`): a consumer in a group commits one partition's offset
synchronously `--commits` times after 20 warm-up commits; p50/p99/p99.9 per client.

    python benches/latency.py --cluster kafka [--rates 1000,10000,100000] [--lingers 0,default]
        [--in-flight default,1] [--seconds 3] [--rounds 5] [--clients krafka,confluent-kafka,java]
        [--commit]
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cluster import CLUSTERS, Broker, bench_classes, broker, create_topic, java, run_java
from _installed import compile_krafka
from _otel import child_env, source_root

source_root(__file__)

CLIENTS = ("krafka", "confluent-kafka", "java")
STAMP = struct.Struct(">qq")  # index, intended send time (perf_counter_ns; -1: a marker)


def percentiles(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)

    def at(q: float) -> float:
        return ordered[max(0, min(len(ordered) - 1, int(q * len(ordered) + 0.999999) - 1))]

    return {"p50": at(0.5), "p99": at(0.99), "p999": at(0.999)}


def schedule(rate: int, seconds: float) -> tuple[int, int]:
    """(records in all, records of the warm-up second)."""
    return int(rate * (seconds + 1)), rate


# -- krafka ---------------------------------------------------------------------------------------


def krafka_latency(
    bootstrap: str, topic: str, rate: int, seconds: float, linger: str, size: int, in_flight: str
) -> dict[str, float]:
    import anyio

    from krafka import Consumer, Producer, TopicPartition

    total, warm = schedule(rate, seconds)
    padding = b"x" * max(0, size - STAMP.size)
    latencies = [0.0] * (total - warm)
    options: dict[str, float] = {} if linger == "default" else {"linger": int(linger) / 1000}
    if in_flight != "default":
        options["max_in_flight_requests_per_connection"] = int(in_flight)

    async def run() -> dict[str, float]:
        async with (
            Producer(bootstrap, acks=1, **options) as producer,
            Consumer(bootstrap, auto_offset_reset="latest") as consumer,
        ):
            partition = TopicPartition(topic, 0)
            await consumer.assign([partition])
            await consumer.seek_to_end(partition)
            await consumer.position(partition)
            ready = anyio.Event()

            async def read() -> None:
                seen = 0
                async for record in consumer:
                    now = time.perf_counter_ns()
                    index, due = STAMP.unpack_from(record.value)
                    if index < 0:
                        ready.set()
                        continue
                    if index >= warm:
                        latencies[index - warm] = (now - due) / 1e3
                    seen += 1
                    if seen == total:
                        return

            async with anyio.create_task_group() as tg:
                tg.start_soon(read)
                await producer.send_and_wait(topic, STAMP.pack(-1, 0) + padding, partition=0)
                await ready.wait()
                cpu = time.process_time()
                start = time.perf_counter_ns()
                interval = 1e9 / rate
                send = producer.send
                for i in range(total):
                    due = start + int(i * interval)
                    delay = due - time.perf_counter_ns()
                    if delay > 0:
                        await anyio.sleep(delay / 1e9)
                    elif i % 64 == 0:
                        await anyio.sleep(0)
                    await send(topic, STAMP.pack(i, due) + padding, partition=0)
            return {**percentiles(latencies), "cpu": time.process_time() - cpu, "records": total}

    return anyio.run(run)


def krafka_commit(bootstrap: str, topic: str, count: int) -> dict[str, float]:
    import anyio

    from krafka import Consumer, TopicPartition

    async def run() -> dict[str, float]:
        partition = TopicPartition(topic, 0)
        async with Consumer(bootstrap, group_id="bench-commit-krafka") as consumer:
            await consumer.assign([partition])
            times = []
            for i in range(-20, count):
                start = time.perf_counter_ns()
                await consumer.commit({partition: max(0, i)})
                if i >= 0:
                    times.append((time.perf_counter_ns() - start) / 1e3)
            return percentiles(times)

    return anyio.run(run)


# -- confluent-kafka ------------------------------------------------------------------------------


def confluent_latency(
    bootstrap: str, topic: str, rate: int, seconds: float, linger: str, size: int, in_flight: str
) -> dict[str, float]:
    from confluent_kafka import OFFSET_END, Consumer, Producer
    from confluent_kafka import TopicPartition as RdTopicPartition

    total, warm = schedule(rate, seconds)
    padding = b"x" * max(0, size - STAMP.size)
    latencies = [0.0] * (total - warm)
    config: dict[str, object] = {"bootstrap.servers": bootstrap, "acks": 1}
    if linger != "default":
        config["linger.ms"] = int(linger)
    if in_flight != "default":
        config["max.in.flight.requests.per.connection"] = int(in_flight)
    producer = Producer(config)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-latency",
            "enable.auto.commit": False,
            "fetch.queue.backoff.ms": 10,
        }
    )
    consumer.assign([RdTopicPartition(topic, 0, OFFSET_END)])
    ready = threading.Event()

    def read() -> None:
        seen = 0
        while seen < total:
            for message in consumer.consume(num_messages=1000, timeout=0.05):
                now = time.perf_counter_ns()
                index, due = STAMP.unpack_from(message.value())
                if index < 0:
                    ready.set()
                    continue
                if index >= warm:
                    latencies[index - warm] = (now - due) / 1e3
                seen += 1

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while not ready.is_set():
        producer.produce(topic, STAMP.pack(-1, 0) + padding, partition=0)
        producer.flush()
        ready.wait(1.0)
    cpu = time.process_time()
    start = time.perf_counter_ns()
    interval = 1e9 / rate
    produce, poll = producer.produce, producer.poll
    for i in range(total):
        due = start + int(i * interval)
        delay = due - time.perf_counter_ns()
        if delay > 0:
            time.sleep(delay / 1e9)
        value = STAMP.pack(i, due) + padding
        while True:
            try:
                produce(topic, value, partition=0)
                break
            except BufferError:  # queue.buffering.max.messages reached: serve the reports
                poll(0.001)
        if i % 1000 == 0:
            poll(0)
    producer.flush()
    reader.join()
    result = {**percentiles(latencies), "cpu": time.process_time() - cpu, "records": total}
    consumer.close()
    return result


def confluent_commit(bootstrap: str, topic: str, count: int) -> dict[str, float]:
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as RdTopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-commit-confluent",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([RdTopicPartition(topic, 0)])
    times = []
    for i in range(-20, count):
        start = time.perf_counter_ns()
        consumer.commit(offsets=[RdTopicPartition(topic, 0, max(0, i))], asynchronous=False)
        if i >= 0:
            times.append((time.perf_counter_ns() - start) / 1e3)
    consumer.close()
    return percentiles(times)


# -- Java -----------------------------------------------------------------------------------------


def java_latency(
    bootstrap: str, topic: str, rate: int, seconds: float, linger: str, size: int, in_flight: str
) -> dict[str, float]:
    command = java(
        "KrafkaBench", "latency", bootstrap, topic, str(rate), str(seconds), linger, str(size),
        in_flight, classes=bench_classes(),
    )  # fmt: skip
    result: dict[str, float] = json.loads(run_java(command)[0].strip().splitlines()[-1])
    return result


def java_commit(bootstrap: str, topic: str, count: int) -> dict[str, float]:
    command = java("KrafkaBench", "commit", bootstrap, topic, str(count), classes=bench_classes())
    result: dict[str, float] = json.loads(run_java(command)[0].strip().splitlines()[-1])
    return result


LATENCY = {"krafka": krafka_latency, "confluent-kafka": confluent_latency, "java": java_latency}
COMMIT = {"krafka": krafka_commit, "confluent-kafka": confluent_commit, "java": java_commit}


# -- the driver -----------------------------------------------------------------------------------


def child(argv: list[str]) -> None:
    kind, name, bootstrap, topic = argv[:4]
    if kind == "commit":
        result = COMMIT[name](bootstrap, topic, int(argv[4]))
    else:
        rate, seconds, linger, size = int(argv[4]), float(argv[5]), argv[6], int(argv[7])
        result = LATENCY[name](bootstrap, topic, rate, seconds, linger, size, argv[8])
    print(json.dumps(result))


def measure(running: Broker, argv: list[str]) -> dict[str, float]:
    before = running.cpu()
    out = subprocess.run(
        [sys.executable, __file__, "--child", *argv],
        check=True, capture_output=True, text=True, timeout=180, env=child_env(argv[1], None),
    )  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return {**result, "broker": running.cpu() - before}


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def latency_runs(running: Broker, clients: list[str], args: argparse.Namespace) -> None:
    print(
        f"\n{running.kind}: end-to-end latency µs (intended send -> received), 1 partition, "
        f"{args.value_size} B, acks=1, {args.seconds} s after a 1 s warm-up, medians of "
        f"{args.rounds} rounds"
    )
    print(
        f"{'rate/s':>8} {'linger':>7} {'in-flight':>9} {'client':16} {'p50':>9} {'p99':>9} "
        f"{'p99.9':>9} {'CPU µs/rec':>10} {'broker CPU s':>12}"
    )
    settings = [
        (int(rate), linger, in_flight)
        for rate in args.rates.split(",")
        for linger in args.lingers.split(",")
        for in_flight in args.in_flight.split(",")
    ]
    for rate, linger, in_flight in settings:
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in clients}
        for rnd in range(args.rounds):
            for name in clients[rnd % len(clients) :] + clients[: rnd % len(clients)]:
                topic = f"bench-latency-{name}"
                argv = ["latency", name, running.bootstrap, topic, str(rate),
                        str(args.seconds), linger, str(args.value_size), in_flight]  # fmt: skip
                runs[name].append(measure(running, argv))
        for name, results in runs.items():
            m = median_of(results)
            print(
                f"{rate:>8} {linger:>7} {in_flight:>9} {name:16} {m['p50']:9.0f} {m['p99']:9.0f} "
                f"{m['p999']:9.0f} {m['cpu'] / m['records'] * 1e6:10.2f} {m['broker']:12.2f}",
                flush=True,
            )


def commit_runs(running: Broker, clients: list[str], args: argparse.Namespace) -> None:
    print(f"\n{running.kind}: commit latency µs ({args.commits} synchronous commits)")
    print(f"{'client':16} {'p50':>9} {'p99':>9} {'p99.9':>9}")
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in clients}
    for rnd in range(args.rounds):
        for name in clients[rnd % len(clients) :] + clients[: rnd % len(clients)]:
            argv = ["commit", name, running.bootstrap, "bench-latency-commit", str(args.commits)]
            runs[name].append(measure(running, argv))
    for name, results in runs.items():
        m = median_of(results)
        print(f"{name:16} {m['p50']:9.0f} {m['p99']:9.0f} {m['p999']:9.0f}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=CLUSTERS, default="tansu")
    parser.add_argument("--rates", default="1000,10000,100000")
    parser.add_argument("--lingers", default="0,default", help="ms, or `default`")
    parser.add_argument(
        "--in-flight", default="default", help="max.in.flight.requests.per.connection, or `default`"
    )
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--commit", action="store_true", help="commit latency as well")
    parser.add_argument("--commit-only", action="store_true", help="commit latency only")
    parser.add_argument("--commits", type=int, default=500)
    args = parser.parse_args()
    compile_krafka()
    clients = args.clients.split(",")
    with broker(args.cluster) as running:
        for name in clients:
            create_topic(running.bootstrap, f"bench-latency-{name}", 1)
        create_topic(running.bootstrap, "bench-latency-commit", 1)
        if not args.commit_only:
            latency_runs(running, clients, args)
        if args.commit or args.commit_only:
            commit_runs(running, clients, args)


if __name__ == "__main__":
    main()
