"""KIP-227 fetch sessions: the cases of Java's FetchSessionHandlerTest, and a model test."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.consumer.fetch_data import PartitionFetchData
from krafka.sansio.consumer.fetch_session import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    FetchSessionHandler,
    next_epoch,
)
from krafka.structs import TopicPartition

V = 12  # a session-capable version that names topics


@dataclass
class Part:
    partition_index: int


@dataclass
class Topic:
    topic: str
    partitions: list[Part]
    topic_id: uuid.UUID = field(default_factory=lambda: uuid.UUID(int=0))


@dataclass
class Resp:
    error_code: int = 0
    session_id: int = 0
    responses: list[Topic] = field(default_factory=list)


def answer(session_id: int, *tps: TopicPartition, code: int = 0) -> Resp:
    topics: dict[str, list[Part]] = {}
    for tp in tps:
        topics.setdefault(tp.topic, []).append(Part(tp.partition))
    return Resp(code, session_id, [Topic(t, p) for t, p in topics.items()])


def data(offset: int, max_bytes: int = 100) -> PartitionFetchData:
    return PartitionFetchData(offset, -1, max_bytes)


FOO0, FOO1, BAR0 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0)


def test_full_then_incremental_then_forgotten() -> None:
    h = FetchSessionHandler(1)
    first = h.build({FOO0: data(0), FOO1: data(10)}, version=V)
    assert (first.session_id, first.epoch, first.full) == (0, INITIAL_EPOCH, True)
    assert set(first.to_send) == {FOO0, FOO1}
    assert h.handle_response(answer(123, FOO0, FOO1), V)
    # nothing changed: an empty incremental request at epoch 1
    second = h.build({FOO0: data(0), FOO1: data(10)}, version=V)
    assert (second.session_id, second.epoch, second.full) == (123, 1, False)
    assert second.to_send == {} and second.to_forget == ()
    assert h.handle_response(answer(123), V)
    # one altered, one added, one removed (paused or unassigned)
    third = h.build({FOO0: data(5), BAR0: data(0)}, version=V)
    assert third.epoch == 2
    assert third.to_send == {FOO0: data(5), BAR0: data(0)}
    assert third.to_forget == (FOO1,)
    assert h.handle_response(answer(123, FOO0), V)
    assert dict(h.partitions) == {FOO0: data(5), BAR0: data(0)}


def test_session_id_not_found_starts_a_new_session() -> None:
    h = FetchSessionHandler(1)
    h.build({FOO0: data(0)}, version=V)
    assert h.handle_response(answer(7, FOO0), V)
    h.build({FOO0: data(1)}, version=V)
    assert not h.handle_response(answer(0, code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND), V)
    again = h.build({FOO0: data(1)}, version=V)
    assert (again.session_id, again.epoch, set(again.to_send)) == (0, INITIAL_EPOCH, {FOO0})


def test_invalid_epoch_closes_and_reopens_the_same_session() -> None:
    h = FetchSessionHandler(1)
    h.build({FOO0: data(0)}, version=V)
    assert h.handle_response(answer(7, FOO0), V)
    h.build({FOO0: data(1)}, version=V)
    assert not h.handle_response(answer(7, code=ErrorCode.INVALID_FETCH_SESSION_EPOCH), V)
    again = h.build({FOO0: data(1)}, version=V)
    assert (again.session_id, again.epoch, again.full) == (7, INITIAL_EPOCH, True)


def test_unexpected_partition_in_an_incremental_answer_is_ignored() -> None:
    h = FetchSessionHandler(1)
    h.build({FOO0: data(0)}, version=V)
    assert h.handle_response(answer(7, FOO0), V)
    h.build({FOO0: data(1)}, version=V)
    assert not h.handle_response(answer(7, FOO0, BAR0), V)
    assert h.build({FOO0: data(1)}, version=V).full


def test_sessionless_answers_and_old_versions() -> None:
    h = FetchSessionHandler(1)
    h.build({FOO0: data(0)}, version=V)
    assert h.handle_response(answer(0, FOO0), V)  # the broker keeps no session
    assert h.build({FOO0: data(1)}, version=V).full
    old = FetchSessionHandler(2).build({FOO0: data(0)}, version=6)
    assert (old.session_id, old.epoch, old.full) == (0, FINAL_EPOCH, True)


def test_connection_error_and_close() -> None:
    h = FetchSessionHandler(1)
    h.build({FOO0: data(0)}, version=V)
    assert h.handle_response(answer(9, FOO0), V)
    h.build({FOO0: data(1)}, version=V)
    h.handle_error()
    retry = h.build({FOO0: data(1)}, version=V)
    assert (retry.session_id, retry.epoch) == (9, INITIAL_EPOCH)
    assert h.handle_response(answer(9, FOO0), V)
    closing = h.close_request()
    assert closing is not None and (closing.session_id, closing.epoch) == (9, FINAL_EPOCH)
    assert h.close_request() is None


def test_epochs_wrap_to_one() -> None:
    assert next_epoch(0) == 1
    assert next_epoch(2**31 - 1) == 1
    assert next_epoch(FINAL_EPOCH) == FINAL_EPOCH


def test_topic_id_change_replaces_the_partition() -> None:
    old, new = uuid.uuid4(), uuid.uuid4()
    h2 = FetchSessionHandler(1)
    h2.build({FOO0: data(0)}, version=13, topic_ids={"foo": old})
    response = Resp(0, 5, [Topic("", [Part(0)], old)])
    assert h2.handle_response(response, 13)
    replaced = h2.build({FOO0: data(0)}, version=13, topic_ids={"foo": new})
    assert replaced.to_replace == (FOO0,) and FOO0 in replaced.to_send


class BrokerSession:
    """A model broker: what a session holds after each request it accepted."""

    def __init__(self) -> None:
        self.sessions: dict[int, dict[TopicPartition, PartitionFetchData]] = {}
        self.next_id = 100

    def handle(self, request: Any, lose: bool) -> Resp:
        if request.epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            self.sessions.pop(request.session_id, None)
            session_id, self.next_id = self.next_id, self.next_id + 1
            self.sessions[session_id] = dict(request.to_send)
            return answer(session_id, *request.to_send)
        held = self.sessions.get(request.session_id)
        if held is None or lose:
            self.sessions.pop(request.session_id, None)
            return Resp(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        for tp in request.to_forget:
            held.pop(tp, None)
        held.update(request.to_send)
        return answer(request.session_id, *request.to_send)


@given(
    st.lists(
        st.tuples(
            st.dictionaries(
                st.sampled_from([FOO0, FOO1, BAR0]), st.integers(0, 3).map(data), min_size=0
            ),
            st.booleans(),
        ),
        max_size=30,
    )
)
def test_model_the_broker_holds_what_the_client_believes(steps: list[Any]) -> None:
    h, broker = FetchSessionHandler(1), BrokerSession()
    for wanted, lose in steps:
        request = h.build(wanted, version=V)
        response = broker.handle(request, lose and not request.full)
        if h.handle_response(response, V):
            assert broker.sessions[response.session_id] == dict(h.partitions) == wanted
