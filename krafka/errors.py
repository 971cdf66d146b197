"""The krafka exception hierarchy.

Every error krafka raises is a `KrafkaError`. Retriable conditions (a leader moved, a broker
restarted) set `retriable = True` so callers and the retry loops can tell them apart without
matching on types. Every broker error code maps onto one class (`error_class(code)`), named
CamelCase of Kafka's name (a trailing `_ERROR`/`_EXCEPTION` dropped; the literal spelling is an
alias) plus `Error`, with `.code`, `.retriable` and Kafka's default message; the table is
`krafka.protocol.error_codes`.

    KrafkaError
    ├── RetriableError
    │   ├── KafkaTimeoutError ── RequestTimedOutError (7)
    │   ├── RetriableBrokerError ── NotLeaderOrFollowerError (6), ...   (retriable codes)
    │   └── KafkaConnectionError (a local connection failure, not a broker's code 13)
    │       └── ProxyConnectionError (the SOCKS5 proxy is unreachable or cannot reach the broker)
    ├── BrokerError ── RetriableBrokerError / NonRetriableBrokerError   (every code)
    │   └── NonRetriableBrokerError ── ProducerFencedError (90), UnsupportedVersionError (35),
    │       AuthorizationError (*_AUTHORIZATION_FAILED), UnknownBrokerError, ...
    ├── AuthenticationError ── SaslAuthenticationError (58), UnsupportedSaslMechanismError (33),
    │                          IllegalSaslStateError (34), ProxyAuthenticationError
    ├── ProtocolError ── LocalProtocolError (we built something invalid)
    │                └── RemoteProtocolError (the peer sent malformed bytes)
    ├── CorruptRecordError (also code 2, CORRUPT_MESSAGE), UnsupportedCodecError
    ├── ConfigError ── UnknownKeywordError (also a TypeError), InvalidStateError
    ├── MissingDependencyError (also a ModuleNotFoundError: pip install 'krafka[extra]')
    ├── CommitFailedError (a group member's commit outside its active generation)
    └── WakeupError (a consumer's `wakeup()` interrupted a blocking call)
"""

from __future__ import annotations

from typing import Any, ClassVar

from krafka.protocol.error_codes import ErrorCode


class KrafkaError(Exception):
    """Base class of every krafka error."""

    retriable: bool = False


class RetriableError(KrafkaError):
    """A condition that may succeed when retried."""

    retriable = True


class CorruptRecordError(KrafkaError):
    """Record bytes are malformed: CRC mismatch, bad length, bad varint, oversize payload.

    Raised for any hostile or damaged input to the record codec; `offset` is the byte offset in
    the buffer given to the decoder where the bad item starts, when known. A broker reports the
    same condition as error code 2 (CORRUPT_MESSAGE), which `error_for_code` maps here (marked
    retriable on that instance, as Kafka does).
    """

    code: ClassVar[int] = ErrorCode.CORRUPT_MESSAGE
    error_name: ClassVar[str] = "CORRUPT_MESSAGE"

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message if offset is None else f"{message} (at byte {offset})")
        self.offset = offset


CorruptMessageError = CorruptRecordError


class UnsupportedCodecError(KrafkaError):
    """A compression codec the record batch names is unknown or its library is missing."""


class ProtocolError(KrafkaError):
    """Bytes on the wire do not follow the Kafka protocol."""


class LocalProtocolError(ProtocolError):
    """We were asked to encode something invalid (wrong type, field absent in the version)."""


class RemoteProtocolError(ProtocolError):
    """The peer sent malformed bytes: truncated, bad lengths, bad UTF-8, trailing garbage."""


class KafkaTimeoutError(RetriableError):
    """An operation did not complete in time."""


class KafkaConnectionError(RetriableError):
    """A local connection failure: refused, reset, closed mid-request, TLS or DNS trouble.

    Distinct from `NetworkError`, which is a broker *answering* NETWORK_EXCEPTION (code 13).
    """


class ConfigError(KrafkaError):
    """A configuration value is missing, unknown or invalid."""


class UnknownKeywordError(ConfigError, TypeError):
    """A client constructor got a keyword it does not take (a `TypeError`, as Python's own)."""


class MissingDependencyError(KrafkaError, ModuleNotFoundError):
    """An optional dependency is not installed; the message names the extra that installs it."""


class InvalidStateError(KrafkaError):
    """An operation is not valid in the current state of a client or state machine."""


class IllegalStateError(InvalidStateError):
    """A call the client's state forbids (Java's IllegalStateException): mixing `assign` and
    `subscribe`, polling with unacknowledged share records in explicit mode, ..."""


class NoOffsetForPartitionError(KrafkaError):
    """A partition has no committed or initial offset and `auto_offset_reset` is "none"."""

    def __init__(self, message: str, partitions: tuple[Any, ...] = ()) -> None:
        super().__init__(message)
        self.partitions = partitions


class RecordDeserializationError(KrafkaError):
    """A key or value deserializer failed; `seek` past `offset` to skip the record."""

    def __init__(self, message: str, topic: str, partition: int, offset: int) -> None:
        super().__init__(message)
        self.topic, self.partition, self.offset = topic, partition, offset


class CommitFailedError(KrafkaError):
    """An offset commit of a group member cannot succeed: the member is not (or no longer) part
    of the group's active generation, so its partitions may already belong to another member.

    Not retriable as such: the member rejoins on its next poll, and only offsets of partitions
    assigned to it then may be committed. Java's CommitFailedException.
    """

    DEFAULT_MESSAGE = (
        "Commit cannot be completed since the group has already rebalanced and assigned the "
        "partitions to another member. This means that the time between subsequent calls to "
        "poll() was longer than the configured max_poll_interval, which typically implies that "
        "the poll loop is spending too much time processing messages. You can address this "
        "either by increasing max_poll_interval or by reducing the maximum size of batches "
        "returned in poll() with max_poll_records."
    )

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.DEFAULT_MESSAGE)


class WakeupError(KrafkaError):
    """`wakeup()` was called: the consumer call blocked then (or the next one) raises this once,
    Java's WakeupException; the consumer stays usable (close it, or poll again)."""


class AuthenticationError(KrafkaError):
    """Authentication (SASL, TLS) with a broker failed."""


class ProxyError(KrafkaError):
    """Reaching a broker through the SOCKS5 proxy (`socks5_proxy`) failed. The message names the
    proxy by `host:port`, never by its credentials; catch this to handle every proxy failure."""


class ProxyConnectionError(ProxyError, KafkaConnectionError):
    """The proxy could not be reached, broke off the handshake, or could not connect to the
    broker (its SOCKS5 reply says why). Retriable, as any connection failure."""

    retriable = True


class ProxyAuthenticationError(ProxyError, AuthenticationError):
    """The proxy refused the username and password of `socks5_proxy`, or wants some and none
    were given. Not retriable: reconnecting with the same credentials will not help."""

    retriable = False


class BrokerError(KrafkaError):
    """An error code returned by a broker. Subclasses set `code` via `class X(..., code=N)`."""

    code: ClassVar[int] = -1
    error_name: ClassVar[str] = "UNKNOWN_SERVER_ERROR"
    default_message: ClassVar[str] = ""

    def __init_subclass__(cls, code: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is None:
            return
        row = ErrorCode(code)
        if row.retriable != cls.retriable:
            raise TypeError(f"{cls.__name__}: retriable must be {row.retriable}")
        cls.code, cls.error_name, cls.default_message = code, row.name, row.message
        cls.__module__ = __name__  # defined in krafka.broker_errors, public here
        _BY_CODE[code] = cls

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.default_message or self.error_name)
        self.message = message or self.default_message


class RetriableBrokerError(BrokerError, RetriableError):
    """A broker error code that Kafka marks retriable."""


class NonRetriableBrokerError(BrokerError):
    """A broker error code that retrying will not fix."""


class AuthorizationError(NonRetriableBrokerError):
    """The principal is not authorized for the operation (a *_AUTHORIZATION_FAILED code)."""


_BY_CODE: dict[int, type[KrafkaError]] = {ErrorCode.CORRUPT_MESSAGE: CorruptRecordError}


class UnknownBrokerError(NonRetriableBrokerError):
    """A code missing from the table (a newer broker); Kafka treats it as UNKNOWN_SERVER_ERROR."""

    def __init__(self, message: str | None = None, code: int = -1) -> None:
        super().__init__(message or f"unknown broker error code {code}")
        self.code = code  # type: ignore[misc]


def error_class(code: int) -> type[KrafkaError]:
    """The exception class for a broker error code (`UnknownBrokerError` for unknown codes).

    Code 0 (NONE) is not an error: asking for it raises `ValueError`.
    """
    if code == ErrorCode.NONE:
        raise ValueError("error code 0 (NONE) is not an error")
    return _BY_CODE.get(code, UnknownBrokerError)


def error_for_code(code: int, message: str | None = None) -> KrafkaError:
    """An exception instance for a broker error code, with the broker's message if it sent one."""
    cls = error_class(code)
    if cls is UnknownBrokerError:
        return UnknownBrokerError(message, code)
    if cls is CorruptRecordError:
        err = CorruptRecordError(message or ErrorCode.CORRUPT_MESSAGE.message)
        err.retriable = True
        return err
    return cls(message)


# every per-code class, registered in _BY_CODE as it is defined (after the bases above)
from krafka.broker_errors import *  # noqa: E402, F403
