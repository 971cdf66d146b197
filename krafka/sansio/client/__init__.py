"""The sans-IO client core: everything above one broker connection, for any event loop.

`ClientCore` owns a client's connections (one `BrokerConnection` per broker per lane: data,
control, coordinator), routes every request target, negotiates versions, keeps
metadata fresh (`MetadataMachine`) and runs the machines added to it (a producer, a consumer,
admin operations: anything speaking `krafka.sansio.actions.Machine`). The embedder moves bytes
and time; the core decides everything else:

    core = ClientCore(ClientConfig(bootstrap_servers="b1:9092", client_id="app"), now=now)
    core.add(machine)
    while True:
        now = clock()
        for event in core.step(now):            # after every input below, and at the deadline
            ...                                   # MachineEvent(machine, e), RequestDone ...
        for want in core.connections_wanted():
            if isinstance(want, OpenConnection):  # connect (TLS if any) within want.timeout
                ...; core.connection_made(want.conn_id, now)  # or connection_failed(id, err, now)
            else:                                 # CloseConnection: close (reset if want.abort)
                ...
        for conn_id in open_sockets:
            sock.send(core.data_to_send(conn_id))
        wait for readable sockets until core.next_deadline() (None: no timer), then
        core.receive_data(conn_id, data, now)     # b"" when the peer closed it
        # a broken socket: core.connection_lost(conn_id, KafkaConnectionError(...), now)

Rules:

* One clock: every `now` is the embedder's monotonic clock, in seconds.
* Call `step(now)` after every input (bytes, a connection outcome, an application call on a
  machine, `send`) and when `next_deadline()` passes: it expires timeouts, runs every machine's
  `next_actions(now)` (again while answers gave them new input), routes their `SendRequest`s,
  hands answers back to the machine that asked (the very `SendRequest` object), and returns
  the events: what a machine emitted comes as `MachineEvent(machine, event)` (a client running
  a consumer, its telemetry and admin operations hands each to its owner), the core's own
  (`RequestDone`, `MetadataUpdated`, `MachineStopped` ...) bare. `next_deadline()` is
  honest: None while only an input can change anything.
* Targets: `AnyBroker()` (the least loaded connection), `Broker(node_id[, host, port])`,
  `LeaderOf(topic, partition)` (waits while the leader is unknown, refreshing metadata with
  backoff, up to the request timeout; a final topic error fails it), `Coordinator(key,
  key_type)` (FindCoordinator, cached; followed on NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE
  / a lost connection; resent after backoff while loading; its own connection, so a commit
  never waits behind a long-poll Fetch).
* Lanes (`Lane`): requests only a coordinator answers (`COORDINATOR_APIS`: commits, offset
  fetches, joins, transaction markers) take the broker's coordinator connection, HIGH priority
  ones (Metadata, FindCoordinator, classic Heartbeat) its control connection, the rest its
  data connections; Produce requests to a broker share one connection, in order.
* `CoordinatorMoved` from a machine (a move it saw inside an answer) forgets that coordinator.
* Versions: the highest both sides support, capped by `max_version`; `min_version` and an API
  the broker lacks fail locally (`UnsupportedVersionError`), nothing is sent. A `Versioned`
  request is built for the version chosen.
* Metadata: `core.cluster` is the read-only view (`leader`, `partitions`, `broker`,
  `topic_id` ...); machines ask for a refresh with a `RefreshMetadata` action and hear of new
  metadata through `metadata_updated(now)` if they have it (after every round, a failed one
  too: a machine still missing something asks again, the refresh backoff spacing the rounds);
  `note_use(topic, now)` keeps a topic refreshed. `refresh_metadata(topics, now)` returns the
  round whose `MetadataUpdated` / `MetadataFailed` event answers it.
* Failures: a machine that raises is dropped (`MachineStopped`); read-only requests are resent
  when their connection drops; connection setup retries with backoff within
  `connect_timeout`, and a refused login is answered at once while its backoff lasts.
* `send(sent, now)` sends a request of the embedder's own (`RequestDone` / `RequestError`).
  `close(now)` fails what is pending and closes every connection.
"""

from krafka.sansio.client.config import ClientConfig
from krafka.sansio.client.core import ClientCore
from krafka.sansio.client.events import (
    Authenticated,
    CloseConnection,
    CoordinatorFound,
    CoordinatorNotFound,
    MachineEvent,
    MachineStopped,
    MetadataFailed,
    MetadataUpdated,
    OpenConnection,
    Rebootstrapped,
    RequestDone,
    RequestError,
    Want,
)
from krafka.sansio.client.lanes import (
    COORDINATOR_APIS,
    HIGH_PRIORITY_APIS,
    ORDERED_APIS,
    RETRY_SAFE_APIS,
    Lane,
)

__all__ = [
    "COORDINATOR_APIS",
    "HIGH_PRIORITY_APIS",
    "ORDERED_APIS",
    "RETRY_SAFE_APIS",
    "Authenticated",
    "ClientConfig",
    "ClientCore",
    "CloseConnection",
    "CoordinatorFound",
    "CoordinatorNotFound",
    "Lane",
    "MachineEvent",
    "MachineStopped",
    "MetadataFailed",
    "MetadataUpdated",
    "OpenConnection",
    "Rebootstrapped",
    "RequestDone",
    "RequestError",
    "Want",
]
