"""Group offset handlers: OffsetFetch in both request shapes, admin OffsetCommit (generation
-1) refused by a group with members, and OffsetDelete."""

from __future__ import annotations

import pytest
from _admin_scripted import NO_JITTER, answer_coordinators, start, take
from hypothesis import given
from hypothesis import strategies as st

from krafka.errors import (
    GroupIdNotFoundError,
    GroupSubscribedToTopicError,
    NonEmptyGroupError,
    UnsupportedVersionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from krafka.sansio.admin.group_offsets import (
    AlterGroupOffsets,
    DeleteGroupOffsets,
    ListGroupOffsets,
)
from krafka.sansio.admin.routing import ToCoordinators
from krafka.sansio.coordinator import CoordinatorType
from krafka.structs import OffsetAndMetadata, TopicPartition

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


def coordinators() -> ToCoordinators[str]:
    return ToCoordinators(CoordinatorType.GROUP, str, NO_JITTER, lambda: 0.5)


def fetched(
    version: int, parts: list[tuple[TopicPartition, int, int]], group_code: int = 0
) -> OffsetFetchResponse:
    """An OffsetFetch answer in the shape of `version`: (partition, offset, code) entries."""
    if version >= 8:
        G = OffsetFetchResponse.OffsetFetchResponseGroup
        T = G.OffsetFetchResponseTopics
        P = T.OffsetFetchResponsePartitions
        topics: dict[str, list[P]] = {}
        for tp, offset, code in parts:
            topics.setdefault(tp.topic, []).append(
                P(
                    partition_index=tp.partition,
                    committed_offset=offset,
                    metadata="m",
                    committed_leader_epoch=3 if offset >= 0 else -1,
                    error_code=code,
                )
            )
        group = G(
            group_id="g",
            error_code=group_code,
            topics=[T(name=t, partitions=p) for t, p in topics.items()],
        )
        return OffsetFetchResponse(groups=[group])
    T2 = OffsetFetchResponse.OffsetFetchResponseTopic
    P2 = T2.OffsetFetchResponsePartition
    old: dict[str, list[P2]] = {}
    for tp, offset, code in parts:
        old.setdefault(tp.topic, []).append(
            P2(
                partition_index=tp.partition,
                committed_offset=offset,
                metadata="m",
                committed_leader_epoch=(3 if offset >= 0 else -1) if version >= 5 else -1,
                error_code=code,
            )
        )
    return OffsetFetchResponse(
        error_code=group_code, topics=[T2(name=t, partitions=p) for t, p in old.items()]
    )


@pytest.mark.parametrize("version", [2, 5, 7, 8, 9])
def test_list_group_offsets_in_either_shape(version: int) -> None:
    handler = ListGroupOffsets([T0, T1, U0], require_stable=version >= 7)
    _, talk, op = start(handler, coordinators(), ["g"], versions={ApiKey.OFFSET_FETCH: version})
    answer_coordinators(talk, 1)
    sent, request = take(talk, OffsetFetchRequest)
    if version >= 8:
        (group,) = request.groups
        assert (group.group_id, group.member_id, group.member_epoch) == ("g", None, -1)
        assert [(t.name, t.partition_indexes) for t in group.topics] == [("t", [0, 1]), ("u", [0])]
    else:
        assert request.group_id == "g"
        assert [(t.name, t.partition_indexes) for t in request.topics] == [
            ("t", [0, 1]),
            ("u", [0]),
        ]
    assert request.require_stable is (version >= 7)
    talk.reply(
        sent,
        fetched(
            version, [(T0, 42, 0), (T1, -1, 0), (U0, -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
        ),
    )
    offsets = talk.outcome(op)["g"]
    epoch = 3 if version >= 5 else None
    assert offsets[T0] == OffsetAndMetadata(42, "m", epoch)
    assert offsets[T1] is None
    assert type(offsets[U0]).__name__ == "UnknownTopicOrPartitionError"


def test_all_partitions_of_a_group_need_v2() -> None:
    _, talk, op = start(
        ListGroupOffsets(None, False), coordinators(), ["g"], versions={ApiKey.OFFSET_FETCH: 7}
    )
    answer_coordinators(talk, 1)
    sent, request = take(talk, OffsetFetchRequest)
    assert sent.min_version == 2 and request.topics is None
    talk.reply(sent, fetched(7, [(T0, 1, 0)]))
    assert talk.outcome(op)["g"] == {T0: OffsetAndMetadata(1, "m", 3)}


def test_require_stable_on_an_old_broker_is_refused() -> None:
    _, talk, _ = start(
        ListGroupOffsets(None, True), coordinators(), ["g"], versions={ApiKey.OFFSET_FETCH: 6}
    )
    answer_coordinators(talk, 1)
    talk.step()
    (sent,) = talk.outbox
    with pytest.raises(UnsupportedVersionError, match="stable"):
        talk.request(sent)


def test_unstable_offsets_and_loading_coordinators_are_retried() -> None:
    _, talk, op = start(ListGroupOffsets([T0], True), coordinators(), ["g"])
    answer_coordinators(talk, 1)
    sent, _ = take(talk, OffsetFetchRequest)
    talk.reply(sent, fetched(9, [(T0, -1, ErrorCode.UNSTABLE_OFFSET_COMMIT)]))
    talk.advance_to_deadline()
    sent, _ = take(talk, OffsetFetchRequest)
    talk.reply(sent, fetched(9, [], group_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS))
    talk.advance_to_deadline()
    sent, _ = take(talk, OffsetFetchRequest)
    talk.reply(sent, fetched(9, [(T0, 5, 0)]))
    assert talk.outcome(op)["g"][T0].offset == 5


def test_a_group_level_error_fails_the_group() -> None:
    _, talk, op = start(
        ListGroupOffsets([T0], False), coordinators(), ["g"], versions={ApiKey.OFFSET_FETCH: 7}
    )
    answer_coordinators(talk, 1)
    sent, _ = take(talk, OffsetFetchRequest)
    talk.reply(sent, fetched(7, [], group_code=ErrorCode.GROUP_ID_NOT_FOUND))
    assert isinstance(talk.outcome(op)["g"], GroupIdNotFoundError)


def committed(codes: dict[TopicPartition, int]) -> OffsetCommitResponse:
    T = OffsetCommitResponse.OffsetCommitResponseTopic
    P = T.OffsetCommitResponsePartition
    topics: dict[str, list[P]] = {}
    for tp, code in codes.items():
        topics.setdefault(tp.topic, []).append(P(partition_index=tp.partition, error_code=code))
    return OffsetCommitResponse(topics=[T(name=t, partitions=p) for t, p in topics.items()])


@pytest.mark.parametrize("version", [2, 6, 9])
def test_alter_group_offsets_commits_as_an_admin(version: int) -> None:
    offsets = {T0: OffsetAndMetadata(10, "why", 4), U0: OffsetAndMetadata(0)}
    _, talk, op = start(
        AlterGroupOffsets(offsets), coordinators(), ["g"], versions={ApiKey.OFFSET_COMMIT: version}
    )
    answer_coordinators(talk, 1)
    sent, request = take(talk, OffsetCommitRequest)
    assert (request.group_id, request.generation_id_or_member_epoch, request.member_id) == (
        "g",
        -1,
        "",
    )
    t, _u = request.topics
    p = t.partitions[0]
    assert (p.partition_index, p.committed_offset, p.committed_metadata) == (0, 10, "why")
    assert p.committed_leader_epoch == (4 if version >= 6 else -1)
    talk.reply(sent, committed({T0: 0, U0: ErrorCode.OFFSET_METADATA_TOO_LARGE}))
    result = talk.outcome(op)["g"]
    assert result[T0] is None and type(result[U0]).__name__ == "OffsetMetadataTooLargeError"


@pytest.mark.parametrize(
    "code",
    [
        ErrorCode.UNKNOWN_MEMBER_ID,
        ErrorCode.ILLEGAL_GENERATION,
        ErrorCode.REBALANCE_IN_PROGRESS,
        ErrorCode.STALE_MEMBER_EPOCH,
    ],
)
def test_a_group_with_members_refuses_an_admin_commit(code: ErrorCode) -> None:
    _, talk, op = start(
        AlterGroupOffsets({T0: OffsetAndMetadata(1), T1: OffsetAndMetadata(1)}),
        coordinators(),
        ["g"],
    )
    answer_coordinators(talk, 1)
    sent, _ = take(talk, OffsetCommitRequest)
    talk.reply(sent, committed({T0: code, T1: code}))
    error = talk.outcome(op)["g"]
    assert isinstance(error, NonEmptyGroupError)
    assert "active members" in str(error) and code.name in str(error)


def test_a_moved_coordinator_during_alter_is_followed() -> None:
    _, talk, op = start(AlterGroupOffsets({T0: OffsetAndMetadata(1)}), coordinators(), ["g"])
    answer_coordinators(talk, 1)
    sent, _ = take(talk, OffsetCommitRequest)
    talk.reply(sent, committed({T0: ErrorCode.NOT_COORDINATOR}))
    talk.advance_to_deadline()
    answer_coordinators(talk, 2)
    sent, _ = take(talk, OffsetCommitRequest)
    assert sent.target.node_id == 2
    talk.reply(sent, committed({T0: 0}))
    assert talk.outcome(op)["g"] == {T0: None}


def test_delete_group_offsets() -> None:
    _, talk, op = start(DeleteGroupOffsets([T0, U0]), coordinators(), ["g"])
    answer_coordinators(talk, 1)
    sent, request = take(talk, OffsetDeleteRequest)
    assert request.group_id == "g"
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in request.topics] == [
        ("t", [0]),
        ("u", [0]),
    ]
    T = OffsetDeleteResponse.OffsetDeleteResponseTopic
    P = T.OffsetDeleteResponsePartition
    talk.reply(
        sent,
        OffsetDeleteResponse(
            topics=[
                T(name="t", partitions=[P(partition_index=0)]),
                T(
                    name="u",
                    partitions=[
                        P(partition_index=0, error_code=ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)
                    ],
                ),
            ]
        ),
    )
    result = talk.outcome(op)["g"]
    assert result[T0] is None and isinstance(result[U0], GroupSubscribedToTopicError)


def test_delete_group_offsets_of_a_missing_group() -> None:
    _, talk, op = start(DeleteGroupOffsets([T0]), coordinators(), ["g"])
    answer_coordinators(talk, 1)
    sent, _ = take(talk, OffsetDeleteRequest)
    talk.reply(sent, OffsetDeleteResponse(error_code=ErrorCode.GROUP_ID_NOT_FOUND))
    assert isinstance(talk.outcome(op)["g"], GroupIdNotFoundError)


@given(
    st.dictionaries(
        st.tuples(st.sampled_from(["a", "b", "ü"]), st.integers(0, 50)),
        st.tuples(st.integers(-1, 2**62), st.text(max_size=20), st.integers(-1, 100)),
        max_size=8,
    ),
    st.sampled_from([5, 7, 8, 9]),
)
def test_committed_offsets_round_trip_through_the_wire(
    entries: dict[tuple[str, int], tuple[int, str, int]], version: int
) -> None:
    parts = [TopicPartition(*k) for k in entries]
    _, talk, op = start(
        ListGroupOffsets(parts, False),
        coordinators(),
        ["g"],
        versions={ApiKey.OFFSET_FETCH: version},
    )
    answer_coordinators(talk, 1)
    sent, _ = take(talk, OffsetFetchRequest)
    response = fetched(version, [(tp, entries[tp][0], 0) for tp in parts])
    for topic in response.groups[0].topics if version >= 8 else response.topics:
        for p in topic.partitions:
            _, metadata, epoch = entries[(topic.name, p.partition_index)]
            p.metadata, p.committed_leader_epoch = metadata, epoch
    talk.reply(sent, response)
    offsets = talk.outcome(op)["g"]
    for tp in parts:
        offset, metadata, epoch = entries[tp]
        expected = (
            None
            if offset < 0
            else OffsetAndMetadata(offset, metadata, epoch if epoch >= 0 else None)
        )
        assert offsets[tp] == expected
