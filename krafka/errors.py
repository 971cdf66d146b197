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
    ├── BrokerError ── RetriableBrokerError / NonRetriableBrokerError   (every code)
    │   └── NonRetriableBrokerError ── ProducerFencedError (90), UnsupportedVersionError (35),
    │       AuthorizationError (*_AUTHORIZATION_FAILED), UnknownBrokerError, ...
    ├── AuthenticationError ── SaslAuthenticationError (58), UnsupportedSaslMechanismError (33),
    │                          IllegalSaslStateError (34)
    ├── ProtocolError ── LocalProtocolError (we built something invalid)
    │                └── RemoteProtocolError (the peer sent malformed bytes)
    ├── CorruptRecordError (also code 2, CORRUPT_MESSAGE), UnsupportedCodecError
    ├── ConfigError, InvalidStateError
    └── CommitFailedError (a group member's commit outside its active generation)
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
        row = ErrorCode(code)
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


_BY_CODE: dict[int, type[KrafkaError]] = {ErrorCode.CORRUPT_MESSAGE: CorruptRecordError}


class UnknownBrokerError(NonRetriableBrokerError):
    """A code missing from the table (a newer broker); Kafka treats it as UNKNOWN_SERVER_ERROR."""

    def __init__(self, message: str | None = None, code: int = -1) -> None:
        super().__init__(message or f"unknown broker error code {code}")
        self.code = code  # type: ignore[misc]


class UnknownServerError(NonRetriableBrokerError, code=ErrorCode.UNKNOWN_SERVER_ERROR): ...


class OffsetOutOfRangeError(NonRetriableBrokerError, code=ErrorCode.OFFSET_OUT_OF_RANGE): ...


class UnknownTopicOrPartitionError(
    RetriableBrokerError, code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
): ...


class InvalidFetchSizeError(NonRetriableBrokerError, code=ErrorCode.INVALID_FETCH_SIZE): ...


class LeaderNotAvailableError(RetriableBrokerError, code=ErrorCode.LEADER_NOT_AVAILABLE): ...


class NotLeaderOrFollowerError(RetriableBrokerError, code=ErrorCode.NOT_LEADER_OR_FOLLOWER): ...


class RequestTimedOutError(
    KafkaTimeoutError, RetriableBrokerError, code=ErrorCode.REQUEST_TIMED_OUT
): ...


class BrokerNotAvailableError(NonRetriableBrokerError, code=ErrorCode.BROKER_NOT_AVAILABLE): ...


class ReplicaNotAvailableError(RetriableBrokerError, code=ErrorCode.REPLICA_NOT_AVAILABLE): ...


class MessageTooLargeError(NonRetriableBrokerError, code=ErrorCode.MESSAGE_TOO_LARGE): ...


class StaleControllerEpochError(NonRetriableBrokerError, code=ErrorCode.STALE_CONTROLLER_EPOCH): ...


class OffsetMetadataTooLargeError(
    NonRetriableBrokerError, code=ErrorCode.OFFSET_METADATA_TOO_LARGE
): ...


class NetworkError(RetriableBrokerError, code=ErrorCode.NETWORK_EXCEPTION): ...


class CoordinatorLoadInProgressError(
    RetriableBrokerError, code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
): ...


class CoordinatorNotAvailableError(
    RetriableBrokerError, code=ErrorCode.COORDINATOR_NOT_AVAILABLE
): ...


class NotCoordinatorError(RetriableBrokerError, code=ErrorCode.NOT_COORDINATOR): ...


class InvalidTopicError(NonRetriableBrokerError, code=ErrorCode.INVALID_TOPIC_EXCEPTION): ...


class RecordListTooLargeError(NonRetriableBrokerError, code=ErrorCode.RECORD_LIST_TOO_LARGE): ...


class NotEnoughReplicasError(RetriableBrokerError, code=ErrorCode.NOT_ENOUGH_REPLICAS): ...


class NotEnoughReplicasAfterAppendError(
    RetriableBrokerError, code=ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
): ...


class InvalidRequiredAcksError(NonRetriableBrokerError, code=ErrorCode.INVALID_REQUIRED_ACKS): ...


class IllegalGenerationError(NonRetriableBrokerError, code=ErrorCode.ILLEGAL_GENERATION): ...


class InconsistentGroupProtocolError(
    NonRetriableBrokerError, code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL
): ...


class InvalidGroupIdError(NonRetriableBrokerError, code=ErrorCode.INVALID_GROUP_ID): ...


class UnknownMemberIdError(NonRetriableBrokerError, code=ErrorCode.UNKNOWN_MEMBER_ID): ...


class InvalidSessionTimeoutError(
    NonRetriableBrokerError, code=ErrorCode.INVALID_SESSION_TIMEOUT
): ...


class RebalanceInProgressError(NonRetriableBrokerError, code=ErrorCode.REBALANCE_IN_PROGRESS): ...


class InvalidCommitOffsetSizeError(
    NonRetriableBrokerError, code=ErrorCode.INVALID_COMMIT_OFFSET_SIZE
): ...


class TopicAuthorizationFailedError(
    AuthorizationError, code=ErrorCode.TOPIC_AUTHORIZATION_FAILED
): ...


class GroupAuthorizationFailedError(
    AuthorizationError, code=ErrorCode.GROUP_AUTHORIZATION_FAILED
): ...


class ClusterAuthorizationFailedError(
    AuthorizationError, code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED
): ...


class InvalidTimestampError(NonRetriableBrokerError, code=ErrorCode.INVALID_TIMESTAMP): ...


class UnsupportedSaslMechanismError(
    AuthenticationError, NonRetriableBrokerError, code=ErrorCode.UNSUPPORTED_SASL_MECHANISM
): ...


class IllegalSaslStateError(
    AuthenticationError, NonRetriableBrokerError, code=ErrorCode.ILLEGAL_SASL_STATE
): ...


class UnsupportedVersionError(NonRetriableBrokerError, code=ErrorCode.UNSUPPORTED_VERSION): ...


class TopicAlreadyExistsError(NonRetriableBrokerError, code=ErrorCode.TOPIC_ALREADY_EXISTS): ...


class InvalidPartitionsError(NonRetriableBrokerError, code=ErrorCode.INVALID_PARTITIONS): ...


class InvalidReplicationFactorError(
    NonRetriableBrokerError, code=ErrorCode.INVALID_REPLICATION_FACTOR
): ...


class InvalidReplicaAssignmentError(
    NonRetriableBrokerError, code=ErrorCode.INVALID_REPLICA_ASSIGNMENT
): ...


class InvalidConfigError(NonRetriableBrokerError, code=ErrorCode.INVALID_CONFIG): ...


class NotControllerError(RetriableBrokerError, code=ErrorCode.NOT_CONTROLLER): ...


class InvalidRequestError(NonRetriableBrokerError, code=ErrorCode.INVALID_REQUEST): ...


class UnsupportedForMessageFormatError(
    NonRetriableBrokerError, code=ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT
): ...


class PolicyViolationError(NonRetriableBrokerError, code=ErrorCode.POLICY_VIOLATION): ...


class OutOfOrderSequenceNumberError(
    NonRetriableBrokerError, code=ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
): ...


class DuplicateSequenceNumberError(
    NonRetriableBrokerError, code=ErrorCode.DUPLICATE_SEQUENCE_NUMBER
): ...


class InvalidProducerEpochError(NonRetriableBrokerError, code=ErrorCode.INVALID_PRODUCER_EPOCH): ...


class InvalidTxnStateError(NonRetriableBrokerError, code=ErrorCode.INVALID_TXN_STATE): ...


class InvalidProducerIdMappingError(
    NonRetriableBrokerError, code=ErrorCode.INVALID_PRODUCER_ID_MAPPING
): ...


class InvalidTransactionTimeoutError(
    NonRetriableBrokerError, code=ErrorCode.INVALID_TRANSACTION_TIMEOUT
): ...


class ConcurrentTransactionsError(RetriableBrokerError, code=ErrorCode.CONCURRENT_TRANSACTIONS): ...


class TransactionCoordinatorFencedError(
    NonRetriableBrokerError, code=ErrorCode.TRANSACTION_COORDINATOR_FENCED
): ...


class TransactionalIdAuthorizationFailedError(
    AuthorizationError, code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
): ...


class SecurityDisabledError(NonRetriableBrokerError, code=ErrorCode.SECURITY_DISABLED): ...


class OperationNotAttemptedError(
    NonRetriableBrokerError, code=ErrorCode.OPERATION_NOT_ATTEMPTED
): ...


class KafkaStorageError(RetriableBrokerError, code=ErrorCode.KAFKA_STORAGE_ERROR): ...


class LogDirNotFoundError(NonRetriableBrokerError, code=ErrorCode.LOG_DIR_NOT_FOUND): ...


class SaslAuthenticationError(
    AuthenticationError, NonRetriableBrokerError, code=ErrorCode.SASL_AUTHENTICATION_FAILED
): ...


class UnknownProducerIdError(NonRetriableBrokerError, code=ErrorCode.UNKNOWN_PRODUCER_ID): ...


class ReassignmentInProgressError(
    NonRetriableBrokerError, code=ErrorCode.REASSIGNMENT_IN_PROGRESS
): ...


class DelegationTokenAuthDisabledError(
    NonRetriableBrokerError, code=ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
): ...


class DelegationTokenNotFoundError(
    NonRetriableBrokerError, code=ErrorCode.DELEGATION_TOKEN_NOT_FOUND
): ...


class DelegationTokenOwnerMismatchError(
    NonRetriableBrokerError, code=ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
): ...


class DelegationTokenRequestNotAllowedError(
    NonRetriableBrokerError, code=ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
): ...


class DelegationTokenAuthorizationFailedError(
    AuthorizationError, code=ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED
): ...


class DelegationTokenExpiredError(
    NonRetriableBrokerError, code=ErrorCode.DELEGATION_TOKEN_EXPIRED
): ...


class InvalidPrincipalTypeError(NonRetriableBrokerError, code=ErrorCode.INVALID_PRINCIPAL_TYPE): ...


class NonEmptyGroupError(NonRetriableBrokerError, code=ErrorCode.NON_EMPTY_GROUP): ...


class GroupIdNotFoundError(NonRetriableBrokerError, code=ErrorCode.GROUP_ID_NOT_FOUND): ...


class FetchSessionIdNotFoundError(
    RetriableBrokerError, code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND
): ...


class InvalidFetchSessionEpochError(
    RetriableBrokerError, code=ErrorCode.INVALID_FETCH_SESSION_EPOCH
): ...


class ListenerNotFoundError(RetriableBrokerError, code=ErrorCode.LISTENER_NOT_FOUND): ...


class TopicDeletionDisabledError(
    NonRetriableBrokerError, code=ErrorCode.TOPIC_DELETION_DISABLED
): ...


class FencedLeaderEpochError(RetriableBrokerError, code=ErrorCode.FENCED_LEADER_EPOCH): ...


class UnknownLeaderEpochError(RetriableBrokerError, code=ErrorCode.UNKNOWN_LEADER_EPOCH): ...


class UnsupportedCompressionTypeError(
    NonRetriableBrokerError, code=ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
): ...


class StaleBrokerEpochError(NonRetriableBrokerError, code=ErrorCode.STALE_BROKER_EPOCH): ...


class OffsetNotAvailableError(RetriableBrokerError, code=ErrorCode.OFFSET_NOT_AVAILABLE): ...


class MemberIdRequiredError(NonRetriableBrokerError, code=ErrorCode.MEMBER_ID_REQUIRED): ...


class PreferredLeaderNotAvailableError(
    RetriableBrokerError, code=ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
): ...


class GroupMaxSizeReachedError(NonRetriableBrokerError, code=ErrorCode.GROUP_MAX_SIZE_REACHED): ...


class FencedInstanceIdError(NonRetriableBrokerError, code=ErrorCode.FENCED_INSTANCE_ID): ...


class EligibleLeadersNotAvailableError(
    RetriableBrokerError, code=ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
): ...


class ElectionNotNeededError(RetriableBrokerError, code=ErrorCode.ELECTION_NOT_NEEDED): ...


class NoReassignmentInProgressError(
    NonRetriableBrokerError, code=ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
): ...


class GroupSubscribedToTopicError(
    NonRetriableBrokerError, code=ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
): ...


class InvalidRecordError(NonRetriableBrokerError, code=ErrorCode.INVALID_RECORD): ...


class UnstableOffsetCommitError(RetriableBrokerError, code=ErrorCode.UNSTABLE_OFFSET_COMMIT): ...


class ThrottlingQuotaExceededError(
    RetriableBrokerError, code=ErrorCode.THROTTLING_QUOTA_EXCEEDED
): ...


class ProducerFencedError(NonRetriableBrokerError, code=ErrorCode.PRODUCER_FENCED): ...


class ResourceNotFoundError(NonRetriableBrokerError, code=ErrorCode.RESOURCE_NOT_FOUND): ...


class DuplicateResourceError(NonRetriableBrokerError, code=ErrorCode.DUPLICATE_RESOURCE): ...


class UnacceptableCredentialError(
    NonRetriableBrokerError, code=ErrorCode.UNACCEPTABLE_CREDENTIAL
): ...


class InconsistentVoterSetError(NonRetriableBrokerError, code=ErrorCode.INCONSISTENT_VOTER_SET): ...


class InvalidUpdateVersionError(NonRetriableBrokerError, code=ErrorCode.INVALID_UPDATE_VERSION): ...


class FeatureUpdateFailedError(NonRetriableBrokerError, code=ErrorCode.FEATURE_UPDATE_FAILED): ...


class PrincipalDeserializationFailureError(
    NonRetriableBrokerError, code=ErrorCode.PRINCIPAL_DESERIALIZATION_FAILURE
): ...


class SnapshotNotFoundError(NonRetriableBrokerError, code=ErrorCode.SNAPSHOT_NOT_FOUND): ...


class PositionOutOfRangeError(NonRetriableBrokerError, code=ErrorCode.POSITION_OUT_OF_RANGE): ...


class UnknownTopicIdError(RetriableBrokerError, code=ErrorCode.UNKNOWN_TOPIC_ID): ...


class DuplicateBrokerRegistrationError(
    NonRetriableBrokerError, code=ErrorCode.DUPLICATE_BROKER_REGISTRATION
): ...


class BrokerIdNotRegisteredError(
    NonRetriableBrokerError, code=ErrorCode.BROKER_ID_NOT_REGISTERED
): ...


class InconsistentTopicIdError(RetriableBrokerError, code=ErrorCode.INCONSISTENT_TOPIC_ID): ...


class InconsistentClusterIdError(
    NonRetriableBrokerError, code=ErrorCode.INCONSISTENT_CLUSTER_ID
): ...


class TransactionalIdNotFoundError(
    NonRetriableBrokerError, code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
): ...


class FetchSessionTopicIdError(
    RetriableBrokerError, code=ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR
): ...


class IneligibleReplicaError(NonRetriableBrokerError, code=ErrorCode.INELIGIBLE_REPLICA): ...


class NewLeaderElectedError(NonRetriableBrokerError, code=ErrorCode.NEW_LEADER_ELECTED): ...


class OffsetMovedToTieredStorageError(
    NonRetriableBrokerError, code=ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE
): ...


class FencedMemberEpochError(NonRetriableBrokerError, code=ErrorCode.FENCED_MEMBER_EPOCH): ...


class UnreleasedInstanceIdError(NonRetriableBrokerError, code=ErrorCode.UNRELEASED_INSTANCE_ID): ...


class UnsupportedAssignorError(NonRetriableBrokerError, code=ErrorCode.UNSUPPORTED_ASSIGNOR): ...


class StaleMemberEpochError(NonRetriableBrokerError, code=ErrorCode.STALE_MEMBER_EPOCH): ...


class MismatchedEndpointTypeError(
    NonRetriableBrokerError, code=ErrorCode.MISMATCHED_ENDPOINT_TYPE
): ...


class UnsupportedEndpointTypeError(
    NonRetriableBrokerError, code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
): ...


class UnknownControllerIdError(NonRetriableBrokerError, code=ErrorCode.UNKNOWN_CONTROLLER_ID): ...


class UnknownSubscriptionIdError(
    NonRetriableBrokerError, code=ErrorCode.UNKNOWN_SUBSCRIPTION_ID
): ...


class TelemetryTooLargeError(NonRetriableBrokerError, code=ErrorCode.TELEMETRY_TOO_LARGE): ...


class InvalidRegistrationError(NonRetriableBrokerError, code=ErrorCode.INVALID_REGISTRATION): ...


class TransactionAbortableError(NonRetriableBrokerError, code=ErrorCode.TRANSACTION_ABORTABLE): ...


class InvalidRecordStateError(NonRetriableBrokerError, code=ErrorCode.INVALID_RECORD_STATE): ...


class ShareSessionNotFoundError(RetriableBrokerError, code=ErrorCode.SHARE_SESSION_NOT_FOUND): ...


class InvalidShareSessionEpochError(
    RetriableBrokerError, code=ErrorCode.INVALID_SHARE_SESSION_EPOCH
): ...


class FencedStateEpochError(NonRetriableBrokerError, code=ErrorCode.FENCED_STATE_EPOCH): ...


class InvalidVoterKeyError(NonRetriableBrokerError, code=ErrorCode.INVALID_VOTER_KEY): ...


class DuplicateVoterError(NonRetriableBrokerError, code=ErrorCode.DUPLICATE_VOTER): ...


class VoterNotFoundError(NonRetriableBrokerError, code=ErrorCode.VOTER_NOT_FOUND): ...


class InvalidRegularExpressionError(
    NonRetriableBrokerError, code=ErrorCode.INVALID_REGULAR_EXPRESSION
): ...


class RebootstrapRequiredError(NonRetriableBrokerError, code=ErrorCode.REBOOTSTRAP_REQUIRED): ...


class StreamsInvalidTopologyError(
    NonRetriableBrokerError, code=ErrorCode.STREAMS_INVALID_TOPOLOGY
): ...


class StreamsInvalidTopologyEpochError(
    NonRetriableBrokerError, code=ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH
): ...


class StreamsTopologyFencedError(
    NonRetriableBrokerError, code=ErrorCode.STREAMS_TOPOLOGY_FENCED
): ...


class ShareSessionLimitReachedError(
    RetriableBrokerError, code=ErrorCode.SHARE_SESSION_LIMIT_REACHED
): ...


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
