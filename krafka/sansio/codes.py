"""The few Kafka error codes the connection core acts on itself (numbers from Errors.java)."""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    NOT_COORDINATOR = 16
    COORDINATOR_NOT_AVAILABLE = 15
    COORDINATOR_LOAD_IN_PROGRESS = 14
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    UNSUPPORTED_VERSION = 35
    SASL_AUTHENTICATION_FAILED = 58
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNKNOWN_TOPIC_ID = 100
    INCONSISTENT_TOPIC_ID = 103
    REBOOTSTRAP_REQUIRED = 129


#: Partition/topic errors meaning the cached metadata is stale and must be refreshed.
STALE_METADATA_CODES = frozenset(
    {
        Code.UNKNOWN_TOPIC_OR_PARTITION,
        Code.LEADER_NOT_AVAILABLE,
        Code.NOT_LEADER_OR_FOLLOWER,
        Code.FENCED_LEADER_EPOCH,
        Code.UNKNOWN_LEADER_EPOCH,
        Code.UNKNOWN_TOPIC_ID,
        Code.INCONSISTENT_TOPIC_ID,
    }
)
