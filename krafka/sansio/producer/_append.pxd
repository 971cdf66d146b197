cdef class OpenAppender:
    cdef object _accumulator
    cdef dict _open_by_topic

    cdef object append_c(self, object topic, Py_ssize_t partition, object key, object value,
                         object timestamp, bint* sealed)
