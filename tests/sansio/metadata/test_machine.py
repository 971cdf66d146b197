"""`MetadataMachine`: when it refreshes (age, request, stale errors), its backoff, the rounds
over the known brokers and KIP-899 rebootstrap, driven by hand without a broker."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from krafka.errors import AuthenticationError, KafkaConnectionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import MetadataRequest
from krafka.sansio.actions import Broker, SendRequest
from krafka.sansio.metadata import (
    BOOTSTRAP_NODE,
    MetadataConfig,
    MetadataFailed,
    MetadataMachine,
    MetadataUpdated,
    Rebootstrapped,
)
from krafka.testing.scripted_cluster import metadata_response

BOOT = [("boot1", 9092), ("boot2", 9092)]
BROKERS = {1: ("b1", 9092), 2: ("b2", 9092)}
#: KIP-899's top-level error (Metadata v13+, newer than the schemas krafka is generated from).
REBOOTSTRAP = SimpleNamespace(error_code=ErrorCode.REBOOTSTRAP_REQUIRED, brokers=[], topics=[])


def machine(**config: Any) -> MetadataMachine:
    return MetadataMachine(BOOT, MetadataConfig(**config), now=0.0, rand=lambda: 0.0)


def sends(actions: list[Any]) -> list[SendRequest[Any]]:
    return [a for a in actions if isinstance(a, SendRequest)]


def only_send(m: MetadataMachine, now: float) -> SendRequest[Any]:
    (sent,) = sends(m.next_actions(now))
    assert isinstance(sent.request, MetadataRequest)
    return sent


def answered(m: MetadataMachine, now: float, **topics: list[int]) -> list[Any]:
    sent = only_send(m, now)
    m.on_response(sent, metadata_response(BROKERS, topics), now)
    return m.next_actions(now)


def test_the_first_round_asks_the_bootstrap_servers_in_order_and_names_every_failure() -> None:
    m = machine()
    first = only_send(m, 0.0)
    assert first.target == Broker(BOOTSTRAP_NODE, "boot1", 9092)
    m.on_failure(first, KafkaConnectionError("refused"), 0.1)
    second = only_send(m, 0.1)
    assert second.target == Broker(BOOTSTRAP_NODE, "boot2", 9092)
    m.on_failure(second, KafkaConnectionError("timed out"), 0.2)
    (failed,) = m.next_actions(0.2)
    assert isinstance(failed, MetadataFailed) and failed.round == 1
    assert "boot1:9092: refused" in str(failed.error) and "boot2:9092" in str(failed.error)


def test_an_error_all_brokers_share_keeps_its_kind() -> None:
    m = MetadataMachine(BOOT[:1], now=0.0)
    m.on_failure(only_send(m, 0.0), AuthenticationError("bad password"), 0.0)
    (failed,) = m.next_actions(0.0)
    assert isinstance(failed, MetadataFailed)
    assert isinstance(failed.error, AuthenticationError)


def test_an_answer_is_applied_and_announced_once() -> None:
    m = machine()
    assert answered(m, 0.0, t=[1, 2]) == [MetadataUpdated(1)]
    assert m.cluster.leader("t", 1) == 2
    assert m.next_actions(0.0) == []


def test_it_refreshes_on_age() -> None:
    m = machine(max_age=10.0)
    answered(m, 0.0)
    assert m.next_deadline() == 10.0
    assert m.next_actions(9.9) == []
    sent = only_send(m, 10.0)
    assert sent.target.node_id in BROKERS  # type: ignore[union-attr]
    assert m.next_deadline() is None  # waiting for the answer, not a timer


def test_a_requested_new_topic_is_asked_for_at_once_whatever_the_backoff() -> None:
    m = machine(refresh_backoff=5.0)
    answered(m, 0.0)
    round_ = m.request(["new"], 0.1)
    assert m.next_deadline() == 0.1
    sent = only_send(m, 0.1)
    assert [t.name for t in sent.request.topics] == ["new"]  # type: ignore[union-attr]
    m.on_response(sent, metadata_response(BROKERS, {"new": [1]}), 0.2)
    assert m.next_actions(0.2) == [MetadataUpdated(round_)]


def test_a_request_already_covered_by_a_round_under_way_shares_it() -> None:
    m = machine()
    m.request(["t"], 0.0)
    sent = only_send(m, 0.0)
    assert m.request(["t"], 0.0) == 1
    m.on_response(sent, metadata_response(BROKERS, {"t": [1]}), 0.0)
    assert m.next_actions(0.0) == [MetadataUpdated(1)]


def test_a_stale_metadata_error_refreshes_after_the_backoff() -> None:
    m = machine(refresh_backoff=0.5, max_age=300.0)
    m.request(["t"], 0.0)
    answered(m, 0.0, t=[1, 2])
    m.on_error(ErrorCode.NOT_LEADER_OR_FOLLOWER, "t")
    assert m.next_deadline() == 0.5
    assert m.next_actions(0.4) == []
    only_send(m, 0.5)


def test_leaderless_partitions_double_the_backoff_up_to_its_maximum() -> None:
    m = machine(refresh_backoff=0.1, refresh_backoff_max=0.4)
    m.request(["t"], 0.0)
    now, gaps = 0.0, []
    for _ in range(5):
        answered(m, now, t=[-1])
        m.on_error(ErrorCode.LEADER_NOT_AVAILABLE, "t")
        deadline = m.next_deadline()
        assert deadline is not None
        gaps.append(round(deadline - now, 6))
        now = deadline
    assert gaps == [0.1, 0.2, 0.4, 0.4, 0.4]


def test_rebootstrap_required_drops_the_view_and_asks_the_bootstrap_servers() -> None:
    m = machine()
    answered(m, 0.0, t=[1])
    m.request(["u"], 1.0)
    sent = only_send(m, 1.0)
    m.on_response(sent, REBOOTSTRAP, 1.0)
    actions = m.next_actions(1.0)
    assert Rebootstrapped((("b1", 9092), ("b2", 9092))) in actions
    (again,) = sends(actions)
    assert again.target == Broker(BOOTSTRAP_NODE, "boot1", 9092)
    assert m.cluster.brokers == {}
    m.on_response(again, metadata_response(BROKERS, {"u": [2]}), 1.1)
    assert m.next_actions(1.1) == [MetadataUpdated(2)]


def test_no_broker_for_the_trigger_time_rebootstraps() -> None:
    m = machine(rebootstrap_trigger=30.0, refresh_backoff=1.0, refresh_backoff_max=1.0)
    answered(m, 0.0)
    now, rebooted = 1.0, []
    while now < 40.0 and not rebooted:
        m.request(None, now)
        actions = m.next_actions(now)
        rebooted = [a for a in actions if isinstance(a, Rebootstrapped)]
        for sent in sends(actions):
            while sent is not None:
                m.on_failure(sent, KafkaConnectionError("down"), now)
                more = sends(m.next_actions(now))
                sent = more[0] if more else None
        now += 1.0
    assert rebooted and 30.0 <= now <= 33.0
    assert m.cluster.brokers == {}


def test_without_rebootstrap_the_known_brokers_stay() -> None:
    m = machine(rebootstrap=False)
    answered(m, 0.0)
    sent = only_send(m, m.request(["u"], 1.0) and 1.0)
    m.on_response(sent, REBOOTSTRAP, 1.0)
    assert not [a for a in m.next_actions(1.0) if isinstance(a, Rebootstrapped)]
    assert set(m.cluster.brokers) == {1, 2}


def test_a_round_skips_brokers_in_reconnect_backoff() -> None:
    waits = {("b1", 9092): 0.0, ("b2", 9092): 4.0}
    m = MetadataMachine(
        BOOT, now=0.0, rand=lambda: 0.0, reconnect_wait=lambda a, _: waits.get(a, 0.0)
    )
    answered(m, 0.0)
    m.request(["u"], 1.0)
    sent = only_send(m, 1.0)
    assert sent.target == Broker(1, "b1", 9092)
    m.on_failure(sent, KafkaConnectionError("down"), 1.0)
    (failed,) = m.next_actions(1.0)
    assert isinstance(failed, MetadataFailed) and "b2" not in str(failed.error)


def test_with_every_broker_in_backoff_a_round_asks_only_the_one_free_soonest() -> None:
    waits = {("b1", 9092): 9.0, ("b2", 9092): 2.0}
    m = MetadataMachine(
        BOOT, now=0.0, rand=lambda: 0.0, reconnect_wait=lambda a, _: waits.get(a, 0.0)
    )
    answered(m, 0.0)
    m.request(["u"], 1.0)
    sent = only_send(m, 1.0)
    assert sent.target == Broker(2, "b2", 9092)
    m.on_failure(sent, KafkaConnectionError("down"), 3.0)
    assert isinstance(m.next_actions(3.0)[0], MetadataFailed)


def test_a_bounded_round_gives_each_address_an_even_share_of_the_time_left() -> None:
    boot = [("boot1", 9092), ("boot2", 9092), ("boot3", 9092)]
    m = MetadataMachine(boot, now=0.0, request_timeout=30.0)
    m.request(None, 0.0, timeout=6.0)
    first = only_send(m, 0.0)
    assert first.timeout == 2.0
    m.on_failure(first, KafkaConnectionError("refused"), 0.0)
    second = only_send(m, 0.0)
    assert second.timeout == 3.0  # the first one left its share unused
    m.on_failure(second, KafkaConnectionError("silent"), 6.0)
    (failed,) = m.next_actions(6.0)  # out of time: boot3 is not asked
    assert isinstance(failed, MetadataFailed) and "boot3" not in str(failed.error)


def test_a_bounded_round_never_gives_an_address_more_than_the_request_timeout() -> None:
    m = MetadataMachine(BOOT[:1], now=0.0, request_timeout=1.0)
    m.request(None, 0.0, timeout=60.0)
    assert only_send(m, 0.0).timeout == 1.0


def test_replaced_bootstrap_servers_are_where_the_next_rebootstrap_starts() -> None:
    m = machine()
    answered(m, 0.0)
    m.update_bootstrap([("new", 9093)])
    assert {b.node_id for b in m.cluster.brokers.values()} == {1, 2}  # still in use
    m.request(["u"], 1.0)
    m.on_response(only_send(m, 1.0), REBOOTSTRAP, 1.0)
    (again,) = sends(m.next_actions(1.0))
    assert again.target == Broker(BOOTSTRAP_NODE, "new", 9093)
