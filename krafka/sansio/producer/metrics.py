"""Producer counters: records, bytes, batches, retries, errors, request latency, throttling.

Plain integers and floats updated by the sender; `snapshot()` gives a frozen copy.
`duplicate_batches` / `duplicate_records` count batches the broker acknowledged with
DUPLICATE_SEQUENCE_NUMBER: it already held a batch with that producer id, epoch and sequence
(a retry of one it had written), so it acknowledges without an offset and their records'
`RecordMetadata.offset` is -1. They are included in `records_sent` / `batches_sent`.
`produce_throttle_time_avg` / `_max` are Java's produce-throttle-time-avg/max (seconds here):
the KIP-219 throttle of Produce responses (over every response, 0 for the unthrottled), which
the connection waits out before its next produce request.

Rates (`record_send_rate`, `record_error_rate`, `record_retry_rate`, `byte_rate`,
`request_rate`) are per second over Java's 30-60 s window (`krafka.sansio.rate`), stamped with
the `now` the sender last saw; averages are since the start. `snapshot[name]` answers Java's
producer-metrics names (`snapshot["record-send-rate"]`), `java()` gives them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, overload

from krafka.sansio.client.stats import ConnectionMetrics
from krafka.sansio.rate import WindowedRate

#: The keys of the per-connection metrics (`ConnectionMetrics.as_dict`).
ConnectionKey = Literal["connection-metrics", "node-metrics", "api-metrics", "node-api-metrics"]


@dataclass(frozen=True, slots=True)
class ProducerMetricsSnapshot:
    records_sent: int
    bytes_sent: int
    batches_sent: int
    requests_sent: int
    retries: int
    errors: int
    duplicate_batches: int
    duplicate_records: int
    batch_size_avg: float
    batch_size_max: int
    batch_records_avg: float
    request_latency_avg: float
    request_latency_max: float
    produce_throttle_time_avg: float = 0.0
    produce_throttle_time_max: float = 0.0
    #: Java's record-queue-time-avg/max (seconds here): from a batch's creation to its first
    #: Produce request.
    record_queue_time_avg: float = 0.0
    record_queue_time_max: float = 0.0
    records_failed: int = 0
    record_send_rate: float = 0.0
    record_error_rate: float = 0.0
    record_retry_rate: float = 0.0
    byte_rate: float = 0.0
    request_rate: float = 0.0
    compression_rate_avg: float = 1.0
    buffer_total_bytes: int = 0
    buffer_available_bytes: int = 0
    #: Java's connection and node metrics of the producer's connections (all requests, not only
    #: Produce): `snapshot["connection-metrics"]`, `["node-metrics"]`, `["api-metrics"]`.
    connections: ConnectionMetrics = field(default_factory=ConnectionMetrics)

    def java(self) -> dict[str, float]:
        """Java's producer-metrics names and values (seconds, not milliseconds)."""
        return {java: float(getattr(self, name)) for java, name in JAVA_NAMES.items()}

    @overload
    def __getitem__(self, name: ConnectionKey) -> dict[Any, Any]: ...  # type: ignore[overload-overlap]
    @overload
    def __getitem__(self, name: str) -> float: ...
    def __getitem__(self, name: str) -> Any:
        if name in _CONNECTION_KEYS:
            return self.connections.as_dict()[name]
        return float(getattr(self, JAVA_NAMES[name]))


_CONNECTION_KEYS = frozenset(ConnectionKey.__args__)  # type: ignore[attr-defined]


#: Java's producer-metrics name -> the snapshot's field.
JAVA_NAMES: dict[str, str] = {
    "record-send-total": "records_sent",
    "record-send-rate": "record_send_rate",
    "record-error-total": "records_failed",
    "record-error-rate": "record_error_rate",
    "record-retry-total": "retries",
    "record-retry-rate": "record_retry_rate",
    "byte-total": "bytes_sent",
    "byte-rate": "byte_rate",
    "request-total": "requests_sent",
    "request-rate": "request_rate",
    "batch-size-avg": "batch_size_avg",
    "batch-size-max": "batch_size_max",
    "records-per-request-avg": "batch_records_avg",
    "compression-rate-avg": "compression_rate_avg",
    "request-latency-avg": "request_latency_avg",
    "request-latency-max": "request_latency_max",
    "produce-throttle-time-avg": "produce_throttle_time_avg",
    "produce-throttle-time-max": "produce_throttle_time_max",
    "buffer-total-bytes": "buffer_total_bytes",
    "buffer-available-bytes": "buffer_available_bytes",
}
assert set(JAVA_NAMES.values()) <= {f.name for f in fields(ProducerMetricsSnapshot)}


class ProducerMetrics:
    """Mutable counters (not thread-safe: one producer, one event loop)."""

    __slots__ = (
        "batch_size_max",
        "batches_sent",
        "byte_rate",
        "bytes_sent",
        "compressed_bytes",
        "duplicate_batches",
        "duplicate_records",
        "errors",
        "latency_max",
        "latency_sum",
        "now",
        "queue_time_max",
        "queue_time_sum",
        "queued_batches",
        "record_error_rate",
        "record_retry_rate",
        "record_send_rate",
        "records_failed",
        "records_sent",
        "request_rate",
        "requests_done",
        "requests_sent",
        "retries",
        "throttle_max",
        "throttle_sum",
        "throttled_responses",
        "uncompressed_bytes",
    )

    def __init__(self) -> None:
        self.records_sent = 0
        self.bytes_sent = 0
        self.batches_sent = 0
        self.requests_sent = 0
        self.requests_done = 0
        self.retries = 0
        self.errors = 0
        self.duplicate_batches = 0
        self.duplicate_records = 0
        self.batch_size_max = 0
        self.latency_sum = 0.0
        self.latency_max = 0.0
        self.throttled_responses = 0
        self.throttle_sum = 0.0
        self.throttle_max = 0.0
        self.records_failed = 0
        self.compressed_bytes = 0
        self.uncompressed_bytes = 0
        #: The time the sender last saw (its `drain`, responses and expiry stamp it).
        self.now = 0.0
        self.record_send_rate = WindowedRate()
        self.record_error_rate = WindowedRate()
        self.record_retry_rate = WindowedRate()
        self.byte_rate = WindowedRate()
        self.request_rate = WindowedRate()

        self.queued_batches = 0
        self.queue_time_sum = 0.0
        self.queue_time_max = 0.0

    def batch_drained(self, queued: float) -> None:
        """A batch leaves the accumulator for its first request after `queued` seconds."""
        self.queued_batches += 1
        self.queue_time_sum += queued
        if queued > self.queue_time_max:
            self.queue_time_max = queued

    def batch_delivered(self, records: int, size: int, uncompressed: int = 0) -> None:
        self.records_sent += records
        self.bytes_sent += size
        self.batches_sent += 1
        if size > self.batch_size_max:
            self.batch_size_max = size
        if uncompressed:
            self.compressed_bytes += size
            self.uncompressed_bytes += uncompressed
        self.record_send_rate.record(records, self.now)
        self.byte_rate.record(size, self.now)

    def batch_failed(self, records: int) -> None:
        self.errors += 1
        self.records_failed += records
        self.record_error_rate.record(records, self.now)

    def batch_retried(self, records: int) -> None:
        self.retries += 1
        self.record_retry_rate.record(records, self.now)

    def request_sent(self) -> None:
        self.requests_sent += 1
        self.request_rate.record(1, self.now)

    def duplicate_acknowledged(self, records: int) -> None:
        self.duplicate_batches += 1
        self.duplicate_records += records

    def request_done(self, latency: float) -> None:
        self.requests_done += 1
        self.latency_sum += latency
        if latency > self.latency_max:
            self.latency_max = latency

    def throttled(self, seconds: float) -> None:
        """A Produce response's throttle time (0 when the broker did not throttle)."""
        self.throttled_responses += 1
        self.throttle_sum += seconds
        if seconds > self.throttle_max:
            self.throttle_max = seconds

    def snapshot(
        self, now: float | None = None, buffer_total: int = 0, buffer_used: int = 0
    ) -> ProducerMetricsSnapshot:
        """Totals and averages; rates at `now` (default: the last time the sender saw)."""
        at = self.now if now is None else now
        batches = self.batches_sent or 1
        return ProducerMetricsSnapshot(
            records_sent=self.records_sent,
            bytes_sent=self.bytes_sent,
            batches_sent=self.batches_sent,
            requests_sent=self.requests_sent,
            retries=self.retries,
            errors=self.errors,
            duplicate_batches=self.duplicate_batches,
            duplicate_records=self.duplicate_records,
            batch_size_avg=self.bytes_sent / batches,
            batch_size_max=self.batch_size_max,
            batch_records_avg=self.records_sent / batches,
            request_latency_avg=self.latency_sum / (self.requests_done or 1),
            request_latency_max=self.latency_max,
            produce_throttle_time_avg=self.throttle_sum / (self.throttled_responses or 1),
            produce_throttle_time_max=self.throttle_max,
            record_queue_time_avg=self.queue_time_sum / (self.queued_batches or 1),
            record_queue_time_max=self.queue_time_max,
            records_failed=self.records_failed,
            record_send_rate=self.record_send_rate.rate(at),
            record_error_rate=self.record_error_rate.rate(at),
            record_retry_rate=self.record_retry_rate.rate(at),
            byte_rate=self.byte_rate.rate(at),
            request_rate=self.request_rate.rate(at),
            compression_rate_avg=self.compressed_bytes / self.uncompressed_bytes
            if self.uncompressed_bytes
            else 1.0,
            buffer_total_bytes=buffer_total,
            buffer_available_bytes=max(buffer_total - buffer_used, 0),
        )
