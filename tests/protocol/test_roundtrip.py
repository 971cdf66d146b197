"""Every message x every valid version: hypothesis values round-trip byte-exactly.

Also differential: the compiled fast path and the reference interpreter agree on every encoding
and decoding.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krafka.protocol import REQUESTS, RESPONSES, RequestHeader, ResponseHeader, _interp
from krafka.protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from krafka.protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from krafka.protocol.schema import ApiMessage

from .strategies import struct_strategy

ALL: list[type[ApiMessage]] = [
    *REQUESTS.values(),
    *RESPONSES.values(),
    RequestHeader,
    ResponseHeader,
    ConsumerProtocolSubscription,
    ConsumerProtocolAssignment,
]


def _check(cls: type[ApiMessage], version: int, obj: Any) -> None:
    data = obj.encode(version)
    assert _interp.encode(obj, version) == data
    back = cls.decode(data, version)
    assert back == obj
    assert back.encode(version) == data
    ref, end = _interp.decode(cls, memoryview(data), version, 0, True)
    assert ref == obj and end == len(data)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_round_trip_every_version(cls: type[ApiMessage], data: st.DataObject) -> None:
    for version in range(cls.MIN_VERSION, cls.MAX_VERSION + 1):
        obj = data.draw(struct_strategy(cls, version), label=f"v{version}")
        _check(cls, version, obj)


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_defaults_round_trip(cls: type[ApiMessage]) -> None:
    for version in range(cls.MIN_VERSION, cls.MAX_VERSION + 1):
        _check(cls, version, cls())
