# cython: language_level=3, boundscheck=False, wraparound=False
"""`ProducerEngine.append_open` (the per-record fast path, readable in `engine.py` and
`RecordAccumulator.append_open`) in C, and the bulk twins `append_many` and `check_many`.

`send` calls it for every record; as Python it is most of a record's cost on the caller's side.
Same steps and results as the Python methods: choose the partition when none is given (the
engine's partitioner, over the metadata's partition counts), then add the record to that
partition's open batch if it has room (a sticky partitioner's full batch is sealed and the
partitioner asked again). The engine binds it as its `append_open` when the
extension is built (`engine.OPEN_APPENDER`); `krafka.sync`'s compiled `send` calls `open_c`.
`append_many` runs the same steps over columns of records with no handle per record (the
bulk `send_many`); `check_many` is its checks, made for every record before any is appended.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t
from cpython.dict cimport PyDict_GetItem
from cpython.list cimport PyList_CheckExact, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject

from krafka._codec._builder cimport RecordsBuilder
from krafka._codec._murmur cimport _murmur2
from krafka.sansio.producer._slots cimport get_slot, set_slot, slot_offset

from krafka.sansio.partitioner import DefaultPartitioner
from krafka.sansio.producer.batch import BATCH_OVERHEAD, ProducerBatch
from krafka.sansio.producer.record import check_record

from krafka.sansio.partitioner import sticky


#: Where a `ProducerBatch` keeps the fields an append reads and writes (`_slots`).
cdef type _BATCH = ProducerBatch
cdef Py_ssize_t _SIZE = slot_offset(_BATCH, "size")
cdef Py_ssize_t _LIMIT = slot_offset(_BATCH, "limit")
cdef Py_ssize_t _BUILDER = slot_offset(_BATCH, "builder")
cdef Py_ssize_t _STAMPS = slot_offset(_BATCH, "stamps")


cdef inline Py_ssize_t _length(object data):
    if data is None:
        return 0
    if PyBytes_CheckExact(data):
        return PyBytes_GET_SIZE(data)
    return len(data)


@cython.final
cdef class OpenAppender:
    """`append_open` bound to one engine (see `ProducerEngine.append_open`); it keeps the
    accumulator's `handle_type` as it was when the engine made it."""

    def __cinit__(self, engine):
        self._accumulator = engine.accumulator
        self._handle_type = self._accumulator.handle_type
        self._partitioner = engine.partitioner
        self._sticky = sticky(engine.partitioner)
        self._open_by_topic = self._accumulator.open_by_topic
        self._counts = engine.metadata.partition_counts
        self.enabled = engine.open_appends
        self._murmur_keys = type(self._partitioner) is DefaultPartitioner
        self._sticky_choices = self._partitioner.choices if self._murmur_keys else None
        config = engine.config
        self._largest = min(config.max_request_size, config.buffer_memory) - BATCH_OVERHEAD

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
        if partition is not None:
            used[0] = partition
            return self.append_c(topic, partition, key, value, timestamp, sealed)
        count = PyDict_GetItem(self._counts, topic)
        if count == NULL:
            return None
        chosen = self.choose_c(topic, key, <object>count)
        used[0] = chosen
        handle = self.append_c(topic, chosen, key, value, timestamp, sealed)
        if handle is not None or not self._sticky or not self._seal(topic, chosen):
            return handle
        sealed[0] = True
        chosen = self.choose_c(topic, key, <object>count)  # where it moved on to
        used[0] = chosen
        return self.append_c(topic, chosen, key, value, timestamp, sealed)

    cdef Py_ssize_t choose_c(self, object topic, object key, object count) except -1:
        """The partitioner's choice; the default one's right here: murmur2 of a key (Java's
        `toPositive(murmur2(key)) % count`, as `krafka.codec.murmur2_partition`), or for a null
        key the partition the topic sticks to (its `choices`), once it has one in range."""
        cdef Py_ssize_t n, current
        cdef PyObject* found
        if self._murmur_keys:
            n = count
            if key is None:
                found = PyDict_GetItem(self._sticky_choices, topic)
                if found != NULL:
                    current = <object>found
                    if 0 <= current < n:
                        return current
            elif PyBytes_CheckExact(key) and n > 0:
                return (_murmur2(<const uint8_t*>PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key))
                        & 0x7FFFFFFF) % n
        return self._partitioner.partition(topic, key, count)

    cdef bint _seal(self, object topic, Py_ssize_t partition) except -1:
        """Seal the open batch of `partition` (one the record had no room in), if any."""
        cdef PyObject* found = PyDict_GetItem(self._open_by_topic, topic)
        if found == NULL or partition < 0:
            return False
        cdef object slots = <object>found
        if not PyList_CheckExact(slots) or partition >= PyList_GET_SIZE(slots):
            return False
        cdef object batch = <object>PyList_GET_ITEM(slots, partition)
        if batch is None:
            return False
        self._accumulator.seal(batch)
        return True

    cdef object append_c(self, object topic, Py_ssize_t partition, object key, object value,
                         object timestamp, bint* sealed):
        """`RecordAccumulator.append_open`: the record's handle, or None (then `sealed` is
        untouched)."""
        cdef Py_ssize_t size = 0, limit = 0
        cdef object batch = self.fit_c(topic, partition, key, value, &size, &limit)
        if batch is None:
            return None
        # built with this codec: compiled
        cdef RecordsBuilder builder = get_slot(batch, _BATCH, _BUILDER, "builder")
        handle = self._handle_type(batch, builder.count)
        self.add_c(batch, builder, size, limit, key, value, timestamp, sealed)
        return handle

    cdef object open_batch_c(self, object topic, Py_ssize_t partition):
        """The open batch of the partition, or None."""
        cdef PyObject* found = PyDict_GetItem(self._open_by_topic, topic)
        if found == NULL or partition < 0:
            return None
        cdef object slots = <object>found
        if not PyList_CheckExact(slots) or partition >= PyList_GET_SIZE(slots):
            return None
        return <object>PyList_GET_ITEM(slots, partition)

    cdef object fit_c(self, object topic, Py_ssize_t partition, object key, object value,
                      Py_ssize_t* size, Py_ssize_t* limit):
        """The open batch of the partition if the record fits in it (`size`: the batch's size
        with it, `limit` its limit), else None."""
        cdef object batch = self.open_batch_c(topic, partition)
        if batch is None:
            return None
        cdef Py_ssize_t used = get_slot(batch, _BATCH, _SIZE, "size")
        size[0] = used + 21 + _length(value) + _length(key)
        limit[0] = get_slot(batch, _BATCH, _LIMIT, "limit")
        if size[0] > limit[0]:
            return None
        return batch

    cdef void add_c(self, object batch, RecordsBuilder builder, Py_ssize_t size,
                    Py_ssize_t limit, object key, object value, object timestamp,
                    bint* sealed) except *:
        """Add the record to `batch` (its `builder`), whose size becomes `size` (`fit_c`);
        seal it once at `limit`."""
        builder.add(timestamp, key, value, None)
        set_slot(batch, _BATCH, _SIZE, "size", size)
        if timestamp is not None or get_slot(batch, _BATCH, _STAMPS, "stamps") is not None:
            batch.stamp(timestamp)
        if size >= limit:
            self._accumulator.seal(batch)
            sealed[0] = True

    def append_many(self, topic, partition, keys, values, timestamps, Py_ssize_t start,
                    dict batches):
        """See `ProducerEngine.append_many`. The open batch records go to keeps its size, limit
        and builder in C variables while a run of records joins it (the size is written back
        before anything else can look at it: a Python partitioner, a stamp, a seal, the
        return)."""
        cdef Py_ssize_t n = len(values), i
        cdef bint each = partition is not None and type(partition) is not int
        cdef PyObject* count
        cdef Py_ssize_t chosen, size, part = -1, used = 0, limit = 0
        cdef object batch = None, key, value, timestamp, wanted
        cdef RecordsBuilder builder = None
        cdef bint stamped = False
        if not (PyList_CheckExact(values) and (keys is None or PyList_CheckExact(keys))
                and (timestamps is None or PyList_CheckExact(timestamps))
                and (not each or PyList_CheckExact(partition))):
            raise TypeError("append_many: keys, values, timestamps and partitions are lists")
        try:
            for i in range(start, n):
                value = <object>PyList_GET_ITEM(values, i)
                key = None if keys is None else <object>PyList_GET_ITEM(keys, i)
                timestamp = None if timestamps is None else <object>PyList_GET_ITEM(timestamps, i)
                wanted = <object>PyList_GET_ITEM(partition, i) if each else partition
                if not self.enabled:
                    return i, wanted
                if wanted is None:
                    count = PyDict_GetItem(self._counts, topic)
                    if count == NULL:
                        return i, None
                    if batch is not None and not self._murmur_keys:
                        batch.size = used  # a partitioner of the application's may look
                    chosen = self.choose_c(topic, key, <object>count)
                else:
                    chosen = wanted
                if batch is None or chosen != part:
                    if batch is not None:
                        batch.size = used
                    batch = self.open_batch_c(topic, chosen)
                    if batch is None:
                        return i, chosen
                    part, used, limit = chosen, batch.size, batch.limit
                    builder = batch.builder
                    stamped = batch.stamps is not None
                    batches[batch] = None
                size = used + 21 + _length(value) + _length(key)
                if size > limit:
                    if wanted is None and self._sticky:
                        batch.size = used
                        self._accumulator.seal(batch)
                        batch = None
                        return i, -1  # engine.SEALED_RUN: asked again once it went
                    return i, chosen
                builder.add(timestamp, key, value, None)
                used = size
                if timestamp is not None or stamped:
                    batch.size = used
                    batch.stamp(timestamp)
                    stamped = True
                if size >= limit:
                    batch.size = used
                    self._accumulator.seal(batch)
                    batch = None
                    return i + 1, -1  # engine.SEALED_RUN
            return n, None
        finally:
            if batch is not None:
                batch.size = used

    def check_many(self, keys, values, timestamps):
        """See `ProducerEngine.check_many`."""
        cdef Py_ssize_t n = len(values), i, size
        cdef object key, value
        if not (PyList_CheckExact(values) and (keys is None or PyList_CheckExact(keys))):
            raise TypeError("check_many: keys and values are lists")
        for i in range(n):
            value = <object>PyList_GET_ITEM(values, i)
            key = None if keys is None else <object>PyList_GET_ITEM(keys, i)
            if ((value is None or PyBytes_CheckExact(value))
                    and (key is None or PyBytes_CheckExact(key))
                    and timestamps is None):
                size = 21 + _length(value) + _length(key)
                if size <= self._largest:
                    continue
            try:
                check_record(key, value, None if timestamps is None else timestamps[i])
                self._accumulator.check_record_size(21 + _length(value) + _length(key))
            except Exception as exc:
                exc.add_note(f"send_many: record {i}")
                raise
