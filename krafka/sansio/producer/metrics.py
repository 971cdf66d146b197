"""Producer counters: records, bytes, batches, retries, errors, request latency, throttling.

Plain integers and floats updated by the sender; `snapshot()` gives a frozen copy.
`duplicate_batches` / `duplicate_records` count batches the broker acknowledged with
DUPLICATE_SEQUENCE_NUMBER: it already held a batch with that producer id, epoch and sequence
(a retry of one it had written), so it acknowledges without an offset and their records'
`RecordMetadata.offset` is -1. They are included in `records_sent` / `batches_sent`.
`produce_throttle_time_avg` / `_max` are Java's produce-throttle-time-avg/max (seconds here):
the KIP-219 throttle of Produce responses (over every response, 0 for the unthrottled), which
the connection waits out before its next produce request.
"""

from __future__ import annotations

from dataclasses import dataclass


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


class ProducerMetrics:
    """Mutable counters (not thread-safe: one producer, one event loop)."""

    __slots__ = (
        "batch_size_max",
        "batches_sent",
        "bytes_sent",
        "duplicate_batches",
        "duplicate_records",
        "errors",
        "latency_max",
        "latency_sum",
        "queue_time_max",
        "queue_time_sum",
        "queued_batches",
        "records_sent",
        "requests_done",
        "requests_sent",
        "retries",
        "throttle_max",
        "throttle_sum",
        "throttled_responses",
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
        self.queued_batches = 0
        self.queue_time_sum = 0.0
        self.queue_time_max = 0.0

    def batch_drained(self, queued: float) -> None:
        """A batch leaves the accumulator for its first request after `queued` seconds."""
        self.queued_batches += 1
        self.queue_time_sum += queued
        if queued > self.queue_time_max:
            self.queue_time_max = queued

    def batch_delivered(self, records: int, size: int) -> None:
        self.records_sent += records
        self.bytes_sent += size
        self.batches_sent += 1
        if size > self.batch_size_max:
            self.batch_size_max = size

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

    def snapshot(self) -> ProducerMetricsSnapshot:
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
        )
