"""Shared fixtures: one local Tansu broker per test session, started lazily, and librdkafka
mock clusters, a fresh one per test (they take a few milliseconds to make)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from krafka.testing.mockcluster import MockCluster

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
def broker() -> Iterator[object]:
    """A running Tansu broker on a free loopback port, for the whole session."""
    from krafka.testing import LocalBroker

    with LocalBroker() as b:
        yield b


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
    """Every anyio test runs under both backends."""
    return str(request.param)
