# cython: language_level=3
"""Compiled twins of the codec's value types (`types.py`): Record, BatchHeader, RecordBatch.

Extension types are built from C without keyword parsing or frozen-dataclass `__setattr__`
calls, which is most of the per-batch cost for small batches. Fields are read-only from Python.
"""

cimport cython
from cpython.object cimport PyObject, PyTypeObject
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE

from krafka._codec.types import Compression, TimestampType


RECORD_FIELDS = ("offset", "timestamp", "key", "value", "headers")
HEADER_FIELDS = (
    "byte_offset", "byte_length", "base_offset", "magic", "crc", "attributes",
    "last_offset_delta", "first_timestamp", "max_timestamp", "producer_id", "producer_epoch",
    "base_sequence", "record_count", "partition_leader_epoch",
)
BATCH_FIELDS = (
    "base_offset", "magic", "crc", "compression", "timestamp_type", "is_transactional",
    "is_control", "partition_leader_epoch", "producer_id", "producer_epoch", "base_sequence",
    "records", "attributes", "batch_length", "last_offset_delta", "first_timestamp",
    "max_timestamp", "wrapper_timestamp",
)


@cython.final
@cython.no_gc
cdef class Record:
    """One Kafka record. Offsets are absolute; `timestamp` is None only for magic 0.

    Not tracked by the garbage collector (it only refers to ints, bytes and a header list of
    (str, bytes) pairs); do not store reference cycles in `headers`.
    """

    __match_args__ = RECORD_FIELDS

    def __init__(self, offset=0, timestamp=None, key=None, value=None, headers=()):
        self.offset = int(offset)
        self.timestamp = None if timestamp is None else int(timestamp)
        self.key = key
        self.value = value
        self.headers = headers

    def _fields(self):
        return (self.offset, self.timestamp, self.key, self.value, self.headers)

    def __eq__(self, other):
        if type(other) is not Record:
            return NotImplemented
        return self._fields() == (<Record>other)._fields()

    def __hash__(self):
        return hash((self.offset, self.timestamp, self.key, self.value, tuple(self.headers)))

    def __repr__(self):
        return (f"Record(offset={self.offset!r}, timestamp={self.timestamp!r}, key={self.key!r}, "
                f"value={self.value!r}, headers={self.headers!r})")

    def __reduce__(self):
        return (Record, self._fields())


# ---------------------------------------------------------------- Record's C side
# Records are made by the thousand, so their allocation, field reads and `Record(...)` calls are
# done in C on the struct Cython generates for the class above (its layout is checked against
# `KrafkaRecord` when the module loads):
# - fields are read-only T_OBJECT_EX member slots, which CPython's specialising interpreter reads
#   inline (LOAD_ATTR_SLOT), instead of Cython properties;
# - a freelist of 8192 records, filled by the dealloc below, feeds `krafka_record_new`, which
#   sets the fields directly;
# - `Record(...)` goes through a vectorcall entry on the type (no argument tuple, no tp_new /
#   tp_init dispatch, no keyword parsing of a `def __init__`) that behaves exactly as
#   `__init__`: same defaults, `int()` of offset and timestamp.

cdef extern from *:
    """
    #include <structmember.h>
    #define KRAFKA_RECORD_STRUCT struct __pyx_obj_6krafka_6_codec_6_types_Record

    typedef struct {
        PyObject_HEAD
        PyObject *offset, *timestamp, *key, *value, *headers;
    } KrafkaRecord;

    #ifdef Py_GIL_DISABLED
    #define KRAFKA_RECORD_FREELIST 0  /* the freelist relies on the GIL */
    #else
    #define KRAFKA_RECORD_FREELIST 8192
    #endif
    static PyObject *krafka_record_freelist[KRAFKA_RECORD_FREELIST + 1];
    static Py_ssize_t krafka_record_nfree = 0;
    static PyTypeObject *krafka_record_type = NULL;
    static PyMemberDef krafka_record_members[] = {
        {"offset", T_OBJECT_EX, offsetof(KrafkaRecord, offset), READONLY, NULL},
        {"timestamp", T_OBJECT_EX, offsetof(KrafkaRecord, timestamp), READONLY, NULL},
        {"key", T_OBJECT_EX, offsetof(KrafkaRecord, key), READONLY, NULL},
        {"value", T_OBJECT_EX, offsetof(KrafkaRecord, value), READONLY, NULL},
        {"headers", T_OBJECT_EX, offsetof(KrafkaRecord, headers), READONLY, NULL},
        {NULL, 0, 0, 0, NULL},
    };

    static void krafka_record_dealloc(PyObject *o) {
        KrafkaRecord *r = (KrafkaRecord *)o;
        Py_CLEAR(r->offset);
        Py_CLEAR(r->timestamp);
        Py_CLEAR(r->key);
        Py_CLEAR(r->value);
        Py_CLEAR(r->headers);
        if (krafka_record_nfree < KRAFKA_RECORD_FREELIST)
            krafka_record_freelist[krafka_record_nfree++] = o;
        else
            Py_TYPE(o)->tp_free(o);
    }

    /* A new Record holding new references to the five (borrowed) fields. */
    static PyObject *krafka_record_new(PyObject *offset, PyObject *timestamp, PyObject *key,
                                       PyObject *value, PyObject *headers) {
        KrafkaRecord *r;
        if (krafka_record_nfree > 0) {
            r = (KrafkaRecord *)krafka_record_freelist[--krafka_record_nfree];
        } else {
            r = (KrafkaRecord *)PyObject_Malloc(sizeof(KrafkaRecord));
            if (r == NULL) return PyErr_NoMemory();
        }
        PyObject_Init((PyObject *)r, krafka_record_type);
        Py_INCREF(offset);
        r->offset = offset;
        Py_INCREF(timestamp);
        r->timestamp = timestamp;
        Py_INCREF(key);
        r->key = key;
        Py_INCREF(value);
        r->value = value;
        Py_INCREF(headers);
        r->headers = headers;
        return (PyObject *)r;
    }

    static int krafka_record_install_impl(PyTypeObject *t, vectorcallfunc vc, size_t size,
                                          const size_t *offsets) {
        PyMemberDef *m;
        int i;
        if (size != sizeof(KrafkaRecord) || (size_t)t->tp_basicsize != sizeof(KrafkaRecord)
                || t->tp_itemsize != 0 || t->tp_free != PyObject_Del) {
            PyErr_SetString(PyExc_ImportError, "unexpected layout of the compiled Record");
            return -1;
        }
        for (i = 0, m = krafka_record_members; m->name != NULL; i++, m++) {
            PyObject *descr;
            if ((size_t)m->offset != offsets[i]) {
                PyErr_SetString(PyExc_ImportError, "unexpected layout of the compiled Record");
                return -1;
            }
            descr = PyDescr_NewMember(t, m);
            if (descr == NULL) return -1;
            if (PyDict_SetItemString(t->tp_dict, m->name, descr) < 0) {
                Py_DECREF(descr);
                return -1;
            }
            Py_DECREF(descr);
        }
        krafka_record_type = t;
        t->tp_dealloc = krafka_record_dealloc;
        t->tp_vectorcall = vc;
        PyType_Modified(t);
        return 0;
    }
    #define krafka_record_install(t, vc) krafka_record_install_impl( \
        (t), (vectorcallfunc)(vc), sizeof(KRAFKA_RECORD_STRUCT), \
        (size_t[5]){offsetof(KRAFKA_RECORD_STRUCT, offset), \
                    offsetof(KRAFKA_RECORD_STRUCT, timestamp), \
                    offsetof(KRAFKA_RECORD_STRUCT, key), \
                    offsetof(KRAFKA_RECORD_STRUCT, value), \
                    offsetof(KRAFKA_RECORD_STRUCT, headers)})
    """
    int krafka_record_install(PyTypeObject* t, void* vc) except -1
    object krafka_record_new(object offset, object timestamp, object key, object value,
                             object headers)
    Py_ssize_t PyVectorcall_NARGS(size_t nargsf)


cdef Record new_record(object offset, object timestamp, object key, object value, object headers):
    return <Record>krafka_record_new(offset, timestamp, key, value, headers)


cdef tuple _RECORD_FIELD_NAMES = RECORD_FIELDS
cdef object _ZERO = 0
cdef tuple _NO_HEADERS = ()


cdef Py_ssize_t _field_index(PyObject* name) except -2:
    """Position of a keyword among Record's fields (-1: not one of them)."""
    cdef Py_ssize_t i
    for i in range(5):
        if <PyObject*>PyTuple_GET_ITEM(_RECORD_FIELD_NAMES, i) == name:
            return i
    for i in range(5):
        if <object>PyTuple_GET_ITEM(_RECORD_FIELD_NAMES, i) == <object>name:
            return i
    return -1


cdef object _record_vectorcall(object cls, PyObject** args, size_t nargsf, PyObject* kwnames):
    cdef Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), i, j, nkw = 0
    cdef PyObject* vals[5]
    if (nargs == 5 and kwnames == NULL and type(<object>args[0]) is int
            and (args[1] == <PyObject*>None or type(<object>args[1]) is int)):
        return krafka_record_new(<object>args[0], <object>args[1], <object>args[2],
                                 <object>args[3], <object>args[4])
    if nargs > 5:
        raise TypeError(f"Record() takes at most 5 positional arguments ({nargs} given)")
    for i in range(5):
        vals[i] = args[i] if i < nargs else NULL
    if kwnames != NULL:
        nkw = PyTuple_GET_SIZE(<object>kwnames)
        for j in range(nkw):
            i = _field_index(PyTuple_GET_ITEM(<object>kwnames, j))
            if i < 0:
                raise TypeError(f"Record() got an unexpected keyword argument "
                                f"{<object>PyTuple_GET_ITEM(<object>kwnames, j)!r}")
            if vals[i] != NULL:
                raise TypeError(f"Record() got multiple values for argument "
                                f"{<object>PyTuple_GET_ITEM(_RECORD_FIELD_NAMES, i)!r}")
            vals[i] = args[nargs + j]
    offset = _ZERO if vals[0] == NULL else <object>vals[0]
    if type(offset) is not int:
        offset = int(offset)
    timestamp = None if vals[1] == NULL else <object>vals[1]
    if timestamp is not None and type(timestamp) is not int:
        timestamp = int(timestamp)
    return krafka_record_new(offset, timestamp, None if vals[2] == NULL else <object>vals[2],
                             None if vals[3] == NULL else <object>vals[3],
                             _NO_HEADERS if vals[4] == NULL else <object>vals[4])


krafka_record_install(<PyTypeObject*>Record, <void*>_record_vectorcall)


@cython.final
cdef class BatchHeader:
    """A batch's header read without decompressing or checking it (see types.BatchHeader)."""

    __match_args__ = HEADER_FIELDS

    def __init__(self, byte_offset, byte_length, base_offset, magic, crc, attributes,
                 last_offset_delta, first_timestamp, max_timestamp, producer_id, producer_epoch,
                 base_sequence, record_count, partition_leader_epoch):
        self.byte_offset = byte_offset
        self.byte_length = byte_length
        self.base_offset = base_offset
        self.magic = magic
        self.crc = crc
        self.attributes = attributes
        self.last_offset_delta = last_offset_delta
        self.first_timestamp = first_timestamp
        self.max_timestamp = max_timestamp
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.record_count = record_count
        self.partition_leader_epoch = partition_leader_epoch

    @property
    def compression(self):
        return Compression.from_code(self.attributes & 0x07)

    @property
    def timestamp_type(self):
        return None if self.magic == 0 else TimestampType((self.attributes >> 3) & 1)

    @property
    def is_transactional(self):
        return self.magic >= 2 and bool(self.attributes & 0x10)

    @property
    def is_control(self):
        return self.magic >= 2 and bool(self.attributes & 0x20)

    @property
    def last_offset(self):
        if self.last_offset_delta is None:
            return self.base_offset
        return self.base_offset + self.last_offset_delta

    def _fields(self):
        return tuple(getattr(self, f) for f in HEADER_FIELDS)

    def __eq__(self, other):
        if type(other) is not BatchHeader:
            return NotImplemented
        return self._fields() == (<BatchHeader>other)._fields()

    def __hash__(self):
        return hash(self._fields())

    def __repr__(self):
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in HEADER_FIELDS)
        return f"BatchHeader({inner})"

    def __reduce__(self):
        return (BatchHeader, self._fields())


cdef enum:
    N_LEADER_EPOCH = 1
    N_PRODUCER_ID = 2
    N_PRODUCER_EPOCH = 4
    N_BASE_SEQUENCE = 8
    N_LAST_OFFSET_DELTA = 16
    N_FIRST_TIMESTAMP = 32
    N_MAX_TIMESTAMP = 64


cdef inline int64_t _or_null(object value, int bit, int* nulls) except? -1:
    if value is None:
        nulls[0] |= bit
        return 0
    return value


@cython.final
cdef class RecordBatch:
    """A decoded batch: a v2 record batch, or one legacy message (see types.RecordBatch).

    Header integers are kept as C values and turned into Python ints when read, so decoding a
    small batch allocates next to nothing beyond its records.
    """

    __match_args__ = BATCH_FIELDS

    def __init__(self, base_offset, magic, crc, compression, timestamp_type, is_transactional,
                 is_control, partition_leader_epoch, producer_id, producer_epoch, base_sequence,
                 records=None, attributes=0, batch_length=0, last_offset_delta=None,
                 first_timestamp=None, max_timestamp=None, wrapper_timestamp=None):
        cdef int nulls = 0
        self._base_offset = base_offset
        self.magic = magic
        self._crc = crc
        self.compression = compression
        self.timestamp_type = timestamp_type
        self.is_transactional = is_transactional
        self.is_control = is_control
        self._partition_leader_epoch = _or_null(partition_leader_epoch, N_LEADER_EPOCH, &nulls)
        self._producer_id = _or_null(producer_id, N_PRODUCER_ID, &nulls)
        self._producer_epoch = _or_null(producer_epoch, N_PRODUCER_EPOCH, &nulls)
        self._base_sequence = _or_null(base_sequence, N_BASE_SEQUENCE, &nulls)
        self._last_offset_delta = _or_null(last_offset_delta, N_LAST_OFFSET_DELTA, &nulls)
        self._first_timestamp = _or_null(first_timestamp, N_FIRST_TIMESTAMP, &nulls)
        self._max_timestamp = _or_null(max_timestamp, N_MAX_TIMESTAMP, &nulls)
        self.nulls = nulls
        self.records = [] if records is None else records
        self.attributes = attributes
        self._batch_length = batch_length
        self.wrapper_timestamp = wrapper_timestamp

    @property
    def base_offset(self):
        return self._base_offset

    @property
    def crc(self):
        return self._crc

    @property
    def batch_length(self):
        return self._batch_length

    @property
    def partition_leader_epoch(self):
        return None if self.nulls & N_LEADER_EPOCH else self._partition_leader_epoch

    @property
    def producer_id(self):
        return None if self.nulls & N_PRODUCER_ID else self._producer_id

    @property
    def producer_epoch(self):
        return None if self.nulls & N_PRODUCER_EPOCH else self._producer_epoch

    @property
    def base_sequence(self):
        return None if self.nulls & N_BASE_SEQUENCE else self._base_sequence

    @property
    def last_offset_delta(self):
        return None if self.nulls & N_LAST_OFFSET_DELTA else self._last_offset_delta

    @property
    def first_timestamp(self):
        return None if self.nulls & N_FIRST_TIMESTAMP else self._first_timestamp

    @property
    def max_timestamp(self):
        return None if self.nulls & N_MAX_TIMESTAMP else self._max_timestamp

    @property
    def last_offset(self):
        if not self.nulls & N_LAST_OFFSET_DELTA:
            return self._base_offset + self._last_offset_delta
        return self.records[-1].offset if self.records else self._base_offset

    @property
    def next_offset(self):
        return self.last_offset + 1

    def _fields(self):
        return tuple(getattr(self, f) for f in BATCH_FIELDS)

    def __eq__(self, other):
        if type(other) is not RecordBatch:
            return NotImplemented
        return self._fields() == (<RecordBatch>other)._fields()

    __hash__ = None

    def __repr__(self):
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in BATCH_FIELDS)
        return f"RecordBatch({inner})"

    def __reduce__(self):
        return (RecordBatch, self._fields())
