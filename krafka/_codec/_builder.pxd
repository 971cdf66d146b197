from libc.stdint cimport int32_t, int64_t, uint8_t


cdef class RecordsBuilder:
    cdef uint8_t* _buf
    cdef Py_ssize_t _size
    cdef Py_ssize_t _capacity
    cdef Py_ssize_t _exports
    cdef bint _sealed
    cdef readonly Py_ssize_t count
    cdef readonly int64_t default_timestamp
    cdef readonly int64_t first_timestamp
    cdef readonly int64_t max_timestamp

    cdef int _reserve(self, Py_ssize_t more) except -1
    cdef int add(self, object timestamp, object key, object value, object headers) except -1
    cdef object _batch(self, bint in_place, object compression, int64_t base_offset,
                       int64_t producer_id, int producer_epoch, int32_t base_sequence,
                       bint transactional, bint control, object timestamp_type,
                       int32_t partition_leader_epoch, object compression_level)
    cdef object _compressed(self, object codec, object level)
