"""End-to-end produce throughput: krafka beside confluent-kafka (librdkafka) and aiokafka.

One local Tansu broker, one process, the same workload for each client: N records with
100-byte values to one partition, acks=1, no compression, linger 5 ms. Each client runs
`--rounds` times (interleaved); medians of records/s and client CPU µs per record
(`time.process_time`, which includes librdkafka's threads) are printed with krafka's ratios.

    python benches/e2e.py [--records 200000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from krafka.testing import LocalBroker

VALUE = b"x" * 100


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    cpu: float


def measure(fn: Callable[[], None]) -> Run:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return Run(time.perf_counter() - wall, time.process_time() - cpu)


def bench_krafka(bootstrap: str, topic: str, n: int, acks: int | str = 1) -> Run:
    from krafka import Producer

    async def main() -> Run:
        async with Producer(
            bootstrap_servers=bootstrap, acks=acks, linger=0.005, compression="none"
        ) as producer:
            await producer.send_and_wait(topic, b"warm-up", partition=0)
            wall, cpu = time.perf_counter(), time.process_time()
            send = producer.send
            for _ in range(n):
                await send(topic, VALUE, partition=0)
            await producer.flush()
            return Run(time.perf_counter() - wall, time.process_time() - cpu)

    return asyncio.run(main())


def bench_confluent(bootstrap: str, topic: str, n: int, idempotent: bool = False) -> Run:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all" if idempotent else 1,
            "enable.idempotence": idempotent,
            "linger.ms": 5,
            "compression.type": "none",
        }
    )
    producer.produce(topic, b"warm-up", partition=0)
    producer.flush()

    def run() -> None:
        produce, poll = producer.produce, producer.poll
        for _ in range(n):
            while True:
                try:
                    produce(topic, VALUE, partition=0)
                    break
                except BufferError:  # queue.buffering.max.messages reached: let it drain
                    poll(0.001)
        producer.flush()

    return measure(run)


def bench_aiokafka(bootstrap: str, topic: str, n: int) -> Run:
    import aiokafka

    async def main() -> Run:
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5)
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"warm-up", partition=0)
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(n):
                await producer.send(topic, VALUE, partition=0)
            await producer.flush()
            return Run(time.perf_counter() - wall, time.process_time() - cpu)
        finally:
            await producer.stop()

    return asyncio.run(main())


CLIENTS: dict[str, Callable[[str, str, int], Run]] = {
    "krafka": bench_krafka,
    "confluent-kafka": bench_confluent,
    "aiokafka": bench_aiokafka,
    # Not run by default: acks=all with idempotence (krafka's default settings).
    "krafka-idempotent": lambda b, t, n: bench_krafka(b, t, n, acks="all"),
    "confluent-idempotent": lambda b, t, n: bench_confluent(b, t, n, idempotent=True),
}
DEFAULT_CLIENTS = ("krafka", "confluent-kafka", "aiokafka")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--clients", default=",".join(DEFAULT_CLIENTS), help=f"any of {', '.join(CLIENTS)}"
    )
    args = parser.parse_args()
    names = args.clients.split(",")
    results: dict[str, list[Run]] = {name: [] for name in names}
    with LocalBroker() as broker:
        for rnd in range(args.rounds):
            for name in names:
                run = CLIENTS[name](broker.bootstrap_servers, f"bench-{name}", args.records)
                results[name].append(run)
                print(
                    f"round {rnd + 1} {name:16s} {args.records / run.seconds:>12,.0f} rec/s "
                    f"{run.cpu / args.records * 1e6:6.2f} CPU µs/rec",
                    flush=True,
                )
    medians = {
        name: (
            statistics.median(args.records / r.seconds for r in runs),
            statistics.median(r.cpu / args.records * 1e6 for r in runs),
        )
        for name, runs in results.items()
    }
    print(
        f"\nmedians over {args.rounds} rounds, {args.records:,} x 100 B, 1 partition, "
        "acks=1 (the -idempotent variants: acks=all, idempotence on):"
    )
    for name, (rate, cpu) in medians.items():
        print(f"  {name:16s} {rate:>12,.0f} rec/s  {cpu:6.2f} CPU µs/rec")
    for ours in ("krafka", "krafka-idempotent"):
        if ours in medians:
            for name, (rate, _) in medians.items():
                if not name.startswith("krafka"):
                    print(f"  {ours} / {name}: {medians[ours][0] / rate:.2f}x")


if __name__ == "__main__":
    main()
