# cython: language_level=3, binding=True
"""The compiled `Producer.send` (tracing off): `krafka.io.producer.Producer.send`, the readable
reference and the fallback, as a Cython coroutine (still a `collections.abc.Coroutine`, as
`send`'s contract says) whose closure holds the producer's engine and bound methods, so a record
costs no attribute lookups on the producer but `direct`. `Producer` binds it as its `send`."""

from krafka.sansio.producer.engine import Due
from krafka.sansio.producer.record import check_record, check_timestamp

cdef object _SEALED = int(Due.SEALED)


def direct_send(object producer):
    """`producer`'s `send` (tracing off); the same steps as `Producer.send`."""
    cdef object append_open = producer._append_open
    cdef object engine = producer._engine
    cdef object send_checked = producer._send_checked
    cdef object attend = producer._attend
    cdef object wake = producer._wake

    async def send(topic, value=None, key=None, *, headers=None, partition=None, timestamp=None):
        """Enqueue one record; returns its handle (see `Producer.send`)."""
        if not producer.direct or headers:
            return await send_checked(topic, value, key, headers, partition, timestamp)
        if timestamp is not None:
            check_timestamp(timestamp)
        try:
            handle = append_open(topic, partition, timestamp, key, value)
        except (TypeError, ValueError):
            check_record(key, value, timestamp)
            raise
        if handle is None or type(handle) is int:
            chosen = partition if handle is None else handle
            if chosen is not None and engine.seal_open(topic, chosen):
                await attend()
            return await send_checked(topic, value, key, None, chosen, timestamp)
        due = engine.due
        if due:
            if due == _SEALED:
                await attend()
            else:
                wake()
        return handle

    return send
