"""One broker connection as a sans-IO state machine (h11 style).

The driver feeds it bytes (`receive_data`) and the time (`handle_timeout`), sends what
`data_to_send()` returns, and sleeps until `next_deadline()`. It handles:

* framing and correlation ids; responses must come back in request order (Kafka's
  guarantee), anything else is a `RemoteProtocolError` that closes the connection;
* ApiVersions first (retried at the broker's advertised version, else v0, on
  UNSUPPORTED_VERSION), then optional SASL, then user requests, each gated on the
  negotiated range: an API the broker does not advertise fails locally with
  `UnsupportedVersionError` and never reaches the broker;
* two lanes (`Priority.HIGH` first) and at most `max_in_flight` requests on the wire;
* request deadlines: a request still queued times out alone; one on the wire closes the
  connection (its response can no longer be told apart from a late one), as the Java client does;
* KIP-219 throttling: after `throttle_time_ms` (in versions where the client throttles),
  normal-priority requests wait, HIGH ones do not;
* KIP-368 re-authentication before `session_lifetime_ms` runs out.
"""

from __future__ import annotations

import itertools
import logging
import struct
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from types import MappingProxyType
from typing import Any, Final

from krafka.errors import (
    AuthenticationError,
    InvalidStateError,
    KafkaConnectionError,
    KafkaTimeoutError,
    KrafkaError,
    LocalProtocolError,
    RemoteProtocolError,
    UnsupportedVersionError,
)
from krafka.protocol import (
    ApiKey,
    RequestHeader,
    client_versions,
    header_versions,
    negotiate_version,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiVersionsRequest
from krafka.sansio.events import (
    Authenticated,
    ConnectionClosed,
    ConnectionReady,
    Event,
    RequestFailed,
    ResponseReceived,
    VersionRange,
)
from krafka.sansio.framing import DEFAULT_MAX_FRAME_SIZE, FrameReader, frame_parts
from krafka.sansio.responses import api_name, decode_response, versions_from_response
from krafka.sansio.sasl.exchange import SaslExchange
from krafka.sansio.sasl.mechanism import SaslMechanism, ServerBoundFactory
from krafka.sansio.throttle import client_should_throttle
from krafka.sansio.transitions import transition

_CORRELATION: Final = struct.Struct(">i")
_MAX_CORRELATION_ID: Final = 2**31 - 1


_log = logging.getLogger("krafka.connection")


class ConnectionState(Enum):
    NEGOTIATING = "negotiating"
    AUTHENTICATING = "authenticating"
    READY = "ready"
    REAUTH_PENDING = "reauth-pending"
    REAUTHENTICATING = "reauthenticating"
    CLOSED = "closed"


class Trigger(Enum):
    NEGOTIATED = "negotiated"
    NEGOTIATED_SASL = "negotiated-sasl"
    AUTHENTICATED = "authenticated"
    REAUTH_DUE = "reauth-due"
    DRAINED = "drained"


_S, _T = ConnectionState, Trigger
TRANSITIONS: Final[Mapping[tuple[ConnectionState, Trigger], ConnectionState]] = {
    (_S.NEGOTIATING, _T.NEGOTIATED): _S.READY,
    (_S.NEGOTIATING, _T.NEGOTIATED_SASL): _S.AUTHENTICATING,
    (_S.AUTHENTICATING, _T.AUTHENTICATED): _S.READY,
    (_S.READY, _T.REAUTH_DUE): _S.REAUTH_PENDING,
    (_S.REAUTH_PENDING, _T.DRAINED): _S.REAUTHENTICATING,
    (_S.REAUTHENTICATING, _T.AUTHENTICATED): _S.READY,
}
#: States in which user requests move from the queues onto the wire (a tuple: membership by
#: identity, no enum hash per dispatch).
_DISPATCHING: Final = (_S.READY,)


class Priority(Enum):
    """HIGH (heartbeats, metadata, coordinator lookups) is dispatched first and never throttled."""

    HIGH = 0
    NORMAL = 1


@dataclass(frozen=True, slots=True)
class ConnectionConfig:
    client_id: str = "krafka"
    client_software_name: str = "krafka"
    client_software_version: str = "0.1.0"
    max_in_flight: int = 5
    request_timeout: float = 30.0
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    #: Called for every (re-)authentication; None disables SASL.
    sasl: Callable[[], SaslMechanism] | None = None
    #: Re-authenticate after this fraction of the session lifetime (KIP-368).
    reauth_fraction: float = 0.9
    api_versions_version: int | None = None

    def __post_init__(self) -> None:
        if self.max_in_flight < 1:
            raise ValueError("max_in_flight must be >= 1")
        if not 0 < self.reauth_fraction < 1:
            raise ValueError("reauth_fraction must be in (0, 1)")

    def for_server(self, host: str) -> ConnectionConfig:
        """This config for a connection to `host` (a `ServerBoundFactory` learns the host)."""
        if isinstance(self.sasl, ServerBoundFactory):
            return replace(self, sasl=self.sasl.for_server(host))
        return self


_ResponseHandler = Callable[[Any, float], None]


@dataclass(slots=True, eq=False)
class _Request:
    correlation_id: int
    api_key: int
    body: Any
    version: int | None
    deadline: float
    priority: Priority = Priority.NORMAL
    payload: bytes | None = None
    expects_response: bool = True
    on_response: _ResponseHandler | None = field(default=None)


class BrokerConnection:
    """The protocol state of one connection to one broker. Create it once the transport is up."""

    def __init__(self, config: ConnectionConfig | None = None, *, now: float) -> None:
        self.config = config or ConnectionConfig()
        self.state = ConnectionState.NEGOTIATING
        self.api_versions: dict[int, VersionRange] = {}
        self.throttle_until = 0.0
        self.reauth_at: float | None = None
        self.close_error: KrafkaError | None = None
        #: Bytes of the request `send_request` last encoded (frame included), for metrics.
        self.request_size = 0
        self._frames = FrameReader(self.config.max_frame_size)
        self._ids = itertools.count()
        #: Request frames to write, in order.
        self._out: list[bytes] = []
        self._events: list[Event] = []
        self._high: deque[_Request] = deque()
        self._normal: deque[_Request] = deque()
        self._queues: dict[Priority, deque[_Request]] = {
            Priority.HIGH: self._high,
            Priority.NORMAL: self._normal,
        }
        self._in_flight: deque[_Request] = deque()
        self._sasl: SaslExchange | None = None
        self._sasl_started = 0.0
        self._now = now
        self._send_api_versions(self._api_versions_version(), now)

    # -- inputs ---------------------------------------------------------------------------------

    def send_request(
        self,
        request: Any,
        now: float,
        *,
        timeout: float | None = None,
        version: int | None = None,
        priority: Priority = Priority.NORMAL,
    ) -> int:
        """Queue `request` (a generated protocol message); returns its correlation id.

        Raises `UnsupportedVersionError` at once if the broker's ApiVersions are known and do
        not cover it, `InvalidStateError` if the connection is closed.
        """
        if self.state is ConnectionState.CLOSED:
            raise InvalidStateError("connection is closed") from self.close_error
        self._now = now
        req = _Request(
            correlation_id=self._next_id(),
            api_key=int(request.API_KEY),
            body=request,
            version=version,
            deadline=now + (self.config.request_timeout if timeout is None else timeout),
            priority=priority,
            expects_response=_expects_response(request),
        )
        if self.api_versions:
            self._encode(req)
        (self._high if priority is Priority.HIGH else self._normal).append(req)
        self._pump(now)
        return req.correlation_id

    def receive_data(self, data: bytes | bytearray | memoryview, now: float) -> list[Event]:
        """Feed bytes read from the socket; `b""` means the peer closed the connection."""
        self._now = now
        if self.state is ConnectionState.CLOSED:
            return self.drain_events()
        if not data:
            mid = " mid-frame" if self._frames.buffered else ""
            self._fail(KafkaConnectionError(f"broker closed the connection{mid}"))
            return self.drain_events()
        self._frames.feed(data)
        return self._take(iter(self._frames.next_frame, None), now)

    def receive_frames(self, payloads: list[bytes | bytearray], now: float) -> list[Event]:
        """Feed whole frames' payloads, for a transport that splits the stream into frames
        itself (a `FrameReader` whose `get_buffer` it reads into)."""
        self._now = now
        if self.state is ConnectionState.CLOSED:
            return self.drain_events()
        return self._take(iter(payloads), now)

    def _take(self, payloads: Iterator[bytes | bytearray], now: float) -> list[Event]:
        try:
            for payload in payloads:
                if self.closed:
                    break
                self._on_frame(payload, now)
        except KrafkaError as exc:
            self._fail(exc)
        self._pump(now)
        return self.drain_events()

    def handle_timeout(self, now: float) -> list[Event]:
        """Expire deadlines up to `now`, start a due re-authentication, release throttling."""
        self._now = now
        if self.state is not ConnectionState.CLOSED:
            self._expire_queued(now)
            self._expire_in_flight(now)
        reauth_at = self.reauth_at
        if self.state is ConnectionState.READY and reauth_at is not None and now >= reauth_at:
            self._transition(Trigger.REAUTH_DUE)
        self._pump(now)
        return self.drain_events()

    def connection_lost(self, error: KrafkaError) -> list[Event]:
        """The transport failed (reset, TLS error, ...)."""
        self._fail(error)
        return self.drain_events()

    def close(self) -> list[Event]:
        """Orderly local close: every pending request fails with `KafkaConnectionError`."""
        if self.state is not ConnectionState.CLOSED:
            self._fail(None)
        return self.drain_events()

    # -- outputs --------------------------------------------------------------------------------

    def data_to_send(self) -> bytes:
        """Bytes to write to the socket now (possibly empty). One request frame goes out as it
        was encoded (a produce request's batches were copied once, into it); several waiting
        frames are joined."""
        out = self._out
        if len(out) == 1:
            return out.pop()
        data = b"".join(out)
        out.clear()
        return data

    @property
    def has_data_to_send(self) -> bool:
        return bool(self._out)

    def drain_events(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    def next_deadline(self) -> float | None:
        """The earliest time `handle_timeout` has something to do, or None."""
        state = self.state
        if state is ConnectionState.CLOSED:
            return None
        due: float | None = None
        for requests in (self._in_flight, self._high, self._normal):
            for req in requests:
                if due is None or req.deadline < due:
                    due = req.deadline
        reauth_at = self.reauth_at
        if state is ConnectionState.READY and reauth_at is not None:
            due = reauth_at if due is None or reauth_at < due else due
        throttle_until = self.throttle_until
        if self._normal and throttle_until > self._now:
            due = throttle_until if due is None or throttle_until < due else due
        return due

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    @property
    def queued(self) -> int:
        return len(self._high) + len(self._normal)

    @property
    def load(self) -> int:
        """Requests queued or on the wire; the pool picks the least loaded connection."""
        return len(self._in_flight) + len(self._high) + len(self._normal)

    @property
    def is_ready(self) -> bool:
        return self.state in (_S.READY, _S.REAUTH_PENDING, _S.REAUTHENTICATING)

    @property
    def closed(self) -> bool:
        return self.state is ConnectionState.CLOSED

    def version_for(self, api_key: int) -> int:
        """The version requests of `api_key` use here; raises `UnsupportedVersionError`."""
        if not self.api_versions:
            raise InvalidStateError("ApiVersions not negotiated yet")
        broker = self.api_versions.get(int(api_key))
        if broker is None:
            raise UnsupportedVersionError(f"broker does not support {api_name(api_key)}")
        return negotiate_version(api_key, broker.min_version, broker.max_version)

    # -- state ----------------------------------------------------------------------------------

    def _transition(self, trigger: Trigger) -> None:
        new = TRANSITIONS.get((self.state, trigger))
        if new is None:
            raise LocalProtocolError(f"no transition from {self.state.name} on {trigger.name}")
        transition(_log, "broker connection", self.state, new, trigger.name)
        self.state = new
        if new is ConnectionState.REAUTHENTICATING:
            try:
                self._start_sasl(self._now)
            except KrafkaError as exc:
                self._fail(exc)

    def _fail(self, error: KrafkaError | None) -> None:
        if self.state is ConnectionState.CLOSED:
            return
        transition(_log, "broker connection", self.state, ConnectionState.CLOSED, error)
        self.state = ConnectionState.CLOSED
        self.close_error = error
        self._out.clear()  # requests reported failed must not reach the broker afterwards
        pending = list(self._in_flight) + [r for q in self._queues.values() for r in q]
        self._in_flight.clear()
        for queue in self._queues.values():
            queue.clear()
        for req in pending:
            if req.on_response is None:
                self._events.append(RequestFailed(req.correlation_id, _lost(error)))
        self._events.append(ConnectionClosed(error))

    def _next_id(self) -> int:
        cid = next(self._ids)
        if cid >= _MAX_CORRELATION_ID:
            self._ids = itertools.count(1)
            cid = 0
        return cid

    # -- dispatch -------------------------------------------------------------------------------

    def _pump(self, now: float) -> None:
        if self.state is ConnectionState.REAUTH_PENDING and not self._in_flight:
            self._transition(Trigger.DRAINED)
        if self.state not in _DISPATCHING:
            return
        while len(self._in_flight) < self.config.max_in_flight:
            req = self._pop_dispatchable(now)
            if req is None:
                return
            self._dispatch(req, now)

    def _pop_dispatchable(self, now: float) -> _Request | None:
        high, normal = self._high, self._normal
        if high:
            return high.popleft()
        if normal and now >= self.throttle_until:
            return normal.popleft()
        return None

    def _dispatch(self, req: _Request, now: float) -> None:
        if req.payload is None:
            try:
                self._encode(req)
            except KrafkaError as exc:
                self._events.append(RequestFailed(req.correlation_id, exc))
                return
        assert req.payload is not None and req.version is not None
        self._out.append(req.payload)
        req.payload = None
        if req.expects_response:
            self._in_flight.append(req)
        else:
            self._events.append(
                ResponseReceived(req.correlation_id, req.api_key, req.version, None)
            )

    def _encode(self, req: _Request) -> None:
        api_key = req.api_key
        version = self.version_for(api_key) if req.version is None else req.version
        broker = self.api_versions.get(api_key)
        body = req.body
        if broker is None or not broker.min_version <= version <= broker.max_version:
            raise UnsupportedVersionError(
                f"{api_name(api_key)} v{version} is not supported by the broker"
            )
        if not body.MIN_VERSION <= version <= body.MAX_VERSION:
            raise UnsupportedVersionError(f"{api_name(api_key)} v{version} is unknown to krafka")
        req.version = version
        req.payload = self._frame_request(body, api_key, version, req.correlation_id)
        self.request_size = len(req.payload)

    def _frame_request(self, body: Any, api_key: int, version: int, correlation_id: int) -> bytes:
        req_hdr_v, _ = header_versions(api_key, version)
        header = RequestHeader(
            request_api_key=api_key,
            request_api_version=version,
            correlation_id=correlation_id,
            client_id=self.config.client_id,
        )
        parts: list[bytes | bytearray | memoryview] = [b""]
        header.encode_into(parts, req_hdr_v)
        body.encode_into(parts, version)
        return frame_parts(parts)

    def _send_internal(
        self, body: Any, version: int, now: float, on_response: _ResponseHandler
    ) -> None:
        """Write a handshake request (ApiVersions, SASL) at once, ahead of the lanes."""
        req = _Request(
            correlation_id=self._next_id(),
            api_key=int(body.API_KEY),
            body=body,
            version=version,
            deadline=now + self.config.request_timeout,
            priority=Priority.HIGH,
            on_response=on_response,
        )
        self._out.append(self._frame_request(body, req.api_key, version, req.correlation_id))
        self._in_flight.append(req)

    # -- receive --------------------------------------------------------------------------------

    def _on_frame(self, payload: bytes | bytearray, now: float) -> None:
        if len(payload) < _CORRELATION.size:
            raise RemoteProtocolError(f"response frame of {len(payload)} bytes has no header")
        (cid,) = _CORRELATION.unpack_from(payload)
        if not self._in_flight:
            raise RemoteProtocolError(f"response with correlation id {cid} but none in flight")
        req = self._in_flight[0]
        if cid != req.correlation_id:
            raise RemoteProtocolError(
                f"response correlation id {cid} does not match the oldest request "
                f"({req.correlation_id}, {api_name(req.api_key)})"
            )
        self._in_flight.popleft()
        assert req.version is not None
        try:
            response = decode_response(req.api_key, req.version, payload)
        except KrafkaError as exc:  # its own answer is broken: that, not a lost connection
            if req.on_response is None:
                self._events.append(RequestFailed(req.correlation_id, exc))
            raise
        throttle_ms = int(getattr(response, "throttle_time_ms", 0) or 0)
        if throttle_ms > 0 and client_should_throttle(req.api_key, req.version):
            self.throttle_until = max(self.throttle_until, now + throttle_ms / 1000)
        if req.on_response is not None:
            req.on_response(response, now)
        else:
            self._events.append(
                ResponseReceived(
                    req.correlation_id, req.api_key, req.version, response, throttle_ms
                )
            )

    def _expire_queued(self, now: float) -> None:
        for queue in self._queues.values():
            expired = [r for r in queue if r.deadline <= now]
            for req in expired:
                queue.remove(req)
                error = KafkaTimeoutError(
                    f"{api_name(req.api_key)} request timed out before it could be sent"
                )
                self._events.append(RequestFailed(req.correlation_id, error))

    def _expire_in_flight(self, now: float) -> None:
        expired = next((r for r in self._in_flight if r.deadline <= now), None)
        if expired is None:
            return
        self._in_flight.remove(expired)
        error = KafkaTimeoutError(f"{api_name(expired.api_key)} response not received in time")
        if expired.on_response is None:
            self._events.append(RequestFailed(expired.correlation_id, error))
        self._fail(error)

    # -- ApiVersions ----------------------------------------------------------------------------

    def _api_versions_version(self) -> int:
        wanted = self.config.api_versions_version
        top = client_versions(ApiKey.API_VERSIONS)[1]
        return top if wanted is None else max(0, min(wanted, top))

    def _send_api_versions(self, version: int, now: float) -> None:
        body = ApiVersionsRequest(
            client_software_name=self.config.client_software_name,
            client_software_version=self.config.client_software_version,
        )

        def on_response(response: Any, t: float) -> None:
            self._on_api_versions(response, t, version)

        self._send_internal(body, version, now, on_response)

    def _on_api_versions(self, response: Any, now: float, version: int) -> None:
        if response.error_code == ErrorCode.UNSUPPORTED_VERSION and version > 0:
            advertised = {k.api_key: k.max_version for k in response.api_keys or ()}
            retry = min(advertised.get(ApiKey.API_VERSIONS, 0), version - 1)
            self._send_api_versions(max(0, retry), now)
            return
        if response.error_code != ErrorCode.NONE:
            raise UnsupportedVersionError(f"ApiVersions failed: error code {response.error_code}")
        self.api_versions = dict(versions_from_response(response))
        for queue in self._queues.values():
            for req in list(queue):
                try:
                    self._encode(req)
                except KrafkaError as exc:
                    queue.remove(req)
                    self._events.append(RequestFailed(req.correlation_id, exc))
        if self.config.sasl is None:
            self._become_ready(Trigger.NEGOTIATED)
        else:
            self._transition(Trigger.NEGOTIATED_SASL)
            self._start_sasl(now)

    def _become_ready(self, trigger: Trigger) -> None:
        self._transition(trigger)
        self._events.append(ConnectionReady(MappingProxyType(dict(self.api_versions))))

    # -- SASL -----------------------------------------------------------------------------------

    def _start_sasl(self, now: float) -> None:
        assert self.config.sasl is not None
        handshake = self.api_versions.get(ApiKey.SASL_HANDSHAKE)
        if handshake is None or handshake.max_version < 1:
            raise AuthenticationError("broker does not support SaslHandshake v1 (KIP-152)")
        if ApiKey.SASL_AUTHENTICATE not in self.api_versions:
            raise AuthenticationError("broker does not support SaslAuthenticate")
        self._sasl = SaslExchange(self.config.sasl())
        self._sasl_started = now
        self._send_internal(self._sasl.first_request(), 1, now, self._on_sasl_response)

    def _on_sasl_response(self, response: Any, now: float) -> None:
        assert self._sasl is not None
        follow_up = self._sasl.on_response(response)
        if follow_up is not None:
            version = self.version_for(ApiKey.SASL_AUTHENTICATE)
            self._send_internal(follow_up, version, now, self._on_sasl_response)
            return
        reauth = self.state is ConnectionState.REAUTHENTICATING
        lifetime_ms = self._sasl.session_lifetime_ms
        self.reauth_at = None
        if lifetime_ms > 0:
            self.reauth_at = self._sasl_started + lifetime_ms / 1000 * self.config.reauth_fraction
        event = Authenticated(self._sasl.mechanism.name, lifetime_ms, reauth)
        self._sasl = None
        self._events.append(event)
        if reauth:
            self._transition(Trigger.AUTHENTICATED)
        else:
            self._become_ready(Trigger.AUTHENTICATED)


def _expects_response(request: Any) -> bool:
    """A Produce with acks=0 gets no response from the broker."""
    return not (int(request.API_KEY) == ApiKey.PRODUCE and getattr(request, "acks", -1) == 0)


def _lost(error: KrafkaError | None) -> KrafkaError:
    if error is None:
        return KafkaConnectionError("connection closed locally")
    if isinstance(error, KafkaTimeoutError | KafkaConnectionError | RemoteProtocolError):
        return KafkaConnectionError(f"connection lost: {error}")
    return error
