# cython: language_level=3, boundscheck=False, wraparound=False
"""`RecordAccumulator.append_open` (the per-record fast path, readable in `accumulator.py`) in C.

`send` calls it for every record; as Python it is most of a record's cost on the caller's side.
Same steps and results as the Python method; the accumulator binds it as its `append_open` when
the extension is built (`accumulator.OPEN_APPENDER`).
"""

cimport cython
from cpython.bytes cimport PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.list cimport PyList_CheckExact, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject

from krafka._codec._builder cimport RecordsBuilder

cdef tuple _NOT_APPENDED = (None, False)


cdef inline Py_ssize_t _length(object data):
    if data is None:
        return 0
    if PyBytes_CheckExact(data):
        return PyBytes_GET_SIZE(data)
    return len(data)


@cython.final
cdef class OpenAppender:
    """`append_open` bound to one accumulator (see `RecordAccumulator.append_open`)."""

    def __cinit__(self, accumulator):
        self._accumulator = accumulator
        self._open_by_topic = accumulator.open_by_topic

    def append_open(self, topic, Py_ssize_t partition, key, value, timestamp):
        """See `RecordAccumulator.append_open`."""
        cdef bint sealed = False
        handle = self.append_c(topic, partition, key, value, timestamp, &sealed)
        if handle is None:
            return _NOT_APPENDED
        return handle, sealed

    cdef object append_c(self, object topic, Py_ssize_t partition, object key, object value,
                         object timestamp, bint* sealed):
        """The record's handle, or None (then `sealed` is untouched)."""
        cdef PyObject* found = PyDict_GetItem(self._open_by_topic, topic)
        if found == NULL or partition < 0:
            return None
        cdef object slots = <object>found
        if not PyList_CheckExact(slots) or partition >= PyList_GET_SIZE(slots):
            return None
        cdef object batch = <object>PyList_GET_ITEM(slots, partition)
        if batch is None:
            return None
        cdef Py_ssize_t size = batch.size + 21 + _length(value) + _length(key)
        cdef Py_ssize_t limit = batch.limit
        if size > limit:
            return None
        cdef RecordsBuilder builder = batch.builder  # built with this codec: compiled
        handle = self._accumulator.handle_type(batch, builder.count)
        builder.add(timestamp, key, value, None)
        batch.size = size
        if timestamp is not None or batch.stamps is not None:
            batch.stamp(timestamp)
        if size < limit:
            return handle
        self._accumulator.seal(batch)
        sealed[0] = True
        return handle
