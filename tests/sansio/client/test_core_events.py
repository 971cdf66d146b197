"""Which machine an event came from: `ClientCore.step` wraps what each machine emits in
`MachineEvent(machine, event)` (a client runs a consumer, its telemetry and admin operations in
one core), keeps its own events bare, and names a machine that raised. Scripted, no broker."""

from __future__ import annotations

from typing import Any

from _requester import Requester

from krafka.protocol import ApiKey
from krafka.protocol.messages import DescribeClusterResponse, MetadataRequest
from krafka.sansio.actions import AnyBroker, Completed, Failed, RefreshMetadata, SendRequest
from krafka.sansio.admin.cluster import DescribeCluster
from krafka.sansio.admin.operation import AdminOperation
from krafka.sansio.admin.routing import ToAnyBroker
from krafka.sansio.admin.topics import CLUSTER
from krafka.sansio.client import (
    ClientConfig,
    ClientCore,
    MachineEvent,
    MachineStopped,
    MetadataFailed,
    MetadataUpdated,
    RequestDone,
)
from krafka.testing.scripted_cluster import ScriptedCluster, metadata_response, refused

B1 = ("b1", 9092)
BROKERS = {1: B1}


def started() -> tuple[ScriptedCluster, Requester]:
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092"), now=0.0))
    requester = Requester()
    cluster.core.add(requester)
    cluster.answer(cluster.take(ApiKey.METADATA, B1), metadata_response(BROKERS, {"t": [1]}))
    return cluster, requester


def describe() -> AdminOperation[Any]:
    return AdminOperation(DescribeCluster(False), ToAnyBroker(), [CLUSTER], timeout=30.0)


def from_machines(events: list[Any]) -> list[tuple[Any, Any]]:
    return [(e.machine, e.event) for e in events if isinstance(e, MachineEvent)]


def test_each_machine_event_names_the_machine_that_emitted_it() -> None:
    cluster, requester = started()
    requester.ask("tick")
    admin = describe()
    cluster.core.add(admin)
    op = admin.start(cluster.now)
    asked = cluster.take(ApiKey.DESCRIBE_CLUSTER)
    cluster.answer(asked, DescribeClusterResponse(cluster_id="c", controller_id=1))
    got = from_machines(cluster.events)
    assert (requester, "tick") in got
    ((machine, outcome),) = [(m, e) for m, e in got if isinstance(e, Completed)]
    assert machine is admin and outcome.op == op


def test_the_cores_own_events_stay_bare() -> None:
    cluster, _ = started()
    sent = SendRequest(AnyBroker(), MetadataRequest(topics=[]))
    cluster.core.send(sent, cluster.now)
    cluster.answer(cluster.take(ApiKey.METADATA), metadata_response(BROKERS, {}))
    assert any(isinstance(e, RequestDone) and e.sent is sent for e in cluster.events)
    assert any(isinstance(e, MetadataUpdated) for e in cluster.events)
    assert from_machines(cluster.events) == []


def test_two_machines_interleaved_keep_their_own_events_in_order() -> None:
    cluster, requester = started()
    other = Requester()
    cluster.core.add(other)
    requester.ask("a1")
    other.ask("b1")
    requester.ask("a2")
    cluster.step()
    got = from_machines(cluster.events)
    assert [e for m, e in got if m is requester] == ["a1", "a2"]
    assert [e for m, e in got if m is other] == ["b1"]


class Raising(Requester):
    """Raises on the answer to its request (a bug, or input it was not written for)."""

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        raise ValueError("machine bug")


def test_a_machine_that_raises_is_named_and_the_others_run_on() -> None:
    cluster, requester = started()
    broken = Raising()
    cluster.core.add(broken)
    broken.ask(SendRequest(AnyBroker(), MetadataRequest(topics=[])))
    cluster.answer(cluster.take(ApiKey.METADATA), metadata_response(BROKERS, {}))
    ((stopped,),) = [[e for e in cluster.events if isinstance(e, MachineStopped)]]
    assert stopped.machine is broken and isinstance(stopped.error.__cause__, ValueError)
    broken.ask("after")
    requester.ask("still running")
    cluster.step()
    assert from_machines(cluster.events) == [(requester, "still running")]


def test_a_failed_metadata_round_tells_the_machines_too() -> None:
    """A machine still missing metadata looks again and asks again (the refresh backoff spaces
    the rounds): without this it would wait for the next age refresh."""
    cluster, requester = started()
    before = requester.updates
    cluster.refuse[B1] = refused(B1)
    round_ = cluster.core.refresh_metadata(["t"], cluster.now)
    asked = cluster.take(ApiKey.METADATA)
    cluster.drop(asked.conn_id)
    for _ in range(50):
        if any(isinstance(e, MetadataFailed) and e.round == round_ for e in cluster.events):
            break
        cluster.advance_to_deadline()
    assert any(isinstance(e, MetadataFailed) and e.round == round_ for e in cluster.events)
    assert requester.updates > before


class AlwaysAsking(Requester):
    """Asks for metadata at every step (as a consumer engine waiting for a leader does)."""

    def next_actions(self, now: float) -> list[Any]:
        return [*super().next_actions(now), RefreshMetadata(frozenset({"t"}))]


def test_a_machine_asking_for_metadata_at_every_step_does_not_keep_the_step_running() -> None:
    cluster, _ = started()
    asking = AlwaysAsking()
    cluster.core.add(asking)
    for _ in range(5):
        cluster.advance(0.01)  # each returns: no step runs the machines for ever
        if cluster.pending(ApiKey.METADATA):
            asked = cluster.take(ApiKey.METADATA)
            cluster.answer(asked, metadata_response(BROKERS, {"t": [1]}))
    assert len([a for a in cluster.asked if a.sent.api_key == ApiKey.METADATA]) <= 1


def test_outcomes_of_failed_operations_name_their_machine() -> None:
    cluster, _ = started()
    admin = describe()
    cluster.core.add(admin)
    op = admin.start(cluster.now)
    cluster.core.close(cluster.now)
    cluster.step()
    got = [(m, e) for m, e in from_machines(cluster.events) if isinstance(e, Failed)]
    assert [(m, e.op) for m, e in got] == [(admin, op)]
