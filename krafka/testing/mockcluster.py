"""librdkafka's built-in mock cluster as a test fixture: a multi-broker Kafka on loopback TCP
ports, written by librdkafka's authors, with fault injection, KIP-848 and KIP-932 share groups.

    with MockCluster(3, topics={"orders": 6}) as cluster:
        cluster.set_partition_leader("orders", 0, 2)
        cluster.push_request_errors(ApiKey.FETCH, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        ... any client on cluster.bootstrap_servers ...

Creating a 3-broker cluster and destroying it again takes a few milliseconds (median 2-4 ms
on a busy 2-core machine; five librdkafka threads, three listening sockets): make a fresh one
per test. It is synchronous and thread-safe on the C side, so sync and async tests both call
it directly. A cluster still open when the
interpreter exits (an interrupted run) is destroyed then; `close()` is idempotent, and every
method after it raises `MockClusterError` instead of touching freed memory.

What each control calls (`rd_kafka_mock_*` unless it says otherwise):
    MockCluster(n)                     rd_kafka_new(PRODUCER) + cluster_new(rk, n); ids 1..n
    close()                            cluster_destroy, then rd_kafka_destroy
    bootstrap_servers                  cluster_bootstraps
    create_topic / delete_topic        topic_create / topic_delete
    set_partition_leader / _follower   partition_set_leader / partition_set_follower
    set_follower_watermarks            partition_set_follower_wmarks
    push_leader_response               partition_push_leader_response (next Metadata only)
    delete_records                     partition_delete_records
    broker_down / broker_up            broker_set_down / broker_set_up
    set_broker_rtt / _rack / _address  broker_set_rtt / broker_set_rack / broker_set_host_port
    add_broker / decommission_broker   broker_add / broker_decommission
    remove_broker_from_metadata        broker_remove_from_metadata
    set_coordinator                    coordinator_set ("group" / "transaction")
    set_controller_id                  set_controller_id
    set_apiversion                     set_apiversion (-1, -1 hides the API)
    set_group_initial_rebalance_delay  group_initial_rebalance_delay_ms (default 3000 ms)
    push_request_errors                push_request_errors_array (cluster-wide, per API)
    clear_request_errors               clear_request_errors
    push_broker_request_error_rtts     broker_push_request_error_rtts (variadic)
    broker_error_stack_count           broker_error_stack_cnt
    push_partition_request_errors      partition_push_request_errors (variadic)
    set_topic_error                    topic_set_error
    start/stop_request_tracking,       start/stop_request_tracking, clear_requests,
    clear_requests, requests()         get_requests + request_id/api_key/timestamp, freed
                                       with request_destroy_array
    set_telemetry_*                    telemetry_set_requested_metrics / _push_interval
    set_group_consumer_*               set_group_consumer_session_timeout_ms / _heartbeat_...
    target_assignment                  cgrp_consumer_target_assignment{_new,,_destroy} over
                                       rd_kafka_topic_partition_list_{new,add,destroy}
    sharegroup_set_*                   sharegroup_set_* (session timeout, heartbeat interval,
                                       record lock duration, max delivery attempts, isolation
                                       level, auto offset reset, max size, max fetch sessions,
                                       max record locks)
    sharegroup_target_assignment       sharegroup_target_assignment
    sharegroup_member_ids              sharegroup_get_member_ids (+ rd_kafka_mem_free)

Every `rd_kafka_mock_*` function librdkafka 2.16.0 exports is reachable, except the handle
accessors (`cluster_handle`, `handle_mock_cluster`) and variadic `push_request_errors` (its
`_array` twin is used). None reads state back (a partition's offsets, a group's members
apart from share groups'): observe those through a client.

Observed behaviour and quirks (librdkafka 2.16.0, probed with krafka's KafkaClient):
- Advertised APIs: Produce 0-10, Fetch 0-16, ListOffsets 0-7, Metadata 0-13, OffsetCommit
  0-9, OffsetFetch 0-6, FindCoordinator 0-3, JoinGroup 0-6, Heartbeat 0-5, LeaveGroup 0-4,
  SyncGroup 0-4, ApiVersions 0-2, InitProducerId 0-4, OffsetForLeaderEpoch 2, AddPartitionsToTxn
  0-1, AddOffsetsToTxn 0-1, EndTxn 0-1, TxnOffsetCommit 0-3, ConsumerGroupHeartbeat 1,
  GetTelemetrySubscriptions 0, PushTelemetry 0, ShareGroupHeartbeat 1, ShareFetch 1,
  ShareAcknowledge 1 - exactly BROKER.md's list. No CreateTopics, DeleteRecords, DescribeGroups,
  ListGroups or DescribeCluster (`set_controller_id` only changes Metadata's controller id).
- Advertised but broken (librdkafka's own client never sends them): JoinGroup v6 and SyncGroup
  v4 read their flexible arrays as fixed ones and drop the connection; LeaveGroup v3-4
  responses lack the members array. `fix_versions` narrows these three APIs (default on).
  Produce v5 responses lack log_start_offset (clients negotiate v10, so it stays).
- ApiVersions v3+ is answered with UNSUPPORTED_VERSION in a body no version parses; Metadata
  v9+ ends with a duplicated empty tag section (krafka's connection tolerates both).
- Some error responses carry nulls the schema forbids: FindCoordinator's host, SyncGroup's
  assignment. Strict decoders (krafka's, Java's) reject them: inject coordinator errors on
  other APIs, or use `MockFault.DISCONNECT`, which needs no response.
- ConsumerGroupHeartbeat must carry SubscribedTopicNames and SubscribedTopicRegex both null
  or both non-null (send regex "" with names): anything else fails an rd_assert that aborts
  the whole process.
- Topics named in a Metadata request, or in any partition control here, are auto-created with
  4 partitions and replication min(3, brokers). With replication 1, partition p's replica and
  leader is broker p % n + 1; with more replicas the leader is picked at random among them:
  pin leaders with `set_partition_leader` when a test depends on them.
- Fetching an offset that is neither in the log nor the end offset answers OFFSET_OUT_OF_RANGE
  (after `delete_records`, and past the end). A partition with a follower set answers every
  Fetch v11+ to its leader with preferred_read_replica = that follower and no records,
  whatever rack the client sends; racks only show in Metadata.
- Broker-level errors (`push_broker_request_error_rtts`) win over cluster-wide ones; once a
  broker has had an error stack for an API, cluster-wide errors for that API are no longer
  consulted on that broker, even after its own stack drained. Errors pushed for Metadata only
  delay or disconnect (the code is not written into the response); use `set_topic_error`.
- `stop_request_tracking()` also forgets the requests tracked so far (the header says it
  does not); read `requests()` first. Timestamps are librdkafka's monotonic clock (us).
- A coordinator pinned to a broker id the cluster lacks makes the next FindCoordinator abort
  the whole process (an rd_assert), so `set_coordinator` refuses unknown ids.
- OffsetFetch with topics null ("every topic the group committed to", v2+) is answered with a
  null topics array the schema forbids (the mock echoes the request's count), so `krafka lag
  GROUP` needs `--topic` there. Once a classic group has existed (even Empty, its members
  gone), OffsetCommit from outside it (generation -1, no member: `assign` with a `group_id`,
  `krafka group reset-offsets`) gets UNKNOWN_MEMBER_ID; Apache Kafka accepts it while the
  group is Empty. Give such commits a group no member ever joined.
- `target_assignment` and `sharegroup_target_assignment` apply only to a group that exists
  (a member has heartbeated) and only to members it has; otherwise they do nothing.
- Defaults: classic groups wait 3 s for members before the first rebalance; KIP-848 groups
  have a 30 s session and 3 s heartbeats; share groups a 45 s session, 5 s heartbeats, 30 s
  record locks, 5 delivery attempts, 200 members, 2000 sessions per broker, 2000 locks per
  partition, and start at the latest offset (`sharegroup_set_auto_offset_reset(EARLIEST)`).
  KIP-848 timeouts take effect at a group's next heartbeat; the share-group session timeout
  and heartbeat interval only for groups created afterwards, the other share settings at once.
- Any client's connection to a broker closing closes every share session on that broker and
  releases what its members hold, delivery counts decremented (a fetch parked across it can
  re-acquire them with delivery count 1); the members' next settlements get
  SHARE_SESSION_NOT_FOUND. Apache Kafka closes only the disconnected client's own sessions.
- A control arriving right after the previous one was answered can lose the mock thread's
  wake-up and wait for its 1 s poll timeout; the harness wakes it by connecting to a broker.
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Mapping, Sequence
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_void_p
from dataclasses import dataclass
from enum import IntEnum
from types import TracebackType
from typing import Any, Final, Literal

from krafka.errors import KrafkaError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey
from krafka.sansio.coordinator import CoordinatorType
from krafka.testing.librdkafka import Librdkafka, PartitionLists, Partitions, load, woken

__all__ = [
    "ALL_BROKERS",
    "BROKEN_VERSIONS",
    "MockCluster",
    "MockClusterError",
    "MockFault",
    "MockRequest",
    "ShareAutoOffsetReset",
    "ShareIsolationLevel",
]

#: `broker_id` meaning every broker, for broker_down/up, set_broker_rtt and set_broker_rack.
ALL_BROKERS: Final = -1
_RD_KAFKA_PRODUCER: Final = 0
#: Versions the mock advertises but cannot parse or answer (see the module docstring); with
#: `fix_versions` each API is narrowed to the highest version that works.
BROKEN_VERSIONS: Final = {ApiKey.JOIN_GROUP: 5, ApiKey.SYNC_GROUP: 3, ApiKey.LEAVE_GROUP: 2}
_DEFAULT_CONFIG: Final = {"log_level": "4"}  # no CONFWARN about the handle's missing bootstrap


class MockFault(IntEnum):
    """librdkafka-local codes the mock understands where a broker error code goes."""

    #: RD_KAFKA_RESP_ERR__TRANSPORT: the broker closes the connection instead of answering.
    DISCONNECT = -195


class ShareAutoOffsetReset(IntEnum):
    """Where a share-partition starts when a share group first consumes it."""

    LATEST = 0
    EARLIEST = 1


class ShareIsolationLevel(IntEnum):
    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1


class MockClusterError(KrafkaError):
    """A mock-cluster control failed (`code` is librdkafka's `rd_kafka_resp_err_t`), or the
    cluster is closed."""

    def __init__(self, message: str, code: int | None = None, function: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.function = function

    @property
    def error_code(self) -> ErrorCode | None:
        """The Kafka error code, when `code` is one (librdkafka-local codes are negative)."""
        if self.code is None or self.code not in ErrorCode._value2member_map_:
            return None
        return ErrorCode(self.code)


@dataclass(frozen=True, slots=True)
class MockRequest:
    """One request a mock broker received, as request tracking recorded it."""

    broker_id: int
    api_key: ApiKey | int
    #: librdkafka's monotonic clock, microseconds.
    timestamp_us: int


Code = ErrorCode | MockFault


def _destroy(
    lib: Librdkafka, handles: list[int | None], addresses: Sequence[tuple[str, int]]
) -> None:
    """Finalizer (also at interpreter exit): the cluster first, then the handle it lives on."""
    mcluster, rk = handles
    handles[:] = [None, None]
    if mcluster:
        with woken(addresses):
            lib.fn("rd_kafka_mock_cluster_destroy")(mcluster)
    if rk:
        lib.fn("rd_kafka_destroy")(rk)


def _api_key(value: int) -> ApiKey | int:
    return ApiKey(value) if value in ApiKey._value2member_map_ else value


class MockCluster:
    """An in-process librdkafka mock cluster of `brokers` brokers (ids 1..n); a context manager.

    `topics` maps names to partition counts created up front (replication 1); `config` sets
    librdkafka properties of the handle that owns the cluster (e.g. `{"debug": "mock"}` logs
    every mock request to stderr). `fix_versions` (default) stops advertising the group API
    versions the mock gets wrong (`BROKEN_VERSIONS`), so a correct client negotiates ones
    that work; False keeps the mock's own table.
    """

    def __init__(
        self,
        brokers: int = 3,
        *,
        topics: Mapping[str, int] | None = None,
        config: Mapping[str, str] | None = None,
        fix_versions: bool = True,
    ) -> None:
        if brokers < 1:
            raise ValueError(f"a mock cluster needs at least one broker, not {brokers}")
        self._lib = lib = load()
        rk = self._new_handle({**_DEFAULT_CONFIG, **(config or {})})
        mcluster = lib.fn("rd_kafka_mock_cluster_new")(rk, brokers)
        if not mcluster:
            lib.fn("rd_kafka_destroy")(rk)
            raise MockClusterError(f"rd_kafka_mock_cluster_new({brokers}) failed")
        bootstraps = bytes(lib.fn("rd_kafka_mock_cluster_bootstraps")(mcluster)).decode()
        #: "127.0.0.1:P1,127.0.0.1:P2,...", broker 1 first.
        self.bootstrap_servers: str = bootstraps
        #: broker id -> "host:port" of the brokers the cluster started with.
        self.brokers: dict[int, str] = dict(enumerate(bootstraps.split(","), start=1))
        self._listeners = [
            (h, int(p)) for h, _, p in (a.rpartition(":") for a in self.brokers.values())
        ]
        self._broker_ids = set(self.brokers)
        self._handles: list[int | None] = [mcluster, rk]
        self._finalizer = weakref.finalize(self, _destroy, lib, self._handles, self._listeners)
        if fix_versions:
            for api_key, highest in BROKEN_VERSIONS.items():
                self.set_apiversion(api_key, 0, highest)
        for name, partitions in (topics or {}).items():
            self.create_topic(name, partitions)

    def _new_handle(self, config: Mapping[str, str]) -> int:
        conf = self._lib.fn("rd_kafka_conf_new")()
        errbuf = ctypes.create_string_buffer(512)
        for key, value in config.items():
            if self._lib.fn("rd_kafka_conf_set")(
                conf, key.encode(), str(value).encode(), errbuf, len(errbuf)
            ):
                self._lib.fn("rd_kafka_conf_destroy")(conf)
                raise MockClusterError(f"librdkafka config {key}={value!r}: {errbuf.value!r}")
        rk: int | None = self._lib.fn("rd_kafka_new")(_RD_KAFKA_PRODUCER, conf, errbuf, len(errbuf))
        if not rk:
            self._lib.fn("rd_kafka_conf_destroy")(conf)  # rd_kafka_new frees it on success only
            raise MockClusterError(f"rd_kafka_new failed: {errbuf.value.decode(errors='replace')}")
        return rk

    # -- lifecycle -------------------------------------------------------------------------------

    def __enter__(self) -> MockCluster:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Destroy the cluster (its brokers drop every connection) and its handle; idempotent."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return self._handles[0] is None

    @property
    def librdkafka_version(self) -> str:
        return self._lib.version

    def __repr__(self) -> str:
        state = "closed" if self.closed else self.bootstrap_servers
        return f"<MockCluster {len(self.brokers)} brokers {state}>"

    @property
    def _mc(self) -> int:
        mcluster = self._handles[0]
        if mcluster is None:
            raise MockClusterError("the mock cluster is closed")
        return mcluster

    def _call(self, name: str, *args: Any) -> None:
        """Call `rd_kafka_mock_<name>(mcluster, *args)` and raise on a non-zero result."""
        function = f"rd_kafka_mock_{name}"
        with woken(self._listeners):
            err = int(self._lib.fn(function)(self._mc, *args))
        if err:
            message = f"{function}: {self._lib.err_name(err)}: {self._lib.err_str(err)}"
            raise MockClusterError(message, err, function)

    def _void(self, name: str, *args: Any) -> None:
        with woken(self._listeners):
            self._lib.fn(f"rd_kafka_mock_{name}")(self._mc, *args)

    # -- topics and partitions --------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int, replication: int = 1) -> None:
        """Replicas go round the brokers from broker (p * replication) % n + 1; the leader is
        a random replica (so partition p's leader is broker p % n + 1 with replication 1)."""
        self._call("topic_create", name.encode(), partitions, replication)

    def delete_topic(self, name: str) -> None:
        self._call("topic_delete", name.encode())

    def set_partition_leader(self, topic: str, partition: int, broker_id: int) -> None:
        """Move the leader (and bump the leader epoch); -1 leaves the partition leaderless."""
        self._call("partition_set_leader", topic.encode(), partition, broker_id)

    def set_partition_follower(self, topic: str, partition: int, broker_id: int) -> None:
        """The preferred read replica (KIP-392) the leader names in Fetch v11+ responses."""
        self._call("partition_set_follower", topic.encode(), partition, broker_id)

    def set_follower_watermarks(self, topic: str, partition: int, lo: int, hi: int) -> None:
        """The follower's log start and high watermark; -1 follows the leader's again."""
        self._call("partition_set_follower_wmarks", topic.encode(), partition, lo, hi)

    def push_leader_response(
        self, topic: str, partition: int, leader_id: int, leader_epoch: int
    ) -> None:
        """The leader and epoch the next Metadata response reports for this partition (once),
        whatever the real leader is."""
        self._call(
            "partition_push_leader_response", topic.encode(), partition, leader_id, leader_epoch
        )

    def delete_records(self, topic: str, partition: int, before_offset: int) -> None:
        """Advance the log start offset to `before_offset`, dropping the batches before it."""
        self._call("partition_delete_records", topic.encode(), partition, before_offset)

    def set_topic_error(self, topic: str, code: ErrorCode) -> None:
        """The error Metadata and AddPartitionsToTxn report for `topic` (NONE clears it)."""
        self._void("topic_set_error", topic.encode(), int(code))

    # -- brokers ---------------------------------------------------------------------------------

    def broker_down(self, broker_id: int) -> None:
        """Drop the broker's connections and refuse new ones (leaders do not move)."""
        self._call("broker_set_down", broker_id)

    def broker_up(self, broker_id: int) -> None:
        self._call("broker_set_up", broker_id)

    def set_broker_rtt(self, broker_id: int, ms: int) -> None:
        """Delay every response of the broker by `ms` milliseconds."""
        self._call("broker_set_rtt", broker_id, ms)

    def set_broker_rack(self, broker_id: int, rack: str | None) -> None:
        self._call("broker_set_rack", broker_id, None if rack is None else rack.encode())

    def set_broker_address(self, broker_id: int, host: str, port: int) -> None:
        """The host and port Metadata advertises for the broker (it keeps listening where it
        did): point clients at a proxy, or at nothing."""
        self._void("broker_set_host_port", broker_id, host.encode(), port)

    def add_broker(self, broker_id: int) -> None:
        """Start a new broker; partitions are reassigned over all brokers."""
        self._call("broker_add", broker_id)
        self._broker_ids.add(broker_id)

    def decommission_broker(self, broker_id: int) -> None:
        """Remove the broker and its connections; its partitions move to the others."""
        self._call("broker_decommission", broker_id)
        self._broker_ids.discard(broker_id)

    def remove_broker_from_metadata(self, broker_id: int) -> None:
        """Hide the broker from Metadata (partitions move away) but keep its connections."""
        self._call("broker_remove_from_metadata", broker_id)

    def set_coordinator(
        self,
        key_type: CoordinatorType | Literal["group", "transaction"],
        key: str,
        broker_id: int,
    ) -> None:
        """Pin the coordinator of a group id or transactional id (otherwise a hash picks it).

        The broker must exist: the mock aborts the process when a FindCoordinator resolves to
        a broker it does not have.
        """
        if broker_id not in self._broker_ids:
            raise ValueError(f"no broker {broker_id} (brokers: {sorted(self._broker_ids)})")
        names = {CoordinatorType.GROUP: "group", CoordinatorType.TRANSACTION: "transaction"}
        if isinstance(key_type, CoordinatorType):
            if key_type not in names:
                raise ValueError(f"the mock cannot pin a {key_type.name} coordinator")
            key_type = names[key_type]  # type: ignore[assignment]
        self._call("coordinator_set", str(key_type).encode(), key.encode(), broker_id)

    def set_controller_id(self, broker_id: int) -> None:
        """The controller id Metadata v1+ reports (-1: none)."""
        self._void("set_controller_id", broker_id)

    def set_apiversion(self, api_key: ApiKey, min_version: int, max_version: int) -> None:
        """Narrow the advertised versions of an API; (-1, -1) hides it. Never widen past what
        the mock implements (see the module docstring)."""
        self._call("set_apiversion", int(api_key), min_version, max_version)

    def set_group_initial_rebalance_delay(self, ms: int) -> None:
        """Classic groups wait this long for more members before the first rebalance."""
        self._void("group_initial_rebalance_delay_ms", ms)

    # -- error injection -------------------------------------------------------------------------

    def push_request_errors(self, api_key: ApiKey, *codes: Code) -> None:
        """The next `len(codes)` requests of `api_key` to any broker fail with these codes in
        order (`MockFault.DISCONNECT` closes the connection instead)."""
        if codes:
            array = (c_int * len(codes))(*(int(c) for c in codes))
            self._void("push_request_errors_array", int(api_key), len(codes), array)

    def clear_request_errors(self, api_key: ApiKey) -> None:
        """Forget the cluster-wide errors still queued for `api_key`."""
        self._void("clear_request_errors", int(api_key))

    def push_broker_request_error_rtts(
        self, broker_id: int, api_key: ApiKey, errors: Sequence[tuple[Code, int]]
    ) -> None:
        """The broker's next requests of `api_key` answer with (code, delay in ms) in order;
        `ErrorCode.NONE` with a delay only slows a response down."""
        tail: list[c_int] = []
        for code, rtt_ms in errors:
            tail += [c_int(int(code)), c_int(rtt_ms)]
        self._call("broker_push_request_error_rtts", broker_id, int(api_key), len(errors), *tail)

    def broker_error_stack_count(self, broker_id: int, api_key: ApiKey) -> int:
        """How many errors pushed for the broker and API are still waiting."""
        count = c_size_t(0)
        self._call("broker_error_stack_cnt", broker_id, int(api_key), byref(count))
        return int(count.value)

    def push_partition_request_errors(
        self, topic: str, partition: int, api_key: ApiKey, *codes: ErrorCode
    ) -> None:
        """The next requests of `api_key` naming this partition get these partition-level
        codes in order; other partitions in the same request are unaffected."""
        tail = [c_int(int(c)) for c in codes]
        self._call(
            "partition_push_request_errors",
            topic.encode(),
            partition,
            int(api_key),
            len(codes),
            *tail,
        )

    # -- request tracking ------------------------------------------------------------------------

    def start_request_tracking(self) -> None:
        """Record every request from now on (forgetting any recorded before)."""
        self._void("start_request_tracking")

    def stop_request_tracking(self) -> None:
        """Stop recording; this also forgets what was recorded."""
        self._void("stop_request_tracking")

    def clear_requests(self) -> None:
        self._void("clear_requests")

    def requests(self) -> list[MockRequest]:
        """The requests recorded so far, in arrival order."""
        count = c_size_t(0)
        array = self._lib.fn("rd_kafka_mock_get_requests")(self._mc, byref(count))
        n = int(count.value)
        if not n or not array:
            return []
        lib = self._lib
        try:
            return [
                MockRequest(
                    broker_id=int(lib.fn("rd_kafka_mock_request_id")(array[i])),
                    api_key=_api_key(int(lib.fn("rd_kafka_mock_request_api_key")(array[i]))),
                    timestamp_us=int(lib.fn("rd_kafka_mock_request_timestamp")(array[i])),
                )
                for i in range(n)
            ]
        finally:
            lib.fn("rd_kafka_mock_request_destroy_array")(array, n)

    # -- telemetry (KIP-714) ---------------------------------------------------------------------

    def set_telemetry_requested_metrics(self, metrics: Sequence[str] | None) -> None:
        """Metric name prefixes GetTelemetrySubscriptions asks for ("" = all, None = none)."""
        if not metrics:
            self._call("telemetry_set_requested_metrics", None, 0)
            return
        array = (c_char_p * len(metrics))(*(m.encode() for m in metrics))
        self._call("telemetry_set_requested_metrics", array, len(metrics))

    def set_telemetry_push_interval(self, ms: int) -> None:
        self._call("telemetry_set_push_interval", ms)

    # -- consumer groups (KIP-848) ---------------------------------------------------------------

    def set_group_consumer_session_timeout(self, ms: int) -> None:
        self._void("set_group_consumer_session_timeout_ms", ms)

    def set_group_consumer_heartbeat_interval(self, ms: int) -> None:
        self._void("set_group_consumer_heartbeat_interval_ms", ms)

    def target_assignment(self, group_id: str, assignment: Mapping[str, Partitions] | None) -> None:
        """Set the next target assignment of a KIP-848 group: member id -> its partitions;
        None goes back to the mock's own range assignment."""
        lib = self._lib
        if assignment is None:
            self._void("cgrp_consumer_target_assignment", group_id.encode(), None)
            return
        with PartitionLists(lib, assignment.values()) as lists:
            ids = (c_char_p * len(lists))(*(m.encode() for m in assignment))
            target = lib.fn("rd_kafka_mock_cgrp_consumer_target_assignment_new")(
                ids, len(lists), lists.array()
            )
            try:
                self._void("cgrp_consumer_target_assignment", group_id.encode(), target)
            finally:
                lib.fn("rd_kafka_mock_cgrp_consumer_target_assignment_destroy")(target)

    # -- share groups (KIP-932) ------------------------------------------------------------------

    def sharegroup_set_session_timeout(self, ms: int) -> None:
        """For share groups created from now on."""
        self._void("sharegroup_set_session_timeout", ms)

    def sharegroup_set_heartbeat_interval(self, ms: int) -> None:
        """For share groups created from now on."""
        self._void("sharegroup_set_heartbeat_interval", ms)

    def sharegroup_set_record_lock_duration(self, ms: int) -> None:
        """How long an acquired record stays locked (default 30 s; 0: the session timeout)."""
        self._void("sharegroup_set_record_lock_duration", ms)

    def sharegroup_set_max_delivery_attempts(self, attempts: int) -> None:
        """Deliveries before a record is archived (default 5; 0: unlimited)."""
        self._void("sharegroup_set_max_delivery_attempts", attempts)

    def sharegroup_set_auto_offset_reset(
        self, reset: ShareAutoOffsetReset | Literal["latest", "earliest"]
    ) -> None:
        value = ShareAutoOffsetReset[reset.upper()] if isinstance(reset, str) else reset
        self._void("sharegroup_set_auto_offset_reset", int(value))

    def sharegroup_set_isolation_level(
        self, level: ShareIsolationLevel | Literal["read_uncommitted", "read_committed"]
    ) -> None:
        value = ShareIsolationLevel[level.upper()] if isinstance(level, str) else level
        self._void("sharegroup_set_isolation_level", int(value))

    def sharegroup_set_max_size(self, members: int) -> None:
        """Members beyond this get GROUP_MAX_SIZE_REACHED (default 200; 0: unlimited)."""
        self._void("sharegroup_set_max_size", members)

    def sharegroup_set_max_fetch_sessions(self, sessions: int) -> None:
        """Share sessions per broker before SHARE_SESSION_LIMIT_REACHED (default 2000)."""
        self._void("sharegroup_set_max_fetch_sessions", sessions)

    def sharegroup_set_max_record_locks(self, locks: int) -> None:
        """In-flight acquired records per share-partition (default 2000; 0: unlimited)."""
        self._void("sharegroup_set_max_record_locks", locks)

    def sharegroup_target_assignment(
        self, group_id: str, assignment: Mapping[str, Partitions]
    ) -> None:
        """Replace the share group's automatic assignment: member id -> its partitions."""
        with PartitionLists(self._lib, assignment.values()) as lists:
            ids = (c_char_p * len(lists))(*(m.encode() for m in assignment))
            self._void(
                "sharegroup_target_assignment", group_id.encode(), ids, lists.array(), len(lists)
            )

    def sharegroup_member_ids(self, group_id: str) -> list[str]:
        """The member ids of a share group (GROUP_ID_NOT_FOUND if it does not exist)."""
        array = POINTER(c_void_p)()
        count = c_size_t(0)
        self._call("sharegroup_get_member_ids", group_id.encode(), byref(array), byref(count))
        if not array:
            return []
        free = self._lib.fn("rd_kafka_mem_free")
        rk = self._handles[1]
        try:
            return [ctypes.string_at(array[i]).decode() for i in range(int(count.value))]
        finally:
            for i in range(int(count.value)):
                free(rk, array[i])
            free(rk, ctypes.cast(array, c_void_p))
