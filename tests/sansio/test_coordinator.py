"""CoordinatorLink: finding a coordinator, forgetting it when it moves, backing off."""

from __future__ import annotations

import pytest

from krafka.errors import GroupAuthorizationFailedError, KafkaConnectionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import FindCoordinatorRequest, FindCoordinatorResponse
from krafka.sansio.actions import AnyBroker, Broker, Versioned
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.coordinator import (
    CoordinatorDisposition,
    CoordinatorLink,
    CoordinatorState,
    CoordinatorType,
)

POLICY = BackoffPolicy(initial=0.1, maximum=1.0, jitter=0.0, max_retries=None)


def answer(link: CoordinatorLink, version: int, now: float = 0.0, **fields: object) -> None:
    sent = link.lookup(now)
    assert sent is not None and sent.target == AnyBroker()
    assert isinstance(sent.request, Versioned)
    request = sent.request.build(version)
    assert isinstance(request, FindCoordinatorRequest)
    if version >= 4:
        assert request.coordinator_keys == [link.key] and request.key_type == link.key_type
        entry = FindCoordinatorResponse.Coordinator(key=link.key, **fields)  # type: ignore[arg-type]
        response = FindCoordinatorResponse(coordinators=[entry])
    else:
        assert request.key == link.key
        response = FindCoordinatorResponse(**fields)  # type: ignore[arg-type]
    wire = FindCoordinatorResponse.decode(response.encode(version), version)
    link.on_response(sent, wire, now)


@pytest.mark.parametrize("version", [1, 3, 4, 6])
def test_lookup_at_every_version_shape(version: int) -> None:
    link = CoordinatorLink("g", CoordinatorType.GROUP, POLICY)
    assert link.target() is None
    answer(link, version, node_id=2, host="b2", port=9092)
    assert link.target() == Broker(2, "b2", 9092)
    assert link.lookup(1.0) is None  # known: nothing to ask


def test_one_lookup_at_a_time() -> None:
    link = CoordinatorLink("tx", CoordinatorType.TRANSACTION, POLICY)
    assert link.lookup(0.0) is not None
    assert link.lookup(0.0) is None and link.state is CoordinatorState.LOOKING_UP


def test_a_moved_coordinator_is_looked_up_again() -> None:
    link = CoordinatorLink("g", CoordinatorType.GROUP, POLICY)
    answer(link, 4, node_id=1, host="b1", port=1)
    assert link.on_error_code(ErrorCode.NOT_COORDINATOR, 1.0) is CoordinatorDisposition.RETRY_NOW
    assert link.target() is None
    answer(link, 4, now=1.0, node_id=3, host="b3", port=3)
    assert link.target() == Broker(3, "b3", 3)


def test_loading_and_other_codes_keep_the_coordinator() -> None:
    link = CoordinatorLink("g", CoordinatorType.GROUP, POLICY)
    answer(link, 4, node_id=1, host="b1", port=1)
    loading = link.on_error_code(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, 0.0)
    assert loading is CoordinatorDisposition.RETRY_LATER
    other = link.on_error_code(ErrorCode.ILLEGAL_GENERATION, 0.0)
    assert other is CoordinatorDisposition.NOT_COORDINATOR_ERROR
    assert link.target() == Broker(1, "b1", 1)


def test_failed_lookups_back_off_exponentially() -> None:
    link = CoordinatorLink("g", CoordinatorType.GROUP, POLICY)
    answer(link, 4, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
    assert link.lookup(0.05) is None and link.next_deadline() == pytest.approx(0.1)
    sent = link.lookup(0.1)
    assert sent is not None
    link.on_failure(sent, KafkaConnectionError("reset"), 0.1)
    assert link.next_deadline() == pytest.approx(0.3)
    assert link.fatal_error() is None
    answer(link, 4, now=0.31, node_id=1, host="b1", port=1)
    assert link.next_deadline() is None and link.failures == 0


def test_an_authorization_failure_is_fatal() -> None:
    link = CoordinatorLink("g", CoordinatorType.GROUP, POLICY)
    answer(link, 4, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message="nope")
    error = link.fatal_error()
    assert isinstance(error, GroupAuthorizationFailedError)
    assert "FindCoordinator(group 'g')" in str(error) and "nope" in str(error)


def test_a_lost_connection_forgets_the_coordinator() -> None:
    link = CoordinatorLink("g", CoordinatorType.GROUP, POLICY)
    answer(link, 4, node_id=1, host="b1", port=1)
    link.on_connection_failure()
    assert link.target() is None and link.lookup(0.0) is not None
