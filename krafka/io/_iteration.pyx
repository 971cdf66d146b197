# cython: language_level=3
"""The compiled `RecordIterator`: `krafka.io.iteration.PureRecordIterator` without a coroutine
per record.

`async for` awaits whatever `__anext__` returns. A Python `async def __anext__` makes and runs
a coroutine for every record; here a record already buffered comes back in a `Ready`, a tiny C
awaitable whose `am_send` slot returns the record at once (no frame, no StopIteration). Only
an empty buffer goes through `refill`, a real coroutine that may wait.
"""

cimport cython

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
    """
    int krafka_ready_init() except -1
    object krafka_ready_new(object value)

krafka_ready_init()


def ready(value):
    """An awaitable that returns `value` at once."""
    return krafka_ready_new(value)


@cython.final
cdef class RecordIterator:
    """`async for` over `pending` (a deque the consumer fills), calling `refill()` (a coroutine
    function returning the next record, or raising StopAsyncIteration) when it is empty."""

    cdef object _popleft
    cdef object _pending
    cdef object _refill

    def __cinit__(self, object pending, object refill):
        self._pending = pending
        self._popleft = pending.popleft
        self._refill = refill

    def __aiter__(self):
        return self

    def __anext__(self):
        if self._pending:
            return krafka_ready_new(self._popleft())
        return self._refill()
