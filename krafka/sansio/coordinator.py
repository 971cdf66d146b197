"""Finding and keeping the coordinator of one key: a group, a transactional id, a share group.

Every coordinator-facing machine owns one `CoordinatorLink` and asks it where to send. The
link looks the coordinator up (FindCoordinator, built for the negotiated version), forgets it
when an answer says it moved (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, or a lost
connection), and backs off — exponentially, with jitter — when lookups fail or the coordinator
is still loading. The owner keeps its own request retry policy and only asks `on_error_code`
what a coordinator error means for where (and whether soon) to send next.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from enum import Enum
from typing import Any, Final

from krafka.errors import KrafkaError, error_for_code
from krafka.protocol.error_codes import ErrorCode, known
from krafka.protocol.messages import ApiKey, FindCoordinatorRequest, FindCoordinatorResponse
from krafka.sansio.actions import AnyBroker, Broker, CoordinatorType, SendRequest, Versioned
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.codes import COORDINATOR_MOVED_CODES
from krafka.sansio.connection import Priority
from krafka.sansio.transitions import transition

#: Coordinator lookups retry until the owner gives up; 100 ms doubling to 1 s, like Java's
#: retry.backoff.ms / retry.backoff.max.ms.
DEFAULT_COORDINATOR_BACKOFF: Final = BackoffPolicy(initial=0.1, maximum=1.0, max_retries=None)
_BATCHED_FIND_COORDINATOR: Final = 4


_log = logging.getLogger("krafka.coordinator")


class CoordinatorState(Enum):
    UNKNOWN = "unknown"
    LOOKING_UP = "looking-up"
    KNOWN = "known"


class CoordinatorEvent(Enum):
    LOOKUP_SENT = "lookup-sent"
    FOUND = "found"
    LOOKUP_FAILED = "lookup-failed"
    MOVED = "moved"


_S, _E = CoordinatorState, CoordinatorEvent
TRANSITIONS: Final[dict[tuple[CoordinatorState, CoordinatorEvent], CoordinatorState]] = {
    (_S.UNKNOWN, _E.LOOKUP_SENT): _S.LOOKING_UP,
    (_S.LOOKING_UP, _E.FOUND): _S.KNOWN,
    (_S.LOOKING_UP, _E.LOOKUP_FAILED): _S.UNKNOWN,
    (_S.LOOKING_UP, _E.MOVED): _S.LOOKING_UP,
    (_S.KNOWN, _E.MOVED): _S.UNKNOWN,
    (_S.UNKNOWN, _E.MOVED): _S.UNKNOWN,
}
del _S, _E


class CoordinatorDisposition(Enum):
    """What a coordinator-level error code means for the request that got it."""

    RETRY_NOW = "retry-now"  # the coordinator moved: look it up again, then resend
    RETRY_LATER = "retry-later"  # loading: resend after the link's backoff
    NOT_COORDINATOR_ERROR = "not-coordinator-error"  # some other code: the owner decides


class CoordinatorLink:
    """Where requests for `key` go; `target()` is None until the coordinator is known."""

    def __init__(
        self,
        key: str,
        key_type: CoordinatorType,
        backoff: BackoffPolicy = DEFAULT_COORDINATOR_BACKOFF,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.key = key
        self.key_type = key_type
        self.state = CoordinatorState.UNKNOWN
        self.broker: Broker | None = None
        self.last_error: KrafkaError | None = None
        self._backoff = Backoff(backoff)
        self._rand = rand
        self._lookup: SendRequest[FindCoordinatorResponse] | None = None

    # -- outputs --------------------------------------------------------------------------------

    def target(self) -> Broker | None:
        return self.broker if self.state is CoordinatorState.KNOWN else None

    def lookup(self, now: float) -> SendRequest[FindCoordinatorResponse] | None:
        """A FindCoordinator to send now, if the coordinator is unknown and backoff allows."""
        if self.state is not CoordinatorState.UNKNOWN or self._backoff.wait_time(now) > 0:
            return None
        self._move(CoordinatorEvent.LOOKUP_SENT)
        key, key_type = self.key, int(self.key_type)

        def build(version: int) -> FindCoordinatorRequest:
            if version >= _BATCHED_FIND_COORDINATOR:
                return FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key])
            return FindCoordinatorRequest(key=key, key_type=key_type)

        self._lookup = SendRequest(
            AnyBroker(), Versioned(ApiKey.FIND_COORDINATOR, build), priority=Priority.HIGH
        )
        return self._lookup

    def next_deadline(self) -> float | None:
        """When a backed-off lookup may be sent."""
        if self.state is CoordinatorState.UNKNOWN and self._backoff.failures:
            return self._backoff.retry_at
        return None

    # -- inputs ---------------------------------------------------------------------------------

    def owns(self, sent: SendRequest[Any]) -> bool:
        return sent is self._lookup

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        if sent is not self._lookup:
            return
        self._lookup = None
        assert isinstance(response, FindCoordinatorResponse)
        code, broker, message = _parse(response)
        if code == ErrorCode.NONE and broker is not None:
            self.broker, self.last_error = broker, None
            self._backoff.succeeded()
            self._move(CoordinatorEvent.FOUND)
            return
        self._lookup_failed(error_for_code(code, _describe(self, code, message)), now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if sent is self._lookup:
            self._lookup = None
            self._lookup_failed(error, now)

    def on_error_code(self, code: int, now: float) -> CoordinatorDisposition:
        """A coordinator's answer carried `code`: forget it if it moved; if it is loading the
        owner resends after its own backoff."""
        if code in COORDINATOR_MOVED_CODES:
            self.mark_unknown()
            return CoordinatorDisposition.RETRY_NOW
        if code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            return CoordinatorDisposition.RETRY_LATER
        return CoordinatorDisposition.NOT_COORDINATOR_ERROR

    def on_connection_failure(self) -> None:
        """A request to the coordinator got no answer: it may have moved; look it up again."""
        self.mark_unknown()

    def mark_unknown(self) -> None:
        if self.state is not CoordinatorState.LOOKING_UP:
            self.broker = None
        self._move(CoordinatorEvent.MOVED)

    def fatal_error(self) -> KrafkaError | None:
        """The lookup's last error when retrying cannot fix it (GROUP_AUTHORIZATION_FAILED ...)."""
        error = self.last_error
        return error if error is not None and not error.retriable else None

    @property
    def failures(self) -> int:
        return self._backoff.failures

    # -- internals ------------------------------------------------------------------------------

    def _lookup_failed(self, error: KrafkaError, now: float) -> None:
        self.last_error = error
        self._backoff.failed(now, self._rand)
        self._move(CoordinatorEvent.LOOKUP_FAILED)

    def _move(self, event: CoordinatorEvent) -> None:
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            raise AssertionError(f"coordinator link: no transition {self.state} x {event}")
        transition(_log, "coordinator lookup", self.state, new, event.name)
        self.state = new


def _parse(response: FindCoordinatorResponse) -> tuple[int, Broker | None, str | None]:
    """(error code, coordinator, broker message); v4+ answers in `coordinators`."""
    entry = response.coordinators[0] if response.coordinators else response
    code = int(entry.error_code)
    if code != ErrorCode.NONE:
        return code, None, entry.error_message
    return code, Broker(int(entry.node_id), str(entry.host), int(entry.port)), None


def _describe(link: CoordinatorLink, code: int, message: str | None) -> str:
    detail = f": {message}" if message else ""
    name = getattr(known(code), "name", f"error {code}")
    return f"FindCoordinator({link.key_type.name.lower()} {link.key!r}) failed: {name}{detail}"


__all__ = [
    "DEFAULT_COORDINATOR_BACKOFF",
    "CoordinatorDisposition",
    "CoordinatorLink",
    "CoordinatorState",
    "CoordinatorType",
]
