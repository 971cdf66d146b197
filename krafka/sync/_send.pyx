# cython: language_level=3
"""The compiled `send` of `krafka.sync.Producer`: `Producer.send` (the readable reference and
the fallback) in C, so a record costs the caller about what the async `send` costs.

Same steps, same order: refuse when closed; make the record's future (untracked); hold the
loop if it is parked now (else, if nothing is queued and the async producer is `direct`, wait
for it to park); holding it, if nothing is queued and the producer is `direct`, append
through the async producer's engine: its compiled `append_open` (`OpenAppender.open_c`: the
partition chosen, the open batch), with no Python frame in between; only a record that needs a
new batch goes on to the engine's `append` (the producer's `_append_new`), with the partition
chosen; when a batch opened or sealed, or a timer of the loop is due (`ParkingLock.sent_c`,
which also keeps the loop thread off while records keep coming), the loop turns right here,
still held (`LoopThread.run_held`), as the async `send` has the loop turn then.
Otherwise hand the record over (the producer's `_queue`). It refers to its producer weakly (the producer holds
it), so a producer nobody closed is still collected.

Per record it reads no more than it must: closing is a flag of its own (`close()`, which the
producer calls first when it closes; the producer's weak reference is followed only to queue),
`engine.due` is read only for a record `open_c` could not take, and the future's `_handle` slot
is written at its offset (`krafka.sansio.producer._slots`: no attribute lookup by name).
"""

cimport cython

from krafka.sansio.producer._append cimport OpenAppender
from krafka.sansio.producer._slots cimport krafka_slot_set, slot_offset
from krafka.sansio.producer.record import check_record, check_timestamp
from krafka.sync._parking cimport ParkingLock
from krafka.sync._untracked cimport alloc_untracked


@cython.final
cdef class DirectSend:
    """`send` bound to one sync producer (see `krafka.sync.producer.Producer.send`)."""

    cdef object _producer  # a weak reference
    cdef ParkingLock _parking
    cdef object _outbox
    cdef type _future_type
    cdef object _client
    cdef object _engine
    cdef object _run_held
    cdef object _append_new
    cdef object _closed_error
    cdef object _wake
    cdef OpenAppender _appender
    cdef Py_ssize_t _handle_at  # where the futures keep `_handle` (a slot)
    cdef bint _closed

    def __cinit__(self, producer_ref, ParkingLock parking, outbox, type future_type, client,
                  run_held, append_new, closed_error):
        self._producer = producer_ref
        self._parking = parking
        self._outbox = outbox
        self._future_type = future_type
        self._client = client
        self._engine = client.engine
        self._run_held = run_held
        self._append_new = append_new
        self._closed_error = closed_error
        self._wake = client.driver.wake
        appender = getattr(self._engine.append_open, "__self__", None)
        self._appender = appender if isinstance(appender, OpenAppender) else None
        self._handle_at = slot_offset(future_type, "_handle")

    def close(self):
        """Refuse every later `send` (the producer is closing)."""
        self._closed = True

    def send(self, topic, value=None, key=None, *, headers=None, partition=None,
             timestamp=None):
        """Send one record; returns its future at once."""
        if self._closed:
            raise self._closed_error("producer is closed")
        cdef object future = alloc_untracked(self._future_type)
        cdef object outbox = self._outbox
        cdef bint sealed = False
        cdef Py_ssize_t used = -1
        cdef object due
        if timestamp is not None:
            check_timestamp(timestamp)
        cdef bint held = False
        if headers is None:
            held = self._parking.try_pause_c()  # parked: the checks below are made holding it
            if not held and outbox.idle and self._client.direct:
                held = self._parking.pause_c()  # running: wait only if it may go direct
        if held:
            try:
                if outbox.idle and self._client.direct:
                    handle = None
                    if self._appender is not None:
                        handle = self._appender.open_c(topic, partition, timestamp, key, value,
                                                       &sealed, &used)
                        if handle is None and partition is None and used >= 0:
                            partition = used
                    if handle is None:
                        due = self._engine.due  # (`open_c` changes it only when it seals)
                        handle = self._append_new(topic, partition, timestamp, key, value)
                        sealed = sealed or (not due and self._engine.due)
                    if handle is not None:
                        krafka_slot_set(future, self._handle_at, handle)
                        if self._parking.sent_c() or sealed:
                            self._run_held(self._wake)
                        return future
            except (TypeError, ValueError):
                check_record(key, value, timestamp)
                raise
            finally:
                self._parking.resume_c()
        producer = self._producer()
        if producer is None:
            raise self._closed_error("producer is closed")
        return producer._queue(topic, value, key, headers, partition, timestamp, future)

