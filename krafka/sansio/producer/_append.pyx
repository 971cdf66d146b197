# cython: language_level=3, boundscheck=False, wraparound=False
"""`ProducerEngine.append_open` (the per-record fast path, readable in `engine.py` and
`RecordAccumulator.append_open`) in C.

`send` calls it for every record; as Python it is most of a record's cost on the caller's side.
Same steps and results as the Python methods: choose the partition when none is given (the
engine's partitioner, over the metadata's partition counts), then add the record to that
partition's open batch if it has room. The engine binds it as its `append_open` when the
extension is built (`engine.OPEN_APPENDER`); `krafka.sync`'s compiled `send` calls `open_c`.
"""

cimport cython
from cpython.bytes cimport PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.list cimport PyList_CheckExact, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject

from krafka._codec._builder cimport RecordsBuilder


cdef inline Py_ssize_t _length(object data):
    if data is None:
        return 0
    if PyBytes_CheckExact(data):
        return PyBytes_GET_SIZE(data)
    return len(data)


@cython.final
cdef class OpenAppender:
    """`append_open` bound to one engine (see `ProducerEngine.append_open`)."""

    def __cinit__(self, engine):
        self._accumulator = engine.accumulator
        self._partitioner = engine.partitioner
        self._open_by_topic = self._accumulator.open_by_topic
        self._counts = engine.metadata.partition_counts
        self.enabled = engine.open_appends

    def append_open(self, topic, partition, timestamp, key, value):
        """See `ProducerEngine.append_open`."""
        cdef bint sealed = False
        cdef Py_ssize_t used = -1
        handle = self.open_c(topic, partition, timestamp, key, value, &sealed, &used)
        if handle is not None:
            return handle
        if partition is not None:
            return partition
        return None if used < 0 else used

    cdef object open_c(self, object topic, object partition, object timestamp, object key,
                       object value, bint* sealed, Py_ssize_t* used):
        """The record's handle, or None; `used` is the partition chosen (or given), left
        untouched when none could be chosen (the topic's partitions are unknown)."""
        if not self.enabled:
            return None
        cdef Py_ssize_t chosen
        cdef PyObject* count
        if partition is None:
            count = PyDict_GetItem(self._counts, topic)
            if count == NULL:
                return None
            chosen = self._partitioner.partition(topic, key, <object>count)
        else:
            chosen = partition
        used[0] = chosen
        return self.append_c(topic, chosen, key, value, timestamp, sealed)

    cdef object append_c(self, object topic, Py_ssize_t partition, object key, object value,
                         object timestamp, bint* sealed):
        """`RecordAccumulator.append_open`: the record's handle, or None (then `sealed` is
        untouched)."""
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
