"""What one answer means for one item of an admin call (a topic, a group, a partition ...).

A handler turns each item's slot of a response into one of these; the operation machine acts
on them: `Done` and `Fail` settle the item, `Retry` sends it again to the same broker after
backoff, `Remap` finds its broker again first (a leader, coordinator or controller moved),
`Resend` sends it again at once (the handler switched to another request for it).

`whole` marks an outcome that is not the broker's answer about the item but the fate of the
request that carried it (a lost connection, an API the broker lacks): a call whose every item
failed that way failed as a whole, and raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from krafka.errors import KrafkaError, error_for_code
from krafka.protocol.error_codes import ErrorCode, known
from krafka.sansio.codes import COORDINATOR_MOVED_CODES, STALE_METADATA_CODES

V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Done(Generic[V]):
    """The item succeeded with `value`."""

    value: V


@dataclass(frozen=True, slots=True)
class Fail:
    """The item failed for good."""

    error: KrafkaError
    whole: bool = False


@dataclass(frozen=True, slots=True)
class Retry:
    """Send the item again to the same broker after backoff."""

    error: KrafkaError
    whole: bool = False


@dataclass(frozen=True, slots=True)
class Remap:
    """Find the item's broker again (it moved or is gone), then send it after backoff."""

    error: KrafkaError
    whole: bool = False


@dataclass(frozen=True, slots=True)
class Resend:
    """Send the item again now: the handler will build a different request for it."""


ItemResult = Done[Any] | Fail | Retry | Remap | Resend

#: Codes meaning a partition's leader moved (or is not known yet): locate it again.
LEADER_MOVED: Final = STALE_METADATA_CODES
#: Codes meaning a group's or transactional id's coordinator moved: find it again.
COORDINATOR_MOVED: Final = COORDINATOR_MOVED_CODES
#: The controller moved (requests routed to the controller).
CONTROLLER_MOVED: Final = frozenset({ErrorCode.NOT_CONTROLLER})
NOTHING_MOVES: Final[frozenset[int]] = frozenset()
#: An item that does not exist fails at once, though Kafka marks these codes retriable.
_FAIL_FAST: Final = frozenset({ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID})


def code_name(code: int) -> str:
    member = known(code)
    return member.name if member is not None else f"error {code}"


def error_from(code: int, what: str, message: str | None = None) -> KrafkaError:
    """The exception for `code`, its message naming the item: `create topic 'a' failed:
    TOPIC_ALREADY_EXISTS (Topic 'a' already exists.)`."""
    detail = f" ({message})" if message and message != "No error." else ""
    return error_for_code(code, f"{what} failed: {code_name(code)}{detail}")


def for_code(
    code: int,
    what: str,
    message: str | None = None,
    *,
    moved: frozenset[int],
    retry: bool = True,
) -> ItemResult | None:
    """What an item's error code means; None for NONE.

    `moved` codes (which depend on how the item was routed) locate the item's broker again.
    Other retriable codes are retried unless `retry` is False — a request that may have taken
    effect, like CreateTopics; THROTTLING_QUOTA_EXCEEDED, which guarantees nothing was done, is
    retried anyway. Unknown topics fail at once.
    """
    if code == ErrorCode.NONE:
        return None
    error = error_from(code, what, message)
    if code in moved:
        return Remap(error)
    throttled = code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    if error.retriable and code not in _FAIL_FAST and (retry or throttled):
        return Retry(error)
    return Fail(error)


def for_failure(error: KrafkaError) -> ItemResult:
    """A request got no answer: a retriable failure (lost connection) finds the broker again,
    anything else (an API the broker lacks, a request we could not encode) fails its items."""
    if error.retriable:
        return Remap(error, whole=True)
    return Fail(error, whole=True)


__all__ = [
    "CONTROLLER_MOVED",
    "COORDINATOR_MOVED",
    "LEADER_MOVED",
    "NOTHING_MOVES",
    "Done",
    "Fail",
    "ItemResult",
    "Remap",
    "Resend",
    "Retry",
    "code_name",
    "error_from",
    "for_code",
    "for_failure",
]
