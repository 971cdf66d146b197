"""`ClientCore.next_deadline` and `step` over scripted time: every timer a request, a link or a
machine holds is the core's deadline, and stepping at it (not before) does what was due."""

from __future__ import annotations

from typing import Any

import pytest
from _requester import Requester

from krafka.errors import KafkaTimeoutError, KrafkaError
from krafka.protocol import ApiKey
from krafka.protocol.messages import ListOffsetsRequest, ProduceRequest
from krafka.sansio.actions import Broker, LeaderOf, SendRequest
from krafka.sansio.client import ClientConfig, ClientCore
from krafka.sansio.producer import ProducerConfig, ProducerEngine
from krafka.testing.scripted_cluster import ScriptedCluster, metadata_response

B1, B2 = ("b1", 9092), ("b2", 9092)
BROKERS = {1: B1, 2: B2}


def started(**config: Any) -> tuple[ScriptedCluster, Requester]:
    """A core that bootstrapped from b1 and knows topic t (partition 0 led by 1, 1 by 2)."""
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092", **config), now=0.0))
    requester = Requester()
    cluster.core.add(requester)
    meta = cluster.take(ApiKey.METADATA, B1)
    cluster.answer(meta, metadata_response(BROKERS, {"t": [1, 2]}))
    return cluster, requester


def list_offsets() -> ListOffsetsRequest:
    return ListOffsetsRequest(topics=[])


def test_a_lingering_batch_makes_the_core_deadline_and_goes_out_at_it() -> None:
    cluster, _ = started()
    config = ProducerConfig(linger=0.25, enable_idempotence=False, acks=1)
    engine = ProducerEngine(config, cluster.core.cluster)
    cluster.core.add(engine)
    cluster.advance(1.0)
    engine.append("t", 0, 1_700_000_000_000, None, b"v", None, cluster.now, 1)
    assert cluster.core.next_deadline() == pytest.approx(1.25)  # before a step, as io wakes it
    cluster.advance(0.2)
    assert cluster.pending(ApiKey.PRODUCE) == []
    assert cluster.core.next_deadline() == pytest.approx(1.25)
    cluster.advance_to_deadline()
    (produce,) = cluster.pending(ApiKey.PRODUCE)
    assert produce.address == B1 and isinstance(produce.sent.body, ProduceRequest)
    assert cluster.now == pytest.approx(1.25)


def test_a_request_on_the_wire_fails_at_its_own_timeout_not_before() -> None:
    cluster, requester = started()
    sent = SendRequest(Broker(2), list_offsets(), timeout=2.0)
    requester.ask(sent)
    cluster.take(ApiKey.LIST_OFFSETS, B2)
    assert cluster.core.next_deadline() == pytest.approx(2.0)
    cluster.advance(1.9)
    assert sent not in requester.outcomes
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(sent), KafkaTimeoutError)
    assert requester.answered_at[sent] == pytest.approx(2.0)


def test_the_earliest_of_several_links_and_lanes_is_the_deadline() -> None:
    cluster, requester = started()
    late = SendRequest(Broker(1), list_offsets(), timeout=7.0)
    soon = SendRequest(Broker(2), list_offsets(), timeout=3.0)
    requester.ask(late, soon)
    cluster.take(ApiKey.LIST_OFFSETS, B1)
    cluster.take(ApiKey.LIST_OFFSETS, B2)
    assert cluster.core.next_deadline() == pytest.approx(3.0)
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(soon), KafkaTimeoutError)
    assert late not in requester.outcomes
    assert cluster.core.next_deadline() == pytest.approx(7.0)
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(late), KafkaTimeoutError)


def test_a_request_waiting_for_metadata_fails_at_its_timeout() -> None:
    cluster, requester = started()
    cluster.advance(1.0)  # past the refresh backoff: the round for u goes out at once
    sent = SendRequest(LeaderOf("u", 0), list_offsets(), timeout=1.5)
    requester.ask(sent)
    assert len(cluster.pending(ApiKey.METADATA)) == 1  # never answered
    assert cluster.core.next_deadline() == pytest.approx(2.5)
    cluster.advance(1.4)
    assert sent not in requester.outcomes
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(sent), KrafkaError)
    assert requester.answered_at[sent] == pytest.approx(2.5)


def test_a_request_waiting_for_its_connection_fails_at_its_timeout() -> None:
    cluster, requester = started(connect_timeout=10.0)
    cluster.silent.add(B2)  # the connection never gets past ApiVersions
    sent = SendRequest(Broker(2), list_offsets(), timeout=0.75)
    requester.ask(sent)
    cluster.step()
    assert cluster.core.next_deadline() == pytest.approx(0.75)
    cluster.advance(0.7)
    assert sent not in requester.outcomes
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(sent), KafkaTimeoutError)
    assert requester.answered_at[sent] == pytest.approx(0.75)
