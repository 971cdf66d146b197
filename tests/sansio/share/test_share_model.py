"""Model-based test of the share consumer machine against a model share-group cluster: random
applications (either mode, any settlement, commits, polls of any size), lost sessions and lost
connections. Whatever happens, no record is settled twice or without being acquired, GAPs only
cover offsets without records, everything ends settled, and closing leaves nothing acquired."""

from __future__ import annotations

from _model_share_broker import ModelCluster
from _share_scripted import IDS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krafka.errors import IllegalStateError, KafkaConnectionError
from krafka.protocol import ApiKey
from krafka.sansio.actions import Completed, Failed, SendRequest
from krafka.sansio.share import AcknowledgeType, ShareConsumerMachine, ShareFetchConfig, ShareMember
from krafka.sansio.share.inflight import AcknowledgementMode
from krafka.structs import TopicPartition
from krafka.testing.conversation import Conversation

LEADERS = {TopicPartition("a", 0): 1, TopicPartition("a", 1): 2, TopicPartition("b", 0): 1}
CHOICES = ("poll", "poll", "poll", "commit", "lose_session", "drop_connection", "tick")
KINDS = [
    AcknowledgeType.ACCEPT,
    AcknowledgeType.ACCEPT,
    AcknowledgeType.RELEASE,
    AcknowledgeType.REJECT,
]


class Harness:
    def __init__(self, mode: AcknowledgementMode, max_poll: int) -> None:
        self.cluster = ModelCluster(dict(LEADERS))
        member = ShareMember("sg", rand=lambda: 0.5)
        config = ShareFetchConfig(acknowledgement_mode=mode, max_poll_records=max_poll)
        self.machine = ShareConsumerMachine("sg", config, member)
        self.talk = Conversation(
            self.machine, versions={ApiKey.SHARE_FETCH: 1, ApiKey.SHARE_ACKNOWLEDGE: 1}
        )
        self.machine.subscribe(["a", "b"], 0.0)
        self.machine.update_metadata(IDS, LEADERS, 0.0)
        self.drop_next = False

    def pump(self, rounds: int = 6) -> None:
        """Answer everything the machine asks, a few rounds deep."""
        for _ in range(rounds):
            self.talk.step()
            if not self.talk.outbox:
                return
            outbox, self.talk.outbox = self.talk.outbox, []
            for sent in outbox:
                self.answer(sent)

    def answer(self, sent: SendRequest[object]) -> None:
        request = self.talk.request(sent)
        node = getattr(sent.target, "node_id", 1)
        if self.drop_next and getattr(sent.target, "host", "b") is None:  # a leader's connection
            self.drop_next = False
            self.talk.fail(sent, KafkaConnectionError("connection lost"))
            self.cluster.sessions.pop(node, None)  # the broker closes it too
            self.cluster.release_node(node)
            return
        self.talk.reply(sent, self.cluster.answer(node, request))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from(list(AcknowledgementMode)),
    max_poll=st.integers(1, 6),
    script=st.lists(
        st.tuples(st.sampled_from(CHOICES), st.lists(st.sampled_from(KINDS), max_size=8)),
        max_size=30,
    ),
)
def test_no_record_is_settled_twice_and_everything_ends_settled(
    mode: AcknowledgementMode, max_poll: int, script: list[tuple[str, list[AcknowledgeType]]]
) -> None:
    h = Harness(mode, max_poll)
    h.machine.poll(h.talk.now)
    h.pump()
    for choice, kinds in script:
        if choice == "poll":
            records = poll(h, kinds)
            for record in records:
                assert record.value is not None and record.delivery_count >= 1
        elif choice == "commit":
            h.machine.commit(h.talk.now)
        elif choice == "lose_session":
            h.cluster.lose_next_session = True
        elif choice == "drop_connection":
            h.drop_next = True
        else:
            h.talk.advance(1.0)
        h.pump()
        assert h.cluster.settled_twice == 0 and h.cluster.unknown_settlements == 0
    # the application then accepts everything it is given until nothing is left
    h.drop_next = h.cluster.lose_next_session = False
    for _ in range(60):
        poll(h, [AcknowledgeType.ACCEPT])
        h.talk.advance(0.5)
        h.pump()
        if h.cluster.finished():
            break
    assert h.cluster.finished(), [
        (tp, [r.state.name for r in recs]) for tp, recs in h.cluster.state.items()
    ]
    assert h.cluster.settled_twice == 0 and h.cluster.unknown_settlements == 0
    op = h.machine.close(h.talk.now)
    for _ in range(10):
        h.pump()
        if op in h.talk.outcomes:
            break
    assert isinstance(h.talk.outcomes.get(op), Completed | Failed)
    assert h.cluster.acquired() == 0


def poll(h: Harness, kinds: list[AcknowledgeType]) -> list[object]:
    """A poll, then (explicit mode) a settlement for every record, drawn from `kinds`."""
    try:
        records = h.machine.poll(h.talk.now)
    except IllegalStateError:
        raise AssertionError("explicit mode: the model settles every record it is given") from None
    except Exception:  # a reported decode error: poll again
        return []
    if h.machine.config.acknowledgement_mode is AcknowledgementMode.EXPLICIT:
        for index, record in enumerate(records):
            kind = kinds[index % len(kinds)] if kinds else AcknowledgeType.ACCEPT
            h.machine.acknowledge(
                TopicPartition(record.topic, record.partition), record.offset, kind
            )
    return records
