# cython: language_level=3
"""Cheap field reads for a consumer's records (compiled twin of `take.py`'s `slot_fields`).

A consumer's records are made straight from a batch's bytes by `_records.consumer_records`;
`slot_fields` makes reading their fields (`record.value`) as cheap as reading a slot.
"""

from cpython.object cimport PyTypeObject


# ---------------------------------------------------------------- field reads as slot reads
# A NamedTuple's fields are `_tuplegetter` descriptors, which CPython's specialising interpreter
# does not inline: `record.value` is a generic attribute lookup (~150 instructions, as much as
# decoding the record's value). A tuple's item i lives at a fixed offset from the object, so a
# read-only T_OBJECT_EX member descriptor at that offset returns the same object, and reads of
# it are specialised (LOAD_ATTR_SLOT: a type-version check and a load). A member read must never
# go past the object: the type's `tp_alloc` is replaced by one that always allocates room for
# every field (slots past the tuple's length stay NULL, which reads as AttributeError), so even
# a short `tuple.__new__(cls, ...)` cannot make one read out of bounds. Freeing a record (as
# many as are made) skips `subtype_dealloc`'s generic steps when the type has none to take.
cdef extern from *:
    """
    #include <structmember.h>
    #define KRAFKA_SLOT_TYPES 8
    static PyTypeObject *krafka_slot_types[KRAFKA_SLOT_TYPES];
    static Py_ssize_t krafka_slot_sizes[KRAFKA_SLOT_TYPES];
    static int krafka_slot_ntypes = 0;

    static PyObject *krafka_slot_alloc(PyTypeObject *t, Py_ssize_t n) {
        Py_ssize_t room = n;
        PyObject *o;
        int i;
        for (i = 0; i < krafka_slot_ntypes; i++)
            if (krafka_slot_types[i] == t && krafka_slot_sizes[i] > room)
                room = krafka_slot_sizes[i];
        o = PyType_GenericAlloc(t, room);
        if (o != NULL) Py_SET_SIZE(o, n);
        return o;
    }

    /* Freeing a record: what `subtype_dealloc` + `tupledealloc` do for a type with no
       finalizer, weak references, dict or slots (checked at install), without their generic
       steps. Also the base dealloc of a subclass's `subtype_dealloc`, which expects the base
       to release the reference its instance holds to its (heap) type, as done here. */
    static void krafka_slot_dealloc(PyObject *o);

    /* Freed records of a slot type with all its fields (n items, room for exactly n), kept
       for the next ones of n items (linked through item 0), as CPython keeps tuples: a poll's
       records are freed together and a batch's made together, so up to 16,384 of a size are
       kept (about 1.8 MB of 9-field records at most). */
    #define KRAFKA_FREE_SIZES 16
    #define KRAFKA_FREE_MAX 16384
    static PyObject *krafka_free[KRAFKA_FREE_SIZES];
    static int krafka_nfree[KRAFKA_FREE_SIZES];

    static Py_ssize_t krafka_slot_size(PyTypeObject *t) {
        int i;
        for (i = 0; i < krafka_slot_ntypes; i++)
            if (krafka_slot_types[i] == t) return krafka_slot_sizes[i];
        return -1;
    }

    static void krafka_slot_dealloc(PyObject *o) {
        PyTypeObject *t = Py_TYPE(o);
        Py_ssize_t n = Py_SIZE(o), i = n;
        PyObject_GC_UnTrack(o);
        Py_TRASHCAN_BEGIN(o, krafka_slot_dealloc)
        while (--i >= 0)
            Py_XDECREF(((PyTupleObject *)o)->ob_item[i]);
        if (t->tp_dealloc == krafka_slot_dealloc && n > 0 && n < KRAFKA_FREE_SIZES
                && krafka_nfree[n] < KRAFKA_FREE_MAX && krafka_slot_size(t) == n) {
            ((PyTupleObject *)o)->ob_item[0] = krafka_free[n];
            krafka_free[n] = o;
            krafka_nfree[n]++;
        } else {
            t->tp_free(o);
        }
        Py_TRASHCAN_END
        Py_DECREF(t);
    }

    /* A `tp` tuple of `n` items the caller sets at once, untracked by the collector (see
       `_records.consumer_records`): a freed record's memory when `tp` is a slot type of at
       most `n` fields, else a new object. */
    static PyObject *krafka_record_new(PyTypeObject *tp, Py_ssize_t n) {
        PyObject *o;
        if (n > 0 && n < KRAFKA_FREE_SIZES && krafka_free[n] != NULL
                && tp->tp_dealloc == krafka_slot_dealloc && krafka_slot_size(tp) <= n) {
            o = krafka_free[n];
            krafka_free[n] = ((PyTupleObject *)o)->ob_item[0];
            krafka_nfree[n]--;
            Py_SET_TYPE(o, tp);
            Py_INCREF(tp);
    #if PY_VERSION_HEX < 0x030D0000
            _Py_NewReference(o);  /* refcount 1, and tracemalloc's and debug builds' books */
    #else
            Py_SET_REFCNT(o, 1);  /* 3.13 keeps _Py_NewReference internal */
    #endif
            return o;
        }
        return (PyObject *)PyObject_GC_NewVar(PyTupleObject, tp, n);
    }

    /* Member descriptors reading item i of `t`'s instances for each name of `names`. */
    static int krafka_slot_install(PyTypeObject *t, PyObject *names) {
        Py_ssize_t n = PyTuple_GET_SIZE(names), i;
        PyMemberDef *defs;
        if (krafka_slot_ntypes == KRAFKA_SLOT_TYPES) {
            PyErr_SetString(PyExc_RuntimeError, "too many record types with slot fields");
            return -1;
        }
        defs = PyMem_Calloc((size_t)n, sizeof(PyMemberDef));  /* lives as long as the type */
        if (defs == NULL) { PyErr_NoMemory(); return -1; }
        for (i = 0; i < n; i++) {
            PyObject *name = PyTuple_GET_ITEM(names, i), *descr;
            const char *utf8 = PyUnicode_AsUTF8(name);  /* kept alive by the tuple below */
            if (utf8 == NULL) return -1;
            defs[i].name = utf8;
            defs[i].type = T_OBJECT_EX;
            defs[i].offset = offsetof(PyTupleObject, ob_item) + i * sizeof(PyObject *);
            defs[i].flags = READONLY;
            descr = PyDescr_NewMember(t, &defs[i]);
            if (descr == NULL) return -1;
            if (PyDict_SetItem(t->tp_dict, name, descr) < 0) { Py_DECREF(descr); return -1; }
            Py_DECREF(descr);
        }
        Py_INCREF(names);
        krafka_slot_types[krafka_slot_ntypes] = t;
        krafka_slot_sizes[krafka_slot_ntypes++] = n;
        t->tp_alloc = krafka_slot_alloc;
        if (t->tp_finalize == NULL && t->tp_del == NULL && t->tp_weaklistoffset == 0
                && t->tp_dictoffset == 0 && t->tp_free == PyObject_GC_Del)
            t->tp_dealloc = krafka_slot_dealloc;
        PyType_Modified(t);
        return 0;
    }
    """
    int krafka_slot_install(PyTypeObject* t, object names) except -1
    object krafka_record_new(PyTypeObject* tp, Py_ssize_t n)


cdef object untracked_record(PyTypeObject* tp, Py_ssize_t n):
    """A `tp` tuple of `n` items for the caller to set every one of at once, never tracked
    by the collector (it must hold nothing that could be in a cycle); freed records' memory is
    reused for it."""
    return krafka_record_new(tp, n)


def slot_fields(type cls):
    """Make `cls`'s fields (a NamedTuple's `_fields`) read as slots; returns `cls`. Reads give
    the same objects as before and the fields stay read-only."""
    cdef tuple names = tuple(cls._fields)
    cdef PyTypeObject* tp = <PyTypeObject*>cls
    if not issubclass(cls, tuple) or tp.tp_basicsize != (<PyTypeObject*>tuple).tp_basicsize:
        raise TypeError(f"{cls.__name__} is not a tuple type without instance slots or dict")
    if all(type(cls.__dict__.get(name)) is _MEMBER for name in names):
        return cls
    krafka_slot_install(tp, names)
    return cls


class _Probe:
    __slots__ = ("x",)


_MEMBER = type(_Probe.x)
