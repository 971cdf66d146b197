# cython: language_level=3, boundscheck=False, wraparound=False
"""Turning decoded records into a consumer's records in bulk (compiled twin of `take.py`).

Each consumer record is a tuple subclass (a NamedTuple) allocated and filled in C: no Python
call per record. It is made untracked by the garbage collector when everything in it is (as
the codec's records are: bytes, ints, None and an untracked header list): CPython would untrack
it at its first collection anyway, but a poll of thousands of fresh tracked tuples first
triggers collections that cost more than decoding them.
"""

from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM
from libc.stdint cimport int64_t

from krafka._codec._types cimport Record


cdef extern from "Python.h":
    object PyType_GenericAlloc(PyTypeObject* tp, Py_ssize_t nitems)
    void PyObject_GC_UnTrack(object)
    bint PyObject_GC_IsTracked(object)


cdef inline object _make(PyTypeObject* tp, object topic, object partition, object offset,
                         Record rec, object tstype, object epoch):
    cdef object t = PyType_GenericAlloc(tp, 9)
    Py_INCREF(topic); PyTuple_SET_ITEM(t, 0, topic)
    Py_INCREF(partition); PyTuple_SET_ITEM(t, 1, partition)
    Py_INCREF(offset); PyTuple_SET_ITEM(t, 2, offset)
    Py_INCREF(rec.timestamp); PyTuple_SET_ITEM(t, 3, rec.timestamp)
    Py_INCREF(tstype); PyTuple_SET_ITEM(t, 4, tstype)
    Py_INCREF(rec.key); PyTuple_SET_ITEM(t, 5, rec.key)
    Py_INCREF(rec.value); PyTuple_SET_ITEM(t, 6, rec.value)
    Py_INCREF(rec.headers); PyTuple_SET_ITEM(t, 7, rec.headers)
    Py_INCREF(epoch); PyTuple_SET_ITEM(t, 8, epoch)
    if not PyObject_GC_IsTracked(rec.headers):
        PyObject_GC_UnTrack(t)
    return t


def take_records(list records, Py_ssize_t index, Py_ssize_t limit, int64_t min_offset,
                 int64_t stop_offset, object topic, object partition, object timestamp_type,
                 object leader_epoch, type record_type, list out):
    cdef Py_ssize_t n = len(records), taken = 0
    cdef int64_t offset, next_offset = -1
    cdef object item
    cdef Record rec
    cdef PyTypeObject* tp = <PyTypeObject*>record_type
    while index < n and taken < limit:
        item = records[index]
        if type(item) is not Record:
            item = Record(item.offset, item.timestamp, item.key, item.value, item.headers)
        rec = <Record>item
        offset = rec.offset
        if offset < min_offset:
            index += 1
            continue
        if stop_offset >= 0 and offset >= stop_offset:
            return index, taken, next_offset, True
        out.append(_make(tp, topic, partition, rec.offset, rec, timestamp_type, leader_epoch))
        index += 1
        taken += 1
        next_offset = offset + 1
    return index, taken, next_offset, False
