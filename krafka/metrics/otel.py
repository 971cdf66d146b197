"""OpenTelemetry messaging metrics (semantic conventions for messaging clients), recorded when a
meter provider is set: the client's `meter_provider=` or the global one
(`opentelemetry.metrics.set_meter_provider`) at `start()`. Without one the client holds None
and each hook is a single `is not None` test: no instrument, no attribute dict, no import of
opentelemetry.

* `messaging.client.operation.duration` (s): `send` (a batch, from its first record to its
  acknowledgement or failure), `poll` (a poll that returned records, from the call to its
  return), `commit` (a consumer's commit call), `acknowledge` (a share consumer's
  commit_sync/commit_async).
* `messaging.client.sent.messages`: records acknowledged, or failed (with `error.type`).
* `messaging.client.consumed.messages`: records handed to the application.
* `messaging.process.duration` (s): the application's processing of what a poll returned, from
  the poll's return to the next poll (records read one by one with `async for` have no such
  span and are not timed).

Attributes: `messaging.system` ("kafka"), `messaging.operation.name`,
`messaging.operation.type`, `messaging.destination.name` and
`messaging.destination.partition.id` where one partition is meant,
`messaging.consumer.group.name` for consumers, `error.type` on failures.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any, Final

#: The semantic conventions' advice for messaging durations (seconds).
BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)
#: The environment variable from which the OpenTelemetry API makes the global meter provider.
_PROVIDER_VARIABLE: Final = "OTEL_PYTHON_METER_PROVIDER"
_TYPES: Final = {"send": "send", "poll": "receive", "commit": "settle", "acknowledge": "settle"}


class MessagingMetrics:
    """One client's messaging instruments (only built when a meter provider is set)."""

    __slots__ = ("_base", "consumed_messages", "operation_duration", "process_duration", "sent")

    def __init__(self, meter_provider: Any, group: str | None = None) -> None:
        from krafka import __version__

        meter = meter_provider.get_meter("krafka", __version__)
        self.operation_duration = meter.create_histogram(
            "messaging.client.operation.duration", unit="s",
            description="Duration of messaging operation initiated by a producer or consumer "
            "client.",
            explicit_bucket_boundaries_advisory=BUCKETS,
        )  # fmt: skip
        self.process_duration = meter.create_histogram(
            "messaging.process.duration", unit="s",
            description="Duration of processing operation.",
            explicit_bucket_boundaries_advisory=BUCKETS,
        )  # fmt: skip
        self.sent = meter.create_counter(
            "messaging.client.sent.messages", unit="{message}",
            description="Number of messages producer attempted to send to the broker.",
        )  # fmt: skip
        self.consumed_messages = meter.create_counter(
            "messaging.client.consumed.messages", unit="{message}",
            description="Number of messages that were delivered to the application.",
        )  # fmt: skip
        self._base: dict[str, str] = {"messaging.system": "kafka"}
        if group is not None:
            self._base["messaging.consumer.group.name"] = group

    def attributes(
        self, operation: str, topic: str | None = None, partition: int | None = None
    ) -> dict[str, str]:
        found = {
            **self._base,
            "messaging.operation.name": operation,
            "messaging.operation.type": _TYPES[operation],
        }
        if topic is not None:
            found["messaging.destination.name"] = topic
        if partition is not None:
            found["messaging.destination.partition.id"] = str(partition)
        return found

    def batch_done(
        self, topic: str, partition: int, count: int, seconds: float, error: BaseException | None
    ) -> None:
        """A producer batch was acknowledged (or failed with `error`)."""
        attributes = self.attributes("send", topic, partition)
        if error is not None:
            attributes["error.type"] = type(error).__name__
        self.sent.add(count, attributes)
        self.operation_duration.record(seconds, attributes)

    def consumed(self, counts: Iterable[tuple[tuple[str, int], int]]) -> None:
        """`((topic, partition), records)` were handed to the application."""
        for (topic, partition), count in counts:
            if count:
                self.consumed_messages.add(count, self.attributes("poll", topic, partition))

    def polled(self, seconds: float) -> None:
        """A poll returned records after `seconds`."""
        self.operation_duration.record(seconds, self.attributes("poll"))

    def processed(self, seconds: float) -> None:
        self.process_duration.record(seconds, self.attributes("poll"))

    def operation(self, name: str, seconds: float, error: BaseException | None = None) -> None:
        """A `commit` or `acknowledge` call took `seconds` (and failed with `error`)."""
        attributes = self.attributes(name)
        if error is not None:
            attributes["error.type"] = type(error).__name__
        self.operation_duration.record(seconds, attributes)


def messaging_metrics(meter_provider: Any, group: str | None = None) -> MessagingMetrics | None:
    """The instruments when `meter_provider` (or else the global one) is set, else None."""
    if meter_provider is None:
        meter_provider = _global_provider()
        if meter_provider is None:
            return None
    return MessagingMetrics(meter_provider, group)


def _global_provider() -> Any:
    """The global meter provider the application set, or None. Setting one imports
    `opentelemetry.metrics`, and the API makes one from the environment only when
    OTEL_PYTHON_METER_PROVIDER names it: without either, none is set and a client's start does
    not pay for importing the API."""
    if "opentelemetry.metrics" not in sys.modules and _PROVIDER_VARIABLE not in os.environ:
        return None
    try:
        from opentelemetry import metrics
    except ImportError:
        return None
    provider = metrics.get_meter_provider()
    if isinstance(provider, metrics.NoOpMeterProvider) or type(provider).__name__.startswith(
        "_Proxy"
    ):
        return None  # none set: the API's placeholder
    return provider


__all__ = ["BUCKETS", "MessagingMetrics", "messaging_metrics"]
