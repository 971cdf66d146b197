"""The properties every client takes: `KafkaClient`'s (bootstrap, timeouts, reconnects,
metadata, security). Every client kind's table is built on this one (`base=CLIENT`)."""

from __future__ import annotations

from typing import Any, Final

from krafka.config import security
from krafka.config.options import (
    Settings,
    boolean,
    choice,
    integer,
    listing,
    millis,
    secret,
    table,
    text,
)
from krafka.sansio.backoff import BackoffPolicy

_DEFAULT_BACKOFF: Final = BackoffPolicy()


def servers(value: Any) -> str | list[str]:
    """`"h1:9092,h2:9092"` or a list of `host:port`."""
    return value if isinstance(value, str) else listing(value)


def reconnect_backoff(settings: Settings) -> Settings:
    """`reconnect.backoff.ms` and `reconnect.backoff.max.ms` -> one `BackoffPolicy`."""
    initial = settings.pop("reconnect_backoff_initial", None)
    maximum = settings.pop("reconnect_backoff_max", None)
    if initial is None and maximum is None:
        return settings
    start = _DEFAULT_BACKOFF.initial if initial is None else initial
    cap = max(start, _DEFAULT_BACKOFF.maximum if maximum is None else maximum)
    policy = BackoffPolicy(start, cap, max_retries=_DEFAULT_BACKOFF.max_retries)
    return {**settings, "reconnect_backoff": policy}


CLIENT: Final = table(
    "client",
    {
        "bootstrap.servers": ("bootstrap_servers", servers),
        "metadata.broker.list": ("bootstrap_servers", servers),
        "client.id": ("client_id", text),
        "request.timeout.ms": ("request_timeout", millis),
        "socket.connection.setup.timeout.ms": ("connect_timeout", millis),
        "reconnect.backoff.ms": ("reconnect_backoff_initial", millis),
        "reconnect.backoff.max.ms": ("reconnect_backoff_max", millis),
        "connections.max.idle.ms": ("connections_max_idle", millis),
        "metadata.max.age.ms": ("metadata_max_age", millis),
        "topic.metadata.refresh.interval.ms": ("metadata_max_age", millis),
        "metadata.max.idle.ms": ("metadata_topic_idle_ttl", millis),
        "metadata.recovery.strategy": (
            "metadata_recovery_strategy",
            choice("none", "rebootstrap"),
        ),
        "metadata.recovery.rebootstrap.trigger.ms": ("rebootstrap_trigger", millis),
        "allow.auto.create.topics": ("allow_auto_topic_creation", boolean),
        "enable.metrics.push": ("enable_metrics_push", boolean),
        # krafka's own: data connections per broker (Produce always keeps to one).
        "connections.per.broker": ("connections_per_broker", integer),
        # krafka's own: socks5://[user:pass@]host:port for every broker connection.
        "socks5.proxy": ("socks5_proxy", secret),
        **security.OPTIONS,
    },
    ignored={
        "client.dns.lookup": "every address a name resolves to is tried when connecting",
        "send.buffer.bytes": "the operating system sizes socket buffers",
        "receive.buffer.bytes": "the operating system sizes socket buffers",
        "socket.send.buffer.bytes": "the operating system sizes socket buffers",
        "socket.receive.buffer.bytes": "the operating system sizes socket buffers",
        "socket.keepalive.enable": "connections are kept alive by the protocol's own traffic",
        "socket.nagle.disable": "sockets are always opened with TCP_NODELAY",
        "socket.timeout.ms": "request.timeout.ms bounds every request",
        "socket.connection.setup.timeout.max.ms": "reconnect.backoff.max.ms paces reconnects",
        "api.version.request": "krafka always asks brokers for their API versions",
        "api.version.fallback.ms": "krafka always asks brokers for their API versions",
        "broker.version.fallback": "krafka always asks brokers for their API versions",
        "debug": "krafka logs through Python's logging module",
        "log_level": "krafka logs through Python's logging module",
        "log.connection.close": "krafka logs through Python's logging module",
        "statistics.interval.ms": "read metrics() instead",
        "metric.reporters": "read metrics() instead",
        "metrics.num.samples": "read metrics() instead",
        "metrics.sample.window.ms": "read metrics() instead",
        "metrics.recording.level": "read metrics() instead",
        "auto.include.jmx.reporter": "read metrics() instead",
        **security.IGNORED,
    },
    unsupported=security.UNSUPPORTED,
    finishers=(reconnect_backoff, security.finish),
)
