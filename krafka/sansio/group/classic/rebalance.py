"""Joining: JoinGroup, the leader's assignment, SyncGroup, and Java's reading of their errors.

One of the two is in flight at a time. JoinGroup announces, per configured assignor, the
subscription (topics, owned partitions, generation, rack); it waits up to the rebalance timeout
on the broker. Its answer makes the member COMPLETING_REBALANCE with a new generation; the
leader (after fresh metadata for every topic the group subscribes to) runs the coordinator's
chosen assignor, a follower sends an empty SyncGroup. SyncGroup's answer makes the member
STABLE and hands the assignment to the completion flow. Errors follow `error_tables`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from krafka.errors import (
    GroupAuthorizationFailedError,
    GroupMaxSizeReachedError,
    InconsistentGroupProtocolError,
    InvalidStateError,
    KrafkaError,
    RemoteProtocolError,
    UnsupportedVersionError,
    error_for_code,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import JoinGroupResponse, SyncGroupResponse
from krafka.protocol.messages.join_group_response import JoinGroupResponseMember
from krafka.sansio.actions import RefreshMetadata, SendRequest
from krafka.sansio.backoff import Backoff
from krafka.sansio.codes import code_name
from krafka.sansio.group.classic import leader, wire
from krafka.sansio.group.classic.assignors import PartitionAssignor, Subscription, lookup_assignor
from krafka.sansio.group.classic.consumer_protocol import encode_subscription
from krafka.sansio.group.classic.core import MemberCore, log
from krafka.sansio.group.classic.error_tables import JOIN_GROUP, SYNC_GROUP, Action, action
from krafka.sansio.group.classic.state import Generation, MemberEvent, MemberState


@dataclass(frozen=True, slots=True)
class Synced:
    """SyncGroup delivered `assignment` (encoded) for `generation`."""

    generation: Generation
    assignment: bytes


@dataclass(slots=True)
class _LeaderWork:
    members: list[JoinGroupResponseMember]
    skip_assignment: bool
    asked_metadata_version: int | None = None
    wait_until: float = 0.0


class Rebalance:
    def __init__(self, core: MemberCore) -> None:
        self.core = core
        self.join_sent: SendRequest[JoinGroupResponse] | None = None
        self.sync_sent: SendRequest[SyncGroupResponse] | None = None
        self.sent_generation: Generation | None = None
        self.backoff = Backoff(core.backoff)
        self.synced: Synced | None = None
        self.is_leader = False
        self._sync_due = False
        self._leader: _LeaderWork | None = None

    @property
    def in_flight(self) -> bool:
        return self.join_sent is not None or self.sync_sent is not None

    def owns(self, sent: SendRequest[Any]) -> bool:
        return sent is self.join_sent or sent is self.sync_sent

    def abandon(self) -> None:
        """The member left: answers to what is in flight no longer matter."""
        self.join_sent = self.sync_sent = None
        self._sync_due, self._leader, self.synced = False, None, None

    # -- requests -------------------------------------------------------------------------------

    def next_request(self, now: float) -> SendRequest[Any] | None:
        """SyncGroup if JoinGroup answered, else JoinGroup (when the coordinator is known and
        no backoff runs)."""
        core = self.core
        coordinator = core.coordinator.target
        if self.in_flight or self.backoff.wait_time(now) > 0:
            return None
        if self._sync_due and core.state is not MemberState.COMPLETING_REBALANCE:
            self._sync_due, self._leader = False, None  # reset meanwhile: join again
        if self._sync_due:
            assignments = self._assignments(now)
            if assignments is None:
                return None
            self._sync_due, self._leader = False, None
            self.sent_generation = core.generation
            self.sync_sent = SendRequest(
                coordinator,
                wire.sync_group_request(core.config, core.generation, assignments),
                min_version=wire.static_min_version(
                    core.config, wire.SYNC_GROUP_STATIC_MIN_VERSION
                ),
            )
            return self.sync_sent
        if not core.rejoin_needed:
            return None
        try:
            protocols = self._protocols()
        except Exception as exc:  # a custom assignor's bug must not stop the member
            core.fail(InvalidStateError(f"assignor subscription_user_data failed: {exc!r}"))
            return None
        core.move(MemberEvent.JOIN_SENT)
        self.sent_generation = core.generation
        self.join_sent = SendRequest(
            coordinator,
            wire.join_group_request(core.config, core.generation, protocols, core.rejoin_reason),
            timeout=wire.join_group_timeout(core.config),
            min_version=wire.static_min_version(core.config, wire.JOIN_GROUP_STATIC_MIN_VERSION),
        )
        return self.join_sent

    def next_deadline(self) -> float | None:
        """When `next_request` may have something to send that it has not now: never while a
        request is in flight (its answer wakes the member), nor for a backoff once nothing waits
        on it."""
        if self.in_flight:
            return None
        if self._sync_due and self._leader is not None:
            if self._leader.asked_metadata_version is not None:
                return self._leader.wait_until
            return None
        if self.backoff.failures and (self._sync_due or self.core.rejoin_needed):
            return self.backoff.retry_at
        return None

    def _protocols(self) -> list[tuple[str, bytes]]:
        """Java's ConsumerCoordinator.metadata(): one subscription per assignor."""
        core = self.core
        topics = core.subscription.joining()
        last_assigned = tuple(sorted(core.last_assigned))
        return [
            (
                assignor.name,
                encode_subscription(
                    Subscription(
                        topics=tuple(sorted(topics)),
                        user_data=assignor.subscription_user_data(
                            topics, last_assigned, core.applied.generation_id
                        ),
                        owned_partitions=tuple(sorted(core.owned)),
                        generation_id=core.generation.generation_id,
                        rack_id=core.config.client_rack,
                    )
                ),
            )
            for assignor in core.assignors
        ]

    def _assignments(self, now: float) -> dict[str, bytes] | None:
        """The leader's SyncGroup assignments (None: waiting for metadata); {} for a follower."""
        work = self._leader
        if work is None:
            return {}
        core = self.core
        self.is_leader = True
        if work.skip_assignment:
            log.info("group %r: static leader keeps its assignment", core.config.group_id)
            core.subscription.assigned_with_current(core.subscription.subscribed())
            return {}
        try:
            subs = leader.subscriptions(work.members)
            topics = leader.group_topics(subs)
            missing = core.subscription.missing(topics)
            if missing and self._wait_for_metadata(work, missing, now):
                return None
            assignor = self.assignor()
            cluster = core.subscription.cluster(topics)
            result = leader.assign(assignor, core.protocol, cluster, subs)
        except KrafkaError as exc:
            self._sync_due, self._leader = False, None
            core.fail(exc)
            return None
        core.subscription.assigned_with_current(result.group_topics)
        return result.assignments

    def _wait_for_metadata(self, work: _LeaderWork, missing: frozenset[str], now: float) -> bool:
        """Ask once for metadata of the topics the group needs; wait for it up to the request
        timeout (topics still unknown then are taken not to exist)."""
        version = self.core.subscription.metadata_version
        if work.asked_metadata_version is None:
            work.asked_metadata_version = version
            work.wait_until = now + self.core.config.request_timeout
            self.core.events.append(RefreshMetadata(missing))
            return True
        return version == work.asked_metadata_version and now < work.wait_until

    def assignor(self, name: str | None = None) -> PartitionAssignor:
        """The configured assignor the coordinator chose (`InvalidStateError` if none)."""
        wanted = name if name is not None else self.core.generation.protocol_name
        return lookup_assignor(self.core.assignors, wanted or "")

    # -- answers --------------------------------------------------------------------------------

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        if sent is self.join_sent:
            self.join_sent = None
            self._join_answered(response, now)
        elif sent is self.sync_sent:
            self.sync_sent = None
            self._sync_answered(response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if not self.owns(sent):
            return
        self.join_sent = self.sync_sent = None
        self._sync_due, self._leader = False, None
        self.core.request_rejoin(f"{type(error).__name__}: {error}")
        if error.retriable or isinstance(error, RemoteProtocolError):
            # an answer that could not be read ends this round like a lost connection does
            self.backoff.failed(now, self.core.rand)
        else:
            self.core.fail(error)

    def _join_answered(self, response: JoinGroupResponse, now: float) -> None:
        core = self.core
        code = int(response.error_code)
        if code != ErrorCode.NONE:
            self._join_failed(code, response, now)
            return
        if core.state is not MemberState.PREPARING_REBALANCE or not core.cycle:
            return  # the member left meanwhile
        if response.protocol_type is not None and response.protocol_type != wire.PROTOCOL_TYPE:
            core.fail(_inconsistent(f"protocol type {response.protocol_type!r}"))
            return
        core.generation = Generation(
            int(response.generation_id), response.member_id, response.protocol_name
        )
        core.move(MemberEvent.JOINED)
        core.clock.reset_timeouts(now)
        self.backoff.succeeded()
        log.info("group %r: joined generation %s", core.config.group_id, core.generation)
        self.is_leader = wire.is_leader(response)
        if not self.is_leader:
            core.subscription.forget_assignment()
        self._leader = (
            _LeaderWork(list(response.members), bool(response.skip_assignment))
            if self.is_leader
            else None
        )
        self._sync_due = True

    def _join_failed(self, code: int, response: JoinGroupResponse, now: float) -> None:
        core = self.core
        error = error_for_code(
            code, f"JoinGroup of group {core.config.group_id!r} failed: {code_name(code)}"
        )
        todo = action(JOIN_GROUP, code, error.retriable)
        core.request_rejoin(f"JoinGroup failed: {code_name(code)}")
        if todo is Action.MEMBER_ID_REQUIRED:
            core.generation = Generation(member_id=response.member_id)
        elif todo is Action.RESET_MEMBER:
            if self.sent_generation == core.generation:
                core.reset(f"{code_name(code)} from JoinGroup", reset_member_id=True)
        elif todo is Action.COORDINATOR_MOVED:
            core.coordinator.moved()
            self.backoff.failed(now, core.rand)
        elif todo is Action.RETRY_LATER:
            self.backoff.failed(now, core.rand)
        elif todo is Action.FATAL:
            core.fail(self._fatal(code, error))

    def _sync_answered(self, response: SyncGroupResponse, now: float) -> None:
        core = self.core
        code = int(response.error_code)
        if code != ErrorCode.NONE:
            self._sync_failed(code, now)
            return
        if response.protocol_type is not None and response.protocol_type != wire.PROTOCOL_TYPE:
            core.fail(_inconsistent(f"protocol type {response.protocol_type!r}"))
            return
        current = core.generation
        if (
            current.is_reset
            or core.state is not MemberState.COMPLETING_REBALANCE
            or current != self.sent_generation
        ):
            core.request_rejoin("the generation changed before SyncGroup answered")
            return
        if response.protocol_name is not None and response.protocol_name != current.protocol_name:
            core.fail(_inconsistent(f"protocol name {response.protocol_name!r}"))
            return
        core.move(MemberEvent.SYNCED)
        core.rejoin_needed = False
        self.backoff.succeeded()
        self.synced = Synced(current, bytes(response.assignment))

    def _sync_failed(self, code: int, now: float) -> None:
        core = self.core
        error = error_for_code(
            code, f"SyncGroup of group {core.config.group_id!r} failed: {code_name(code)}"
        )
        todo = action(SYNC_GROUP, code, error.retriable)
        core.request_rejoin(f"SyncGroup failed: {code_name(code)}")
        if todo in (Action.RESET_MEMBER, Action.RESET_GENERATION):
            if self.sent_generation == core.generation:
                core.reset(
                    f"{code_name(code)} from SyncGroup",
                    reset_member_id=todo is Action.RESET_MEMBER,
                )
        elif todo is Action.COORDINATOR_MOVED:
            core.coordinator.moved()
            self.backoff.failed(now, core.rand)
        elif todo is Action.RETRY_LATER:
            self.backoff.failed(now, core.rand)
        elif todo is Action.FATAL:
            core.fail(self._fatal(code, error))

    def _fatal(self, code: int, error: KrafkaError) -> KrafkaError:
        config = self.core.config
        group = config.group_id
        if code == ErrorCode.FENCED_INSTANCE_ID:
            return type(error)(
                f"the group instance id {config.group_instance_id!r} of group {group!r} was "
                "fenced by another consumer with the same group_instance_id"
            )
        if code == ErrorCode.GROUP_AUTHORIZATION_FAILED:
            return GroupAuthorizationFailedError(f"not authorized to access group {group!r}")
        if code == ErrorCode.GROUP_MAX_SIZE_REACHED:
            return GroupMaxSizeReachedError(
                f"consumer group {group!r} already has the configured maximum number of members"
            )
        if code == ErrorCode.UNSUPPORTED_VERSION:
            return UnsupportedVersionError(
                f"the coordinator of group {group!r} refused the JoinGroup version; static "
                "membership (group_instance_id) needs Kafka 2.3+"
            )
        if code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL:
            names = [a.name for a in self.core.assignors]
            return _inconsistent(f"none of this member's assignors {names} is the group's")
        return error


def _inconsistent(detail: str) -> KrafkaError:
    return InconsistentGroupProtocolError(
        f"the group's protocol is inconsistent with this member's: {detail}"
    )


__all__ = ["Rebalance", "Synced"]
