"""A share-group member (KIP-932) as one sans-IO machine: Java's ShareMembershipManager and
ShareHeartbeatRequestManager on the base it shares with KIP-848 members (`Membership`).

The member heartbeats ShareGroupHeartbeat to the group coordinator with its own member id (a
UUID it keeps across rejoins, even after UNKNOWN_MEMBER_ID); the coordinator answers with the
member epoch and, when it changes, the partitions (by topic id) the member may fetch from. A
share member has no rebalance listener and nothing to commit before giving partitions up, so
each reconciliation step is done at once and the assignment is acknowledged by the next
heartbeat. No static membership; leaving sends epoch -1.

Errors beyond the shared table: GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, UNSUPPORTED_VERSION,
GROUP_AUTHORIZATION_FAILED and anything unknown are fatal (Java).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

from krafka.errors import InvalidStateError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ShareGroupHeartbeatRequest
from krafka.sansio.actions import Completed, next_op
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.group.events import CommitReason, Partitions
from krafka.sansio.group.membership.assignment import Resolved
from krafka.sansio.group.membership.flows import ReleaseKind
from krafka.sansio.group.membership.member import Membership, new_member_id
from krafka.sansio.group.membership.state import MembershipState

S = MembershipState


class ShareMember(Membership):
    """One member of share group `group_id`."""

    def __init__(
        self,
        group_id: str,
        *,
        max_poll_interval: float = 300.0,
        retry_backoff: float = 0.1,
        retry_backoff_max: float = 1.0,
        client_rack: str | None = None,
        member_id: str | None = None,
        rand: Callable[[], float] = random.random,
        new_id: Callable[[], str] = new_member_id,
    ) -> None:
        policy = BackoffPolicy(initial=retry_backoff, maximum=retry_backoff_max, max_retries=None)
        super().__init__(
            group_id,
            max_poll_interval=max_poll_interval,
            backoff=policy,
            member_id=member_id,
            rand=rand,
            new_id=new_id,
        )
        self.client_rack = client_rack
        self._topics: frozenset[str] = frozenset()
        self._sent_topics: frozenset[str] | None = None
        self._sent_rack = False

    # -- what the machine may read --------------------------------------------------------------

    @property
    def subscribed(self) -> bool:
        return bool(self._topics)

    @property
    def auto_commit_enabled(self) -> bool:
        return False

    def subscription(self) -> frozenset[str]:
        return self._topics

    def assignment(self) -> Partitions:
        return self.flows.owned

    # -- the application's calls ----------------------------------------------------------------

    def subscribe(self, topics: Iterable[str], now: float) -> None:
        """Replace the subscription; the member joins at the next poll (or sends the change
        with its next heartbeat)."""
        if self.closed:
            raise InvalidStateError("the share consumer is closed")
        names = frozenset(topics)
        if not names:
            raise ValueError("subscribe to at least one topic (or use unsubscribe)")
        if names != self._topics:
            self._topics = names
            self.subscription_updated = True

    def poll(self, now: float) -> None:
        if self.closed:
            raise InvalidStateError("the share consumer is closed")
        self.polled(now)
        self.flows.advance(self, can_commit=True)

    def leave(self, now: float, *, close: bool) -> int:
        """Release the partitions and send the leave heartbeat (epoch -1); completes when it is
        answered or could not be sent."""
        op = next_op()
        if self.closed:
            self.events.append(Completed(op))
            return op
        if self.state.leaving:
            self.leave_ops.append(op)
        elif not self.state.in_group:
            if self.state is S.FENCED:
                self.clear_assignment()
                self.move(S.UNSUBSCRIBED)
            self.left()
            self.events.append(Completed(op))
        else:
            self.leave_ops.append(op)
            self.move(S.PREPARE_LEAVING)
            self.flows.release(ReleaseKind.LEAVE, close=close)
        self.closed = self.closed or close
        return op

    # -- the contract (the share consumer machine composes these) --------------------------------

    def actions(self, now: float) -> list[Any]:
        self.flows.advance(self, can_commit=True)
        actions = self.heartbeat_actions(now)
        actions[:0], self.events = self.events, []
        return actions

    # -- Steps: a share member has no listener and nothing to commit ----------------------------

    def issue_commit(self, reason: CommitReason) -> bool:
        return False

    def issue_revoke(self, partitions: Partitions) -> bool:
        return False

    def issue_assign(self, added: Partitions, assignment: Partitions, resolved: Resolved) -> bool:
        return False

    def issue_lose(self, partitions: Partitions, reason: str) -> bool:
        return False

    def pending_revocation(self, partitions: Partitions) -> None:
        return None

    def poll_needed(self) -> None:
        return None  # nothing to commit first: share members reconcile without a poll

    def left(self) -> None:
        self._topics = frozenset()
        self.subscription_updated = False

    # -- Membership hooks -----------------------------------------------------------------------

    def _heartbeat_body(self, now: float) -> tuple[Any, int | None]:
        joining = self.state is S.JOINING or self.state is S.LEAVING
        topics: list[str] | None = None
        if self.state is not S.LEAVING and (joining or self._topics != self._sent_topics):
            topics = sorted(self._topics)
            self._sent_topics = self._topics
        rack = None
        if self.client_rack is not None and (joining or not self._sent_rack):
            rack, self._sent_rack = self.client_rack, True
        request = ShareGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=self.member_id,
            member_epoch=self.member_epoch,
            rack_id=rack,
            subscribed_topic_names=topics,
        )
        return request, None

    def _reset_sent_fields(self) -> None:
        self._sent_topics = None
        self._sent_rack = False

    def _fatal_message(self, code: int, message: str | None) -> str:
        if code == ErrorCode.UNSUPPORTED_VERSION:
            return "The cluster does not support share groups (KIP-932)"
        return super()._fatal_message(code, message)


__all__ = ["ShareMember"]
