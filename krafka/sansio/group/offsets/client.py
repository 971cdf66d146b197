"""Committing offsets to, and fetching committed offsets from, a group coordinator.

`OffsetClient` is a piece of a machine (it speaks the `krafka.sansio.actions` contract; its
requests go to `Coordinator(group_id)`, and its owner reports the moves its answers show). The group
member uses it, and so can a consumer that uses `assign` with a group id (Java commits with
generation -1 then: `StandaloneCommits`).

Commits go one at a time, in call order, so a retried commit can never land after a later one
and move a position back. Fetches go one at a time too, beside the commits. Each operation
retries what Java retries (the coordinator moving or loading, UNKNOWN_TOPIC_OR_PARTITION on a
commit, UNSTABLE_OFFSET_COMMIT on a fetch, lost connections) with exponential backoff until
its deadline, then fails with `KafkaTimeoutError`, which says whether the offsets may have been
committed all the same (a request went unanswered: the coordinator may have written them) or
not (every attempt was refused); committing again is safe either way. The identity a commit
carries is taken when it is sent, and what a refused identity means (RebalanceInProgressError,
CommitFailedError, a fenced instance) is the owner's `CommitPolicy` to say.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from krafka.errors import (
    CommitFailedError,
    KafkaTimeoutError,
    KrafkaError,
    RebalanceInProgressError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
    error_for_code,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.actions import Completed, Failed, SendRequest, next_op
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.codes import code_name
from krafka.sansio.group.coordinator import GroupCoordinator
from krafka.sansio.group.offsets import wire
from krafka.sansio.group.offsets.wire import CommitIdentity, CommitVerdict
from krafka.structs import OffsetAndMetadata, TopicPartition

Committed = dict[TopicPartition, OffsetAndMetadata | None]


class CommitPolicy(Protocol):
    """What the owner of an `OffsetClient` decides about commits."""

    def commit_identity(self) -> CommitIdentity | KrafkaError:
        """Who commits now, or why no commit can be made now (not in an active generation)."""
        ...

    def commit_refused(self, code: int, sent: CommitIdentity) -> KrafkaError:
        """The coordinator refused the identity a commit was sent with (UNKNOWN_MEMBER_ID,
        ILLEGAL_GENERATION, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS): the error to raise."""
        ...


class StandaloneCommits:
    """Commits of a consumer with manually assigned partitions: generation -1, no member."""

    def commit_identity(self) -> CommitIdentity:
        return CommitIdentity()

    def commit_refused(self, code: int, sent: CommitIdentity) -> KrafkaError:
        if code == ErrorCode.REBALANCE_IN_PROGRESS:
            return RebalanceInProgressError(
                "Offset commit cannot be completed since the group is rebalancing; "
                "a consumer with manually assigned partitions must not share a group id with "
                "subscribed members"
            )
        if code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
            return CommitFailedError(
                "Offset commit cannot be completed: the group has active members, so a consumer "
                "with manually assigned partitions cannot commit to it"
            )
        return error_for_code(code)


class _Kind(Enum):
    COMMIT = "OffsetCommit"
    FETCH = "OffsetFetch"


@dataclass(slots=True, eq=False)
class _Op:
    op: int
    kind: _Kind
    deadline: float
    backoff: Backoff
    offsets: dict[TopicPartition, OffsetAndMetadata] = field(default_factory=dict)
    partitions: frozenset[TopicPartition] = frozenset()
    sent: SendRequest[Any] | None = None
    identity: CommitIdentity | None = None
    last_error: KrafkaError | None = None
    #: A request got no answer (lost, timed out): the coordinator may have carried it out.
    unanswered: bool = False


class OffsetClient:
    """Commits and committed-offset fetches of one group, through its `coordinator`."""

    def __init__(
        self,
        group_id: str,
        coordinator: GroupCoordinator,
        policy: CommitPolicy,
        *,
        backoff: BackoffPolicy,
        require_stable: bool = True,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.group_id = group_id
        self.require_stable = require_stable
        self._coordinator = coordinator
        self._policy = policy
        self._backoff = backoff
        self._rand = rand
        self._queues: dict[_Kind, deque[_Op]] = {_Kind.COMMIT: deque(), _Kind.FETCH: deque()}
        self._results: list[Completed | Failed] = []

    # -- the owner's calls ----------------------------------------------------------------------

    def commit(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata], now: float, timeout: float
    ) -> int:
        """Commit `offsets`; the operation completes with the offsets committed."""
        for tp, om in offsets.items():
            if om.offset < 0:
                raise ValueError(f"invalid offset {om.offset} for {tp}: offsets are >= 0")
        op = self._new(_Kind.COMMIT, now, timeout)
        op.offsets = dict(offsets)
        if not offsets:
            self._finish(op, value={})
        return op.op

    def fetch(self, partitions: Iterable[TopicPartition], now: float, timeout: float) -> int:
        """Committed offsets of `partitions` ({tp: OffsetAndMetadata | None})."""
        op = self._new(_Kind.FETCH, now, timeout)
        op.partitions = frozenset(partitions)
        if not op.partitions:
            self._finish(op, value={})
        return op.op

    def fail_all(self, error: KrafkaError) -> None:
        """Give up every operation (the consumer is closing)."""
        for queue in self._queues.values():
            for op in list(queue):
                self._finish(op, error=error)

    @property
    def busy(self) -> bool:
        return any(self._queues.values())

    # -- the contract ---------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        actions: list[Any] = []
        for queue in self._queues.values():
            op = queue[0] if queue else None
            if op is not None and op.sent is None:
                request = self._advance(op, now)
                if request is not None:
                    actions.append(request)
        actions[:0], self._results = self._results, []
        return actions

    def next_deadline(self) -> float | None:
        """The waiting operations' backoffs and timeouts."""
        times: list[float] = []
        for queue in self._queues.values():
            if queue and queue[0].sent is None:
                op = queue[0]
                times.append(op.deadline)
                if op.backoff.failures:
                    times.append(op.backoff.retry_at)
        return min(times, default=None)

    def owns(self, sent: SendRequest[Any]) -> bool:
        return self._current(sent) is not None

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        op = self._current(sent)
        if op is None:
            return
        op.sent = None
        if op.kind is _Kind.COMMIT:
            self._commit_answered(op, response, now)
        else:
            self._fetch_answered(op, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        op = self._current(sent)
        if op is None:
            return
        op.sent = None
        op.unanswered = True
        if error.retriable:
            self._retry(op, error, now)
        else:
            self._finish(op, error=error)

    # -- internals ------------------------------------------------------------------------------

    def _new(self, kind: _Kind, now: float, timeout: float) -> _Op:
        op = _Op(next_op(), kind, now + timeout, Backoff(self._backoff))
        self._queues[kind].append(op)
        return op

    def _advance(self, op: _Op, now: float) -> SendRequest[Any] | None:
        if now >= op.deadline:
            self._finish(op, error=self._timed_out(op))
            return None
        coordinator = self._coordinator.target
        if op.backoff.wait_time(now) > 0:
            return None
        if op.kind is _Kind.FETCH:
            body = wire.offset_fetch_request(self.group_id, op.partitions, self.require_stable)
            op.sent = SendRequest(coordinator, body)
            return op.sent
        identity = self._policy.commit_identity()
        if isinstance(identity, KrafkaError):
            self._finish(op, error=identity)
            return None
        op.identity = identity
        static = identity.group_instance_id is not None
        op.sent = SendRequest(
            coordinator,
            wire.offset_commit_request(self.group_id, identity, op.offsets),
            min_version=wire.OFFSET_COMMIT_STATIC_MIN_VERSION if static else None,
        )
        return op.sent

    def _commit_answered(self, op: _Op, response: Any, now: float) -> None:
        verdict, code, unauthorized = wire.commit_verdict(wire.commit_codes(response))
        if verdict is CommitVerdict.DONE:
            self._finish(op, value=dict(op.offsets))
        elif verdict is CommitVerdict.RETRY:
            self._retry(op, error_for_code(code, f"OffsetCommit: {code_name(code)}"), now)
        elif verdict is CommitVerdict.COORDINATOR_MOVED:
            self._coordinator.moved()
            self._retry(op, error_for_code(code, f"OffsetCommit: {code_name(code)}"), now)
        elif code == ErrorCode.STALE_MEMBER_EPOCH:
            # KIP-848: the member's epoch moved on while the commit was in flight; as Java's,
            # the commit is sent again (until its timeout) with the epoch the member has then.
            self._retry(op, error_for_code(code, f"OffsetCommit: {code_name(code)}"), now)
        elif verdict is CommitVerdict.GROUP:
            assert op.identity is not None
            self._finish(op, error=self._policy.commit_refused(code, op.identity))
        elif code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
            self._finish(op, error=_not_authorized(unauthorized))
        else:
            self._finish(op, error=error_for_code(code, f"OffsetCommit failed: {code_name(code)}"))

    def _fetch_answered(self, op: _Op, response: Any, now: float) -> None:
        code, partitions = wire.fetch_result(response, self.group_id)
        if code != ErrorCode.NONE:
            error = error_for_code(code, f"OffsetFetch failed: {code_name(code)}")
            self._coordinator.answered(code)
            if error.retriable:
                self._retry(op, error, now)
            else:
                self._finish(op, error=error)
            return
        result: Committed = {}
        unauthorized: set[str] = set()
        unstable: list[TopicPartition] = []
        for tp in sorted(op.partitions):
            fetched = partitions.get(tp)
            if fetched is None:
                result[tp] = None
            elif fetched.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                self._finish(op, error=UnknownTopicOrPartitionError(f"{tp} does not exist"))
                return
            elif fetched.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
                unauthorized.add(tp.topic)
            elif fetched.error_code == ErrorCode.UNSTABLE_OFFSET_COMMIT:
                unstable.append(tp)
            elif fetched.error_code != ErrorCode.NONE:
                error = error_for_code(
                    fetched.error_code, f"OffsetFetch for {tp}: {code_name(fetched.error_code)}"
                )
                self._finish(op, error=error)
                return
            else:
                result[tp] = fetched.committed()
        if unauthorized:
            self._finish(op, error=_not_authorized(unauthorized))
        elif unstable:
            detail = ", ".join(map(str, unstable))
            self._retry(op, error_for_code(ErrorCode.UNSTABLE_OFFSET_COMMIT, detail), now)
        else:
            self._finish(op, value=result)

    def _retry(self, op: _Op, error: KrafkaError, now: float) -> None:
        op.last_error = error
        op.backoff.failed(now, self._rand)
        if op.backoff.retry_at >= op.deadline:
            self._finish(op, error=self._timed_out(op))

    def _timed_out(self, op: _Op) -> KrafkaError:
        detail = f" (last error: {op.last_error})" if op.last_error is not None else ""
        what = "committing offsets" if op.kind is _Kind.COMMIT else "fetching committed offsets"
        outcome = ""
        if op.kind is _Kind.COMMIT:
            outcome = (
                "; the offsets may have been committed (a request went unanswered): it is safe "
                "to commit them again"
                if op.unanswered
                else "; nothing was committed (no request reached the coordinator, or it refused "
                "each one)"
            )
        error = KafkaTimeoutError(f"timed out {what} for group {self.group_id!r}{detail}{outcome}")
        error.__cause__ = op.last_error
        return error

    def _finish(self, op: _Op, *, value: Any = None, error: KrafkaError | None = None) -> None:
        queue = self._queues[op.kind]
        if op in queue:
            queue.remove(op)
        self._results.append(Completed(op.op, value) if error is None else Failed(op.op, error))

    def _current(self, sent: SendRequest[Any]) -> _Op | None:
        for queue in self._queues.values():
            if queue and queue[0].sent is sent:
                return queue[0]
        return None


def _not_authorized(topics: set[str]) -> KrafkaError:
    return TopicAuthorizationFailedError(f"not authorized to access topics {sorted(topics)}")


__all__ = ["CommitPolicy", "Committed", "OffsetClient", "StandaloneCommits"]
