"""The consumer's properties (Java's `ConsumerConfig` and librdkafka's consumer properties)."""

from __future__ import annotations

from typing import Any, Final

from krafka.config.client import CLIENT
from krafka.config.options import (
    boolean,
    choice,
    integer,
    kbytes,
    listing,
    millis,
    optional_text,
    table,
    text,
)

#: Java assignor classes -> krafka's assignor names.
_JAVA_ASSIGNORS: Final = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}


def assignors(value: Any) -> list[str]:
    """`range,cooperative-sticky` or Java class names, in preference order."""
    return [_JAVA_ASSIGNORS.get(name, name) for name in listing(value)]


#: What every consuming client takes (the consumer and the share consumer).
FETCHING: Final[dict[str, tuple[str, Any]]] = {
    "fetch.min.bytes": ("fetch_min_bytes", integer),
    "fetch.max.bytes": ("fetch_max_bytes", integer),
    "fetch.max.wait.ms": ("fetch_max_wait", millis),
    "fetch.wait.max.ms": ("fetch_max_wait", millis),
    "max.poll.records": ("max_poll_records", integer),
    "max.poll.interval.ms": ("max_poll_interval", millis),
    "client.rack": ("client_rack", optional_text),
    "check.crcs": ("check_crcs", boolean),
    "default.api.timeout.ms": ("default_api_timeout", millis),
    "retry.backoff.ms": ("retry_backoff", millis),
    "retry.backoff.max.ms": ("retry_backoff_max", millis),
}

CONSUMER: Final = table(
    "consumer",
    {
        "group.id": ("group_id", text),
        "group.instance.id": ("group_instance_id", optional_text),
        "group.protocol": ("group_protocol", choice("classic", "consumer")),
        "group.remote.assignor": ("group_remote_assignor", optional_text),
        "partition.assignment.strategy": ("partition_assignment_strategy", assignors),
        "session.timeout.ms": ("session_timeout", millis),
        "heartbeat.interval.ms": ("heartbeat_interval", millis),
        "enable.auto.commit": ("enable_auto_commit", boolean),
        "auto.commit.interval.ms": ("auto_commit_interval", millis),
        "auto.offset.reset": (
            "auto_offset_reset",
            choice("earliest", "latest", "none", "smallest", "largest", "beginning"),
        ),
        "isolation.level": ("isolation_level", choice("read_uncommitted", "read_committed")),
        "max.partition.fetch.bytes": ("max_partition_fetch_bytes", integer),
        "fetch.message.max.bytes": ("max_partition_fetch_bytes", integer),
        "queued.max.messages.kbytes": ("fetch_max_bytes", kbytes),
        **FETCHING,
    },
    base=CLIENT,
    ignored={
        "key.deserializer": "pass key_deserializer= (a Python callable); keys are bytes",
        "value.deserializer": "pass value_deserializer= (a Python callable); values are bytes",
        "exclude.internal.topics": "internal topics are never subscribed by a pattern",
        "enable.partition.eof": "poll() returns [] at the end of a partition",
        "enable.auto.offset.store": "positions advance as records are returned",
        "interceptor.classes": "pass interceptors= (Python objects)",
    },
)
