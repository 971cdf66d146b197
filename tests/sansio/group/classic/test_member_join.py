"""Joining a group: the state table, JoinGroup / SyncGroup as leader and follower, KIP-394."""

from __future__ import annotations

import itertools

import pytest
from _assignors import CooperativeBalance, EagerRoundRobin
from _group_scripted import Member, metadata, tps

from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.group import AssignPartitions, MemberState, RevokePartitions
from krafka.sansio.group.classic.state import TRANSITIONS, MemberEvent
from krafka.structs import ConsumerGroupMetadata, TopicPartition

S, E = MemberState, MemberEvent

EXPECTED = {
    (S.UNJOINED, E.JOIN_SENT): S.PREPARING_REBALANCE,
    (S.PREPARING_REBALANCE, E.JOIN_SENT): S.PREPARING_REBALANCE,
    (S.COMPLETING_REBALANCE, E.JOIN_SENT): S.PREPARING_REBALANCE,
    (S.STABLE, E.JOIN_SENT): S.PREPARING_REBALANCE,
    (S.PREPARING_REBALANCE, E.JOINED): S.COMPLETING_REBALANCE,
    (S.COMPLETING_REBALANCE, E.SYNCED): S.STABLE,
    **{(state, E.RESET): S.UNJOINED for state in S},
}


@pytest.mark.parametrize(("state", "event"), list(itertools.product(S, E)))
def test_the_table_is_exactly_the_expected_one(state: MemberState, event: MemberEvent) -> None:
    assert TRANSITIONS.get((state, event)) == EXPECTED.get((state, event))


def test_nothing_happens_before_the_application_polls() -> None:
    m = Member()
    m.subscribe("t")
    m.nothing_sent()
    assert m.member.state is S.UNJOINED


def test_leader_joins_assigns_and_becomes_stable() -> None:
    assignor = EagerRoundRobin()
    m = Member([assignor])
    m.topics(t=3)
    m.start("t")
    sent, request = m.join_request()
    assert m.member.state is S.PREPARING_REBALANCE
    assert (
        request.group_id == "g" and request.member_id == "" and request.protocol_type == "consumer"
    )
    assert [p.name for p in request.protocols] == ["test-eager"]
    assert request.session_timeout_ms == 10_000 and request.rebalance_timeout_ms == 30_000
    assert sent.timeout == 35.0  # the rebalance timeout plus Java's 5 s
    sub = m.subscription_sent(request)
    assert sub.topics == ("t",) and sub.owned_partitions == () and sub.generation_id == -1
    other = metadata(["t"])
    m.reply_join(
        sent,
        member_id="m1",
        generation=7,
        members={"m1": request.protocols[0].metadata, "m2": other},
    )
    assert m.member.state is S.COMPLETING_REBALANCE
    sync, sync_request = m.sync_request()
    assert sync_request.generation_id == 7 and sync_request.member_id == "m1"
    assert sync_request.protocol_name == "test-eager"
    assignments = m.leader_assignments(sync_request)
    assert assignments == {"m1": tps("t-0", "t-2"), "m2": tps("t-1")}
    m.reply_sync(sync, assignments["m1"])
    assert m.member.state is S.STABLE
    step = m.expect_step(AssignPartitions)
    assert step.added == tps("t-0", "t-2") == step.assignment and step.generation == 7
    assert m.member.assignment() == tps("t-0", "t-2")
    m.answer(step)
    assert m.member.is_leader
    assert assignor.assignments[-1][1] == 7
    meta = m.member.group_metadata()
    assert (meta.group_id, meta.generation_id, meta.member_id) == ("g", 7, "m1")


def test_follower_sends_an_empty_sync_and_gets_its_assignment() -> None:
    m = Member()
    m.start("t")
    m.join_as_follower(tps("t-1"), member_id="m2", generation=3)
    assert m.member.state is S.STABLE and m.member.assignment() == tps("t-1")
    assert not m.member.is_leader


def test_member_id_required_rejoins_at_once_with_the_given_id() -> None:
    m = Member()
    m.start("t")
    sent, request = m.join_request()
    assert request.member_id == ""
    m.reply_join(sent, member_id="given-id", generation=-1, code=ErrorCode.MEMBER_ID_REQUIRED)
    sent, request = m.join_request()  # no backoff
    assert request.member_id == "given-id"
    m.reply_join(sent, member_id="given-id", generation=1, leader="other")
    _sync, request = m.sync_request()
    assert request.member_id == "given-id"


def test_leader_waits_for_metadata_of_topics_other_members_want() -> None:
    from krafka.sansio.actions import RefreshMetadata

    m = Member()
    m.topics(t=2)
    m.start("t")
    sent, request = m.join_request()
    members = {"m1": request.protocols[0].metadata, "m2": metadata(["u"])}
    m.reply_join(sent, member_id="m1", members=members)
    assert m.events_of(RefreshMetadata) == [RefreshMetadata(frozenset({"u"}))]
    m.nothing_sent()
    m.topics(t=2, u=1)
    _sync, request = m.sync_request()
    assigned = set().union(*m.leader_assignments(request).values())
    assert assigned == set(tps("t-0", "t-1", "u-0"))


def test_leader_assigns_without_a_topic_that_never_shows_up() -> None:
    m = Member(request_timeout=5.0)
    m.topics(t=1)
    m.start("t")
    sent, request = m.join_request()
    m.reply_join(sent, members={"m1": request.protocols[0].metadata, "m2": metadata(["gone"])})
    m.nothing_sent()
    m.advance(m.config.request_timeout)
    _sync, request = m.sync_request()
    assert set().union(*m.leader_assignments(request).values()) == set(tps("t-0"))


def test_cooperative_member_keeps_its_partitions_and_revokes_only_what_moves() -> None:
    m = Member([CooperativeBalance()])
    m.topics(t=4)
    m.start("t")
    m.join_as_follower(tps("t-0", "t-1", "t-2", "t-3"), generation=1)
    m.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    m.poll()
    sent, request = m.join_request()  # no revoke step before rejoining: cooperative
    sub = m.subscription_sent(request)
    assert set(sub.owned_partitions) == set(tps("t-0", "t-1", "t-2", "t-3"))
    assert sub.generation_id == 1
    assert m.member.assignment() == tps("t-0", "t-1", "t-2", "t-3")
    m.reply_join(sent, generation=2, leader="other")
    sync, _ = m.sync_request()
    m.reply_sync(sync, tps("t-0", "t-1"))
    revoke = m.expect_step(RevokePartitions)
    assert revoke.partitions == tps("t-2", "t-3")
    assert m.member.assignment() == tps("t-0", "t-1", "t-2", "t-3")  # still owned until done
    m.answer(revoke)
    assign = m.expect_step(AssignPartitions)
    assert assign.added == frozenset() and assign.assignment == tps("t-0", "t-1")
    assert assign.retained == tps("t-0", "t-1")
    m.answer(assign)
    # the second round follows at once (no poll needed), announcing what is still owned
    sent, request = m.join_request()
    assert set(m.subscription_sent(request).owned_partitions) == set(tps("t-0", "t-1"))


def test_the_rebalance_protocol_is_the_highest_all_assignors_support() -> None:
    from krafka.errors import ConfigError
    from krafka.sansio.group.classic.assignors import RebalanceProtocol
    from krafka.sansio.group.classic.assignors import (
        choose_rebalance_protocol as rebalance_protocol,
    )

    assert rebalance_protocol([CooperativeBalance()]) is RebalanceProtocol.COOPERATIVE
    assert rebalance_protocol([CooperativeBalance(), EagerRoundRobin()]) is RebalanceProtocol.EAGER
    assert Member([CooperativeBalance(), EagerRoundRobin()]).member.rebalance_protocol is (
        RebalanceProtocol.EAGER
    )
    with pytest.raises(ConfigError):
        rebalance_protocol([])


def test_every_assignor_is_offered_in_preference_order() -> None:
    m = Member([CooperativeBalance(), EagerRoundRobin()])
    m.start("t")
    _, request = m.join_request()
    assert [p.name for p in request.protocols] == ["test-cooperative", "test-eager"]


def test_leader_uses_the_assignor_the_coordinator_chose() -> None:
    eager, cooperative = EagerRoundRobin(), CooperativeBalance()
    m = Member([cooperative, eager])
    m.topics(t=2)
    m.start("t")
    sent, request = m.join_request()
    members = {"m1": request.protocols[1].metadata, "m2": metadata(["t"])}
    m.reply_join(sent, members=members, protocol="test-eager")
    sync, request = m.sync_request()
    assert request.protocol_name == "test-eager"
    assert m.leader_assignments(request) == {"m1": tps("t-0"), "m2": tps("t-1")}
    m.reply_sync(sync, tps("t-0"))
    m.answer_steps_until_assigned()
    assert eager.assignments and not cooperative.assignments


def test_leader_refuses_a_cooperative_assignment_that_moves_owned_partitions() -> None:
    from _assignors import GreedyCooperative

    from krafka.errors import InvalidStateError
    from krafka.sansio.group import GroupFailed

    m = Member([GreedyCooperative()])
    m.topics(t=2)
    m.start("t")
    sent, request = m.join_request()
    # m0 (first by name) would take t-1, which m2 still owns: a direct move
    members = {
        "m0": request.protocols[0].metadata,
        "m2": metadata(["t"], owned=tps("t-1"), gen=3),
    }
    m.reply_join(sent, member_id="m0", members=members)
    [failed] = m.events_of(GroupFailed)
    assert isinstance(failed.error, InvalidStateError)
    assert "COOPERATIVE" in str(failed.error) and "t-1" in str(failed.error)
    m.nothing_sent()


def test_the_leader_passes_replica_racks_to_its_assignor() -> None:
    from krafka.sansio.group.classic.assignors import Cluster

    seen: list[Cluster] = []

    class RackAware(EagerRoundRobin):
        name = "test-racks"

        def assign(self, cluster, subscriptions):  # type: ignore[no-untyped-def]
            seen.append(cluster)
            return super().assign(cluster, subscriptions)

    m = Member([RackAware()], client_rack="eu-1")
    racks = {TopicPartition("t", 0): frozenset({"eu-1", "eu-2"})}
    m.member.update_metadata({"t": 1, "other": 4}, m.now, racks=racks)
    m.start("t")
    sent, request = m.join_request()
    assert m.subscription_sent(request).rack_id == "eu-1"
    m.reply_join(sent, members={"m1": request.protocols[0].metadata})
    m.sync_request()
    assert seen[-1].partitions == {"t": 1} and seen[-1].racks == racks


def test_an_assignor_that_names_unknown_members_is_refused() -> None:
    from krafka.errors import InvalidStateError
    from krafka.sansio.group import GroupFailed
    from krafka.sansio.group.classic.assignors import Assignment

    class Wrong(EagerRoundRobin):
        def assign(self, cluster, subscriptions):  # type: ignore[no-untyped-def]
            return {"ghost": Assignment(())}

    m = Member([Wrong()])
    m.topics(t=1)
    m.start("t")
    sent, request = m.join_request()
    m.reply_join(sent, members={"m1": request.protocols[0].metadata})
    [failed] = m.events_of(GroupFailed)
    assert isinstance(failed.error, InvalidStateError) and "ghost" in str(failed.error)


def test_members_missing_from_the_assignment_get_an_empty_one() -> None:
    from krafka.sansio.group.classic.assignors import Assignment

    class Lazy(EagerRoundRobin):
        def assign(self, cluster, subscriptions):  # type: ignore[no-untyped-def]
            return {"m1": Assignment(tuple(cluster.partitions_for("t")))}

    m = Member([Lazy()])
    m.topics(t=1)
    m.start("t")
    sent, request = m.join_request()
    m.reply_join(sent, members={"m1": request.protocols[0].metadata, "m2": metadata(["t"])})
    _, request = m.sync_request()
    assert m.leader_assignments(request) == {"m1": tps("t-0"), "m2": frozenset()}


def test_an_assignor_that_raises_is_reported_and_the_member_survives() -> None:
    from krafka.errors import InvalidStateError
    from krafka.sansio.group import GroupFailed

    class Broken(EagerRoundRobin):
        def assign(self, cluster, subscriptions):  # type: ignore[no-untyped-def]
            raise ZeroDivisionError("oops")

    m = Member([Broken()])
    m.topics(t=1)
    m.start("t")
    sent, request = m.join_request()
    m.reply_join(sent, members={"m1": request.protocols[0].metadata})
    [failed] = m.events_of(GroupFailed)
    assert isinstance(failed.error, InvalidStateError) and "ZeroDivisionError" in str(failed.error)
    m.poll()
    m.join_request()  # the next poll tries again


def test_group_metadata_names_the_generation_whose_assignment_was_applied() -> None:
    m = Member(instance_id="i1")
    assert m.member.group_metadata() == ConsumerGroupMetadata("g", -1, "", "i1")
    m.topics(t=2)
    m.start("t")
    m.join_as_follower(tps("t-0"), member_id="m1", generation=3)
    assert m.member.group_metadata() == ConsumerGroupMetadata("g", 3, "m1", "i1")
    m.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    m.poll()
    m.answer(m.expect_step(RevokePartitions))
    sent, _ = m.join_request()
    m.reply_join(sent, member_id="m1", generation=4, leader="other")
    assert m.member.group_metadata().generation_id == 3  # not applied yet
    sync, _ = m.sync_request()
    m.reply_sync(sync, tps("t-1"))
    assign = m.expect_step(AssignPartitions)
    assert m.member.group_metadata().generation_id == 4
    m.answer(assign)
    m.heartbeat(ErrorCode.UNKNOWN_MEMBER_ID)
    assert m.member.group_metadata().generation_id == 4  # a fenced member's stay refused


def test_assignors_hear_the_last_assignment_for_their_user_data() -> None:
    """Eager sticky assignors keep stickiness through user data: the last assignment and its
    generation are passed even after an eager revocation emptied what the member owns."""
    assignor = EagerRoundRobin()
    m = Member([assignor])
    m.topics(t=2)
    m.start("t")
    m.join_as_follower(tps("t-0", "t-1"), generation=5)
    assert assignor.user_data_asked[-1] == (frozenset({"t"}), (), -1)
    m.heartbeat(ErrorCode.REBALANCE_IN_PROGRESS)
    m.poll()
    m.answer(m.expect_step(RevokePartitions))
    _, request = m.join_request()
    assert m.subscription_sent(request).owned_partitions == ()
    assert assignor.user_data_asked[-1] == (
        frozenset({"t"}),
        (TopicPartition("t", 0), TopicPartition("t", 1)),
        5,
    )
