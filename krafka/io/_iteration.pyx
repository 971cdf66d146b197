# cython: language_level=3
"""The compiled `RecordIterator`: `krafka.io.iteration.PureRecordIterator` without a coroutine
per record.

`async for` awaits whatever `__anext__` returns. A Python `async def __anext__` makes and runs
a coroutine for every record; here a record already buffered comes back in a `Ready`, a tiny C
awaitable whose `am_send` slot returns the record at once (no frame, no StopIteration). Only
an empty buffer goes through `refill`, a real coroutine that may wait.

Per buffered record, `__anext__` reads the deque's length from its header and calls its
`popleft` through vectorcall, and hands the record out in the iterator's own `Ready` again
when the last one was awaited (nothing else holds it): no allocation per record. Every
`every`-th record goes out through `pause` instead (the consumer's lets the loop read the
next fetch's answer while the application works through this one).
"""

cimport cython
from cpython.list cimport PyList_CheckExact, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject
from cpython.ref cimport Py_XDECREF
from cpython.tuple cimport PyTuple_Check, PyTuple_CheckExact, PyTuple_GET_ITEM, PyTuple_GET_SIZE

from collections import deque

cdef extern from *:
    """
    /* An awaitable that is already done: awaiting it returns `value` without suspending. */
    typedef struct { PyObject_HEAD PyObject *value; } KrafkaReady;

    static PyObject *krafka_ready_take(PyObject *self) {
        PyObject *value = ((KrafkaReady *)self)->value;
        ((KrafkaReady *)self)->value = NULL;
        if (value == NULL) { Py_INCREF(Py_None); value = Py_None; }
        return value;
    }
    static void krafka_ready_dealloc(PyObject *self) {
        Py_XDECREF(((KrafkaReady *)self)->value);
        PyObject_Free(self);
    }
    static PyObject *krafka_ready_await(PyObject *self) { Py_INCREF(self); return self; }
    static PySendResult krafka_ready_send(PyObject *self, PyObject *arg, PyObject **result) {
        *result = krafka_ready_take(self);
        return PYGEN_RETURN;
    }
    /* The iterator protocol, for whoever drives `__await__()` by hand: StopIteration(value)
       (built explicitly: a record is a tuple, which PyErr_SetObject would unpack as args). */
    static PyObject *krafka_ready_iternext(PyObject *self) {
        PyObject *value = krafka_ready_take(self);
        PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, value);
        Py_DECREF(value);
        if (stop != NULL) { PyErr_SetObject(PyExc_StopIteration, stop); Py_DECREF(stop); }
        return NULL;
    }
    static PyAsyncMethods krafka_ready_async = {krafka_ready_await, 0, 0, krafka_ready_send};
    static PyTypeObject KrafkaReadyType = {
        PyVarObject_HEAD_INIT(NULL, 0)
        .tp_name = "krafka.io._iteration.Ready",
        .tp_basicsize = sizeof(KrafkaReady),
        .tp_dealloc = krafka_ready_dealloc,
        .tp_as_async = &krafka_ready_async,
        .tp_iter = PyObject_SelfIter,
        .tp_iternext = krafka_ready_iternext,
    #ifdef Py_TPFLAGS_HAVE_AM_SEND
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_AM_SEND,
    #else
        .tp_flags = Py_TPFLAGS_DEFAULT,
    #endif
        .tp_doc = "A finished awaitable: awaiting it returns its value at once.",
    };
    static int krafka_ready_init(void) { return PyType_Ready(&KrafkaReadyType); }
    static PyObject *krafka_ready_new(PyObject *value) {
        KrafkaReady *self = PyObject_New(KrafkaReady, &KrafkaReadyType);
        if (self == NULL) return NULL;
        Py_INCREF(value);
        self->value = value;
        return (PyObject *)self;
    }
    /* `*cache` refilled with `value` (a new reference, stolen) when only the cache holds it
       (its last value was taken by an await), else a new Ready that becomes the cache. */
    static PyObject *krafka_ready_reuse(PyObject **cache, PyObject *value) {
        PyObject *ready = *cache;
        if (ready != NULL && Py_REFCNT(ready) == 1) {
            Py_XSETREF(((KrafkaReady *)ready)->value, value);
        } else {
            ready = (PyObject *)PyObject_New(KrafkaReady, &KrafkaReadyType);
            if (ready == NULL) { Py_DECREF(value); return NULL; }
            ((KrafkaReady *)ready)->value = value;
            Py_XSETREF(*cache, ready);
        }
        Py_INCREF(ready);
        return ready;
    }
    /* Records in `pending`: a deque's length is its header's size field. */
    static Py_ssize_t krafka_pending(PyObject *pending) {
        return Py_SIZE(pending);
    }
    """
    int krafka_ready_init() except -1
    object krafka_ready_new(object value)
    object krafka_ready_reuse(PyObject** cache, PyObject* value)
    Py_ssize_t krafka_pending(object pending)
    PyObject* PyObject_CallNoArgs(object callable) except NULL

krafka_ready_init()


cdef object ready_c(object value):
    """`ready`, for compiled callers (`krafka.io._handle`): no Python call."""
    return krafka_ready_new(value)


def ready(value):
    """An awaitable that returns `value` at once."""
    return krafka_ready_new(value)


@cython.final
cdef class RecordIterator:
    """`async for` over `pending` (a deque the consumer fills), calling `refill()` (a coroutine
    function returning the next record, or raising StopAsyncIteration) when it is empty; every
    `every`-th buffered record (0: none) goes out through `pause(record)`, an awaitable that
    may let the loop's other tasks run first."""

    cdef object _popleft
    cdef object _pending
    cdef object _refill
    cdef object _pause
    cdef PyObject* _ready  # owned: the Ready handed out last, or NULL
    cdef Py_ssize_t _every
    cdef Py_ssize_t _count
    cdef bint _deque

    def __cinit__(self, object pending, object refill, object pause=None, Py_ssize_t every=0):
        self._pending = pending
        self._popleft = pending.popleft
        self._refill = refill
        self._pause = pause
        self._every = every if pause is not None and every > 0 else 0
        self._count = 0
        self._ready = NULL
        self._deque = type(pending) is deque

    def __dealloc__(self):
        Py_XDECREF(self._ready)

    def __aiter__(self):
        return self

    def __anext__(self):
        cdef bint pending
        if self._deque:
            pending = krafka_pending(self._pending) > 0
        else:
            pending = bool(self._pending)
        if pending:
            if self._every:
                self._count += 1
                if self._count >= self._every:
                    self._count = 0
                    return self._pause(self._popleft())
            return krafka_ready_reuse(&self._ready, PyObject_CallNoArgs(self._popleft))
        return self._refill()


cdef inline object _traceparent(object record):
    """The `traceparent` header's value of `record`, or None (no headers walked for a
    record without any: that is the untraced record's whole cost)."""
    cdef object headers
    if PyTuple_Check(record) and PyTuple_GET_SIZE(record) > 7:
        headers = <object>PyTuple_GET_ITEM(record, 7)
    else:
        headers = getattr(record, "headers", None)
    if PyTuple_CheckExact(headers):
        if PyTuple_GET_SIZE(headers) == 0:
            return None
    elif not headers:
        return None
    for header in headers:
        if header[0] == "traceparent":
            return header[1]
    return None


def traceparent(object record):
    """The `traceparent` header's value of `record` (bytes), or None."""
    return _traceparent(record)


def traced(object records):
    """The records of `records` that carry a `traceparent` header."""
    cdef list found = []
    cdef Py_ssize_t i
    if PyList_CheckExact(records):
        for i in range(PyList_GET_SIZE(records)):
            record = <object>PyList_GET_ITEM(records, i)
            if _traceparent(record) is not None:
                found.append(record)
        return found
    for record in records:
        if _traceparent(record) is not None:
            found.append(record)
    return found


@cython.final
cdef class TracedRecordIterator:
    """`RecordIterator` with tracing on: a record carrying a trace context is handed out in a
    `process` span (`tracing.process(record)`), ended at the next record; a record without
    one costs a look at its headers. `pause` and `every` as `RecordIterator`'s."""

    cdef object _popleft
    cdef object _pending
    cdef object _refill
    cdef object _tracing
    cdef object _pause
    cdef Py_ssize_t _every
    cdef Py_ssize_t _count
    cdef bint _open

    def __cinit__(
        self,
        object pending,
        object refill,
        object tracing,
        object pause=None,
        Py_ssize_t every=0,
    ):
        self._pending = pending
        self._popleft = pending.popleft
        self._refill = refill
        self._tracing = tracing
        self._pause = pause
        self._every = every if pause is not None and every > 0 else 0
        self._count = 0
        self._open = False

    def __aiter__(self):
        return self

    def __anext__(self):
        cdef object record
        if self._open:
            self._open = False
            self._tracing.finish_current()
        if self._pending:
            record = self._popleft()
            if _traceparent(record) is not None:
                self._tracing.process(record)
                self._open = True
            if self._every:
                self._count += 1
                if self._count >= self._every:
                    self._count = 0
                    return self._pause(record)
            return krafka_ready_new(record)
        return self._refilled()

    async def _refilled(self):
        record = await self._refill()
        if _traceparent(record) is not None:
            self._tracing.process(record)
            self._open = True
        return record


def scan(object records):
    """(the distinct topics of `records`, those carrying a `traceparent` header), in one pass
    that compares each record's topic with the last one's by identity first."""
    cdef list found = []
    cdef set topics = set()
    cdef object last = None
    cdef object topic
    cdef object record
    cdef Py_ssize_t i
    if not PyList_CheckExact(records):
        records = list(records)
    for i in range(PyList_GET_SIZE(records)):
        record = <object>PyList_GET_ITEM(records, i)
        if PyTuple_Check(record):
            topic = <object>PyTuple_GET_ITEM(record, 0)
        else:
            topic = record.topic
        if topic is not last:
            topics.add(topic)
            last = topic
        if _traceparent(record) is not None:
            found.append(record)
    return topics, found
