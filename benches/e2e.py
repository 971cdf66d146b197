"""End-to-end produce throughput: krafka beside confluent-kafka (librdkafka) and aiokafka.

One local Tansu broker, the same workload for each client: N records with 100-byte values to
one partition, no compression, linger 5 ms. Every run is a fresh process; runs alternate
between clients (round 1: a, b, c; round 2: a, b, c; ...), and medians of records/s and client
CPU µs per record (`time.process_time`, which includes librdkafka's threads) are printed with
krafka's ratios to the peer doing the same work. The clock starts after a warm-up record was
delivered (connections, metadata and producer ids are not counted).

Variants (acks=1 unless named -idempotent):

* flush only - send everything, then one `flush()`: nobody looks at single deliveries;
* `-confirm` - every record's delivery is confirmed: krafka and aiokafka keep each `send`'s
  handle / future and await it, librdkafka calls an `on_delivery` callback per record;
* `-idempotent` - acks=all with idempotence on, flush only, on both sides;
* `-tasks` - `send_and_wait` in 1000 concurrent tasks (the other way asyncio code confirms
  every record; not run by default);
* `krafka-sync`, `krafka-sync-confirm` - the same through the blocking `krafka.sync.Producer`,
  compared with the async API (not run by default);
* `-otel` - tracing on (`krafka.io.tracing`'s default mode: a span per batch), an SDK tracer
  provider exporting to nowhere; `krafka-otel-span` sends inside a sampled application span
  (every record carries its `traceparent`); `-otel-records` - the opt-in `trace_records=True`
  (an SDK span per record); `NAME@base` - NAME from `--baseline DIR` (not run by default);
* `krafka-otel-metrics-confirm` - `krafka-confirm` recording OpenTelemetry messaging metrics (an SDK
  meter provider whose reader never exports), compared with it (not run by default).

    python benches/e2e.py [--records 200000] [--rounds 3] [--clients krafka,confluent-kafka]
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
from _otel import child_env, source_root, split, tracing_options

source_root(__file__)

VALUE = b"x" * 100


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    cpu: float


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
                linger=0.005,
                compression="none",
                **options,
                meter_provider=meter_provider() if metrics else None,
            ) as producer,
            contextlib.AsyncExitStack() as stack,
        ):
            await producer.send_and_wait(topic, b"warm-up", partition=0)
            if in_span:
                tracer = options["tracer_provider"].get_tracer("bench")
                stack.enter_context(tracer.start_as_current_span("job"))
            start = _clock()
            send = producer.send
            if tasks:

                async def worker() -> None:
                    for _ in range(n // TASKS):
                        await producer.send_and_wait(topic, VALUE, partition=0)

                async with anyio.create_task_group() as tg:
                    for _ in range(TASKS):
                        tg.start_soon(worker)
            elif confirm:
                handles = [await send(topic, VALUE, partition=0) for _ in range(n)]
                for handle in handles:
                    await handle
            else:
                for _ in range(n):
                    await send(topic, VALUE, partition=0)
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
            "linger.ms": 5,
            "compression.type": "none",
        }
    )
    producer.produce(topic, b"warm-up", partition=0)
    producer.flush()
    confirmed = 0

    def delivered(err: object, msg: object) -> None:
        nonlocal confirmed
        if err is None:
            confirmed += 1

    start = _clock()
    produce, poll = producer.produce, producer.poll
    options = {"partition": 0, "on_delivery": delivered} if confirm else {"partition": 0}
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
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=5)
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"warm-up", partition=0)
            start = _clock()
            if tasks:

                async def worker() -> None:
                    for _ in range(n // TASKS):
                        await producer.send_and_wait(topic, VALUE, partition=0)

                await asyncio.gather(*(worker() for _ in range(TASKS)))
            elif confirm:
                futures = [await producer.send(topic, VALUE, partition=0) for _ in range(n)]
                for future in futures:
                    await future
            else:
                for _ in range(n):
                    await producer.send(topic, VALUE, partition=0)
                await producer.flush()
            return _since(start)
        finally:
            await producer.stop()

    return asyncio.run(main())


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
    "krafka-confirm",
    "confluent-confirm",
    "aiokafka-confirm",
)
#: krafka variant -> the peers doing the same work.
PEERS = {
    "krafka": ("confluent-kafka", "aiokafka", "krafka@base"),
    "krafka-confirm": ("confluent-confirm", "aiokafka-confirm", "krafka-confirm@base"),
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
        bootstrap_servers=bootstrap, acks=1, linger=0.005, compression="none"
    ) as producer:
        producer.send_and_wait(topic, b"warm-up", partition=0)
        start = _clock()
        send = producer.send
        if confirm:
            futures = [send(topic, VALUE, partition=0) for _ in range(n)]
            for future in futures:
                future.result()
        else:
            for _ in range(n):
                send(topic, VALUE, partition=0)
            producer.flush()
        return _since(start)


CLIENTS.update(
    {
        "krafka-sync": lambda b, t, n: krafka_sync_run(b, t, n, confirm=False),
        "krafka-sync-confirm": lambda b, t, n: krafka_sync_run(b, t, n, confirm=True),
    }
)
PEERS.update({"krafka-sync": ("krafka",), "krafka-sync-confirm": ("krafka-confirm",)})
CLIENTS["krafka-otel-metrics-confirm"] = lambda b, t, n: krafka_run(
    b, t, n, 1, confirm=True, metrics=True
)
PEERS["krafka-otel-metrics-confirm"] = ("krafka-confirm",)


def child(name: str, bootstrap: str, records: int) -> None:
    """One measured run in this (fresh) process; prints it as JSON."""
    run = CLIENTS[split(name)[0]](bootstrap, f"bench-{name.replace('@', '-')}", records)
    print(json.dumps({"seconds": run.seconds, "cpu": run.cpu}))


def measure(name: str, bootstrap: str, records: int, baseline: str | None = None) -> Run:
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, "--bootstrap", bootstrap,
         "--records", str(records)],
        check=True, capture_output=True, text=True, env=child_env(name, baseline),
    )  # fmt: skip
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return Run(data["seconds"], data["cpu"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--clients", default=",".join(DEFAULT_CLIENTS), help=f"any of {', '.join(CLIENTS)}"
    )
    parser.add_argument("--baseline", help="a krafka source tree for the NAME@base clients")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.bootstrap, args.records)
        return
    from krafka.testing import LocalBroker

    names = args.clients.split(",")
    results: dict[str, list[Run]] = {name: [] for name in names}
    with LocalBroker() as broker:
        for rnd in range(args.rounds):
            for name in names:
                run = measure(name, broker.bootstrap_servers, args.records, args.baseline)
                results[name].append(run)
                print(
                    f"round {rnd + 1} {name:20s} {args.records / run.seconds:>12,.0f} rec/s "
                    f"{run.cpu / args.records * 1e6:6.2f} CPU µs/rec",
                    flush=True,
                )
    report(results, args.records, args.rounds)


def report(results: dict[str, list[Run]], records: int, rounds: int) -> None:
    medians = {
        name: (
            statistics.median(records / r.seconds for r in runs),
            statistics.median(r.cpu / records * 1e6 for r in runs),
        )
        for name, runs in results.items()
    }
    print(
        f"\nmedians over {rounds} rounds (fresh processes), {records:,} x 100 B, 1 partition, "
        "linger 5 ms; acks=1 except -idempotent (acks=all, idempotence on, both sides):"
    )
    for name, (rate, cpu) in medians.items():
        print(f"  {name:20s} {rate:>12,.0f} rec/s  {cpu:6.2f} CPU µs/rec")
    for ours, peers in PEERS.items():
        for peer in peers:
            if ours in medians and peer in medians:
                (rate, cpu), (peer_rate, peer_cpu) = medians[ours], medians[peer]
                print(
                    f"  {ours} / {peer}: {rate / peer_rate:.2f}x throughput, "
                    f"{cpu / peer_cpu:.2f}x CPU per record"
                )


if __name__ == "__main__":
    main()
