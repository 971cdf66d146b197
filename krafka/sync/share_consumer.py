"""The blocking `ShareConsumer`: every method of `krafka.ShareConsumer`, same arguments, results
and exceptions, plus iteration, for scripts and worker processes.

    from krafka.sync import ShareConsumer
    with ShareConsumer(bootstrap_servers="127.0.0.1:9092", group_id="workers",
                       acknowledgement_mode="explicit") as consumer:
        consumer.subscribe(["jobs"])
        for record in consumer:                      # until the consumer is closed
            handle(record)
            consumer.acknowledge(record, AcknowledgeType.ACCEPT)

The acknowledgement commit callback (`set_acknowledgement_commit_callback`) runs on the
consumer's loop thread while a `poll`, `commit_sync`, `commit_async` or `close` of the
application waits for it, and an exception it raises propagates from that call. `wakeup()`
from any thread (or a signal handler) makes the blocked `poll` raise `WakeupError`.
"""

from __future__ import annotations

from collections.abc import Iterator

from krafka.io.share_consumer import ShareConsumer as AsyncShareConsumer
from krafka.sansio.share import ShareRecord
from krafka.sync.client import SyncClient, blocking, on_loop, poll_until_closed

_C = AsyncShareConsumer


class ShareConsumer(SyncClient[AsyncShareConsumer]):
    """`krafka.ShareConsumer` with blocking methods, on a background thread of its own."""

    _async_class = AsyncShareConsumer

    subscribe = blocking(_C.subscribe)
    unsubscribe = blocking(_C.unsubscribe)
    poll = blocking(_C.poll)
    commit_sync = blocking(_C.commit_sync)
    commit_async = on_loop(_C.commit_async)
    set_acknowledgement_commit_callback = on_loop(_C.set_acknowledgement_commit_callback)
    metrics = on_loop(_C.metrics)
    client_instance_id = blocking(_C.client_instance_id)
    update_seed_brokers = on_loop(_C.update_seed_brokers)
    acknowledge = on_loop(_C.acknowledge)
    subscription = on_loop(_C.subscription)
    assignment = on_loop(_C.assignment)

    def wakeup(self) -> None:
        """Make the blocked `poll` or `commit_sync` raise `WakeupError` (or the next one):
        callable from any thread, a signal handler included (it does not wait)."""
        if not self.closed:
            self._thread.call_soon(self._client.wakeup)

    @property
    def acquisition_lock_timeout(self) -> float | None:
        return self._client.acquisition_lock_timeout

    def __next__(self) -> ShareRecord:
        """The next record (`next(consumer)`, waits for one): a poll of one record, as the
        async `anext`; with tracing on, a traced record's `process` span is current on this
        thread until the next call. `StopIteration` once closed."""
        tracing = self._client.tracing
        if tracing is not None:
            tracing.finish_current()
        while not self.closed:
            records = self.poll(1.0, 1)
            if records:
                if tracing is not None:
                    tracing.received(records[0])
                return records[0]
        raise StopIteration

    def __iter__(self) -> Iterator[ShareRecord]:
        """Records one by one (fetched in polls of `max_poll_records`), until closed. In
        explicit mode acknowledge each before the iteration reaches the next poll."""
        return poll_until_closed(self.poll, lambda: self.closed)


__all__ = ["ShareConsumer"]
