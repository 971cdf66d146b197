cdef class OpenAppender:
    cdef object _accumulator
    cdef object _partitioner
    cdef dict _open_by_topic
    cdef dict _counts
    cdef public bint enabled

    cdef object append_c(self, object topic, Py_ssize_t partition, object key, object value,
                         object timestamp, bint* sealed)
    cdef object open_c(self, object topic, object partition, object timestamp, object key,
                       object value, bint* sealed, Py_ssize_t* used)
