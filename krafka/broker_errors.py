"""One exception class per Kafka error code (Kafka's name in CamelCase plus `Error`), each
registered for `krafka.errors.error_class` as it is defined. Import them from `krafka.errors`,
which re-exports every name here; this module only keeps that file to the hierarchy."""

from __future__ import annotations

from krafka.errors import (
    AuthenticationError,
    AuthorizationError,
    KafkaTimeoutError,
    NonRetriableBrokerError,
    RetriableBrokerError,
)
from krafka.protocol.error_codes import ErrorCode


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
#: Java's name for MESSAGE_TOO_LARGE (RecordTooLargeException), also what `send` raises for a
#: record larger than max_request_size or buffer_memory.
RecordTooLargeError = MessageTooLargeError


__all__ = [
    "BrokerIdNotRegisteredError",
    "BrokerNotAvailableError",
    "ClusterAuthorizationFailedError",
    "ConcurrentTransactionsError",
    "CoordinatorLoadInProgressError",
    "CoordinatorNotAvailableError",
    "DelegationTokenAuthDisabledError",
    "DelegationTokenAuthorizationFailedError",
    "DelegationTokenExpiredError",
    "DelegationTokenNotFoundError",
    "DelegationTokenOwnerMismatchError",
    "DelegationTokenRequestNotAllowedError",
    "DuplicateBrokerRegistrationError",
    "DuplicateResourceError",
    "DuplicateSequenceNumberError",
    "DuplicateVoterError",
    "ElectionNotNeededError",
    "EligibleLeadersNotAvailableError",
    "FeatureUpdateFailedError",
    "FencedInstanceIdError",
    "FencedLeaderEpochError",
    "FencedMemberEpochError",
    "FencedStateEpochError",
    "FetchSessionIdNotFoundError",
    "FetchSessionTopicIdError",
    "FetchSessionTopicIdErrorError",
    "GroupAuthorizationFailedError",
    "GroupIdNotFoundError",
    "GroupMaxSizeReachedError",
    "GroupSubscribedToTopicError",
    "IllegalGenerationError",
    "IllegalSaslStateError",
    "InconsistentClusterIdError",
    "InconsistentGroupProtocolError",
    "InconsistentTopicIdError",
    "InconsistentVoterSetError",
    "IneligibleReplicaError",
    "InvalidCommitOffsetSizeError",
    "InvalidConfigError",
    "InvalidFetchSessionEpochError",
    "InvalidFetchSizeError",
    "InvalidGroupIdError",
    "InvalidPartitionsError",
    "InvalidPrincipalTypeError",
    "InvalidProducerEpochError",
    "InvalidProducerIdMappingError",
    "InvalidRecordError",
    "InvalidRecordStateError",
    "InvalidRegistrationError",
    "InvalidRegularExpressionError",
    "InvalidReplicaAssignmentError",
    "InvalidReplicationFactorError",
    "InvalidRequestError",
    "InvalidRequiredAcksError",
    "InvalidSessionTimeoutError",
    "InvalidShareSessionEpochError",
    "InvalidTimestampError",
    "InvalidTopicError",
    "InvalidTopicExceptionError",
    "InvalidTransactionTimeoutError",
    "InvalidTxnStateError",
    "InvalidUpdateVersionError",
    "InvalidVoterKeyError",
    "KafkaStorageError",
    "KafkaStorageErrorError",
    "LeaderNotAvailableError",
    "ListenerNotFoundError",
    "LogDirNotFoundError",
    "MemberIdRequiredError",
    "MessageTooLargeError",
    "MismatchedEndpointTypeError",
    "NetworkError",
    "NetworkExceptionError",
    "NewLeaderElectedError",
    "NoReassignmentInProgressError",
    "NonEmptyGroupError",
    "NotControllerError",
    "NotCoordinatorError",
    "NotEnoughReplicasAfterAppendError",
    "NotEnoughReplicasError",
    "NotLeaderForPartitionError",
    "NotLeaderOrFollowerError",
    "OffsetMetadataTooLargeError",
    "OffsetMovedToTieredStorageError",
    "OffsetNotAvailableError",
    "OffsetOutOfRangeError",
    "OperationNotAttemptedError",
    "OutOfOrderSequenceNumberError",
    "PolicyViolationError",
    "PositionOutOfRangeError",
    "PreferredLeaderNotAvailableError",
    "PrincipalDeserializationFailureError",
    "ProducerFencedError",
    "ReassignmentInProgressError",
    "RebalanceInProgressError",
    "RebootstrapRequiredError",
    "RecordListTooLargeError",
    "RecordTooLargeError",
    "ReplicaNotAvailableError",
    "RequestTimedOutError",
    "ResourceNotFoundError",
    "SaslAuthenticationError",
    "SaslAuthenticationFailedError",
    "SecurityDisabledError",
    "ShareSessionLimitReachedError",
    "ShareSessionNotFoundError",
    "SnapshotNotFoundError",
    "StaleBrokerEpochError",
    "StaleControllerEpochError",
    "StaleMemberEpochError",
    "StreamsInvalidTopologyEpochError",
    "StreamsInvalidTopologyError",
    "StreamsTopologyFencedError",
    "TelemetryTooLargeError",
    "ThrottlingQuotaExceededError",
    "TopicAlreadyExistsError",
    "TopicAuthorizationFailedError",
    "TopicDeletionDisabledError",
    "TransactionAbortableError",
    "TransactionCoordinatorFencedError",
    "TransactionalIdAuthorizationFailedError",
    "TransactionalIdNotFoundError",
    "UnacceptableCredentialError",
    "UnknownControllerIdError",
    "UnknownLeaderEpochError",
    "UnknownMemberIdError",
    "UnknownProducerIdError",
    "UnknownServerError",
    "UnknownServerErrorError",
    "UnknownSubscriptionIdError",
    "UnknownTopicIdError",
    "UnknownTopicOrPartitionError",
    "UnreleasedInstanceIdError",
    "UnstableOffsetCommitError",
    "UnsupportedAssignorError",
    "UnsupportedCompressionTypeError",
    "UnsupportedEndpointTypeError",
    "UnsupportedForMessageFormatError",
    "UnsupportedSaslMechanismError",
    "UnsupportedVersionError",
    "VoterNotFoundError",
]
