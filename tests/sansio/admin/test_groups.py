"""Group handlers: ListGroups filters at each version, DeleteGroups, and describing groups of
every kind with the classic -> consumer -> share fallback (scripted coordinators; member bytes
made by kafka-python's hand-written consumer protocol encoder)."""

from __future__ import annotations

import uuid

import pytest
from _admin_scripted import NO_JITTER, answer_coordinators, broker, start, take
from hypothesis import given
from hypothesis import strategies as st

from krafka.errors import (
    GroupAuthorizationFailedError,
    GroupIdNotFoundError,
    UnsupportedVersionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)
from krafka.sansio.admin.cluster import Node
from krafka.sansio.admin.group_description import DescribeGroups
from krafka.sansio.admin.groups import GroupState, GroupType, ListGroups
from krafka.sansio.admin.member_data import decode_assignment, decode_subscription
from krafka.sansio.admin.routing import ToBrokers, ToCoordinators
from krafka.sansio.coordinator import CoordinatorType
from krafka.structs import TopicPartition

kp_consumer = pytest.importorskip("kafka.protocol.old.consumer_protocol")


def test_group_states_and_types_parse_like_java() -> None:
    assert GroupState.parse("stable") is GroupState.STABLE
    assert GroupState.parse("PREPARING_REBALANCE") is GroupState.PREPARING_REBALANCE
    assert GroupState.parse("Exploding") is GroupState.UNKNOWN
    assert GroupType.parse("Consumer") is GroupType.CONSUMER
    assert GroupType.parse("") is GroupType.UNKNOWN


Listed = ListGroupsResponse.ListedGroup


def listing(version: int, states: list[GroupState], types: list[GroupType]) -> object:
    _, talk, op = start(
        ListGroups(states, types),
        ToBrokers(lambda b: b, nodes={1: broker(1)}),
        [1],
        versions={ApiKey.LIST_GROUPS: version},
    )
    sent, request = take(talk, ListGroupsRequest)
    talk.reply(
        sent,
        ListGroupsResponse(
            groups=[
                Listed(
                    group_id="a",
                    protocol_type="consumer",
                    group_state="Stable",
                    group_type="classic",
                ),
                Listed(
                    group_id="b",
                    protocol_type="consumer",
                    group_state="Empty",
                    group_type="consumer",
                ),
            ]
        ),
    )
    return request, talk.outcome(op)[1]


def test_list_groups_filters_by_state_and_type_where_the_broker_can() -> None:
    request, groups = listing(5, [GroupState.STABLE], [GroupType.CONSUMER])
    assert request.states_filter == ["Stable"] and request.types_filter == ["consumer"]
    assert {g.group_id: (g.state, g.type) for g in groups} == {
        "b": (GroupState.EMPTY, GroupType.CONSUMER)
    }  # the scripted broker did not filter: types are checked here again
    request, groups = listing(4, [], [GroupType.CLASSIC])
    assert request.types_filter == []  # v4 cannot: brokers before Kafka 3.8 only have classic
    assert [g.group_id for g in groups] == ["a", "b"]
    assert all(g.type is GroupType.CLASSIC for g in groups)
    request, groups = listing(2, [], [])
    assert [g.state for g in groups] == [None, None]


def test_list_groups_by_state_needs_a_broker_that_can_filter() -> None:
    _, talk, _op = start(
        ListGroups([GroupState.STABLE], []),
        ToBrokers(lambda b: b, nodes={1: broker(1)}),
        [1],
        versions={ApiKey.LIST_GROUPS: 3},
    )
    talk.step()
    (sent,) = talk.outbox
    with pytest.raises(UnsupportedVersionError, match="cannot filter by state"):
        talk.request(sent)


def coordinators() -> ToCoordinators[str]:
    return ToCoordinators(CoordinatorType.GROUP, str, NO_JITTER, lambda: 0.5)


Described = DescribeGroupsResponse.DescribedGroup
Member = Described.DescribedGroupMember


def classic_member(member_id: str, partitions: list[tuple[str, list[int]]]) -> Member:
    assignment = kp_consumer.ConsumerProtocolMemberAssignment_v0(0, partitions, b"").encode()
    topics = sorted({t for t, _ in partitions})
    metadata = kp_consumer.ConsumerProtocolMemberMetadata_v0(0, topics, b"").encode()
    return Member(
        member_id=member_id,
        client_id="rdkafka",
        client_host="/10.0.0.1",
        member_metadata=metadata,
        member_assignment=assignment,
    )


def test_a_classic_group_is_described_with_decoded_assignments() -> None:
    _, talk, op = start(DescribeGroups(False), coordinators(), ["g"])
    answer_coordinators(talk, 2)
    sent, request = take(talk, DescribeGroupsRequest)
    assert request.groups == ["g"] and sent.target == broker(2)
    members = [classic_member("m1", [("t", [0, 2]), ("u", [1])]), classic_member("m2", [])]
    talk.reply(
        sent,
        DescribeGroupsResponse(
            groups=[
                Described(
                    group_id="g",
                    group_state="Stable",
                    protocol_type="consumer",
                    protocol_data="cooperative-sticky",
                    members=members,
                )
            ]
        ),
    )
    group = talk.outcome(op)["g"]
    assert (group.type, group.state, group.assignor) == (
        GroupType.CLASSIC,
        GroupState.STABLE,
        "cooperative-sticky",
    )
    assert group.coordinator == Node(2, "b2", 9093)
    m1, m2 = group.members
    assert m1.assignment == (TopicPartition("t", 0), TopicPartition("t", 2), TopicPartition("u", 1))
    assert m1.subscribed_topics == ("t", "u") and m1.client_host == "/10.0.0.1"
    assert m2.assignment == ()


def consumer_group(group_id: str) -> ConsumerGroupDescribeResponse.DescribedGroup:
    G = ConsumerGroupDescribeResponse.DescribedGroup
    M = G.Member
    A = M.Assignment
    TP = A.TopicPartitions
    tid = uuid.uuid4()
    member = M(
        member_id="m1",
        instance_id="static-1",
        rack_id="r1",
        member_epoch=7,
        client_id="c",
        client_host="/h",
        subscribed_topic_names=["t"],
        assignment=A(topic_partitions=[TP(topic_id=tid, topic_name="t", partitions=[1, 0])]),
        target_assignment=A(topic_partitions=[TP(topic_id=tid, topic_name="t", partitions=[0])]),
    )
    return G(
        group_id=group_id,
        group_state="Reconciling",
        group_epoch=7,
        assignment_epoch=6,
        assignor_name="uniform",
        members=[member],
    )


def test_a_consumer_group_is_found_after_the_classic_api_says_dead() -> None:
    _, talk, op = start(DescribeGroups(False), coordinators(), ["new", "old"])
    answer_coordinators(talk, 1)
    sent, request = take(talk, DescribeGroupsRequest)
    assert request.groups == ["new", "old"]
    talk.reply(
        sent,
        DescribeGroupsResponse(
            groups=[
                Described(group_id="new", group_state="Dead"),
                Described(group_id="old", group_state="Empty", protocol_type="consumer"),
            ]
        ),
    )
    sent, request = take(talk, ConsumerGroupDescribeRequest)
    assert request.group_ids == ["new"]
    talk.reply(sent, ConsumerGroupDescribeResponse(groups=[consumer_group("new")]))
    results = talk.outcome(op)
    new = results["new"]
    assert (new.type, new.state, new.assignor) == (
        GroupType.CONSUMER,
        GroupState.RECONCILING,
        "uniform",
    )
    assert (new.group_epoch, new.assignment_epoch) == (7, 6)
    (member,) = new.members
    assert member.assignment == (TopicPartition("t", 0), TopicPartition("t", 1))
    assert member.target_assignment == (TopicPartition("t", 0),)
    assert (member.group_instance_id, member.member_epoch, member.rack) == ("static-1", 7, "r1")
    assert results["old"].type is GroupType.CLASSIC and results["old"].state is GroupState.EMPTY


def test_a_share_group_is_found_last_and_a_missing_group_is_not_found() -> None:
    _, talk, op = start(DescribeGroups(False), coordinators(), ["share", "nope"])
    answer_coordinators(talk, 1)
    sent, _ = take(talk, DescribeGroupsRequest)
    talk.reply(
        sent,
        DescribeGroupsResponse(
            groups=[
                Described(group_id=g, error_code=ErrorCode.GROUP_ID_NOT_FOUND)
                for g in ("share", "nope")
            ]
        ),
    )
    sent, _ = take(talk, ConsumerGroupDescribeRequest)
    G = ConsumerGroupDescribeResponse.DescribedGroup
    talk.reply(
        sent,
        ConsumerGroupDescribeResponse(
            groups=[
                G(group_id=g, error_code=ErrorCode.GROUP_ID_NOT_FOUND) for g in ("share", "nope")
            ]
        ),
    )
    sent, request = take(talk, ShareGroupDescribeRequest)
    assert request.group_ids == ["share", "nope"]
    S = ShareGroupDescribeResponse.DescribedGroup
    A = S.Member.Assignment
    member = S.Member(
        member_id="s1",
        member_epoch=3,
        client_id="c",
        client_host="/h",
        subscribed_topic_names=["jobs"],
        assignment=A(
            topic_partitions=[
                A.TopicPartitions(topic_id=uuid.uuid4(), topic_name="jobs", partitions=[0])
            ]
        ),
    )
    talk.reply(
        sent,
        ShareGroupDescribeResponse(
            groups=[
                S(
                    group_id="share",
                    group_state="Stable",
                    group_epoch=3,
                    assignment_epoch=3,
                    assignor_name="simple",
                    members=[member],
                ),
                S(group_id="nope", error_code=ErrorCode.GROUP_ID_NOT_FOUND),
            ]
        ),
    )
    results = talk.outcome(op)
    share = results["share"]
    assert share.type is GroupType.SHARE and share.members[0].assignment == (
        TopicPartition("jobs", 0),
    )
    assert isinstance(results["nope"], GroupIdNotFoundError)
    assert "group 'nope'" in str(results["nope"])


def test_apis_the_broker_lacks_are_skipped() -> None:
    _, talk, op = start(DescribeGroups(False), coordinators(), ["g"])
    answer_coordinators(talk, 1)
    sent, _ = take(talk, DescribeGroupsRequest)
    talk.reply(sent, DescribeGroupsResponse(groups=[Described(group_id="g", group_state="Dead")]))
    sent, _ = take(talk, ConsumerGroupDescribeRequest)
    talk.fail(sent, UnsupportedVersionError("no ConsumerGroupDescribe"))
    sent, _ = take(talk, ShareGroupDescribeRequest)
    talk.fail(sent, UnsupportedVersionError("no ShareGroupDescribe"))
    assert isinstance(talk.outcome(op)["g"], GroupIdNotFoundError)


def test_a_broker_without_any_describe_api_fails_the_call() -> None:
    _, talk, op = start(DescribeGroups(False), coordinators(), ["g"])
    answer_coordinators(talk, 1)
    for kind in (DescribeGroupsRequest, ConsumerGroupDescribeRequest, ShareGroupDescribeRequest):
        sent, _ = take(talk, kind)
        talk.fail(sent, UnsupportedVersionError(f"no {kind.__name__}"))
    with pytest.raises(UnsupportedVersionError, match="DESCRIBE_GROUPS, CONSUMER_GROUP_DESCRIBE"):
        talk.outcome(op)


def test_authorization_and_coordinator_errors() -> None:
    _, talk, op = start(DescribeGroups(False), coordinators(), ["a", "b"])
    answer_coordinators(talk, 1)
    sent, _ = take(talk, DescribeGroupsRequest)
    talk.reply(
        sent,
        DescribeGroupsResponse(
            groups=[
                Described(group_id="a", error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED),
                Described(group_id="b", error_code=ErrorCode.NOT_COORDINATOR),
            ]
        ),
    )
    talk.advance_to_deadline()
    answer_coordinators(talk, 3)
    sent, request = take(talk, DescribeGroupsRequest)
    assert sent.target == broker(3) and request.groups == ["b"]
    talk.reply(sent, DescribeGroupsResponse(groups=[Described(group_id="b", group_state="Empty")]))
    results = talk.outcome(op)
    assert isinstance(results["a"], GroupAuthorizationFailedError)
    assert results["b"].coordinator == Node(3, "b3", 9094)


def test_member_data_from_other_versions_and_garbage() -> None:
    from krafka.protocol.messages import ConsumerProtocolAssignment, ConsumerProtocolSubscription

    A = ConsumerProtocolAssignment
    assignment = A(
        assigned_partitions=[A.TopicPartition(topic="t", partitions=[3])], user_data=b"u"
    )
    for version in range(4):
        data = version.to_bytes(2, "big") + assignment.encode(version)
        assert decode_assignment(data) == (TopicPartition("t", 3),)
    newer = (9).to_bytes(2, "big") + assignment.encode(3) + b"future fields"
    assert decode_assignment(newer) == (TopicPartition("t", 3),)
    subscription = ConsumerProtocolSubscription(topics=["b", "a"], rack_id="r")
    assert decode_subscription((3).to_bytes(2, "big") + subscription.encode(3)) == ("a", "b")
    assert decode_assignment(b"") == () and decode_subscription(None) == ()
    assert decode_assignment(b"\x00\x00\xff\xff\xff") is None
    assert decode_assignment(b"\xff\xff") is None


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=12),
        st.lists(st.integers(0, 2**31 - 1), max_size=6, unique=True),
        max_size=5,
    ),
    st.binary(max_size=16),
)
def test_assignments_encoded_by_kafka_python_decode_here(
    topics: dict[str, list[int]], user_data: bytes
) -> None:
    data = kp_consumer.ConsumerProtocolMemberAssignment_v0(
        0, list(topics.items()), user_data
    ).encode()
    expected = tuple(sorted(TopicPartition(t, p) for t, ps in topics.items() for p in ps))
    assert decode_assignment(data) == expected
    subscription = kp_consumer.ConsumerProtocolMemberMetadata_v0(0, list(topics), user_data)
    assert decode_subscription(subscription.encode()) == tuple(sorted(topics))
