"""ConsumerProtocolSubscription / Assignment bytes, against Java's `ConsumerProtocolTest`
(ported cases) plus round trips, future versions and hostile bytes."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka.errors import KrafkaError, RemoteProtocolError
from krafka.sansio.group.classic.assignors import NO_GENERATION, Assignment, Subscription
from krafka.sansio.group.classic.consumer_protocol import (
    LATEST_VERSION,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from krafka.structs import TopicPartition

TP1, TP2 = TopicPartition("foo", 1), TopicPartition("bar", 2)
FULL = Subscription(
    ("foo", "bar"), b"hello", (TopicPartition("foo", 0), TopicPartition("bar", 0)), 1, "rack-a"
)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


@pytest.mark.parametrize("version", range(LATEST_VERSION + 1))
def test_subscription_every_version(version: int) -> None:
    parsed = decode_subscription(encode_subscription(FULL, version))
    assert set(parsed.topics) == {"foo", "bar"}
    assert parsed.user_data == b"hello"
    assert parsed.group_instance_id is None
    owned = set(FULL.owned_partitions) if version >= 1 else set()
    assert set(parsed.owned_partitions) == owned
    assert parsed.generation_id == (1 if version >= 2 else NO_GENERATION)
    assert parsed.rack_id == ("rack-a" if version >= 3 else None)


@pytest.mark.parametrize("version", range(LATEST_VERSION + 1))
def test_assignment_every_version(version: int) -> None:
    parsed = decode_assignment(encode_assignment(Assignment((TP1, TP2), b"hello"), version))
    assert set(parsed.partitions) == {TP1, TP2}
    assert parsed.user_data == b"hello"


def test_empty_and_null_user_data() -> None:
    empty = decode_subscription(encode_subscription(Subscription(("foo", "bar"), b"")))
    assert empty.user_data == b""
    assert (empty.generation_id, empty.rack_id) == (NO_GENERATION, None)
    assert decode_subscription(encode_subscription(Subscription(("foo",)))).user_data is None
    assert decode_assignment(encode_assignment(Assignment((TP1,), b""))).user_data == b""
    assert decode_assignment(encode_assignment(Assignment((TP1,)))).user_data is None


def test_group_instance_id_comes_from_join_group() -> None:
    data = encode_subscription(Subscription(("foo",), b""))
    assert decode_subscription(data, "instance.id").group_instance_id == "instance.id"


def test_topics_and_owned_partitions_are_written_sorted() -> None:
    """serializeSubscriptionShouldOrderTopics / ...OrderOwnedPartitions."""
    assert encode_subscription(Subscription(("foo", "bar"), None, (TP1, TP2))) == (
        encode_subscription(Subscription(("bar", "foo"), None, (TP2, TP1)))
    )


def test_old_reader_of_a_new_subscription() -> None:
    """deserializeNewSubscriptionWithOldVersion: v3 bytes read as v0 give the v0 fields."""
    data = encode_subscription(Subscription(("foo", "bar"), None, (TP2,), 1, "rack-a"))
    v0 = b"\x00\x00" + data[2:]
    parsed = decode_subscription(v0)
    assert set(parsed.topics) == {"foo", "bar"}
    assert (parsed.user_data, parsed.owned_partitions, parsed.generation_id, parsed.rack_id) == (
        None,
        (),
        NO_GENERATION,
        None,
    )


def test_future_subscription_version_is_read_with_ours() -> None:
    """deserializeFutureSubscriptionVersion: version 100 with an extra trailing field."""
    data = (
        struct.pack(">h", 100)
        + struct.pack(">i", 1)
        + _string("topic")
        + struct.pack(">i", 0)
        + struct.pack(">i", 1)
        + _string("bar")
        + struct.pack(">ii", 1, 2)
        + struct.pack(">i", 1)
        + _string("rack-a")
        + _string("bar")
    )
    parsed = decode_subscription(data, "instance.id")
    assert parsed == Subscription(
        ("topic",), b"", (TopicPartition("bar", 2),), 1, "rack-a", "instance.id"
    )


def test_future_assignment_version_is_read_with_ours() -> None:
    data = (
        struct.pack(">h", 100)
        + struct.pack(">i", 1)
        + _string("foo")
        + struct.pack(">ii", 1, 1)
        + struct.pack(">i", 0)
        + _string("bar")
    )
    assert decode_assignment(data) == Assignment((TP1,), b"")


def test_assignment_groups_partitions_by_topic_in_first_seen_order() -> None:
    data = encode_assignment(Assignment((TP1, TP2, TopicPartition("foo", 0))))
    assert decode_assignment(data).partitions == (TP1, TopicPartition("foo", 0), TP2)


def test_unknown_encode_version_is_refused() -> None:
    with pytest.raises(ValueError, match="version 4"):
        encode_subscription(FULL, 4)
    with pytest.raises(ValueError, match="version -1"):
        encode_assignment(Assignment(()), -1)


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"", "no version header"),
        (b"\x00", "no version header"),
        (b"\xff\xff\x00\x00\x00\x00", "unsupported version -1"),
        (b"\x00\x00", "topics"),
        (b"\x00\x00\x7f\xff\xff\xff", "topics"),
        (b"\x00\x00\x00\x00\x00\x01\x00\x05ab", "topics"),
        (b"\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x05", "owned_partitions"),
    ],
)
def test_hostile_subscription_bytes_name_the_field(data: bytes, what: str) -> None:
    with pytest.raises(RemoteProtocolError, match=what):
        decode_subscription(data)


def test_empty_assignment_bytes_are_an_error_as_in_java() -> None:
    with pytest.raises(RemoteProtocolError, match="assignment of 0 bytes"):
        decode_assignment(b"")


names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
partitions = st.lists(
    st.builds(TopicPartition, names, st.integers(0, 2**31 - 1)), max_size=8, unique=True
)
subscriptions = st.builds(
    Subscription,
    st.lists(names, max_size=5, unique=True).map(tuple),
    st.none() | st.binary(max_size=20),
    partitions.map(tuple),
    st.integers(NO_GENERATION, 2**31 - 1),
    st.none() | names.filter(bool),
)


@settings(max_examples=200, deadline=None)
@given(subscriptions)
def test_subscription_round_trip(subscription: Subscription) -> None:
    parsed = decode_subscription(encode_subscription(subscription))
    assert parsed.topics == tuple(sorted(subscription.topics))
    assert parsed.owned_partitions == tuple(sorted(subscription.owned_partitions))
    assert (parsed.user_data, parsed.generation_id, parsed.rack_id) == (
        subscription.user_data,
        subscription.generation_id,
        subscription.rack_id,
    )


@settings(max_examples=200, deadline=None)
@given(partitions, st.none() | st.binary(max_size=20))
def test_assignment_round_trip(tps: list[TopicPartition], user_data: bytes | None) -> None:
    parsed = decode_assignment(encode_assignment(Assignment(tuple(tps), user_data)))
    assert sorted(parsed.partitions) == sorted(tps)
    assert parsed.user_data == user_data


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_hostile_bytes_raise_krafka_errors_only(data: bytes) -> None:
    for decode in (decode_subscription, decode_assignment):
        with contextlib.suppress(KrafkaError):
            decode(data)


@settings(max_examples=200, deadline=None)
@given(subscriptions, st.data())
def test_truncated_or_mutated_subscriptions_raise_krafka_errors_only(
    subscription: Subscription, data: st.DataObject
) -> None:
    encoded = bytearray(encode_subscription(subscription))
    cut = data.draw(st.integers(0, len(encoded)))
    if encoded:
        index = data.draw(st.integers(0, len(encoded) - 1))
        encoded[index] = data.draw(st.integers(0, 255))
    with contextlib.suppress(KrafkaError):
        decode_subscription(bytes(encoded[:cut]))
