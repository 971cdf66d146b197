"""The KIP-714 machine driven with scripted GetTelemetrySubscriptions / PushTelemetry answers."""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest
from _protobuf import read_message as _read

from krafka._codec.compression import decompress
from krafka._codec.types import Compression
from krafka.errors import KafkaConnectionError, UnsupportedVersionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
    PushTelemetryRequest,
    PushTelemetryResponse,
)
from krafka.protocol.schema import ZERO_UUID
from krafka.sansio.actions import SendRequest
from krafka.sansio.telemetry import MetricKind, MetricSample, TelemetryMachine, TelemetryState
from krafka.sansio.telemetry.machine import InstanceIdAssigned, TelemetryStopped

INSTANCE = uuid.UUID(int=0x1234)
ZSTD, GZIP = Compression.ZSTD.code, Compression.GZIP.code


class Scripted:
    """A machine with a counter the test sets, and what it sent."""

    def __init__(self, rand: float = 0.0) -> None:
        self.sent_total = 0.0
        self.machine = TelemetryMachine(self._collect, lambda: 1_000, rand=lambda: rand)

    def _collect(self) -> list[MetricSample]:
        return [
            MetricSample("org.apache.kafka.producer.record.send.total", self.sent_total,
                         MetricKind.COUNTER),
            MetricSample("io.krafka.producer.other", 1.0),
        ]  # fmt: skip

    def requests(self, now: float) -> list[SendRequest[Any]]:
        return [a for a in self.machine.next_actions(now) if isinstance(a, SendRequest)]

    def one(self, now: float, kind: type) -> SendRequest[Any]:
        (sent,) = self.requests(now)
        assert isinstance(sent.request, kind)
        return sent

    def subscribe(self, now: float = 0.0, **answer: Any) -> None:
        sent = self.one(now, GetTelemetrySubscriptionsRequest)
        self.machine.on_response(sent, subscription(**answer), now)


def subscription(**fields: Any) -> GetTelemetrySubscriptionsResponse:
    values: dict[str, Any] = {
        "client_instance_id": INSTANCE,
        "subscription_id": 7,
        "accepted_compression_types": [ZSTD, GZIP],
        "push_interval_ms": 1000,
        "telemetry_max_bytes": 1 << 20,
        "delta_temporality": True,
        "requested_metrics": ["org.apache.kafka."],
    }
    return GetTelemetrySubscriptionsResponse(**{**values, **fields})


def metric_names(request: PushTelemetryRequest) -> list[bytes]:
    data = decompress(Compression.from_code(request.compression_type), request.metrics)
    rm = _read(_read(data)[1][0])
    return [_read(m)[1][0] for m in _read(rm[2][0]).get(2, [])]


def counter_value(request: PushTelemetryRequest) -> float:
    data = decompress(Compression.from_code(request.compression_type), request.metrics)
    metric = _read(_read(_read(_read(data)[1][0])[2][0])[2][0])
    point = _read(_read(metric[7][0])[1][0])
    value: float = struct.unpack("<d", point[4][0])[0]
    return value


def test_subscribes_gets_an_instance_id_and_pushes_after_a_jittered_interval() -> None:
    s = Scripted(rand=0.0)  # the jitter's low end: half an interval
    sent = s.one(0.0, GetTelemetrySubscriptionsRequest)
    assert sent.request.client_instance_id == ZERO_UUID
    s.machine.on_response(sent, subscription(), 0.0)
    assert s.machine.next_actions(0.0) == [InstanceIdAssigned(INSTANCE)]
    assert s.machine.client_instance_id == INSTANCE
    assert s.machine.next_deadline() == 0.5
    assert s.requests(0.4) == []
    push = s.one(0.5, PushTelemetryRequest).request
    assert (push.client_instance_id, push.subscription_id, push.terminating) == (INSTANCE, 7, False)
    assert push.compression_type == ZSTD  # krafka's first choice among those accepted
    assert metric_names(push) == [b"org.apache.kafka.producer.record.send.total"]


def test_the_first_push_waits_up_to_one_and_a_half_intervals() -> None:
    s = Scripted(rand=1.0)
    s.subscribe()
    assert s.machine.next_deadline() == 1.5


def test_pushes_repeat_at_the_interval_with_counters_as_deltas() -> None:
    s = Scripted()
    s.subscribe()
    s.sent_total = 5
    first = s.one(0.5, PushTelemetryRequest)
    s.machine.on_response(first, PushTelemetryResponse(), 0.6)
    assert s.machine.next_deadline() == pytest.approx(1.6)
    s.sent_total = 8
    second = s.one(1.6, PushTelemetryRequest)
    assert (counter_value(first.request), counter_value(second.request)) == (5.0, 3.0)


def test_cumulative_temporality_pushes_totals() -> None:
    s = Scripted()
    s.subscribe(delta_temporality=False)
    s.sent_total = 5
    first = s.one(0.5, PushTelemetryRequest)
    s.machine.on_response(first, PushTelemetryResponse(), 0.5)
    s.sent_total = 8
    assert counter_value(s.one(1.5, PushTelemetryRequest).request) == 8.0


def test_no_requested_metrics_means_asking_again_after_the_interval() -> None:
    s = Scripted()
    s.subscribe(requested_metrics=[], push_interval_ms=2000)
    assert s.machine.state is TelemetryState.SUBSCRIPTION_NEEDED
    assert s.requests(1.9) == []
    again = s.one(2.0, GetTelemetrySubscriptionsRequest)
    assert again.request.client_instance_id == INSTANCE


@pytest.mark.parametrize(
    ("accepted", "chosen"),
    [([], Compression.NONE), ([GZIP], Compression.GZIP), ([99], Compression.NONE)],
)
def test_compression_is_one_the_broker_accepts(accepted: list[int], chosen: Compression) -> None:
    s = Scripted()
    s.subscribe(accepted_compression_types=accepted)
    push = s.one(0.5, PushTelemetryRequest).request
    assert push.compression_type == chosen.code and metric_names(push)


@pytest.mark.parametrize(
    "code", [ErrorCode.UNKNOWN_SUBSCRIPTION_ID, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE]
)
def test_a_stale_subscription_is_fetched_again_at_once(code: ErrorCode) -> None:
    s = Scripted()
    s.subscribe()
    push = s.one(0.5, PushTelemetryRequest)
    s.machine.on_response(push, PushTelemetryResponse(error_code=code), 0.6)
    again = s.one(0.6, GetTelemetrySubscriptionsRequest)
    assert again.request.client_instance_id == INSTANCE
    s.machine.on_response(again, subscription(subscription_id=8), 0.6)
    assert s.machine.next_deadline() == pytest.approx(1.6)  # no second jitter
    assert s.one(1.6, PushTelemetryRequest).request.subscription_id == 8


@pytest.mark.parametrize(
    "code", [ErrorCode.TELEMETRY_TOO_LARGE, ErrorCode.THROTTLING_QUOTA_EXCEEDED]
)
def test_too_large_or_throttled_subscribes_again_after_the_interval(code: ErrorCode) -> None:
    s = Scripted()
    s.subscribe()
    push = s.one(0.5, PushTelemetryRequest)
    s.machine.on_response(push, PushTelemetryResponse(error_code=code), 0.5)
    assert s.machine.state is TelemetryState.SUBSCRIPTION_NEEDED
    assert s.requests(1.4) == []
    s.one(1.5, GetTelemetrySubscriptionsRequest)


@pytest.mark.parametrize(
    "code",
    [ErrorCode.UNSUPPORTED_VERSION, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_RECORD, 12345],
)
def test_an_error_retrying_cannot_fix_stops_telemetry(code: int) -> None:
    s = Scripted()
    s.subscribe()
    push = s.one(0.5, PushTelemetryRequest)
    s.machine.on_response(push, PushTelemetryResponse(error_code=code), 0.5)
    (stopped,) = s.machine.next_actions(0.5)
    assert isinstance(stopped, TelemetryStopped) and stopped.reason is not None
    assert s.machine.done and s.machine.next_deadline() is None


def test_a_broker_without_the_api_stops_telemetry() -> None:
    s = Scripted()
    sent = s.one(0.0, GetTelemetrySubscriptionsRequest)
    s.machine.on_failure(sent, UnsupportedVersionError("no GetTelemetrySubscriptions"), 0.0)
    assert s.machine.done and s.machine.client_instance_id is None
    assert [type(e) for e in s.machine.next_actions(0.0)] == [TelemetryStopped]


def test_an_unanswered_subscription_is_retried_after_a_backoff() -> None:
    s = Scripted()
    sent = s.one(0.0, GetTelemetrySubscriptionsRequest)
    s.machine.on_failure(sent, KafkaConnectionError("gone"), 1.0)
    deadline = s.machine.next_deadline()
    assert deadline is not None and 1.0 < deadline <= 1.2
    assert s.requests(1.0) == []
    s.one(deadline, GetTelemetrySubscriptionsRequest)


def test_a_subscription_error_with_an_interval_waits_it() -> None:
    s = Scripted()
    sent = s.one(0.0, GetTelemetrySubscriptionsRequest)
    answer = subscription(error_code=ErrorCode.THROTTLING_QUOTA_EXCEEDED, push_interval_ms=3000)
    s.machine.on_response(sent, answer, 0.0)
    assert s.machine.next_deadline() == 3.0


@pytest.mark.parametrize("interval_ms", [-5, 1])
def test_a_tiny_or_negative_interval_cannot_make_the_client_spin(interval_ms: int) -> None:
    s = Scripted()
    s.subscribe(push_interval_ms=interval_ms)
    first = s.machine.next_deadline()
    assert first is not None and first > 0
    push = s.one(first, PushTelemetryRequest)
    s.machine.on_response(push, PushTelemetryResponse(), first)
    deadline = s.machine.next_deadline()
    assert deadline is not None and deadline >= first + 0.1


def test_a_subscription_without_an_instance_id_stops_telemetry() -> None:
    s = Scripted()
    s.subscribe(client_instance_id=ZERO_UUID)
    assert s.machine.done and s.requests(100.0) == []
    assert "instance id" in str(s.machine.stopped_by)


def test_closing_makes_a_terminating_push_then_stops() -> None:
    s = Scripted()
    s.subscribe()
    s.machine.close(0.2)
    push = s.one(0.2, PushTelemetryRequest)
    assert push.request.terminating
    s.machine.on_response(push, PushTelemetryResponse(), 0.3)
    assert s.machine.next_actions(0.3) == [TelemetryStopped(None)]
    assert s.machine.done


def test_closing_during_a_push_sends_the_terminating_one_after_it() -> None:
    s = Scripted()
    s.subscribe()
    push = s.one(0.5, PushTelemetryRequest)
    s.machine.close(0.6)
    assert s.requests(0.6) == []
    s.machine.on_response(push, PushTelemetryResponse(), 0.7)
    assert s.one(0.7, PushTelemetryRequest).request.terminating


def test_closing_before_any_subscription_sends_nothing() -> None:
    s = Scripted()
    sent = s.one(0.0, GetTelemetrySubscriptionsRequest)
    s.machine.close(0.1)
    s.machine.on_response(sent, subscription(), 0.2)
    assert s.machine.done and s.requests(5.0) == []


def test_a_terminating_push_that_fails_still_ends() -> None:
    s = Scripted()
    s.subscribe()
    s.machine.close(0.0)
    push = s.one(0.0, PushTelemetryRequest)
    s.machine.on_failure(push, KafkaConnectionError("gone"), 0.1)
    assert s.machine.done and s.machine.stopped_by is None
