from krafka._codec._builder cimport RecordsBuilder


cdef class OpenAppender:
    cdef object _accumulator
    cdef object _handle_type
    cdef object _partitioner
    cdef dict _open_by_topic
    cdef dict _counts
    cdef dict _sticky_choices
    cdef Py_ssize_t _largest
    cdef bint _murmur_keys
    cdef bint _sticky
    cdef public bint enabled

    cdef Py_ssize_t choose_c(self, object topic, object key, object count) except -1
    cdef object append_c(self, object topic, Py_ssize_t partition, object key, object value,
                         object timestamp, bint* sealed)
    cdef object open_batch_c(self, object topic, Py_ssize_t partition)
    cdef object fit_c(self, object topic, Py_ssize_t partition, object key, object value,
                      Py_ssize_t* size, Py_ssize_t* limit)
    cdef void add_c(self, object batch, RecordsBuilder builder, Py_ssize_t size,
                    Py_ssize_t limit, object key, object value, object timestamp,
                    bint* sealed) except *
    cdef object open_c(self, object topic, object partition, object timestamp, object key,
                       object value, bint* sealed, Py_ssize_t* used)
    cdef bint _seal(self, object topic, Py_ssize_t partition) except -1
