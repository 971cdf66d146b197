"""The share-group member's heartbeats in scripted conversations: what each heartbeat carries,
the assignment it takes, and the error table."""

from __future__ import annotations

import pytest
from _share_scripted import Share, tp

from krafka.errors import GroupMaxSizeReachedError, UnsupportedVersionError
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.group.events import GroupFailed
from krafka.sansio.group.membership.state import MembershipState as S


def joined(*assigned: str) -> Share:
    share = Share()
    share.join(*(assigned or ("a-0", "a-1")))
    return share


def test_join_sends_the_subscription_then_minimal_heartbeats() -> None:
    share = joined()
    assert share.member.assignment() == {tp("a-0"), tp("a-1")}
    assert share.member.state is S.STABLE
    share.talk.advance(5)
    sent, request = share.heartbeat()
    assert request.member_epoch == 1 and request.subscribed_topic_names is None
    share.reply_heartbeat(sent, interval_ms=2000)
    share.talk.step()
    assert not [s for s in share.talk.outbox if s.target.host == "b"]  # no heartbeat yet
    share.talk.advance(2)
    share.heartbeat()


def test_subscription_change_is_sent_with_the_next_heartbeat() -> None:
    share = joined()
    share.machine.subscribe(["a", "b"], share.now)
    share.talk.advance(5)
    _, request = share.heartbeat()
    assert request.subscribed_topic_names == ["a", "b"]


def test_unknown_member_rejoins_with_the_same_id_at_epoch_0() -> None:
    share = joined()
    share.talk.advance(5)
    sent, request = share.heartbeat()
    member_id = request.member_id
    share.reply_heartbeat(sent, code=ErrorCode.UNKNOWN_MEMBER_ID)
    _, request = share.heartbeat()
    assert share.member.assignment() == frozenset()  # lost
    assert request.member_id == member_id and request.member_epoch == 0
    assert request.subscribed_topic_names == ["a"]


def test_fenced_member_epoch_rejoins() -> None:
    share = joined()
    share.talk.advance(5)
    sent, _ = share.heartbeat()
    share.reply_heartbeat(sent, code=ErrorCode.FENCED_MEMBER_EPOCH)
    _, request = share.heartbeat()
    assert request.member_epoch == 0


def test_not_coordinator_is_reported_and_the_member_heartbeats_again() -> None:
    share = joined()
    share.talk.advance(5)
    sent, _ = share.heartbeat()
    share.reply_heartbeat(sent, code=ErrorCode.NOT_COORDINATOR)
    share.coordinator_moved()
    share.heartbeat()
    assert share.member.assignment() == {tp("a-0"), tp("a-1")}


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (ErrorCode.GROUP_MAX_SIZE_REACHED, GroupMaxSizeReachedError),
        (ErrorCode.UNSUPPORTED_VERSION, UnsupportedVersionError),
    ],
)
def test_fatal_errors_fail_the_member(code: int, error: type[Exception]) -> None:
    share = Share()
    share.machine.subscribe(["a"], share.now)
    share.metadata({"a-0": 1})
    share.machine.poll(share.now)
    sent, _ = share.heartbeat()
    share.reply_heartbeat(sent, code=code)
    (failed,) = share.events_of(GroupFailed)
    assert isinstance(failed.error, error)
    assert share.member.state is S.FATAL


def test_a_failed_heartbeat_backs_off() -> None:
    share = Share()
    share.machine.subscribe(["a"], share.now)
    share.machine.poll(share.now)
    sent, _ = share.heartbeat()
    from krafka.errors import KafkaConnectionError

    share.talk.fail(sent, KafkaConnectionError("down"))
    share.talk.expect_nothing()
    share.talk.advance_to_deadline()
    share.heartbeat()
