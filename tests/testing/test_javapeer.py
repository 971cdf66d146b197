"""`krafka.testing.javapeer`: the Java peer's failures reach the test as `JavaPeerError`s naming
the cause, and a peer never outlives its `timeout` (no cluster needed)."""

from __future__ import annotations

import time

import pytest

from krafka.testing.javapeer import (
    JavaPeer,
    JavaPeerError,
    OutgoingRecord,
    PeerEvent,
    Role,
    java_produce,
)


def test_outgoing_records_and_events_round_trip_bytes_as_base64() -> None:
    line = OutgoingRecord(b"\x00v", key=None, headers=[("h", None), ("h", b"")], partition=1)
    assert line.to_json() == {
        "value": "AHY=",
        "key": None,
        "headers": [["h", None], ["h", ""]],
        "partition": 1,
    }
    event = PeerEvent.parse(
        '{"event":"record","topic":"t","partition":0,"offset":5,"timestamp":7,'
        '"timestamp_type":"CreateTime","key":null,"value":"AHY=","headers":[["h",null]]}'
    )
    record = event.record()
    assert (record.key, record.value, record.headers, record.offset) == (
        None,
        b"\x00v",
        (("h", None),),
        5,
    )


def test_the_java_clients_errors_are_reported() -> None:
    with pytest.raises(JavaPeerError, match=r"ConfigException.*brotli"):
        java_produce("127.0.0.1:1", "t", [OutgoingRecord(b"v")], codec="brotli", timeout=30)


def test_the_peer_ends_itself_after_its_timeout() -> None:
    started = time.monotonic()
    peer = JavaPeer(Role.GROUP_MEMBER, "127.0.0.1:1", topics=["t"], group="g", timeout=2)
    with pytest.raises(JavaPeerError, match="Timeout"), peer:
        peer.expect("never", timeout=30)
    assert time.monotonic() - started < 20
