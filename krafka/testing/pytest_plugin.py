"""pytest fixtures for Apache Kafka: load with `-p krafka.testing.pytest_plugin` (or list it in
`pytest_plugins`).

- `kafka_cluster`: one node for the whole session, every listener (PLAINTEXT, SASL_PLAINTEXT,
  SSL with client certificates, SASL_SSL), users from `krafka.testing.kafka.DEFAULT_USERS`.
- `kafka_cluster_3`: three nodes for the session (replication factor 3, min ISR 2 internally).
- `kafka_cluster_factory(nodes=1, fresh_cluster=False, **options)`: any other shape
  (`KafkaCluster`'s options); equal options share one cluster per session unless
  `fresh_cluster=True` (a cluster of the test's own, for faults), stopped when the test ends.
- `kafka_clusters`: the session's registry, for session-scoped fixtures of your own:
  `kafka_clusters.get(nodes, **options)` (shared) and `kafka_clusters.new(nodes, **options)`.

When a test that used a cluster fails, the tail of each node's log is added to its report, and the
logs stay on disk under pytest's base temporary directory.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from krafka.testing.kafka import CLIENT_LISTENERS, KafkaCluster

ClusterFactory = Callable[..., KafkaCluster]


class KafkaClusters:
    """The session's clusters, keyed by their options."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self._tmp = factory
        self.shared: dict[str, KafkaCluster] = {}

    def new(self, nodes: int = 1, **options: Any) -> KafkaCluster:
        """A started cluster of the caller's own (stop it when done)."""
        directory = self._tmp.mktemp(f"kafka-{nodes}n", numbered=True)
        cluster = KafkaCluster(nodes, directory=directory, **options)
        return cluster.start()

    def get(self, nodes: int = 1, **options: Any) -> KafkaCluster:
        """The session's cluster of this shape, started on first use."""
        key = repr((nodes, sorted(options.items())))
        if key not in self.shared:
            self.shared[key] = self.new(nodes, **options)
        return self.shared[key]

    def stop_all(self) -> None:
        for cluster in self.shared.values():
            with contextlib.suppress(Exception):
                cluster.stop()


@pytest.fixture(scope="session")
def kafka_clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaClusters]:
    clusters = KafkaClusters(tmp_path_factory)
    yield clusters
    clusters.stop_all()


@pytest.fixture
def kafka_cluster_factory(
    kafka_clusters: KafkaClusters, request: pytest.FixtureRequest
) -> Iterator[ClusterFactory]:
    fresh: list[KafkaCluster] = []

    def make(nodes: int = 1, *, fresh_cluster: bool = False, **options: Any) -> KafkaCluster:
        if fresh_cluster:
            fresh.append(kafka_clusters.new(nodes, **options))
            cluster = fresh[-1]
        else:
            cluster = kafka_clusters.get(nodes, **options)
        _used(request).append(cluster)
        return cluster

    yield make
    for cluster in fresh:
        cluster.stop()


@pytest.fixture(scope="session")
def kafka_cluster(kafka_clusters: KafkaClusters) -> KafkaCluster:
    """One Apache Kafka node with every client listener, for the whole session."""
    return kafka_clusters.get(1, listeners=CLIENT_LISTENERS)


@pytest.fixture(scope="session")
def kafka_cluster_3(kafka_clusters: KafkaClusters) -> KafkaCluster:
    """Three Apache Kafka nodes, for the whole session."""
    return kafka_clusters.get(3)


def _used(request: pytest.FixtureRequest) -> list[KafkaCluster]:
    node = request.node
    used: list[KafkaCluster] | None = getattr(node, "_krafka_kafka_used", None)
    if used is None:
        used = []
        node._krafka_kafka_used = used
    return used


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if not report.failed:
        return
    candidates: list[object] = list(getattr(item, "_krafka_kafka_used", []))
    funcargs = getattr(item, "funcargs", {})
    candidates += funcargs.values()
    candidates += [getattr(v, "cluster", None) for v in funcargs.values()]  # wrapping fixtures
    for cluster in dict.fromkeys(c for c in candidates if isinstance(c, KafkaCluster)):
        for node in cluster.nodes:
            tail = cluster.log_tail(node.node_id, 30)
            if tail:
                report.sections.append(
                    (f"Apache Kafka node {node.node_id} ({node.directory})", tail)
                )
