"""Groups of error codes the sans-IO machines act on alike (members of the one `ErrorCode`)."""

from __future__ import annotations

from typing import Final

from krafka.protocol.error_codes import ErrorCode, known

#: Partition/topic errors meaning the cached metadata is stale and must be refreshed.
STALE_METADATA_CODES: Final = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.UNKNOWN_TOPIC_ID,
        ErrorCode.INCONSISTENT_TOPIC_ID,
    }
)

#: Topic-level answers that make a topic unusable as it is (Java's `invalidTopics` and
#: `unauthorizedTopics`): its partitions, if any come along, are not used, and a record for it
#: fails instead of waiting for metadata.
UNUSABLE_TOPIC_CODES: Final = frozenset(
    {ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.TOPIC_AUTHORIZATION_FAILED}
)

#: The coordinator moved or is not up: find it again (and retry).
COORDINATOR_MOVED_CODES: Final = frozenset(
    {ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE}
)


def code_name(code: int) -> str:
    """The code's name (`NOT_COORDINATOR`), or `error N` for one krafka does not know (a newer
    broker's, or a hostile one's): a message about an answer never raises."""
    member = known(code)
    return member.name if member is not None else f"error {code}"
