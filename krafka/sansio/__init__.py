"""krafka without I/O: embed a Kafka client in any event loop (twisted, gevent, a simulator).

Everything here is a state machine (h11 style): bytes and an explicit `now` go in; bytes to
send, events and one deadline come out. Nothing here imports anyio, asyncio, trio, socket, ssl,
selectors, threading or time: the embedder owns the sockets and the one clock (any monotonic
clock in seconds; every `now` comes from it).

**The contract** (`krafka.sansio.actions`). Every machine (`Machine`) is driven the same way:
`next_actions(now)` drains what to do now (`SendRequest`s for a target - `AnyBroker`,
`Broker(node)`, `LeaderOf(topic, partition)`, `Coordinator(key)` - `RefreshMetadata`,
`CoordinatorMoved` and events); answers come back with `on_response(sent, response, now)` /
`on_failure(sent, error, now)` on the very `SendRequest` object; `next_deadline()` says when to
call again (None: only an input can change anything; never a time already past). Application
calls (`poll`, `commit` ...) are inputs too; they return an operation id (`next_op()`, unique
process-wide) that a later `Completed(op, value)` / `Failed(op, error)` answers.

**The core** (`ClientCore`, `krafka.sansio.client`) runs machines for you: one
`BrokerConnection` per broker per lane (data, control, coordinator), routing of every target,
FindCoordinator with caching and moves, ApiVersions negotiation with each request's bounds,
SASL, and the `MetadataMachine` (refresh on age, on request and on stale errors, with backoff;
KIP-899 rebootstrap; `MetadataUpdated`). `core.cluster` is the read-only `ClusterMetadata`
view machines are built with (`leader`, `partitions`, `topic_id`: pure lookups).

**The engines**: `ProducerEngine` (accumulator, sends, idempotence, transactions; `append`
raises `AppendBlocked` until the topic's partitions are known), `ConsumerEngine`
(subscription, fetching, positions, commits, one group protocol), `ShareConsumerMachine`
(KIP-932), `AdminOperation` (admin requests; `create_topics(...)` makes one); any of them is
`core.add(...)`-ed. Their operations end in `Completed` / `Failed`: `.result()` gives the value
or raises the error. `core.step(now)` returns what each machine emitted as
`MachineEvent(machine, event)`, so one core runs several machines (a consumer engine, its
telemetry, admin operations) and each event reaches its owner; a machine that raises is dropped
(`MachineStopped(machine, error)`). krafka's own anyio driver (`krafka.io.KafkaClient`) runs
every machine of a client this way, in one loop. The smallest embedding, with `selectors` and
blocking connects:

    core = ClientCore(ClientConfig("localhost:9092", client_id="app"), now=clock())
    engine = ConsumerEngine(ConsumerConfig(group=GroupConfig("g")), core.cluster)
    core.add(engine); engine.subscribe(["topic"], clock()); engine.poll(clock())
    while True:
        for event in core.step(clock()):               # after every input, and at deadlines
            handle(event)            # MachineEvent(engine, PollReady()) -> engine.poll(now) ...
        for want in core.connections_wanted():
            if isinstance(want, OpenConnection):        # CloseConnection: close it
                socks[want.conn_id] = socket.create_connection((want.host, want.port))
                core.connection_made(want.conn_id, clock())
        for conn_id, sock in socks.items():
            sock.sendall(core.data_to_send(conn_id))
        deadline = core.next_deadline()                 # None: wait for the sockets only
        for key, _ in selector.select(None if deadline is None else deadline - clock()):
            core.receive_data(key.data, key.fileobj.recv(65536), clock())  # b"": closed

Rebalance steps (`PartitionsAssigned`, `PartitionsRevoked`, `PartitionsLost`: a
`RebalanceEvent`) are events the application answers with `engine.rebalance_done(event, now)`
once its listener ran; polls drive the group (the first one joins it) and `PollReady` says
when the next poll has something.

`examples/sansio_selectors.py` is all of it in at most 100 lines of code: it creates a topic,
produces 1,000 records, consumes them in a group and commits, with `selectors` and one clock.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from krafka.sansio.actions import (
        AnyBroker,
        Broker,
        Completed,
        Coordinator,
        CoordinatorMoved,
        CoordinatorType,
        Failed,
        LeaderOf,
        Machine,
        RefreshMetadata,
        SendRequest,
        Target,
        Versioned,
        next_op,
    )
    from krafka.sansio.admin.operation import AdminOperation
    from krafka.sansio.admin.results import Results
    from krafka.sansio.admin.topics import CreatedTopic, NewTopic, create_topics
    from krafka.sansio.backoff import BackoffPolicy
    from krafka.sansio.client import (
        Authenticated,
        ClientConfig,
        ClientCore,
        CloseConnection,
        CoordinatorFound,
        CoordinatorNotFound,
        MachineEvent,
        MachineStopped,
        OpenConnection,
        RequestDone,
        RequestError,
    )
    from krafka.sansio.connection import BrokerConnection, ConnectionConfig, Priority
    from krafka.sansio.consumer.config import ConsumerConfig, GroupProtocol
    from krafka.sansio.consumer.engine import ConsumerEngine
    from krafka.sansio.consumer.events import (
        OffsetsCommitted,
        PartitionsAssigned,
        PartitionsLost,
        PartitionsRevoked,
        PollReady,
        RebalanceEvent,
    )
    from krafka.sansio.consumer.fetcher import FetchConfig
    from krafka.sansio.consumer.subscription import ResetStrategy
    from krafka.sansio.group.classic.assignors import assignors_for
    from krafka.sansio.group.config import GroupConfig
    from krafka.sansio.metadata import (
        ClusterMetadata,
        MetadataConfig,
        MetadataFailed,
        MetadataMachine,
        MetadataUpdated,
        Rebootstrapped,
    )
    from krafka.sansio.producer.config import ProducerConfig
    from krafka.sansio.producer.engine import AppendBlocked, ProducerEngine
    from krafka.sansio.producer.events import BatchDone, TopicsInUse
    from krafka.sansio.secret import Secret
    from krafka.sansio.share.consumer import ShareConsumerMachine

_MODULES: dict[str, tuple[str, ...]] = {
    "krafka.sansio.actions": (
        "AnyBroker",
        "Broker",
        "Completed",
        "Coordinator",
        "CoordinatorMoved",
        "CoordinatorType",
        "Failed",
        "LeaderOf",
        "Machine",
        "RefreshMetadata",
        "SendRequest",
        "Target",
        "Versioned",
        "next_op",
    ),
    "krafka.sansio.admin.operation": ("AdminOperation",),
    "krafka.sansio.admin.results": ("Results",),
    "krafka.sansio.admin.topics": ("CreatedTopic", "NewTopic", "create_topics"),
    "krafka.sansio.backoff": ("BackoffPolicy",),
    "krafka.sansio.client": (
        "Authenticated",
        "ClientConfig",
        "ClientCore",
        "CloseConnection",
        "CoordinatorFound",
        "CoordinatorNotFound",
        "MachineEvent",
        "MachineStopped",
        "OpenConnection",
        "RequestDone",
        "RequestError",
    ),
    "krafka.sansio.connection": ("BrokerConnection", "ConnectionConfig", "Priority"),
    "krafka.sansio.consumer.config": ("ConsumerConfig", "GroupProtocol"),
    "krafka.sansio.consumer.engine": ("ConsumerEngine",),
    "krafka.sansio.consumer.events": (
        "OffsetsCommitted",
        "PartitionsAssigned",
        "PartitionsLost",
        "PartitionsRevoked",
        "PollReady",
        "RebalanceEvent",
    ),
    "krafka.sansio.consumer.fetcher": ("FetchConfig",),
    "krafka.sansio.consumer.subscription": ("ResetStrategy",),
    "krafka.sansio.group.classic.assignors": ("assignors_for",),
    "krafka.sansio.group.config": ("GroupConfig",),
    "krafka.sansio.metadata": (
        "ClusterMetadata",
        "MetadataConfig",
        "MetadataFailed",
        "MetadataMachine",
        "MetadataUpdated",
        "Rebootstrapped",
    ),
    "krafka.sansio.producer.config": ("ProducerConfig",),
    "krafka.sansio.producer.engine": ("AppendBlocked", "ProducerEngine"),
    "krafka.sansio.producer.events": ("BatchDone", "TopicsInUse"),
    "krafka.sansio.secret": ("Secret",),
    "krafka.sansio.share.consumer": ("ShareConsumerMachine",),
}
#: Public name -> the module defining it (imported on first use: `import krafka.sansio.codes`
#: stays light).
_LAZY: dict[str, str] = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'krafka.sansio' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AdminOperation",
    "AnyBroker",
    "AppendBlocked",
    "Authenticated",
    "BackoffPolicy",
    "BatchDone",
    "Broker",
    "BrokerConnection",
    "ClientConfig",
    "ClientCore",
    "CloseConnection",
    "ClusterMetadata",
    "Completed",
    "ConnectionConfig",
    "ConsumerConfig",
    "ConsumerEngine",
    "Coordinator",
    "CoordinatorFound",
    "CoordinatorMoved",
    "CoordinatorNotFound",
    "CoordinatorType",
    "CreatedTopic",
    "Failed",
    "FetchConfig",
    "GroupConfig",
    "GroupProtocol",
    "LeaderOf",
    "Machine",
    "MachineEvent",
    "MachineStopped",
    "MetadataConfig",
    "MetadataFailed",
    "MetadataMachine",
    "MetadataUpdated",
    "NewTopic",
    "OffsetsCommitted",
    "OpenConnection",
    "PartitionsAssigned",
    "PartitionsLost",
    "PartitionsRevoked",
    "PollReady",
    "Priority",
    "ProducerConfig",
    "ProducerEngine",
    "RebalanceEvent",
    "Rebootstrapped",
    "RefreshMetadata",
    "RequestDone",
    "RequestError",
    "ResetStrategy",
    "Results",
    "Secret",
    "SendRequest",
    "ShareConsumerMachine",
    "Target",
    "TopicsInUse",
    "Versioned",
    "assignors_for",
    "create_topics",
    "next_op",
]
