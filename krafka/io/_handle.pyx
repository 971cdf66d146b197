# cython: language_level=3
"""The compiled `DeliveryHandle`: `krafka.io.producer_handle.PureDeliveryHandle` in a type the
garbage collector does not track.

A producer confirming every record keeps one handle per record; tracked, hundreds of thousands
of them make every full GC pass walk them all. This type holds the same two references
(`batch`, `index`) and does the same things through the same Python functions (given by
`configure`, which `krafka.io.producer_handle` calls on import). Untracked is safe because no
reference cycle runs through a handle: nothing a batch references holds a handle (batches are
sans-IO state; the events of tasks awaiting one live in `producer_handle`, and delivery errors
are raised as fresh copies, so a stored error never holds the frame of a task that awaited it).

Awaiting a handle whose batch is already delivered (a producer confirming records it sent a
while ago) makes no generator: the `RecordMetadata` comes back in a finished C awaitable
(`krafka.io._iteration.ready`, called in C; the batch's `outcome` read straight from its slot,
`krafka.sansio.producer._slots`). The `RecordMetadata` tuple is allocated and filled in C (no
argument tuple, no call of `tuple.__new__`) and left untracked by the garbage collector when its
fields are (a topic name and ints always are), as `krafka._codec._take` does for records.
"""

cimport cython
from cpython.object cimport PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM


cdef extern from "Python.h":
    object PyType_GenericAlloc(PyTypeObject* tp, Py_ssize_t nitems)
    void PyObject_GC_UnTrack(object)
    bint PyObject_GC_IsTracked(object)

from krafka.io._iteration cimport ready_c
from krafka.sansio.producer._slots cimport get_slot, slot_offset

from krafka.sansio.producer.batch import ProducerBatch

cdef type _BATCH = ProducerBatch
#: Where a `ProducerBatch` keeps its `outcome`, read by every awaited handle (`_slots`).
cdef Py_ssize_t _OUTCOME = slot_offset(_BATCH, "outcome")

cdef object _await_delivery = None
cdef object _wait_delivery = None
cdef object _locate = None
cdef object _result_of = None
cdef object _describe = None
cdef object _metadata_type = None


cdef inline object _metadata(object topic, object partition, object offset, object timestamp):
    """A `RecordMetadata(topic, partition, offset, timestamp)`."""
    cdef object t = PyType_GenericAlloc(<PyTypeObject*>_metadata_type, 4)
    Py_INCREF(topic); PyTuple_SET_ITEM(t, 0, topic)
    Py_INCREF(partition); PyTuple_SET_ITEM(t, 1, partition)
    Py_INCREF(offset); PyTuple_SET_ITEM(t, 2, offset)
    Py_INCREF(timestamp); PyTuple_SET_ITEM(t, 3, timestamp)
    if not (PyObject_GC_IsTracked(topic) or PyObject_GC_IsTracked(partition)
            or PyObject_GC_IsTracked(timestamp)):
        PyObject_GC_UnTrack(t)
    return t


def configure(await_delivery, wait_delivery, locate, result_of, describe, metadata_type):
    """The Python functions every handle method delegates to, and the `RecordMetadata` type."""
    global _await_delivery, _wait_delivery, _locate, _result_of, _describe, _metadata_type
    _metadata_type = metadata_type
    _await_delivery = await_delivery
    _wait_delivery = wait_delivery
    _locate = locate
    _result_of = result_of
    _describe = describe


@cython.no_gc
@cython.final
@cython.freelist(256)
cdef class DeliveryHandle:
    """A record on its way; `await` it for its `RecordMetadata` (or its delivery error).
    Its fields and `delivered` are declared in `_handle.pxd` (the sync futures call it in C)."""

    def __cinit__(self, object batch, Py_ssize_t index):
        self.batch = batch
        self.index = index

    def __await__(self):
        cdef object metadata = self.delivered()
        if metadata is not None:
            return ready_c(metadata)
        return _await_delivery(self)

    cpdef object delivered(self):
        """The `RecordMetadata` if the record is delivered and its batch was never split, else
        None (`krafka.sansio.producer.record.delivered`, computed here in C)."""
        cdef object outcome = get_slot(self.batch, _BATCH, _OUTCOME, "outcome")
        if outcome is None:
            return None
        cdef tuple o = <tuple?>outcome
        cdef Py_ssize_t index = self.index
        cdef long long base = o[2]
        cdef object timestamp = o[3]
        if timestamp < 0:
            stamps = o[4]
            timestamp = o[5] if stamps is None else stamps[index]
        return _metadata(o[0], o[1], base + index if base >= 0 else -1, timestamp)

    def wait(self):
        """Wait for the delivery (what `await handle` does)."""
        return _wait_delivery(self)

    def locate(self):
        """The batch (and position) holding the record now (after a split: one half)."""
        return _locate(self.batch, self.index)

    @property
    def done(self):
        return _locate(self.batch, self.index)[0].done

    def exception(self):
        """The delivery error, or None (also while still pending)."""
        return _locate(self.batch, self.index)[0].error

    def result(self):
        """The delivery result; raises the delivery error. Only valid once `done`."""
        return _result_of(self.batch, self.index)

    def __repr__(self):
        return _describe(self, "DeliveryHandle")
