# cython: language_level=3
"""Objects made outside the garbage collector's view, and put back in view later (compiled
twin of `untracked.py`).

The sync producer makes one future per record; tracked, a script holding a hundred thousand
of them pays for every collection walking them, and making them starts collections of its
own. A future holds nothing that can form a cycle until someone waits on it or gives it a
callback, and that is when it is tracked (`track`).
"""

from cpython.object cimport PyTypeObject


cdef extern from "Python.h":
    object PyType_GenericAlloc(PyTypeObject* tp, Py_ssize_t nitems)
    void PyObject_GC_UnTrack(object)
    void PyObject_GC_Track(object)
    bint PyObject_GC_IsTracked(object)
    bint PyObject_IS_GC(object)


cdef object alloc_untracked(type cls):
    cdef object obj = PyType_GenericAlloc(<PyTypeObject*>cls, 0)
    if PyObject_GC_IsTracked(obj):
        PyObject_GC_UnTrack(obj)
    return obj


def new_untracked(type cls):
    """`object.__new__(cls)` (no `__init__`), not tracked by the garbage collector."""
    return alloc_untracked(cls)


def track(object obj):
    """Have the garbage collector track `obj` (again); nothing if it already does."""
    if PyObject_IS_GC(obj) and not PyObject_GC_IsTracked(obj):
        PyObject_GC_Track(obj)
