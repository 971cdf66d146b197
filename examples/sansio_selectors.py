"""Embed krafka in any event loop: a `ClientCore` driven by `selectors`, sockets and one clock.

    python examples/sansio_selectors.py BOOTSTRAP       # e.g. localhost:9092

This is what an embedder in twisted, gevent or a simulator writes: the core (`krafka.sansio`)
decides everything - connections wanted, requests, routing, metadata, the group protocol - and
the loop below only moves bytes and time. Each turn it steps the core (every machine runs and
returns its events, each as `MachineEvent(machine, event)`: operation ids are unique
process-wide, so this loop just unwraps them), opens the connections the core wants, writes
what the core has to send, and sleeps in `select` until a socket is readable or
`core.next_deadline()` passes: no polling, so the number of turns follows the requests, not the
seconds (the script prints it).

The script creates a fresh topic of two partitions (`create_topics`, an admin operation run by
the core), produces 1,000 records to it with an idempotent `ProducerEngine` (every delivery
checked), consumes them back in a new consumer group with a `ConsumerEngine` (subscribe; polls
drive the group; `PollReady` says when to poll again), commits the positions and leaves the
group. Operations (`flush`, `commit`, `close` ...) return an id that a `Completed` / `Failed`
event answers. It prints the loop turns, then as its last line `produced 1000 consumed 1000
committed N`, where N is the sum over the partitions of the committed offsets (each the next
offset to read): as both partitions were read from offset 0 to their end, N counts the records
the group consumed for good, 1000.

For brevity sockets connect and write blocking, and a socket error ends the script; an embedder
on a real event loop writes when the socket is writable and reports a broken one with
`core.connection_lost(conn_id, error, now)`.
"""

import selectors
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from krafka import sansio
from krafka.errors import KafkaConnectionError

COUNT = 1000


class Loop:
    """Carries one `ClientCore`'s bytes over plain sockets; `turns` counts loop turns."""

    def __init__(self, core: sansio.ClientCore, on_event: Callable[[Any], None]) -> None:
        self.core, self.on_event, self.turns = core, on_event, 0
        self.selector = selectors.DefaultSelector()
        self.sockets: dict[int, socket.socket] = {}
        self.results: dict[int, sansio.Completed | sansio.Failed] = {}

    def until(self, done: Callable[[], bool]) -> None:
        """Turn until `done()`: step the core, connect, write, then sleep until an input."""
        while True:
            self.turns += 1
            for event in (events := self.core.step(time.monotonic())):
                event = event.event if isinstance(event, sansio.MachineEvent) else event
                if isinstance(event, sansio.Completed | sansio.Failed):
                    self.results[event.op] = event
                else:
                    self.on_event(event)
            for w in self.core.connections_wanted():  # OpenConnection or CloseConnection
                self.open(w) if isinstance(w, sansio.OpenConnection) else self.drop(w.conn_id)
            for conn_id, sock in self.sockets.items():
                sock.sendall(self.core.data_to_send(conn_id))
            if done():
                return
            # Events may have given machines input (a poll, a rebalance step): step again now.
            deadline = time.monotonic() if events else self.core.next_deadline()  # None: untimed
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            for key, _ in self.selector.select(timeout):  # b"": closed, the core then drops it
                data = self.sockets[key.data].recv(1 << 20)
                self.core.receive_data(key.data, data, time.monotonic())

    def outcome(self, op: int) -> Any:
        """Turn until operation `op` ends: its value (its error is raised)."""
        self.until(lambda: op in self.results)
        return self.results.pop(op).result()

    def open(self, want: sansio.OpenConnection) -> None:
        try:
            sock = socket.create_connection((want.host, want.port), timeout=want.timeout)
        except OSError as exc:
            error = KafkaConnectionError(f"{want.host}:{want.port}: {exc}")
            self.core.connection_failed(want.conn_id, error, time.monotonic())
            return
        self.sockets[want.conn_id] = sock
        self.selector.register(sock, selectors.EVENT_READ, want.conn_id)
        self.core.connection_made(want.conn_id, time.monotonic())

    def drop(self, conn_id: int) -> None:
        if (sock := self.sockets.pop(conn_id, None)) is not None:
            self.selector.unregister(sock)
            sock.close()


def produce(loop: Loop, topic: str) -> int:
    """Append COUNT records to the topic's two partitions; how many were delivered."""
    producer = sansio.ProducerEngine(sansio.ProducerConfig(), loop.core.cluster)
    loop.core.add(producer)
    loop.core.refresh_metadata([topic], time.monotonic())  # append needs its partitions
    loop.until(lambda: producer.partition_count(topic) is not None)
    handles = []
    for i in range(COUNT):
        now, wall_ms = time.monotonic(), time.time_ns() // 1_000_000
        handles.append(producer.append(topic, i % 2, None, None, b"%d" % i, None, now, wall_ms))
    loop.outcome(producer.flush(time.monotonic()))
    return sum(handle.exception() is None for handle in handles)


def main(bootstrap: str) -> None:
    topic, group = f"example-{time.time_ns()}", f"example-group-{time.time_ns()}"
    core = sansio.ClientCore(sansio.ClientConfig(bootstrap, client_id="example"))
    config = sansio.ConsumerConfig(
        group=sansio.GroupConfig(group, session_timeout=6.0, enable_auto_commit=False),
        auto_offset_reset=sansio.ResetStrategy.EARLIEST,
    )
    consumer = sansio.ConsumerEngine(config, core.cluster)
    records: list[Any] = []

    def on_event(event: Any) -> None:
        if isinstance(event, sansio.RebalanceEvent):  # a listener would run here
            consumer.rebalance_done(event, time.monotonic())
        elif isinstance(event, sansio.PollReady):  # records (or an error) to take
            records.extend(consumer.poll(time.monotonic()))

    loop = Loop(core, on_event)
    admin = sansio.create_topics([sansio.NewTopic(topic, num_partitions=2)], timeout=30.0)
    core.add(admin)
    sansio.Results(loop.outcome(admin.start(time.monotonic()))).raise_for_errors()
    produced = produce(loop, topic)
    core.add(consumer)
    consumer.subscribe([topic], time.monotonic())
    records.extend(consumer.poll(time.monotonic()))  # polls drive the group: joins it
    loop.until(lambda: len(records) >= produced)
    committed = loop.outcome(consumer.commit(None, time.monotonic()))
    loop.outcome(consumer.close(time.monotonic(), 10.0))  # leaves the group
    core.close(time.monotonic())
    print(f"turns {loop.turns}")
    offsets = sum(offset.offset for offset in committed.values())
    print(f"produced {produced} consumed {len(records)} committed {offsets}")


if __name__ == "__main__":
    main(sys.argv[1])
