"""The consumer's group, whatever kind it is, behind one interface (`ConsumerGroup`).

* `NoGroup` — no `group_id`: nothing is committed; every partition starts by
  `initial_offsets` or the reset policy.
* `StandaloneGroup` — `assign` with a `group_id`: commits and committed offsets of the group
  (generation -1, Java's rule), no membership.
* `MemberGroup` — `subscribe`: a member of a classic (`GroupMember`) or KIP-848
  (`ConsumerMember`) group; its listener steps and notices go to the engine.

Each speaks the `krafka.sansio.actions` contract (every request to `Coordinator(group_id)`);
automatic commits, whoever makes them, end in an `AutoCommitDone` notice.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from krafka.errors import InvalidStateError, KrafkaError
from krafka.sansio.actions import Completed, Failed, SendRequest, next_op
from krafka.sansio.group.classic.member import GroupMember
from krafka.sansio.group.events import AutoCommitDone, GroupMembershipOperation, LeaveReason
from krafka.sansio.group.kip848.member import ConsumerMember
from krafka.sansio.group.offsets.standalone import StandaloneOffsets
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

Offsets = Mapping[TopicPartition, OffsetAndMetadata]


class ConsumerGroup(Protocol):
    """What the consumer engine asks of its group."""

    group_id: str | None

    def next_actions(self, now: float) -> list[Any]: ...

    def next_deadline(self) -> float | None: ...

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None: ...

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None: ...

    def commit(self, offsets: Offsets, now: float, timeout: float) -> int:
        """The application's commit; completes with the offsets committed."""
        ...

    def auto_commit(self, offsets: Offsets, now: float) -> int | None:
        """An automatic commit of the consumed positions (None: not now); ends in an
        `AutoCommitDone` notice."""
        ...

    def fetch_committed(
        self, partitions: Iterable[TopicPartition], now: float, timeout: float
    ) -> int:
        """The group's committed offsets ({tp: OffsetAndMetadata | None})."""
        ...

    def group_metadata(self) -> ConsumerGroupMetadata: ...


class _Outcomes:
    """Operation outcomes and notices made here, waiting for `next_actions`."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def drain(self, actions: list[Any]) -> list[Any]:
        actions[:0], self.events = self.events, []
        return actions


class NoGroup(_Outcomes):
    """No `group_id`: commits fail, no partition has a committed offset."""

    group_id: str | None = None

    def next_actions(self, now: float) -> list[Any]:
        return self.drain([])

    def next_deadline(self) -> float | None:
        return None

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        return None

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        return None

    def commit(self, offsets: Offsets, now: float, timeout: float) -> int:
        op = next_op()
        self.events.append(Failed(op, InvalidStateError("commit needs a group_id")))
        return op

    def auto_commit(self, offsets: Offsets, now: float) -> int | None:
        return None

    def fetch_committed(
        self, partitions: Iterable[TopicPartition], now: float, timeout: float
    ) -> int:
        op = next_op()
        self.events.append(Completed(op, dict.fromkeys(partitions)))
        return op

    def group_metadata(self) -> ConsumerGroupMetadata:
        raise InvalidStateError("group_metadata needs a group_id")


class StandaloneGroup(_Outcomes):
    """Manual assignment with a `group_id`: commits and committed offsets, no membership."""

    def __init__(self, offsets: StandaloneOffsets) -> None:
        super().__init__()
        self.group_id: str | None = offsets.group_id
        self.offsets = offsets
        self._auto: dict[int, tuple[dict[TopicPartition, OffsetAndMetadata], float]] = {}

    def next_actions(self, now: float) -> list[Any]:
        actions: list[Any] = []
        for action in self.offsets.next_actions(now):
            if isinstance(action, Completed | Failed) and action.op in self._auto:
                error = action.error if isinstance(action, Failed) else None
                offsets, sent = self._auto.pop(action.op)
                self.events.append(AutoCommitDone(offsets, error, sent))
            else:
                actions.append(action)
        return self.drain(actions)

    def next_deadline(self) -> float | None:
        return self.offsets.next_deadline()

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        self.offsets.on_response(sent, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        self.offsets.on_failure(sent, error, now)

    def commit(self, offsets: Offsets, now: float, timeout: float) -> int:
        return self.offsets.commit(offsets, now, timeout)

    def auto_commit(self, offsets: Offsets, now: float) -> int | None:
        if not offsets or self._auto:
            return None
        op = self.offsets.commit(offsets, now, self.offsets.default_api_timeout)
        self._auto[op] = (dict(offsets), now)
        return op

    def fetch_committed(
        self, partitions: Iterable[TopicPartition], now: float, timeout: float
    ) -> int:
        return self.offsets.fetch_committed(partitions, now, timeout)

    def group_metadata(self) -> ConsumerGroupMetadata:
        assert self.group_id is not None
        return ConsumerGroupMetadata(self.group_id)


class MemberGroup:
    """A subscribing consumer's membership: classic or KIP-848, one interface."""

    def __init__(self, member: GroupMember | ConsumerMember) -> None:
        self.member = member
        self.group_id: str | None = member.config.group_id

    # -- the contract -------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        return self.member.next_actions(now)

    def next_deadline(self) -> float | None:
        return self.member.next_deadline()

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        self.member.on_response(sent, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        self.member.on_failure(sent, error, now)

    # -- ConsumerGroup --------------------------------------------------------------------------

    def commit(self, offsets: Offsets, now: float, timeout: float) -> int:
        return self.member.commit(offsets, now, timeout)

    def auto_commit(self, offsets: Offsets, now: float) -> int | None:
        return self.member.auto_commit(offsets, now) if offsets else None

    def fetch_committed(
        self, partitions: Iterable[TopicPartition], now: float, timeout: float
    ) -> int:
        return self.member.fetch_committed(partitions, now, timeout)

    def group_metadata(self) -> ConsumerGroupMetadata:
        return self.member.group_metadata()

    # -- membership ---------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self.member.closed

    def subscribe(self, topics: Iterable[str] | re.Pattern[str], now: float) -> None:
        self.member.subscribe(topics, now)

    def poll(self, now: float) -> bool:
        """The application polled; False when the member has nothing new to do."""
        return self.member.poll(now)

    def metadata_updated(
        self, partitions: Mapping[str, int], topic_ids: Mapping[str, uuid.UUID], now: float
    ) -> None:
        """The cluster's topics: partition counts of the subscribed ones (classic: what the
        leader assigns), topic ids (KIP-848: what assignments name)."""
        member = self.member
        if isinstance(member, ConsumerMember):
            member.update_topic_ids(topic_ids, now)
        else:
            member.update_metadata(partitions, now)

    def listener_done(
        self,
        step: int,
        now: float,
        offsets: Offsets | None = None,
        error: BaseException | None = None,
    ) -> None:
        member = self.member
        if isinstance(member, ConsumerMember):
            member.listener_done(step, now, offsets, error)
        else:
            member.listener_done(step, now, offsets)

    def leave(
        self,
        now: float,
        *,
        close: bool,
        timeout: float,
        operation: GroupMembershipOperation = GroupMembershipOperation.DEFAULT,
    ) -> int:
        """Leave the group (on close: auto-commit first, then leave as `operation` says);
        completes once left."""
        reason = LeaveReason.CLOSE if close else LeaveReason.UNSUBSCRIBE
        member = self.member
        if isinstance(member, GroupMember):
            return member.leave(now, reason=reason, timeout=timeout, operation=operation)
        return member.leave(now, reason=reason, operation=operation)


__all__ = ["ConsumerGroup", "MemberGroup", "NoGroup", "Offsets", "StandaloneGroup"]
