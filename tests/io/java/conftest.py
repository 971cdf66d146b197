"""Fixtures of the Java-peer tests: Apache Kafka (the session's `kafka_cluster`), JavaPeer compiled
once, and fresh topics. `_java` (helpers shared by these tests) is made importable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from krafka.testing.javapeer import peer_classes
from krafka.testing.kafka import KafkaCluster

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(scope="session")
def java_peer_classes() -> Path:
    return peer_classes()


@pytest.fixture
def cluster(kafka_cluster: KafkaCluster, java_peer_classes: Path) -> KafkaCluster:
    """The session's Apache Kafka, with the Java peer compiled."""
    return kafka_cluster
