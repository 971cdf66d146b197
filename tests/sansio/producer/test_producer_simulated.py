"""Model-based test: the idempotent `ProducerEngine`, driven through its contract, against a
simulated broker with random faults.

The model broker keeps, per partition, the log, the next expected sequence and the last five
batches (for de-duplication, answered DUPLICATE_SEQUENCE_NUMBER as Tansu does); it refuses
batches of more than `MAX_RECORDS` records (MESSAGE_TOO_LARGE). Hypothesis interleaves sends,
`next_actions`, clock ticks and responses, including lost connections where the broker
processed a prefix of the requests in flight before the connection died. Whatever happens:
every record ends up in its partition's log exactly once, in send order; every record's handle
completes, and every batch is reported done (`BatchDone`) exactly once; and `next_deadline()`
after `next_actions(now)` is never `now` or earlier (a driver trusting it never spins).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from _producer_scripted import Harness, Sent, produce_response
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krafka.codec import decode_batches
from krafka.errors import KafkaConnectionError
from krafka.sansio.producer import BatchDone, ProducerConfig

MAX_RECORDS = 3
PARTITIONS = (("t", 0), ("t", 1))


@dataclass
class PartitionLog:
    values: list[bytes] = field(default_factory=list)
    epoch: int = -1
    next_seq: int = 0
    recent: list[int] = field(default_factory=list)  # base sequences of the last 5 batches


class ModelBroker:
    def __init__(self) -> None:
        self.logs = {tp: PartitionLog() for tp in PARTITIONS}

    def handle(self, plan: Sent) -> Any:
        """Write `plan`'s batches; the ProduceResponse."""
        out = {}
        for tp, payload in plan.payloads.items():
            (decoded,) = decode_batches(payload)
            out[tp] = self._append(self.logs[tp], decoded)
        return produce_response(out)

    def _append(self, log: PartitionLog, batch: object) -> tuple[int, int]:
        """(error code, base offset)."""
        seq, epoch = batch.base_sequence, batch.producer_epoch  # type: ignore[attr-defined]
        records = batch.records  # type: ignore[attr-defined]
        if len(records) > MAX_RECORDS:
            return (10, -1)
        if epoch > log.epoch:
            log.epoch, log.next_seq, log.recent = epoch, 0, []
        if seq in log.recent:
            return (46, -1)
        if seq != log.next_seq:
            return (45, -1)
        offset = len(log.values)
        log.values += [r.value for r in records]
        log.next_seq += len(records)
        log.recent = [*log.recent, seq][-5:]
        return (0, offset)


ACTIONS = st.sampled_from(["send", "send", "send", "drain", "answer", "drop", "tick", "notleader"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_record_lands_exactly_once_in_order_whatever_fails(data: st.DataObject) -> None:
    config = ProducerConfig(
        linger=0.0, batch_size=61 + 4 * 31, retry_backoff=0.01, retry_backoff_max=0.05
    )
    h = Harness(config)
    broker = ModelBroker()
    in_flight: list[Sent] = []
    sent: dict[tuple[str, int], list[bytes]] = {tp: [] for tp in PARTITIONS}
    handles = []
    counter = 0
    steps = data.draw(st.lists(ACTIONS, min_size=5, max_size=80))
    for action in steps:
        if action == "send":
            tp = data.draw(st.sampled_from(PARTITIONS))
            value = b"%09d" % counter
            counter += 1
            sent[tp].append(value)
            handles.append(h.send(value, tp=tp))
        elif action == "drain":
            in_flight += drain(h)
        elif action == "answer" and in_flight:
            plan = in_flight.pop(0)
            h.talk.reply(plan.sent, broker.handle(plan))
        elif action == "notleader" and in_flight:
            plan = in_flight.pop(0)
            h.answer(plan, 6)
        elif action == "drop" and in_flight:
            processed = data.draw(st.integers(0, len(in_flight)))
            for plan in in_flight[:processed]:
                broker.handle(plan)  # written, but the answer is lost with the connection
            for plan in in_flight:
                h.fail(plan, KafkaConnectionError("connection lost"))
            in_flight.clear()
        elif action == "tick":
            h.advance(0.02)
    # Then a healthy network until everything is delivered, the clock moved by the engine's
    # deadlines only.
    for _ in range(10_000):
        if all(x.done for x in handles) and not in_flight:
            break
        in_flight += drain(h)
        if in_flight:
            plan = in_flight.pop(0)
            h.talk.reply(plan.sent, broker.handle(plan))
        else:
            deadline = h.engine.next_deadline()
            assert deadline is not None, "records are waiting and nothing will wake the driver"
            h.now = deadline
    h.step()
    assert all(x.done for x in handles)
    assert [x.exception() for x in handles if x.exception() is not None] == []
    for tp in PARTITIONS:
        assert broker.logs[tp].values == sent[tp]
    assert h.accumulator.buffered == 0 and h.engine.in_flight == 0
    done = Counter(id(e.batch) for e in h.talk.events if isinstance(e, BatchDone))
    assert set(done.values()) <= {1}, "a batch reported done more than once"
    reported = {id(e.batch) for e in h.talk.events if isinstance(e, BatchDone)}
    assert all(id(x.locate()[0]) in reported for x in handles)


def drain(h: Harness) -> list[Sent]:
    """`next_actions` and the requests it made; its deadline must lie ahead."""
    plans = h.drain()
    deadline = h.engine.next_deadline()
    assert deadline is None or deadline > h.now, (deadline, h.now)
    return plans
