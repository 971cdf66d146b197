"""The producer's properties (Java's `ProducerConfig` and librdkafka's producer properties)."""

from __future__ import annotations

from typing import Any, Final

from krafka.config.client import CLIENT
from krafka.config.options import (
    Settings,
    as_is,
    boolean,
    integer,
    kbytes,
    millis,
    optional_text,
    table,
    text,
)
from krafka.errors import ConfigError

#: Java partitioner classes -> krafka's partitioner names.
_JAVA_PARTITIONERS: Final = {
    "org.apache.kafka.clients.producer.internals.DefaultPartitioner": "default",
    "org.apache.kafka.clients.producer.RoundRobinPartitioner": "round_robin",
}


def acks(value: Any) -> int | str:
    spelled = str(value).strip().lower()
    if spelled in ("all", "-1"):
        return "all"
    if spelled in ("0", "1"):
        return int(spelled)
    raise ValueError("expected all, -1, 0 or 1")


def partitioner_class(value: Any) -> Any:
    """A Java class name krafka knows, or a Python partitioner (object or callable)."""
    if not isinstance(value, str):
        return value
    name = _JAVA_PARTITIONERS.get(value.strip())
    if name is None:
        raise ConfigError(
            f"{value} is not a partitioner krafka has: pass a partitioner object or callable, "
            "or name one: partitioner=murmur2_random, consistent_random, round_robin, ..."
        )
    return name


def compression_levels(settings: Settings) -> Settings:
    """Java's per-codec levels (`compression.zstd.level`, ...) -> the level of the codec used."""
    levels = {
        codec: settings.pop(f"compression_level_{codec}")
        for codec in ("gzip", "lz4", "zstd")
        if f"compression_level_{codec}" in settings
    }
    codec = str(settings.get("compression", "none")).lower()
    if codec in levels and "compression_level" not in settings:
        settings["compression_level"] = levels[codec]
    return settings


def interceptors(value: Any) -> list[Any]:
    """Python interceptor objects (Java class names cannot be loaded)."""
    items = value if isinstance(value, list | tuple) else [value]
    if any(isinstance(item, str) for item in items):
        raise ConfigError("pass interceptor objects (with on_send / on_acknowledgement)")
    return list(items)


PRODUCER: Final = table(
    "producer",
    {
        "acks": ("acks", acks),
        "request.required.acks": ("acks", acks),
        "compression.type": ("compression", text),
        "compression.codec": ("compression", text),
        "compression.level": ("compression_level", integer),
        "compression.gzip.level": ("compression_level_gzip", integer),
        "compression.lz4.level": ("compression_level_lz4", integer),
        "compression.zstd.level": ("compression_level_zstd", integer),
        "linger.ms": ("linger", millis),
        "queue.buffering.max.ms": ("linger", millis),
        "batch.size": ("batch_size", integer),
        "buffer.memory": ("buffer_memory", integer),
        "queue.buffering.max.kbytes": ("buffer_memory", kbytes),
        "max.request.size": ("max_request_size", integer),
        "message.max.bytes": ("max_request_size", integer),
        "max.in.flight.requests.per.connection": (
            "max_in_flight_requests_per_connection",
            integer,
        ),
        "max.in.flight": ("max_in_flight_requests_per_connection", integer),
        "retries": ("retries", integer),
        "message.send.max.retries": ("retries", integer),
        "retry.backoff.ms": ("retry_backoff", millis),
        "retry.backoff.max.ms": ("retry_backoff_max", millis),
        "delivery.timeout.ms": ("delivery_timeout", millis),
        "message.timeout.ms": ("delivery_timeout", millis),
        "max.block.ms": ("max_block", millis),
        "enable.idempotence": ("enable_idempotence", boolean),
        "transactional.id": ("transactional_id", optional_text),
        "transaction.timeout.ms": ("transaction_timeout", millis),
        "partitioner": ("partitioner", as_is),
        "partitioner.class": ("partitioner", partitioner_class),
        "interceptor.classes": ("interceptors", interceptors),
    },
    base=CLIENT,
    ignored={
        "key.serializer": "keys are bytes (serialize before send)",
        "value.serializer": "values are bytes (serialize before send)",
        "batch.num.messages": "batches are bounded by batch.size bytes",
        "queue.buffering.max.messages": "the buffer is bounded by buffer.memory bytes",
        "queue.buffering.backpressure.threshold": "the buffer is bounded by buffer.memory bytes",
        "sticky.partitioning.linger.ms": "null-key records stick to a partition per batch",
        "partitioner.adaptive.partitioning.enable": "null-key records stick to a partition per "
        "batch",
        "partitioner.availability.timeout.ms": "null-key records stick to a partition per batch",
        "enable.gapless.guarantee": "an idempotent producer keeps order and fails the gap",
        "delivery.report.only.error": "await the handle send returns",
    },
    unsupported={
        "dr_cb": "await the handle send returns for each delivery",
        "dr_msg_cb": "await the handle send returns for each delivery",
        "on_delivery": "await the handle send returns for each delivery",
        "partitioner.ignore.keys": "pass partitioner=round_robin to ignore keys",
        "transaction.two.phase.commit.enable": "two-phase commit (KIP-939) is not supported",
    },
    finishers=(compression_levels,),
)
