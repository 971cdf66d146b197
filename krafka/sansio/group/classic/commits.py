"""A group member's commits: the identity they carry, what a refused identity means, and the
member's own auto-commits.

Commits carry the generation only while the member is STABLE (Java's `generationIfStable`);
otherwise they fail at once with RebalanceInProgressError (a rebalance is under way: poll, then
retry) or CommitFailedError (the member is out of the group). A coordinator refusing the
generation gets Java's answer (`commit_refused`). Only owned partitions are committed.

Auto-commits (at polls, before a rebalance, on close) are the member's own operations: their
outcomes become `AutoCommitDone` notices and go back to the flow that waits for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from krafka.errors import (
    CommitFailedError,
    FencedInstanceIdError,
    InvalidStateError,
    KrafkaError,
    RebalanceInProgressError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.actions import Completed, Failed, next_op
from krafka.sansio.codes import code_name
from krafka.sansio.group.classic.core import MemberCore
from krafka.sansio.group.classic.state import MemberState
from krafka.sansio.group.events import AutoCommitDone
from krafka.sansio.group.offsets.client import OffsetClient
from krafka.sansio.group.offsets.wire import CommitIdentity
from krafka.structs import OffsetAndMetadata, TopicPartition

Offsets = dict[TopicPartition, OffsetAndMetadata]


class CommitWaiter(Protocol):
    """A flow waiting for one of the member's auto-commits."""

    commit_op: int | None

    def commit_done(self, result: Completed | Failed) -> None: ...


class MemberCommits:
    def __init__(self, core: MemberCore) -> None:
        self.core = core
        self.client = OffsetClient(
            core.config.group_id,
            core.coordinator,
            self,
            backoff=core.backoff,
            require_stable=core.config.require_stable,
            rand=core.rand,
        )
        self._auto: dict[int, tuple[CommitWaiter | None, Offsets, float]] = {}

    @property
    def busy(self) -> bool:
        return self.client.busy

    def commit(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata], now: float, timeout: float
    ) -> int:
        """The application's commit (only owned partitions; at once refused outside STABLE)."""
        core = self.core
        if core.closed:
            return self._failed(InvalidStateError("the group member is closed"))
        if not offsets:
            return self.client.commit({}, now, 0.0)
        identity = self.commit_identity()
        if isinstance(identity, KrafkaError):
            return self._failed(identity)
        return self.client.commit(self._owned(offsets), now, timeout)

    def fetch(self, partitions: Iterable[TopicPartition], now: float, timeout: float) -> int:
        return self.client.fetch(partitions, now, timeout)

    def auto(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        now: float,
        timeout: float,
        waiter: CommitWaiter | None = None,
    ) -> int | None:
        """An auto-commit of the owned ones of `offsets` (None: nothing to commit)."""
        wanted = self._owned(offsets)
        if not wanted or timeout <= 0:
            return None
        op = self.client.commit(wanted, now, timeout)
        self._auto[op] = (waiter, wanted, now)
        if waiter is not None:
            waiter.commit_op = op
        return op

    def next_actions(self, now: float) -> list[Any]:
        """The client's requests and the application's outcomes (auto-commits are kept)."""
        actions = []
        for item in self.client.next_actions(now):
            if isinstance(item, Completed | Failed) and item.op in self._auto:
                self._auto_done(item)
            else:
                actions.append(item)
        return actions

    def _auto_done(self, result: Completed | Failed) -> None:
        waiter, offsets, sent = self._auto.pop(result.op)
        error = result.error if isinstance(result, Failed) else None
        self.core.events.append(AutoCommitDone(offsets, error, sent))
        if isinstance(error, FencedInstanceIdError):
            self.core.fail(error)
        if waiter is not None and waiter.commit_op == result.op:
            waiter.commit_op = None
            waiter.commit_done(result)

    def _owned(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> Offsets:
        owned = self.core.owned
        return {tp: om for tp, om in offsets.items() if tp in owned}

    def _failed(self, error: KrafkaError) -> int:
        op = next_op()
        self.core.events.append(Failed(op, error))
        return op

    # -- CommitPolicy ---------------------------------------------------------------------------

    def commit_identity(self) -> CommitIdentity | KrafkaError:
        """Java's generationIfStable: commits carry the generation only while STABLE."""
        core = self.core
        if core.state is MemberState.STABLE:
            generation = core.generation
            return CommitIdentity(
                generation.generation_id, generation.member_id, self.core.config.group_instance_id
            )
        if core.state.rebalancing:
            return RebalanceInProgressError(
                "Offset commit cannot be completed since the consumer is undergoing a rebalance "
                "for auto partition assignment. You can try completing the rebalance by calling "
                "poll() and then retry the operation."
            )
        return CommitFailedError(
            "Offset commit cannot be completed since the consumer is not part of an active group "
            "for auto partition assignment; it is likely that the consumer was kicked out of the "
            "group."
        )

    def commit_refused(self, code: int, sent: CommitIdentity) -> KrafkaError:
        """Java's OffsetCommitResponseHandler for errors about the member's generation."""
        core = self.core
        current = core.generation
        unchanged = (sent.generation_id, sent.member_id) == (
            current.generation_id,
            current.member_id,
        )
        preparing = core.state is MemberState.PREPARING_REBALANCE
        if code == ErrorCode.REBALANCE_IN_PROGRESS:
            core.request_rejoin("offset commit failed since group is already rebalancing")
            return RebalanceInProgressError(
                "Offset commit cannot be completed since the consumer group is executing a "
                "rebalance at the moment. You can try completing the rebalance by calling poll() "
                "and then retry commit again."
            )
        if code == ErrorCode.FENCED_INSTANCE_ID:
            if unchanged:
                return FencedInstanceIdError(
                    f"the group instance id {self.core.config.group_instance_id!r} was fenced by "
                    "another consumer with the same group_instance_id"
                )
            if preparing:
                return RebalanceInProgressError(
                    "Offset commit cannot be completed since the consumer member's old "
                    "generation is fenced by its group instance id; it has already joined "
                    "another rebalance and got a new generation"
                )
            return CommitFailedError()
        if not unchanged and preparing:
            return RebalanceInProgressError(
                "Offset commit cannot be completed since the consumer member's generation is "
                "already stale, meaning it has already participated another rebalance and got a "
                "new generation. You can try completing the rebalance by calling poll() and "
                "then retry commit again."
            )
        core.reset(
            f"{code_name(code)} from OffsetCommit",
            reset_member_id=code != ErrorCode.ILLEGAL_GENERATION,
        )
        return CommitFailedError()


__all__ = ["CommitWaiter", "MemberCommits"]
