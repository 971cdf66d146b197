cimport cython


@cython.final
cdef class DeliveryHandle:
    cdef readonly object batch
    cdef readonly Py_ssize_t index

    cpdef object delivered(self)
