from cpython.object cimport PyTypeObject


cdef object untracked_record(PyTypeObject* tp, Py_ssize_t n)
