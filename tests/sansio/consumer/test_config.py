"""`ConsumerConfig`'s defaults are Java's: a classic member needs no assignor spelled out."""

from __future__ import annotations

from krafka.sansio.consumer.config import ConsumerConfig
from krafka.sansio.consumer.engine import ConsumerEngine
from krafka.sansio.group.config import GroupConfig
from krafka.sansio.metadata import ClusterMetadata


def test_the_assignors_default_to_range_then_cooperative_sticky() -> None:
    assert [a.name for a in ConsumerConfig().assignors] == ["range", "cooperative-sticky"]


def test_a_subscriber_built_without_assignors_joins_with_the_defaults() -> None:
    engine = ConsumerEngine(ConsumerConfig(group=GroupConfig("g")), ClusterMetadata([("b", 1)]))
    engine.subscribe(["t"], 0.0)
    engine.poll(0.0)
    assert engine.next_actions(0.0) != []
