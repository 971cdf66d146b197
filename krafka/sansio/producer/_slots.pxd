"""A `ProducerBatch`'s `__slots__` fields read and written straight in the instance, for the
compiled per-record paths: a generic attribute access (a type lookup, then a member descriptor
call) costs about as much as the rest of an append in C. Exact `ProducerBatch` instances only;
anything else (and an unset slot) goes through `getattr`/`setattr`."""

from cpython.object cimport PyObject


cdef extern from *:
    """
    #include "structmember.h"
    /* The offset of a `__slots__` member in its instances, or -1 if `descr` is no such member. */
    static Py_ssize_t krafka_slot_offset(PyObject *descr) {
        if (!PyObject_TypeCheck(descr, &PyMemberDescr_Type)) return -1;
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        return member->type == T_OBJECT_EX ? member->offset : -1;
    }
    /* The slot at `offset` of `obj` (a borrowed reference; NULL while unset). */
    static PyObject *krafka_slot(PyObject *obj, Py_ssize_t offset) {
        return *(PyObject **)((char *)obj + offset);
    }
    static void krafka_slot_set(PyObject *obj, Py_ssize_t offset, PyObject *value) {
        Py_INCREF(value);
        Py_XSETREF(*(PyObject **)((char *)obj + offset), value);
    }
    """
    Py_ssize_t krafka_slot_offset(object descr)
    PyObject* krafka_slot(object obj, Py_ssize_t offset)
    void krafka_slot_set(object obj, Py_ssize_t offset, object value)


cdef inline Py_ssize_t slot_offset(type cls, str name) except -1:
    """Where instances of `cls` keep their `__slots__` member `name` (of `cls` or the nearest
    base defining it)."""
    cdef Py_ssize_t offset = -1
    for base in cls.__mro__:
        if name in base.__dict__:
            offset = krafka_slot_offset(base.__dict__[name])
            break
    if offset < 0:
        raise TypeError(f"{cls.__name__}.{name} is not a __slots__ member")
    return offset


cdef inline object get_slot(object obj, type cls, Py_ssize_t offset, str name):
    """`getattr(obj, name)`, from its slot when `obj` is exactly a `cls`."""
    cdef PyObject* value
    if type(obj) is cls:
        value = krafka_slot(obj, offset)
        if value != NULL:
            return <object>value
    return getattr(obj, name)


cdef inline int set_slot(object obj, type cls, Py_ssize_t offset, str name,
                         object value) except -1:
    """`setattr(obj, name, value)`, in its slot when `obj` is exactly a `cls`."""
    if type(obj) is cls:
        krafka_slot_set(obj, offset, value)
    else:
        setattr(obj, name, value)
    return 0
