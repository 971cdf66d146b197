"""`python -m krafka.testing [tansu|kafka|mock] [--port P] [--nodes N]`: a broker in the
foreground.

Prints the bootstrap servers, then runs until Ctrl-C or SIGTERM and stops every process it
started (each in its own process group), whatever way it exits. `mock` is librdkafka's mock
cluster inside this process (threads, no child process); it binds ports the kernel picks
(`rd_kafka_mock_cluster_new` offers no way to choose them), so it refuses `--port`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from krafka.errors import KrafkaError

#: A classic group's first rebalance waits this long for more members on the foreground mock
#: cluster: none, as Kafka's sample server.properties for development (librdkafka's default
#: is 3 s).
MOCK_INITIAL_REBALANCE_DELAY_MS = 0
#: The controller the foreground mock's Metadata names (librdkafka's default is none), as an
#: Apache Kafka broker names one: an admin call for the controller (CreateTopics, which the
#: mock lacks) then fails at once saying so, instead of waiting for a controller until timeout.
MOCK_CONTROLLER_ID = 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m krafka.testing",
        description="Run a local broker for experiments until Ctrl-C.",
    )
    parser.add_argument(
        "kind",
        nargs="?",
        choices=("tansu", "kafka", "mock"),
        default="tansu",
        help="tansu (starts in milliseconds, the default), kafka (Apache Kafka, the reference)"
        " or mock (librdkafka's mock cluster, from the confluent-kafka wheel)",
    )
    parser.add_argument("--port", type=int, default=None, help="first PLAINTEXT port")
    parser.add_argument(
        "--nodes", type=int, default=1, help="brokers: 1 or 3 for kafka, any number for mock"
    )
    parser.add_argument(
        "--partitions", type=int, default=1, help="partitions of auto-created topics (kafka)"
    )
    parser.add_argument(
        "--listeners",
        default="PLAINTEXT",
        help="kafka client listeners, comma-separated: PLAINTEXT,SASL_PLAINTEXT,SSL,SASL_SSL",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        if args.kind == "tansu":
            return _run_tansu(args, stop)
        if args.kind == "mock":
            return _run_mock(args, stop)
        return _run_kafka(args, stop)
    except KrafkaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _wait(stop: threading.Event, alive: object) -> None:
    while not stop.wait(0.5):
        if not alive():  # type: ignore[operator]
            raise KrafkaError("the broker exited on its own")


def _run_tansu(args: argparse.Namespace, stop: threading.Event) -> int:
    from krafka.testing.broker import LocalBroker

    if args.nodes != 1:
        raise SystemExit("tansu runs one node; use `kafka --nodes 3` for a cluster")
    broker = LocalBroker(port=args.port)
    try:
        broker.start()
        print(f"tansu on {broker.bootstrap_servers} (Ctrl-C stops it)", flush=True)
        print(f"bootstrap_servers={broker.bootstrap_servers}", flush=True)
        _wait(stop, lambda: broker.pid is not None and broker.running)
    finally:
        broker.stop()
    return 0


def _run_mock(args: argparse.Namespace, stop: threading.Event) -> int:
    from krafka.testing.mockcluster import MockCluster

    if args.port is not None:
        raise SystemExit(
            "mock binds ports the kernel picks (librdkafka has no way to choose them):"
            " drop --port and use the bootstrap_servers= line it prints"
        )
    if args.nodes < 1:
        raise SystemExit(f"mock needs at least one broker, not --nodes {args.nodes}")
    with MockCluster(args.nodes) as cluster:
        cluster.set_group_initial_rebalance_delay(MOCK_INITIAL_REBALANCE_DELAY_MS)
        cluster.set_controller_id(MOCK_CONTROLLER_ID)
        print(
            f"librdkafka {cluster.librdkafka_version} mock cluster ({args.nodes} broker(s))"
            f" on {cluster.bootstrap_servers} (Ctrl-C stops it)",
            flush=True,
        )
        print(f"bootstrap_servers={cluster.bootstrap_servers}", flush=True)
        _wait(stop, lambda: not cluster.closed)
    return 0


def _run_kafka(args: argparse.Namespace, stop: threading.Event) -> int:
    from krafka.testing.kafka import KafkaCluster

    if args.nodes not in (1, 3):
        raise SystemExit(f"kafka runs 1 or 3 nodes, not --nodes {args.nodes}")

    listeners = tuple(name.strip().upper() for name in args.listeners.split(",") if name.strip())
    if "PLAINTEXT" not in listeners:
        listeners = ("PLAINTEXT", *listeners)
    cluster = KafkaCluster(
        args.nodes, listeners=listeners, num_partitions=args.partitions, port=args.port
    )
    print(f"starting Apache Kafka ({args.nodes} node(s)) in {cluster.directory}", flush=True)
    try:
        cluster.start()
        print(f"Apache Kafka on {cluster.bootstrap_servers} (Ctrl-C stops it)", flush=True)
        for listener in cluster.listeners[1:]:
            print(f"{listener}: {cluster.bootstrap_for(listener)}", flush=True)
        if cluster.tls is not None:
            print(f"TLS material: {cluster.tls.directory}", flush=True)
        if len(cluster.listeners) > 1:
            users = ", ".join(f"{u}/{p}" for u, p in cluster.users.items())
            print(f"SASL users (PLAIN, SCRAM-SHA-256/512): {users}", flush=True)
        print(f"bootstrap_servers={cluster.bootstrap_servers}", flush=True)
        _wait(stop, lambda: all(node.running for node in cluster.nodes))
    finally:
        cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
