"""Shared fixtures: the live clusters, each started lazily once per session, and librdkafka mock
clusters, a fresh one per test (they take a few milliseconds to make).

`broker` is parametrized over the clusters a live scenario runs on: Apache Kafka (the reference,
one KRaft node) and Tansu (`KRAFKA_CLUSTERS=kafka` or `=tansu` picks one). Apache Kafka is set up
the way the scenarios were written for Tansu where it matters to them: auto-created topics get 4
partitions."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from krafka.testing.kafka import KafkaCluster
    from krafka.testing.mockcluster import MockCluster
    from krafka.testing.pytest_plugin import KafkaClusters

pytest_plugins = ["krafka.testing.pytest_plugin"]

CLUSTERS = tuple(
    name.strip()
    for name in os.environ.get("KRAFKA_CLUSTERS", "kafka,tansu").split(",")
    if name.strip()
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
if "KRAFKA_SHARED" in os.environ:
    SHARED = Path(os.environ["KRAFKA_SHARED"])
TESTDATA = SHARED / "testdata"


@pytest.fixture(scope="session")
def testdata() -> Path:
    if not TESTDATA.is_dir():
        pytest.skip(f"shared test data not found at {TESTDATA} (sdist build?)")
    return TESTDATA


@pytest.fixture(scope="session")
def tansu() -> Iterator[object]:
    """A running Tansu broker on a free loopback port, for the whole session."""
    from krafka.testing import LocalBroker

    with LocalBroker() as b:
        yield b


@pytest.fixture(scope="session")
def kafka(kafka_clusters: KafkaClusters) -> KafkaCluster:
    """One Apache Kafka node with every client listener, auto-created topics of 4 partitions."""
    from krafka.testing.kafka import CLIENT_LISTENERS

    return kafka_clusters.get(1, listeners=CLIENT_LISTENERS, num_partitions=4)


@pytest.fixture(scope="session")
def kafka_cluster(kafka: KafkaCluster) -> KafkaCluster:
    """The plugin's one-node cluster is the suite's `kafka` (one JVM for both)."""
    return kafka


@pytest.fixture(scope="session", params=CLUSTERS)
def broker(request: pytest.FixtureRequest) -> object:
    """Each live cluster in turn (`broker.bootstrap_servers`, `broker.port`)."""
    return request.getfixturevalue(str(request.param))


@pytest.fixture
def make_mock_cluster() -> Iterator[Callable[..., MockCluster]]:
    """`make_mock_cluster(brokers=3, topics=..., config=...)`: librdkafka mock clusters of any
    shape, all destroyed when the test ends."""
    from krafka.testing.mockcluster import MockCluster

    made: list[MockCluster] = []

    def make(brokers: int = 3, **kwargs: Any) -> MockCluster:
        made.append(MockCluster(brokers, **kwargs))
        return made[-1]

    yield make
    for cluster in made:
        cluster.close()


@pytest.fixture
def mock_cluster(make_mock_cluster: Callable[..., MockCluster]) -> MockCluster:
    """A fresh 3-broker librdkafka mock cluster (broker ids 1, 2, 3) for this test."""
    return make_mock_cluster(3)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every anyio test runs under both backends (see `one_backend` for the long ones)."""
    return str(request.param)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test marked `one_backend` (a long live-broker scenario) runs under one anyio backend
    in the default suite, asyncio and trio by turns from one such test to the next, and under
    the other one in the slow run (`-m slow`): the scenario is still run under both, the
    default suite pays for it once."""
    chosen: dict[str, str] = {}
    for item in items:
        if item.get_closest_marker("one_backend") is None:
            continue
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("anyio_backend") if callspec is not None else None
        if backend is None:
            continue
        name, _, params = item.nodeid.partition("[")
        base = name + params.replace(str(backend), "", 1)  # the same for both backends
        if base not in chosen:
            chosen[base] = ("asyncio", "trio")[len(chosen) % 2]
        if backend != chosen[base]:
            item.add_marker(pytest.mark.slow)
