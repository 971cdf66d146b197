# cython: language_level=3
"""The compiled `send` of `krafka.sync.Producer`: `Producer.send` (the readable reference and
the fallback) in C, so a record costs the caller about what the async `send` costs.

Same steps, same order: refuse when closed; make the record's future (untracked); if nothing
is queued and the loop is parked, hold it there and append through the async producer's
`_try_append`; otherwise hand the record over (the producer's `_queue`). The first steps of
`_try_append` (the partitioner, for a topic whose partitions are known, then the accumulator's
compiled `append_open`) are taken right here, with no Python frame in between; only a record
that needs more goes on to `_try_append`, with the partition chosen. It refers to its producer
weakly (the producer holds it), so a producer nobody closed is still collected.
"""

cimport cython

from krafka.sansio.producer._append cimport OpenAppender
from krafka.sync._parking cimport ParkingLock
from krafka.sync._untracked cimport alloc_untracked


@cython.final
cdef class DirectSend:
    """`send` bound to one sync producer (see `krafka.sync.producer.Producer.send`)."""

    cdef object _producer  # a weak reference
    cdef ParkingLock _parking
    cdef object _outbox
    cdef type _future_type
    cdef object _try_append
    cdef object _call_soon
    cdef object _wake
    cdef object _closed_error
    cdef object _client
    cdef OpenAppender _appender
    cdef dict _partitions
    cdef object _partitioner

    def __cinit__(self, producer_ref, ParkingLock parking, outbox, type future_type,
                  try_append, call_soon, wake, closed_error, client, appender):
        self._producer = producer_ref
        self._parking = parking
        self._outbox = outbox
        self._future_type = future_type
        self._try_append = try_append
        self._call_soon = call_soon
        self._wake = wake
        self._closed_error = closed_error
        self._client = client
        self._appender = appender if isinstance(appender, OpenAppender) else None
        self._partitions = client._partitions
        self._partitioner = client._partitioner

    def send(self, topic, value=None, key=None, *, headers=None, partition=None,
             timestamp=None):
        """Send one record; returns its future at once."""
        producer = self._producer()
        if producer is None or producer._closed:
            raise self._closed_error("producer is closed")
        cdef object future = alloc_untracked(self._future_type)
        cdef object outbox = self._outbox
        cdef bint wake = False
        if headers is None and outbox.idle and self._parking.pause_c():
            try:
                if outbox.idle:
                    handle = None
                    if self._appender is not None and self._client._fast:
                        if partition is None:
                            count = self._partitions.get(topic)
                            if count is not None:
                                partition = self._partitioner.partition(topic, key, count)
                        if partition is not None:
                            handle = self._appender.append_c(topic, partition, key, value,
                                                             timestamp, &wake)
                    if handle is None:
                        handle, partition, wake = self._try_append(
                            topic, value, key, partition, timestamp
                        )
                    if handle is not None:
                        future._handle = handle
                        if wake:
                            self._call_soon(self._wake)
                        return future
            finally:
                self._parking.resume_c()
        return producer._queue(topic, value, key, headers, partition, timestamp, future)
