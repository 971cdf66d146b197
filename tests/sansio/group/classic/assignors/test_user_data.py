"""Java's sticky and cooperative-sticky user data: krafka writes the bytes Java writes and reads
what Java (and hostile peers) send."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka.errors import KrafkaError, RemoteProtocolError
from krafka.sansio.group.classic.assignors import (
    NO_GENERATION,
    CooperativeStickyAssignor,
    StickyAssignor,
    StickyUserData,
    Subscription,
    decode_cooperative_sticky_user_data,
    decode_sticky_user_data,
    encode_cooperative_sticky_user_data,
    encode_sticky_user_data,
)
from krafka.sansio.group.classic.assignors.sticky_assignor import sticky_member_data
from krafka.structs import TopicPartition as TP

#: What Kafka's StickyAssignor.subscriptionUserData returns after onAssignment(partitions, 3)
#: for orders-0, abc-1, orders-5, zeta-2, b-0 (recorded with tools/assignor_oracle).
JAVA_STICKY = bytes.fromhex(
    "0000000400047a657461000000010000000200016200000001000000000003616263000000010000000100"
    "066f726465727300000002000000000000000500000003"
)
JAVA_PARTITIONS = [TP("orders", 0), TP("abc", 1), TP("orders", 5), TP("zeta", 2), TP("b", 0)]


def test_sticky_user_data_bytes_equal_java() -> None:
    assert encode_sticky_user_data(JAVA_PARTITIONS, 3) == JAVA_STICKY
    assert StickyAssignor().subscription_user_data(["orders"], JAVA_PARTITIONS, 3) == JAVA_STICKY
    assert encode_sticky_user_data([], NO_GENERATION) == bytes.fromhex("00000000ffffffff")


def test_sticky_user_data_from_java_decodes() -> None:
    decoded = decode_sticky_user_data(JAVA_STICKY)
    assert decoded.generation == 3
    assert sorted(decoded.previous_assignment) == sorted(JAVA_PARTITIONS)


def test_sticky_v0_user_data_has_no_generation() -> None:
    v0 = struct.pack(">ih", 1, 1) + b"t" + struct.pack(">iii", 2, 0, 1)
    assert decode_sticky_user_data(v0) == StickyUserData((TP("t", 0), TP("t", 1)), None)


def test_cooperative_user_data_bytes_equal_java() -> None:
    assert encode_cooperative_sticky_user_data(7) == bytes.fromhex("00000007")
    assert CooperativeStickyAssignor().subscription_user_data([], [], NO_GENERATION) == (
        bytes.fromhex("ffffffff")
    )
    assert decode_cooperative_sticky_user_data(bytes.fromhex("0000000700")) == 7


def test_sticky_sends_nothing_before_its_first_assignment() -> None:
    assert StickyAssignor().subscription_user_data(["t"], [], NO_GENERATION) is None
    assert StickyAssignor().subscription_user_data(["t"], [], 4) == encode_sticky_user_data([], 4)


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"", "previous_assignment"),
        (b"\xff\xff\xff\xff", "negative length"),
        (b"\x00\x00\x00\x02\x00\x01t", "exceeds"),
        (b"\x00\x00\x00\x01\xff\xff" + b"t" * 10, "negative length"),
        (b"\x00\x00\x00\x01\x00\x01t\x7f\xff\xff\xff", "exceeds"),
    ],
)
def test_hostile_sticky_user_data_is_named(data: bytes, what: str) -> None:
    with pytest.raises(RemoteProtocolError, match=what):
        decode_sticky_user_data(data)


def test_cooperative_user_data_too_short() -> None:
    with pytest.raises(RemoteProtocolError, match="generation needs 4 bytes"):
        decode_cooperative_sticky_user_data(b"\x00\x01")


def test_unreadable_sticky_user_data_means_no_previous_assignment() -> None:
    """As Java: a member whose user data cannot be read owned nothing, generation -1."""
    member = sticky_member_data(Subscription(("t",), b"\x00\x00\x00\x05garbage"))
    assert (member.partitions, member.generation) == ((), NO_GENERATION)
    assert sticky_member_data(Subscription(("t",), b"")).generation is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.builds(TP, st.text(max_size=10), st.integers(-(2**31), 2**31 - 1)),
        max_size=10,
        unique=True,
    ),
    st.integers(-(2**31), 2**31 - 1),
)
def test_sticky_user_data_round_trip(partitions: list[TP], generation: int) -> None:
    decoded = decode_sticky_user_data(encode_sticky_user_data(partitions, generation))
    assert decoded.generation == generation
    assert sorted(decoded.previous_assignment) == sorted(partitions)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=48))
def test_hostile_user_data_raises_krafka_errors_only(data: bytes) -> None:
    for decode in (decode_sticky_user_data, decode_cooperative_sticky_user_data):
        with contextlib.suppress(KrafkaError):
            decode(data)
