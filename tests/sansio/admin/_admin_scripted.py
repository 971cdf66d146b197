"""Scripted brokers for admin operations: start one, answer its lookups (Metadata,
FindCoordinator), and read what it settled."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from krafka.sansio.actions import Broker, SendRequest
from krafka.sansio.admin.operation import AdminOperation, Handler
from krafka.sansio.admin.routing import Routing
from krafka.sansio.backoff import BackoffPolicy
from krafka.testing.conversation import Conversation

NO_JITTER = BackoffPolicy(initial=0.1, maximum=1.0, jitter=0.0, max_retries=None)
BROKERS = {1: ("b1", 9092), 2: ("b2", 9093), 3: ("b3", 9094)}


def broker(node_id: int) -> Broker:
    host, port = BROKERS[node_id]
    return Broker(node_id, host, port)


def start(
    handler: Handler[Any],
    routing: Routing[Any],
    keys: Iterable[Any],
    *,
    timeout: float = 30.0,
    versions: Mapping[int, int] | None = None,
) -> tuple[AdminOperation[Any], Conversation, int]:
    operation: AdminOperation[Any] = AdminOperation(
        handler, routing, keys, timeout=timeout, backoff=NO_JITTER, rand=lambda: 0.5
    )
    talk = Conversation(operation, versions=dict(versions or {}))
    op = operation.start(talk.now)
    return operation, talk, op


def metadata(
    topics: Mapping[str, Mapping[int, int] | int] | None = None,
    *,
    controller: int = 1,
    brokers: Iterable[int] = (1, 2, 3),
) -> MetadataResponse:
    """A Metadata answer: `topics` maps a topic to {partition: leader} (-1: no leader) or to an
    error code (a topic-level error)."""
    entries = []
    for name, parts in (topics or {}).items():
        if isinstance(parts, int):
            entries.append(MetadataResponse.MetadataResponseTopic(name=name, error_code=parts))
            continue
        partitions = [
            MetadataResponse.MetadataResponseTopic.MetadataResponsePartition(
                partition_index=p,
                leader_id=leader,
                replica_nodes=[leader] if leader >= 0 else [],
                isr_nodes=[leader] if leader >= 0 else [],
                error_code=ErrorCode.NONE if leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE,
            )
            for p, leader in parts.items()
        ]
        entries.append(MetadataResponse.MetadataResponseTopic(name=name, partitions=partitions))
    return MetadataResponse(
        brokers=[
            MetadataResponse.MetadataResponseBroker(
                node_id=n, host=BROKERS[n][0], port=BROKERS[n][1]
            )
            for n in brokers
        ],
        controller_id=controller,
        cluster_id="scripted",
        topics=entries,
    )


def answer_metadata(talk: Conversation, response: MetadataResponse) -> MetadataRequest:
    sent = talk.expect(MetadataRequest)
    request = talk.request(sent)
    talk.reply(sent, response)
    return request  # type: ignore[no-any-return]


def answer_coordinator(talk: Conversation, node_id: int, *, error: int = 0) -> str:
    """Answer the next FindCoordinator (v4+ batched shape) with broker `node_id`; returns the
    key it asked about."""
    sent = talk.expect(FindCoordinatorRequest)
    request = talk.request(sent)
    key = request.coordinator_keys[0] if request.coordinator_keys else request.key
    host, port = BROKERS.get(node_id, ("", -1))
    entry = FindCoordinatorResponse.Coordinator(
        key=key, node_id=node_id, host=host, port=port, error_code=error
    )
    talk.reply(sent, FindCoordinatorResponse(coordinators=[entry]))
    return str(key)


def answer_coordinators(
    talk: Conversation, nodes: Mapping[str, int] | int, *, errors: Mapping[str, int] | None = None
) -> list[str]:
    """Step once and answer every FindCoordinator asked: key -> broker `nodes[key]` (or all
    the same broker), with `errors[key]` as the error code; returns the keys in order."""
    talk.step()
    keys = []
    for sent in [s for s in talk.outbox if isinstance(talk.request(s), FindCoordinatorRequest)]:
        talk.outbox.remove(sent)
        request = talk.request(sent)
        key = str(request.coordinator_keys[0] if request.coordinator_keys else request.key)
        node = nodes if isinstance(nodes, int) else nodes[key]
        host, port = BROKERS[node]
        entry = FindCoordinatorResponse.Coordinator(
            key=key, node_id=node, host=host, port=port, error_code=(errors or {}).get(key, 0)
        )
        talk.reply(sent, FindCoordinatorResponse(coordinators=[entry]))
        keys.append(key)
    return keys


def take(talk: Conversation, kind: type[Any]) -> tuple[SendRequest[Any], Any]:
    sent = talk.expect(kind)
    return sent, talk.request(sent)
