"""The librdkafka shared library bundled in the confluent-kafka wheel, loaded with ctypes and
every function the mock-cluster harness calls declared with its C signature.

Signatures are those of librdkafka's `src/rdkafka.h` and `src/rdkafka_mock.h` (master, mid
2026, whose mock exports are exactly those of the 2.16.0 build in confluent-kafka 2.16.1, plus
`rd_kafka_mock_set_controller_id`, read from the 2.16.0 machine code: `(mcluster, int32)`,
no result). A wrong `argtypes`/`restype` silently corrupts memory, so nothing here is inferred:
a function missing from the loaded build is reported by `Librdkafka.missing`, never guessed.

Also here, the C-side helpers the harness needs around those calls: topic-partition lists
(`PartitionLists`) and keeping the mock thread awake while a control waits for it (`woken`).

`KRAFKA_LIBRDKAFKA` names another library file to load instead of the wheel's copy.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import socket
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from ctypes import (
    POINTER,
    c_char_p,
    c_int,
    c_int16,
    c_int32,
    c_int64,
    c_size_t,
    c_void_p,
)
from pathlib import Path
from typing import Any, Final

from krafka.errors import KrafkaError
from krafka.structs import TopicPartition

#: `rd_kafka_resp_err_t` and every other C enum travel as `int`.
_ERR: Final = c_int
_P: Final = c_void_p
_STR: Final = c_char_p

#: name -> (restype, fixed argtypes). Variadic functions list their fixed part only; callers pass
#: the variadic tail as explicit ctypes objects (see `MockCluster._push_*`).
SIGNATURES: Final[dict[str, tuple[Any, tuple[Any, ...]]]] = {
    # rdkafka.h
    "rd_kafka_version_str": (_STR, ()),
    "rd_kafka_conf_new": (_P, ()),
    "rd_kafka_conf_set": (c_int, (_P, _STR, _STR, _STR, c_size_t)),
    "rd_kafka_conf_destroy": (None, (_P,)),
    "rd_kafka_new": (_P, (c_int, _P, _STR, c_size_t)),
    "rd_kafka_destroy": (None, (_P,)),
    "rd_kafka_err2name": (_STR, (_ERR,)),
    "rd_kafka_err2str": (_STR, (_ERR,)),
    "rd_kafka_mem_free": (None, (_P, _P)),
    "rd_kafka_topic_partition_list_new": (_P, (c_int,)),
    "rd_kafka_topic_partition_list_add": (_P, (_P, _STR, c_int32)),
    "rd_kafka_topic_partition_list_destroy": (None, (_P,)),
    # rdkafka_mock.h: the cluster
    "rd_kafka_mock_cluster_new": (_P, (_P, c_int)),
    "rd_kafka_mock_cluster_destroy": (None, (_P,)),
    "rd_kafka_mock_cluster_handle": (_P, (_P,)),
    "rd_kafka_handle_mock_cluster": (_P, (_P,)),
    "rd_kafka_mock_cluster_bootstraps": (_STR, (_P,)),
    "rd_kafka_mock_set_controller_id": (None, (_P, c_int32)),
    "rd_kafka_mock_set_apiversion": (_ERR, (_P, c_int16, c_int16, c_int16)),
    "rd_kafka_mock_group_initial_rebalance_delay_ms": (None, (_P, c_int32)),
    # error injection
    "rd_kafka_mock_clear_request_errors": (None, (_P, c_int16)),
    "rd_kafka_mock_push_request_errors_array": (None, (_P, c_int16, c_size_t, POINTER(_ERR))),
    "rd_kafka_mock_broker_push_request_error_rtts": (_ERR, (_P, c_int32, c_int16, c_size_t)),
    "rd_kafka_mock_broker_error_stack_cnt": (_ERR, (_P, c_int32, c_int16, POINTER(c_size_t))),
    "rd_kafka_mock_partition_push_request_errors": (
        _ERR,
        (_P, _STR, c_int32, c_int16, c_size_t),
    ),
    "rd_kafka_mock_topic_set_error": (None, (_P, _STR, _ERR)),
    # topics and partitions
    "rd_kafka_mock_topic_create": (_ERR, (_P, _STR, c_int, c_int)),
    "rd_kafka_mock_topic_delete": (_ERR, (_P, _STR)),
    "rd_kafka_mock_partition_delete_records": (_ERR, (_P, _STR, c_int32, c_int64)),
    "rd_kafka_mock_partition_set_leader": (_ERR, (_P, _STR, c_int32, c_int32)),
    "rd_kafka_mock_partition_set_follower": (_ERR, (_P, _STR, c_int32, c_int32)),
    "rd_kafka_mock_partition_set_follower_wmarks": (_ERR, (_P, _STR, c_int32, c_int64, c_int64)),
    "rd_kafka_mock_partition_push_leader_response": (_ERR, (_P, _STR, c_int, c_int32, c_int32)),
    # brokers
    "rd_kafka_mock_broker_set_down": (_ERR, (_P, c_int32)),
    "rd_kafka_mock_broker_set_up": (_ERR, (_P, c_int32)),
    "rd_kafka_mock_broker_set_host_port": (None, (_P, c_int32, _STR, c_int)),
    "rd_kafka_mock_broker_set_rtt": (_ERR, (_P, c_int32, c_int)),
    "rd_kafka_mock_broker_set_rack": (_ERR, (_P, c_int32, _STR)),
    "rd_kafka_mock_broker_decommission": (_ERR, (_P, c_int32)),
    "rd_kafka_mock_broker_remove_from_metadata": (_ERR, (_P, c_int32)),
    "rd_kafka_mock_broker_add": (_ERR, (_P, c_int32)),
    "rd_kafka_mock_coordinator_set": (_ERR, (_P, _STR, _STR, c_int32)),
    # request tracking
    "rd_kafka_mock_start_request_tracking": (None, (_P,)),
    "rd_kafka_mock_stop_request_tracking": (None, (_P,)),
    "rd_kafka_mock_clear_requests": (None, (_P,)),
    "rd_kafka_mock_get_requests": (POINTER(_P), (_P, POINTER(c_size_t))),
    "rd_kafka_mock_request_destroy": (None, (_P,)),
    "rd_kafka_mock_request_destroy_array": (None, (POINTER(_P), c_size_t)),
    "rd_kafka_mock_request_id": (c_int32, (_P,)),
    "rd_kafka_mock_request_api_key": (c_int16, (_P,)),
    "rd_kafka_mock_request_timestamp": (c_int64, (_P,)),
    # telemetry (KIP-714)
    "rd_kafka_mock_telemetry_set_requested_metrics": (_ERR, (_P, POINTER(_STR), c_size_t)),
    "rd_kafka_mock_telemetry_set_push_interval": (_ERR, (_P, c_int64)),
    # consumer groups (KIP-848)
    "rd_kafka_mock_cgrp_consumer_target_assignment_new": (_P, (POINTER(_STR), c_int, POINTER(_P))),
    "rd_kafka_mock_cgrp_consumer_target_assignment_destroy": (None, (_P,)),
    "rd_kafka_mock_cgrp_consumer_target_assignment": (None, (_P, _STR, _P)),
    "rd_kafka_mock_set_group_consumer_session_timeout_ms": (None, (_P, c_int)),
    "rd_kafka_mock_set_group_consumer_heartbeat_interval_ms": (None, (_P, c_int)),
    # share groups (KIP-932)
    "rd_kafka_mock_sharegroup_set_session_timeout": (None, (_P, c_int)),
    "rd_kafka_mock_sharegroup_set_heartbeat_interval": (None, (_P, c_int)),
    "rd_kafka_mock_sharegroup_set_max_delivery_attempts": (None, (_P, c_int)),
    "rd_kafka_mock_sharegroup_set_record_lock_duration": (None, (_P, c_int)),
    "rd_kafka_mock_sharegroup_set_isolation_level": (None, (_P, c_int)),
    "rd_kafka_mock_sharegroup_set_max_size": (None, (_P, c_int)),
    "rd_kafka_mock_sharegroup_set_max_fetch_sessions": (None, (_P, c_int)),
    "rd_kafka_mock_sharegroup_set_max_record_locks": (None, (_P, c_int)),
    "rd_kafka_mock_sharegroup_set_auto_offset_reset": (None, (_P, c_int)),
    "rd_kafka_mock_sharegroup_target_assignment": (
        None,
        (_P, _STR, POINTER(_STR), POINTER(_P), c_size_t),
    ),
    "rd_kafka_mock_sharegroup_get_member_ids": (
        _ERR,
        (_P, _STR, POINTER(POINTER(_P)), POINTER(c_size_t)),
    ),
}

#: Functions the harness cannot work without; the rest degrade to a clear error when called.
REQUIRED: Final = frozenset(
    {
        "rd_kafka_conf_new",
        "rd_kafka_conf_set",
        "rd_kafka_conf_destroy",
        "rd_kafka_new",
        "rd_kafka_destroy",
        "rd_kafka_err2name",
        "rd_kafka_err2str",
        "rd_kafka_mock_cluster_new",
        "rd_kafka_mock_cluster_destroy",
        "rd_kafka_mock_cluster_bootstraps",
    }
)


class LibrdkafkaUnavailable(KrafkaError):
    """No usable librdkafka: confluent-kafka is not installed, or its build lacks the mock."""


class Librdkafka:
    """A loaded librdkafka with its functions declared; `fn(name)` returns one of them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._dll = ctypes.CDLL(path)
        self._functions: dict[str, Any] = {}
        missing = []
        for name, (restype, argtypes) in SIGNATURES.items():
            try:
                function = getattr(self._dll, name)
            except AttributeError:
                missing.append(name)
                continue
            function.restype = restype
            function.argtypes = list(argtypes)
            self._functions[name] = function
        self.missing: frozenset[str] = frozenset(missing)
        if self.missing & REQUIRED:
            raise LibrdkafkaUnavailable(
                f"{path} lacks {', '.join(sorted(self.missing & REQUIRED))}"
            )
        self.version = bytes(self.fn("rd_kafka_version_str")()).decode()

    def fn(self, name: str) -> Any:
        """The declared C function `name`; `LibrdkafkaUnavailable` if this build lacks it."""
        try:
            return self._functions[name]
        except KeyError:
            raise LibrdkafkaUnavailable(
                f"{name} is not exported by librdkafka {getattr(self, 'version', '?')}"
                f" ({self.path})"
            ) from None

    def has(self, name: str) -> bool:
        return name in self._functions

    def err_name(self, code: int) -> str:
        return bytes(self.fn("rd_kafka_err2name")(code)).decode()

    def err_str(self, code: int) -> str:
        return bytes(self.fn("rd_kafka_err2str")(code)).decode()


def library_path() -> str:
    """The librdkafka file to load: `$KRAFKA_LIBRDKAFKA`, else the confluent-kafka wheel's."""
    override = os.environ.get("KRAFKA_LIBRDKAFKA")
    if override:
        return override
    spec = importlib.util.find_spec("confluent_kafka")
    if spec is None or not spec.submodule_search_locations:
        raise LibrdkafkaUnavailable(
            "confluent-kafka is not installed (pip install confluent-kafka, or krafka[dev])"
        )
    package = Path(next(iter(spec.submodule_search_locations)))
    places = [package.parent / "confluent_kafka.libs", package / ".dylibs", package]
    for place in places:
        found = sorted(place.glob("librdkafka*.so*")) + sorted(place.glob("librdkafka*.dylib"))
        found += sorted(place.glob("librdkafka*.dll"))
        if found:
            return str(found[0])
    raise LibrdkafkaUnavailable(f"no bundled librdkafka next to {package}")


@functools.cache
def load() -> Librdkafka:
    """The process-wide librdkafka, loaded once."""
    return Librdkafka(library_path())


Partitions = Iterable[TopicPartition | tuple[str, int]]


class PartitionLists:
    """One `rd_kafka_topic_partition_list_t` per entry, destroyed on exit (the mock copies
    what it keeps)."""

    def __init__(self, lib: Librdkafka, groups: Iterable[Partitions]) -> None:
        self._lib = lib
        self._lists: list[int] = []
        try:
            for partitions in groups:
                parts = list(partitions)
                handle: int = lib.fn("rd_kafka_topic_partition_list_new")(max(1, len(parts)))
                self._lists.append(handle)
                for topic, partition in parts:
                    lib.fn("rd_kafka_topic_partition_list_add")(handle, topic.encode(), partition)
        except BaseException:
            self._destroy()
            raise

    def __len__(self) -> int:
        return len(self._lists)

    def array(self) -> Any:
        return (c_void_p * len(self._lists))(*self._lists)

    def __enter__(self) -> PartitionLists:
        return self

    def __exit__(self, *exc: object) -> None:
        self._destroy()

    def _destroy(self) -> None:
        lists, self._lists = self._lists, []
        for handle in lists:
            self._lib.fn("rd_kafka_topic_partition_list_destroy")(handle)


def _wake_while_waiting(addresses: Sequence[tuple[str, int]], done: threading.Event) -> None:
    delay = 0.005
    while not done.wait(delay):
        for address in addresses:
            try:
                socket.create_connection(address, timeout=0.2).close()
                break
            except OSError:
                continue
        delay = 0.05


@contextmanager
def woken(addresses: Sequence[tuple[str, int]]) -> Iterator[None]:
    """Keep the mock thread awake while a control call waits for it.

    Controls are ops on the mock thread's queue, signalled through a pipe; librdkafka 2.16
    drains that pipe after serving the queue, so an op arriving right after the previous one
    was answered loses its wake-up and waits for the thread's 1 s poll timeout (a third of
    back-to-back controls did). A connection to a listening broker wakes the poll instead.
    """
    done = threading.Event()
    with suppress(RuntimeError):  # at interpreter shutdown there are no new threads: ~1 s
        threading.Thread(
            target=_wake_while_waiting, args=(addresses, done), name="mock-waker", daemon=True
        ).start()
    try:
        yield
    finally:
        done.set()
