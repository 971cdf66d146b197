"""Clusters for tests, the demo and experiments: Apache Kafka (`KafkaCluster`, the reference),
Tansu (`LocalBroker`, embedded, starts in milliseconds) and TLS material (`TlsMaterial`);
librdkafka's mock cluster is `krafka.testing.mockcluster.MockCluster`.
`python -m krafka.testing [tansu|kafka|mock]` runs one in the foreground;
`krafka.testing.pytest_plugin` gives pytest fixtures."""

from krafka.testing.broker import LocalBroker, free_port
from krafka.testing.kafka import KafkaCluster, KafkaNode
from krafka.testing.runtime import KAFKA_VERSION, KafkaUnavailable
from krafka.testing.tls import TlsMaterial

__all__ = [
    "KAFKA_VERSION",
    "KafkaCluster",
    "KafkaNode",
    "KafkaUnavailable",
    "LocalBroker",
    "TlsMaterial",
    "free_port",
]
