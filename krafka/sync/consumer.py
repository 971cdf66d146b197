"""The blocking `Consumer`: every method of `krafka.Consumer`, same arguments, results and
exceptions, plus iteration, for scripts and notebooks.

    from krafka.sync import Consumer
    with Consumer(bootstrap_servers="127.0.0.1:9092", group_id="g",
                  auto_offset_reset="earliest") as consumer:
        consumer.subscribe(["orders"])
        for record in consumer:              # until the consumer is closed
            print(record.offset, record.value)
"""

from __future__ import annotations

from collections.abc import Iterator

from krafka.io.consumer import Consumer as AsyncConsumer
from krafka.sansio.consumer.record import ConsumerRecord
from krafka.sync.client import SyncClient, blocking, on_loop, poll_until_closed

_C = AsyncConsumer


class Consumer(SyncClient[AsyncConsumer]):
    """`krafka.Consumer` with blocking methods, on a background thread of its own."""

    _async_class = AsyncConsumer

    assign = blocking(_C.assign)
    subscribe = blocking(_C.subscribe)
    unsubscribe = blocking(_C.unsubscribe)
    poll = blocking(_C.poll)
    batch_recv = blocking(_C.batch_recv)
    recv = blocking(_C.recv)
    poll_batches = blocking(_C.poll_batches)
    poll_arrow = blocking(_C.poll_arrow)
    seek = blocking(_C.seek)
    seek_many = blocking(_C.seek_many)
    seek_to_beginning = blocking(_C.seek_to_beginning)
    seek_to_end = blocking(_C.seek_to_end)
    position = blocking(_C.position)
    commit = blocking(_C.commit)
    committed = blocking(_C.committed)
    beginning_offsets = blocking(_C.beginning_offsets)
    end_offsets = blocking(_C.end_offsets)
    offsets_for_times = blocking(_C.offsets_for_times)
    assignment = on_loop(_C.assignment)
    subscription = on_loop(_C.subscription)
    pause = on_loop(_C.pause)
    resume = on_loop(_C.resume)
    paused = on_loop(_C.paused)
    lag = on_loop(_C.lag)
    current_lag = on_loop(_C.current_lag)
    metrics = on_loop(_C.metrics)
    group_metadata = on_loop(_C.group_metadata)

    def __iter__(self) -> Iterator[ConsumerRecord]:
        """Records one by one (fetched in polls of `max_poll_records`), until closed."""
        return poll_until_closed(self.poll, lambda: self.closed)


__all__ = ["Consumer"]
