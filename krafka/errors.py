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
    │   └── RetriableBrokerError ── NotLeaderOrFollowerError (6), ...   (retriable codes)
    ├── BrokerError ── RetriableBrokerError / NonRetriableBrokerError   (every code)
    │   └── NonRetriableBrokerError ── ProducerFencedError (90), UnsupportedVersionError (35),
    │       AuthorizationError (*_AUTHORIZATION_FAILED), UnknownBrokerError, ...
    ├── AuthenticationError ── SaslAuthenticationError (58), UnsupportedSaslMechanismError (33),
    │                          IllegalSaslStateError (34)
    ├── ProtocolError ── LocalProtocolError (we built something invalid)
    │                └── RemoteProtocolError (the peer sent malformed bytes)
    ├── CorruptRecordError (also code 2, CORRUPT_MESSAGE), UnsupportedCodecError
    └── ConfigError, InvalidStateError
"""

from __future__ import annotations

from typing import Any, ClassVar

from krafka.protocol.error_codes import BY_CODE


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

    code: ClassVar[int] = 2
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


class ConfigError(KrafkaError):
    """A configuration value is missing, unknown or invalid."""


class InvalidStateError(KrafkaError):
    """An operation is not valid in the current state of a client or state machine."""


class AuthenticationError(KrafkaError):
    """Authentication (SASL, TLS) with a broker failed."""


class BrokerError(KrafkaError):
    """An error code returned by a broker. Subclasses set `code` via `class X(..., code=N)`."""

    code: ClassVar[int] = -1
    error_name: ClassVar[str] = "UNKNOWN_SERVER_ERROR"
    default_message: ClassVar[str] = ""

    def __init_subclass__(cls, code: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is None:
            return
        row = BY_CODE[code]
        if row.retriable != cls.retriable:
            raise TypeError(f"{cls.__name__}: retriable must be {row.retriable}")
        cls.code, cls.error_name, cls.default_message = code, row.name, row.message
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


_BY_CODE: dict[int, type[KrafkaError]] = {2: CorruptRecordError}


class UnknownBrokerError(NonRetriableBrokerError):
    """A code missing from the table (a newer broker); Kafka treats it as UNKNOWN_SERVER_ERROR."""

    def __init__(self, message: str | None = None, code: int = -1) -> None:
        super().__init__(message or f"unknown broker error code {code}")
        self.code = code  # type: ignore[misc]


class UnknownServerError(NonRetriableBrokerError, code=-1): ...


class OffsetOutOfRangeError(NonRetriableBrokerError, code=1): ...


class UnknownTopicOrPartitionError(RetriableBrokerError, code=3): ...


class InvalidFetchSizeError(NonRetriableBrokerError, code=4): ...


class LeaderNotAvailableError(RetriableBrokerError, code=5): ...


class NotLeaderOrFollowerError(RetriableBrokerError, code=6): ...


class RequestTimedOutError(KafkaTimeoutError, RetriableBrokerError, code=7): ...


class BrokerNotAvailableError(NonRetriableBrokerError, code=8): ...


class ReplicaNotAvailableError(RetriableBrokerError, code=9): ...


class MessageTooLargeError(NonRetriableBrokerError, code=10): ...


class StaleControllerEpochError(NonRetriableBrokerError, code=11): ...


class OffsetMetadataTooLargeError(NonRetriableBrokerError, code=12): ...


class NetworkError(RetriableBrokerError, code=13): ...


class CoordinatorLoadInProgressError(RetriableBrokerError, code=14): ...


class CoordinatorNotAvailableError(RetriableBrokerError, code=15): ...


class NotCoordinatorError(RetriableBrokerError, code=16): ...


class InvalidTopicError(NonRetriableBrokerError, code=17): ...


class RecordListTooLargeError(NonRetriableBrokerError, code=18): ...


class NotEnoughReplicasError(RetriableBrokerError, code=19): ...


class NotEnoughReplicasAfterAppendError(RetriableBrokerError, code=20): ...


class InvalidRequiredAcksError(NonRetriableBrokerError, code=21): ...


class IllegalGenerationError(NonRetriableBrokerError, code=22): ...


class InconsistentGroupProtocolError(NonRetriableBrokerError, code=23): ...


class InvalidGroupIdError(NonRetriableBrokerError, code=24): ...


class UnknownMemberIdError(NonRetriableBrokerError, code=25): ...


class InvalidSessionTimeoutError(NonRetriableBrokerError, code=26): ...


class RebalanceInProgressError(NonRetriableBrokerError, code=27): ...


class InvalidCommitOffsetSizeError(NonRetriableBrokerError, code=28): ...


class TopicAuthorizationFailedError(AuthorizationError, code=29): ...


class GroupAuthorizationFailedError(AuthorizationError, code=30): ...


class ClusterAuthorizationFailedError(AuthorizationError, code=31): ...


class InvalidTimestampError(NonRetriableBrokerError, code=32): ...


class UnsupportedSaslMechanismError(AuthenticationError, NonRetriableBrokerError, code=33): ...


class IllegalSaslStateError(AuthenticationError, NonRetriableBrokerError, code=34): ...


class UnsupportedVersionError(NonRetriableBrokerError, code=35): ...


class TopicAlreadyExistsError(NonRetriableBrokerError, code=36): ...


class InvalidPartitionsError(NonRetriableBrokerError, code=37): ...


class InvalidReplicationFactorError(NonRetriableBrokerError, code=38): ...


class InvalidReplicaAssignmentError(NonRetriableBrokerError, code=39): ...


class InvalidConfigError(NonRetriableBrokerError, code=40): ...


class NotControllerError(RetriableBrokerError, code=41): ...


class InvalidRequestError(NonRetriableBrokerError, code=42): ...


class UnsupportedForMessageFormatError(NonRetriableBrokerError, code=43): ...


class PolicyViolationError(NonRetriableBrokerError, code=44): ...


class OutOfOrderSequenceNumberError(NonRetriableBrokerError, code=45): ...


class DuplicateSequenceNumberError(NonRetriableBrokerError, code=46): ...


class InvalidProducerEpochError(NonRetriableBrokerError, code=47): ...


class InvalidTxnStateError(NonRetriableBrokerError, code=48): ...


class InvalidProducerIdMappingError(NonRetriableBrokerError, code=49): ...


class InvalidTransactionTimeoutError(NonRetriableBrokerError, code=50): ...


class ConcurrentTransactionsError(RetriableBrokerError, code=51): ...


class TransactionCoordinatorFencedError(NonRetriableBrokerError, code=52): ...


class TransactionalIdAuthorizationFailedError(AuthorizationError, code=53): ...


class SecurityDisabledError(NonRetriableBrokerError, code=54): ...


class OperationNotAttemptedError(NonRetriableBrokerError, code=55): ...


class KafkaStorageError(RetriableBrokerError, code=56): ...


class LogDirNotFoundError(NonRetriableBrokerError, code=57): ...


class SaslAuthenticationError(AuthenticationError, NonRetriableBrokerError, code=58): ...


class UnknownProducerIdError(NonRetriableBrokerError, code=59): ...


class ReassignmentInProgressError(NonRetriableBrokerError, code=60): ...


class DelegationTokenAuthDisabledError(NonRetriableBrokerError, code=61): ...


class DelegationTokenNotFoundError(NonRetriableBrokerError, code=62): ...


class DelegationTokenOwnerMismatchError(NonRetriableBrokerError, code=63): ...


class DelegationTokenRequestNotAllowedError(NonRetriableBrokerError, code=64): ...


class DelegationTokenAuthorizationFailedError(AuthorizationError, code=65): ...


class DelegationTokenExpiredError(NonRetriableBrokerError, code=66): ...


class InvalidPrincipalTypeError(NonRetriableBrokerError, code=67): ...


class NonEmptyGroupError(NonRetriableBrokerError, code=68): ...


class GroupIdNotFoundError(NonRetriableBrokerError, code=69): ...


class FetchSessionIdNotFoundError(RetriableBrokerError, code=70): ...


class InvalidFetchSessionEpochError(RetriableBrokerError, code=71): ...


class ListenerNotFoundError(RetriableBrokerError, code=72): ...


class TopicDeletionDisabledError(NonRetriableBrokerError, code=73): ...


class FencedLeaderEpochError(RetriableBrokerError, code=74): ...


class UnknownLeaderEpochError(RetriableBrokerError, code=75): ...


class UnsupportedCompressionTypeError(NonRetriableBrokerError, code=76): ...


class StaleBrokerEpochError(NonRetriableBrokerError, code=77): ...


class OffsetNotAvailableError(RetriableBrokerError, code=78): ...


class MemberIdRequiredError(NonRetriableBrokerError, code=79): ...


class PreferredLeaderNotAvailableError(RetriableBrokerError, code=80): ...


class GroupMaxSizeReachedError(NonRetriableBrokerError, code=81): ...


class FencedInstanceIdError(NonRetriableBrokerError, code=82): ...


class EligibleLeadersNotAvailableError(RetriableBrokerError, code=83): ...


class ElectionNotNeededError(RetriableBrokerError, code=84): ...


class NoReassignmentInProgressError(NonRetriableBrokerError, code=85): ...


class GroupSubscribedToTopicError(NonRetriableBrokerError, code=86): ...


class InvalidRecordError(NonRetriableBrokerError, code=87): ...


class UnstableOffsetCommitError(RetriableBrokerError, code=88): ...


class ThrottlingQuotaExceededError(RetriableBrokerError, code=89): ...


class ProducerFencedError(NonRetriableBrokerError, code=90): ...


class ResourceNotFoundError(NonRetriableBrokerError, code=91): ...


class DuplicateResourceError(NonRetriableBrokerError, code=92): ...


class UnacceptableCredentialError(NonRetriableBrokerError, code=93): ...


class InconsistentVoterSetError(NonRetriableBrokerError, code=94): ...


class InvalidUpdateVersionError(NonRetriableBrokerError, code=95): ...


class FeatureUpdateFailedError(NonRetriableBrokerError, code=96): ...


class PrincipalDeserializationFailureError(NonRetriableBrokerError, code=97): ...


class SnapshotNotFoundError(NonRetriableBrokerError, code=98): ...


class PositionOutOfRangeError(NonRetriableBrokerError, code=99): ...


class UnknownTopicIdError(RetriableBrokerError, code=100): ...


class DuplicateBrokerRegistrationError(NonRetriableBrokerError, code=101): ...


class BrokerIdNotRegisteredError(NonRetriableBrokerError, code=102): ...


class InconsistentTopicIdError(RetriableBrokerError, code=103): ...


class InconsistentClusterIdError(NonRetriableBrokerError, code=104): ...


class TransactionalIdNotFoundError(NonRetriableBrokerError, code=105): ...


class FetchSessionTopicIdError(RetriableBrokerError, code=106): ...


class IneligibleReplicaError(NonRetriableBrokerError, code=107): ...


class NewLeaderElectedError(NonRetriableBrokerError, code=108): ...


class OffsetMovedToTieredStorageError(NonRetriableBrokerError, code=109): ...


class FencedMemberEpochError(NonRetriableBrokerError, code=110): ...


class UnreleasedInstanceIdError(NonRetriableBrokerError, code=111): ...


class UnsupportedAssignorError(NonRetriableBrokerError, code=112): ...


class StaleMemberEpochError(NonRetriableBrokerError, code=113): ...


class MismatchedEndpointTypeError(NonRetriableBrokerError, code=114): ...


class UnsupportedEndpointTypeError(NonRetriableBrokerError, code=115): ...


class UnknownControllerIdError(NonRetriableBrokerError, code=116): ...


class UnknownSubscriptionIdError(NonRetriableBrokerError, code=117): ...


class TelemetryTooLargeError(NonRetriableBrokerError, code=118): ...


class InvalidRegistrationError(NonRetriableBrokerError, code=119): ...


class TransactionAbortableError(NonRetriableBrokerError, code=120): ...


class InvalidRecordStateError(NonRetriableBrokerError, code=121): ...


class ShareSessionNotFoundError(RetriableBrokerError, code=122): ...


class InvalidShareSessionEpochError(RetriableBrokerError, code=123): ...


class FencedStateEpochError(NonRetriableBrokerError, code=124): ...


class InvalidVoterKeyError(NonRetriableBrokerError, code=125): ...


class DuplicateVoterError(NonRetriableBrokerError, code=126): ...


class VoterNotFoundError(NonRetriableBrokerError, code=127): ...


class InvalidRegularExpressionError(NonRetriableBrokerError, code=128): ...


class RebootstrapRequiredError(NonRetriableBrokerError, code=129): ...


class StreamsInvalidTopologyError(NonRetriableBrokerError, code=130): ...


class StreamsInvalidTopologyEpochError(NonRetriableBrokerError, code=131): ...


class StreamsTopologyFencedError(NonRetriableBrokerError, code=132): ...


class ShareSessionLimitReachedError(RetriableBrokerError, code=133): ...


SaslAuthenticationFailedError = SaslAuthenticationError
# The literal CamelCase-plus-Error spellings of the codes whose Kafka name already ends in
# _ERROR or _EXCEPTION.
UnknownServerErrorError = UnknownServerError
NetworkExceptionError = NetworkError
InvalidTopicExceptionError = InvalidTopicError
KafkaStorageErrorError = KafkaStorageError
FetchSessionTopicIdErrorError = FetchSessionTopicIdError
NotLeaderForPartitionError = NotLeaderOrFollowerError


def error_class(code: int) -> type[KrafkaError]:
    """The exception class for a broker error code (`UnknownBrokerError` for unknown codes).

    Code 0 (NONE) is not an error: asking for it raises `ValueError`.
    """
    if code == 0:
        raise ValueError("error code 0 (NONE) is not an error")
    return _BY_CODE.get(code, UnknownBrokerError)


def error_for_code(code: int, message: str | None = None) -> KrafkaError:
    """An exception instance for a broker error code, with the broker's message if it sent one."""
    cls = error_class(code)
    if cls is UnknownBrokerError:
        return UnknownBrokerError(message, code)
    if cls is CorruptRecordError:
        err = CorruptRecordError(message or BY_CODE[2].message)
        err.retriable = True
        return err
    return cls(message)
