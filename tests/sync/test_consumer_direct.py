"""The blocking Consumer's `poll` takes records already fetched on the caller's thread while the
loop is parked (`krafka.io.Consumer.poll_ready`): same records, positions, listeners, wakeups."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from krafka import NewTopic, TopicPartition
from krafka.errors import WakeupError
from krafka.sync import AdminClient, Consumer, Producer

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]

BACKLOG = 20_000


def fill(bootstrap: str, topic: str, count: int, partitions: int = 1) -> None:
    with Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(count):
            producer.send(topic, b"%d" % i, partition=i % partitions)
        producer.flush()


def test_a_backlog_arrives_complete_in_order_decoded_on_the_callers_thread(broker: Any) -> None:
    """Many small polls over a backlog: every record once, in order; the value deserializer
    (run where the records are decoded) runs on the polling thread for the direct polls; a
    commit after them commits the position of the last record returned."""
    topic, group = f"direct-{time.time_ns()}", f"g-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    fill(broker.bootstrap_servers, topic, BACKLOG)
    decoded_on: set[threading.Thread] = set()

    def value(data: bytes | None) -> int:
        decoded_on.add(threading.current_thread())
        assert data is not None
        return int(data)

    with Consumer(
        bootstrap_servers=broker.bootstrap_servers, group_id=group,
        auto_offset_reset="earliest", enable_auto_commit=False, fetch_max_wait=0.1,
        value_deserializer=value,
    ) as consumer:  # fmt: skip
        consumer.assign([tp])
        got: list[int] = []
        while len(got) < BACKLOG // 2:
            got += [r.value for r in consumer.poll(5.0, max_records=97)]
        consumer.commit()
        assert consumer.committed([tp])[tp].offset == len(got)
        while len(got) < BACKLOG * 3 // 4:
            got += [r.value for r in consumer.batch_recv(101, 5.0)]
        for record in consumer:
            got.append(record.value)
            if len(got) == BACKLOG:
                break
        assert got == list(range(BACKLOG))
        assert consumer.position(tp) == BACKLOG
        assert threading.current_thread() in decoded_on


class Revoking:
    """Raises from its first revocation of some partitions."""

    def __init__(self) -> None:
        self.raised = False

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        if partitions and not self.raised:
            self.raised = True
            raise LookupError("from the listener")


def test_a_rebalance_listener_raises_from_poll_between_direct_polls(broker: Any) -> None:
    """While the first member polls a backlog, a second joins: the revocation's listener runs
    inside a poll of the first and what it raised is raised from that poll."""
    bootstrap = broker.bootstrap_servers
    topic, group = f"direct-rebalance-{time.time_ns()}", f"g-{time.time_ns()}"
    with AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 2)])
    fill(bootstrap, topic, BACKLOG, partitions=2)
    listener = Revoking()
    options = dict(
        bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
        fetch_max_wait=0.1, heartbeat_interval=0.2, session_timeout=6.0, max_poll_records=50,
    )  # fmt: skip
    with Consumer(**options) as first, Consumer(**options) as second:
        first.subscribe([topic], listener=listener)
        while not first.poll(5.0):
            pass
        joined = threading.Thread(target=second.subscribe, args=([topic],))
        joined.start()
        joined.join(10)
        raised = False
        deadline = time.monotonic() + 40
        while not raised and time.monotonic() < deadline:
            try:
                first.poll(0.05)
            except LookupError:
                raised = True
            second.poll(0.05)
        assert raised and listener.raised


def test_wakeup_interrupts_direct_polls(broker: Any) -> None:
    """A wakeup made between direct polls raises from the next poll, once."""
    topic = f"direct-wakeup-{time.time_ns()}"
    fill(broker.bootstrap_servers, topic, 5_000)
    with Consumer(
        bootstrap_servers=broker.bootstrap_servers, auto_offset_reset="earliest",
        fetch_max_wait=0.1, max_poll_records=10,
    ) as consumer:  # fmt: skip
        consumer.assign([TopicPartition(topic, 0)])
        while not consumer.poll(5.0):
            pass
        consumer.wakeup()
        with pytest.raises(WakeupError):
            consumer.poll(5.0)
        assert consumer.poll(5.0)


SCRIPT = """
import sys
from krafka import TopicPartition, codec
from krafka.sync import Consumer
bootstrap, topic = sys.argv[1:3]
with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest",
              fetch_max_wait=0.1) as consumer:
    consumer.assign([TopicPartition(topic, 0)])
    got = []
    while len(got) < 5000:
        got += [r.offset for r in consumer.poll(5.0, 37)]
print(codec.IMPLEMENTATION, got == list(range(5000)))
"""


def test_direct_polls_without_the_compiled_extensions(broker: Any) -> None:
    topic = f"direct-pure-{time.time_ns()}"
    fill(broker.bootstrap_servers, topic, 5_000)
    env = {**os.environ, "KRAFKA_NO_EXTENSIONS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, broker.bootstrap_servers, topic], env=env,
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, check=True,
        timeout=50,
    ).stdout  # fmt: skip
    assert out.split() == ["pure", "True"]
