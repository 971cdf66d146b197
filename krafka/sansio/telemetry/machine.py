"""KIP-714 client metrics: the client's side of GetTelemetrySubscriptions and PushTelemetry.

The broker hands out a client instance id and a subscription (metric name prefixes, push
interval, accepted compressions, size limit); the client pushes the metrics asked for at that
interval, the first push jittered over 0.5-1.5 intervals so restarted fleets do not push in step,
and a last, terminating push when it closes. Errors follow Java's `ClientTelemetryReporter`:
UNKNOWN_SUBSCRIPTION_ID and UNSUPPORTED_COMPRESSION_TYPE subscribe again at once,
TELEMETRY_TOO_LARGE and THROTTLING_QUOTA_EXCEEDED after an interval, INVALID_REQUEST,
INVALID_RECORD, UNSUPPORTED_VERSION (or a broker without the API) and any unknown code stop
telemetry for good. A request that got no answer subscribes again after a backoff.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Final

from krafka._codec.compression import compress
from krafka._codec.types import Compression
from krafka.errors import KrafkaError, UnsupportedVersionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
    PushTelemetryRequest,
    PushTelemetryResponse,
)
from krafka.protocol.schema import ZERO_UUID
from krafka.sansio.actions import AnyBroker, SendRequest
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.telemetry.otlp import (
    MetricKind,
    MetricSample,
    Point,
    Temporality,
    encode_metrics_data,
    selected,
)
from krafka.sansio.transitions import transition

#: Java's DEFAULT_PUSH_INTERVAL_MS: the wait when the broker names no interval.
DEFAULT_PUSH_INTERVAL: Final = 300.0
INITIAL_JITTER: Final = (0.5, 1.5)
#: The shortest interval taken from a broker (its own floor for `interval.ms`): a broker naming
#: less (or a negative one) cannot make the client push in a loop.
MIN_PUSH_INTERVAL: Final = 0.1
_NS: Final = 1_000_000_000
#: Compressions the client writes, in its order of preference among those the broker accepts.
_PREFERRED: Final = (Compression.ZSTD, Compression.LZ4, Compression.GZIP, Compression.SNAPPY)
#: Backoff for a subscription or push that got no answer.
_RETRY: Final = BackoffPolicy(0.1, 30.0, max_retries=None)
_RESUBSCRIBE_NOW: Final = frozenset(
    {ErrorCode.UNKNOWN_SUBSCRIPTION_ID, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE}
)
_RESUBSCRIBE_LATER: Final = frozenset(
    {ErrorCode.TELEMETRY_TOO_LARGE, ErrorCode.THROTTLING_QUOTA_EXCEEDED}
)


@dataclass(frozen=True, slots=True)
class InstanceIdAssigned:
    """The broker named this client's instance id (first subscription)."""

    client_instance_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class TelemetryStopped:
    """Telemetry ended: the client closed (`reason` None) or an error stopped it for good."""

    reason: KrafkaError | ErrorCode | None = None


TelemetryEvent = InstanceIdAssigned | TelemetryStopped


_log = logging.getLogger("krafka.telemetry")


class TelemetryState(Enum):
    SUBSCRIPTION_NEEDED = "subscription needed"
    SUBSCRIPTION_IN_PROGRESS = "subscription in progress"
    PUSH_NEEDED = "push needed"
    PUSH_IN_PROGRESS = "push in progress"
    TERMINATING_PUSH_NEEDED = "terminating push needed"
    TERMINATING_PUSH_IN_PROGRESS = "terminating push in progress"
    TERMINATED = "terminated"


@dataclass(frozen=True, slots=True)
class Subscription:
    """What the broker asked for (GetTelemetrySubscriptions' answer)."""

    subscription_id: int
    requested_metrics: tuple[str, ...]
    push_interval: float
    max_bytes: int
    compression: Compression
    delta: bool


@dataclass(frozen=True, slots=True)
class TelemetryConfig:
    """`resource`: the OTLP resource attributes pushed with every payload."""

    resource: Mapping[str, str] = field(default_factory=dict)
    backoff: BackoffPolicy = field(default_factory=lambda: _RETRY)


class TelemetryMachine:
    """One client's KIP-714 telemetry. `collect` reads the client's own metrics (a snapshot,
    already named: `krafka.sansio.telemetry.names`); `wall_ns` is the wall clock for the
    points' timestamps (OTLP times are Unix nanoseconds, unlike the monotonic `now`)."""

    def __init__(
        self,
        collect: Callable[[], Sequence[MetricSample]],
        wall_ns: Callable[[], int],
        config: TelemetryConfig | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.config = config or TelemetryConfig()
        self._state = TelemetryState.SUBSCRIPTION_NEEDED
        self.client_instance_id: uuid.UUID | None = None
        self.subscription: Subscription | None = None
        #: Why telemetry stopped before the client closed (None while it runs).
        self.stopped_by: KrafkaError | ErrorCode | None = None
        self._collect = collect
        self._wall_ns = wall_ns
        self._rand = rand
        self._due: float | None = 0.0
        self._backoff = Backoff(self.config.backoff)
        self._pushed_once = False
        self._last_push_ns: int | None = None
        self._start_ns: int | None = None
        self._last_values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._events: list[TelemetryEvent] = []

    # -- the application ------------------------------------------------------------------------

    @property
    def state(self) -> TelemetryState:
        return self._state

    @state.setter
    def state(self, new: TelemetryState) -> None:
        transition(_log, "telemetry", self._state, new)
        self._state = new

    def close(self, now: float) -> None:
        """The client closes: a terminating push when something is subscribed, else done."""
        if self.state is TelemetryState.PUSH_NEEDED:
            self.state, self._due = TelemetryState.TERMINATING_PUSH_NEEDED, now
        elif self.state is TelemetryState.PUSH_IN_PROGRESS:
            self.state, self._due = TelemetryState.TERMINATING_PUSH_NEEDED, None
        elif self.state is not TelemetryState.TERMINATING_PUSH_IN_PROGRESS:
            self._end()

    @property
    def done(self) -> bool:
        return self.state is TelemetryState.TERMINATED

    # -- the driver -----------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        return self._due

    def next_actions(self, now: float) -> list[SendRequest[Any] | TelemetryEvent]:
        """The events since the last call, then the request due at `now` (if any)."""
        actions: list[SendRequest[Any] | TelemetryEvent] = list(self._events)
        self._events.clear()
        request = self._request_due(now)
        if request is not None:
            actions.append(SendRequest(AnyBroker(), request))
        return actions

    def _request_due(self, now: float) -> Any:
        if self._due is None or now < self._due:
            return None
        state = self.state
        if state is TelemetryState.SUBSCRIPTION_NEEDED:
            self.state, self._due = TelemetryState.SUBSCRIPTION_IN_PROGRESS, None
            return GetTelemetrySubscriptionsRequest(
                client_instance_id=self.client_instance_id or ZERO_UUID
            )
        terminating = state is TelemetryState.TERMINATING_PUSH_NEEDED
        if state is TelemetryState.PUSH_NEEDED or terminating:
            self.state = (
                TelemetryState.TERMINATING_PUSH_IN_PROGRESS
                if terminating
                else TelemetryState.PUSH_IN_PROGRESS
            )
            self._due = None
            return self._push(terminating)
        return None

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        if self.state is TelemetryState.TERMINATED:
            return
        if isinstance(response, GetTelemetrySubscriptionsResponse):
            self._on_subscription(response, now)
        elif isinstance(response, PushTelemetryResponse):
            self._on_pushed(response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if self.state is TelemetryState.TERMINATED:
            return
        if isinstance(error, UnsupportedVersionError):
            self._stop(error)
        elif self._terminating():
            self._end()
        else:
            self._resubscribe_at(self._backoff.failed(now, self._rand))

    # -- answers --------------------------------------------------------------------------------

    def _on_subscription(self, response: GetTelemetrySubscriptionsResponse, now: float) -> None:
        if response.client_instance_id != ZERO_UUID and self.client_instance_id is None:
            self.client_instance_id = response.client_instance_id
            self._events.append(InstanceIdAssigned(response.client_instance_id))
        code = _code(response.error_code)
        if code != ErrorCode.NONE:
            self._on_error(code, _interval(response.push_interval_ms), now)
            return
        if self.client_instance_id is None:
            self._stop(KrafkaError("GetTelemetrySubscriptions assigned no client instance id"))
            return
        self._backoff.succeeded()
        interval = _interval(response.push_interval_ms)
        self.subscription = Subscription(
            response.subscription_id,
            tuple(response.requested_metrics),
            interval,
            response.telemetry_max_bytes,
            _compression(response.accepted_compression_types),
            response.delta_temporality,
        )
        if self._terminating():
            self._end()
        elif not response.requested_metrics:
            self.state, self._due = TelemetryState.SUBSCRIPTION_NEEDED, now + interval
        else:
            self.state = TelemetryState.PUSH_NEEDED
            self._due = now + (interval if self._pushed_once else self._jittered(interval))

    def _on_pushed(self, response: PushTelemetryResponse, now: float) -> None:
        code = _code(response.error_code)
        if self.state is TelemetryState.TERMINATING_PUSH_IN_PROGRESS:
            self._end()
        elif self.state is TelemetryState.TERMINATING_PUSH_NEEDED:
            self._due = now  # the client closed while this push was on its way
        elif code != ErrorCode.NONE:
            self._on_error(code, sub.push_interval if (sub := self.subscription) else None, now)
        elif self.state is TelemetryState.PUSH_IN_PROGRESS and self.subscription is not None:
            self._backoff.succeeded()
            self.state = TelemetryState.PUSH_NEEDED
            self._due = now + self.subscription.push_interval

    def _on_error(self, code: ErrorCode, interval: float | None, now: float) -> None:
        if code in _RESUBSCRIBE_NOW:
            self._resubscribe_at(now)
        elif code in _RESUBSCRIBE_LATER:
            self._resubscribe_at(now + (interval or DEFAULT_PUSH_INTERVAL))
        else:
            self._stop(code)

    def _resubscribe_at(self, when: float) -> None:
        if self._terminating():
            self._end()
            return
        self.state, self._due = TelemetryState.SUBSCRIPTION_NEEDED, when

    def _stop(self, reason: KrafkaError | ErrorCode) -> None:
        self.stopped_by = reason
        self._end(reason)

    def _end(self, reason: KrafkaError | ErrorCode | None = None) -> None:
        if self.state is not TelemetryState.TERMINATED:
            self._events.append(TelemetryStopped(reason))
        self.state, self._due = TelemetryState.TERMINATED, None

    def _terminating(self) -> bool:
        return self.state in (
            TelemetryState.TERMINATING_PUSH_NEEDED,
            TelemetryState.TERMINATING_PUSH_IN_PROGRESS,
        )

    # -- the payload ----------------------------------------------------------------------------

    def _push(self, terminating: bool) -> PushTelemetryRequest:
        assert self.subscription is not None and self.client_instance_id is not None
        sub = self.subscription
        self._pushed_once = True
        payload = self._payload(sub)
        return PushTelemetryRequest(
            client_instance_id=self.client_instance_id,
            subscription_id=sub.subscription_id,
            terminating=terminating,
            compression_type=sub.compression.code,
            metrics=compress(sub.compression, payload),
        )

    def _payload(self, sub: Subscription) -> bytes:
        now_ns = self._wall_ns()
        if self._start_ns is None:
            self._start_ns = now_ns
        since = self._last_push_ns if sub.delta and self._last_push_ns else self._start_ns
        points = [self._point(s, sub.delta, since, now_ns) for s in self._samples(sub)]
        self._last_push_ns = now_ns
        temporality = Temporality.DELTA if sub.delta else Temporality.CUMULATIVE
        return encode_metrics_data(points, self.config.resource, temporality)

    def _samples(self, sub: Subscription) -> list[MetricSample]:
        return selected(self._collect(), sub.requested_metrics)

    def _point(self, sample: MetricSample, delta: bool, since: int, now_ns: int) -> Point:
        if sample.kind is MetricKind.GAUGE:
            return Point(sample, now_ns, now_ns)
        if delta:
            key = (sample.name, sample.attributes)
            last = self._last_values.get(key, 0.0)
            self._last_values[key] = sample.value
            sample = replace(sample, value=sample.value - last)
        return Point(sample, since, now_ns)

    def _jittered(self, interval: float) -> float:
        low, high = INITIAL_JITTER
        return interval * (low + (high - low) * self._rand())


def _interval(push_interval_ms: int) -> float:
    """A subscription's push interval in seconds: the default when it names none."""
    if push_interval_ms <= 0:
        return DEFAULT_PUSH_INTERVAL
    return max(MIN_PUSH_INTERVAL, push_interval_ms / 1000)


def _code(value: int) -> ErrorCode:
    """The answer's error code (one krafka does not know stops telemetry, as Java's does)."""
    try:
        return ErrorCode(value)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR


def _compression(accepted: Sequence[int]) -> Compression:
    """The first of krafka's preferred compressions the broker accepts; none when it names
    none (or only unknown ones)."""
    codes = set(accepted)
    return next((c for c in _PREFERRED if c.code in codes), Compression.NONE)


__all__ = [
    "DEFAULT_PUSH_INTERVAL",
    "InstanceIdAssigned",
    "Subscription",
    "TelemetryConfig",
    "TelemetryEvent",
    "TelemetryMachine",
    "TelemetryState",
    "TelemetryStopped",
]
